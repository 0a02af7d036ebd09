"""``p2pkoikoi join`` with no code asks for it, with Tab completion of the code's
words as ``wormhole receive`` does (issue 25): a real process in a pty."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pexpect")
from procs import start_host  # noqa: E402
from pty_terminal import CTRL_C, ENTER, Terminal  # noqa: E402

from p2pkoikoi.session.codes.wordlist import EVEN, ODD  # noqa: E402

TAB = "\t"


def test_join_without_a_code_asks_and_tab_completes_each_word(tmp_path: Path) -> None:
    t = Terminal(["join"], tmp_path)
    try:
        t.wait_for("Code or invite")
        t.send("7-crossov" + TAB)  # a first word: from the three-syllable list
        t.wait_for("7-crossover-")
        assert "crossover" in ODD
        t.send("clockw" + TAB)  # a second word: from the two-syllable list
        t.wait_for("7-crossover-clockwork")
        assert "clockwork" in EVEN
        t.send(CTRL_C)
        assert t.finish() == 130
    finally:
        t.close()


def test_enter_takes_only_what_join_can_use(tmp_path: Path) -> None:
    t = Terminal(["join"], tmp_path)
    try:
        t.wait_for("Code or invite")
        t.send("7-crossover-clockwrok" + ENTER)
        t.wait_for("is not a code word (did you mean 'clockwork'?)")
        assert "Code or invite" in t.text()  # still asking
        t.send(CTRL_C)
        assert t.finish() == 130
    finally:
        t.close()


def test_the_invite_typed_at_the_prompt_joins_the_host(tmp_path: Path) -> None:
    host, first = start_host(tmp_path, "--bind", "127.0.0.1")
    t = Terminal(["join", "--name", "Bob"], tmp_path)
    try:
        t.wait_for("Code or invite")
        t.send(str(first["invite"]) + ENTER)
        t.wait_for("Play by these rules?")
        t.send("d")
        assert t.finish() != 0
        assert b"you declined the host's rules" in t.raw
    finally:
        t.close()
        host.kill()
        host.communicate()


def test_join_without_a_code_or_a_terminal_is_one_line_exit_2() -> None:
    for argv in (["join"], ["join", "--headless"]):
        proc = subprocess.run(
            [sys.executable, "-m", "p2pkoikoi", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "join needs the code or the invite" in proc.stderr or "--headless needs" in (
            proc.stderr
        )
