"""A real ``p2pkoikoi`` process in a pseudo-terminal, its screen read with pyte.

The tests drive the program as a person does: keys in, the rendered screen out
(``pexpect`` runs the process on a pty; ``pyte`` is a VT100 emulator that turns
the bytes it draws into rows of characters).  Waiting is always for text on the
screen with a deadline -- never a sleep.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the test extra")
pyte = pytest.importorskip("pyte", reason="pyte is in the test extra")

from p2pkoikoi.ui import sync_output  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 90.0

#: the marks around each frame, as the program writes them
BEGIN = sync_output.BEGIN.encode()
END = sync_output.END.encode()

ENTER = "\r"
ESC = "\x1b"
CTRL_C = "\x03"
PGDN = "\x1b[6~"


class Terminal:
    """One ``p2pkoikoi`` process on a pty of ``columns`` x ``rows``."""

    def __init__(
        self,
        argv: Iterable[str],
        home: Path,
        *,
        columns: int = 80,
        rows: int = 24,
        prefix: Iterable[str] = (),
        env_extra: dict[str, str] | None = None,
    ) -> None:
        """``prefix``: a command that runs the program (``ip netns exec NS`` in a lab,
        ``unshare -n ...``), given ``python -m p2pkoikoi ARGV`` as its last arguments."""
        env = dict(os.environ)
        env.update(
            PYTHONPATH=str(ROOT),
            HOME=str(home),
            P2PKOIKOI_CONFIG_DIR=str(home / "config"),
            XDG_DATA_HOME=str(home / "data"),
            TERM="xterm",
            LANG="C.UTF-8",
            LC_ALL="C.UTF-8",
        )
        env.pop("NO_COLOR", None)
        env.update(env_extra or {})
        self.screen = pyte.Screen(columns, rows)
        self.screen.write_process_input = self._answer  # cursor-position reports
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        self._held = b""  # the part of a frame read before its end mark
        self.argv = list(argv)
        command = [*prefix, sys.executable, "-m", "p2pkoikoi", *self.argv]
        self.child = pexpect.spawn(
            command[0],
            command[1:],
            env=env,
            dimensions=(rows, columns),
            cwd=str(home),
        )

    def _answer(self, data: str) -> None:
        if self.child.isalive():
            self.child.send(data)

    # ------------------------------------------------------------------ reading
    def pump(self, timeout: float = 0.2) -> bool:
        """Feed what the program drew within ``timeout`` to the screen; False at EOF.

        Only whole frames reach the screen: the table brackets each frame with
        "synchronized update" marks (p2pkoikoi/ui/sync_output.py), and a frame read
        in part (a pty passes about 4 KiB at a time) waits here for its end.  A screen
        that is half the old page would show a prompt already answered."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            self.stream.feed(self._held)
            self._held = b""
            return False
        self.raw += data
        held = self._held + data
        cut = len(held)
        begin = held.rfind(BEGIN)
        if begin >= 0 and held.find(END, begin) < 0:
            cut = begin  # a frame still being drawn
        else:  # the start of a mark split between two reads
            for n in range(len(BEGIN) - 1, 0, -1):
                if held.endswith(BEGIN[:n]):
                    cut = len(held) - n
                    break
        self.stream.feed(held[:cut])
        self._held = held[cut:]
        return True

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, what: str | Callable[[str], bool], deadline: float = DEADLINE) -> str:
        """The screen once it shows ``what`` (text, or a predicate on the screen)."""
        test = (lambda s: what in s) if isinstance(what, str) else what
        end = time.monotonic() + deadline
        while True:
            screen = self.text()
            if test(screen):
                return screen
            if time.monotonic() > end:
                raise AssertionError(
                    f"{self.argv[0]}: timed out waiting for {what!r}; screen:\n{screen}"
                )
            if not self.pump():
                screen = self.text()
                if test(screen):
                    return screen
                raise AssertionError(
                    f"{self.argv[0]}: exited waiting for {what!r}; screen:\n{screen}\n"
                    f"output: {self.raw[-2000:]!r}"
                )

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def resize(self, columns: int, rows: int) -> None:
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def finish(self, deadline: float = DEADLINE) -> int:
        """Read to the end; the exit status."""
        end = time.monotonic() + deadline
        while self.pump():
            if time.monotonic() > end:
                raise AssertionError(f"{self.argv[0]} did not exit; screen:\n{self.text()}")
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


#: what the table shows when it waits for this player to decide something
DECIDING = (
    "Your turn: choose a card",
    "Two cards match",
    "choose the card it takes",
    "koi-koi or stop?",
    "Before looking: swap",
)


def decision_line(screen: str) -> str | None:
    """The line asking this player to decide, if the screen shows one."""
    return next((line for line in screen.splitlines() if any(d in line for d in DECIDING)), None)


#: a round page's own line, and its footer's form (seen when a long round page scrolls its
#: own line out of view)
CONTINUE = "Press Enter to continue"
CONTINUE_FOOTER = "Enter: continue"


def continue_line(screen: str) -> str | None:
    """The line saying Enter goes on from this page, if the screen shows one."""
    lines = screen.splitlines()
    return next((ln for ln in lines if CONTINUE in ln), None) or next(
        (ln for ln in lines if CONTINUE_FOOTER in ln), None
    )


def _prompt(line: str) -> str:
    """A prompt line without its turn countdown ("  9:59 left" ticks while it waits)."""
    return re.sub(r"\s+\d+:\d\d left\s*$", "", line).rstrip()


def answer(term: Terminal, screen: str, deadline: float = DEADLINE) -> None:
    """Press Enter for the decision (or page) on ``screen``, then wait until the table
    has taken it: a screen read mid-frame may still show an old prompt, and a second
    Enter would land on the next page.

    The table has taken it when every prompt line of ``screen`` is gone: the decision
    line, and on a page both its own line and its footer (a status line arriving in
    the meantime, such as a rematch offer, can push the page's line out of view while
    the page still waits for Enter).  Lines are compared without the turn countdown,
    whose tick changes the line without the key being taken."""
    lines = screen.splitlines()
    prompts = {_prompt(ln) for ln in lines if ln == decision_line(screen)}
    prompts.update(_prompt(ln) for ln in lines if CONTINUE in ln or CONTINUE_FOOTER in ln)
    if not prompts:
        raise AssertionError(f"nothing to press Enter for on the screen:\n{screen}")
    term.send(ENTER)
    term.wait_for(lambda s: not prompts.intersection(map(_prompt, s.splitlines())), deadline)


def play_until(term: Terminal, done: Callable[[str], bool], deadline: float = DEADLINE) -> str:
    """Press Enter at every decision (first card, first target, Stop) until ``done``."""
    end = time.monotonic() + deadline
    while True:
        screen = term.wait_for(
            lambda s: done(s) or decision_line(s) is not None, end - time.monotonic()
        )
        if done(screen):
            return screen
        answer(term, screen, max(1.0, end - time.monotonic()))


def command_from_screen(screen: str, start: str) -> str:
    """The command that begins with ``start``, its folded lines joined as a shell would
    join backslash-newline continuations."""
    lines = screen.splitlines()
    for i, line in enumerate(lines):
        at = line.find(start)
        if at < 0:
            continue
        text = line[at:]
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1] + lines[i]
        return text
    raise AssertionError(f"no {start!r} on the screen:\n{screen}")


def spawn(terms: list[Terminal], home: Path, *argv: str, **kw: int) -> Terminal:
    """A program in a terminal, kept in ``terms`` (the fixture of that name closes it)."""
    home.mkdir(parents=True, exist_ok=True)
    t = Terminal(argv, home, **kw)
    terms.append(t)
    return t


def host_invite(t: Terminal) -> str:
    """The invite as the host's screen shows it, once the whole command is drawn (a
    screen read mid-frame can show the first folded lines of it and not the rest)."""
    from p2pkoikoi.engine import KoiKoiError
    from p2pkoikoi.session import decode_invite

    def drawn(screen: str) -> bool:
        if "p2pkoikoi join " not in screen:
            return False
        try:
            decode_invite(command_from_screen(screen, "p2pkoikoi join ").split(" ", 2)[2])
        except (KoiKoiError, IndexError):
            return False
        return True

    screen = t.wait_for(drawn)
    assert all(len(line) <= t.screen.columns for line in screen.splitlines())
    command = command_from_screen(screen, "p2pkoikoi join ")
    return command.split(" ", 2)[2]
