"""The short code across the internet, in the NAT lab: a private BitTorrent DHT of
8 nodes in the wan namespace (tests/dht_node.py), real ``p2pkoikoi`` processes.

The host sits behind the lab's router (nftables masquerade, miniupnpd maps its
port); the friend on "the internet" types only the code.  Every process runs
inside the lab's namespaces and names the lab's nodes with ``--dht-bootstrap``;
no test reaches the public DHT (tests/conftest.py turns it off by default).

Run with ``-s`` to see the figures (code typed to handshake, per pair).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_peer import HonestProcess, Outcome
from netlab import NET_FRIEND_IP, Lab
from test_netlab import COMMON, LIMIT, Hosting, figure, lab, p2p, play

from p2pkoikoi.cli import main as cli_main

#: a namespace lab: .ci/sdist leaves these out (the main suite runs them on the same code)
pytestmark = pytest.mark.lab

__all__ = ["lab"]  # the fixture, from test_netlab

NODES = [f"11.22.33.{50 + i}" for i in range(8)]
HOSTILE = "11.22.33.60"
PORT = 6881
BOOT = ("--dht-bootstrap", f"{NODES[0]}:{PORT}", "--dht-bootstrap", f"{NODES[3]}:{PORT}")
NODE_SCRIPT = str(Path(__file__).parents[1] / "dht_node.py")


class LabDht:
    """The DHT nodes: one process in the wan ("net") namespace, one socket per node."""

    def __init__(self, lab: Lab, hostile: str = "") -> None:
        addrs = NODES + ([HOSTILE] if hostile else [])
        for ip in addrs:
            lab.run("net", "ip", "addr", "add", f"{ip}/24", "dev", "eth0")
        args = [f"{ip}:{PORT}" for ip in addrs] + (["--hostile", hostile] if hostile else [])
        self.proc = subprocess.Popen(
            lab.exec("net", sys.executable, NODE_SCRIPT, *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self.close()
            raise AssertionError(f"the lab's DHT did not start: {line!r} {self.stderr()}")

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else ""

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def dht(lab: Lab) -> Iterator[LabDht]:
    d = LabDht(lab)
    try:
        yield d
    finally:
        d.close()


def _code_join(lab: Lab, tmp_path: Path, n: int, code: str, *extra: str):  # type: ignore[no-untyped-def]
    record = tmp_path / f"net{n}.koikoi"
    began = time.monotonic()
    proc = p2p(
        lab, "net", tmp_path, "net", "join", code, *COMMON, "--bot-seed", str(n + 100),
        "--name", "Carol", "--record", str(record), *extra,
    )  # fmt: skip
    return proc, record, began


def test_code_only_across_the_nat(lab: Lab, dht: LabDht, tmp_path: Path) -> None:
    """``join CODE`` from the internet, no invite: the DHT rendezvous gives the host's
    invite, sealed; the friend plays a whole match through the router's mapping."""
    host = Hosting(lab, tmp_path, 1, *BOOT)
    code = str(host.listening["code"])
    host.proc.wait_event("dht_announced")
    joiner, jrec, began = _code_join(lab, tmp_path, 1, code, *BOOT)
    joiner.wait_event("searching")
    typed = time.monotonic()  # the program is up: the code is being looked for
    joiner.wait_event("dht_found")
    found = time.monotonic()
    joiner.wait_event("handshake")
    shaken = time.monotonic()
    h, j = finish(host, joiner, jrec)
    connected = next(e for e in h.events if e["event"] == "connected")
    assert connected["address"] == NET_FRIEND_IP
    assert not any(e["event"] == "found" for e in j.events)  # not through mDNS
    answered = [e for e in h.events if e["event"] == "dht_answered"]
    assert len(answered) == 1
    figure(
        f"code -> handshake, host behind NAT (UPnP), friend on the internet: "
        f"{shaken - typed:.2f} s (DHT rendezvous {found - typed:.2f} s, including the 1 s "
        f"the LAN is given first; then TCP handshake {shaken - found:.2f} s); "
        f"process start {typed - began:.2f} s"
    )


def finish(host: Hosting, joiner: HonestProcess, jrec: Path) -> tuple[Outcome, Outcome]:
    """Both to the end of the match: same final hash, both records verify."""
    try:
        j = joiner.wait_exit(LIMIT)
        h = host.proc.wait_exit(LIMIT)
    finally:
        host.proc.kill()
        joiner.kill()
    assert h.code == 0 and j.code == 0, (h.stderr, j.stderr)
    hf, jf = h.events[-1], j.events[-1]
    assert hf["event"] == jf["event"] == "match_over"
    assert hf["final_hash"] == jf["final_hash"]
    for path in (host.record, jrec):
        assert cli_main(["verify", str(path)]) == 0
    return h, j


def test_wrong_code_over_the_dht_is_counted(lab: Lab, dht: LabDht, tmp_path: Path) -> None:
    host = Hosting(lab, tmp_path, 2, *BOOT)
    code = str(host.listening["code"])
    host.proc.wait_event("dht_announced")
    number, w1, w2 = code.split("-")
    wrong = f"{number}-{w1}-{'button' if w2 != 'button' else 'drifter'}"
    joiner, _, _ = _code_join(lab, tmp_path, 2, wrong, *BOOT)
    out = joiner.wait_exit(60)
    try:
        warn = host.proc.wait_event("warning", 30)
    finally:
        host.proc.kill()
    assert out.code != 0
    lines = [x for x in out.stderr.strip().splitlines() if x]
    assert len(lines) == 1 and "1 wrong of 3; 2 left" in lines[0], out.stderr
    assert "(1 of 3)" in warn["text"]


@pytest.mark.parametrize("mode", ["forge", "replay", "overwrite"])
def test_a_hostile_node_never_gives_a_wrong_peer(lab: Lab, tmp_path: Path, mode: str) -> None:
    """A ninth node forges announcements (a fake host) and inbox items (guesses),
    replays what it first stored, or overwrites every node with its forgeries: the
    friend plays with Alice or fails with one line; never anyone else."""
    d = LabDht(lab, hostile=mode)
    try:
        boot = (*BOOT, "--dht-bootstrap", f"{HOSTILE}:{PORT}")
        host = Hosting(lab, tmp_path, 3, *boot)
        code = str(host.listening["code"])
        host.proc.wait_event("dht_announced")
        joiner, jrec, _ = _code_join(lab, tmp_path, 3, code, *boot)
        out = joiner.wait_exit(120)
        if out.code == 0:  # played: with Alice, and Alice with Carol
            h = host.proc.wait_exit(120)
            mine = next(e for e in out.events if e["event"] == "handshake")
            theirs = next(e for e in h.events if e["event"] == "handshake")
            assert mine["peer_name"] == "Alice" and theirs["peer_name"] == "Carol"
            assert out.events[-1]["final_hash"] == h.events[-1]["final_hash"]
        else:
            assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        host.proc.kill()
    finally:
        d.close()


def test_lan_still_answers_first(lab: Lab, dht: LabDht, tmp_path: Path) -> None:
    """On the LAN, multicast DNS finds the host before the DHT is asked; and with
    ``--no-dht`` the code works there as before."""
    for n, extra in ((4, BOOT), (5, ("--no-dht",))):
        host = Hosting(lab, tmp_path, n, *extra)
        code = str(host.listening["code"])
        jrec = tmp_path / f"lan{n}.koikoi"
        joiner = p2p(
            lab, "lan", tmp_path, "lan", "join", code, *COMMON, "--bot-seed", str(n + 100),
            "--name", "Bob", "--record", str(jrec), *extra,
        )  # fmt: skip
        h, j, _ = play(host, joiner, jrec)
        assert any(e["event"] == "found" for e in j.events)
        assert not any(e["event"] == "dht_found" for e in j.events)


def test_no_dht_puts_nothing_on_the_dht(lab: Lab, dht: LabDht, tmp_path: Path) -> None:
    """A host with ``--no-dht`` (given nodes all the same) announces nothing there: a
    friend on the internet with the code finds no host, in one line."""
    host = Hosting(lab, tmp_path, 6, "--no-dht", *BOOT)
    assert host.listening["dht"] is False
    code = str(host.listening["code"])
    joiner, _, _ = _code_join(lab, tmp_path, 6, code, *BOOT)
    out = joiner.wait_exit(60)
    host.proc.kill()
    assert out.code != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"no host is waiting with code {code.split('-')[0]}" in lines[0]
