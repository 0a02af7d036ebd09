"""``cmd:COMMAND`` bots: an external program speaking the engine protocol over pipes.

Why a reader thread: a pipe read has no timeout, and an engine that hangs
must never hang the match.  A daemon thread reads the engine's stdout into a
queue and the bot waits on the queue with a deadline; on a timeout, a crash,
garbage or an illegal action the process is killed and
:class:`EngineFailure` says what went wrong and quotes what the engine sent.
The caller (selfplay, a headless host) counts the match as forfeited by that
side.  The command is split with :func:`shlex.split` and run without a shell.
"""

from __future__ import annotations

import contextlib
import queue
import shlex
import subprocess
import threading
from typing import IO, NoReturn

from p2pkoikoi.bots.protocol import (
    LINE_MAX,
    PROTOCOL,
    Message,
    ProtocolError,
    action_from_message,
    encode_decide,
    encode_hello,
    encode_quit,
    parse_engine_message,
)
from p2pkoikoi.engine import Action, InputError, KoiKoiError, PlayerView

DEFAULT_TIMEOUT = 10.0


class EngineFailure(KoiKoiError):
    """An external engine that was too slow, crashed, or said something wrong."""


def _pump(stream: IO[str], out: queue.Queue[str | None]) -> None:
    try:
        while True:
            line = stream.readline(LINE_MAX + 1)
            if not line:
                break
            out.put(line)
    except (OSError, ValueError):
        pass
    out.put(None)


class EngineBot:
    """A bot that asks an external program; started lazily at its first decision."""

    def __init__(self, command: str, seed: int = 0, timeout: float = DEFAULT_TIMEOUT) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise InputError(f"bad engine command {command!r}: {exc}") from None
        if not self.argv:
            raise InputError("cmd: needs a command, as in cmd:python examples/simple_engine.py")
        self.command = command
        self.seed = seed
        self.timeout = timeout
        self.name = f"cmd:{command}"
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._seat: int | None = None

    # ------------------------------------------------------------------ process
    def _start(self, view: PlayerView) -> None:
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            raise EngineFailure(
                f"engine {self.argv[0]!r} did not start: {exc.strerror or exc}"
            ) from None
        assert self._proc.stdout is not None
        threading.Thread(target=_pump, args=(self._proc.stdout, self._lines), daemon=True).start()
        self._seat = view.seat
        self._send(encode_hello(view.seat, view.rules))
        msg = self._receive("the handshake")
        if msg.type != "ready":
            self._fail(f"answered the handshake with {msg.type!r} instead of ready")
        name = msg.data["name"].strip()
        if name:
            self.name = name[:40]

    def _send(self, line: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._fail("closed its input (crashed?)")

    def _receive(self, waiting_for: str) -> Message:
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self._fail(f"sent nothing within {self.timeout:g} s while waiting for {waiting_for}")
        if line is None:
            code = self._proc.poll() if self._proc else None
            if code is None and self._proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = self._proc.wait(timeout=1.0)
            how = f"exited with status {code}" if code is not None else "closed its output"
            self._fail(f"{how} while we waited for {waiting_for}")
        try:
            return parse_engine_message(line)
        except ProtocolError as exc:
            self._fail(str(exc))

    def _fail(self, what: str) -> NoReturn:
        self.close(polite=False)
        raise EngineFailure(f"engine {self.command!r} {what}"[:300])

    # ------------------------------------------------------------------ bot
    def choose(self, view: PlayerView) -> Action:
        if self._proc is None:
            self._start(view)
        elif self._seat != view.seat:
            self._fail("was asked to play both seats")
        self._send(encode_decide(view))
        msg = self._receive("an action")
        if msg.type != "action":
            self._fail(f"answered decide with {msg.type!r} instead of action")
        try:
            return action_from_message(msg, view)
        except ProtocolError as exc:
            self._fail(f"sent an {exc}")

    def close(self, polite: bool = True) -> None:
        """Say quit (when ``polite``) and make sure the process is gone."""
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if polite and proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(encode_quit())
                proc.stdin.flush()
                proc.wait(timeout=1.0)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2.0)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __enter__(self) -> EngineBot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close(polite=False)


__all__ = ["DEFAULT_TIMEOUT", "PROTOCOL", "EngineBot", "EngineFailure"]
