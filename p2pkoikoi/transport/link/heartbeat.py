"""Liveness: pings, the silence bound and the ping/chat flood budget of a link.

A separate object because it has its own lifetime: one task per connection
and per match (not between matches, where a person may take their time over a
rematch).  It pings when we have been quiet for ``ping_interval`` (unless the
writer is blocked: a ping that cannot leave proves nothing), warns when the
peer is silent past ``silence_warn``, drops the connection past
``silence_fail``, and ends the match as the peer's forfeit when its program
withholds a move of the hidden deal for a handshake step.  Silence counts
from the last complete message, not the last byte (:meth:`Heartbeat.received`,
which also answers pings and counts pings, pongs and chats against
:class:`ChatterBudget`: a flood fails the match).

The heartbeat owns the time of the last message (:attr:`Heartbeat.last_rx`),
its ping count and the flood budget; it sees the session and the current
connection through :class:`LinkContext` and acts through them (write a
ping, warn, drop the connection, fail the match), never through the link.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from p2pkoikoi.session import ChatReceived, Ping, Pong, State, WaitingFor
from p2pkoikoi.transport.errors import PeerFloodError, PeerSilentError, PeerTimeoutError
from p2pkoikoi.transport.limits import CHATTER_BURST, CHATTER_RATE, ChatterBudget
from p2pkoikoi.transport.link.context import LinkContext


class Heartbeat:
    """The heartbeat of a link: at most one task runs at a time (:attr:`on`)."""

    def __init__(
        self, ctx: LinkContext, *, paused: Callable[[], bool], status: Callable[[str], None]
    ) -> None:
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._ctx = ctx
        self._paused = paused  # nothing is read meanwhile (the host's key question)
        self._status = status  # a line for the table
        self.on = False  # a heartbeat task runs
        self._ping_no = 0
        self._chatter = ChatterBudget(trio.current_time())
        self.last_rx = trio.current_time()  # the last complete message, not the last byte

    def received(self, ev: object) -> bool:
        """A message arrived: the peer is alive; pings, pongs and chats are counted
        (False: a flood, the link failed) and a ping answered."""
        ctx = self._ctx
        # a message, not a byte, proves the peer alive: a frame trickled a byte
        # at a time never completes, and the silence bound ends it (slowloris)
        self.last_rx = trio.current_time()
        if not isinstance(ev, Ping | Pong | ChatReceived):
            return True
        if not self._chatter.take(trio.current_time()):
            ctx.fail(
                PeerFloodError(
                    f"the other player sent more than {CHATTER_BURST} pings or chats at once "
                    f"(a flood; at most {CHATTER_RATE:g} a second are allowed): connection closed"
                )
            )
            return False
        if isinstance(ev, Ping) and not ctx.connection().blocked:
            ctx.write(ctx.session().send(Pong(ev.nonce)))
        return True

    async def run(self) -> None:
        """Pings and the silence bound until the match or the connection ends."""
        self.on = True
        try:
            await self._loop()
        finally:
            self.on = False

    async def _loop(self) -> None:
        ctx = self._ctx
        t = self._timeouts
        tick = min(t.ping_interval, t.silence_warn / 2, t.silence_fail / 4, t.handshake / 4)
        warned = False
        owed: tuple[int, float] | None = None  # (seq, since when) a hidden-deal move is owed
        while not self._pulse.is_stopped and not ctx.connection().lost.is_set():
            await trio.sleep(tick)
            s = ctx.session()
            now = trio.current_time()
            if s.state in (State.DONE, State.CLOSED, State.ERROR):
                return
            if s.waiting_for is WaitingFor.PEER_CARDS:
                # a key, a deck or an audit is the program's to send, not a person's
                if owed is None or owed[0] != s.seq:
                    owed = (s.seq, now)
                elif now - owed[1] >= t.handshake:
                    why = (
                        f"the other player's program withheld a move of the hidden deal"
                        f" for {t.handshake:g}s after move {s.seq}"
                    )
                    s.peer_withheld(why)  # the peer's forfeit, in the record
                    ctx.fail(PeerTimeoutError(f"{why}: it forfeits the match"))
                    return
            else:
                owed = None
            conn = ctx.connection()
            if (
                s.state is not State.HELLO
                and now - conn.last_tx >= t.ping_interval
                and not conn.blocked
            ):
                self._ping_no += 1
                ctx.write(s.send(Ping(self._ping_no.to_bytes(8, "big"))))
            if self._paused():  # nothing is read while the host's person answers
                self.last_rx = now
            silent = now - self.last_rx
            if silent >= t.silence_fail:
                ctx.drop(
                    PeerSilentError(
                        f"the other player has been silent for {silent:.0f}s: "
                        "the connection is lost, the match ends unfinished"
                    )
                )
                return
            if silent >= t.silence_warn and not warned:
                warned = True
                self._status(f"opponent silent for {silent:.0f}s")
            elif warned and silent < t.silence_warn:
                warned = False
                self._status("the opponent is back")
