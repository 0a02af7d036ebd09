"""The rematch: another match on the same connection (protocol/README.md section 13).

Theory of operation
-------------------
Once both players signed the result (``DONE``), either side may offer the next
match (``again``: :meth:`Rematch.send_again`, :meth:`Rematch.on_again`); the
other accepts with its own ``again`` or declines (``no_again``:
:meth:`Rematch.send_no_again`, :meth:`Rematch.on_no_again`).  Offers may
cross: once a side has both sent and received ``again``, the session is handed
our fresh value (``begin``) and builds the next match: a fresh
:class:`~p2pkoikoi.session.commit_reveal.CommitReveal` on the same keys (and,
from its seed, a fresh :class:`~p2pkoikoi.session.play.Play`), with a transcript
that starts from the session id, the match number and the previous match's
final transcript, so each match has a record of its own that cannot be spliced
into another.  Nothing is reset: what belongs to one match lives in that
match's parts, and the next match is new parts.  It is separate because it is
the one path that takes a finished session back to an earlier phase; one
:class:`Rematch` belongs to each match and holds only the two offers.
"""

from __future__ import annotations

from collections.abc import Callable

import p2pkoikoi.session.wire as wire
from p2pkoikoi.session.errors import LocalProtocolError, RemoteProtocolError
from p2pkoikoi.session.events import (
    DeclineRematch,
    OfferRematch,
    RematchDeclined,
    RematchOffered,
)
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.records.record import ResultRecord
from p2pkoikoi.session.states import State, sanitize


class Rematch(Part):
    """The offers of a next match, after match ``number`` of the connection."""

    __slots__ = ("_begin", "_emit", "_number", "_peer", "_phase", "_queue", "_result", "_value")

    def __init__(
        self,
        ctx: PartContext,
        *,
        number: int,
        result: Callable[[], ResultRecord | None],
        begin: Callable[[bytes], None],
    ) -> None:
        super().__init__(ctx)
        self._number = number
        self._result = result  # this match's result (once signed)
        self._begin = begin  # both want the next match: our value for its commit-reveal
        self._value: bytes | None = None  # our value once we offered/accepted
        self._peer = False  # the peer offered (or accepted) the next match

    def __repr__(self) -> str:
        return (
            f"Rematch(after={self._number}, offered={self._value is not None}, peer={self._peer})"
        )

    def _final_transcript(self) -> bytes:
        r = self._result()
        assert r is not None
        return r.transcript_hash

    def on_again(self, msg: wire.AgainMsg) -> None:
        if self._phase.state is not State.DONE or self._peer:
            raise self._phase.unexpected("again")
        tx = self._final_transcript()
        if msg.n != self._number + 1:
            raise RemoteProtocolError(
                f"the other player offers match {msg.n} of this connection; the next is "
                f"{self._number + 1}"
            )
        if msg.tx != tx:
            raise RemoteProtocolError(
                "the other player's rematch offer follows another match (final transcripts differ)"
            )
        self._peer = True
        if self._value is not None:  # our offer, answered (or crossed): play
            self._begin(self._value)
        else:
            self._emit(RematchOffered(msg.n))

    def on_no_again(self, msg: wire.NoAgainMsg) -> None:
        if self._phase.state is not State.DONE or self._value is None:
            raise self._phase.unexpected("no_again")
        self._value = None
        reason = sanitize(msg.reason).strip() or "no reason given"
        self._emit(RematchDeclined(reason))

    def send_again(self, event: OfferRematch) -> None:
        if self._phase.state is not State.DONE:
            raise LocalProtocolError("a rematch can be offered once both players signed the result")
        if self._value is not None:
            raise LocalProtocolError("the rematch is offered already: waiting for the answer")
        if len(event.entropy) < 32:
            raise LocalProtocolError("a rematch needs 32 random bytes")
        tx = self._final_transcript()
        self._value = bytes(event.entropy[:32])
        self._queue(wire.AgainMsg(n=self._number + 1, tx=tx))
        if self._peer:
            self._begin(self._value)

    def send_no_again(self, event: DeclineRematch) -> None:
        if self._phase.state is not State.DONE or not self._peer:
            raise LocalProtocolError("there is no rematch offer to decline")
        self._peer = False
        reason = sanitize(event.reason)[: wire.MAX_REASON] or "declined"
        self._queue(wire.NoAgainMsg(reason=reason))
