"""Play again on the same connection (protocol section 13): offers, answers, the next match.

A separate object because a rematch has its own lifetime, between two matches
of one link: an offer (ours or theirs) waits for an answer, and when both want
another match the link starts over with a new record file, a new ``updates``
channel and its per-match state made afresh (:meth:`RematchDriver.next_match` asks the
link for a new :class:`~p2pkoikoi.transport.link.match_run.MatchRun`); the
commit-reveal then runs under the handshake deadlines, as the first match's did.

The rematch owns the offer state (:attr:`RematchDriver.offered`,
:attr:`RematchDriver.declined`); it reads the session and acts through
:class:`LinkContext`, and waits on the link's :class:`Pulse`.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable
from contextlib import suppress

import trio

from p2pkoikoi.engine import IllegalActionError
from p2pkoikoi.session import (
    DeclineRematch,
    LocalProtocolError,
    OfferRematch,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    State,
)
from p2pkoikoi.transport.link.context import LinkContext


class RematchDriver:
    """The rematch state of one link: an offer not answered yet, the last refusal."""

    def __init__(
        self,
        ctx: LinkContext,
        *,
        check_alive: Callable[[], None],
        handshake: Callable[[], Awaitable[None]],
        begin_match: Callable[[int], None],
    ) -> None:
        self._pulse = ctx.pulse
        self._ctx = ctx
        self._check_alive = check_alive  # raises once the link failed or stopped
        self._handshake = handshake  # the next match's commit-reveal
        self._begin_match = begin_match  # a fresh MatchRun for match number n
        #: the other player offers a rematch we have not answered yet
        self.offered = False
        self.declined: str | None = None  # why the other player declined our offer

    async def play_again(self, *, timeout: float = math.inf) -> bool:
        """See :meth:`NetworkLink.play_again`."""
        ctx = self._ctx
        self._check_alive()
        s = ctx.session()
        if s.state is not State.DONE:
            raise IllegalActionError("a rematch can be offered once both players signed the result")
        number = s.match_number
        self.declined = None
        try:
            data = s.send(OfferRematch(secrets.token_bytes(32)))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self.offered = False
        ctx.write(data)
        ctx.process()  # an offer already received: the new match starts at once
        with trio.move_on_after(timeout):
            while s.match_number == number and self.declined is None and not self._pulse.is_stopped:
                await self._pulse.changed()
        if s.match_number == number:
            return False
        await self._handshake()
        return True

    async def wait_offer(self) -> bool:
        """Until the other player offers a rematch (True) or the connection ends (False)."""
        while not self.offered and not self._pulse.is_stopped:
            await self._pulse.changed()
        return self.offered

    def decline(self, reason: str) -> None:
        """Say no to the other player's rematch offer (the connection stays open)."""
        if not self.offered or self._pulse.is_stopped:
            return
        self.offered = False
        with suppress(LocalProtocolError):
            self._ctx.write(self._ctx.session().send(DeclineRematch(reason or "not this time")))

    def on_offered(self, ev: RematchOffered) -> None:
        self.offered = True
        self._ctx.notify(
            {
                "event": "rematch_offered",
                "match": ev.match_number,
                "text": "the other player offers to play again",
            }
        )

    def on_declined(self, ev: RematchDeclined) -> None:
        self.declined = ev.reason
        self._ctx.notify(
            {
                "event": "rematch_declined",
                "reason": ev.reason,
                "text": f"the other player does not want to play again: {ev.reason}",
            }
        )

    def next_match(self, ev: RematchStarted) -> None:
        """Both want another match: a new record file, a new ``updates`` channel, the
        per-match state made afresh; the commit-reveal runs next (:meth:`play_again`)."""
        self.offered = False
        self._begin_match(ev.match_number)
        self._ctx.notify(
            {
                "event": "rematch",
                "match": ev.match_number,
                "text": f"match {ev.match_number} on this connection: dealing",
            }
        )
