"""The link during a match: one :class:`Session` over one trio byte stream at a time.

Theory of operation
-------------------
The session (layer 2) is a sans-I/O state machine; this module gives it a
stream, a clock and a table.  :class:`NetworkLink` is the
:class:`~p2pkoikoi.transport.link.contract.GameLink` a table or a bot plays on, and it
owns the link's state: the nursery, the :class:`~p2pkoikoi.transport.link.pulse.Pulse`
its parts wait on, the current :class:`~p2pkoikoi.transport.link.match_run.MatchRun`
(one match's record, ``updates`` channel and result: a rematch makes a new
one) and the records of the finished matches.  Every other job is a part with
one lifetime and its own state, made here, that gets the link's
:class:`~p2pkoikoi.transport.link.context.LinkContext` (the seat, the time
bounds, the pulse, the current session and match, write, fail, notify...) and,
by name, the few sibling parts or callbacks only it uses, never the link
itself; none imports this module (docs/architecture.md, "The link's
shape", lists them): the :class:`~p2pkoikoi.transport.link.event_router.EventRouter`
routes the session's events (the one place), the
:class:`~p2pkoikoi.transport.link.supervisor.Supervisor` runs one
:class:`~p2pkoikoi.transport.link.connection.Connection` after another, the
:class:`~p2pkoikoi.transport.link.endings.Ending` keeps the error and stops the
link (or only drops the connection, when the match can resume),
:class:`~p2pkoikoi.transport.link.local_moves.LocalMoves` plays our moves, resigns
and leaves, and the heartbeat, turn clock, handshake, key question and rematch
have theirs.

All their tasks run in one nursery owned by
:func:`~p2pkoikoi.transport.link.lifetime.open_link` (the task that owns the
link's lifetime), which hands the link out once the match has started.  Errors
during play do not cancel the caller: the link keeps the error, sends a last
``"over"`` update whose text is the one-line reason, closes ``updates`` and
stops its tasks; leaving the ``async with`` block then raises the error.  A
broken stream or a silent peer during play with a way to reconnect only
*drops* the connection: local moves wait until the supervisor has a new one.

The record is a journal, appended to after every step (:class:`RecordKeeper`).
Times are parameters (:class:`Timeouts`) and all waiting uses trio's clock, so
tests run whole matches under ``MockClock(autojump_threshold=0)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path

import trio

from p2pkoikoi.engine import Action, KoiKoiError, PlayerView, RuleSet
from p2pkoikoi.session import MatchOver, Session
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.link.connection import Connection
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.endings import Ending
from p2pkoikoi.transport.link.event_router import EventRouter, RouterParts
from p2pkoikoi.transport.link.handshake import DecideRules, HandshakeDriver
from p2pkoikoi.transport.link.heartbeat import Heartbeat
from p2pkoikoi.transport.link.key_question import KeyQuestion
from p2pkoikoi.transport.link.local_moves import LocalMoves
from p2pkoikoi.transport.link.match_run import MatchRun
from p2pkoikoi.transport.link.notes import Notify
from p2pkoikoi.transport.link.pulse import Pulse
from p2pkoikoi.transport.link.reconnect import Reconnect
from p2pkoikoi.transport.link.rematch import RematchDriver
from p2pkoikoi.transport.link.supervisor import Supervisor
from p2pkoikoi.transport.link.table_feed import TableFeed
from p2pkoikoi.transport.link.turn_clock import TurnClock
from p2pkoikoi.transport.player import Player
from p2pkoikoi.transport.store.records import RecordKeeper, next_match_path


class NetworkLink:
    """A :class:`~p2pkoikoi.transport.link.contract.GameLink` over a network session.

    Made by :func:`~p2pkoikoi.transport.link.lifetime.open_link` (through
    :func:`open_host` / :func:`open_join`); not constructed directly.
    """

    seat: int
    # the parts, named before they are made (the context's callables read them late)
    _supervisor: Supervisor
    _handshake: HandshakeDriver
    _ending: Ending
    _router: EventRouter
    _moves: LocalMoves

    def __init__(
        self,
        stream: trio.abc.Stream | None,
        session: Session,
        player: Player,
        *,
        notify: Notify,
        decide_rules: DecideRules,
        reconnect: Reconnect | None = None,
        early: Sequence[SessionEvent] = (),
    ) -> None:
        self.timeouts = player.timeouts
        self.seat = session.our_seat
        self._run = MatchRun(RecordKeeper(player.record_path))  # this match's state
        self._nursery: trio.Nursery | None = None
        #: the records of this connection's finished matches, oldest first
        self.finished_records: list[Path] = []
        # what every part reads and reports through, never the link (see link/context.py)
        ctx = LinkContext(
            seat=self.seat,
            timeouts=player.timeouts,
            pulse=Pulse(),
            notify=notify,
            session=lambda: self._supervisor.session,
            run=lambda: self._run,
            connection=lambda: self._supervisor.conn,
            nursery=lambda: self._nursery,
            online=lambda: self._supervisor.online,
            names=lambda: self._handshake.names,
            error=lambda: self._ending.error,
            write=self._write,
            flush=self._flush,
            save_record=self._save_record,
            save_lazy=functools.partial(self._save_record, lazy=True),
            process=lambda: self._router.process(),
            drop=lambda exc: self._ending.drop(exc),
            resumable=lambda: self._ending.resumable(),
            fail=lambda exc: self._ending.fail(exc),
        )
        self._pulse = ctx.pulse
        # the jobs this link composes, one lifetime each (see their modules)
        self._feed = feed = TableFeed(  # the updates and notes, for the table
            self.seat, ctx.session, ctx.run, notify, ctx.pulse
        )
        self._ending = ending = Ending(  # the error; what a failure, a drop or a leaving does
            ctx,
            feed,
            can_reconnect=lambda: self._supervisor.reconnect is not None,
            lose=lambda exc: self._supervisor.lose(exc),
        )
        self._keys = keys = KeyQuestion(
            player.known_peers, session.role, ctx, resume=self._key_answered
        )
        self._heartbeat = heartbeat = Heartbeat(ctx, paused=lambda: keys.asking, status=feed.status)
        self._supervisor = supervisor = Supervisor(
            stream,
            session,
            reconnect,
            ctx,
            heartbeat=heartbeat,
            resumed=lambda: self._router.resumed(),
            announce=feed.announce,
            linger=ending.linger,
        )
        self._clock = clock = TurnClock(
            ctx, announce=feed.announce, after_local=lambda data: self._moves.after_local(data)
        )
        self._handshake = handshake = HandshakeDriver(session, decide_rules, ctx, admit=keys.admit)
        self._moves = moves = LocalMoves(ctx, clock, feed)
        self._rematch = rematch = RematchDriver(
            ctx,
            check_alive=moves.check_alive,
            handshake=handshake.run,
            begin_match=self._begin_match,
        )
        self._router = EventRouter(
            ctx,
            RouterParts(feed, keys, heartbeat, handshake, rematch),
            started=supervisor.started,
            after_step=moves.step,
            left=ending.left,
            stop=ending.stop,
            early=early,
        )

    # ------------------------------------------------------------------ what the parts are given
    @property
    def _conn(self) -> Connection:
        """The current connection (a reconnect replaces it)."""
        return self._supervisor.conn

    def _key_answered(self) -> None:
        """The host's person accepted the new key: what arrived meanwhile is processed."""
        self._heartbeat.last_rx = trio.current_time()
        self._process()

    def _begin_match(self, number: int) -> None:
        """A rematch: a new record file, a new ``updates`` channel, a fresh match state."""
        previous = self._run.records.path
        if previous is not None:
            self.finished_records.append(previous)
        self._run = MatchRun(RecordKeeper(next_match_path(previous, number)))
        self._clock.reset()
        self._heartbeat.last_rx = self._conn.last_tx = trio.current_time()
        conn_nursery = self._supervisor.conn_nursery
        if conn_nursery is not None and not self._heartbeat.on:
            conn_nursery.start_soon(self._heartbeat.run)

    def _process(self) -> None:
        """Handle what the session received (:meth:`EventRouter.process`)."""
        self._router.process()

    # ------------------------------------------------------------------ GameLink
    @property
    def error(self) -> KoiKoiError | None:
        """Why the link stopped for good (None while it plays on, or once it ended well)."""
        return self._ending.error

    @property
    def record_path(self) -> Path | None:
        """Where the record is written (None until the first write picks the default)."""
        return self._run.records.path

    @property
    def session(self) -> Session:
        return self._supervisor.session

    @property
    def names(self) -> tuple[str, str]:
        return self._handshake.names

    @property
    def rules(self) -> RuleSet:
        return self._handshake.rules

    @property
    def peer_fingerprint(self) -> str:
        return self._handshake.peer_fingerprint

    @property
    def updates(self) -> trio.MemoryReceiveChannel[Update]:
        """This match's updates (a rematch makes a new channel)."""
        return self._run.updates

    @property
    def result(self) -> MatchOver | None:
        return self._run.result

    @property
    def final_hash(self) -> str:
        return self._run.final_hash

    @property
    def forfeit_reason(self) -> str:
        return self._run.forfeit_reason

    @property
    def reconnects(self) -> int:
        return self._supervisor.reconnects

    @property
    def view(self) -> PlayerView:
        """Our seat's view of the live state (made once per state: every update
        carries one, and the player to act asks again)."""
        return self._feed.view

    @property
    def online(self) -> bool:
        """A connection is up (False while reconnecting: moves wait for it)."""
        return self._supervisor.online

    @property
    def finished(self) -> bool:
        """Both final signatures exchanged (or the link stopped)."""
        return self.result is not None or self._pulse.is_stopped

    async def wait_ended(self) -> None:
        """Until the match is over (both signatures) or the link stopped on an error."""
        await self._run.ended.wait()

    async def wait_closed(self) -> None:
        """Until the connection is over for good (the other player left, an error):
        after a match the link stays open for a rematch until then."""
        await self._pulse.stopped.wait()

    async def act(self, action: Action) -> None:
        """Play ``action``; an illegal or untimely one raises :class:`IllegalActionError`."""
        await self._moves.act(action)

    async def resign(self, reason: str = "") -> None:
        """Give up, at once: off-turn too with the open deal (the crossing rule of
        protocol/README.md section 9 settles a move of the other player that crosses
        it); with the hidden deal an off-turn resignation waits for our turn."""
        await self._moves.resign(reason)

    async def leave(self) -> None:
        """The person leaves the table mid-match: resign now (with the
        hidden deal off-turn: when the turn comes, within a few seconds), then wait
        for the other player's signature on the result, each within
        ``timeouts.handshake``.  The record then holds the result signed by
        both, or by us with a line saying why the other signature is missing."""
        await self._moves.leave()

    @property
    def match_number(self) -> int:
        """Which match of this connection is played (1, then 2, 3... after rematches)."""
        return self.session.match_number

    async def play_again(self, *, timeout: float = math.inf) -> bool:
        """Offer a rematch, or accept the other player's offer (protocol section 13).

        Returns True once the new match has started (its commit-reveal done under
        the handshake deadlines; ``updates`` is then a new channel and the record a
        new file), False when the other player declines (:attr:`rematch_declined`
        says why), leaves, or does not answer within ``timeout`` seconds.  An
        error during the new commit-reveal raises, as in :func:`~p2pkoikoi.transport.link.lifetime.open_link`.
        """
        return await self._rematch.play_again(timeout=timeout)

    @property
    def rematch_declined(self) -> str | None:
        """The other player's reason, after it declined our last rematch offer."""
        return self._rematch.declined

    @property
    def rematch_offered(self) -> bool:
        """The other player offers a rematch we have not answered yet."""
        return self._rematch.offered

    async def wait_offer(self) -> bool:
        """Until the other player offers a rematch (True) or the connection ends (False)."""
        return await self._rematch.wait_offer()

    async def decline_again(self, reason: str = "") -> None:
        """Say no to the other player's rematch offer (the connection stays open)."""
        self._rematch.decline(reason)

    async def chat(self, text: str) -> None:
        """Send a chat line (shown on our table too); offline it raises."""
        await self._moves.chat(text)

    def turn_deadline(self) -> float:
        """When our own decision must be made (trio's clock; inf: no limit or not our
        turn).  A headless player stops waiting for its bot then."""
        return self._clock.deadline()

    # ------------------------------------------------------------------ open_link's
    def start(self, nursery: trio.Nursery, stream: trio.abc.Stream | None) -> None:
        """:func:`~p2pkoikoi.transport.link.lifetime.open_link`'s (not a table's): the
        link's tasks run in ``nursery``, the first connection over ``stream``."""
        self._nursery = nursery
        nursery.start_soon(self._supervisor.run, stream)

    async def begin(self, *, resuming: bool) -> bool:
        """``open_link``'s: until the match has started, by the handshake or (``resuming``,
        no stream) by reconnecting; False when it did not (:attr:`error` says why)."""
        try:
            if resuming:
                await self._wait_resumed()
            else:
                await self._handshake.run()
        except KoiKoiError as exc:
            self._ending.keep(exc)
            return False
        return True

    async def release(self) -> None:
        """``open_link``'s, last: the record closed, the stream closed (:meth:`Ending.release`)."""
        await self._ending.release()

    async def shutdown(self, *, goodbye: bool) -> None:
        """``open_link``'s: goodbye, the writer drained, every task stopped
        (:meth:`Ending.shutdown`)."""
        await self._ending.shutdown(goodbye=goodbye)

    async def _wait_resumed(self) -> None:
        """A link that starts by reconnecting: until the resumed match plays on."""
        while not self._run.started.is_set() and not self._pulse.is_stopped:
            await self._pulse.changed()
        if self.error is not None:
            raise self.error

    # ------------------------------------------------------------------ internals
    def _write(self, data: bytes) -> None:
        """Hand bytes to the current connection, in order (:meth:`Connection.write`)."""
        self._conn.write(data)

    def _flush(self) -> None:
        self._write(self.session.data_to_send())

    def _save_record(self, *, lazy: bool = False) -> None:
        """Bring the record file up to the session (a journal during play, see
        :class:`~p2pkoikoi.transport.store.records.RecordKeeper`); a record that
        cannot be written ends the match.  ``lazy``: the other player's moves
        may wait for our next write (:meth:`RecordJournal.save`)."""
        try:
            self._run.records.save(self.session, lazy=lazy)
        except TransportError as exc:
            self._ending.fail(exc)
