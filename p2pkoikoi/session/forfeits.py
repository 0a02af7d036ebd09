"""Forfeits: a match that ends because one player walked away, not by the engine.

Theory of operation
-------------------
Three ends are forfeits (protocol/README.md sections 8 and 10,
protocol/hidden-deal.md section 7): the host stops between the joiner's value
and its own reveal (it may have seen a seed it did not like: checked wherever
the connection ends), the peer lets its turn limit pass (when the transport
says so), and the peer's program withholds a move of the hidden deal it owes.
The session decides which end it is (it knows the phase and whose move is
due); the match's :class:`Forfeits` records it as a :class:`Forfeit` signed by
this side over the transcript so far (:meth:`Forfeits.record`), and the record
keeps it, with the note of why the peer's final signature is missing.  It is
separate because these paths are driven by the transport's deadlines and the
connection's end, not by a message, and they are the same in every phase; one
:class:`Forfeits` belongs to each match of a connection (a rematch starts a
fresh one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.session.identity import Identity

#: why a host that stops between the joiner's value and its reveal forfeits
HOST_STOPPED = "the host stopped after the joiner's value, before revealing its own"


@dataclasses.dataclass(frozen=True, slots=True)
class Forfeit:
    """A match that ended because one player walked away (no engine result)."""

    seat: int  # who forfeits
    reason: str  # TIME_FORFEIT when the turn limit ran out
    sig: bytes  # the recording player's signature (crypto.forfeit_message)


class Forfeits:
    """One match's forfeit (at most one) and the note on a missing final signature."""

    __slots__ = ("_forfeit", "_me", "_transcript", "missing")

    def __init__(self, me: Identity, transcript: Callable[[], bytes]) -> None:
        self._me = me
        self._transcript = transcript  # the match's transcript so far
        self._forfeit: Forfeit | None = None
        #: why the peer's final signature is missing (set by the transport when it gives up)
        self.missing: str | None = None

    def __repr__(self) -> str:
        return f"Forfeits({self._forfeit!r}, missing={self.missing!r})"

    @property
    def forfeit(self) -> Forfeit | None:
        return self._forfeit

    def record(self, seat: int, reason: str) -> None:
        """We record the other player's forfeit, signed by us over the transcript so far."""
        sig = self._me.sign(crypto.forfeit_message(self._transcript(), seat, reason))
        self._forfeit = Forfeit(seat, reason, sig)
