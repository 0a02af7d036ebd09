"""Reaching a friend behind any NAT: the whole matrix of host profile x joiner profile.

The lab (tests/netlab.py, :class:`~netlab.NatLab`) is a small internet of
homes behind nftables routers (full cone, home, symmetric, carrier NAT in
front of a home NAT, UDP blocked, dual-stack with an IPv6 firewall) and a
real STUN server (coturn, STUN only).  Every pair runs real headless
``p2pkoikoi`` processes inside the namespaces; the joiner's ``answer`` line
is written to the host's stdin as ``{"answer": TEXT}``, as a script would.

* Every pair that can connect plays a whole one-round match: the same final
  hash on both sides, and both records verify.
* Every pair that cannot gets one line, within 20 s of the answer, naming
  whose network blocks direct play and what would help.

One lab serves every pair (pairs run a few at a time).  Run with ``-s`` to
see the matrix with the time from the answer to the handshake.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hostile_peer import env_for
from netlab import HOST_PORTS, PROFILES, LabError, NatLab, why_not_nat

from p2pkoikoi.cli import main as cli_main

LIMIT = 90.0
BLOCKED_WITHIN = 20.0


def connects(host: str, joiner: str) -> bool:
    """What the issue expects: neither side symmetric (double NAT included), or a
    symmetric side against a full cone; nothing through a network without UDP."""
    if "noudp" in (host, joiner):
        return False
    if host == "sym" and joiner == "sym":
        return False
    if "sym" in (host, joiner):
        return "cone" in (host, joiner)
    return True


@dataclass
class Proc:
    args: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[str] = field(init=False)
    lines: queue.Queue[tuple[float, dict[str, Any] | None]] = field(default_factory=queue.Queue)
    seen: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    err: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.proc = subprocess.Popen(
            self.args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.lines.put((time.monotonic(), json.loads(line)))
        self.lines.put((time.monotonic(), None))

    def _err(self) -> None:
        assert self.proc.stderr is not None
        self.err.append(self.proc.stderr.read())

    def next(self, deadline: float) -> tuple[float, dict[str, Any] | None] | None:
        try:
            got = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if got[1] is not None:
            self.seen.append((got[0], got[1]))
        return got

    def write(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def stderr(self) -> str:
        self.stop()
        return "".join(self.err).strip().removeprefix("p2pkoikoi: ")


@dataclass
class Result:
    host: str
    joiner: str
    connected: bool
    answered: bool = False  # the answer was needed (and used)
    seconds: float = 0.0  # from the answer (or the joiner's start) to the handshake/verdict
    text: str = ""
    hashes: tuple[str, str] = ("", "")
    path: str = ""


def play_pair(lab: NatLab, tmp: Path, host: str, joiner: str, port: int) -> Result:
    """One pair: host in the ``host`` profile's home, joiner in the ``joiner`` one's."""
    h_home, j_home = lab.homes[("host", host)], lab.homes[("joiner", joiner)]
    tmp.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "p2pkoikoi"]
    common = ["--headless", "--bot", "random", *lab.stun_args()]
    h = Proc(
        lab.exec(
            h_home.machine,
            *cli,
            "host",
            *common,
            "--port",
            str(port),
            "--rounds",
            "1",
            "--no-port-mapping",
            "--no-announce",
            "--bot-seed",
            "1",
            "--record",
            str(tmp / "h.koikoi"),
        ),  # fmt: skip
        env_for(tmp, "h"),
    )
    j: Proc | None = None
    try:
        deadline = time.monotonic() + LIMIT
        invite = ""
        while not invite:
            got = h.next(deadline)
            assert got is not None and got[1] is not None, f"host: no invite: {h.stderr()}"
            if got[1]["event"] == "listening":
                invite = got[1]["invite"]
        started = time.monotonic()
        j = Proc(
            lab.exec(
                j_home.machine,
                *cli,
                "join",
                invite,
                *common,
                "--bot-seed",
                "2",
                "--record",
                str(tmp / "j.koikoi"),
            ),  # fmt: skip
            env_for(tmp, "j"),
        )
        answered_at: float | None = None
        finals: dict[str, str] = {}
        handshake_at: float | None = None
        path = ""
        while len(finals) < 2:
            for name, p in (("host", h), ("joiner", j)):
                got = p.next(time.monotonic() + 0.05)
                if got is None:
                    continue
                at, ev = got
                if ev is None:  # the process ended: a failure line on stderr
                    if name == "joiner" and "host" not in finals:
                        text = j.stderr()
                        return Result(host, joiner, False, answered_at is not None,
                                      at - (answered_at or started), text)  # fmt: skip
                    if name not in finals:
                        raise AssertionError(f"{name} ended early: {p.stderr()}")
                    continue
                kind = ev["event"]
                if kind == "answer" and name == "joiner":
                    answered_at = at
                    h.write({"answer": ev["answer"]})
                elif kind == "connected" and name == "host":
                    path = ev.get("path", "")
                elif kind == "handshake" and name == "host" and handshake_at is None:
                    handshake_at = at
                elif kind == "no_direct_path" and name == "host":
                    assert answered_at is not None
                    return Result(host, joiner, False, True, at - answered_at, ev["text"])
                elif kind == "match_over":
                    finals[name] = ev["final_hash"]
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{host} x {joiner}: no verdict within {LIMIT:g}s: "
                    f"host {[e['event'] for _, e in h.seen]}, "
                    f"joiner {[e['event'] for _, e in j.seen]}"
                )
        assert handshake_at is not None
        since = answered_at if answered_at is not None else started
        return Result(
            host, joiner, True, answered_at is not None, handshake_at - since,
            hashes=(finals["host"], finals["joiner"]), path=path,
        )  # fmt: skip
    finally:
        for p in (h, j):
            if p is not None:
                p.stop()


@pytest.fixture(scope="module")
def nat_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatLab]:
    why = why_not_nat()
    if why:
        pytest.skip(why)
    lab = NatLab(tmp_path_factory.mktemp("natlab"))
    try:
        try:
            lab.build()
            lab.start_stun()
        except LabError as exc:
            pytest.skip(str(exc))
        yield lab
    finally:
        lab.close()


def figure(text: str) -> None:
    print(f"\n[figure] {text}", file=sys.stderr)


def run_matrix(
    lab: NatLab, tmp: Path, pairs: list[tuple[str, str]], workers: int = 6
) -> list[Result]:
    with ThreadPoolExecutor(workers) as pool:
        futures = [
            pool.submit(play_pair, lab, tmp / f"{h}-{j}", h, j, HOST_PORTS[0] + i)
            for i, (h, j) in enumerate(pairs)
        ]
        return [f.result() for f in futures]


def test_the_whole_matrix(nat_lab: NatLab, tmp_path: Path) -> None:
    pairs = [(h, j) for h in PROFILES for j in PROFILES]
    results = run_matrix(nat_lab, tmp_path, pairs)
    rows = []
    wrong = []
    for r in results:
        how = "answer" if r.answered else "invite"
        verdict = f"plays ({r.path}, {how}, {r.seconds:.2f}s)" if r.connected else "blocked"
        rows.append(f"{r.host:>6} x {r.joiner:<6} {verdict}  {r.text}")
        if r.connected != connects(r.host, r.joiner):
            wrong.append(f"{r.host} x {r.joiner}: {verdict} {r.text}")
    figure("NAT matrix (host x joiner):\n" + "\n".join(rows))
    assert not wrong, wrong
    for r in results:
        if r.connected:
            assert r.hashes[0] == r.hashes[1], r
            base = tmp_path / f"{r.host}-{r.joiner}"
            assert cli_main(["verify", str(base / "h.koikoi")]) == 0
            assert cli_main(["verify", str(base / "j.koikoi")]) == 0
        else:
            assert r.seconds <= BLOCKED_WITHIN, r
            assert "\n" not in r.text and "network" in r.text and "help" in r.text, r
