"""Interactive commands without a terminal: one line and exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "argv,advice",
    [
        ([], "for scripts use a command: p2pkoikoi host --headless, join --headless"),
        (["practice"], "practice has no --headless: for scripts use p2pkoikoi selfplay"),
        (["host", "--port", "0", "--bind", "127.0.0.1"], "for scripts use --headless"),
    ],
)
def test_table_without_a_terminal_says_so(argv: list[str], advice: str, tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={"P2PKOIKOI_CONFIG_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "p2pkoikoi: the table needs a terminal (stdin and stdout); " + advice
    )
    assert proc.stderr.count("\n") == 1
