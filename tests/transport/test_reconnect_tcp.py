"""A real crash over TCP loopback: the joiner (or host) process is ``kill -9``ed mid-match,
restarted with ``p2pkoikoi resume RECORD``, and the match ends as one match.

Every wait is on an output line (``select`` with a deadline), never a sleep.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import procs
import pytest

from p2pkoikoi.session.records.journal import decode_journal, is_journal

LIMIT = 120


def env_for(tmp_path: Path, who: str) -> dict[str, str]:
    """A player whose reconnect backs off briefly (0.1 s, at most 0.5 s)."""
    return procs.env_for(
        tmp_path, who, P2PKOIKOI_BACKOFF_INITIAL="0.1", P2PKOIKOI_BACKOFF_MAX="0.5"
    )


def spawn(tmp_path: Path, who: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "p2pkoikoi", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env_for(tmp_path, who),
    )


class Lines:
    """JSON lines from a pipe, read with ``os.read`` so ``select`` sees every byte
    (a buffered ``readline`` would hide lines that ``select`` then waits for)."""

    def __init__(self, stream: IO[str]) -> None:
        self.fd = stream.fileno()
        self.buf = b""
        self.seen: list[dict[str, Any]] = []

    def until(self, want: Callable[[dict[str, Any]], bool], deadline: float) -> dict[str, Any]:
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if not line.strip():
                    continue
                obj: dict[str, Any] = json.loads(line)
                self.seen.append(obj)
                if want(obj):
                    return obj
            ready, _, _ = select.select([self.fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                pytest.fail(f"timed out; last lines: {self.seen[-3:]}")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                pytest.fail(f"the process ended early; last lines: {self.seen[-3:]}")
            self.buf += chunk

    def rest(self, text: bytes) -> list[dict[str, Any]]:
        data = self.buf + text
        return [json.loads(x) for x in data.splitlines() if x.strip()]


@pytest.mark.parametrize(
    ("who", "cut", "deal"),
    [
        ("joiner", False, "open"),
        ("host", False, "open"),
        ("joiner", True, "open"),
        ("host", True, "open"),
        ("joiner", False, "hidden"),
        ("host", True, "hidden"),
    ],
)
def test_killed_mid_match_resumes_from_its_record(
    tmp_path: Path, who: str, cut: bool, deal: str
) -> None:
    """``cut``: the victim's journal also loses the middle of its second-last entry
    onwards (a power failure before the disk had it): the survivor re-sends it.
    ``deal``: with the hidden deal the victim also needs its deal secret (.resume file)."""
    hrec, jrec = tmp_path / "host.koikoi", tmp_path / "joiner.koikoi"
    common = ("--headless", "--bot", "random", "--reconnect-window", "60")
    host = spawn(
        tmp_path, "host", "host", *common, "--port", "0", "--bind", "127.0.0.1",
        "--rounds", "2", "--name", "Alice", "--record", str(hrec), "--set", f"deal={deal}",
    )  # fmt: skip
    procs = [host]
    try:
        deadline = time.monotonic() + LIMIT
        assert host.stdout is not None
        hl = Lines(host.stdout)
        first = hl.until(lambda o: o["event"] == "listening", deadline)
        joiner = spawn(
            tmp_path, "joiner", "join", first["invite"], *common, "--name", "Bob",
            "--record", str(jrec),
        )  # fmt: skip
        procs.append(joiner)
        assert joiner.stdout is not None
        jl = Lines(joiner.stdout)
        count = [0]

        def nth_action(obj: dict[str, Any]) -> bool:
            count[0] += "by" in obj
            return count[0] >= 12

        jl.until(nth_action, deadline)
        # the victim dies (SIGKILL: no goodbye, no flush, no cleanup); the survivor
        # notices and waits (host) or redials (joiner)
        victim, survivor = (joiner, host) if who == "joiner" else (host, joiner)
        vrec, vlines, slines = (jrec, jl, hl) if who == "joiner" else (hrec, hl, jl)
        victim.kill()
        victim.wait(LIMIT)
        data = vrec.read_bytes()
        assert is_journal(data)  # mid-match the record is a journal
        read = decode_journal(data)
        assert read.discarded == 0 and read.record.actions
        if cut:
            ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
            vrec.write_bytes(data[: (ends[-3] + ends[-2]) // 2])
            assert len(decode_journal(vrec.read_bytes()).record.actions) < len(read.record.actions)
        side = vrec.with_name(vrec.name + ".resume")
        assert side.exists() and (side.stat().st_mode & 0o777) == 0o600
        assert "secret" not in vrec.read_text() and first["invite"] not in vrec.read_text()
        if deal == "hidden":  # the deal secret is in the .resume file only, never the record
            hidden = json.loads(side.read_text())["hidden_secret"]
            assert len(hidden) == 64 and hidden not in vrec.read_text()
        lost = slines.until(lambda o: o["event"] == "reconnecting", deadline)
        assert lost["attempt"] == 1 and "reconnecting" in lost["text"]

        again = spawn(tmp_path, who, "resume", str(vrec), "--headless", "--bot", "random")
        procs.append(again)
        try:
            out, err = again.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            again.kill()
            survivor.kill()
            pytest.fail(f"the resumed {who} hung; other: {survivor.communicate()[1]}")
        assert again.returncode == 0, err
        s_out, s_err = survivor.communicate(timeout=LIMIT)
        assert survivor.returncode == 0, s_err
        s_lines = slines.seen + slines.rest(s_out.encode())
        r_lines = [json.loads(x) for x in out.splitlines() if x.strip()]
        assert any(o["event"] == "reconnected" for o in s_lines)
        assert any(o["event"] == "reconnected" for o in r_lines)
        assert s_lines[-1]["event"] == r_lines[-1]["event"] == "match_over"
        assert s_lines[-1]["final_hash"] == r_lines[-1]["final_hash"]
        assert s_lines[-1]["transcript_hash"] == r_lines[-1]["transcript_hash"]
        for path in (hrec, jrec):
            check = subprocess.run(
                [sys.executable, "-m", "p2pkoikoi", "verify", str(path)],
                capture_output=True, text=True, timeout=LIMIT,
            )  # fmt: skip
            assert check.returncode == 0, check.stdout
            assert not path.with_name(path.name + ".resume").exists()
        # the match is over: each journal was compacted into the record
        hr, jr = json.loads(hrec.read_text()), json.loads(jrec.read_text())
        assert hr["actions"] == jr["actions"]
        assert [a["seq"] for a in hr["actions"]] == list(range(1, len(hr["actions"]) + 1))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
