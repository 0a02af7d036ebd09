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
from netlab import HOST_PORTS, PROFILES, LabError, NatLab, in_ns, why_not_nat
from procs import env_for

from p2pkoikoi.cli import main as cli_main

#: a namespace lab: .ci/sdist leaves these out (the main suite runs them on the same code)
pytestmark = pytest.mark.lab

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
    _threads: list[threading.Thread] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.proc = subprocess.Popen(
            self.args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        self._threads = [
            threading.Thread(target=self._out, daemon=True),
            threading.Thread(target=self._err, daemon=True),
        ]
        for t in self._threads:
            t.start()

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
        self._threads[1].join(10)  # its reader may not have stored the last line yet
        return "".join(self.err).strip().removeprefix("p2pkoikoi: ")


@dataclass
class Result:
    host: str
    joiner: str
    connected: bool
    answered: bool = False  # the answer was needed (and used)
    seconds: float = 0.0  # from the answer (or the joiner's first try) to the handshake/verdict
    text: str = ""
    hashes: tuple[str, str] = ("", "")
    path: str = ""


def play_pair(
    lab: NatLab,
    tmp: Path,
    host: str,
    joiner: str,
    port: int,
    *,
    use_answer: bool = True,
    host_env: dict[str, str] | None = None,
    before_join: Any = None,
) -> Result:
    """One pair: host in the ``host`` profile's home, joiner in the ``joiner`` one's.
    ``before_join(host_proc)`` runs between the invite and the joiner's start."""
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
        {**env_for(tmp, "h"), **(host_env or {})},
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
        if before_join is not None:
            before_join(h)
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
                if kind == "answer" and name == "joiner" and use_answer:
                    answered_at = at
                    h.write({"answer": ev["answer"]})
                elif kind == "connecting" and name == "joiner":
                    started = at  # from the joiner's first packet, not its program's start
                elif kind == "connected" and name == "host":
                    path = ev.get("path", "")
                    if ":" in str(ev.get("address", "")):
                        path += "/IPv6"
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
    # two IPv6 firewalls that let in only replies: a simultaneous open over IPv6
    v6 = next(r for r in results if (r.host, r.joiner) == ("v6", "v6"))
    assert v6.path == "udp/IPv6", v6
    for r in results:
        if r.connected:
            assert r.hashes[0] == r.hashes[1], r
            base = tmp_path / f"{r.host}-{r.joiner}"
            assert cli_main(["verify", str(base / "h.koikoi")]) == 0
            assert cli_main(["verify", str(base / "j.koikoi")]) == 0
        else:
            assert r.seconds <= BLOCKED_WITHIN, r
            assert "\n" not in r.text and "network" in r.text and "help" in r.text, r


def test_a_full_cone_host_needs_no_answer(nat_lab: NatLab, tmp_path: Path) -> None:
    """The invite's reflexive entry alone reaches a host behind a full cone."""
    r = play_pair(nat_lab, tmp_path, "cone", "home", HOST_PORTS[0] + 60, use_answer=False)
    assert r.connected and not r.answered and r.path == "udp", r
    assert r.hashes[0] == r.hashes[1]


def test_host_no_stun_contacts_no_stun_server(nat_lab: NatLab, tmp_path: Path) -> None:
    """``--no-stun`` wins over everything else (here $P2PKOIKOI_STUN naming the lab's
    server): not one packet reaches the STUN port; the same host without it asks."""
    home = nat_lab.homes[("host", "home")]
    before = nat_lab.count_stun()
    env = {**env_for(tmp_path, "h"), "P2PKOIKOI_STUN": "11.0.0.2:3478"}
    for flags, port in ((["--no-stun"], HOST_PORTS[0] + 61), ([], HOST_PORTS[0] + 62)):
        h = Proc(
            nat_lab.exec(home.machine, sys.executable, "-m", "p2pkoikoi", "host", "--headless",
                         "--port", str(port), "--no-port-mapping", "--no-announce", *flags),
            env,
        )  # fmt: skip
        try:
            while True:
                got = h.next(time.monotonic() + LIMIT)
                assert got is not None and got[1] is not None, h.stderr()
                if got[1]["event"] == "reachability":
                    break
        finally:
            h.stop()
        if flags:
            assert nat_lab.count_stun() == before, "a --no-stun host asked a STUN server"
            assert "nat" in next(e for _, e in h.seen if e["event"] == "listening")
    assert nat_lab.count_stun() > before  # the control: the counter does count


def test_a_late_joiner_after_the_carrier_changed_ports(nat_lab: NatLab, tmp_path: Path) -> None:
    """The host waits behind a carrier NAT; its mappings expire for real (conntrack
    flushed, as after 30 idle seconds) and the carrier hands out other ports.  The host
    notices (its STUN refresh sees a new address) and the joiner, starting only now with
    the old invite, still plays through its answer."""
    home = nat_lab.homes[("host", "cgn")]
    noticed: list[dict[str, Any]] = []

    def expire(h: Proc) -> None:
        nat_lab.remap_carrier(home, 30000)
        deadline = time.monotonic() + LIMIT
        while not noticed:
            got = h.next(deadline)
            assert got is not None and got[1] is not None, h.stderr()
            if got[1]["event"] == "warning" and "reflexive" in got[1]:
                noticed.append(got[1])

    try:
        r = play_pair(
            nat_lab, tmp_path, "cgn", "cone", HOST_PORTS[0] + 63,
            host_env={"P2PKOIKOI_STUN_REFRESH": "0.5"}, before_join=expire,
        )  # fmt: skip
    finally:
        nat_lab.remap_carrier(home, 20000)
    assert "changed" in noticed[0]["text"], noticed
    assert r.connected and r.answered, r
    assert r.hashes[0] == r.hashes[1]


def test_pasting_an_answer_at_the_host_table(nat_lab: NatLab, tmp_path: Path) -> None:
    """Two people at their tables: the host behind a home NAT, the friend behind a
    carrier NAT.  The friend's table shows the answer; it is pasted into the host's
    waiting screen (p, paste, Enter) and both play the match to its end over the punched
    path; both records verify."""
    from pty_terminal import ENTER, Terminal, command_from_screen, continue_line, decision_line
    from pty_terminal import answer as press

    h_home, j_home = nat_lab.homes[("host", "home")], nat_lab.homes[("joiner", "cgn")]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    terms: list[Terminal] = []
    try:
        host = Terminal(
            ["host", "--port", str(HOST_PORTS[0] + 64), "--rounds", "1", "--no-port-mapping",
             "--no-announce", "--name", "Alice", *nat_lab.stun_args(), "--quiet",
             "--record", str(tmp_path / "alice.koikoi")],
            tmp_path / "a", columns=220, rows=50, prefix=nat_lab.exec(h_home.machine),
        )  # fmt: skip
        terms.append(host)
        screen = host.wait_for("press p, paste it")
        invite = command_from_screen(screen, "p2pkoikoi join ").split(" ", 2)[2].strip()
        join = Terminal(
            ["join", invite, "--name", "Bob", *nat_lab.stun_args(), "--quiet",
             "--record", str(tmp_path / "bob.koikoi")],
            tmp_path / "b", columns=220, rows=50, prefix=nat_lab.exec(j_home.machine),
        )  # fmt: skip
        terms.append(join)
        screen = join.wait_for("Send this answer back to your friend")
        text = next(ln.strip() for ln in screen.splitlines() if ln.strip().startswith("koia-"))
        host.send("p")
        host.wait_for(lambda s: any(ln.strip().startswith("answer:") for ln in s.splitlines()))
        host.send(text + ENTER)
        join.wait_for("Play by these rules?")
        join.send("a")
        over = {id(host): False, id(join): False}
        end = time.monotonic() + LIMIT
        while not all(over.values()):
            assert time.monotonic() < end, f"host:\n{host.text()}\n\njoiner:\n{join.text()}"
            for t in (host, join):
                if over[id(t)]:
                    continue
                if not t.pump(0.05):
                    raise AssertionError(f"{t.argv[0]} exited mid-match:\n{t.text()}")
                screen = t.text()
                if "The match is over" in screen and "how it ended" in screen:
                    over[id(t)] = True
                elif ("Round 1 of 1:" in screen and continue_line(screen)) or decision_line(screen):
                    press(t, screen)
        for t in (host, join):
            t.wait_for("p2pkoikoi verify")
            t.send("q")
            t.finish()
        assert cli_main(["verify", str(tmp_path / "alice.koikoi")]) == 0
        assert cli_main(["verify", str(tmp_path / "bob.koikoi")]) == 0
    finally:
        for t in terms:
            t.close()


CUT_UDP = """
table inet cut {
    chain forward {
        type filter hook forward priority -10; policy accept;
        meta l4proto udp drop
    }
}
"""


def test_a_dropped_punched_path_is_punched_again(nat_lab: NatLab, tmp_path: Path) -> None:
    """Mid-match both routers lose every UDP packet and every mapping (conntrack
    flushed for real); once the network is back, the joiner re-checks the host's known
    candidates from the same socket, opens a new QUIC connection and the match resumes
    there: both finish with the same final hash and both records verify."""
    h_home, j_home = nat_lab.homes[("host", "home")], nat_lab.homes[("joiner", "home")]
    fast = {"P2PKOIKOI_PING_INTERVAL": "0.3", "P2PKOIKOI_SILENCE_WARN": "0.6",
            "P2PKOIKOI_SILENCE_FAIL": "1.2"}  # fmt: skip
    cli = [sys.executable, "-m", "p2pkoikoi"]
    common = ["--headless", "--bot", "random", *nat_lab.stun_args()]
    h = Proc(
        nat_lab.exec(h_home.machine, *cli, "host", *common, "--port", str(HOST_PORTS[0] + 65),
                     "--rounds", "12", "--no-port-mapping", "--no-announce",
                     "--record", str(tmp_path / "h.koikoi")),
        {**env_for(tmp_path, "h"), **fast},
    )  # fmt: skip
    j: Proc | None = None
    cut = False
    try:
        deadline = time.monotonic() + LIMIT
        invite = ""
        while not invite:
            got = h.next(deadline)
            assert got is not None and got[1] is not None, h.stderr()
            invite = got[1].get("invite", "")
        j = Proc(
            nat_lab.exec(j_home.machine, *cli, "join", invite, *common,
                         "--record", str(tmp_path / "j.koikoi")),
            {**env_for(tmp_path, "j"), **fast},
        )  # fmt: skip
        finals: dict[str, str] = {}
        events: dict[str, list[str]] = {"host": [], "joiner": []}
        restored = False
        while len(finals) < 2:
            assert time.monotonic() < deadline, events
            for name, p in (("host", h), ("joiner", j)):
                if name in finals:  # its match is over: it may exit before the other's
                    continue
                got = p.next(time.monotonic() + 0.02)
                if got is None:
                    continue
                ev = got[1]
                assert ev is not None, f"{name} ended: {p.stderr()}"
                kind = ev["event"]
                events[name].append(kind)
                if kind == "answer" and name == "joiner":
                    h.write({"answer": ev["answer"]})
                elif kind == "played" and not cut:
                    cut = True
                    for home in (h_home, j_home):
                        nat_lab.apply(home.router, CUT_UDP)
                elif kind == "reconnecting" and cut and not restored:
                    restored = True
                    for home in (h_home, j_home):
                        in_ns(home.router, "nft", "delete", "table", "inet", "cut")
                        nat_lab.flush_conntrack(home)
                elif kind == "match_over":
                    finals[name] = ev["final_hash"]
        assert restored, events
        assert "reconnected" in events["joiner"] and "reconnected" in events["host"], events
        assert finals["host"] == finals["joiner"]
        assert cli_main(["verify", str(tmp_path / "h.koikoi")]) == 0
        assert cli_main(["verify", str(tmp_path / "j.koikoi")]) == 0
    finally:
        for home in (h_home, j_home):
            run_quiet(home.router)
        for p in (h, j):
            if p is not None:
                p.stop()


def run_quiet(router: str) -> None:
    subprocess.run(["ip", "netns", "exec", router, "nft", "delete", "table", "inet", "cut"],
                   capture_output=True)  # fmt: skip
