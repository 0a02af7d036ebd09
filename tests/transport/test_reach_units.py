"""The pieces of reaching a friend, without a network: candidate addresses, the
Happy Eyeballs race, the NAT-PMP/PCP codec, the gateway, the mDNS TXT record.
(The real routers and multicast DNS are in tests/lab/test_netlab.py.)"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
import trio
import trio.testing

from p2pkoikoi.transport.lookup.mdns import decode_txt, instance_name, txt_record
from p2pkoikoi.transport.nat import natpmp
from p2pkoikoi.transport.nat.portmap import Reachability
from p2pkoikoi.transport.nat.router import default_gateway
from p2pkoikoi.transport.open.addresses import MAX_CANDIDATES, Candidate, host_candidates, is_public
from p2pkoikoi.transport.open.race import STAGGER, AllAttemptsFailed, race

IPS = [
    ipaddress.ip_address(a)
    for a in (
        "127.0.0.1",
        "::1",
        "169.254.3.4",
        "fe80::1",
        "203.0.113.9",  # a public-ish address on an interface (a VPS): after the LAN ones
        "192.168.1.20",
        "2001:db8::5",  # documentation: not global
        "2a01:4f8::1234",
        "fd00::7",  # unique local: not advertised
    )
]


# ---------------------------------------------------------------- candidates
def test_candidates_skip_loopback_and_link_local_and_order_lan_first() -> None:
    got = host_candidates(47474, addresses=IPS)
    assert [c.address for c in got] == ["192.168.1.20", "203.0.113.9", "2a01:4f8::1234"]
    assert {c.port for c in got} == {47474}


def test_the_mapped_address_comes_last_and_survives_the_cap() -> None:
    many = [ipaddress.ip_address(f"10.0.0.{i}") for i in range(1, 20)]
    mapped = Candidate("11.22.33.1", 50000, "router")
    got = host_candidates(47474, addresses=many, mapped=mapped)
    assert len(got) == MAX_CANDIDATES and got[-1] == mapped


def test_a_concrete_bind_is_the_one_address_even_loopback() -> None:
    assert host_candidates(5, bind="127.0.0.1", addresses=IPS) == [
        Candidate("127.0.0.1", 5, "bind")
    ]
    assert host_candidates(5, bind="[::1]", addresses=IPS)[0].address == "::1"


def test_bind_any_family_and_advertise() -> None:
    v4 = host_candidates(5, bind="0.0.0.0", addresses=IPS)
    v6 = host_candidates(5, bind="::", addresses=IPS)
    assert all(":" not in c.address for c in v4) and all(":" in c.address for c in v6)
    adv = host_candidates(5, advertise="koi.example.org", addresses=IPS)
    assert adv[0] == Candidate("koi.example.org", 5, "advertise")


def test_no_network_at_all_falls_back_to_loopback() -> None:
    lo = [ipaddress.ip_address("127.0.0.1")]
    assert host_candidates(5, addresses=lo) == [Candidate("127.0.0.1", 5, "loopback")]


def test_public_means_global() -> None:
    assert is_public("11.22.33.1")
    for private in ("10.1.2.3", "100.64.0.1", "192.0.2.1", "fd00::1", "nonsense"):
        assert not is_public(private)


# ---------------------------------------------------------------------- race
def _clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


def test_a_silent_address_costs_the_stagger_only() -> None:
    async def attempt(c: str) -> str:
        if c == "silent":
            await trio.sleep_forever()
        await trio.sleep(0.01)
        return c

    async def main() -> tuple[tuple[str, str], float]:
        t = trio.current_time()
        got = await race(["silent", "good"], attempt, reason=str)
        return got, trio.current_time() - t

    got, took = trio.run(main, clock=_clock())
    assert got == ("good", "good")
    assert took == pytest.approx(STAGGER + 0.01)


def test_a_failed_address_starts_the_next_at_once() -> None:
    async def attempt(c: str) -> str:
        if c == "refused":
            raise ConnectionRefusedError("Connection refused")
        return c

    async def main() -> float:
        t = trio.current_time()
        assert await race(["refused", "good"], attempt, reason=str) == ("good", "good")
        return trio.current_time() - t

    assert trio.run(main, clock=_clock()) == 0


def test_the_first_to_finish_wins_and_late_results_are_discarded() -> None:
    discarded: list[str] = []

    async def attempt(c: str) -> str:
        await trio.sleep({"slow": 1.0, "fast": 0.1}[c])
        return c

    async def discard(x: str) -> None:
        discarded.append(x)

    async def main() -> tuple[str, str]:
        return await race(["slow", "fast"], attempt, reason=str, discard=discard)

    assert trio.run(main, clock=_clock()) == ("fast", "fast")
    assert discarded == []  # the slow one was cancelled, not finished


def test_all_failed_names_each_address_and_why() -> None:
    async def attempt(c: Candidate) -> None:
        raise OSError(f"{c.source} says no")

    cands = [Candidate("10.0.0.2", 1, "lan"), Candidate("2a01::1", 1, "ipv6")]

    async def main() -> None:
        await race(cands, attempt, reason=str)

    with pytest.raises(AllAttemptsFailed) as info:
        trio.run(main, clock=_clock())
    assert str(info.value) == (
        "cannot reach the host at any address it gave "
        "(10.0.0.2:1: lan says no; [2a01::1]:1: ipv6 says no)"
    )
    assert "\n" not in str(info.value)


# ------------------------------------------------------------ NAT-PMP / PCP
NONCE = bytes(range(12))
# RFC 6886 3.3 and RFC 6887 11.1 layouts, written out field by field
PCP_MAP_REQUEST = bytes.fromhex(
    "02 01 0000 00000e10"  # version 2, MAP, reserved, lifetime 3600
    "00000000000000000000ffff0a42000a"  # client 10.66.0.10 (IPv4-mapped)
    "000102030405060708090a0b"  # nonce
    "06 000000 b972 b972"  # TCP, reserved, internal 47474, suggested external 47474
    "00000000000000000000ffff00000000"  # suggested external address: any (0.0.0.0)
)
PCP_MAP_RESPONSE = bytes.fromhex(
    "02 81 00 00 00000e10 0000012c 000000000000000000000000"
    "000102030405060708090a0b 06 000000 b972 c350"
    "00000000000000000000ffff0b162101"  # 11.22.33.1
)


def test_pcp_map_vectors() -> None:
    req = natpmp.encode_pcp_map("10.66.0.10", NONCE, 47474, 47474, 3600)
    assert req == PCP_MAP_REQUEST and len(req) == 60
    got = natpmp.decode_pcp_map(PCP_MAP_RESPONSE)
    assert got == natpmp.MapResult(0, 300, 47474, 50000, 3600, "11.22.33.1", NONCE)


def test_pcp_to_a_natpmp_only_router_is_unsupported_version() -> None:
    reply = bytes.fromhex("00 81 0001 00000000")  # version 0: "I speak NAT-PMP"
    assert natpmp.decode_pcp_map(reply).result == natpmp.UNSUPP_VERSION


def test_natpmp_vectors() -> None:
    assert natpmp.encode_natpmp_external() == b"\x00\x00"
    assert natpmp.encode_natpmp_map(47474, 47474, 7200) == bytes.fromhex(
        "00 02 0000 b972 b972 00001c20"
    )
    assert natpmp.encode_natpmp_map(47474, 0, 0) == bytes.fromhex("00 02 0000 b972 0000 00000000")
    ext = natpmp.decode_natpmp_external(bytes.fromhex("00 80 0000 0000002a 0b162101"))
    assert ext == natpmp.ExternalAddress(0, 42, "11.22.33.1")
    m = natpmp.decode_natpmp_map(bytes.fromhex("00 82 0000 0000002a b972 c350 00000e10"))
    assert m == natpmp.MapResult(0, 42, 47474, 50000, 3600)
    refused = natpmp.decode_natpmp_map(bytes.fromhex("00 82 0002 0000002a b972 0000 00000000"))
    assert natpmp.describe_result("NAT-PMP", refused.result).startswith("not authorized")


def test_garbage_is_not_an_answer() -> None:
    for decode in (natpmp.decode_pcp_map, natpmp.decode_natpmp_external):
        with pytest.raises(natpmp.PortMapProtocolError):
            decode(b"\x07junk")


# ------------------------------------------------------------- gateway, lines
def test_default_gateway_from_the_route_table(tmp_path: Path) -> None:
    table = tmp_path / "route"
    table.write_text(
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
        "eth0\t0042420A\t00000000\t0001\t0\t0\t0\t00FFFFFF\n"
        "eth0\t00000000\t0100420A\t0003\t0\t0\t0\t00000000\n"
    )
    assert default_gateway(table) == "10.66.0.1"
    table.write_text("Iface\tDestination\tGateway\n")
    assert default_gateway(table) is None
    assert default_gateway(tmp_path / "missing") is None


def test_reachability_lines_and_event() -> None:
    up = Reachability(True, "UPnP", "11.22.33.1", 47474)
    assert up.text == "reachable from the internet at 11.22.33.1:47474 (UPnP)"
    assert up.to_event()["event"] == "reachability" and up.to_event()["internet"] is True
    down = Reachability(False, reason="the router does not offer port mapping")
    assert down.text == (
        "reachable on this network only: the router does not offer port mapping; "
        "see docs/network.md"
    )
    assert down.candidate is None and up.candidate == Candidate("11.22.33.1", 47474, "router")


# ------------------------------------------------------------------- mDNS TXT
def test_txt_record_round_trip_and_carries_no_secret() -> None:
    txt = txt_record("Alice", "online", 7)
    assert set(txt) == {"txtvers", "name", "rules", "code"}
    raw = {k.encode(): v.encode() for k, v in txt.items()}
    assert decode_txt(raw) == ("Alice", "online", 7)
    assert decode_txt({b"txtvers": b"9", b"code": b"7"}) is None


def test_instance_names_fit_one_dns_label() -> None:
    name = instance_name("花札" * 40, 123)
    label = name.split("._p2pkoikoi")[0]
    assert len(label.encode()) <= 63 and label.endswith(" (123)")
