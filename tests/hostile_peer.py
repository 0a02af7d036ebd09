"""A peer that speaks the p2pkoikoi protocol and misbehaves on purpose.

Used by ``tests/transport/test_hostile.py`` against REAL ``p2pkoikoi host --headless``
and ``p2pkoikoi join --headless`` processes over loopback TCP.

* :class:`HonestProcess` runs one headless CLI process, reads its JSON lines
  and stderr in threads, and on exit reports its peak resident memory: the
  kernel's high-water mark of the process's own memory (``VmHWM`` in
  ``/proc/PID/status``, read until it exits).  Not ``ru_maxrss`` from
  ``wait4``: Linux carries a parent's peak into a child across fork and exec,
  so a process started from a large test runner (pytest at ~280 MB late in a
  full run) would report the runner's peak, not its own.
* :class:`HostilePeer` drives a real :class:`~p2pkoikoi.session.Session` over a
  blocking socket (so everything up to the attack is the genuine protocol),
  and can then write anything: raw bytes, frames sealed with the session's own
  key and counter (:meth:`HostilePeer.seal`), replayed frames, and so on.

Nothing here sleeps to wait for something: reads wait on the socket or on a
queue with a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import select
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from procs import command, env_for

from p2pkoikoi.engine import RuleSet
from p2pkoikoi.session import (
    NEED_DATA,
    AcceptRules,
    Event,
    MatchOver,
    Ping,
    Pong,
    Record,
    Role,
    RulesProposed,
    SendAction,
    Session,
    State,
    WaitingFor,
    decode_code,
    decode_invite,
    encode_invite,
    wire,
)

LIMIT = 60.0  # seconds: any one wait in these tests (generous for a loaded 2-core box)


cli = command  # the program's command line (procs.command)


# ---------------------------------------------------------------------- the honest process
@dataclass
class Outcome:
    """How an honest process ended."""

    code: int
    events: list[dict[str, Any]]
    stderr: str
    peak_rss_mb: float  # ru_maxrss of the process (its whole life)
    ended_at: float  # time.monotonic() when it exited

    @property
    def error_line(self) -> str:
        lines = self.stderr.strip().splitlines()
        assert len(lines) == 1, f"expected one stderr line, got: {self.stderr!r}"
        return lines[0]


@dataclass
class HonestProcess:
    """One ``p2pkoikoi host|join --headless`` process."""

    args: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[str] = field(init=False)
    lines: queue.Queue[dict[str, Any] | None] = field(init=False, default_factory=queue.Queue)
    seen: list[dict[str, Any]] = field(init=False, default_factory=list)
    _err: list[str] = field(init=False, default_factory=list)
    _threads: list[threading.Thread] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        self._hwm_kb = 0
        self._threads = [
            threading.Thread(target=self._read_out, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
            threading.Thread(target=self._sample_memory, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.lines.put(json.loads(line))
        self.lines.put(None)

    def _sample_memory(self) -> None:
        """Follow the process's own high-water mark (it only grows) until it exits."""
        path = f"/proc/{self.proc.pid}/status"
        while self.proc.returncode is None:
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self._hwm_kb = max(self._hwm_kb, int(line.split()[1]))
                            break
                    else:
                        return  # a zombie: its memory is gone
            except (OSError, ValueError):
                return
            time.sleep(0.02)  # a sampling period, not a wait for an event

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self._err.append(self.proc.stderr.read())

    def wait_event(self, name: str, timeout: float = LIMIT) -> dict[str, Any]:
        """The next JSON line whose ``event`` is ``name`` (earlier lines are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {name!r} event within {timeout}s; seen {self.seen}")
            try:
                obj = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if obj is None:
                self.lines.put(None)
                raise AssertionError(f"the process ended before {name!r}: {''.join(self._err)}")
            self.seen.append(obj)
            if obj.get("event") == name:
                return obj

    def watch(self, seconds: float) -> None:
        """Collect output lines for ``seconds`` (a scenario's duration, e.g. a link cut)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                obj = self.lines.get(timeout=left)
            except queue.Empty:
                return
            if obj is None:
                self.lines.put(None)
                return
            self.seen.append(obj)

    def wait_exit(self, timeout: float = LIMIT) -> Outcome:
        """Wait for the exit (killing it after ``timeout``); exact peak memory from wait4."""
        pid = self.proc.pid
        fd = os.pidfd_open(pid)
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
        if not ready:
            self.proc.kill()
        _, status, usage = os.wait4(pid, 0)
        ended = time.monotonic()
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        for t in self._threads:
            t.join(LIMIT)
        while True:
            obj = self.lines.get_nowait() if not self.lines.empty() else None
            if obj is None:
                break
            self.seen.append(obj)
        if not ready:
            raise AssertionError(f"the process did not stop within {timeout}s: {self.seen[-3:]}")
        return Outcome(
            code=self.proc.returncode,
            events=list(self.seen),
            stderr="".join(self._err),
            # the sampled mark when there is one (see the module docstring); ru_maxrss
            # is an upper bound that includes the test runner's own peak
            peak_rss_mb=(self._hwm_kb or usage.ru_maxrss) / 1024,
            ended_at=ended,
        )

    def kill(self) -> None:
        if self.proc.poll() is None and self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()


def start_host(tmp_path: Path, record: Path, *extra: str) -> tuple[HonestProcess, str, int]:
    """An honest headless host on 127.0.0.1; returns it, the invite and the port
    (its short code is in ``proc.seen[0]["code"]``)."""
    proc = HonestProcess(
        cli(
            "host",
            "--headless",
            "--bot",
            "random",
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--name",
            "Alice",
            "--record",
            str(record),
            "--set",
            "deal=open",  # this peer speaks the open deal's actions (the default is hidden)
            *extra,
        ),
        env_for(tmp_path, "host"),
    )
    first = proc.wait_event("listening")
    return proc, str(first["invite"]), int(first["port"])


def start_join(tmp_path: Path, invite: str, record: Path, *extra: str) -> HonestProcess:
    return HonestProcess(
        cli(
            "join",
            invite,
            "--headless",
            "--bot",
            "random",
            "--name",
            "Bob",
            "--record",
            str(record),
            *extra,
        ),
        env_for(tmp_path, "joiner"),
    )


# ---------------------------------------------------------------------- the hostile peer
class HostilePeer:
    """A genuine session over a blocking socket, with hooks to misbehave."""

    def __init__(self, sock: socket.socket, session: Session, seed: int = 0) -> None:
        self.sock = sock
        self.session = session
        self.rng = random.Random(seed)
        self.events: list[Event] = []
        self.sent_frames: list[bytes] = []  # every frame we wrote, in order (for replays)
        self.closed_by_peer = False
        self.identity: Ed25519PrivateKey | None = None
        sock.settimeout(LIMIT)

    # ------------------------------------------------------------ construction
    @classmethod
    def join(
        cls, invite: str, *, name: str = "Mallory", seed: int = 0, code: str | None = None
    ) -> HostilePeer:
        """Connect to the honest host named by ``invite`` as its joiner (with ``code``:
        at the invite's address, but proving the short code instead of the invite)."""
        inv = decode_invite(invite)
        addr = inv.addresses[0]
        sock = socket.create_connection((addr.host, addr.port), timeout=LIMIT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        identity = Ed25519PrivateKey.generate()
        session = Session(
            Role.JOINER,
            identity_key=identity,
            invite_secret=None if code is not None else inv.secret,
            code=decode_code(code) if code is not None else None,
            name=name,
            entropy=os.urandom(64),
        )
        peer = cls(sock, session, seed)
        peer.identity = identity
        return peer

    @classmethod
    def resume_join(
        cls,
        invite: str,
        record: Record,
        identity: Ed25519PrivateKey,
        resume_secret: bytes | None,
        *,
        seed: int = 0,
    ) -> HostilePeer:
        """Reconnect to the honest host and resume the match of our ``record``
        (``resume_secret``: the first session's, which both sides derived)."""
        assert resume_secret is not None
        inv = decode_invite(invite)
        addr = inv.addresses[0]
        sock = socket.create_connection((addr.host, addr.port), timeout=LIMIT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        session = Session.resume(
            record,
            Role.JOINER,
            identity_key=identity,
            resume_secret=resume_secret,
            entropy=os.urandom(64),
        )
        peer = cls(sock, session, seed)
        peer.identity = identity
        return peer

    # ------------------------------------------------------------ writing
    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def flush(self) -> None:
        """Write what the genuine session queued (split into frames for replays)."""
        self._write_frames(self.session.data_to_send())

    def _write_frames(self, data: bytes) -> None:
        rest = data
        while rest:
            payload, rest2 = wire.decode_frame(rest)
            assert payload is not None
            self.sent_frames.append(rest[: wire.HEADER + len(payload)])
            rest = rest2
        if data:
            self.send_raw(data)

    def seal(self, msg: wire.Message) -> bytes:
        """A frame carrying ``msg`` under our key and the next nonce (advances the counter)."""
        channel = self.session._send  # test harness: the session's own send channel
        assert channel is not None
        return wire.encode_frame(channel.seal(wire.encode_message(msg)))

    # ------------------------------------------------------------ reading
    def pump_once(self, timeout: float = LIMIT) -> bool:
        """Read once (up to ``timeout``), feed the session, answer; False at end of stream."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        self.session.receive_data(data)
        while True:
            ev = self.session.next_event()
            if ev is NEED_DATA:
                break
            self.events.append(ev)
            if isinstance(ev, RulesProposed):
                self._write_frames(self.session.send(AcceptRules()))
            elif isinstance(ev, Ping):
                self._write_frames(self.session.send(Pong(ev.nonce)))
        self.flush()
        if not data:
            self.closed_by_peer = True
        return bool(data)

    def pump_until(self, done: Callable[[], bool], timeout: float = LIMIT) -> None:
        deadline = time.monotonic() + timeout
        self.flush()
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out in state {self.session.state}")
            if not self.pump_once(left):
                raise AssertionError(f"the peer closed in state {self.session.state}")

    def drain_until_closed(self, timeout: float = LIMIT) -> bytes:
        """Read raw bytes until the other side closes; returns them (no session involved)."""
        deadline = time.monotonic() + timeout
        got = bytearray()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("the honest side did not close the connection")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                return bytes(got)
            if not data:
                return bytes(got)
            got += data

    # ------------------------------------------------------------ playing
    @property
    def our_turn(self) -> bool:
        s = self.session
        # (with the hidden deal the engine may show our seat to act while the table still
        # waits for the other's card move: ask the session whose move it is)
        return s.state is State.PLAY and s.waiting_for is WaitingFor.LOCAL_ACTION

    def play_honestly_until(self, want: Callable[[HostilePeer], bool]) -> None:
        """Play random legal moves; stop at our turn once ``want(self)`` holds."""
        self.pump_until(lambda: self.session.state is State.PLAY)
        while True:
            if self.session.state is not State.PLAY:
                raise AssertionError(f"the match left play ({self.session.state}) first")
            if self.our_turn:
                if want(self):
                    return
                m = self.session.match
                assert m is not None
                self._write_frames(
                    self.session.send(SendAction(self.rng.choice(m.legal_actions())))
                )
                continue
            if not self.pump_once():
                raise AssertionError("the peer closed during play")

    def play_to_end(self) -> None:
        """Play random legal moves until both final signatures are exchanged."""
        self.flush()
        # done at the peer's final signature (its bye may come in the same read)
        while not any(isinstance(e, MatchOver) for e in self.events):
            if self.our_turn:
                m = self.session.match
                assert m is not None
                self._write_frames(
                    self.session.send(SendAction(self.rng.choice(m.legal_actions())))
                )
            elif not self.pump_once():
                raise AssertionError(f"the peer closed in state {self.session.state}")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class HostileHost:
    """A listening socket and its invite: the hostile side as the host."""

    def __init__(self, rules: RuleSet) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(LIMIT)
        self.port = int(self.listener.getsockname()[1])
        self.secret = os.urandom(16)
        self.invite = encode_invite([("127.0.0.1", self.port)], self.secret)
        self.rules = rules

    def accept(self, seed: int = 0) -> HostilePeer:
        sock, _ = self.listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.listener.close()
        session = Session(
            Role.HOST,
            identity_key=Ed25519PrivateKey.generate(),
            invite_secret=self.secret,
            name="Mallory",
            entropy=os.urandom(64),
            rules=self.rules,
        )
        return HostilePeer(sock, session, seed)


# ---------------------------------------------------------------------- the polyglot frame
def polyglot_abort(aead: Any, counter: int = 0, tries: int = 1_000_000) -> bytes:
    """A frame payload that is at once a plaintext msgpack ``abort`` map and a valid
    ChaCha20-Poly1305 ciphertext (with its tag) under ``aead`` and ``counter``'s nonce
    (issue 22, item 1).

    The map is ``{"type": "abort", "v": 2, "reason": R}`` with ``reason`` last, so the
    16-byte tag ends ``R``.  ChaCha20 is a stream cipher: the ciphertext bytes are
    chosen (the map), the plaintext is what they decrypt to, and the reason's chosen
    part is varied until the tag is valid UTF-8 (about 10^4 tries)."""
    from p2pkoikoi.session import channel

    nonce = channel.nonce(counter)
    body = 40  # the chosen (ASCII) part of the reason
    head = (
        b"\x83"
        + b"\xa4type\xa5abort"
        + b"\xa1v"
        + bytes([wire.PROTOCOL_VERSION])
        + b"\xa6reason\xd9"
        + bytes([body + 16])
    )
    n = len(head) + body
    stream = aead.encrypt(nonce, bytes(n), None)[:n]  # the key stream (plaintext 0)
    rng = random.Random(22)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    for _ in range(tries):
        chosen = head + bytes(rng.choice(letters) for _ in range(body))
        plain = bytes(a ^ b for a, b in zip(chosen, stream, strict=True))
        sealed = aead.encrypt(nonce, plain, None)
        assert sealed[:n] == chosen
        try:
            sealed[n:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        msg = wire.decode_message(sealed)
        assert isinstance(msg, wire.AbortMsg)
        return sealed
    raise AssertionError("no polyglot found")
