"""The link during a match: one :class:`Session` over one trio byte stream at a time.

Theory of operation
-------------------
The session (layer 2) is a sans-I/O state machine; this module gives it a
stream, a clock and a table.  :class:`NetworkLink` owns the match's state (the
session, the record, the ``updates`` channel, the error) and turns the
session's events into :class:`Update` values (:meth:`NetworkLink._process`,
the one place that does).  Each other job is a small object of its own, with
one lifetime, that gets the link passed in:

* :class:`~p2pkoikoi.transport.connection.Connection`: one stream's writer
  (the only task that calls ``send_all``, so frames never interleave) and
  reader (feeds the session, calls ``_process``);
* :class:`~p2pkoikoi.transport.supervisor.Supervisor`: one connection after
  another (reconnects within ``reconnect_window``, the resume file);
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
with a way to reconnect only *drops* the connection (:meth:`NetworkLink._drop`):
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
    fingerprint,
)
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.session.record import TIME_FORFEIT
from p2pkoikoi.transport.connection import Connection
from p2pkoikoi.transport.errors import (
    PeerTimeoutError,
    TransportError,
    leaves,
)
from p2pkoikoi.transport.handshake_link import DecideRules as DecideRules
from p2pkoikoi.transport.handshake_link import Handshake, accept_decision
from p2pkoikoi.transport.heartbeat import Heartbeat
from p2pkoikoi.transport.identity import KnownPeers
from p2pkoikoi.transport.key_question import KeyQuestion
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link import Update
from p2pkoikoi.transport.notes import Notify, nop
from p2pkoikoi.transport.reconnect import Reconnect
from p2pkoikoi.transport.record_files import RecordKeeper
from p2pkoikoi.transport.rematch_link import Rematch
from p2pkoikoi.transport.supervisor import Supervisor
from p2pkoikoi.transport.turn_clock import TurnClock


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
        self._session = session
        # events the joiner's dialer pulled while proving the host (transport/dialer.py)
        self._early = deque(early)
        self.timeouts = timeouts
        self._records = RecordKeeper(record_path)
        self._notify = notify
        self.seat = session.our_seat
        self.names = (session.name, "?") if self.seat == 0 else ("?", session.name)
        self.peer_fingerprint = ""
        self.error: KoiKoiError | None = None
        self.final_hash = ""
        self.result: MatchOver | None = None
        self.forfeit_reason = ""
        self._up_tx, self.updates = trio.open_memory_channel[Update](math.inf)
        self._started = trio.Event()
        self._stopped = trio.Event()
        self._ended = trio.Event()
        self._progress = trio.Event()
        self._last_rx = trio.current_time()  # the last complete message, not the last byte
        self._resign_pending: str | None = None
        self._nursery: trio.Nursery | None = None
        self._online = True  # a connection is up (false while reconnecting)
        self._view_cache: tuple[MatchState, PlayerView] | None = None  # see view
        self._lost = trio.Event()  # the current connection is gone
        self._lost_error: KoiKoiError | None = None
        self._awaiting_final = False
        self.reconnects = 0
        self._conn_nursery: trio.Nursery | None = None  # the current connection's tasks
        #: the records of this connection's finished matches, oldest first
        self.finished_records: list[Path] = []
        # the jobs this link composes, one lifetime each (see their modules)
        self._conn = Connection(self, stream)  # the current stream's I/O
        self._supervisor = Supervisor(self, reconnect)
        self._keys = KeyQuestion(self, known_peers, session.role)
        self._heartbeat = Heartbeat(self)
        self._clock = TurnClock(self)
        self._rematch = Rematch(self)
        self._handshake = Handshake(self, decide_rules)
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
        """Hand bytes to the current connection, in order (:meth:`Connection.write`)."""
        self._conn.write(data)

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
        self._clock.step()
        if (
            self._resign_pending is not None
            and s.state is State.PLAY
            and m is not None
            and m.to_act == self.seat
        ):
            self._resign_pending = None
            self._after_local(s.send(Resign(TIME_FORFEIT if self._clock.timed_out else "")))
            return
        if s.state is State.FINISH and self._nursery is not None and not self._awaiting_final:
            self._awaiting_final = True
            self._nursery.start_soon(self._await_final)

    def _resumable(self) -> bool:
        return (
            self._supervisor.reconnect is not None
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
            who = ("the host", "the joiner")[forfeit.seat]
            exc = _reworded(exc, f"{forfeit.reason} ({exc}): {who} forfeits the match")
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
        self._conn.close()
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
            await self._conn.writer_done.wait()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    # ------------------------------------------------------------------ tasks
    def _process(self) -> None:
        """Pull every event the session has; one place turns them into updates."""
        s = self._session
        if self._keys.asking:  # the host's person decides about a changed key first
            return
        while not self._stopped.is_set():
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
                self._rematch.on_offered(ev)
            elif isinstance(ev, RematchDeclined):
                self._rematch.on_declined(ev)
            elif isinstance(ev, RematchStarted):
                self._rematch.next_match(ev)
            elif isinstance(ev, ConnectionClosed):
                if not ev.clean:
                    self._fail(TransportError(ev.reason))
                else:
                    self._stop()
                return
        self._save_record(lazy=True)
        self._wake()

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
        return self._clock.deadline()


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
        decide_rules=decide_rules or accept_decision,
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
                    while not link._started.is_set() and not link._stopped.is_set():
                        await link._progress.wait()
                    if link.error is not None:
                        raise link.error
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
                if link._conn.stream is not None:
                    await link._conn.stream.aclose()
    if link.error is not None:
        raise link.error
