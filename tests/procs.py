"""Running the real program from a test: its command line, a player's environment, one run.

Every test that starts ``p2pkoikoi`` as a process goes through these, so that a player's
files (identity, known peers, records) always land in the test's own folder and a
run that hangs fails within its bound instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def command(*args: str) -> list[str]:
    """The program's command line with ``args``: this interpreter, ``-m p2pkoikoi``."""
    return [sys.executable, "-m", "p2pkoikoi", *args]


def env_for(tmp_path: Path, who: str, **extra: str) -> dict[str, str]:
    """The environment of player ``who``: their config and data folders under
    ``tmp_path`` (so two players on one machine keep apart identities), unbuffered
    output, and ``extra`` variables on top."""
    env = dict(os.environ)
    env["P2PKOIKOI_CONFIG_DIR"] = str(tmp_path / f"cfg-{who}")
    env["XDG_DATA_HOME"] = str(tmp_path / f"data-{who}")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def run_cli(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """One run of the program to its end, its output captured, with no input."""
    return subprocess.run(
        command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


# ------------------------------------------------ a headless host and joiner on loopback


LIMIT = 120  # seconds for any one process: generous for a loaded 2-core machine


cli = command  # the name the headless tests use


def start_host(
    tmp_path: Path, *extra: str, command: Callable[..., list[str]] = cli
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    proc = subprocess.Popen(
        command("host", "--headless", "--bot", "random", "--port", "0", "--name", "Alice", *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env_for(tmp_path, "host"),
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], LIMIT)
    if not ready:
        proc.kill()
        pytest.fail("the host printed no first line")
    line = proc.stdout.readline()
    if not line:
        _, err = proc.communicate(timeout=LIMIT)
        pytest.fail(f"the host stopped: {err}")
    first = json.loads(line)
    assert first["event"] == "listening" and first["port"] > 0
    # the next line follows at once: read it here, as the buffer may already hold it
    # (communicate() later reads the pipe itself, not this buffer)
    first["reachability"] = json.loads(proc.stdout.readline())
    assert first["reachability"]["event"] == "reachability"
    return proc, first


def run_join(
    tmp_path: Path, invite: str, *extra: str, command: Callable[..., list[str]] = cli
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command("join", invite, "--headless", "--bot", "random", "--name", "Bob", *extra),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "joiner"),
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli("verify", str(path)), capture_output=True, text=True, timeout=LIMIT)
