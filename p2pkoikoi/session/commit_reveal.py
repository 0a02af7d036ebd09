"""The commit-reveal that makes the match seed (protocol/README.md section 8).

Theory of operation
-------------------
After the rules are agreed the host commits to a random value (signed:
:meth:`CommitReveal.send_commit`), the joiner answers with its own value
(:meth:`CommitReveal.on_commit`), the host reveals
(:meth:`CommitReveal.on_value`, with its start signature), the joiner checks
the reveal against the commitment and signs the start too
(:meth:`CommitReveal.on_reveal`; :meth:`CommitReveal.on_start` on the host).
Neither side can choose the seed, and the host cannot change its value once it
saw the joiner's: a reveal that does not open the commitment is a
:class:`CheatingError`.  Once both values are known the seed is derived and the
session starts the match (``on_seed``: the engine, or with the hidden deal the
mental-poker table).  A rematch runs the same steps again on the same keys,
with a fresh :class:`CommitReveal` (:mod:`p2pkoikoi.session.rematch_session`).
It is separate because these few messages decide who wins the coin toss of the
whole match; one :class:`CommitReveal` owns them, and the start signatures.
"""

from __future__ import annotations

from collections.abc import Callable

import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi.session.errors import CheatingError, RemoteProtocolError
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.states import Role, State


class CommitReveal(Part):
    """One match's commit-reveal: the values, the commitment, the seed, the start signatures."""

    def __init__(
        self,
        ctx: PartContext,
        *,
        peer_key: bytes,
        t_commit: bytes,
        my_value: bytes,
        on_seed: Callable[[], None],
    ) -> None:
        super().__init__(ctx)
        self._peer_key = peer_key
        self._on_seed = on_seed
        self._my_value = my_value
        self._t_commit = t_commit  # the transcript the commitment binds
        self._transcript = t_commit
        self._t_reveal = b""
        self._commitment: bytes | None = None
        self._commit_sig: bytes | None = None
        self._host_value: bytes | None = None
        self._joiner_value: bytes | None = None
        self._seed: bytes | None = None
        self._start_sigs: dict[Role, bytes] = {}

    def __repr__(self) -> str:
        return f"CommitReveal({self._me.role!r}, seeded={self._seed is not None})"

    def restore(
        self,
        *,
        commitment: bytes | None,
        commit_sig: bytes | None,
        host_value: bytes | None,
        joiner_value: bytes | None,
        seed: bytes | None,
        t_reveal: bytes,
        start_sigs: dict[Role, bytes],
    ) -> None:
        """The commit-reveal of a resumed match, as its record has it."""
        self._commitment, self._commit_sig = commitment, commit_sig
        self._host_value, self._joiner_value = host_value, joiner_value
        self._seed, self._t_reveal = seed, t_reveal
        self._transcript = t_reveal
        self._start_sigs.update(start_sigs)

    # ------------------------------------------------------------------ what it holds
    @property
    def transcript(self) -> bytes:
        return self._transcript

    @property
    def t_reveal(self) -> bytes:
        return self._t_reveal

    @property
    def commitment(self) -> bytes | None:
        return self._commitment

    @property
    def commit_sig(self) -> bytes | None:
        return self._commit_sig

    @property
    def host_value(self) -> bytes | None:
        return self._host_value

    @property
    def joiner_value(self) -> bytes | None:
        return self._joiner_value

    @property
    def seed(self) -> bytes | None:
        return self._seed

    def start_sig(self, role: Role) -> bytes | None:
        return self._start_sigs.get(role)

    @property
    def joiner_started(self) -> bool:
        """The joiner's start signature has arrived (so it has the reveal)."""
        return Role.JOINER in self._start_sigs

    @property
    def host_owes_reveal(self) -> bool:
        """The joiner's value is out and the host has not revealed: an end now is the
        host's forfeit."""
        return self._joiner_value is not None and self._seed is None

    def replace_host_value(self, value: bytes) -> None:
        """A modified host: reveal ``value`` instead of the committed one (tests)."""
        self._host_value = value

    # ------------------------------------------------------------------ the steps
    def send_commit(self) -> None:
        self._host_value = self._my_value
        self._commitment = crypto.commitment(self._t_commit, self._host_value)
        self._transcript = crypto.absorb(self._transcript, "commit", self._commitment)
        # signed, so the joiner holds evidence of it if the host walks away before revealing
        self._commit_sig = self._me.sign(crypto.commit_sig_message(self._transcript))
        self._queue(wire.CommitMsg(c=self._commitment, sig=self._commit_sig))

    def on_commit(self, msg: wire.CommitMsg) -> None:
        if self._phase.state is not State.SEED or self._me.is_host or self._commitment:
            raise self._phase.unexpected("commit")
        t = crypto.absorb(self._transcript, "commit", msg.c)
        if not crypto.verify_sig(self._peer_key, msg.sig, crypto.commit_sig_message(t)):
            raise CheatingError("the host's signature on its commitment is invalid (forged)")
        self._commitment, self._commit_sig, self._transcript = msg.c, msg.sig, t
        self._joiner_value = self._my_value
        self._queue(wire.ValueMsg(r=self._joiner_value))
        self._transcript = crypto.absorb(self._transcript, "value", self._joiner_value)

    def on_value(self, msg: wire.ValueMsg) -> None:
        if self._phase.state is not State.SEED or not self._me.is_host or self._joiner_value:
            raise self._phase.unexpected("value")
        assert self._host_value is not None
        self._joiner_value = msg.r
        self._transcript = crypto.absorb(self._transcript, "value", msg.r)
        self._transcript = crypto.absorb(self._transcript, "reveal", self._host_value)
        self._t_reveal = self._transcript
        sig = self._me.sign(crypto.start_message(self._transcript))
        self._start_sigs[Role.HOST] = sig
        self._queue(wire.RevealMsg(r=self._host_value, sig=sig))
        self._seeded()

    def on_reveal(self, msg: wire.RevealMsg) -> None:
        if self._phase.state is not State.SEED or self._me.is_host or not self._joiner_value:
            raise self._phase.unexpected("reveal")
        if crypto.commitment(self._t_commit, msg.r) != self._commitment:
            raise CheatingError(
                "the host's reveal does not open its commitment: the host tried to "
                "change its random value (cheating) - the match is void"
            )
        t = crypto.absorb(self._transcript, "reveal", msg.r)
        if not crypto.verify_sig(self._peer_key, msg.sig, crypto.start_message(t)):
            raise CheatingError("the host's start signature is invalid (forged)")
        self._host_value, self._transcript, self._t_reveal = msg.r, t, t
        self._start_sigs[Role.HOST] = msg.sig
        mine = self._me.sign(crypto.start_message(t))
        self._start_sigs[Role.JOINER] = mine
        self._queue(wire.StartMsg(sig=mine))  # before any action of ours
        self._seeded()

    def on_start(self, msg: wire.StartMsg) -> None:
        """The joiner's signature over the transcript after the reveal (host side)."""
        if not self._me.is_host or self._phase.state not in (
            State.PLAY,
            State.FINISH,
            State.DONE,
        ):
            raise self._phase.unexpected("start")
        have = self._start_sigs.get(Role.JOINER)
        if have is not None:
            if have != msg.sig:
                raise RemoteProtocolError("the joiner sent a different start signature")
            return  # sent again after a resume
        if not crypto.verify_sig(self._peer_key, msg.sig, crypto.start_message(self._t_reveal)):
            raise CheatingError("the joiner's start signature is invalid (forged)")
        self._start_sigs[Role.JOINER] = msg.sig

    def _seeded(self) -> None:
        assert self._host_value and self._joiner_value
        self._seed = crypto.derive_seed(self._host_value, self._joiner_value, self._t_commit)
        self._on_seed()
