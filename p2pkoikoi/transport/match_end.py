"""How a match ends from our side: resigning, leaving the table, the final signature.

Theory of operation
-------------------
With the open deal a resignation goes at once, off-turn too (the crossing rule
of protocol/README.md section 9 settles a move of the other player that
crosses it).  With the hidden deal an off-turn resignation waits for our turn:
the :class:`~p2pkoikoi.transport.match_run.MatchRun` holds it as
``resign_pending`` and :meth:`MatchEnd.step`, run after every change of turn,
sends it once the turn is ours (the turn clock's own time-out resigns this way
too).  A person who leaves the table (:meth:`MatchEnd.leave`) is not kept
waiting for the other player's move: a few seconds (:data:`LEAVE_OFF_TURN`),
then the program goes, and the record says why the resignation or the other
signature is missing.  Once the last action is played the other player must
sign the final transcript within the handshake deadline
(:meth:`MatchEnd.step` starts that wait; a reconnect window bounds it while
offline).

:class:`MatchEnd` owns no state of its own (the match's is in the
``MatchRun``); it steps the link's :class:`~p2pkoikoi.transport.turn_clock.TurnClock`
it was handed and acts through :class:`EndHooks`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import Resign, Session, State
from p2pkoikoi.session.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import PeerTimeoutError
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.match_run import MatchRun
from p2pkoikoi.transport.pulse import Pulse
from p2pkoikoi.transport.turn_clock import TurnClock

#: how long a person who leaves on the other player's turn waits for its own turn
#: (to resign, signed) before the program goes anyway
LEAVE_OFF_TURN = 3.0


@dataclass(frozen=True)
class EndHooks:
    """What the end of a match reads and does on its link."""

    session: Callable[[], Session]  # the current session (a reconnect replaces it)
    run: Callable[[], MatchRun]  # the current match's state (a rematch makes a new one)
    error: Callable[[], KoiKoiError | None]  # why the link failed, if it did
    online: Callable[[], bool]  # not reconnecting
    nursery: Callable[[], trio.Nursery | None]  # where the final-signature wait runs
    check_alive: Callable[[], None]  # raises once the link failed or stopped
    wait_online: Callable[[], Awaitable[None]]  # while reconnecting, local moves wait
    after_local: Callable[[bytes], None]  # our move (here: a resignation), recorded and sent
    status: Callable[[str], None]  # a line on the table's status line
    save_record: Callable[[], None]
    fail: Callable[[KoiKoiError], None]


class MatchEnd:
    """Our resignation (now or on our turn), leaving, and the wait for the final signature."""

    def __init__(
        self, seat: int, timeouts: Timeouts, pulse: Pulse, clock: TurnClock, hooks: EndHooks
    ) -> None:
        self._seat = seat
        self._timeouts = timeouts
        self._pulse = pulse
        self._clock = clock
        self._hooks = hooks

    async def resign(self, reason: str = "") -> None:
        """See :meth:`NetworkLink.resign`."""
        hooks = self._hooks
        hooks.check_alive()
        await hooks.wait_online()
        if reason:
            hooks.run().forfeit_reason = reason
        s = hooks.session()
        m = s.match
        if m is None or m.is_over:
            return
        if m.to_act != self._seat and s.is_hidden:
            hooks.run().resign_pending = reason or "resigned"
            hooks.status("you will resign when your turn comes")
            return
        hooks.after_local(s.send(Resign()))

    async def leave(self) -> None:
        """See :meth:`NetworkLink.leave`."""
        hooks = self._hooks
        s = hooks.session()
        if hooks.error() is not None or self._pulse.is_stopped or s.match is None:
            return
        if not s.match.is_over:
            with suppress(KoiKoiError):
                await self.resign("left the table")
        # the open deal resigned at once, off-turn too (protocol 3, section 9.1).  With
        # the hidden deal an off-turn resignation waits for our turn, but a person who
        # leaves is not kept waiting for the other player's move (issue 22): a few
        # seconds, then we go, and the other side counts it as a forfeit after its window
        with trio.move_on_after(LEAVE_OFF_TURN):
            while s.state is State.PLAY and not self._pulse.is_stopped:
                await self._pulse.changed()
        if s.state is State.PLAY:
            hooks.run().resign_pending = None
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
        hooks.save_record()

    def step(self) -> None:
        """After any change of turn: the turn clock, a pending resignation, the
        final-signature wait."""
        hooks = self._hooks
        s = hooks.session()
        m = s.match
        self._clock.step()
        run = hooks.run()
        if (
            run.resign_pending is not None
            and s.state is State.PLAY
            and m is not None
            and m.to_act == self._seat
        ):
            run.resign_pending = None
            hooks.after_local(s.send(Resign(TIME_FORFEIT if self._clock.timed_out else "")))
            return
        nursery = hooks.nursery()
        if s.state is State.FINISH and nursery is not None and not run.awaiting_final:
            run.awaiting_final = True
            nursery.start_soon(self._await_final)

    async def _await_final(self) -> None:
        """After the last action: the peer must sign the final transcript in time."""
        hooks = self._hooks
        while True:
            with trio.move_on_after(self._timeouts.handshake) as cs:
                while hooks.session().state is State.FINISH and not self._pulse.is_stopped:
                    await self._pulse.changed()
            if not cs.cancelled_caught or self._pulse.is_stopped:
                return
            if not hooks.online():
                continue  # the reconnect window bounds this wait
            hooks.fail(
                PeerTimeoutError(
                    f"the other player did not sign the result within "
                    f"{self._timeouts.handshake:g}s (the record is kept, unsigned by them)"
                )
            )
            return
