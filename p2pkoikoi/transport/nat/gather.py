"""Gathering a side's UDP candidates, and what its NAT is like.

Theory of operation
-------------------
:func:`gather` runs everything in parallel, within one bound (:data:`BOUND`,
1.8 s like the router's port mapping, so the invite or the answer is on the
screen within about 3 s even offline):

* the LAN IPv4 and global IPv6 addresses of the interfaces, with the match
  socket's port (host candidates, ``h``);
* the socket's *reflexive* address (``s``): a STUN binding request to each
  STUN server, sent from the match socket itself, since only that socket's
  mapping matters.  The servers' names are resolved within the same bound; a
  server that cannot be resolved or does not answer (no internet, as in CI)
  is skipped quietly.

What the servers saw tells the NAT's kind (:func:`nat_kind`): the same
address and port from two servers is an endpoint-independent mapping (the NAT
keeps one mapping for every destination: hole punching works); different
ports is a destination-dependent ("symmetric") mapping, which a check from
the other side can only reach if the *other* NAT lets unsolicited packets in.
A reflexive address equal to a local one means no NAT at all.

:class:`Keeper` re-asks one server every :data:`REFRESH` seconds while a host
waits: it keeps the mapping alive (carrier NATs forget idle UDP mappings
after about 30 s) and notices when it changes.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import trio

from p2pkoikoi.session.codes.answer import UdpCandidate
from p2pkoikoi.transport.errors import ConfigError
from p2pkoikoi.transport.nat.quic import Addr
from p2pkoikoi.transport.nat.udp import UdpEndpoint
from p2pkoikoi.transport.open.addresses import interface_addresses

BOUND: Final = 1.8
#: seconds between a waiting host's STUN refreshes (under the ~30 s a carrier NAT keeps
#: an idle UDP mapping); ``$P2PKOIKOI_STUN_REFRESH`` shortens it for tests
REFRESH: Final = 20.0
STUN_PORT: Final = 3478
#: public STUN servers asked unless ``--stun``/``--no-stun`` or the config file say
#: otherwise (each learns this machine's public address and port, nothing else)
DEFAULT_STUN: Final = (
    "stun.l.google.com:19302",
    "stun.cloudflare.com:3478",
    "stun.nextcloud.com:3478",
)


def parse_stun(text: str) -> tuple[str, int]:
    """``HOST[:PORT]`` or ``[V6]:PORT``: a STUN server (:class:`ConfigError` otherwise)."""
    t = text.strip()
    host, port = t, STUN_PORT
    if t.startswith("["):
        inner, _, rest = t[1:].partition("]")
        host = inner
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                raise ConfigError(f"--stun {text!r}: expected HOST:PORT")
            port = int(rest[1:])
    elif t.count(":") == 1:
        host, _, p = t.partition(":")
        if not p.isdigit():
            raise ConfigError(f"--stun {text!r}: the port is not a number")
        port = int(p)
    if not host or not 1 <= port <= 65535:
        raise ConfigError(f"--stun {text!r}: expected HOST:PORT with a port 1..65535")
    return host, port


@dataclass(frozen=True, slots=True)
class Gathered:
    candidates: tuple[UdpCandidate, ...]
    nat: str  # a letter of session.answer.NAT_KINDS
    seen: tuple[tuple[Addr, Addr], ...] = ()  # (server, reflexive address) per answer

    @property
    def reflexive(self) -> tuple[UdpCandidate, ...]:
        return tuple(c for c in self.candidates if c.kind == "s")


def local_candidates(port: int, *, v6: bool = True) -> list[UdpCandidate]:
    """This machine's LAN IPv4 and global IPv6 addresses with ``port`` (``h``)."""
    out: list[UdpCandidate] = []
    ips = interface_addresses()
    v4 = sorted(
        (ip for ip in ips if ip.version == 4 and not (ip.is_loopback or ip.is_link_local)),
        key=lambda ip: (not ip.is_private, int(ip)),
    )
    six = [
        ip
        for ip in ips
        if isinstance(ip, ipaddress.IPv6Address) and ip.is_global and ip.ipv4_mapped is None
    ]
    if v6:
        out += [UdpCandidate("h", str(ip), port) for ip in six]
    out += [UdpCandidate("h", str(ip), port) for ip in v4]
    return out[:6]


def nat_kind(local: Sequence[UdpCandidate], seen: Sequence[Addr], asked: bool) -> str:
    """The NAT letter (module docstring)."""
    if not asked:
        return "n"
    if not seen:
        return "u"
    if any((c.ip, c.port) == s for c in local for s in seen):
        return "o"
    return "e" if len(set(seen)) == 1 else "d"


async def _resolve(name: str, port: int) -> list[Addr]:
    try:
        ipaddress.ip_address(name)
        return [(name, port)]
    except ValueError:
        pass
    try:
        infos = await trio.socket.getaddrinfo(name, port, type=socket.SOCK_DGRAM)
    except OSError:
        return []
    out: list[Addr] = []
    for family, *_rest, sockaddr in infos:
        if family == socket.AF_INET:  # reflexive IPv4 is what NATs change
            out.append((str(sockaddr[0]), int(sockaddr[1])))
    return out[:1]


async def gather(
    ep: UdpEndpoint,
    servers: Sequence[tuple[str, int]],
    *,
    bound: float = BOUND,
    local: Sequence[UdpCandidate] | None = None,
) -> Gathered:
    """Every candidate of ``ep``'s socket within ``bound`` (module docstring)."""
    mine = list(local if local is not None else local_candidates(ep.port, v6=ep.v6))
    seen: list[tuple[Addr, Addr]] = []

    async def ask(name: str, port: int) -> None:
        for addr in await _resolve(name, port):
            got = await ep.stun_query(addr, bound)
            if got is not None:
                seen.append((addr, got))

    with trio.move_on_after(bound):
        async with trio.open_nursery() as nursery:
            for name, port in servers:
                nursery.start_soon(ask, name, port)
    refl = [a for _, a in seen]
    out = list(mine)
    for ip, port in dict.fromkeys(refl):
        c = UdpCandidate("s", ip, port)
        if all((m.ip, m.port) != (ip, port) for m in out):
            out.append(c)
    return Gathered(tuple(out[:8]), nat_kind(mine, refl, bool(servers)), tuple(seen))


def symmetric_text(who: str = "your") -> str:
    return (
        f'{who} network changes the UDP port for every destination (a "symmetric" NAT): '
        "direct play works only when the other network lets unsolicited packets in. What "
        "helps: let the other player host, turn on UPnP or NAT-PMP on the router, or use IPv6"
    )


class Keeper:
    """Re-asks a STUN server while a host waits (module docstring)."""

    def __init__(
        self, ep: UdpEndpoint, server: Addr, current: Addr, interval: float | None = None
    ) -> None:
        if interval is None:
            try:
                interval = float(os.environ.get("P2PKOIKOI_STUN_REFRESH", REFRESH))
            except ValueError:
                interval = REFRESH
        self.ep, self.server, self.current, self.interval = ep, server, current, interval
        self.changed = trio.Event()

    async def run(self, notify: object) -> None:
        while True:
            await trio.sleep(self.interval)
            got = await self.ep.stun_query(self.server, 3.0)
            if got is not None and got != self.current:
                old, self.current = self.current, got
                if callable(notify):
                    notify(
                        {
                            "event": "warning",
                            "text": f"your public UDP address changed from {old[0]}:{old[1]} "
                            f"to {got[0]}:{got[1]}: the invite's reflexive address no longer "
                            "works; a friend needs to send an answer",
                            "reflexive": f"{got[0]}:{got[1]}",
                        }
                    )
