"""The network transport: one :class:`Session` over one trio byte stream.

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
match; the joiner then redials with exponential backoff and the host takes
candidate connections from its listener (which refuses everyone else) until a
resume handshake (:func:`resume_handshake`, :meth:`Session.resume`) succeeds
or ``reconnect_window`` ends.  Local moves wait meanwhile.  ``p2pkoikoi
resume`` starts a link with no stream at all: its first connection is a
resume (:func:`open_resume`, secrets from the ``.resume`` file).

The record (``session.record()``) is rewritten atomically after every step,
so a crash or a cut connection loses nothing that both sides had agreed on.
Times are parameters (:class:`Timeouts`) and all waiting uses trio's clock,
so tests run whole matches under ``MockClock(autojump_threshold=0)``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import socket
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import Action, IllegalActionError, KoiKoiError, PlayerView, RuleSet
from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.session import (
    NEED_DATA,
    AcceptRules,
    ActionReceived,
    ChatReceived,
    ConnectionClosed,
    DeclineRules,
    Goodbye,
    HandshakeComplete,
    Invite,
    LocalProtocolError,
    MatchOver,
    MatchStarted,
    PeerResigned,
    Ping,
    Pong,
    ProtocolError,
    Resign,
    Resumed,
    ResumeError,
    Role,
    RulesMismatchError,
    RulesProposed,
    SendAction,
    SendChat,
    Session,
    State,
    VersionMismatchError,
    WaitingFor,
    decode_invite,
    encode_invite,
    encode_record,
    fingerprint,
    wire,
)
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.session.invite import SECRET_BYTES
from p2pkoikoi.session.record import Record
from p2pkoikoi.transport.dialer import dial_any, dial_authenticated
from p2pkoikoi.transport.discovery import announce
from p2pkoikoi.transport.errors import (
    ConfigError,
    ConnectError,
    ListenAddressError,
    PeerFloodError,
    PeerSilentError,
    PeerTimeoutError,
    RevealTimeoutError,
    TransportError,
)
from p2pkoikoi.transport.identity import KnownPeers, atomic_write, default_record_path
from p2pkoikoi.transport.interfaces import Candidate
from p2pkoikoi.transport.link import Update
from p2pkoikoi.transport.portmap import open_reachability

#: the port a host listens on unless told otherwise (unassigned by IANA)
DEFAULT_PORT: Final = 47474
RECEIVE_SIZE: Final = 65536
#: pings, pongs and chats a peer may send in a burst, and per second after it; an
#: honest peer pings every few seconds and people chat far slower (see _chatter)
CHATTER_BURST: Final = 64
CHATTER_RATE: Final = 16.0

Note = dict[str, Any]
"""A non-game notice (``{"event": ..., ...}``): listening, handshake, warning, status, chat."""
Notify = Callable[[Note], None]
DecideRules = Callable[[RulesProposed], Awaitable[bool]]


@dataclass(frozen=True)
class Timeouts:
    """Every bound the transport applies, in seconds of trio's clock."""

    handshake: float = 30.0  #: each handshake step (hello, auth, commit, value, final signature)
    reveal: float = 30.0  #: the host's reveal after our value; missing = the host forfeits
    rules_decision: float = 300.0  #: a person reading the proposed rules
    connect: float = 15.0  #: the joiner's TCP connect
    ping_interval: float = 5.0  #: ping when we sent nothing for this long
    silence_warn: float = 15.0  #: a silent peer is reported after this long
    silence_fail: float = 30.0  #: ... and the connection counts as lost after this long
    #: after a lost connection: how long the joiner redials / the host waits for it
    reconnect_window: float = 120.0
    backoff_initial: float = 1.0  #: the joiner's first pause between redials (doubles)
    backoff_max: float = 10.0  #: ... up to this pause


SIDECAR_SUFFIX: Final = ".resume"
SIDECAR_FORMAT: Final = "p2pkoikoi-resume"


def sidecar_path(record: Path) -> Path:
    """Where the secrets to resume ``record`` live (0600, deleted when the match ends)."""
    return record.with_name(record.name + SIDECAR_SUFFIX)


@dataclass
class Reconnect:
    """How a link gets a new connection to the same opponent after a drop.

    The joiner ``dial``s (with exponential backoff); the host takes candidate
    streams from ``incoming`` (fed by its listener, which refuses everyone while
    ``wanted`` is false).  ``sidecar`` is what ``p2pkoikoi resume`` needs after a
    crash (the invite secret, role, address): written beside the record.
    """

    identity: Ed25519PrivateKey
    secret: bytes
    dial: Callable[[], Awaitable[trio.abc.Stream]] | None = None
    incoming: trio.MemoryReceiveChannel[trio.abc.Stream] | None = None
    sidecar: dict[str, Any] | None = None
    wanted: bool = False

    def session(self, record: Record, role: Role) -> Session:
        return Session.resume(
            record, role, identity_key=self.identity, invite_secret=self.secret, entropy=_entropy()
        )


async def resume_handshake(stream: trio.abc.Stream, session: Session, limit: float) -> Resumed:
    """Run a resumed session's handshake on ``stream`` (one task, no writer needed).

    Returns at the :class:`Resumed` event, with the session's catch-up bytes
    written; later events stay queued in the session for the link's reader.
    """
    with trio.fail_after(limit):
        await stream.send_all(session.data_to_send())
        while True:
            ev = session.next_event()
            out = session.data_to_send()
            if out:
                await stream.send_all(out)
            if isinstance(ev, Resumed):
                return ev
            if ev is NEED_DATA:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    raise TransportError("the connection closed during the resume handshake")
                session.receive_data(bytes(data))
            elif isinstance(ev, ConnectionClosed):
                raise TransportError(ev.reason)


def _nop(note: Note) -> None:
    pass


def describe_note(note: Note) -> str:
    """One line for people from a :data:`Note` (the table's status line)."""
    kind = note.get("event")
    if "text" in note:
        return str(note["text"])
    if kind == "listening":
        return f"waiting for the other player on port {note['port']}; invite: {note['invite']}"
    if kind == "handshake":
        return f"connected to {note['peer_name']} ({note['peer_fingerprint']})"
    return str(kind)


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
        pending: Sequence[SessionEvent] = (),
    ) -> None:
        self._stream = stream
        self._session = session
        # events the dialer pulled while proving the peer (transport/dialer.py)
        self._pending = deque(pending)
        self._reconnect = reconnect
        self.timeouts = timeouts
        self._explicit_record = record_path
        self.record_path: Path | None = record_path
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
        self._chatter_tokens = float(CHATTER_BURST)
        self._chatter_at = trio.current_time()
        self._last_record = b""
        self._resign_pending: str | None = None
        self._ping_no = 0
        self._nursery: trio.Nursery | None = None
        self._online = True  # a connection is up (false while reconnecting)
        self._lost = trio.Event()  # the current connection is gone
        self._lost_error: KoiKoiError | None = None
        self._awaiting_final = False
        self.reconnects = 0
        if session.peer_name is not None and session.rules is not None:  # a resumed session
            self.rules = session.rules
            names = [session.name, session.name]
            names[1 - self.seat] = session.peer_name
            self.names = (names[0], names[1])
            assert session.peer_key is not None
            self.peer_fingerprint = fingerprint(session.peer_key)

    # ------------------------------------------------------------------ GameLink
    @property
    def session(self) -> Session:
        return self._session

    @property
    def view(self) -> PlayerView:
        m = self._session.match
        if m is None:
            raise LocalProtocolError("the match has not started")
        return m.view(self.seat)

    @property
    def finished(self) -> bool:
        """Both final signatures exchanged (or the link stopped)."""
        return self.result is not None or self._stopped.is_set()

    async def wait_ended(self) -> None:
        """Until the match is over (both signatures) or the link stopped on an error."""
        await self._ended.wait()

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
        self._write(data)
        self._save_record()
        events = self._session.last_local_events
        self._push_state(events, self.seat)
        self._after_step()

    def _write(self, data: bytes) -> None:
        """Hand bytes to the writer task: the only path to the stream."""
        if not data:
            return
        try:
            self._out_tx.send_nowait(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return
        self._last_tx = trio.current_time()

    def _flush(self) -> None:
        self._write(self._session.data_to_send())

    def _push(self, update: Update) -> None:
        with suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            self._up_tx.send_nowait(update)

    def _push_state(self, events: tuple[EngineEvent, ...], actor: int | None) -> None:
        self._push(Update("state", self.view, events, actor))

    def _status(self, text: str, *, push: bool = True, event: str = "status") -> None:
        self._notify({"event": event, "text": text})
        if push and self._session.match is not None:
            self._push(Update("status", self.view, text=text))

    def _save_record(self) -> None:
        """Rewrite the record if it changed (atomic: temp, fsync, rename)."""
        s = self._session
        if s.session_id is None:
            return
        data = encode_record(s.record())
        if data == self._last_record:
            return
        if self.record_path is None:
            if s.peer_name is None:
                # the default name is DATE-TIME-PEER.koikoi: wait until the peer has
                # proved who it is (before that there is no match worth keeping)
                return
            self.record_path = default_record_path(s.peer_name)
        try:
            atomic_write(self.record_path, data)
        except OSError as exc:
            self._fail(TransportError(f"cannot write the record {self.record_path}: {exc}"))
            return
        self._last_record = data

    def _wake(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

    def _after_step(self) -> None:
        """After any change of turn: a pending resignation, the final-signature wait."""
        s = self._session
        m = s.match
        if (
            self._resign_pending is not None
            and s.state is State.PLAY
            and m is not None
            and m.to_act == self.seat
        ):
            self._resign_pending = None
            self._after_local(s.send(Resign()))
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
        self.error = exc
        self._flush()  # the session's abort, if it queued one
        self._save_record()
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
                    assert self._stream is not None
                    data = await self._stream.receive_some(RECEIVE_SIZE)
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

    def _process(self) -> None:
        """Pull every event the session has; one place turns them into updates."""
        s = self._session
        while not self._stopped.is_set():
            ev = self._pending.popleft() if self._pending else s.next_event()
            self._flush()
            if ev is NEED_DATA:
                break
            # a message, not a byte, proves the peer alive: a frame trickled a byte
            # at a time never completes, and the silence bound ends it (slowloris)
            self._last_rx = trio.current_time()
            if isinstance(ev, Ping | Pong | ChatReceived) and not self._chatter():
                return
            if isinstance(ev, Ping):
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
                    }
                )
                assert self._nursery is not None
                self._nursery.start_soon(self._decide, ev)
            elif isinstance(ev, HandshakeComplete):
                self._on_handshake(ev)
            elif isinstance(ev, MatchStarted):
                self._save_record()
                self._write_sidecar()
                self._started.set()
                self._push_state(ev.events, None)
                self._after_step()
            elif isinstance(ev, ActionReceived | PeerResigned):
                self._save_record()
                self._push_state(ev.events, 1 - self.seat)
                self._after_step()
            elif isinstance(ev, ChatReceived):
                peer = self.names[1 - self.seat]
                self._notify({"event": "chat", "sender": peer, "text": ev.text})
                if s.match is not None:
                    self._push(Update("chat", self.view, text=ev.text, sender=peer))
            elif isinstance(ev, MatchOver):
                self._on_over(ev)
            elif isinstance(ev, ConnectionClosed):
                if not ev.clean:
                    self._fail(TransportError(ev.reason))
                else:
                    self._stop()
                return
        self._save_record()
        self._wake()

    def _chatter(self) -> bool:
        """Count one ping, pong or chat (a token bucket); False after failing on a flood."""
        now = trio.current_time()
        self._chatter_tokens = min(
            float(CHATTER_BURST),
            self._chatter_tokens + (now - self._chatter_at) * CHATTER_RATE,
        )
        self._chatter_at = now
        if self._chatter_tokens >= 1:
            self._chatter_tokens -= 1
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
            }
        )
        if self._known is not None:
            warning = self._known.check(ev.peer_name, ev.peer_fingerprint)
            if warning:
                self._notify({"event": "warning", "text": warning})
        self._save_record()

    def _on_over(self, ev: MatchOver) -> None:
        self.result = ev
        self.final_hash = ev.final_hash.hex()
        self._save_record()
        if self.record_path is not None:  # the secrets to resume are of no use now
            with suppress(OSError):
                os.unlink(sidecar_path(self.record_path))
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

    async def _heartbeat(self) -> None:
        t = self.timeouts
        tick = min(t.ping_interval, t.silence_warn / 2, t.silence_fail / 4)
        warned = False
        while not self._stopped.is_set() and not self._lost.is_set():
            await trio.sleep(tick)
            s = self._session
            now = trio.current_time()
            if s.state in (State.DONE, State.CLOSED, State.ERROR):
                return
            if s.state is not State.HELLO and now - self._last_tx >= t.ping_interval:
                self._ping_no += 1
                self._write(s.send(Ping(self._ping_no.to_bytes(8, "big"))))
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
        if rc is None or rc.sidecar is None or self.record_path is None:
            return
        body = {"format": SIDECAR_FORMAT, "version": 1, **rc.sidecar}
        try:
            atomic_write(
                sidecar_path(self.record_path), json.dumps(body).encode("utf-8"), mode=0o600
            )
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

    async def _run_connection(self, stream: trio.abc.Stream) -> None:
        """Reader, writer and heartbeat of one connection; returns when it is lost."""
        self._stream = stream
        self._out_tx, self._out_rx = trio.open_memory_channel[bytes](math.inf)
        self._writer_done = trio.Event()
        self._lost = trio.Event()
        self._last_rx = self._last_tx = trio.current_time()
        try:
            async with trio.open_nursery() as nursery:
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
        with trio.move_on_after(window):
            if rc.dial is not None:
                got = await self._redial(rc, record, lost, last)
            else:
                got = await self._reaccept(rc, record, lost, last)
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

    async def _redial(
        self, rc: Reconnect, record: Record, lost: KoiKoiError | None, last: list[str]
    ) -> tuple[trio.abc.Stream, Session] | None:
        """The joiner: dial again and again, pausing longer each time (exponential backoff)."""
        assert rc.dial is not None
        t = self.timeouts
        delay = t.backoff_initial
        attempt = 0
        while True:
            attempt += 1
            self._note_reconnecting(attempt, lost, last)
            stream: trio.abc.Stream | None = None
            try:
                with trio.fail_after(t.connect):
                    stream = await rc.dial()
                session = rc.session(record, self._session.role)
                await resume_handshake(stream, session, t.handshake)
                return stream, session
            except ResumeError as exc:  # another player or another match: hopeless
                if stream is not None:
                    await trio.aclose_forcefully(stream)
                self._fail(exc)
                return None
            except (KoiKoiError, OSError, trio.TooSlowError, trio.BrokenResourceError) as exc:
                last.append(
                    _os_reason(exc) if isinstance(exc, OSError) else str(exc) or type(exc).__name__
                )
                if stream is not None:
                    await trio.aclose_forcefully(stream)
            await trio.sleep(delay)
            delay = min(delay * 2, t.backoff_max)

    async def _reaccept(
        self, rc: Reconnect, record: Record, lost: KoiKoiError | None, last: list[str]
    ) -> tuple[trio.abc.Stream, Session] | None:
        """The host: try every incoming connection; the first that resumes wins."""
        assert rc.incoming is not None
        won: list[tuple[trio.abc.Stream, Session]] = []
        attempt = 1
        self._note_reconnecting(attempt, lost)
        rc.wanted = True
        try:
            async with trio.open_nursery() as nursery:

                async def candidate(stream: trio.abc.Stream) -> None:
                    session = rc.session(record, self._session.role)
                    try:
                        await resume_handshake(stream, session, self.timeouts.handshake)
                    except (KoiKoiError, OSError, trio.TooSlowError, trio.BrokenResourceError) as e:
                        await trio.aclose_forcefully(stream)
                        last.append(str(e) or type(e).__name__)
                        self._notify(
                            {"event": "warning", "text": f"refused a reconnection: {last[-1]}"}
                        )
                        return
                    except BaseException:
                        await trio.aclose_forcefully(stream)
                        raise
                    if won:
                        await trio.aclose_forcefully(stream)
                        return
                    won.append((stream, session))
                    nursery.cancel_scope.cancel()

                async for stream in rc.incoming:
                    if attempt > 1 or won:
                        self._note_reconnecting(attempt, lost)
                    attempt += 1
                    nursery.start_soon(candidate, stream)
        finally:
            rc.wanted = False
            _close_queued(rc.incoming)
        return won[0] if won else None

    # ------------------------------------------------------------------ handshake
    def _limit(self, step: WaitingFor) -> tuple[float, KoiKoiError]:
        t = self.timeouts
        if step is WaitingFor.REVEAL:
            return t.reveal, RevealTimeoutError(
                f"the host committed to its random value but did not reveal it within "
                f"{t.reveal:g}s: the host forfeits the match"
            )
        if step in (WaitingFor.LOCAL_RULES_DECISION, WaitingFor.PEER_RULES_DECISION):
            who = "you" if step is WaitingFor.LOCAL_RULES_DECISION else "the other player"
            return t.rules_decision, PeerTimeoutError(
                f"{who} did not accept or decline the rules within {t.rules_decision:g}s"
            )
        what = step.value.replace("_", " ")
        return t.handshake, PeerTimeoutError(
            f"timed out after {t.handshake:g}s waiting for the {what} (handshake step)"
        )

    async def _handshake(self) -> None:
        """Run until the match starts; each step under its own ``fail_after``."""
        s = self._session
        while not self._started.is_set():
            if self.error is not None:
                raise self.error
            if self._stopped.is_set():
                raise TransportError("the connection closed during the handshake")
            step = s.waiting_for
            limit, error = self._limit(step)
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
    pending: Sequence[SessionEvent] = (),
) -> AsyncIterator[NetworkLink]:
    """Run ``session`` over ``stream``; yields the link once the match has started.

    ``pending`` are events already pulled from ``session`` (by the dialer,
    which runs the first steps of the handshake itself): handled first.

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
        notify=notify or _nop,
        decide_rules=decide_rules or _accept_decision,
        known_peers=known_peers,
        reconnect=reconnect,
        pending=pending,
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
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        if link.error is None:
            raise TransportError("the connection to the other player broke") from None
    finally:
        link._save_record()
        with trio.move_on_after(1) as cs:
            cs.shield = True
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                if link._stream is not None:
                    await link._stream.aclose()
    if link.error is not None:
        raise link.error


def _close_queued(incoming: trio.MemoryReceiveChannel[trio.abc.Stream]) -> None:
    """Connections queued while we did not need one: dropped (closed without a word)."""
    while True:
        try:
            stream = incoming.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
            return
        with suppress(Exception):
            if isinstance(stream, trio.SocketStream):
                stream.socket.close()


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out


# ---------------------------------------------------------------------- TCP
async def _listen(port: int, bind: str | None) -> list[trio.SocketListener]:
    try:
        listeners = await trio.open_tcp_listeners(port, host=bind or None)
    except OSError as exc:
        where = f"{bind or 'all addresses'} port {port}"
        message = f"cannot listen on {where}: {exc.strerror or exc}"
        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
            raise ListenAddressError(message) from None  # bad input, not a busy port
        raise ConnectError(message) from None
    first = listeners[0].socket.getsockname()[1]
    keep = [ln for ln in listeners if ln.socket.getsockname()[1] == first]
    for ln in listeners:
        if ln not in keep:
            await ln.aclose()
    return keep


REFUSE_REASON: Final = "the host is playing a match with someone else"
#: connections a host holds at once while it still needs one (more are refused)
MAX_PENDING: Final = 16


async def _refuse(stream: trio.SocketStream, reason: str = REFUSE_REASON) -> None:
    """One plaintext ``refuse`` frame, then close (after the peer read it, if it does)."""
    frame = wire.encode_frame(wire.encode_message(wire.RefuseMsg(reason=reason)))
    with (
        trio.move_on_after(5),
        suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
    ):
        await stream.send_all(frame)
        await stream.send_eof()
        # drain what the peer sent (its hello) so that closing does not reset the
        # connection before it read the refusal
        while await stream.receive_some(RECEIVE_SIZE):
            pass
    await trio.aclose_forcefully(stream)


async def _serve(
    listeners: list[trio.SocketListener],
    incoming: trio.MemorySendChannel[trio.abc.Stream],
    rc: Reconnect,
) -> None:
    """Accept for the whole match: hand connections on while one is wanted, refuse the rest."""
    async with trio.open_nursery() as nursery:

        async def accept_loop(listener: trio.SocketListener) -> None:
            while True:
                try:
                    stream = await listener.accept()
                except OSError:  # out of file descriptors and the like: try again soon
                    await trio.sleep(0.5)
                    continue
                if rc.wanted and incoming.statistics().current_buffer_used < MAX_PENDING:
                    incoming.send_nowait(stream)
                else:
                    nursery.start_soon(_refuse, stream)

        for ln in listeners:
            nursery.start_soon(accept_loop, ln)


def _entropy() -> bytes:
    return os.urandom(64)


def _peer_address(stream: trio.abc.Stream) -> tuple[str, int]:
    if isinstance(stream, trio.SocketStream):
        peer = stream.socket.getpeername()
        return str(peer[0]), int(peer[1])
    return "?", 0


@asynccontextmanager
async def _hosting(
    listeners: list[trio.SocketListener], rc: Reconnect
) -> AsyncIterator[trio.MemoryReceiveChannel[trio.abc.Stream]]:
    """The listeners' accept loops run (in the background) for the whole block."""
    tx, rx = trio.open_memory_channel[trio.abc.Stream](math.inf)
    rc.incoming = rx
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_serve, listeners, tx, rc)
            try:
                yield rx
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise
    finally:
        _close_queued(rx)
        for ln in listeners:
            with trio.move_on_after(1) as cs:
                cs.shield = True
                await ln.aclose()


@asynccontextmanager
async def open_host(
    *,
    identity: Ed25519PrivateKey,
    name: str,
    rules: RuleSet,
    port: int = DEFAULT_PORT,
    bind: str | None = None,
    advertise: str | None = None,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
    accept_timeout: float | None = None,
    port_mapping: bool = True,
    announce_as: Announcement | None = None,
) -> AsyncIterator[NetworkLink]:
    """Listen, announce the invite (a ``listening`` note), accept one player, play.

    ``port=0`` picks a free port; the note says which.  Before the invite, the
    router is asked to open the port (``port_mapping``, bounded: see
    :mod:`~p2pkoikoi.transport.portmap`); a ``reachability`` note follows the
    ``listening`` one, and the mapping is removed when the block ends.  The
    invite lists every candidate address (:mod:`~p2pkoikoi.transport.interfaces`).
    With ``announce_as`` the waiting host is announced on the LAN by multicast
    DNS until the match starts (:mod:`~p2pkoikoi.transport.discovery`).

    The host listens for the whole match: a connection that fails before the
    peer proved it holds the invite (garbage, a wrong secret) is dropped with a
    ``warning`` note and the host waits for the next; once a match is on, other
    connections get a one-line ``refuse``; after a drop the same opponent may
    resume.
    """
    notify = notify or _nop
    listeners = await _listen(port, bind)
    actual = int(listeners[0].socket.getsockname()[1])
    secret = os.urandom(SECRET_BYTES)
    try:
        async with open_reachability(
            actual, bind=bind, advertise=advertise, port_mapping=port_mapping
        ) as (reach, candidates, waited):
            invite = encode_invite([(c.address, c.port) for c in candidates], secret)
            notify(
                {
                    "event": "listening",
                    "invite": invite,
                    "port": actual,
                    "addresses": [str(c) for c in candidates],
                }
            )
            notify({**reach.to_event(), "waited": round(waited, 3)})
            async with _accepting(
                listeners,
                identity=identity,
                name=name,
                rules=rules,
                secret=secret,
                sidecar={"role": "host", "invite": invite, "port": actual, "bind": bind},
                timeouts=timeouts,
                record_path=record_path,
                notify=notify,
                known_peers=known_peers,
                accept_timeout=accept_timeout,
                announcement=(announce_as, actual, [c.address for c in candidates]),
            ) as link:
                yield link
    finally:
        for ln in listeners:  # closed already unless the mapping or the invite failed
            with trio.move_on_after(1) as cs:
                cs.shield = True
                await ln.aclose()


@dataclass(frozen=True)
class Announcement:
    """What a waiting host tells its LAN (protocol/discovery.md): no secret."""

    name: str
    rules: str
    number: int


@asynccontextmanager
async def _accepting(
    listeners: list[trio.SocketListener],
    *,
    identity: Ed25519PrivateKey,
    name: str,
    rules: RuleSet,
    secret: bytes,
    sidecar: dict[str, Any],
    timeouts: Timeouts | None,
    record_path: Path | None,
    notify: Notify,
    known_peers: KnownPeers | None,
    accept_timeout: float | None,
    announcement: tuple[Announcement | None, int, list[str]],
) -> AsyncIterator[NetworkLink]:
    """Take connections until one becomes a match (see :func:`open_host`)."""
    rc = Reconnect(identity=identity, secret=secret, sidecar=sidecar, wanted=True)
    limit = math.inf if accept_timeout is None else accept_timeout
    async with _hosting(listeners, rc) as incoming, contextlib.AsyncExitStack() as stack:
        lan = contextlib.AsyncExitStack()
        await stack.enter_async_context(lan)
        ad, port, addresses = announcement
        if ad is not None:
            await lan.enter_async_context(
                announce(
                    name=ad.name, rules=ad.rules, number=ad.number, port=port, addresses=addresses
                )
            )
        link: NetworkLink | None = None
        deadline = trio.current_time() + limit
        while link is None:
            got: trio.abc.Stream | None = None
            with trio.move_on_at(deadline):
                got = await incoming.receive()
            if got is None:
                break
            stream = got
            address, peer_port = _peer_address(stream)
            notify({"event": "connected", "address": address, "port": peer_port})
            session = Session(
                Role.HOST,
                identity_key=identity,
                invite_secret=secret,
                name=name,
                entropy=_entropy(),
                rules=rules,
            )
            cm = open_link(
                stream,
                session,
                timeouts=timeouts,
                record_path=record_path,
                notify=notify,
                known_peers=known_peers,
                reconnect=rc,
            )
            try:
                link = await stack.enter_async_context(cm)
            except KoiKoiError as exc:
                if session.peer_key is not None or isinstance(
                    exc, VersionMismatchError | RulesMismatchError
                ):
                    raise
                # not our friend (no invite secret, garbage, silence): keep waiting
                notify(
                    {
                        "event": "warning",
                        "text": f"dropped a connection from {address}: {exc}",
                    }
                )
        if link is None:
            raise PeerTimeoutError(f"nobody joined within {limit:g}s")
        await lan.aclose()  # the match started: no longer waiting on this network
        rc.wanted = False
        _close_queued(incoming)
        yield link


def _os_reason(exc: OSError) -> str:
    """The reason an OS error gives, looking inside trio's "all attempts to
    connect ... failed", whose cause holds each address's own error."""
    if exc.strerror:
        return exc.strerror
    cause = exc.__cause__
    inner = list(cause.exceptions) if isinstance(cause, BaseExceptionGroup) else [cause]
    reasons = []
    for err in inner:
        if isinstance(err, OSError) and (err.errno or err.strerror):
            reason = os.strerror(err.errno) if err.errno else str(err.strerror)
            if reason not in reasons:
                reasons.append(reason)
    return "; ".join(reasons) or str(exc)


@asynccontextmanager
async def open_join(
    invite: str | Invite,
    *,
    identity: Ed25519PrivateKey,
    name: str,
    expected_rules: RuleSet | None = None,
    decide_rules: DecideRules | None = None,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
) -> AsyncIterator[NetworkLink]:
    """Connect to the host named by ``invite`` and play.

    Every address of the invite is tried, Happy Eyeballs style
    (:mod:`~p2pkoikoi.transport.dialer`): the first connection whose peer
    completes the authenticated handshake is the match's; one line names each
    address and why it failed when none does.  With ``expected_rules`` the
    session accepts exactly those rules (or fails naming the differences);
    without, ``decide_rules`` is asked (default: accept, after a
    ``rules_proposed`` note).
    """
    inv = decode_invite(invite) if isinstance(invite, str) else invite
    notify = notify or _nop
    t = timeouts or Timeouts()
    candidates = [Candidate(a.host, a.port, "invite") for a in inv.addresses]
    first = inv.addresses[0]
    notify(
        {
            "event": "connecting",
            "host": first.host,
            "port": first.port,
            "addresses": [str(c) for c in candidates],
        }
    )

    def session() -> Session:
        return Session(
            Role.JOINER,
            identity_key=identity,
            invite_secret=inv.secret,
            name=name,
            entropy=_entropy(),
            expected_rules=expected_rules,
        )

    won = await dial_authenticated(candidates, session, connect=t.connect, handshake=t.handshake)
    # redialing after a drop: the address that worked first, then the others
    order = [won.candidate] + [c for c in candidates if c != won.candidate]

    async def dial() -> trio.abc.Stream:
        return await dial_any(order, connect=t.connect)

    sidecar = {"role": "joiner", "invite": str(inv)}
    rc = Reconnect(identity=identity, secret=inv.secret, dial=dial, sidecar=sidecar)
    async with open_link(
        won.stream,
        won.session,
        timeouts=t,
        record_path=record_path,
        notify=notify,
        decide_rules=decide_rules,
        known_peers=known_peers,
        reconnect=rc,
        pending=won.pending,
    ) as link:
        yield link


def read_sidecar(record_path: Path) -> dict[str, Any]:
    """The resume file beside ``record_path``; :class:`ConfigError` naming what is wrong."""
    path = sidecar_path(record_path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path} is missing: it holds the secrets to resume, written when the match "
            "started and deleted when it ended"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if (
        not isinstance(obj, dict)
        or obj.get("format") != SIDECAR_FORMAT
        or obj.get("role") not in ("host", "joiner")
        or not isinstance(obj.get("invite"), str)
    ):
        raise ConfigError(f"{path} is not a p2pkoikoi resume file")
    port = obj.get("port", 0)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"{path}: port must be a whole number 0..65535, not {port!r}")
    if not isinstance(obj.get("bind", ""), str | None):
        raise ConfigError(f"{path}: bind must be an address, not {obj['bind']!r}")
    return obj


@asynccontextmanager
async def open_resume(
    record_path: Path,
    record: Record,
    *,
    identity: Ed25519PrivateKey,
    timeouts: Timeouts | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
) -> AsyncIterator[NetworkLink]:
    """Continue the match of ``record`` after a crash (``p2pkoikoi resume``).

    The resume file beside the record says who we were: a host listens on the
    same port again, a joiner dials the host; the opponent (in its own
    reconnect loop) must come back within ``timeouts.reconnect_window``.
    """
    notify = notify or _nop
    side = read_sidecar(record_path)
    inv = decode_invite(str(side["invite"]))
    role = Role(str(side["role"]))
    session = Session.resume(
        record, role, identity_key=identity, invite_secret=inv.secret, entropy=_entropy()
    )
    rc = Reconnect(identity=identity, secret=inv.secret, sidecar=dict(side))
    rc.sidecar = {k: v for k, v in side.items() if k not in ("format", "version")}
    kw: dict[str, Any] = {
        "timeouts": timeouts,
        "record_path": record_path,
        "notify": notify,
        "known_peers": known_peers,
        "reconnect": rc,
    }
    first = inv.addresses[0]
    if role is Role.JOINER:
        order = [Candidate(a.host, a.port, "invite") for a in inv.addresses]

        async def dial() -> trio.abc.Stream:
            return await dial_any(order, connect=(timeouts or Timeouts()).connect)

        rc.dial = dial
        notify({"event": "connecting", "host": first.host, "port": first.port})
        async with open_link(None, session, **kw) as link:
            yield link
        return
    bind = side.get("bind")
    listeners = await _listen(
        int(side.get("port", first.port)), bind if isinstance(bind, str) else None
    )
    actual = int(listeners[0].socket.getsockname()[1])
    notify({"event": "listening", "invite": side["invite"], "port": actual, "resume": True})
    async with _hosting(listeners, rc), open_link(None, session, **kw) as link:
        yield link
