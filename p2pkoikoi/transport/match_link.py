"""The link during a match: one :class:`Session` over one trio byte stream at a time.

Theory of operation
-------------------
The session (layer 2) is a sans-I/O state machine; this module gives it a
stream, a clock and a table.  One connection runs four kinds of task in one
nursery owned by :func:`open_link` (the task that owns the connection's
lifetime):

* the **reader** receives bytes, feeds :meth:`Session.receive_data`, pulls
  every event, answers pings, turns events into :class:`Update` values for the
  table and rewrites the match record after every change;
* the **writer** is the only task that calls ``send_all``.  Everybody else
  hands bytes to it through one memory channel, in the order the session
  produced them, so frames never interleave however many tasks act, chat or
  ping at once;
* the **heartbeat** pings when we have been quiet for ``ping_interval`` and
  watches the peer: silent past ``silence_warn`` gives a status update,
  past ``silence_fail`` ends the match with :class:`PeerSilentError`;
* short-lived helpers: the joiner's rules decision, the wait for the peer's
  final signature.

The handshake (hello, auth, rules, commit-reveal) runs in :func:`open_link`
itself, before the link is handed out: each step is wrapped in
``trio.fail_after`` with the deadline that ``session.waiting_for`` names, and a
host that commits but never reveals forfeits (:class:`RevealTimeoutError`).
Once the match has started the caller gets a :class:`NetworkLink` (the
:class:`~p2pkoikoi.transport.link.GameLink` of a network game) whose
``updates`` carry a full :class:`PlayerView` after every action.

Errors during play do not cancel the caller: the link stores the error, sends
a last ``"over"`` update whose text is the one-line reason, closes ``updates``
and stops its tasks; leaving the ``async with`` block then raises the error.
So a table can show why the match ended, and a script gets an exception.

Connections come and go, the match stays: with a :class:`Reconnect` the
link's supervisor task runs one connection (reader, writer, heartbeat in their
own nursery) after another.  A broken stream or a peer silent past
``silence_fail`` during play *drops* the connection instead of failing the
match; the link then gets a new stream with a resumed session from
:mod:`p2pkoikoi.transport.reconnect` (the joiner redials, the host re-accepts)
or fails when ``reconnect_window`` ends.  Local moves wait meanwhile.
``p2pkoikoi resume`` starts a link with no stream at all: its first connection
is a resume (:func:`~p2pkoikoi.transport.openers.open_resume`).

The record is a journal, appended to after every step (:class:`RecordKeeper`).  Times are
parameters (:class:`Timeouts`) and all waiting uses trio's clock, so tests run
whole matches under ``MockClock(autojump_threshold=0)``.  Who the stream
comes from (listening, dialling, refusing strangers) is
:mod:`p2pkoikoi.transport.openers`' job.
"""

from __future__ import annotations

import math
import os
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from functools import partial
from pathlib import Path

import trio

from p2pkoikoi.engine import (
    Action,
    IllegalActionError,
    KoiKoiError,
    MatchState,
    PlayerView,
    RuleSet,
)
from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.session import (
    NEED_DATA,
    AcceptRules,
    ActionReceived,
    ChatReceived,
    ConnectionClosed,
    DeclineRematch,
    DeclineRules,
    Goodbye,
    HandshakeComplete,
    HiddenProgress,
    LocalProtocolError,
    MatchOver,
    MatchStarted,
    OfferRematch,
    PeerResigned,
    Ping,
    Pong,
    ProtocolError,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    Resign,
    ResumeError,
    Role,
    RulesProposed,
    SendAction,
    SendChat,
    Session,
    State,
    WaitingFor,
    fingerprint,
)
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.session.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import (
    ConfigError,
    IdentityChangedError,
    PeerFloodError,
    PeerSilentError,
    PeerTimeoutError,
    TransportError,
    TurnTimeoutError,
    leaves,
)
from p2pkoikoi.transport.identity import KnownPeers, PeerCheck, PeerStatus
from p2pkoikoi.transport.limits import (
    CHATTER_BURST,
    CHATTER_RATE,
    KEY_QUESTION_SHARE,
    OUTGOING_LIMIT,
    RECEIVE_SIZE,
    ChatterBudget,
    Timeouts,
    step_limit,
    turn_warning,
)
from p2pkoikoi.transport.link import Update
from p2pkoikoi.transport.notes import Note, Notify, nop
from p2pkoikoi.transport.reconnect import Reconnect, reaccept, redial
from p2pkoikoi.transport.record_files import RecordKeeper, next_match_path

DecideRules = Callable[[RulesProposed], Awaitable[bool]]


async def _accept_decision(proposal: RulesProposed) -> bool:
    return True


class NetworkLink:
    """A :class:`~p2pkoikoi.transport.link.GameLink` over a network session.

    Made by :func:`open_link` (through :func:`open_host` / :func:`open_join`);
    not constructed directly.
    """

    seat: int
    names: tuple[str, str]
    rules: RuleSet
    updates: trio.MemoryReceiveChannel[Update]

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
        self._stream = stream
        self._session = session
        self._asking = False  # the host asks about a changed key: nothing is processed
        # only a host with a person to ask ever asks (decided here: _process runs per event)
        self._key_asked = (
            known_peers is None or known_peers.ask is None or session.role is not Role.HOST
        )
        # events the joiner's dialer pulled while proving the host (transport/dialer.py)
        self._early = deque(early)
        self._reconnect = reconnect
        self.timeouts = timeouts
        self._records = RecordKeeper(record_path)
        self._notify = notify
        self._decide_rules = decide_rules
        self._known = known_peers
        self.seat = session.our_seat
        self.names = (session.name, "?") if self.seat == 0 else ("?", session.name)
        self.peer_fingerprint = ""
        self.error: KoiKoiError | None = None
        self.final_hash = ""
        self.result: MatchOver | None = None
        self.forfeit_reason = ""
        self._out_tx, self._out_rx = trio.open_memory_channel[bytes](math.inf)
        self._pending = 0  # bytes in that channel: bounded by OUTGOING_LIMIT in _write
        self._up_tx, self.updates = trio.open_memory_channel[Update](math.inf)
        self._started = trio.Event()
        self._stopped = trio.Event()
        self._writer_done = trio.Event()
        if stream is None:  # resuming: no writer runs until a connection comes back
            self._writer_done.set()
        self._ended = trio.Event()
        self._progress = trio.Event()
        self._last_rx = trio.current_time()  # the last complete message, not the last byte
        self._last_tx = trio.current_time()
        self._chatter = ChatterBudget(trio.current_time())
        self._resign_pending: str | None = None
        self._ping_no = 0
        self._nursery: trio.Nursery | None = None
        self._online = True  # a connection is up (false while reconnecting)
        self._view_cache: tuple[MatchState, PlayerView] | None = None  # see view
        self._lost = trio.Event()  # the current connection is gone
        self._lost_error: KoiKoiError | None = None
        self._awaiting_final = False
        self.reconnects = 0
        self._conn_nursery: trio.Nursery | None = None  # the current connection's tasks
        self._heartbeat_on = False
        #: the records of this connection's finished matches, oldest first
        self.finished_records: list[Path] = []
        #: the other player offers a rematch we have not answered yet
        self.rematch_offered = False
        self._declined: str | None = None  # why the other player declined our offer
        # the turn clock (see _turn_clock): the seq whose next decision is being
        # timed, since when, and an event set when a new decision starts
        self._turn_seq = -1
        self._turn_since = 0.0
        self._turn_changed = trio.Event()
        self._clock_running = False
        #: when the turn clock wakes next by itself (inf: it waits for a step to wake it)
        self._clock_wake = math.inf
        self._timed_out = False  # our turn limit ran out: our resignation says "time"
        if session.peer_name is not None and session.rules is not None:  # a resumed session
            self.rules = session.rules
            names = [session.name, session.name]
            names[1 - self.seat] = session.peer_name
            self.names = (names[0], names[1])
            assert session.peer_key is not None
            self.peer_fingerprint = fingerprint(session.peer_key)

    # ------------------------------------------------------------------ GameLink
    @property
    def record_path(self) -> Path | None:
        """Where the record is written (None until the first write picks the default)."""
        return self._records.path

    @property
    def session(self) -> Session:
        return self._session

    @property
    def view(self) -> PlayerView:
        """Our seat's view of the live state (made once per state: every update
        carries one, and the player to act asks again)."""
        m = self._session.match
        if m is None:
            raise LocalProtocolError("the match has not started")
        return self._view_of(m)

    def _view_of(self, m: MatchState) -> PlayerView:
        """Our seat's view of ``m`` (the last one made is kept)."""
        cached = self._view_cache
        if cached is not None and cached[0] is m:
            return cached[1]
        view = m.view(self.seat)
        self._view_cache = (m, view)
        return view

    @property
    def online(self) -> bool:
        """A connection is up (False while reconnecting: moves wait for it)."""
        return self._online

    @property
    def finished(self) -> bool:
        """Both final signatures exchanged (or the link stopped)."""
        return self.result is not None or self._stopped.is_set()

    async def wait_ended(self) -> None:
        """Until the match is over (both signatures) or the link stopped on an error."""
        await self._ended.wait()

    async def wait_closed(self) -> None:
        """Until the connection is over for good (the other player left, an error):
        after a match the link stays open for a rematch until then."""
        await self._stopped.wait()

    async def act(self, action: Action) -> None:
        """Play ``action``; an illegal or untimely one raises :class:`IllegalActionError`."""
        self._check_alive()
        await self._wait_online()
        try:
            data = self._session.send(SendAction(action))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self._after_local(data)

    async def resign(self, reason: str = "") -> None:
        """Give up.  Off-turn the resignation waits for our turn (the protocol
        only lets the player to act resign, so resignations never race)."""
        self._check_alive()
        await self._wait_online()
        if reason:
            self.forfeit_reason = reason
        m = self._session.match
        if m is None or m.is_over:
            return
        if m.to_act != self.seat:
            self._resign_pending = reason or "resigned"
            self._status("you will resign when your turn comes", push=True)
            return
        self._after_local(self._session.send(Resign()))

    async def leave(self) -> None:
        """The person leaves the table mid-match (issue 10.9): resign now, or when the
        turn comes, then wait for the other player's signature on the result, each
        within ``timeouts.handshake``.  The record then holds the result signed by
        both, or by us with a line saying why the other signature is missing."""
        s = self._session
        if self.error is not None or self._stopped.is_set() or s.match is None:
            return
        if not s.match.is_over:
            with suppress(KoiKoiError):
                await self.resign("left the table")
        with trio.move_on_after(2 * self.timeouts.handshake):
            while s.state in (State.PLAY, State.FINISH) and not self._stopped.is_set():
                await self._progress.wait()
        if s.lacks_peer_final and s.missing is None:
            s.missing = "the other player had not signed the result when you left the table"
        elif s.state is State.PLAY:
            s.missing = "you left the table before your turn came: the resignation was not sent"
        self._save_record()

    @property
    def match_number(self) -> int:
        """Which match of this connection is played (1, then 2, 3... after rematches)."""
        return self._session.match_number

    async def play_again(self, *, timeout: float = math.inf) -> bool:
        """Offer a rematch, or accept the other player's offer (protocol section 13).

        Returns True once the new match has started (its commit-reveal done under
        the handshake deadlines; ``updates`` is then a new channel and the record a
        new file), False when the other player declines (:attr:`rematch_declined`
        says why), leaves, or does not answer within ``timeout`` seconds.  An
        error during the new commit-reveal raises, as in :func:`open_link`.
        """
        self._check_alive()
        s = self._session
        if s.state is not State.DONE:
            raise IllegalActionError("a rematch can be offered once both players signed the result")
        number = s.match_number
        self._declined = None
        try:
            data = s.send(OfferRematch(secrets.token_bytes(32)))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self.rematch_offered = False
        self._write(data)
        self._process()  # an offer already received: the new match starts at once
        with trio.move_on_after(timeout):
            while (
                s.match_number == number and self._declined is None and not self._stopped.is_set()
            ):
                await self._progress.wait()
        if s.match_number == number:
            return False
        await self._handshake()
        return True

    @property
    def rematch_declined(self) -> str | None:
        """The other player's reason, after it declined our last rematch offer."""
        return self._declined

    async def wait_offer(self) -> bool:
        """Until the other player offers a rematch (True) or the connection ends (False)."""
        while not self.rematch_offered and not self._stopped.is_set():
            await self._progress.wait()
        return self.rematch_offered

    async def decline_again(self, reason: str = "") -> None:
        """Say no to the other player's rematch offer (the connection stays open)."""
        if not self.rematch_offered or self._stopped.is_set():
            return
        self.rematch_offered = False
        with suppress(LocalProtocolError):
            self._write(self._session.send(DeclineRematch(reason or "not this time")))

    async def chat(self, text: str) -> None:
        self._check_alive()
        if not self._online:
            raise IllegalActionError("not connected: reconnecting to the other player")
        try:
            data = self._session.send(SendChat(text))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self._write(data)
        if self._session.match is not None:
            self._push(Update("chat", self.view, text=text.strip(), sender=self._session.name))

    # ------------------------------------------------------------------ internals
    async def _wait_online(self) -> None:
        """While reconnecting, local moves wait (they go to the resumed session)."""
        while not self._online and not self._stopped.is_set():
            await self._progress.wait()
        self._check_alive()

    def _check_alive(self) -> None:
        if self.error is not None:
            raise self.error
        if self._stopped.is_set():
            raise IllegalActionError("the connection is closed")

    def _after_local(self, data: bytes) -> None:
        self._save_record()  # our move is in the record before any byte of it leaves
        self._write(data)
        events = self._session.last_local_events
        self._push_state(events, self.seat)
        self._after_step()

    def _write(self, data: bytes) -> None:
        """Hand bytes to the stream, in order: at once when nothing waits for the
        writer task (see :meth:`_send_now`), else through the writer task.

        What waits for the writer is counted: past :data:`OUTGOING_LIMIT` the
        peer is not reading, and the connection is dropped rather than our
        memory growing (a reconnect starts over with an empty queue).
        """
        if not data:
            return
        if self._pending + len(data) > OUTGOING_LIMIT:
            self._drop(
                PeerFloodError(
                    f"the other player stopped reading: {self._pending // 1024} KiB wait to "
                    "be sent; connection closed"
                )
            )
            return
        if self._pending == 0:
            sent = self._send_now(data)
            if sent:
                self._last_tx = trio.current_time()
                if sent == len(data):
                    return
                data = data[sent:]
        try:
            self._out_tx.send_nowait(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return
        self._pending += len(data)
        self._last_tx = trio.current_time()

    def _send_now(self, data: bytes) -> int:
        """Bytes of ``data`` the kernel took at once (0: leave it all to the writer task).

        The common case during play: nothing is queued and a TCP socket's send
        buffer has room, so the bytes go out from the task that made them,
        without waking the writer task (two trio task switches and a
        scheduler pass per message).  Anything unusual (another kind of
        stream, a closed or shut socket, a full buffer, an error) returns 0
        or a partial count, and the writer task sends the rest and meets the
        error itself, as before.  Only while nothing is queued, so the order
        of bytes on the stream is the order of the calls.
        """
        stream = self._stream
        if (
            not isinstance(stream, trio.SocketStream)
            or not self._online
            or self._lost.is_set()
            or self._stopped.is_set()
        ):
            return 0
        sock = stream.socket
        fd = sock.fileno()
        if fd < 0 or sock.did_shutdown_SHUT_WR:
            return 0
        try:
            return os.write(fd, data)
        except OSError:  # a full buffer or a broken connection: the writer task's job
            return 0

    @property
    def _writer_blocked(self) -> bool:
        """Something waits for the writer: the peer reads slowly or not at all.

        Pings are not answered then, and not sent: a reply that cannot leave
        proves nothing and only fills the queue.
        """
        return self._pending > 0

    def _flush(self) -> None:
        self._write(self._session.data_to_send())

    def _push(self, update: Update) -> None:
        with suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            self._up_tx.send_nowait(update)

    def _push_state(self, events: tuple[EngineEvent, ...], actor: int | None) -> None:
        if actor == self.seat:  # our own move: its view is made if a table reads it
            m = self._session.match
            if m is not None:
                self._push(Update("state", partial(self._view_of, m), events, actor))
                return
        self._push(Update("state", self.view, events, actor))

    def _status(self, text: str, *, push: bool = True, event: str = "status") -> None:
        self._notify({"event": event, "text": text})
        if push and self._session.match is not None:
            self._push(Update("status", self.view, text=text))

    def _save_record(self, *, lazy: bool = False) -> None:
        """Bring the record file up to the session (a journal during play, see
        :class:`~p2pkoikoi.transport.record_files.RecordKeeper`); a record that
        cannot be written ends the match.  ``lazy``: the other player's moves
        may wait for our next write (:meth:`RecordJournal.save`)."""
        try:
            self._records.save(self._session, lazy=lazy)
        except TransportError as exc:
            self._fail(exc)

    def _close_record(self) -> None:
        """The link stops: an unfinished match's journal becomes its compact record."""
        try:
            self._records.close(self._session)
        except TransportError as exc:
            if self.error is None:
                self.error = exc

    def _wake(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

    def _after_step(self) -> None:
        """After any change of turn: the turn clock, a pending resignation, the
        final-signature wait."""
        s = self._session
        m = s.match
        if s.turn_limit and s.seq != self._turn_seq:  # a new decision: its clock starts
            self._turn_seq, self._turn_since = s.seq, trio.current_time()  # (not on a resume)
            # The clock is woken only when this decision needs it before it would wake
            # anyway (or the match left play): a deadline never comes earlier than
            # limit - warning after its decision starts, and waking early is harmless
            # (the clock looks at the current decision), so most moves cost it nothing
            # (a wake-up per move was two task switches and a cancel scope).
            limit = float(s.turn_limit)
            if s.state is not State.PLAY or (
                self._turn_since + limit - turn_warning(limit) < self._clock_wake
            ):
                self._turn_changed.set()
            if not self._clock_running and self._nursery is not None:
                self._clock_running = True
                self._nursery.start_soon(self._turn_clock)
        if (
            self._resign_pending is not None
            and s.state is State.PLAY
            and m is not None
            and m.to_act == self.seat
        ):
            self._resign_pending = None
            self._after_local(s.send(Resign(TIME_FORFEIT if self._timed_out else "")))
            return
        if s.state is State.FINISH and self._nursery is not None and not self._awaiting_final:
            self._awaiting_final = True
            self._nursery.start_soon(self._await_final)

    def _resumable(self) -> bool:
        return (
            self._reconnect is not None
            and self._started.is_set()
            and self.timeouts.reconnect_window > 0
            and self._session.state in (State.PLAY, State.FINISH)
        )

    def _drop(self, exc: KoiKoiError) -> None:
        """The connection broke: reconnect if the match can resume, else stop for good."""
        if self.error is not None or self._stopped.is_set() or self._lost.is_set():
            return
        if not self._resumable():
            self._fail(exc)
            return
        self._lost_error = exc
        self._online = False
        self._save_record()
        self._lost.set()
        self._wake()

    def _fail(self, exc: KoiKoiError) -> None:
        """Stop for good: keep the error, tell the table, let the writer send the abort."""
        if self.error is not None or self._stopped.is_set():
            return
        self._session.peer_gone()  # between the joiner's value and the reveal: host forfeits
        forfeit = self._session.forfeit
        if forfeit is not None and forfeit.seat != self.seat and "forfeits" not in str(exc):
            exc = _reworded(exc, f"{forfeit.reason} ({exc}): the host forfeits the match")
        s = self._session
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
        if self._session.state not in (State.PLAY, State.FINISH):
            # a final end (a protocol error, a cheat, refused rules or identity): the
            # match can never resume, so the secrets in the resume file go;
            # a lost connection keeps it for ``p2pkoikoi resume``
            self._records.drop_sidecar()
        if self._session.match is not None:
            self._push(Update("over", self.view, text=str(exc), record=str(self.record_path or "")))
        self._stop()

    def _stop(self) -> None:
        self._stopped.set()
        self._ended.set()
        self._up_tx.close()
        self._out_tx.close()
        self._wake()

    async def _shutdown(self, *, goodbye: bool) -> None:
        """Say goodbye if still talking, let the writer drain, then stop every task."""
        s = self._session
        if goodbye and not self._stopped.is_set() and s.state not in (State.CLOSED, State.ERROR):
            with suppress(ProtocolError):
                self._write(s.send(Goodbye()))
        self._save_record()
        self._stop()
        with trio.move_on_after(self.timeouts.handshake) as cs:
            cs.shield = True
            await self._writer_done.wait()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    # ------------------------------------------------------------------ tasks
    async def _writer(self) -> None:
        """The one task that writes to the stream, in channel order."""
        try:
            async for data in self._out_rx:
                try:
                    assert self._stream is not None
                    await self._stream.send_all(data)
                    self._pending -= len(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    if not self._stopped.is_set():
                        self._drop(TransportError("the connection to the other player broke"))
                    return
        finally:
            self._writer_done.set()

    async def _reader(self) -> None:
        try:
            while not self._stopped.is_set():
                self._process()
                if self._stopped.is_set() or self._session.state in (State.CLOSED, State.ERROR):
                    return
                try:
                    data = await self._receive()
                except (trio.BrokenResourceError, OSError):
                    data = b""
                except trio.ClosedResourceError:
                    return
                if not data and self._resumable():  # keep the session: it resumes
                    self._drop(TransportError("the connection to the other player broke"))
                    return
                self._session.receive_data(bytes(data))
        except KoiKoiError as exc:
            self._fail(exc)

    async def _receive(self) -> bytes | bytearray:
        """The next bytes from the stream (``b""``: it ended).

        From a TCP socket, during play: wait until it is readable, then read,
        without trio's stream wrappers, which first try a read that fails (the
        reader asks right after handling a message, and the answer to it comes
        only after our player's move), then wait, then read again, and add a
        scheduler pass after every read.  Anything else, or a closed socket,
        goes through ``receive_some`` and meets its errors there.  The wait is
        a checkpoint: cancellation and the other tasks run as with
        ``receive_some``.
        """
        stream = self._stream
        assert stream is not None
        if isinstance(stream, trio.SocketStream):
            fd = stream.socket.fileno()
            while fd >= 0:
                await trio.lowlevel.wait_readable(fd)
                if stream.socket.fileno() != fd:  # closed meanwhile
                    break
                try:
                    return os.read(fd, RECEIVE_SIZE)
                except BlockingIOError:  # woken, yet nothing to read: wait again
                    continue
        return await stream.receive_some(RECEIVE_SIZE)

    def _process(self) -> None:
        """Pull every event the session has; one place turns them into updates."""
        s = self._session
        if self._asking:  # the host's person decides about a changed key first
            return
        while not self._stopped.is_set():
            if not self._key_asked:
                check = self._key_question()
                if check is not None:
                    self._asking = True
                    assert self._nursery is not None
                    self._nursery.start_soon(self._ask_new_key, check)
                    return
            ev = self._early.popleft() if self._early else s.next_event()
            if isinstance(ev, ActionReceived | PeerResigned):
                # the peer's last move makes the session queue our final signature:
                # the record holds both before that signature leaves (sends go out at
                # once, see _send_now).  A move that leaves the match in play may wait
                # for our next write (lazy: one append for both moves)
                self._save_record(lazy=True)
            self._flush()
            if ev is NEED_DATA:
                break
            # a message, not a byte, proves the peer alive: a frame trickled a byte
            # at a time never completes, and the silence bound ends it (slowloris)
            self._last_rx = trio.current_time()
            if isinstance(ev, Ping | Pong | ChatReceived) and not self._count_chatter():
                return
            if isinstance(ev, Ping):
                if not self._writer_blocked:
                    self._write(s.send(Pong(ev.nonce)))
            elif isinstance(ev, Pong):
                pass
            elif isinstance(ev, RulesProposed):
                self._notify(
                    {
                        "event": "rules_proposed",
                        "peer_name": ev.peer_name,
                        "peer_fingerprint": ev.peer_fingerprint,
                        "rules_fingerprint": ev.fingerprint,
                        "rounds": ev.rounds,
                        "rules": ev.rules.to_dict(),
                        "turn_limit": ev.turn_limit,
                    }
                )
                assert self._nursery is not None
                self._nursery.start_soon(self._decide, ev)
            elif isinstance(ev, HandshakeComplete):
                self._on_handshake(ev)
            elif isinstance(ev, MatchStarted):
                self._save_record()
                if self._reconnect is not None and self._session.resume_secret is not None:
                    self._reconnect.secret = self._session.resume_secret
                    if self._reconnect.sidecar is not None:
                        self._reconnect.sidecar["resume_secret"] = self._reconnect.secret.hex()
                self._write_sidecar()
                self._started.set()
                self._push_state(ev.events, None)
                self._after_step()
            elif isinstance(ev, ActionReceived | PeerResigned):
                if isinstance(ev, PeerResigned) and ev.reason == TIME_FORFEIT:
                    peer = self.names[1 - self.seat]
                    self.forfeit_reason = f"{peer}'s time ran out ({s.turn_limit}s per decision)"
                    self._status(f"{self.forfeit_reason}: they resign", event="peer_time_out")
                # (the record was brought up to this move before the flush above)
                self._push_state(ev.events, ev.seat)
                self._after_step()
            elif isinstance(ev, HiddenProgress):  # the hidden deal: a deal opened, our play done
                self._save_record()
                self._push_state(ev.events, ev.actor)
                self._after_step()
            elif isinstance(ev, ChatReceived):
                peer = self.names[1 - self.seat]
                self._notify({"event": "chat", "sender": peer, "text": ev.text})
                if s.match is not None:
                    self._push(Update("chat", self.view, text=ev.text, sender=peer))
            elif isinstance(ev, MatchOver):
                self._on_over(ev)
            elif isinstance(ev, RematchOffered):
                self.rematch_offered = True
                self._notify(
                    {
                        "event": "rematch_offered",
                        "match": ev.match_number,
                        "text": "the other player offers to play again",
                    }
                )
            elif isinstance(ev, RematchDeclined):
                self._declined = ev.reason
                self._notify(
                    {
                        "event": "rematch_declined",
                        "reason": ev.reason,
                        "text": f"the other player does not want to play again: {ev.reason}",
                    }
                )
            elif isinstance(ev, RematchStarted):
                self._next_match(ev)
            elif isinstance(ev, ConnectionClosed):
                if not ev.clean:
                    self._fail(TransportError(ev.reason))
                else:
                    self._stop()
                return
        self._save_record(lazy=True)
        self._wake()

    def _count_chatter(self) -> bool:
        """Count one ping, pong or chat; False after failing on a flood."""
        if self._chatter.take(trio.current_time()):
            return True
        self._fail(
            PeerFloodError(
                f"the other player sent more than {CHATTER_BURST} pings or chats at once "
                f"(a flood; at most {CHATTER_RATE:g} a second are allowed): connection closed"
            )
        )
        return False

    def _on_handshake(self, ev: HandshakeComplete) -> None:
        s = self._session
        self.rules = ev.rules
        self.peer_fingerprint = ev.peer_fingerprint
        names = [s.name, s.name]
        names[1 - self.seat] = ev.peer_name
        self.names = (names[0], names[1])
        self._notify(
            {
                "event": "handshake",
                "peer_name": ev.peer_name,
                "peer_fingerprint": ev.peer_fingerprint,
                "peer_role": s.role.other.value,
                "rules_fingerprint": ev.rules.fingerprint(),
                "rules": ev.rules.to_dict(),
                "turn_limit": s.turn_limit,
            }
        )
        if self._known is not None:
            try:
                check = self._known.admit(ev.peer_name, ev.peer_fingerprint)
            except IdentityChangedError as exc:  # before the deal: nobody has seen a card
                with suppress(ProtocolError):
                    self._write(s.send(Goodbye()))
                self._fail(exc)
                return
            except ConfigError as exc:  # known_peers cannot be written: play on, say so
                self._notify({"event": "warning", "text": str(exc)})
            else:
                if check.warning:
                    self._notify({"event": "warning", "text": check.warning})
        self._save_record()

    def _on_over(self, ev: MatchOver) -> None:
        self.result = ev
        self.final_hash = ev.final_hash.hex()
        self._save_record()
        self._records.drop_sidecar()
        m = self._session.match
        assert m is not None
        text = m.end_reason
        if self.forfeit_reason:
            text = f"{text}: {self.forfeit_reason}"
        self._push(
            Update(
                "over",
                self.view,
                text=text,
                record=str(self.record_path or ""),
                final_hash=self.final_hash,
            )
        )
        self._up_tx.close()
        self._ended.set()

    def _next_match(self, ev: RematchStarted) -> None:
        """Both want another match: a new record file, a new ``updates`` channel, the
        per-match state reset; the commit-reveal runs next (:meth:`play_again`)."""
        previous = self._records.path
        if previous is not None:
            self.finished_records.append(previous)
        self._records = RecordKeeper(next_match_path(previous, ev.match_number))
        self.result = None
        self.final_hash = ""
        self.forfeit_reason = ""
        self._resign_pending = None
        self._awaiting_final = False
        self.rematch_offered = False
        self._turn_seq = -1  # the turn clock starts again with the new match's seq 0
        self._timed_out = False
        self._started = trio.Event()
        self._ended = trio.Event()
        self._up_tx, self.updates = trio.open_memory_channel[Update](math.inf)
        self._last_rx = self._last_tx = trio.current_time()
        self._notify(
            {
                "event": "rematch",
                "match": ev.match_number,
                "text": f"match {ev.match_number} on this connection: dealing",
            }
        )
        if self._conn_nursery is not None and not self._heartbeat_on:
            self._conn_nursery.start_soon(self._heartbeat)

    async def _decide(self, proposal: RulesProposed) -> None:
        ok = await self._decide_rules(proposal)
        if self._stopped.is_set() or self._session.state is not State.RULES:
            return
        if ok:
            self._write(self._session.send(AcceptRules()))
            self._process()
        else:
            self._write(self._session.send(DeclineRules("they chose Decline on the rules screen")))
            self._fail(TransportError("you declined the host's rules"))

    async def _await_final(self) -> None:
        """After the last action: the peer must sign the final transcript in time."""
        while True:
            with trio.move_on_after(self.timeouts.handshake) as cs:
                while self._session.state is State.FINISH and not self._stopped.is_set():
                    await self._progress.wait()
            if not cs.cancelled_caught or self._stopped.is_set():
                return
            if not self._online:
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
        s, m = self._session, self._session.match
        if not s.turn_limit or m is None or m.is_over or m.to_act != self.seat:
            return math.inf
        return self._turn_since + s.turn_limit

    async def _turn_clock(self) -> None:
        """The agreed turn limit (protocol/README.md section 5), on trio's clock.

        Our turn: a warning (``time_warning``) when :func:`turn_warning` seconds
        are left, a countdown in the status line, then we resign on our own behalf
        (a person who walked away, a hung bot).  The other player's turn: after the
        limit plus ``timeouts.turn_grace`` the match ends as its forfeit by time,
        recorded and signed by us (a modified program that pings but never moves).
        The clock follows the sequence number, not the connection: a reconnect does
        not restart it.
        """
        limit = float(self._session.turn_limit)
        warn_before = turn_warning(limit)
        told: tuple[int, int] = (-1, -1)  # (seq, seconds left) last announced
        while not self._stopped.is_set():
            s, m = self._session, self._session.match
            if s.state is not State.PLAY or m is None:
                self._clock_running = False
                return
            self._turn_changed = trio.Event()  # set by _after_step when a decision starts
            seq, since = self._turn_seq, self._turn_since
            mine = m.to_act == self.seat
            now = trio.current_time()
            if mine:
                deadline = since + limit
                left = deadline - now
                if left <= 0:
                    self._own_time_out(limit)  # resigned: the next step sets the event
                    self._clock_wake = math.inf
                    await self._turn_changed.wait()
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
                deadline = since + limit + self.timeouts.turn_grace
                if now >= deadline:
                    if self._online and not s.catching_up:
                        self._peer_time_out(limit)
                        return
                    # reconnecting, or the peer is re-sending what we lack: its move
                    # may be on the way; look again once the connection is back
                    deadline = now + 1.0
                wake = deadline
            self._clock_wake = wake
            with trio.move_on_at(wake):
                await self._turn_changed.wait()
            self._clock_wake = math.inf

    def _time_warning(self, left: int, limit: float, *, first: bool) -> None:
        """The warning, then the countdown: the status line and a ``time_warning`` note."""
        text = f"{left}s left to act"
        if first:
            text = f"your time is running out: {text} ({limit:g}s per decision)"
        self._notify({"event": "time_warning", "text": text, "seconds_left": left})
        if self._session.match is not None:
            self._push(Update("status", self.view, text=text))

    def _own_time_out(self, limit: float) -> None:
        """Our turn limit ran out: resign on our own behalf (now, or once reconnected)."""
        reason = f"your time ran out ({limit:g}s per decision)"
        self._notify({"event": "time_out", "text": f"{reason}: you resign"})
        self.forfeit_reason = reason
        self._timed_out = True
        s, m = self._session, self._session.match
        if self._online and m is not None and m.to_act == self.seat and not s.catching_up:
            with suppress(LocalProtocolError):
                self._after_local(s.send(Resign(TIME_FORFEIT)))
                return
        self._resign_pending = reason

    def _peer_time_out(self, limit: float) -> None:
        """The other player let its turn limit (and the grace) pass: its forfeit by time."""
        s = self._session
        try:
            s.claim_time_forfeit()
        except LocalProtocolError:
            return
        self._flush()  # the abort that tells the other program why
        peer = self.names[1 - self.seat]
        self._fail(
            TurnTimeoutError(
                f"{peer} did not move within the turn limit ({limit:g}s per decision, plus "
                f"{self.timeouts.turn_grace:g}s for latency): {peer} forfeits by time"
            )
        )

    async def _heartbeat(self) -> None:
        """Pings and the silence bound during a match (not between matches, where a
        person may take their time over a rematch)."""
        self._heartbeat_on = True
        try:
            await self._heartbeat_loop()
        finally:
            self._heartbeat_on = False

    async def _heartbeat_loop(self) -> None:
        t = self.timeouts
        tick = min(t.ping_interval, t.silence_warn / 2, t.silence_fail / 4, t.handshake / 4)
        warned = False
        owed: tuple[int, float] | None = None  # (seq, since when) a hidden-deal move is owed
        while not self._stopped.is_set() and not self._lost.is_set():
            await trio.sleep(tick)
            s = self._session
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
                    self._fail(PeerTimeoutError(f"{why}: it forfeits the match"))
                    return
            else:
                owed = None
            if (
                s.state is not State.HELLO
                and now - self._last_tx >= t.ping_interval
                and not self._writer_blocked
            ):
                self._ping_no += 1
                self._write(s.send(Ping(self._ping_no.to_bytes(8, "big"))))
            if self._asking:  # nothing is read while the host's person answers
                self._last_rx = now
            silent = now - self._last_rx
            if silent >= t.silence_fail:
                self._drop(
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

    # ------------------------------------------------------------------ reconnecting
    def _write_sidecar(self) -> None:
        """The secrets ``p2pkoikoi resume`` needs, beside the record, private (0600)."""
        rc = self._reconnect
        if rc is None or rc.sidecar is None:
            return
        if self._session.is_hidden:  # the deal secret: needed to resume, never in the record
            rc.hidden_secret = self._session.hidden_secret
            rc.sidecar["hidden_secret"] = self._session.hidden_secret.hex()
        try:
            self._records.write_sidecar(rc.sidecar)
        except OSError as exc:
            self._notify({"event": "warning", "text": f"cannot write the resume file: {exc}"})

    async def _supervise(self, stream: trio.abc.Stream | None) -> None:
        """One connection after another until the match ends or cannot resume."""
        if stream is None:  # resuming after a crash: the first connection is a resume
            stream = await self._reconnect_loop(None)
        while stream is not None:
            await self._run_connection(stream)
            if self._stopped.is_set() or not self._lost.is_set():
                return
            stream = await self._reconnect_loop(self._lost_error)

    def _key_question(self) -> PeerCheck | None:
        """The host's question about a changed key, asked once, before the deal.

        The host's gate hands the link over once the joiner's auth has verified:
        its name and key are known, while the joiner's person still reads the
        rules.  A known name with a new key is asked about then (the table's
        question; headless hosts decide in :meth:`_on_handshake`), and until
        the answer nothing more is processed: the joiner's acceptance waits in
        the session's buffer, so no commitment leaves and nobody sees a card.
        """
        s = self._session
        known = self._known
        if s.state is not State.RULES or s.peer_name is None or s.peer_key is None:
            return None  # not yet: asked once the joiner's auth has verified
        self._key_asked = True
        if known is None or known.ask is None:
            return None
        check = known.check(s.peer_name, fingerprint(s.peer_key))
        return check if check.status is PeerStatus.CHANGED else None

    async def _ask_new_key(self, check: PeerCheck) -> None:
        known = self._known
        assert known is not None and known.ask is not None and self._session.rules is not None
        ok = False
        # the joiner waits for our commitment a handshake step at most: answer before
        with trio.move_on_after(KEY_QUESTION_SHARE * self.timeouts.handshake):
            ok = await known.ask(check, self._session.rules)
        if self._stopped.is_set():
            return
        if not ok:
            with suppress(ProtocolError):
                self._write(self._session.send(Goodbye()))
            self._fail(
                IdentityChangedError(
                    f"{check.warning}: you did not accept the new key, so the match does "
                    "not start (no card was dealt)"
                )
            )
            return
        with suppress(ConfigError):
            known.remember(check.name, check.fingerprint)
        self._asking = False
        self._last_rx = trio.current_time()  # what arrived meanwhile is processed now
        self._process()

    async def _run_connection(self, stream: trio.abc.Stream) -> None:
        """Reader, writer and heartbeat of one connection; returns when it is lost."""
        self._stream = stream
        self._out_tx, self._out_rx = trio.open_memory_channel[bytes](math.inf)
        self._pending = 0  # bytes in that channel: bounded by OUTGOING_LIMIT in _write
        self._writer_done = trio.Event()
        self._lost = trio.Event()
        self._last_rx = self._last_tx = trio.current_time()
        try:
            async with trio.open_nursery() as nursery:
                self._conn_nursery = nursery
                nursery.start_soon(self._writer)
                self._flush()  # our hello, through the writer like everything else
                if self.reconnects:
                    self._announce_resumed()
                nursery.start_soon(self._reader)
                nursery.start_soon(self._heartbeat)
                await self._lost.wait()
                nursery.cancel_scope.cancel()
        finally:
            await trio.aclose_forcefully(stream)

    def _announce_resumed(self) -> None:
        s = self._session
        self._online = True
        self._started.set()
        self._notify({"event": "reconnected", "text": "reconnected", "seq": s.seq})
        if s.match is not None:
            self._push(Update("status", self.view, text="reconnected"))
            self._push_state((), None)  # a table redraws; a bot acts if it is its turn
        self._save_record()
        self._wake()
        if s.state is State.DONE and self.result is None:  # we only had to re-sign
            r = s.record().result
            assert r is not None
            self._on_over(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
            return
        self._after_step()

    def _note_reconnecting(
        self, attempt: int, lost: KoiKoiError | None, last: list[str] | None = None
    ) -> None:
        text = f"connection lost, reconnecting (attempt {attempt})..."
        if lost is None:
            text = f"resuming the match (attempt {attempt})..."
        note: Note = {"event": "reconnecting", "attempt": attempt, "text": text}
        if lost is not None:
            note["reason"] = str(lost)
        if last:
            note["last_error"] = last[-1]
        self._notify(note)
        if self._session.match is not None and not self._stopped.is_set():
            self._push(Update("status", self.view, text=text))

    async def _reconnect_loop(self, lost: KoiKoiError | None) -> trio.abc.Stream | None:
        """A new connection to the same opponent within the reconnect window, or fail."""
        rc = self._reconnect
        assert rc is not None
        window = self.timeouts.reconnect_window
        record = self._session.record()
        got: tuple[trio.abc.Stream, Session] | None = None
        last: list[str] = []
        role = self._session.role
        try:
            with trio.move_on_after(window):
                if rc.dial is not None:
                    got = await redial(
                        rc,
                        record,
                        role,
                        self.timeouts,
                        lambda attempt: self._note_reconnecting(attempt, lost, last),
                        last,
                    )
                else:
                    got = await reaccept(
                        rc,
                        record,
                        role,
                        self.timeouts,
                        lambda attempt: self._note_reconnecting(attempt, lost),
                        last,
                        self._notify,
                    )
        except ResumeError as exc:  # another player or another match: hopeless
            self._fail(exc)
            return None
        if got is None:
            if self.error is None:
                why = f" ({lost})" if lost is not None else ""
                tail = f"; last attempt: {last[-1]}" if last else ""
                self._fail(
                    PeerSilentError(
                        f"the connection was lost{why} and the other player did not come "
                        f"back within {window:g}s{tail}; the match is unfinished: continue it "
                        f"later with: p2pkoikoi resume {self.record_path or 'RECORD'}"
                    )
                )
            return None
        stream, session = got
        self._session = session
        self.reconnects += 1
        return stream

    # ------------------------------------------------------------------ handshake
    async def _handshake(self) -> None:
        """Run until the match starts; each step under its own ``fail_after``."""
        s = self._session
        while not self._started.is_set():
            if self.error is not None:
                raise self.error
            if self._stopped.is_set():
                raise TransportError("the connection closed during the handshake")
            step = s.waiting_for
            limit, error = step_limit(self.timeouts, step)
            try:
                with trio.fail_after(limit):
                    while (
                        s.waiting_for is step
                        and not self._started.is_set()
                        and not self._stopped.is_set()
                    ):
                        await self._progress.wait()
            except trio.TooSlowError:
                self._fail(error)
                raise error from None


def _reworded(exc: KoiKoiError, text: str) -> KoiKoiError:
    """The same kind of error (callers and tests tell them apart) with more to say."""
    try:
        new = type(exc)(text)
    except TypeError:
        return TransportError(text)
    return new if isinstance(new, KoiKoiError) else TransportError(text)


@asynccontextmanager
async def open_link(
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
) -> AsyncIterator[NetworkLink]:
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
    if stream is None and (reconnect is None or session.match is None):
        raise LocalProtocolError("only a resumed session with a way to reconnect needs no stream")
    link = NetworkLink(
        stream,
        session,
        timeouts=timeouts or Timeouts(),
        record_path=record_path,
        notify=notify or nop,
        decide_rules=decide_rules or _accept_decision,
        known_peers=known_peers,
        reconnect=reconnect,
        early=early,
    )
    started = False
    try:
        async with trio.open_nursery() as nursery:
            link._nursery = nursery
            nursery.start_soon(link._supervise, stream)
            try:
                if stream is None:
                    while not link._started.is_set() and not link._stopped.is_set():
                        await link._progress.wait()
                    if link.error is not None:
                        raise link.error
                else:
                    await link._handshake()
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
                if link._stream is not None:
                    await link._stream.aclose()
    if link.error is not None:
        raise link.error
