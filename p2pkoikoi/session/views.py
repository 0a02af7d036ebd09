"""What a :class:`~p2pkoikoi.session.session.Session` knows, read from the parts that own it.

Theory of operation
-------------------
The parts own the session's state (docs/architecture.md); the session's
properties (``state``, ``rules``, ``peer_key``, ``match``, ``seq``,
``waiting_for``, the signatures so far, ...) only read it from them, and live
here, in :class:`SessionViews`, a base of the session, so that ``session.py``
holds the routing alone.  Only ``missing`` is written (by the transport, on the
match's :class:`~p2pkoikoi.session.forfeits.Forfeits`).

Tests that play a modified program (one that signs with another key, reveals
another value, claims another transcript) or that check how little of a flood
is kept still reach for the names the session had when it held every field
itself (``session._send``, ``session._host_value``, ...); they are kept here
too, as views onto the parts, and the few writes a test makes go through the
part's own small method for it (``replace_host_value``, ``tamper``).  Nothing
in the package uses those.
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import p2pkoikoi.session.channel as channel
from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.engine import MatchState, RuleSet
from p2pkoikoi.session.errors import ProtocolError
from p2pkoikoi.session.forfeits import Forfeit
from p2pkoikoi.session.frames import Inbox, Outbox
from p2pkoikoi.session.handshake import Handshake
from p2pkoikoi.session.identity import Identity
from p2pkoikoi.session.matches import Matches, MatchParts
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.phases import SessionPhase
from p2pkoikoi.session.records.record import ActionRecord, ResultRecord
from p2pkoikoi.session.states import Role, State, WaitingFor


class SessionViews:
    """What the session knows, read from its parts; and the tests' private names."""

    _me: Identity
    _phase: SessionPhase
    _error: ProtocolError | None
    _inbox: Inbox
    _outbox: Outbox
    _handshake: Handshake
    _matches: Matches

    # ------------------------------------------------------------------ what the session knows
    @property
    def hidden_secret(self) -> bytes:
        """This side's secret for a hidden deal (for the .resume file; never sent)."""
        return self._matches.hidden_secret

    @property
    def role(self) -> Role:
        return self._me.role

    @property
    def name(self) -> str:
        return self._me.name

    @property
    def state(self) -> State:
        return self._phase.state

    @property
    def is_hidden(self) -> bool:
        """A hidden-deal match has started (its deal secret must go to the .resume file)."""
        return self._m.hidden is not None

    @property
    def our_seat(self) -> int:
        return self._me.seat

    @property
    def rules(self) -> RuleSet | None:
        return self._handshake.rules

    @property
    def turn_limit(self) -> int:
        return self._handshake.turn_limit

    @property
    def via(self) -> str:
        return self._handshake.via

    @property
    def session_id(self) -> bytes | None:
        """H0, the first connection's handshake hash."""
        return self._handshake.session_id

    @property
    def resume_secret(self) -> bytes | None:
        """What a reconnection proves it holds."""
        return self._handshake.resume_secret

    @property
    def connection_id(self) -> bytes | None:
        """This connection's handshake hash."""
        return self._handshake.connection_id

    @property
    def peer_name(self) -> str | None:
        return self._handshake.peer_name

    @property
    def peer_key(self) -> bytes | None:
        return self._handshake.peer_key

    @property
    def match_number(self) -> int:
        """Which match of this connection (protocol/README.md section 13)."""
        return self._m.number

    @property
    def seed(self) -> bytes | None:
        return None if self._m.seed is None else self._m.seed.seed

    @property
    def forfeit(self) -> Forfeit | None:
        return self._m.forfeits.forfeit

    @property
    def missing(self) -> str | None:
        """Why the peer's final signature is missing (set by the transport when it gives up)."""
        return self._m.forfeits.missing

    @missing.setter
    def missing(self, value: str | None) -> None:
        self._m.forfeits.missing = value

    @property
    def last_local_events(self) -> tuple[EngineEvent, ...]:
        """What the engine did on our last action."""
        play = self._m.play
        return () if play is None else play.last_local_events

    @property
    def match(self) -> MatchState | None:
        """The current engine state once the match has started."""
        play = self._m.play
        return None if play is None else play.match

    @property
    def seq(self) -> int:
        """The sequence number of the last action applied (0 before the first)."""
        play = self._m.play
        return 0 if play is None else play.seq

    @property
    def transcript_hash(self) -> bytes:
        return self._matches.transcript

    @property
    def catching_up(self) -> bool:
        """After a resume, the peer is ahead and is re-sending the actions we lack:
        local actions wait (the state is not the live one yet)."""
        play = self._m.play
        return play is not None and play.catchup is not None

    @property
    def error(self) -> ProtocolError | None:
        return self._error

    @property
    def waiting_for(self) -> WaitingFor:
        st, host = self._phase.state, self._me.is_host
        if st is State.HELLO:
            return WaitingFor.PEER_HELLO
        if st is State.AUTH:
            return WaitingFor.PEER_AUTH
        if st is State.RESUME:
            return WaitingFor.PEER_RESUME
        if st is State.RULES:
            return WaitingFor.PEER_RULES_DECISION if host else WaitingFor.LOCAL_RULES_DECISION
        if st is State.SEED:
            if host:
                return WaitingFor.JOINER_VALUE
            seed = self._m.seed
            committed = seed is not None and seed.commitment is not None
            return WaitingFor.REVEAL if committed else WaitingFor.COMMIT
        if st is State.PLAY:
            assert self._m.play is not None
            return self._m.play.waiting_for()
        if st is State.FINISH:
            return WaitingFor.PEER_FINAL
        return WaitingFor.NOTHING

    @property
    def lacks_peer_final(self) -> bool:
        """We signed the result; the peer's final signature has not arrived."""
        play = self._m.play
        return (
            play is not None
            and play.result is not None
            and play.final_sig(self._me.role.other) is None
        )

    @property
    def joiner_started(self) -> bool:
        """The joiner's start signature has arrived (so it has the reveal)."""
        return self._m.seed is not None and self._m.seed.joiner_started

    @property
    def recorded_actions(self) -> Sequence[ActionRecord]:
        """The actions so far, as in :meth:`record` but without copying (read only):
        a journal appends the new ones after every step."""
        play = self._m.play
        return () if play is None else play.actions

    @property
    def record_rewinds(self) -> int:
        """How often a recorded step was taken back (an off-turn resignation the
        other player's move crossed): a journal then starts again from the record."""
        play = self._m.play
        return 0 if play is None else play.rewinds

    @property
    def result_record(self) -> ResultRecord | None:
        return self._matches.result

    @property
    def start_signatures(self) -> tuple[bytes | None, bytes | None]:
        """(host's, joiner's) start signature, as known so far."""
        return self._matches.signatures()[0]

    @property
    def final_signatures(self) -> tuple[bytes | None, bytes | None]:
        """(host's, joiner's) signature over the final transcript, as known so far."""
        return self._matches.signatures()[1]

    # ------------------------------------------------------------------ the tests' private names
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
    def _send(self) -> channel.Channel | None:
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
