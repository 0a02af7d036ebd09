"""Real headless processes across two network namespaces joined by a veth pair.

Needs root and iproute2 (``ip``).  Each run creates its own namespaces and veth
names (unique per run), puts 10.77.0.1/24 and 10.77.0.2/24 on the two ends
*inside* the namespaces only, and deletes everything afterwards, even on
failure.  Where namespaces cannot be created the tests skip with the reason.

The faulty-link test impairs the link with ``tc netem`` where the kernel has
``sch_netem``.  Where it does not (our Firecracker CI kernels), it joins the
two namespaces a second time through ``tests/faultylink.py``: a TUN device in
each (10.78.0.1 and 10.78.0.2, point-to-point) and a userspace relay that
delays, drops and reorders the packets between them.  Only without
``/dev/net/tun`` either does it fall back to nftables loss (no delay, no
reordering).
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hostile_peer import HonestProcess, Outcome
from procs import env_for

from p2pkoikoi.cli import main as cli_main

HOST_IP, JOIN_IP = "10.77.0.1", "10.77.0.2"
TUN_IPS = ("10.78.0.1", "10.78.0.2")  # the faulty link's TUN ends, where netem is missing
NETEM = ("delay", "150ms", "40ms", "loss", "5%", "reorder", "10%")
RELAY = ("--delay", "0.15", "--jitter", "0.04", "--loss", "0.05", "--reorder", "0.1")
FAULTYLINK = Path(__file__).parents[1] / "faultylink.py"
MATCH_LIMIT = 240.0  # seconds for one match over the faulty link (a loaded 2-core box)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=30)


@dataclass
class Pair:
    ns: tuple[str, str]  # host side, joiner side
    dev: tuple[str, str]
    netem: str  # "" when netem works, else why not
    relays: list[FaultyLink] = field(default_factory=list)  # stopped by the fixture

    def exec(self, side: int, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns[side], *args]

    def tc(self, side: int, verb: str, *spec: str) -> subprocess.CompletedProcess[str]:
        return run(*self.exec(side, "tc", "qdisc", verb, "dev", self.dev[side], "root", *spec))


def _why_not() -> str:
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    if shutil.which("ip") is None:
        return "no 'ip' command (install iproute2)"
    return ""


@pytest.fixture
def pair() -> Iterator[Pair]:
    why = _why_not()
    if why:
        pytest.skip(why)
    tag = secrets.token_hex(3)
    ns = (f"kkh{tag}", f"kkj{tag}")
    dev = (f"kvh{tag}", f"kvj{tag}")
    created: list[str] = []
    relays: list[FaultyLink] = []
    try:
        for name in ns:
            r = run("ip", "netns", "add", name)
            if r.returncode != 0:
                pytest.skip(f"cannot create a network namespace: {r.stderr.strip()}")
            created.append(name)
        steps = [
            ("ip", "link", "add", dev[0], "type", "veth", "peer", "name", dev[1]),
            ("ip", "link", "set", dev[0], "netns", ns[0]),
            ("ip", "link", "set", dev[1], "netns", ns[1]),
            ("ip", "-n", ns[0], "addr", "add", f"{HOST_IP}/24", "dev", dev[0]),
            ("ip", "-n", ns[1], "addr", "add", f"{JOIN_IP}/24", "dev", dev[1]),
            ("ip", "-n", ns[0], "link", "set", dev[0], "up"),
            ("ip", "-n", ns[1], "link", "set", dev[1], "up"),
            ("ip", "-n", ns[0], "link", "set", "lo", "up"),
            ("ip", "-n", ns[1], "link", "set", "lo", "up"),
        ]
        for step in steps:
            r = run(*step)
            if r.returncode != 0:
                pytest.skip(f"cannot set up the veth pair ({' '.join(step)}): {r.stderr.strip()}")
        p = Pair(ns, dev, "", relays)
        probe = p.tc(0, "add", "netem", "delay", "1ms")
        if probe.returncode != 0:
            p.netem = f"tc netem is unavailable on this kernel: {probe.stderr.strip()}"
        else:
            p.tc(0, "del")
        yield p
    finally:
        for relay in relays:
            relay.stop()
        for name in created:
            run("ip", "netns", "del", name)  # takes its end of the veth pair with it


class FaultyLink:
    """``tests/faultylink.py`` joining the pair's namespaces through two TUN devices."""

    def __init__(self, pair: Pair, tmp_path: Path, seed: int, *impairment: str) -> None:
        self.control = tmp_path / "faultylink.cut"
        self.proc = subprocess.Popen(
            [sys.executable, str(FAULTYLINK), "--ns", *pair.ns, "--addr", *TUN_IPS]
            + ["--seed", str(seed), "--control", str(self.control), *impairment],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        pair.relays.append(self)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.ready = self._next(10.0)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def _next(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def why_not(self) -> str:
        """Empty when the link is up, else why it could not be made."""
        if self.ready is not None and self.ready.get("event") == "ready":
            return ""
        self.stop()
        assert self.proc.stderr is not None
        err = self.proc.stderr.read().strip().splitlines()
        return f"the TUN relay did not start: {err[-1] if err else 'no output'}"

    def cut(self, seconds: float) -> None:
        """Drop every packet, both ways, for ``seconds`` from now."""
        self.control.write_text(str(seconds))

    def stop(self) -> dict[str, Any]:
        """Stop the relay (killed if it does not stop at once); its final counters."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        while (obj := self._next(5.0)) is not None:
            if obj.get("event") == "stats":
                return obj
        self.lines.put(None)  # for a second stop (the fixture's)
        return {}


def start(pair: Pair, side: int, tmp_path: Path, *args: str) -> HonestProcess:
    who = ("host", "joiner")[side]
    return HonestProcess(
        pair.exec(side, sys.executable, "-m", "p2pkoikoi", *args), env_for(tmp_path, who)
    )


def play_match(
    pair: Pair, tmp_path: Path, n: int, limit: float, host_ip: str = HOST_IP
) -> tuple[Outcome, Outcome]:
    hrec, jrec = tmp_path / f"h{n}.koikoi", tmp_path / f"j{n}.koikoi"
    common = ("--headless", "--bot", "random", "--bot-seed", str(n), "--timeout", "60")
    host = start(
        pair,
        0,
        tmp_path,
        "host",
        *common,
        "--port",
        "0",
        "--bind",
        host_ip,
        "--rounds",
        "1",
        "--name",
        "Alice",
        "--record",
        str(hrec),
    )
    joiner: HonestProcess | None = None
    try:
        invite = str(host.wait_event("listening")["invite"])
        assert f"-{host_ip}_" in invite
        joiner = start(
            pair, 1, tmp_path, "join", invite, *common, "--name", "Bob", "--record", str(jrec)
        )
        j = joiner.wait_exit(limit)
        h = host.wait_exit(limit)
    finally:
        host.kill()
        if joiner is not None:
            joiner.kill()
    assert h.code == 0 and j.code == 0, (h.stderr, j.stderr)
    # nothing on standard error: with no route to the SSDP group, miniupnpc's
    # perror() used to print "sendto: Network is unreachable" four times
    assert (h.stderr, j.stderr) == ("", ""), (h.stderr, j.stderr)
    hf, jf = h.events[-1], j.events[-1]
    assert hf["event"] == jf["event"] == "match_over"
    assert hf["final_hash"] == jf["final_hash"]
    assert hf["transcript_hash"] == jf["transcript_hash"]
    for path in (hrec, jrec):
        assert cli_main(["verify", str(path)]) == 0
    return h, j


def test_matches_across_namespaces(pair: Pair, tmp_path: Path) -> None:
    """Two matches over a plain veth link between two namespaces, same final hash."""
    hashes = {play_match(pair, tmp_path, n, 120)[0].events[-1]["final_hash"] for n in (1, 2)}
    assert len(hashes) == 2  # two different matches, each agreed by both sides


def nft(pair: Pair, side: int, *rule: str) -> None:
    r = run(*pair.exec(side, "nft", *rule))
    assert r.returncode == 0, r.stderr


def lossy_nft(pair: Pair) -> str:
    """5% random loss each way with nftables (where netem is missing); "" or why not."""
    if shutil.which("nft") is None:
        return "no 'nft' command (install nftables)"
    for side in (0, 1):
        r = run(*pair.exec(side, "nft", "add", "table", "inet", "fault"))
        if r.returncode != 0:
            return f"nftables does not work here: {r.stderr.strip()}"
        nft(
            pair,
            side,
            "add",
            "chain",
            "inet",
            "fault",
            "out",
            "{ type filter hook output priority 0; }",
        )
        nft(
            pair,
            side,
            "add",
            "rule",
            "inet",
            "fault",
            "out",
            "oifname",
            pair.dev[side],
            "numgen",
            "random",
            "mod",
            "100",
            "<",
            "5",
            "drop",
        )
    return ""


def test_matches_over_a_faulty_link(pair: Pair, tmp_path: Path) -> None:
    """Delay 150 ms +- 40 ms, 5% loss, 10% reordering each way: still the same hashes.

    With sch_netem that is ``tc netem`` on both veth ends.  Without it (our CI
    kernels) the same impairment comes from the userspace TUN relay, and its
    counters must show that packets really were dropped and reordered.  Without
    /dev/net/tun either, the veth link gets 5% random loss each way from
    nftables (no delay, no reordering); with none of these it skips.
    """
    if not pair.netem:
        for side in (0, 1):
            r = pair.tc(side, "add", "netem", *NETEM)
            assert r.returncode == 0, r.stderr
        for n in (1, 2):
            play_match(pair, tmp_path, n, MATCH_LIMIT)
        return
    link = FaultyLink(pair, tmp_path, 1, *RELAY)
    why_tun = link.why_not()
    if why_tun:
        why = lossy_nft(pair)
        if why:
            pytest.skip(f"{pair.netem}; {why_tun}; {why}")
        for n in (1, 2):
            play_match(pair, tmp_path, n, MATCH_LIMIT)
        return
    for n in (1, 2):
        began = time.monotonic()
        h, _ = play_match(pair, tmp_path, n, MATCH_LIMIT, host_ip=TUN_IPS[0])
        print(f"match {n} over the TUN relay: {h.ended_at - began:.1f} s")
    stats = link.stop()
    print(f"faulty link (TUN relay): {stats}")
    assert stats["relayed"] > 0
    assert stats["dropped"] > 0, stats  # the impairment really happened
    assert stats["reordered"] > 0, stats


ECHO = f"""
import socket
s = socket.socket()
s.bind(("{TUN_IPS[1]}", 5000))
s.listen()
c, _ = s.accept()
while d := c.recv(100):
    c.sendall(d)
"""
CUT_PROBE = f"""
import socket, sys, time
for _ in range(100):  # until the echo server listens
    try:
        s = socket.create_connection(("{TUN_IPS[1]}", 5000), timeout=20)
        break
    except ConnectionRefusedError:
        time.sleep(0.1)
s.sendall(b"a"); s.recv(1)
import os
tmp = sys.argv[1] + ".tmp"
open(tmp, "w").write("1.5")
os.rename(tmp, sys.argv[1])  # the relay's control file, whole at once: cut for 1.5 s
t = time.monotonic()
while os.path.exists(sys.argv[1]):  # the relay deletes it once the cut is on
    if time.monotonic() - t > 10:
        sys.exit("the relay never took the cut")
    time.sleep(0.005)
t = time.monotonic(); s.sendall(b"b"); s.recv(1)
print(time.monotonic() - t)
"""


def test_the_tun_relay_cuts_the_link(pair: Pair, tmp_path: Path) -> None:
    """The relay's cut (used where the link cannot be taken down): a TCP echo sent
    once the relay has taken a 1.5 s cut comes back only after it, and the relay
    counts the cut."""
    link = FaultyLink(pair, tmp_path, 1, "--delay", "0", "--jitter", "0", "--loss", "0")
    why = link.why_not()
    if why:
        pytest.skip(why)
    server = subprocess.Popen(pair.exec(1, sys.executable, "-c", ECHO))
    try:
        r = run(*pair.exec(0, sys.executable, "-c", CUT_PROBE, str(link.control)))
    finally:
        server.kill()
        server.wait()
    assert r.returncode == 0, r.stderr
    assert 1.0 < float(r.stdout) < 10, r.stdout
    stats = link.stop()
    assert stats["cut"] > 0 and stats["dropped"] == 0, stats


def cut_link(pair: Pair, host: HonestProcess, seconds: float, *, reset: bool) -> None:
    """Take the host's end of the veth pair down for ``seconds`` (watching the host's
    output meanwhile), then bring it back.  With ``reset`` every TCP segment also
    gets a reset during the cut, so the connection breaks for sure."""
    if reset:
        for side in (0, 1):  # one nft call a side: the match goes on while it runs
            nft(
                pair,
                side,
                "add table inet cut { chain out { type filter hook output priority 0 ; "
                f'oifname "{pair.dev[side]}" meta l4proto tcp reject with tcp reset ; }} ; }}',
            )
    r = run("ip", "-n", pair.ns[0], "link", "set", pair.dev[0], "down")
    assert r.returncode == 0, r.stderr
    host.watch(seconds)
    assert not any(e.get("event") == "match_over" for e in host.seen), "the cut came too late"
    if reset:
        for side in (0, 1):
            nft(pair, side, "delete", "table", "inet", "cut")
    r = run("ip", "-n", pair.ns[0], "link", "set", pair.dev[0], "up")
    assert r.returncode == 0, r.stderr


def match_with_a_cut(pair: Pair, tmp_path: Path, *, reset: bool) -> tuple[Outcome, Outcome]:
    hrec, jrec = tmp_path / "h.koikoi", tmp_path / "j.koikoi"
    # a bot that thinks 40 ms a decision: a 12-round match lasts several seconds, so
    # the cut falls mid-match (random bots finish one in under a second now)
    common = ("--headless", "--bot", "hard:40", "--timeout", "60")
    host = start(
        pair,
        0,
        tmp_path,
        "host",
        *common,
        "--port",
        "0",
        "--bind",
        HOST_IP,
        "--rounds",
        "12",
        "--set",
        "scoring=sum",  # no pool to knock a player out within a round or two
        "--name",
        "Alice",
        "--record",
        str(hrec),
    )
    joiner: HonestProcess | None = None
    try:
        invite = str(host.wait_event("listening")["invite"])
        joiner = start(
            pair, 1, tmp_path, "join", invite, *common, "--name", "Bob", "--record", str(jrec)
        )
        host.wait_event("handshake")
        host.wait_event("played")  # the match is under way
        cut_link(pair, host, 10.0, reset=reset)
        j = joiner.wait_exit(MATCH_LIMIT)
        h = host.wait_exit(MATCH_LIMIT)
    finally:
        host.kill()
        if joiner is not None:
            joiner.kill()
    assert h.code == 0 and j.code == 0, (h.stderr, j.stderr)
    assert h.events[-1]["event"] == j.events[-1]["event"] == "match_over"
    assert h.events[-1]["final_hash"] == j.events[-1]["final_hash"]
    for path in (hrec, jrec):
        assert cli_main(["verify", str(path)]) == 0
    return h, j


def test_a_ten_second_link_cut_is_survived(pair: Pair, tmp_path: Path) -> None:
    """The host's link goes down for 10 s mid-match: the match still ends agreed.

    (A 10 s outage without resets is within TCP's own retransmission: the
    connection itself survives; the next test breaks it for sure.)
    """
    match_with_a_cut(pair, tmp_path, reset=False)


def test_a_ten_second_cut_that_breaks_the_connection_is_survived(
    pair: Pair, tmp_path: Path
) -> None:
    """As above, and every segment during the cut is answered by a TCP reset: both
    sides see the connection break and must reconnect and resume the same match."""
    if shutil.which("nft") is None:
        pytest.skip("no 'nft' command (install nftables)")
    h, j = match_with_a_cut(pair, tmp_path, reset=True)
    events = [e.get("event") for e in h.events + j.events]
    assert "reconnecting" in events and "reconnected" in events, events
