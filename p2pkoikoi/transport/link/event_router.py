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
:class:`RouterHooks` and the parts it was handed, and never holds the link.
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
    Session,
    State,
)
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.session.records.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.handshake import HandshakeDriver
from p2pkoikoi.transport.link.heartbeat import Heartbeat
from p2pkoikoi.transport.link.key_question import KeyQuestion
from p2pkoikoi.transport.link.match_run import MatchRun
from p2pkoikoi.transport.link.notes import Note
from p2pkoikoi.transport.link.pulse import Pulse
from p2pkoikoi.transport.link.rematch import RematchDriver
from p2pkoikoi.transport.link.table_feed import TableFeed


@dataclass(frozen=True)
class RouterHooks:
    """What the router reads and does on its link."""

    session: Callable[[], Session]  # the current session (a reconnect replaces it)
    run: Callable[[], MatchRun]  # the current match's state (a rematch makes a new one)
    save_record: Callable[[], None]  # the record up to the session (ends the link if it cannot)
    save_lazy: Callable[[], None]  # the same, but the other player's moves may wait
    flush: Callable[[], None]  # send what the session queued
    started: Callable[[], None]  # the match started on this connection (the supervisor's)
    after_step: Callable[[], None]  # after any change of turn
    left: Callable[[KoiKoiError], None]  # the other player ended the connection
    stop: Callable[[], None]  # the connection ended cleanly
    notify: Callable[[Note], None]


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
        seat: int,
        pulse: Pulse,
        parts: RouterParts,
        hooks: RouterHooks,
        early: Sequence[SessionEvent] = (),
    ) -> None:
        self._seat = seat
        self._pulse = pulse
        self._parts = parts
        self._hooks = hooks
        # events the joiner's dialer pulled while proving the host (transport/open/dialer.py)
        self._early = deque(early)

    def process(self) -> None:
        """Pull every event the session has; one place turns them into updates."""
        hooks, parts, feed = self._hooks, self._parts, self._parts.feed
        s = hooks.session()
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
                hooks.save_lazy()
            hooks.flush()
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
                hooks.save_record()
                hooks.started()
                hooks.run().started.set()
                feed.push_state(ev.events, None)
                hooks.after_step()
            elif isinstance(ev, ActionReceived | PeerResigned):
                if isinstance(ev, PeerResigned) and ev.reason == TIME_FORFEIT:
                    peer = parts.handshake.names[1 - self._seat]
                    run = hooks.run()
                    run.forfeit_reason = f"{peer}'s time ran out ({s.turn_limit}s per decision)"
                    feed.status(f"{run.forfeit_reason}: they resign", event="peer_time_out")
                # (the record was brought up to this move before the flush above)
                feed.push_state(ev.events, ev.seat)
                hooks.after_step()
            elif isinstance(ev, HiddenProgress):  # the hidden deal: a deal opened, our play done
                hooks.save_record()
                feed.push_state(ev.events, ev.actor)
                hooks.after_step()
            elif isinstance(ev, ChatReceived):
                peer = parts.handshake.names[1 - self._seat]
                hooks.notify({"event": "chat", "sender": peer, "text": ev.text})
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
                    hooks.left(TransportError(ev.reason))
                else:
                    hooks.stop()
                return
        hooks.save_lazy()
        self._pulse.wake()

    def over(self, ev: MatchOver) -> None:
        """Both signatures: the result, the record, the last update of the match."""
        hooks, feed = self._hooks, self._parts.feed
        run = hooks.run()
        run.result = ev
        run.final_hash = ev.final_hash.hex()
        hooks.save_record()
        run.records.drop_sidecar()
        m = hooks.session().match
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
        hooks, feed = self._hooks, self._parts.feed
        s = hooks.session()
        hooks.run().started.set()
        hooks.notify({"event": "reconnected", "text": "reconnected", "seq": s.seq})
        if s.match is not None:
            feed.push(Update("status", feed.view, text="reconnected"))
            feed.push_state((), None)  # a table redraws; a bot acts if it is its turn
        hooks.save_record()
        self._pulse.wake()
        if s.state is State.DONE and hooks.run().result is None:  # we only had to re-sign
            r = s.record().result
            assert r is not None
            self.over(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
            return
        hooks.after_step()
