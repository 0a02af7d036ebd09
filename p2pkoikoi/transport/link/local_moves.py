"""What this side does during a match: a move, a chat line, resigning, leaving.

Theory of operation
-------------------
Our move goes into the record before any byte of it leaves, then to the
connection and the table (:meth:`LocalMoves.after_local`); while the link is
reconnecting a move waits for the new connection.  After every change of turn,
ours or the other player's, :meth:`LocalMoves.step` runs the turn clock, sends
a resignation that waited for our turn and, once the last action is played,
starts the wait for the other player's final signature (within the handshake
deadline; a reconnect window bounds it while offline).

With the open deal a resignation goes at once, off-turn too (the crossing rule
of protocol/README.md section 9 settles a move of the other player that
crosses it).  With the hidden deal an off-turn resignation waits for our turn:
the :class:`~p2pkoikoi.transport.link.match_run.MatchRun` holds it as
``resign_pending`` (the turn clock's own time-out resigns this way too).  A
person who leaves the table (:meth:`LocalMoves.leave`) is not kept waiting for
the other player's move: a few seconds (:data:`LEAVE_OFF_TURN`), then the
program goes, and the record says why the resignation or the other signature
is missing.

:class:`LocalMoves` owns no state of its own (the match's is in the
``MatchRun``); it steps the link's :class:`~p2pkoikoi.transport.link.turn_clock.TurnClock`,
feeds its :class:`~p2pkoikoi.transport.link.table_feed.TableFeed` and acts through
:class:`LinkContext`.
"""

from __future__ import annotations

from contextlib import suppress

import trio

from p2pkoikoi.engine import Action, IllegalActionError, KoiKoiError
from p2pkoikoi.session import LocalProtocolError, Resign, SendAction, SendChat, State
from p2pkoikoi.session.records.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import PeerTimeoutError
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.table_feed import TableFeed
from p2pkoikoi.transport.link.turn_clock import TurnClock

#: how long a person who leaves on the other player's turn waits for its own turn
#: (to resign, signed) before the program goes anyway
LEAVE_OFF_TURN = 3.0


class LocalMoves:
    """Our moves, chat, resignation (now or on our turn) and leaving, and what follows."""

    def __init__(
        self,
        ctx: LinkContext,
        clock: TurnClock,
        feed: TableFeed,
    ) -> None:
        self._seat = ctx.seat
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._clock = clock
        self._feed = feed
        self._ctx = ctx

    async def act(self, action: Action) -> None:
        """See :meth:`NetworkLink.act`."""
        self.check_alive()
        await self._wait_online()
        try:
            data = self._ctx.session().send(SendAction(action))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self.after_local(data)

    async def chat(self, text: str) -> None:
        """See :meth:`NetworkLink.chat`."""
        ctx = self._ctx
        self.check_alive()
        if not ctx.online():
            raise IllegalActionError("not connected: reconnecting to the other player")
        try:
            data = ctx.session().send(SendChat(text))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        ctx.write(data)
        s = ctx.session()
        if s.match is not None:
            own = Update(
                "chat", self._feed.view, text=text.strip(), sender=s.name, actor=self._seat
            )
            self._feed.push(own)

    async def resign(self, reason: str = "") -> None:
        """See :meth:`NetworkLink.resign`."""
        ctx = self._ctx
        self.check_alive()
        await self._wait_online()
        if reason:
            ctx.run().forfeit_reason = reason
        s = ctx.session()
        m = s.match
        if m is None or m.is_over:
            return
        if m.to_act != self._seat and s.is_hidden:
            ctx.run().resign_pending = reason or "resigned"
            self._feed.status("you will resign when your turn comes", push=True)
            return
        self.after_local(s.send(Resign()))

    async def leave(self) -> None:
        """See :meth:`NetworkLink.leave`."""
        ctx = self._ctx
        s = ctx.session()
        if ctx.error() is not None or self._pulse.is_stopped or s.match is None:
            return
        if not s.match.is_over:
            with suppress(KoiKoiError):
                await self.resign("left the table")
        # the open deal resigned at once, off-turn too (protocol 3, section 9.1).  With
        # the hidden deal an off-turn resignation waits for our turn, but a person who
        # leaves is not kept waiting for the other player's move: a few
        # seconds, then we go, and the other side counts it as a forfeit after its window
        with trio.move_on_after(LEAVE_OFF_TURN):
            while s.state is State.PLAY and not self._pulse.is_stopped:
                await self._pulse.changed()
        if s.state is State.PLAY:
            ctx.run().resign_pending = None
        with trio.move_on_after(2 * self._timeouts.handshake):
            while s.state is State.FINISH and not self._pulse.is_stopped:
                await self._pulse.changed()
        if s.lacks_peer_final and s.missing is None:
            s.missing = "the other player had not signed the result when you left the table"
        elif s.state is State.PLAY:
            s.missing = (
                "you left the table on the other player's turn: the resignation was not sent"
                " (the other player's program counts your leaving as your forfeit)"
            )
        ctx.save_record()

    def check_alive(self) -> None:
        """Raise the link's error, or say it is closed, once it stopped."""
        error = self._ctx.error()
        if error is not None:
            raise error
        if self._pulse.is_stopped:
            raise IllegalActionError("the connection is closed")

    def after_local(self, data: bytes) -> None:
        """Our move (or resignation): recorded, sent, shown, then the step."""
        ctx = self._ctx
        ctx.save_record()  # our move is in the record before any byte of it leaves
        ctx.write(data)
        events = ctx.session().last_local_events
        self._feed.push_state(events, self._seat)
        self.step()

    async def _wait_online(self) -> None:
        """While reconnecting, local moves wait (they go to the resumed session)."""
        while not self._ctx.online() and not self._pulse.is_stopped:
            await self._pulse.changed()
        self.check_alive()

    def step(self) -> None:
        """After any change of turn: the turn clock, a pending resignation, the
        final-signature wait."""
        ctx = self._ctx
        s = ctx.session()
        m = s.match
        self._clock.step()
        run = ctx.run()
        if (
            run.resign_pending is not None
            and s.state is State.PLAY
            and m is not None
            and m.to_act == self._seat
        ):
            run.resign_pending = None
            self.after_local(s.send(Resign(TIME_FORFEIT if self._clock.timed_out else "")))
            return
        nursery = ctx.nursery()
        if s.state is State.FINISH and nursery is not None and not run.awaiting_final:
            run.awaiting_final = True
            nursery.start_soon(self._await_final)

    async def _await_final(self) -> None:
        """After the last action: the peer must sign the final transcript in time."""
        ctx = self._ctx
        while True:
            with trio.move_on_after(self._timeouts.handshake) as cs:
                while ctx.session().state is State.FINISH and not self._pulse.is_stopped:
                    await self._pulse.changed()
            if not cs.cancelled_caught or self._pulse.is_stopped:
                return
            if not ctx.online():
                continue  # the reconnect window bounds this wait
            ctx.fail(
                PeerTimeoutError(
                    f"the other player did not sign the result within "
                    f"{self._timeouts.handshake:g}s (the record is kept, unsigned by them)"
                )
            )
            return
