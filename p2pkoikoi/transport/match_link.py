"""The link during a match: one :class:`Session` over one trio byte stream at a time.

Theory of operation
-------------------
The session (layer 2) is a sans-I/O state machine; this module gives it a
stream, a clock and a table.  :class:`NetworkLink` owns the link's lifetime
(the error, the nursery, the :class:`~p2pkoikoi.transport.pulse.Pulse` its
parts wait on) and the current :class:`~p2pkoikoi.transport.match_run.MatchRun`
(one match's record, ``updates`` channel and result: a rematch makes a new
one), and routes the session's events (:meth:`NetworkLink._process`, the one
place that does; :class:`~p2pkoikoi.transport.table_feed.TableFeed` makes the
updates and notes).  Each other job is a small object of its own, with one
lifetime and its own state, that gets the pulse and a frozen ``*Hooks`` of the
few callables it uses (bound methods of the link), never the link itself; none
imports this module (docs/architecture.md, "The link's shape"):

* :class:`~p2pkoikoi.transport.connection.Connection`: one stream's writer
  (the only task that calls ``send_all``, so frames never interleave) and
  reader (feeds the session, calls ``_process``);
* :class:`~p2pkoikoi.transport.supervisor.Supervisor`: one connection after
  another (reconnects within ``reconnect_window``, the resume file); it holds
  the current session and connection;
* :class:`~p2pkoikoi.transport.heartbeat.Heartbeat`: pings and the silence
  bound during a match;
* :class:`~p2pkoikoi.transport.turn_clock.TurnClock`: the agreed turn limit,
  its warnings and time-outs;
* :class:`~p2pkoikoi.transport.handshake_link.Handshake` and
  :class:`~p2pkoikoi.transport.key_question.KeyQuestion`: each handshake
  step under its deadline, the joiner's rules decision, the known-peers check;
* :class:`~p2pkoikoi.transport.rematch_link.Rematch`: play again on the
  same connection.

All these tasks run in one nursery owned by :func:`open_link` (the task that
owns the link's lifetime), which hands the link out once the match has started
(the handshake runs before).  Errors during play do not cancel the caller: the
link stores the error, sends a last ``"over"`` update whose text is the
one-line reason, closes ``updates`` and stops its tasks; leaving the ``async
with`` block then raises the error.  So a table can show why the match ended,
and a script gets an exception.  A broken stream or a silent peer during play
with a way to reconnect only *drops* the connection (:meth:`NetworkLink._drop`,
:meth:`Supervisor.lose`):
local moves wait until the supervisor has a new one.

The record is a journal, appended to after every step (:class:`RecordKeeper`).
Times are parameters (:class:`Timeouts`) and all waiting uses trio's clock, so
tests run whole matches under ``MockClock(autojump_threshold=0)``.  Who the
stream comes from (listening, dialling, refusing strangers) is
:mod:`p2pkoikoi.transport.openers`' job.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import trio

from p2pkoikoi.engine import (
    Action,
    IllegalActionError,
    KoiKoiError,
    PlayerView,
    RuleSet,
)
from p2pkoikoi.session import (
    NEED_DATA,
    ActionReceived,
    ChatReceived,
    ConnectionClosed,
    Goodbye,
    HandshakeComplete,
    HiddenProgress,
    LocalProtocolError,
    MatchOver,
    MatchStarted,
    PeerResigned,
    Ping,
    Pong,
    ProtocolError,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    Resign,
    RulesProposed,
    SendAction,
    SendChat,
    Session,
    State,
)
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.session.forfeits import HOST_STOPPED
from p2pkoikoi.session.record import TIME_FORFEIT
from p2pkoikoi.transport.connection import Connection, ConnectionHooks
from p2pkoikoi.transport.errors import (
    PeerFloodError,
    PeerSilentError,
    PeerTimeoutError,
    TransportError,
    leaves,
)
from p2pkoikoi.transport.handshake_link import DecideRules as DecideRules
from p2pkoikoi.transport.handshake_link import Handshake, HandshakeHooks, accept_decision
from p2pkoikoi.transport.heartbeat import Heartbeat, HeartbeatHooks
from p2pkoikoi.transport.identity import KnownPeers
from p2pkoikoi.transport.key_question import KeyHooks, KeyQuestion
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link import Update
from p2pkoikoi.transport.match_run import MatchRun
from p2pkoikoi.transport.notes import Note, Notify, nop
from p2pkoikoi.transport.pulse import Pulse
from p2pkoikoi.transport.reconnect import Reconnect
from p2pkoikoi.transport.record_files import RecordKeeper, next_match_path
from p2pkoikoi.transport.rematch_link import Rematch, RematchHooks
from p2pkoikoi.transport.supervisor import Supervisor, SupervisorHooks
from p2pkoikoi.transport.table_feed import TableFeed
from p2pkoikoi.transport.turn_clock import ClockHooks, TurnClock


class NetworkLink:
    """A :class:`~p2pkoikoi.transport.link.GameLink` over a network session.

    Made by :func:`open_link` (through :func:`open_host` / :func:`open_join`);
    not constructed directly.
    """

    seat: int

    def __init__(
        self,
        stream: trio.abc.Stream | None,
        session: Session,
        *,
        timeouts: Timeouts,
        record_path: Path | None,
        notify: Notify,
        decide_rules: DecideRules,
        known_peers: KnownPeers | None,
        reconnect: Reconnect | None = None,
        early: Sequence[SessionEvent] = (),
    ) -> None:
        # events the joiner's dialer pulled while proving the host (transport/dialer.py)
        self._early = deque(early)
        self.timeouts = timeouts
        self._run = MatchRun(RecordKeeper(record_path))  # this match's state
        self._notify = notify
        self.seat = session.our_seat
        self.error: KoiKoiError | None = None
        self._pulse = Pulse()  # "something changed" and "stopped", for every part
        self._feed = TableFeed(  # the updates and notes, for the table
            self.seat, self._current_session, lambda: self._run, self._note, self._pulse
        )
        self._nursery: trio.Nursery | None = None
        #: the records of this connection's finished matches, oldest first
        self.finished_records: list[Path] = []
        # the jobs this link composes, one lifetime each (see their modules); each
        # gets the pulse and the few callables it uses, never the link
        pulse = self._pulse
        session_of = self._current_session
        nursery = self._get_nursery
        conn_hooks = ConnectionHooks(
            process=self._process,
            drop=self._drop,
            fail=self._fail,
            resumable=self._resumable,
            online=self._is_online,
        )
        self._keys = KeyQuestion(
            known_peers,
            session.role,
            timeouts,
            pulse,
            KeyHooks(
                session=session_of,
                nursery=nursery,
                write=self._write,
                fail=self._fail,
                notify=self._note,
                resume=self._key_answered,
            ),
        )
        self._heartbeat = Heartbeat(
            timeouts,
            pulse,
            HeartbeatHooks(
                session=session_of,
                connection=lambda: self._conn,
                paused=self._key_asking,
                write=self._write,
                status=self._feed.status,
                drop=self._drop,
                fail=self._fail,
            ),
        )
        self._supervisor = Supervisor(
            stream,
            session,
            reconnect,
            timeouts=timeouts,
            pulse=pulse,
            heartbeat=self._heartbeat,
            hooks=SupervisorHooks(
                connection=conn_hooks,
                flush=self._flush,
                resumed=self._resumed,
                announce=self._feed.announce,
                notify=self._note,
                fail=self._fail,
                record_path=lambda: self.record_path,
                write_sidecar=self._write_sidecar,
                linger=self._linger,
            ),
        )
        self._clock = TurnClock(
            self.seat,
            timeouts,
            pulse,
            ClockHooks(
                session=session_of,
                online=self._is_online,
                nursery=nursery,
                peer_name=self._peer_name,
                notify=self._note,
                announce=self._feed.announce,
                forfeit=self._set_forfeit_reason,
                after_local=self._after_local,
                resign_later=self._resign_later,
                flush=self._flush,
                fail=self._fail,
            ),
        )
        self._handshake = Handshake(
            session,
            decide_rules,
            timeouts,
            pulse,
            HandshakeHooks(
                session=session_of,
                started=lambda: self._run.started.is_set(),
                error=lambda: self.error,
                nursery=nursery,
                write=self._write,
                process=self._process,
                fail=self._fail,
                notify=self._note,
                admit=self._keys.admit,
                save_record=self._save_record,
            ),
        )
        self._rematch = Rematch(
            pulse,
            RematchHooks(
                session=session_of,
                check_alive=self._check_alive,
                write=self._write,
                process=self._process,
                handshake=self._handshake.run,
                begin_match=self._begin_match,
                notify=self._note,
            ),
        )

    # ------------------------------------------------------------------ what the parts read
    def _current_session(self) -> Session:
        return self._supervisor.session

    def _get_nursery(self) -> trio.Nursery | None:
        return self._nursery

    @property
    def _conn(self) -> Connection:
        """The current connection (a reconnect replaces it)."""
        return self._supervisor.conn

    def _is_online(self) -> bool:
        return self._supervisor.online

    def _key_asking(self) -> bool:
        return self._keys.asking

    def _peer_name(self) -> str:
        return self.names[1 - self.seat]

    def _note(self, note: Note) -> None:
        self._notify(note)

    def _set_forfeit_reason(self, reason: str) -> None:
        self._run.forfeit_reason = reason

    def _resign_later(self, reason: str) -> None:
        self._run.resign_pending = reason

    def _write_sidecar(self, sidecar: dict[str, Any]) -> None:
        self._run.records.write_sidecar(sidecar)

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

    def _resumed(self) -> None:
        """A new connection resumed the match: tell the table, then play on."""
        s = self.session
        self._run.started.set()
        self._notify({"event": "reconnected", "text": "reconnected", "seq": s.seq})
        if s.match is not None:
            self._feed.push(Update("status", self.view, text="reconnected"))
            self._feed.push_state((), None)  # a table redraws; a bot acts if it is its turn
        self._save_record()
        self._wake()
        if s.state is State.DONE and self.result is None:  # we only had to re-sign
            r = s.record().result
            assert r is not None
            self._on_over(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
            return
        self._after_step()

    # ------------------------------------------------------------------ GameLink
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
        return self._is_online()

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
        self._check_alive()
        await self._wait_online()
        try:
            data = self.session.send(SendAction(action))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self._after_local(data)

    async def resign(self, reason: str = "") -> None:
        """Give up, at once: off-turn too with the open deal (the crossing rule of
        protocol/README.md section 9 settles a move of the other player that crosses
        it); with the hidden deal an off-turn resignation waits for our turn."""
        self._check_alive()
        await self._wait_online()
        if reason:
            self._run.forfeit_reason = reason
        m = self.session.match
        if m is None or m.is_over:
            return
        if m.to_act != self.seat and self.session.is_hidden:
            self._run.resign_pending = reason or "resigned"
            self._feed.status("you will resign when your turn comes", push=True)
            return
        self._after_local(self.session.send(Resign()))

    async def leave(self) -> None:
        """The person leaves the table mid-match (issue 10.9): resign now (with the
        hidden deal off-turn: when the turn comes, within a few seconds), then wait
        for the other player's signature on the result, each within
        ``timeouts.handshake``.  The record then holds the result signed by
        both, or by us with a line saying why the other signature is missing."""
        s = self.session
        if self.error is not None or self._pulse.is_stopped or s.match is None:
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
            self._run.resign_pending = None
        with trio.move_on_after(2 * self.timeouts.handshake):
            while s.state is State.FINISH and not self._pulse.is_stopped:
                await self._pulse.changed()
        if s.lacks_peer_final and s.missing is None:
            s.missing = "the other player had not signed the result when you left the table"
        elif s.state is State.PLAY:
            s.missing = (
                "you left the table on the other player's turn: the resignation was not sent"
                " (the other player's program counts your leaving as your forfeit)"
            )
        self._save_record()

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
        error during the new commit-reveal raises, as in :func:`open_link`.
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
        self._check_alive()
        if not self._is_online():
            raise IllegalActionError("not connected: reconnecting to the other player")
        try:
            data = self.session.send(SendChat(text))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self._write(data)
        if self.session.match is not None:
            own = Update(
                "chat", self.view, text=text.strip(), sender=self.session.name, actor=self.seat
            )
            self._feed.push(own)

    # ------------------------------------------------------------------ internals
    async def _wait_online(self) -> None:
        """While reconnecting, local moves wait (they go to the resumed session)."""
        while not self._is_online() and not self._pulse.is_stopped:
            await self._pulse.changed()
        self._check_alive()

    def _check_alive(self) -> None:
        if self.error is not None:
            raise self.error
        if self._pulse.is_stopped:
            raise IllegalActionError("the connection is closed")

    def _after_local(self, data: bytes) -> None:
        self._save_record()  # our move is in the record before any byte of it leaves
        self._write(data)
        events = self.session.last_local_events
        self._feed.push_state(events, self.seat)
        self._after_step()

    def _write(self, data: bytes) -> None:
        """Hand bytes to the current connection, in order (:meth:`Connection.write`)."""
        self._conn.write(data)

    def _flush(self) -> None:
        self._write(self.session.data_to_send())

    def _save_record(self, *, lazy: bool = False) -> None:
        """Bring the record file up to the session (a journal during play, see
        :class:`~p2pkoikoi.transport.record_files.RecordKeeper`); a record that
        cannot be written ends the match.  ``lazy``: the other player's moves
        may wait for our next write (:meth:`RecordJournal.save`)."""
        try:
            self._run.records.save(self.session, lazy=lazy)
        except TransportError as exc:
            self._fail(exc)

    def _close_record(self) -> None:
        """The link stops: an unfinished match's journal becomes its compact record."""
        try:
            self._run.records.close(self.session)
        except TransportError as exc:
            if self.error is None:
                self.error = exc

    def _wake(self) -> None:
        self._pulse.wake()

    def _linger(self) -> float:
        """How long the ending connection waits for the other side's end (see
        :func:`~p2pkoikoi.transport.connection.close_gracefully`): not at all for a
        peer that fell silent, flooded us or let a step or its turn run out (it is
        not answering; what we owe it is in our record)."""
        if isinstance(self.error, PeerSilentError | PeerFloodError | PeerTimeoutError):
            return 0.0
        return self.timeouts.linger

    def _after_step(self) -> None:
        """After any change of turn: the turn clock, a pending resignation, the
        final-signature wait."""
        s = self.session
        m = s.match
        self._clock.step()
        if (
            self._run.resign_pending is not None
            and s.state is State.PLAY
            and m is not None
            and m.to_act == self.seat
        ):
            self._run.resign_pending = None
            self._after_local(s.send(Resign(TIME_FORFEIT if self._clock.timed_out else "")))
            return
        if s.state is State.FINISH and self._nursery is not None and not self._run.awaiting_final:
            self._run.awaiting_final = True
            self._nursery.start_soon(self._await_final)

    def _resumable(self) -> bool:
        return (
            self._supervisor.reconnect is not None
            and self._run.started.is_set()
            and self.timeouts.reconnect_window > 0
            and self.session.state in (State.PLAY, State.FINISH)
        )

    def _drop(self, exc: KoiKoiError) -> None:
        """The connection broke: reconnect if the match can resume, else stop for good."""
        if self.error is not None or self._pulse.is_stopped or self._conn.lost.is_set():
            return
        if not self._resumable():
            self.session.peer_left()  # it cannot come back: who owes the next step forfeits
            self._fail(exc)
            return
        self._supervisor.lose(exc)
        self._save_record()
        self._wake()

    def _left(self, exc: KoiKoiError) -> None:
        """The other player ended the connection during the match (``bye``, or the
        session read the end of the stream): leaving is a forfeit only once it has not
        come back within the reconnect window, so wait for it as for a drop when the
        match can resume; otherwise it forfeits now (issue 22)."""
        if self.error is not None or self._pulse.is_stopped or self._conn.lost.is_set():
            return
        m = self.session.match
        if (
            self._supervisor.reconnect is not None
            and self._run.started.is_set()
            and self.timeouts.reconnect_window > 0
            and m is not None
            and not m.is_over
        ):
            self._supervisor.lose(exc)
            self._save_record()
            self._wake()
            return
        self.session.peer_left()
        self._fail(exc)

    def _fail(self, exc: KoiKoiError) -> None:
        """Stop for good: keep the error, tell the table, let the writer send the abort."""
        if self.error is not None or self._pulse.is_stopped:
            return
        self.session.peer_gone()  # between the joiner's value and the reveal: host forfeits
        if isinstance(exc, PeerSilentError | PeerFloodError):
            # it left (or flooded us off) and did not come back within the window
            self.session.peer_left()
            left = self.session.forfeit
            if left is not None and left.seat != self.seat and left.reason != TIME_FORFEIT:
                who = self.names[left.seat]
                # a forfeit is the end: no "continue it later with p2pkoikoi resume"
                text = str(exc).split("; the match is unfinished")[0]
                exc = _reworded(exc, f"{text}: {who} forfeits the match ({left.reason})")
        forfeit = self.session.forfeit
        if forfeit is not None and forfeit.seat != self.seat and "forfeits" not in str(exc):
            who = "the host" if forfeit.seat == 0 else "the joiner"
            exc = _reworded(
                exc,
                f"{forfeit.reason} ({exc}): {who} forfeits the match"
                if forfeit.reason == HOST_STOPPED
                else f"{exc}: {who} forfeits the match ({forfeit.reason})",
            )
        s = self.session
        if self.seat == 0 and s.match is not None and not s.joiner_started:
            # we revealed, but the joiner never confirmed it: if the reveal was lost on
            # the way, the joiner's program counts the end as our forfeit (protocol 8)
            exc = _reworded(
                exc,
                f"{exc} (before the joiner confirmed your reveal: if it never arrived, "
                "the joiner's record counts this as your forfeit)",
            )
        self.error = exc
        if s.lacks_peer_final and s.missing is None:  # our signature, not theirs
            s.missing = str(exc)[:200]
        self._flush()  # the session's abort, if it queued one
        self._save_record()
        if self.session.state not in (State.PLAY, State.FINISH) or self.session.forfeit:
            # a final end (a protocol error, a cheat, refused rules or identity): the
            # match can never resume, so the secrets in the resume file go;
            # a lost connection keeps it for ``p2pkoikoi resume``
            self._run.records.drop_sidecar()
        if self.session.match is not None:
            self._feed.push(
                Update("over", self.view, text=str(exc), record=str(self.record_path or ""))
            )
        self._stop()

    def _stop(self) -> None:
        self._pulse.stopped.set()
        self._run.end()
        self._conn.close()
        self._wake()

    async def _shutdown(self, *, goodbye: bool) -> None:
        """Say goodbye if still talking, let the writer drain, then stop every task."""
        s = self.session
        if goodbye and not self._pulse.is_stopped and s.state not in (State.CLOSED, State.ERROR):
            with suppress(ProtocolError):
                self._write(s.send(Goodbye()))
        self._save_record()
        self._stop()
        with trio.move_on_after(self.timeouts.handshake) as cs:
            cs.shield = True
            await self._conn.writer_done.wait()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    # ------------------------------------------------------------------ tasks
    def _process(self) -> None:
        """Pull every event the session has; one place turns them into updates."""
        s = self.session
        if self._keys.asking:  # the host's person decides about a changed key first
            return
        while not self._pulse.is_stopped:
            if self._keys.start():  # processing waits for the answer
                return
            ev = self._early.popleft() if self._early else s.next_event()
            if isinstance(ev, ActionReceived | PeerResigned):
                # the peer's last move makes the session queue our final signature:
                # the record holds both before that signature leaves (sends go out at
                # once, see Connection._send_now).  A move that leaves the match in play may wait
                # for our next write (lazy: one append for both moves)
                self._save_record(lazy=True)
            self._flush()
            if ev is NEED_DATA:
                break
            if not self._heartbeat.received(ev):  # a flood: the link failed
                return
            if isinstance(ev, Ping | Pong):
                pass  # liveness only (the heartbeat answered a ping)
            elif isinstance(ev, RulesProposed):
                self._handshake.on_rules(ev)
            elif isinstance(ev, HandshakeComplete):
                self._handshake.on_complete(ev)
            elif isinstance(ev, MatchStarted):
                self._save_record()
                self._supervisor.started()
                self._run.started.set()
                self._feed.push_state(ev.events, None)
                self._after_step()
            elif isinstance(ev, ActionReceived | PeerResigned):
                if isinstance(ev, PeerResigned) and ev.reason == TIME_FORFEIT:
                    peer = self.names[1 - self.seat]
                    self._run.forfeit_reason = (
                        f"{peer}'s time ran out ({s.turn_limit}s per decision)"
                    )
                    self._feed.status(f"{self.forfeit_reason}: they resign", event="peer_time_out")
                # (the record was brought up to this move before the flush above)
                self._feed.push_state(ev.events, ev.seat)
                self._after_step()
            elif isinstance(ev, HiddenProgress):  # the hidden deal: a deal opened, our play done
                self._save_record()
                self._feed.push_state(ev.events, ev.actor)
                self._after_step()
            elif isinstance(ev, ChatReceived):
                peer = self.names[1 - self.seat]
                self._notify({"event": "chat", "sender": peer, "text": ev.text})
                if s.match is not None:
                    self._feed.push(
                        Update("chat", self.view, text=ev.text, sender=peer, actor=1 - self.seat)
                    )
            elif isinstance(ev, MatchOver):
                self._on_over(ev)
            elif isinstance(ev, RematchOffered):
                self._rematch.on_offered(ev)
            elif isinstance(ev, RematchDeclined):
                self._rematch.on_declined(ev)
            elif isinstance(ev, RematchStarted):
                self._rematch.next_match(ev)
            elif isinstance(ev, ConnectionClosed):
                if not ev.clean:
                    self._left(TransportError(ev.reason))
                else:
                    self._stop()
                return
        self._save_record(lazy=True)
        self._wake()

    def _on_over(self, ev: MatchOver) -> None:
        run = self._run
        run.result = ev
        run.final_hash = ev.final_hash.hex()
        self._save_record()
        self._run.records.drop_sidecar()
        m = self.session.match
        assert m is not None
        text = m.end_reason
        if self.forfeit_reason:
            text = f"{text}: {self.forfeit_reason}"
        self._feed.push(
            Update(
                "over",
                self.view,
                text=text,
                record=str(self.record_path or ""),
                final_hash=self.final_hash,
            )
        )
        self._run.end()

    async def _await_final(self) -> None:
        """After the last action: the peer must sign the final transcript in time."""
        while True:
            with trio.move_on_after(self.timeouts.handshake) as cs:
                while self.session.state is State.FINISH and not self._pulse.is_stopped:
                    await self._pulse.changed()
            if not cs.cancelled_caught or self._pulse.is_stopped:
                return
            if not self._is_online():
                continue  # the reconnect window bounds this wait
            self._fail(
                PeerTimeoutError(
                    f"the other player did not sign the result within "
                    f"{self.timeouts.handshake:g}s (the record is kept, unsigned by them)"
                )
            )
            return

    def turn_deadline(self) -> float:
        """When our own decision must be made (trio's clock; inf: no limit or not our
        turn).  A headless player stops waiting for its bot then."""
        return self._clock.deadline()

    @classmethod
    @asynccontextmanager
    async def opened(
        cls,
        stream: trio.abc.Stream | None,
        session: Session,
        *,
        timeouts: Timeouts,
        record_path: Path | None,
        notify: Notify,
        decide_rules: DecideRules,
        known_peers: KnownPeers | None,
        reconnect: Reconnect | None,
        early: Sequence[SessionEvent],
    ) -> AsyncIterator[NetworkLink]:
        """:func:`open_link`: the nursery of the link's tasks lives here, in the task
        that owns the link's lifetime."""
        if stream is None and (reconnect is None or session.match is None):
            raise LocalProtocolError(
                "only a resumed session with a way to reconnect needs no stream"
            )
        link = cls(
            stream,
            session,
            timeouts=timeouts,
            record_path=record_path,
            notify=notify,
            decide_rules=decide_rules,
            known_peers=known_peers,
            reconnect=reconnect,
            early=early,
        )
        started = False
        try:
            async with trio.open_nursery() as nursery:
                link._nursery = nursery
                nursery.start_soon(link._supervisor.run, stream)
                try:
                    if stream is None:
                        await link._wait_resumed()
                    else:
                        await link._handshake.run()
                    started = True
                except KoiKoiError as exc:
                    if link.error is None:
                        link.error = exc
                finally:
                    if not started:
                        await link._shutdown(goodbye=False)
                if started:
                    try:
                        yield link
                    finally:
                        await link._shutdown(goodbye=True)
        except BaseExceptionGroup as group:
            # A nursery wraps even one error in a group; callers (and the CLI) want
            # the one error itself, a KoiKoiError with its one-line message.
            errs = leaves(group)
            if len(errs) == 1:
                raise errs[0] from None
            raise
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            if link.error is None:
                raise TransportError("the connection to the other player broke") from None
        finally:
            link._save_record()
            link._close_record()
            with trio.move_on_after(1) as cs:
                cs.shield = True
                with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    stream_now = link._conn.stream
                    if stream_now is not None:
                        await stream_now.aclose()
        if link.error is not None:
            raise link.error

    async def _wait_resumed(self) -> None:
        """A link that starts by reconnecting: until the resumed match plays on."""
        while not self._run.started.is_set() and not self._pulse.is_stopped:
            await self._pulse.changed()
        if self.error is not None:
            raise self.error


#: how long a person who leaves on the other player's turn waits for its own turn
#: (to resign, signed) before the program goes anyway
LEAVE_OFF_TURN = 3.0


def _reworded(exc: KoiKoiError, text: str) -> KoiKoiError:
    """The same kind of error (callers and tests tell them apart) with more to say."""
    try:
        new = type(exc)(text)
    except TypeError:
        return TransportError(text)
    return new if isinstance(new, KoiKoiError) else TransportError(text)


def open_link(
    stream: trio.abc.Stream | None,
    session: Session,
    *,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    notify: Notify | None = None,
    decide_rules: DecideRules | None = None,
    known_peers: KnownPeers | None = None,
    reconnect: Reconnect | None = None,
    early: Sequence[SessionEvent] = (),
) -> AbstractAsyncContextManager[NetworkLink]:
    """Run ``session`` over ``stream``; yields the link once the match has started.

    ``early`` are events already pulled from ``session`` (the joiner's dialer
    runs the first steps of the handshake itself): they are handled first.

    The nursery of the connection's tasks lives here.  Leaving the block
    before the match is over says goodbye (the match stays unfinished, its
    record written); an error raised by the link is re-raised on exit.

    With ``reconnect`` a connection lost during play is replaced (see
    :class:`Reconnect`) within ``timeouts.reconnect_window``.  ``stream=None``
    with a resumed session (:meth:`Session.resume`) starts by reconnecting:
    that is how a crashed player comes back.
    """
    return NetworkLink.opened(
        stream,
        session,
        timeouts=timeouts or Timeouts(),
        record_path=record_path,
        notify=notify or nop,
        decide_rules=decide_rules or accept_decision,
        known_peers=known_peers,
        reconnect=reconnect,
        early=early,
    )
