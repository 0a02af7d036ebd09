"""The one place a link turns its session's events into updates, notes and next steps.

Theory of operation
-------------------
The session queues events as it reads frames; :meth:`EventRouter.process`
pulls every one (after the few the joiner's dialer pulled early, while proving
the host) and hands each to the part for it: rules and handshake to
:class:`~p2pkoikoi.transport.link.handshake.HandshakeDriver`, rematch offers to
:class:`~p2pkoikoi.transport.link.rematch.RematchDriver`, liveness to the
:class:`~p2pkoikoi.transport.link.heartbeat.Heartbeat`; a started match, a move, a
hidden-deal step, a chat and the result become updates for the table
(:class:`~p2pkoikoi.transport.link.table_feed.TableFeed`).  A changed key the host's
person must decide about stops the loop until the answer
(:class:`~p2pkoikoi.transport.link.key_question.KeyQuestion`).

The record is brought up to the session before anything the session queued
leaves: the other player's last move makes the session queue our final
signature, and the record must hold both first.  :meth:`EventRouter.resumed`
is the same routing for a connection that resumed the match (the supervisor
says so).  The router owns only the early events; it acts on its link through
:class:`LinkContext` and the parts it was handed, and never holds the link.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import (
    NEED_DATA,
    ActionReceived,
    ChatReceived,
    Checking,
    ConnectionClosed,
    HandshakeComplete,
    HiddenProgress,
    MatchOver,
    MatchStarted,
    PeerResigned,
    Ping,
    Pong,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    RulesProposed,
    State,
)
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.session.records.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.handshake import HandshakeDriver
from p2pkoikoi.transport.link.heartbeat import Heartbeat
from p2pkoikoi.transport.link.key_question import KeyQuestion
from p2pkoikoi.transport.link.rematch import RematchDriver
from p2pkoikoi.transport.link.table_feed import TableFeed


@dataclass(frozen=True)
class RouterParts:
    """The link's parts the router hands events to."""

    feed: TableFeed
    keys: KeyQuestion
    heartbeat: Heartbeat
    handshake: HandshakeDriver
    rematch: RematchDriver


class EventRouter:
    """Routes a link's session events; owns the events pulled before the link existed."""

    def __init__(
        self,
        ctx: LinkContext,
        parts: RouterParts,
        *,
        started: Callable[[], None],
        after_step: Callable[[], None],
        left: Callable[[KoiKoiError], None],
        stop: Callable[[], None],
        early: Sequence[SessionEvent] = (),
    ) -> None:
        self._seat = ctx.seat
        self._pulse = ctx.pulse
        self._parts = parts
        self._ctx = ctx
        self._started = started  # the match started on this connection (the supervisor's)
        self._after_step = after_step  # after any change of turn
        self._left = left  # the other player ended the connection
        self._stop = stop  # the connection ended cleanly
        # events the joiner's dialer pulled while proving the host (transport/open/dialer.py)
        self._early = deque(early)

    def process(self) -> None:
        """Pull every event the session has; one place turns them into updates."""
        ctx, parts, feed = self._ctx, self._parts, self._parts.feed
        s = ctx.session()
        if parts.keys.asking:  # the host's person decides about a changed key first
            return
        while not self._pulse.is_stopped:
            if parts.keys.start():  # processing waits for the answer
                return
            ev = self._early.popleft() if self._early else s.next_event()
            if isinstance(ev, ActionReceived | PeerResigned):
                # the peer's last move makes the session queue our final signature:
                # the record holds both before that signature leaves (sends go out at
                # once, see Connection._send_now).  A move that leaves the match in play may wait
                # for our next write (lazy: one append for both moves)
                ctx.save_lazy()
            ctx.flush()
            if ev is NEED_DATA:
                break
            if not parts.heartbeat.received(ev):  # a flood: the link failed
                return
            if isinstance(ev, Ping | Pong):
                pass  # liveness only (the heartbeat answered a ping)
            elif isinstance(ev, Checking):
                pass  # our answer went out in the flush above; the session checks next
            elif isinstance(ev, RulesProposed):
                parts.handshake.on_rules(ev)
            elif isinstance(ev, HandshakeComplete):
                parts.handshake.on_complete(ev)
            elif isinstance(ev, MatchStarted):
                ctx.save_record()
                self._started()
                ctx.run().started.set()
                feed.push_state(ev.events, None)
                self._after_step()
            elif isinstance(ev, ActionReceived | PeerResigned):
                if isinstance(ev, PeerResigned) and ev.reason == TIME_FORFEIT:
                    peer = parts.handshake.names[1 - self._seat]
                    run = ctx.run()
                    run.forfeit_reason = f"{peer}'s time ran out ({s.turn_limit}s per decision)"
                    feed.status(f"{run.forfeit_reason}: they resign", event="peer_time_out")
                # (the record was brought up to this move before the flush above)
                feed.push_state(ev.events, ev.seat)
                self._after_step()
            elif isinstance(ev, HiddenProgress):  # the hidden deal: a deal opened, our play done
                ctx.save_record()
                feed.push_state(ev.events, ev.actor)
                self._after_step()
            elif isinstance(ev, ChatReceived):
                peer = parts.handshake.names[1 - self._seat]
                ctx.notify({"event": "chat", "sender": peer, "text": ev.text})
                if s.match is not None:
                    feed.push(
                        Update("chat", feed.view, text=ev.text, sender=peer, actor=1 - self._seat)
                    )
            elif isinstance(ev, MatchOver):
                self.over(ev)
            elif isinstance(ev, RematchOffered):
                parts.rematch.on_offered(ev)
            elif isinstance(ev, RematchDeclined):
                parts.rematch.on_declined(ev)
            elif isinstance(ev, RematchStarted):
                parts.rematch.next_match(ev)
            elif isinstance(ev, ConnectionClosed):
                if not ev.clean:
                    self._left(TransportError(ev.reason))
                else:
                    self._stop()
                return
        ctx.save_lazy()
        self._pulse.wake()

    def over(self, ev: MatchOver) -> None:
        """Both signatures: the result, the record, the last update of the match."""
        ctx, feed = self._ctx, self._parts.feed
        run = ctx.run()
        run.result = ev
        run.final_hash = ev.final_hash.hex()
        ctx.save_record()
        run.records.drop_sidecar()
        m = ctx.session().match
        assert m is not None
        text = m.end_reason
        if run.forfeit_reason:
            text = f"{text}: {run.forfeit_reason}"
        feed.push(
            Update(
                "over",
                feed.view,
                text=text,
                record=str(run.records.path or ""),
                final_hash=run.final_hash,
            )
        )
        run.end()

    def resumed(self) -> None:
        """A new connection resumed the match: tell the table, then play on."""
        ctx, feed = self._ctx, self._parts.feed
        s = ctx.session()
        ctx.run().started.set()
        ctx.notify({"event": "reconnected", "text": "reconnected", "seq": s.seq})
        if s.match is not None:
            feed.push(Update("status", feed.view, text="reconnected"))
            feed.push_state((), None)  # a table redraws; a bot acts if it is its turn
        ctx.save_record()
        self._pulse.wake()
        if s.state is State.DONE and ctx.run().result is None:  # we only had to re-sign
            r = s.record().result
            assert r is not None
            self.over(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
            return
        self._after_step()
