"""Forfeits: a match that ends because one player walked away, not by the engine.

Theory of operation
-------------------
Three ends are forfeits (protocol/README.md sections 8 and 10,
protocol/hidden-deal.md section 7): the host stops between the joiner's value
and its own reveal (it may have seen a seed it did not like:
:func:`note_forfeit`, checked wherever the connection ends), the peer lets its
turn limit pass (:func:`claim_time_forfeit`, when the transport says so), and
the peer's program withholds a move of the hidden deal it owes
(:func:`peer_withheld`).  The surviving side records it as a :class:`Forfeit`
signed by itself over the transcript so far (:func:`record_forfeit`), and the
record keeps it.  It is separate because these paths are driven by the
transport's deadlines and the connection's end, not by a message, and they are
the same in every phase; the functions are the
:class:`~p2pkoikoi.session.session.Session`'s own methods (``s`` is the
session), kept in a module of their own.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from p2pkoikoi.session import crypto, wire
from p2pkoikoi.session.errors import LocalProtocolError
from p2pkoikoi.session.record import TIME_FORFEIT
from p2pkoikoi.session.states import State, WaitingFor

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


@dataclasses.dataclass(frozen=True, slots=True)
class Forfeit:
    """A match that ended because one player walked away (no engine result)."""

    seat: int  # who forfeits
    reason: str  # TIME_FORFEIT when the turn limit ran out
    sig: bytes  # the recording player's signature (crypto.forfeit_message)


def peer_withheld(s: Session, reason: str) -> None:
    """The transport's deadline for a move of the hidden deal that the peer's
    program owes (a deck step, keys, a declaration, a draw key, an audit:
    :attr:`WaitingFor.PEER_CARDS`) passed: the peer forfeits (protocol/hidden-deal.md
    section 7), in :attr:`forfeit` and in the record."""
    if s.forfeit is None and s.waiting_for is WaitingFor.PEER_CARDS:
        record_forfeit(s, s.role.other.seat, reason[:200])


def peer_left(s: Session) -> None:
    """The transport gave up on the peer (the connection is gone, no resume came within
    the reconnect window) while the peer's program owed a move of the hidden deal (a
    deck step, keys, a declaration, a draw key, an audit): leaving mid-deal is the
    peer's forfeit (protocol/hidden-deal.md section 7), in :attr:`forfeit` and in the
    record.  A decision owed by a person falls under the turn limit instead."""
    h = s._hidden
    due = h.expecting if h is not None and s._result is None else None
    # (the session may already be closed by the end of the connection: ask the table)
    if s.forfeit is None and due is not None and due[1] != s.our_seat and due[0] != "act":
        record_forfeit(
            s,
            s.role.other.seat,
            f"left during the hidden deal after move {s.seq}, owing a move of it",
        )


def note_forfeit(s: Session) -> None:
    """An end between the joiner's value and the host's reveal is the host's forfeit."""
    if (
        s.forfeit is None
        and s._state is State.SEED
        and s._joiner_value is not None
        and s.seed is None
    ):
        record_forfeit(s, 0, "the host stopped after the joiner's value, before revealing its own")


def record_forfeit(s: Session, seat: int, reason: str) -> None:
    """We record the other player's forfeit, signed by us over the transcript so far."""
    sig = crypto.sign(s._key, crypto.forfeit_message(s._transcript, seat, reason))
    s.forfeit = Forfeit(seat, reason, sig)


def claim_time_forfeit(s: Session) -> None:
    """The peer let its turn limit pass (the transport measured it, with a grace
    for latency): the match ends as the peer's forfeit by time.

    Records ``forfeit {seat: peer, reason: "time"}`` signed by us, queues an
    ``abort`` saying so (the peer's last chance to learn why) and closes the
    session: nothing it sends afterwards counts.
    """
    m = s._match
    if s._state is not State.PLAY or m is None or m.to_act == s.our_seat or s._catchup is not None:
        raise LocalProtocolError("a forfeit by time needs the peer's turn during play")
    record_forfeit(s, s.role.other.seat, TIME_FORFEIT)
    limit = s.turn_limit
    s._queue(wire.AbortMsg(reason=f"your time ran out ({limit}s per decision): you forfeit"))
    s._state = State.CLOSED
    s._in.clear()
