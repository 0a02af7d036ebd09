"""The private names a test of a modified program reaches in :class:`Session` for.

Theory of operation
-------------------
The parts own the session's state; tests that play a modified program (one that
signs with another key, reveals another value, claims another transcript) or
that check how little of a flood is kept still reach for the names the session
had when it held every field itself (``session._send``, ``session._host_value``,
...).  :class:`SessionViews` keeps those names as views onto the parts, and
the few writes a test makes go through the part's own small method for it
(``replace_host_value``, ``tamper``).  Nothing in the package uses them.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.session import crypto
from p2pkoikoi.session.frames import Inbox, Outbox
from p2pkoikoi.session.handshake import Handshake
from p2pkoikoi.session.identity import Identity
from p2pkoikoi.session.matches import Matches, MatchParts
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.record import ResultRecord
from p2pkoikoi.session.states import Role


class SessionViews:
    """The session's old private names, as views onto its parts (for tests)."""

    _me: Identity
    _inbox: Inbox
    _outbox: Outbox
    _handshake: Handshake
    _matches: Matches

    @property
    def _m(self) -> MatchParts:
        return self._matches.current

    @property
    def _transcript(self) -> bytes:
        """The current match's transcript so far."""
        return self._matches.transcript

    @_transcript.setter
    def _transcript(self, value: bytes) -> None:  # a program claiming another transcript
        assert self._m.play is not None
        self._m.play.tamper(transcript=value)

    @property
    def _key(self) -> Ed25519PrivateKey:
        return self._me.key

    @_key.setter
    def _key(self, key: Ed25519PrivateKey) -> None:  # a program signing with another key
        self._me.key = key

    @property
    def _send(self) -> crypto.Channel | None:
        return self._outbox.send_channel

    @property
    def _in(self) -> Inbox:
        return self._inbox

    @property
    def _out(self) -> bytearray:
        return self._outbox.pending

    @_out.setter
    def _out(self, data: bytearray) -> None:
        self._outbox.replace(bytes(data))

    @property
    def _hello_payload(self) -> bytes:
        return self._handshake.hello_payload

    @property
    def _hidden(self) -> HiddenMatch | None:
        return None if self._m.hidden is None else self._m.hidden.table

    @property
    def _commitment(self) -> bytes | None:
        return None if self._m.seed is None else self._m.seed.commitment

    @property
    def _joiner_value(self) -> bytes | None:
        return None if self._m.seed is None else self._m.seed.joiner_value

    @property
    def _host_value(self) -> bytes | None:
        return None if self._m.seed is None else self._m.seed.host_value

    @_host_value.setter
    def _host_value(self, value: bytes) -> None:  # a host revealing another value
        assert self._m.seed is not None
        self._m.seed.replace_host_value(value)

    @property
    def _start_sigs(self) -> dict[Role, bytes]:
        host, joiner = self._matches.signatures()[0]
        return {r: s for r, s in ((Role.HOST, host), (Role.JOINER, joiner)) if s is not None}

    @property
    def _result(self) -> ResultRecord | None:
        return self._matches.result

    @property
    def _seq(self) -> int:
        return 0 if self._m.play is None else self._m.play.seq

    @_seq.setter
    def _seq(self, value: int) -> None:  # a program claiming another seq
        assert self._m.play is not None
        self._m.play.tamper(seq=value)

    @property
    def _tx_at(self) -> list[bytes]:
        assert self._m.play is not None
        return self._m.play.tx_at

    @property
    def _hash_at(self) -> list[bytes]:
        assert self._m.play is not None
        return self._m.play.hash_at
