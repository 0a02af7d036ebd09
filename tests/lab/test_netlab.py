"""Reaching a friend through a real home router: NAT, miniupnpd, multicast DNS.

The lab (tests/netlab.py) is a LAN behind a router namespace that masquerades
with nftables and runs miniupnpd (UPnP IGD, NAT-PMP, PCP), a friend on the
same LAN and a friend on "the internet".  Every process runs inside the
namespaces.  Real ``p2pkoikoi`` processes, no mocks: the plain
``p2pkoikoi host --headless`` invite must work for both friends, the router's
forwarding must be gone when the host exits, and without miniupnpd the host
must say "this network only" within the bound while the LAN friend still joins.

Run with ``-s`` to see the figures (time to the invite, time to the handshake,
addresses per invite).
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_peer import HonestProcess, Outcome
from netlab import (
    HOST_IP,
    HOST_IP6,
    LAN_FRIEND_IP,
    NET_FRIEND_IP,
    NET_FRIEND_IP6,
    ROUTER_WAN,
    Lab,
    LabError,
    why_not,
)
from procs import env_for

from p2pkoikoi.cli import main as cli_main
from p2pkoikoi.session import decode_invite, encode_invite
from p2pkoikoi.transport.nat.portmap import BOUND

#: a namespace lab: .ci/sdist leaves these out (the main suite runs them on the same code)
pytestmark = pytest.mark.lab

LIMIT = 120.0  # one headless 1-round match on a loaded 2-core box


def _lab(tmp_path: Path, *, router: bool) -> Iterator[Lab]:
    why = why_not(router=router)
    if why:
        pytest.skip(why)
    lab = Lab(tmp_path)
    try:
        try:
            lab.build()
        except LabError as exc:
            pytest.skip(str(exc))
        yield lab
    finally:
        lab.close()


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    """The home network with miniupnpd running on the router."""
    for it in _lab(tmp_path, router=True):
        try:
            it.start_miniupnpd()
        except LabError as exc:
            pytest.skip(str(exc))
        yield it


@pytest.fixture
def bare_lab(tmp_path: Path) -> Iterator[Lab]:
    """The same network, the router doing NAT but no port mapping."""
    yield from _lab(tmp_path, router=False)


def figure(text: str) -> None:
    print(f"\n[figure] {text}", file=sys.stderr)


def p2p(lab: Lab, side: str, tmp_path: Path, who: str, *args: str) -> HonestProcess:
    return HonestProcess(
        lab.exec(side, sys.executable, "-m", "p2pkoikoi", *args), env_for(tmp_path, who)
    )


COMMON = ("--headless", "--bot", "random", "--timeout", "60")


class Hosting:
    """A plain ``p2pkoikoi host --headless`` in the host namespace (default port, no --bind)."""

    def __init__(self, lab: Lab, tmp_path: Path, n: int, *extra: str) -> None:
        self.record = tmp_path / f"host{n}.koikoi"
        began = time.monotonic()
        self.proc = p2p(
            lab, "host", tmp_path, "host", "host", *COMMON, "--bot-seed", str(n),
            "--rounds", "1", "--name", "Alice", "--record", str(self.record), *extra,
        )  # fmt: skip
        self.listening = self.proc.wait_event("listening")
        self.to_invite = time.monotonic() - began
        self.reach: dict[str, Any] = self.proc.wait_event("reachability")
        self.invite = str(self.listening["invite"])


def join(lab: Lab, side: str, tmp_path: Path, n: int, target: str) -> tuple[HonestProcess, Path]:
    record = tmp_path / f"{side}{n}.koikoi"
    proc = p2p(
        lab, side, tmp_path, side, "join", target, *COMMON, "--bot-seed", str(n + 100),
        "--name", {"lan": "Bob", "net": "Carol"}[side], "--record", str(record),
    )  # fmt: skip
    return proc, record


def play(host: Hosting, joiner: HonestProcess, jrec: Path) -> tuple[Outcome, Outcome, float]:
    """Both to the end; the joiner's time from its first dial (its ``connecting``
    event: the program has started) to its ``handshake`` event."""
    try:
        joiner.wait_event("connecting")
        began = time.monotonic()
        joiner.wait_event("handshake")
        to_handshake = time.monotonic() - began
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
    return h, j, to_handshake


def test_one_invite_works_on_the_lan_and_from_the_internet(lab: Lab, tmp_path: Path) -> None:
    """The plain invite carries the LAN address and the router's mapped one; a friend
    on the LAN and a friend on the internet both play a match with it, and the
    router forwards nothing once the host has exited."""
    for n, side in enumerate(("lan", "net")):
        host = Hosting(lab, tmp_path, n)
        assert host.reach["internet"] is True, host.reach
        assert host.reach["address"] == ROUTER_WAN
        assert host.reach["text"].startswith(f"reachable from the internet at {ROUTER_WAN}:")
        addresses = [a.host for a in decode_invite(host.invite).addresses]
        assert addresses[0] == HOST_IP and ROUTER_WAN in addresses, addresses
        assert lab.redirects(), "the router forwards the port while hosting"
        figure(
            f"host -> invite with a router ({host.reach['method']}): {host.to_invite:.2f} s "
            f"(port mapping took {host.reach['waited']:.2f} s); invite carries "
            f"{len(addresses)} addresses {addresses}"
        )
        joiner, jrec = join(lab, side, tmp_path, n, host.invite)
        h, j, to_handshake = play(host, joiner, jrec)
        where = {"lan": f"on the LAN ({LAN_FRIEND_IP})", "net": f"from {NET_FRIEND_IP}"}[side]
        connected = next(e for e in h.events if e["event"] == "connected")
        expected_peer = LAN_FRIEND_IP if side == "lan" else NET_FRIEND_IP
        assert connected["address"] == expected_peer  # the internet friend came through NAT
        figure(f"join -> handshake {where}: {to_handshake:.2f} s (from the first dial)")
        assert lab.redirects() == "", "the mapping is gone after the host exited"


def test_ipv6_reaches_the_host_when_the_router_lets_it(lab: Lab, tmp_path: Path) -> None:
    """With global IPv6 the invite carries the host's IPv6 address; a friend on the
    internet plays over it once the router's IPv6 firewall allows the port (the
    docs' advice), and the race does not wait for the other addresses."""
    lab.enable_ipv6(allow_port=47474)
    host = Hosting(lab, tmp_path, 21)
    addresses = [a.host for a in decode_invite(host.invite).addresses]
    assert addresses == [HOST_IP, HOST_IP6, ROUTER_WAN], addresses
    assert host.reach["ipv6"] == [f"[{HOST_IP6}]:47474"]
    # the friend dials the invite's IPv6 address alone: with the whole invite the race
    # may just as well be won through the router's IPv4 mapping (both work; which one
    # finishes its handshake first is timing), and this test is about the IPv6 path
    whole = decode_invite(host.invite)
    only6 = encode_invite([a for a in whole.addresses if a.host == HOST_IP6], whole.secret)
    joiner, jrec = join(lab, "net", tmp_path, 21, only6)
    h, _, to_handshake = play(host, joiner, jrec)
    connected = [e["address"] for e in h.events if e["event"] == "connected"]
    assert connected == [NET_FRIEND_IP6], connected  # came over IPv6, no NAT
    figure(f"join -> handshake over IPv6 from the internet: {to_handshake:.2f} s")


def test_upnp_alone_maps_and_unmaps(lab: Lab, tmp_path: Path) -> None:
    """A router with UPnP IGD only (NAT-PMP and PCP off): mapped by UPnP; Ctrl-C while
    waiting for a friend removes the mapping."""
    lab.stop_miniupnpd()
    lab.start_miniupnpd(upnp=True, natpmp=False)
    host = Hosting(lab, tmp_path, 7)
    try:
        assert host.reach["method"] == "UPnP" and host.reach["internet"] is True, host.reach
        assert host.reach["text"] == f"reachable from the internet at {ROUTER_WAN}:47474 (UPnP)"
        assert "47474" in lab.redirects()
        figure(
            f"host -> invite with a UPnP-only router: {host.to_invite:.2f} s "
            f"(port mapping took {host.reach['waited']:.2f} s)"
        )
        host.proc.proc.send_signal(signal.SIGINT)
        out = host.proc.wait_exit(30)
    finally:
        host.proc.kill()
    assert out.code == 130, out.stderr
    assert lab.redirects() == "", "Ctrl-C removed the mapping"


def test_without_port_mapping_the_lan_friend_still_joins(bare_lab: Lab, tmp_path: Path) -> None:
    """No miniupnpd: the host says "this network only" within the bound, the LAN
    friend plays, and the internet friend is shown an answer to send back."""
    lab = bare_lab
    host = Hosting(lab, tmp_path, 3)
    assert host.reach["internet"] is False
    assert host.reach["text"] == (
        "reachable on this network only: the router does not offer port mapping; "
        "see docs/network.md"
    )
    assert host.reach["waited"] <= BOUND + 0.5
    figure(
        f"host -> invite without a router that answers: {host.to_invite:.2f} s "
        f"(port mapping gave up after {host.reach['waited']:.2f} s)"
    )
    addresses = [a.host for a in decode_invite(host.invite).addresses]
    assert addresses == [HOST_IP]
    # the internet friend cannot reach the LAN address: since hole punching, it is
    # shown an answer for the host instead of a dead end (tests/lab/test_natlab.py plays it)
    stranger, _ = join(lab, "net", tmp_path, 9, host.invite)
    answer = stranger.wait_event("answer")
    assert answer["answer"].startswith("koia-")
    stranger.kill()
    joiner, jrec = join(lab, "lan", tmp_path, 3, host.invite)
    _, _, to_handshake = play(host, joiner, jrec)
    figure(f"join -> handshake on the LAN, no router: {to_handshake:.2f} s")


def test_join_with_the_code_alone_on_the_lan(lab: Lab, tmp_path: Path) -> None:
    """``p2pkoikoi join 7-crossover-clockwork`` with no address: the LAN friend finds
    the plain host by multicast DNS, proves the code (PAKE) and plays to the end."""
    host = Hosting(lab, tmp_path, 11)
    code = str(host.listening["code"])
    joiner, jrec = join(lab, "lan", tmp_path, 11, code)
    joiner.wait_event("searching")
    searching = time.monotonic()
    found = joiner.wait_event("found")
    found_after = time.monotonic() - searching
    assert found["hosts"] == [{"name": "Alice", "rules": "online"}]
    _, j, then_handshake = play(host, joiner, jrec)
    figure(
        f"join CODE on the LAN: host found by mDNS {found_after:.2f} s after the search began "
        f"(the host had just begun announcing), handshake {then_handshake:.2f} s after dialing"
    )


ANNOUNCER = """
import sys, trio
from p2pkoikoi.transport.lookup.mdns import announce
async def main():
    async with announce(name="Alice", rules="nintendo", number=42, port=47474,
                        addresses=[sys.argv[1]]) as ann:
        done = await trio.to_thread.run_sync(ann.registered.wait, 10)
        print("announced" if done else "no mdns", flush=True)
        sys.stdin.readline()  # until the test says stop
    print("withdrawn", flush=True)
trio.run(main)
"""
FINDER = """
import json, sys, time, trio
from p2pkoikoi.transport.lookup.mdns import find_host
began = time.monotonic()
found = trio.run(find_host, int(sys.argv[1]), float(sys.argv[2]))
print(json.dumps({"took": time.monotonic() - began,
                  "found": [[w.name, w.rules, w.number, list(w.addresses), w.port] for w in found]}))
"""


def find(lab: Lab, number: int, wait: float) -> dict[str, Any]:
    import json

    r = lab.run("lan", sys.executable, "-c", FINDER, str(number), str(wait))
    return dict(json.loads(r.stdout))


def test_multicast_dns_finds_the_waiting_host_and_forgets_it(bare_lab: Lab, tmp_path: Path) -> None:
    """A host announcing on the LAN bridge is found from another namespace by its
    code's number (and not by another number); once withdrawn it is gone."""
    import subprocess

    lab = bare_lab
    host = subprocess.Popen(
        lab.exec("host", sys.executable, "-c", ANNOUNCER, HOST_IP),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None and host.stdin is not None
        assert host.stdout.readline().strip() == "announced", host.stderr
        got = find(lab, 42, 5.0)
        assert got["found"] == [["Alice", "nintendo", 42, [HOST_IP], 47474]]
        figure(f"join CODE -> host found by multicast DNS: {got['took']:.2f} s")
        assert find(lab, 41, 1.0)["found"] == []
        host.stdin.write("\n")
        host.stdin.flush()
        assert host.stdout.readline().strip() == "withdrawn"
        assert host.wait(10) == 0
    finally:
        host.kill()
        host.wait()
    assert find(lab, 42, 1.0)["found"] == [], "the goodbye withdrew the announcement"


RENEWER = """
import sys, time, trio
from p2pkoikoi.transport.nat.portmap import open_port_mapping
async def main():
    async with open_port_mapping(47474, lifetime=int(sys.argv[1]), renew_floor=float(sys.argv[3]) if len(sys.argv) > 3 else 1) as reach:
        print(reach.text, flush=True)
        await trio.sleep(float(sys.argv[2]))
        print("still hosting", flush=True)
        sys.stdin.readline()
trio.run(main)
"""


@pytest.mark.parametrize("upnp_only", [True, False], ids=["UPnP", "PCP"])
def test_the_mapping_is_renewed_while_hosting(lab: Lab, upnp_only: bool) -> None:
    """A 6-second lease, renewed every 3 s: still forwarded after 9 s, gone at exit."""
    import subprocess

    if upnp_only:
        lab.stop_miniupnpd()
        lab.start_miniupnpd(upnp=True, natpmp=False)
    proc = subprocess.Popen(
        lab.exec("host", sys.executable, "-c", RENEWER, "6", "9"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        assert line.startswith("reachable from the internet"), (line, proc.stderr)
        assert proc.stdout.readline().strip() == "still hosting"
        assert "47474" in lab.redirects(), "the 6 s lease was renewed"
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(15) == 0
    finally:
        proc.kill()
        proc.wait()
    assert lab.redirects() == ""


FLOODER = """
import sys, trio
from contextlib import AsyncExitStack
from p2pkoikoi.transport.lookup.mdns import announce
async def main():
    async with AsyncExitStack() as stack:
        anns = []
        for i in range(int(sys.argv[2])):
            addresses = [sys.argv[1]] + [f"127.0.0.{k}" for k in range(1, 8)]
            anns.append(await stack.enter_async_context(announce(
                name=f"Mallory{i}", rules="online", number=42, port=6379,
                addresses=addresses)))
        ok = [await trio.to_thread.run_sync(a.registered.wait, 20) for a in anns]
        print("announced" if all(ok) else "no mdns", flush=True)
        sys.stdin.readline()
trio.run(main)
"""


def test_a_multicast_dns_flood_is_capped_and_loopback_is_not_dialed(
    bare_lab: Lab, tmp_path: Path
) -> None:
    """Six hosts announce code 42, each with its LAN address and seven loopback ones
    (issue 22, item 11): the joiner of ``42-...`` dials at most four hosts, none of
    the loopback addresses, and says so."""
    import subprocess

    from p2pkoikoi.session.codes.code import CODE_SECRET_BYTES, encode_code
    from p2pkoikoi.transport.open.addresses import MAX_MDNS_ADDRESSES, MAX_MDNS_HOSTS

    lab = bare_lab
    flood = subprocess.Popen(
        lab.exec("host", sys.executable, "-c", FLOODER, HOST_IP, "6"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert flood.stdout is not None and flood.stdin is not None
        assert flood.stdout.readline().strip() == "announced", flood.stderr
        joiner = p2p(
            lab, "lan", tmp_path, "lan", "join", encode_code(42, bytes(CODE_SECRET_BYTES)), *COMMON[:3],
            "--timeout", "3", "--name", "Bob",
        )  # fmt: skip
        connecting = joiner.wait_event("connecting")
        out = joiner.wait_exit(LIMIT)
    finally:
        flood.kill()
        flood.wait()
    dialed = connecting["addresses"]
    assert dialed and len(dialed) <= MAX_MDNS_ADDRESSES, dialed
    assert not [a for a in dialed if a.startswith("127.")], dialed
    texts = [e.get("text", "") for e in out.events if e["event"] == "warning"]
    assert any(f"trying {MAX_MDNS_HOSTS} of them" in t for t in texts), texts
    assert any("an address on this computer itself: not dialed" in t for t in texts), texts
    found = [e for e in out.events if e["event"] == "found"]
    assert len(found[0]["hosts"]) == MAX_MDNS_HOSTS
