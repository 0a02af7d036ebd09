"""The agreed turn limit of a network match (protocol/README.md section 5).

Theory of operation
-------------------
One :class:`TurnClock` per link times each *decision*, named by the session's sequence number, not by the
connection: a reconnect does not restart it, a rematch does (:meth:`reset`).

:meth:`TurnClock.step` runs after every change of turn.  A new sequence
number starts a new decision (``since``); the clock task (:meth:`run`, one
per link, started on the first decision and ended when the match leaves play)
is woken only when the new decision needs it before it would wake anyway: a
deadline never comes earlier than ``limit - warning`` after its decision
starts, and waking early is harmless (the task looks at the current decision),
so most moves cost it nothing.

Our turn: a warning (``time_warning``) when :func:`turn_warning` seconds are
left, a countdown in the status line, then we resign on our own behalf (a
person who walked away, a hung bot).  The other player's turn: after the limit
plus ``timeouts.turn_grace`` the match ends as its forfeit by time, recorded
and signed by us (a modified program that pings but never moves), unless the
peer is re-sending what we lack; also while it is away (reconnecting): its
clock keeps running, so leaving on one's own turn is never longer than the
turn limit.

The clock owns what it times (``seq``, ``since``, ``wake``, ``timed_out``);
it reads the session and acts on the link through :class:`LinkContext`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import suppress

import trio

from p2pkoikoi.session import LocalProtocolError, Resign, State
from p2pkoikoi.session.records.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import TurnTimeoutError
from p2pkoikoi.transport.limits import turn_warning
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.link.notes import Note


class TurnClock:
    """The turn limit's clock of one link: which decision is timed, since when."""

    def __init__(
        self,
        ctx: LinkContext,
        *,
        announce: Callable[[Note], None],
        after_local: Callable[[bytes], None],
    ) -> None:
        self._seat = ctx.seat
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._ctx = ctx
        self._announce = announce  # a note, and its text on the status line
        self._after_local = after_local  # our resignation, sent
        self.seq = -1  # the seq whose next decision is being timed
        self.since = 0.0  # since when (trio's clock)
        self._changed = trio.Event()  # set when a new decision starts
        self._running = False
        #: when the clock wakes next by itself (inf: it waits for a step to wake it)
        self.wake = math.inf
        self.timed_out = False  # our turn limit ran out: our resignation says "time"

    def reset(self) -> None:
        """A rematch: the clock starts again with the new match's seq 0."""
        self.seq = -1
        self.timed_out = False

    def step(self) -> None:
        """After a change of turn: a new decision starts its clock (not on a resume)."""
        s = self._ctx.session()
        if not s.turn_limit or s.seq == self.seq:
            return
        self.seq, self.since = s.seq, trio.current_time()
        limit = float(s.turn_limit)
        if s.state is not State.PLAY or (self.since + limit - turn_warning(limit) < self.wake):
            self._changed.set()
        nursery = self._ctx.nursery()
        if not self._running and nursery is not None:
            self._running = True
            nursery.start_soon(self.run)

    def deadline(self) -> float:
        """When our own decision must be made (trio's clock; inf: no limit or not our turn)."""
        s = self._ctx.session()
        m = s.match
        if not s.turn_limit or m is None or m.is_over or m.to_act != self._seat:
            return math.inf
        return self.since + s.turn_limit

    async def run(self) -> None:
        """The clock task: warnings, our time-out, the other player's forfeit by time."""
        ctx = self._ctx
        limit = float(ctx.session().turn_limit)
        warn_before = turn_warning(limit)
        told: tuple[int, int] = (-1, -1)  # (seq, seconds left) last announced
        while not self._pulse.is_stopped:
            s = ctx.session()
            m = s.match
            away = not ctx.online() and s.state is State.CLOSED  # it said bye: gone
            if (s.state is not State.PLAY and not away) or m is None or m.is_over:
                self._running = False
                return
            self._changed = trio.Event()  # set by step() when a decision starts
            seq, since = self.seq, self.since
            mine = m.to_act == self._seat
            now = trio.current_time()
            if mine:
                deadline = since + limit
                left = deadline - now
                if left <= 0:
                    self._own_time_out(limit)  # resigned: the next step sets the event
                    self.wake = math.inf
                    await self._changed.wait()
                    continue
                if left <= warn_before:
                    whole = math.ceil(left)
                    if told[0] != seq or (whole != told[1] and (whole <= 5 or whole % 10 == 0)):
                        self._time_warning(whole, limit, first=told[0] != seq)
                        told = (seq, whole)
                    step = left - (whole - 1) if whole > 1 else left
                    wake = now + max(step, 0.001)
                else:
                    wake = deadline - warn_before
            else:
                deadline = since + limit + self._timeouts.turn_grace
                if now >= deadline:
                    if not s.catching_up:
                        # online, or away: the clock of the player to act keeps running
                        # while it is gone, so leaving on one's own turn
                        # cannot stretch it to the reconnect window
                        self._peer_time_out(limit)
                        return
                    # the peer is re-sending what we lack: its move may be among it
                    deadline = now + 1.0
                wake = deadline
            self.wake = wake
            with trio.move_on_at(wake):
                await self._changed.wait()
            self.wake = math.inf

    def _time_warning(self, left: int, limit: float, *, first: bool) -> None:
        """The warning, then the countdown: the status line and a ``time_warning`` note."""
        text = f"{left}s left to act"
        if first:
            text = f"your time is running out: {text} ({limit:g}s per decision)"
        self._announce({"event": "time_warning", "text": text, "seconds_left": left})

    def _own_time_out(self, limit: float) -> None:
        """Our turn limit ran out: resign on our own behalf (now, or once reconnected)."""
        ctx = self._ctx
        reason = f"your time ran out ({limit:g}s per decision)"
        ctx.notify({"event": "time_out", "text": f"{reason}: you resign"})
        ctx.run().forfeit_reason = reason
        self.timed_out = True
        s = ctx.session()
        m = s.match
        if ctx.online() and m is not None and m.to_act == self._seat and not s.catching_up:
            with suppress(LocalProtocolError):
                self._after_local(s.send(Resign(TIME_FORFEIT)))
                return
        ctx.run().resign_pending = reason

    def _peer_time_out(self, limit: float) -> None:
        """The other player let its turn limit (and the grace) pass: its forfeit by time."""
        ctx = self._ctx
        try:
            ctx.session().claim_time_forfeit()
        except LocalProtocolError:
            return
        ctx.flush()  # the abort that tells the other program why
        peer = ctx.names()[1 - self._seat]
        ctx.fail(
            TurnTimeoutError(
                f"{peer} did not move within the turn limit ({limit:g}s per decision, plus "
                f"{self._timeouts.turn_grace:g}s for latency): {peer} forfeits by time"
            )
        )
