"""The NAT matrix with the short code only: no invite pasted, no answer sent back.

The NAT lab of tests/lab/test_natlab.py (homes behind full-cone, home, symmetric,
carrier, UDP-blocking and IPv6-firewall routers, a STUN server) gets a private
BitTorrent DHT of 8 nodes in its wan namespace (tests/dht_node.py).  For every
host profile x joiner profile, the host runs ``p2pkoikoi host --headless`` with
the lab's DHT nodes, and the joiner ``p2pkoikoi join CODE --headless``: the DHT
rendezvous brings the invite to the joiner and, when the invite alone does not
reach the host, the joiner's answer back to the host.  Nobody writes anything
to anybody's standard input.

* every pair that connects by invite and answer (test_natlab.connects) plays a
  whole one-round match by code: same final hash, both records verify;
* every other pair fails with one line.

Run with ``-s`` to see the matrix with the time from the code to the handshake.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from netlab import HOST_PORTS, PROFILES, LabError, NatLab, in_ns, why_not_nat
from procs import env_for
from test_natlab import LIMIT, Proc, connects, figure

from p2pkoikoi.cli import main as cli_main

#: a namespace lab: .ci/sdist leaves these out (the main suite runs them on the same code)
pytestmark = pytest.mark.lab

NODES = [f"11.0.1.{50 + i}" for i in range(8)]
PORT = 6881
NODE_SCRIPT = str(Path(__file__).parents[1] / "dht_node.py")


@dataclass
class CodeResult:
    host: str
    joiner: str
    connected: bool
    answered: bool = False  # the answer went back through the DHT
    seconds: float = 0.0  # from the joiner's start to the handshake / its one line
    found: float = 0.0  # from the joiner's start to the DHT's invite
    typed: float = 0.0  # from the joiner's start to its search (the program is up)
    text: str = ""
    hashes: tuple[str, str] = ("", "")


@contextmanager
def nat_lab_with_dht(tmp: Path) -> Iterator[NatLab]:
    """The NAT lab with STUN and 8 DHT nodes in its wan (raises LabError where it
    cannot be built)."""
    lab = NatLab(tmp)
    nodes: subprocess.Popen[str] | None = None
    try:
        lab.build()
        lab.start_stun()
        for ip in NODES:
            in_ns(lab.wan, "ip", "addr", "add", f"{ip}/16", "dev", "br0")
        nodes = subprocess.Popen(
            lab.exec(lab.wan, sys.executable, NODE_SCRIPT, *(f"{ip}:{PORT}" for ip in NODES)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert nodes.stdout is not None
        line = nodes.stdout.readline().strip()
        if line != "ready":
            raise LabError(f"the lab's DHT nodes did not start: {line!r}")
        yield lab
    finally:
        if nodes is not None:
            nodes.kill()
            nodes.wait()
        lab.close()


@pytest.fixture(scope="module")
def dht_nat_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatLab]:
    why = why_not_nat()
    if why:
        pytest.skip(why)
    try:
        with nat_lab_with_dht(tmp_path_factory.mktemp("dhtnatlab")) as lab:
            yield lab
    except LabError as exc:
        pytest.skip(str(exc))


def boot() -> list[str]:
    return [a for ip in NODES[:2] for a in ("--dht-bootstrap", f"{ip}:{PORT}")]


def play_by_code(
    lab: NatLab, tmp: Path, host: str, joiner: str, port: int, starting: threading.Lock
) -> CodeResult:
    """One cell of the matrix.  ``starting`` is held from the host's start until it has
    announced its number: hosts come up one after another, as people do, so each reads
    the numbers taken before it picks one.  (Six hosts started in the same instant
    could pick the same number between their reads and their puts, the race
    protocol/dht.md counts as a failed attempt: about one run in seven here.)"""
    h_home, j_home = lab.homes[("host", host)], lab.homes[("joiner", joiner)]
    tmp.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "p2pkoikoi"]
    common = ["--headless", "--bot", "random", *lab.stun_args(), *boot()]
    starting.acquire()
    try:
        h = Proc(
            lab.exec(
                h_home.machine, *cli, "host", *common, "--port", str(port), "--rounds", "1",
                "--no-port-mapping", "--no-announce", "--bot-seed", "1",
                "--record", str(tmp / "h.koikoi"),
            ),
            env_for(tmp, "h"),
        )  # fmt: skip
    except BaseException:
        starting.release()
        raise
    j: Proc | None = None
    try:
        deadline = time.monotonic() + LIMIT
        code, announced = "", host == "noudp"  # no UDP: nothing is announced anywhere
        try:
            while not code or not announced:
                got = h.next(deadline)
                assert got is not None and got[1] is not None, f"host: {h.stderr()}"
                ev = got[1]
                if ev["event"] == "listening":
                    code = ev["code"]
                announced = announced or (ev["event"] == "dht_announced" and ev["nodes"] > 0)
        finally:
            starting.release()
        started = time.monotonic()
        j = Proc(
            lab.exec(
                j_home.machine, *cli, "join", code, *common, "--bot-seed", "2",
                "--record", str(tmp / "j.koikoi"),
            ),
            env_for(tmp, "j"),
        )  # fmt: skip
        finals: dict[str, str] = {}
        handshake_at: float | None = None
        answered = False
        found = typed = 0.0
        while len(finals) < 2:
            for name, p in (("host", h), ("joiner", j)):
                got = p.next(time.monotonic() + 0.05)
                if got is None:
                    continue
                at, ev = got
                if ev is None:
                    if name == "joiner" and "joiner" not in finals:
                        return CodeResult(
                            host, joiner, False, answered, at - started, text=j.stderr()
                        )
                    if name not in finals:
                        raise AssertionError(f"{name} ended early: {p.stderr()}")
                    continue
                kind = ev["event"]
                if kind == "dht_answer" and name == "host":
                    answered = True
                elif kind == "dht_found" and name == "joiner":
                    found = at - started
                elif kind == "searching" and name == "joiner" and not typed:
                    typed = at - started
                elif kind == "handshake" and name == "joiner" and handshake_at is None:
                    handshake_at = at
                elif kind == "no_direct_path" and name == "host":
                    return CodeResult(host, joiner, False, answered, at - started, text=ev["text"])
                elif kind == "match_over":
                    finals[name] = ev["final_hash"]
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{host} x {joiner}: no verdict within {LIMIT:g}s: "
                    f"host {[e['event'] for _, e in h.seen]}, "
                    f"joiner {[e['event'] for _, e in j.seen]}"
                )
        assert handshake_at is not None
        return CodeResult(
            host, joiner, True, answered, handshake_at - started, found, typed,
            hashes=(finals["host"], finals["joiner"]),
        )  # fmt: skip
    finally:
        for p in (h, j):
            if p is not None:
                p.stop()


def test_the_whole_matrix_by_code(dht_nat_lab: NatLab, tmp_path: Path) -> None:
    pairs = [(h, j) for h in PROFILES for j in PROFILES]
    starting = threading.Lock()
    with ThreadPoolExecutor(6) as pool:
        futures = [
            pool.submit(
                play_by_code, dht_nat_lab, tmp_path / f"{h}-{j}", h, j, HOST_PORTS[0] + i, starting
            )
            for i, (h, j) in enumerate(pairs)
        ]
        results = [f.result() for f in futures]
    rows, wrong = [], []
    for r in results:
        how = "answer by DHT" if r.answered else "invite by DHT"
        verdict = (
            f"plays ({how}): code -> invite {r.found - r.typed:.2f}s, -> handshake "
            f"{r.seconds - r.typed:.2f}s (+{r.typed:.2f}s program start)"
            if r.connected
            else "blocked"
        )
        rows.append(f"{r.host:>6} x {r.joiner:<6} {verdict}  {r.text}")
        if r.connected != connects(r.host, r.joiner):
            wrong.append(f"{r.host} x {r.joiner}: {verdict} {r.text}")
    figure("NAT matrix by code only (host x joiner; code typed -> handshake):\n" + "\n".join(rows))
    assert not wrong, wrong
    for r in results:
        if r.connected:
            assert r.hashes[0] == r.hashes[1], r
            base = tmp_path / f"{r.host}-{r.joiner}"
            assert cli_main(["verify", str(base / "h.koikoi")]) == 0
            assert cli_main(["verify", str(base / "j.koikoi")]) == 0
        else:
            assert r.text and "\n" not in r.text, r
