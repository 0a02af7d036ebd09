"""Talking to the home router: one TCP port mapping by UPnP IGD, PCP or NAT-PMP.

The protocols' mechanics, with no policy (which to ask, how long to wait, what
the host is told: :mod:`p2pkoikoi.transport.nat.portmap`):

* **UPnP IGD** through ``miniupnpc`` (the miniupnpd author's C library, with
  wheels); its calls block, so :class:`Upnp` runs in a worker thread and takes
  a lock-protected "abandoned" flag, so that a thread the host stopped waiting
  for never leaves a mapping behind.  ``async-upnp-client`` was the other
  candidate: asyncio and aiohttp, a second event loop beside trio for one SOAP
  call an hour.
* **PCP** (RFC 6887), falling back to **NAT-PMP** (RFC 6886) when the router
  answers "unsupported version": our sans-I/O codec
  (:mod:`p2pkoikoi.transport.nat.natpmp`) over a trio UDP socket *connected* to the
  default gateway, so a gateway without the service answers at once (ICMP
  port unreachable, ECONNREFUSED) instead of costing the whole wait.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import trio

from p2pkoikoi.transport.nat import natpmp

#: the lifetime asked for (seconds); renewed at half of what the router grants
LIFETIME: Final = 3600
DESCRIPTION: Final = "p2pkoikoi"


class PortMapError(Exception):
    """The router answered but would not map the port (its words)."""


@dataclass(frozen=True, slots=True)
class Mapping:
    """A port the router forwards to us: ``address:external_port`` -> our ``internal_port``."""

    method: str  # "UPnP", "PCP" or "NAT-PMP"
    address: str
    external_port: int
    internal_port: int
    lifetime: int  # seconds granted; 0 = until removed (UPnP routers that refuse leases)
    nonce: bytes = b""  # PCP: the mapping's nonce (needed to renew or delete it)


# ------------------------------------------------------------------ gateway
def default_gateway(route_table: Path = Path("/proc/net/route")) -> str | None:
    """The IPv4 default gateway (Linux: /proc/net/route; None elsewhere or without one)."""
    try:
        lines = route_table.read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        cols = line.split()
        if len(cols) > 3 and cols[1] == "00000000" and int(cols[3], 16) & 2:  # RTF_GATEWAY
            return str(ipaddress.IPv4Address(struct.pack("<I", int(cols[2], 16))))
    return None


def local_address_towards(gateway: str) -> str:
    """Our address on the interface that reaches ``gateway`` (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((gateway, natpmp.PORT))
        return str(s.getsockname()[0])


# ------------------------------------------------------------- PCP, NAT-PMP
async def _exchange(
    sock: trio.socket.SocketType, request: bytes, decode: Callable[[bytes], Any]
) -> Any:
    """Send ``request``, resend after 250 ms doubling (RFC 6886 3.1), until ``decode`` accepts
    a reply from the gateway; the caller's deadline bounds it."""
    wait = 0.25
    while True:
        await sock.send(request)
        with trio.move_on_after(wait):
            while True:
                data = await sock.recv(1100)  # connected: from the gateway only
                with suppress(natpmp.PortMapProtocolError):
                    return decode(data)
        wait *= 2


async def map_pcp_natpmp(
    port: int, lifetime: int = LIFETIME, gateway: str | None = None, nonce: bytes = b""
) -> Mapping:
    """Map TCP ``port`` by PCP, or NAT-PMP if the router only speaks that.

    Raises :class:`OSError` (no gateway, unreachable) or :class:`PortMapError`
    (the router said no); the caller bounds the time.  ``nonce`` renews a PCP
    mapping.
    """
    gw = gateway or default_gateway()
    if gw is None:
        raise PortMapError("no default gateway")
    client = local_address_towards(gw)
    nonce = nonce or os.urandom(12)
    with trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        # connected: a gateway with no such service answers ICMP "port unreachable",
        # which a connected socket reports at once (ECONNREFUSED) instead of a wait
        await sock.connect((gw, natpmp.PORT))
        pcp = await _exchange(
            sock,
            natpmp.encode_pcp_map(client, nonce, port, port, lifetime),
            natpmp.decode_pcp_map,
        )
        if pcp.result == natpmp.UNSUPP_VERSION:
            mapped = await _exchange(
                sock, natpmp.encode_natpmp_map(port, port, lifetime), natpmp.decode_natpmp_map
            )
            if mapped.result != 0:
                raise PortMapError(f"NAT-PMP: {natpmp.describe_result('NAT-PMP', mapped.result)}")
            ext = await _exchange(
                sock, natpmp.encode_natpmp_external(), natpmp.decode_natpmp_external
            )
            if ext.result != 0:
                raise PortMapError(f"NAT-PMP: {natpmp.describe_result('NAT-PMP', ext.result)}")
            return Mapping("NAT-PMP", ext.address, mapped.external_port, port, mapped.lifetime)
        if pcp.result != 0:
            raise PortMapError(f"PCP: {natpmp.describe_result('PCP', pcp.result)}")
        return Mapping("PCP", pcp.address, pcp.external_port, port, pcp.lifetime, nonce)


async def unmap_pcp_natpmp(mapping: Mapping, gateway: str | None = None) -> None:
    """Delete a PCP or NAT-PMP mapping (lifetime 0); one try per 250 ms until the deadline."""
    gw = gateway or default_gateway()
    if gw is None:
        return
    client = local_address_towards(gw)
    with trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        await sock.connect((gw, natpmp.PORT))
        if mapping.method == "PCP":
            req = natpmp.encode_pcp_map(client, mapping.nonce, mapping.internal_port, 0, 0)
            await _exchange(sock, req, natpmp.decode_pcp_map)
        else:
            req = natpmp.encode_natpmp_map(mapping.internal_port, 0, 0)
            await _exchange(sock, req, natpmp.decode_natpmp_map)


# --------------------------------------------------------------------- UPnP
SSDP_GROUP: Final = ("239.255.255.250", 1900)


def _multicast_route() -> bool:
    """Whether this host has a route to the SSDP group.

    Without one miniupnpc's search fails at once, and the C library says so with
    ``perror`` on the process's standard error, which would write over the table.
    Connecting a UDP socket sends nothing and asks the kernel for the route.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(SSDP_GROUP)
        except OSError:
            return False
    return True


@dataclass
class Upnp:
    """One UPnP IGD conversation, run in a worker thread (miniupnpc blocks).

    ``lock`` orders the thread's "map" against the host's "stop waiting": a
    thread abandoned before it maps does not map; one that mapped before is
    told to delete its mapping unless that is the very port the winner holds
    (the router keeps one forwarding per port, whoever asked for it).
    """

    port: int
    lifetime: int = LIFETIME
    lock: threading.Lock = field(default_factory=threading.Lock)
    abandoned: bool = False
    client: Any = None
    mapping: Mapping | None = None

    def map(self) -> Mapping:
        try:
            import miniupnpc  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise PortMapError("UPnP: the miniupnpc library is not installed") from None
        if not _multicast_route():
            raise PortMapError("UPnP: no route to the SSDP multicast group")
        u = miniupnpc.UPnP()
        u.discoverdelay = 1000  # ms; miniupnpc's floor (MX=1): no answer costs it 4 s
        try:
            try:
                found = u.discover()
            except Exception:  # miniupnpc says "Success" (errno 0) when nobody answered
                found = 0
            if found == 0:
                raise PortMapError("UPnP: no router answered")
            u.selectigd()
            external = str(u.externalipaddress())
            with self.lock:
                if self.abandoned:
                    raise PortMapError("UPnP: too late")
                lease = self._add(u)
                self.client = u
                self.mapping = Mapping("UPnP", external, self.port, self.port, lease)
                return self.mapping
        except PortMapError:
            raise
        except Exception as exc:  # miniupnpc raises bare Exception with the router's words
            raise PortMapError(f"UPnP: {exc}") from None

    def _add(self, u: Any) -> int:
        """Add the mapping; the lease granted (0 where the router takes permanent ones only)."""
        for lease in (self.lifetime, 0):  # IGDv1 routers may refuse leases (error 725)
            try:
                u.addportmapping(self.port, "TCP", u.lanaddr, self.port, DESCRIPTION, "", lease)
            except Exception:
                if lease == 0:
                    raise
                continue
            return lease
        raise AssertionError("unreachable")

    def abandon(self, winner: Mapping | None) -> None:
        """The host stopped waiting with ``winner``: a later or losing mapping is removed."""
        with self.lock:
            self.abandoned = True
            m = self.mapping
            if m is not None and m is not winner:
                if winner is None or winner.external_port != m.external_port:
                    self.unmap()
                else:
                    self.mapping = None  # the same forwarding: the winner removes it

    def unmap(self) -> None:
        if self.client is not None and self.mapping is not None:
            with suppress(Exception):
                self.client.deleteportmapping(self.mapping.external_port, "TCP")
            self.mapping = None

    def renew(self) -> None:
        if self.client is not None and self.mapping is not None:
            self._add(self.client)
