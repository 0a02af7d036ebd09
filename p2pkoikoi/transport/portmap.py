"""Asking the home router to open the host's port: UPnP IGD, PCP and NAT-PMP.

Theory of operation
-------------------
:func:`open_port_mapping` is an async context manager around one hosting:

* On entry it asks the router, **in parallel**, by UPnP IGD (the
  ``miniupnpc`` library, from the author of the miniupnpd router daemon,
  blocking calls in a worker thread) and by PCP (RFC 6887), falling back to
  NAT-PMP (RFC 6886) when the router answers PCP with "unsupported version"
  (our own sans-I/O codec in :mod:`p2pkoikoi.transport.natpmp`, sent over a
  trio UDP socket to the default gateway).  Everything is bounded by
  ``bound`` (2.5 s), so the invite appears within 3 s even when no router
  answers: a UPnP thread still searching then is abandoned and told to remove
  any mapping it makes later.
* The first protocol to map the port wins; a second success is deleted at
  once (one open port, not two).
* It yields a :class:`Reachability`: the one line the host reads, and the
  mapped :class:`Candidate` for the invite.
* While the block runs, a task renews the mapping at half its lifetime.
* On exit -- the match ended, an error, Ctrl-C (``KeyboardInterrupt`` unwinds
  through here) -- the mapping is deleted under a shielded 2 s bound.  A
  process killed outright leaves it to expire with its lifetime (1 hour).

Why ``miniupnpc`` and not ``async-upnp-client``: the latter is asyncio and
aiohttp based and would need an asyncio loop beside trio for one SOAP call
an hour; miniupnpc is a small C library with wheels, and a thread is enough.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import trio

from p2pkoikoi.transport import natpmp
from p2pkoikoi.transport.addresses import Candidate, host_candidates, is_public

#: how long the host waits for any router before showing the invite: a UPnP router
#: answers the search in about 1.1 s (miniupnpc's shortest search, MX=1), PCP and
#: NAT-PMP in milliseconds; with the program's start that keeps the invite within 3 s
BOUND: Final = 1.8
#: the lifetime asked for (seconds); renewed at half of what the router grants
LIFETIME: Final = 3600
DESCRIPTION: Final = "p2pkoikoi"
DOCS: Final = "docs/network.md"


@dataclass(frozen=True, slots=True)
class Mapping:
    """A port the router forwards to us: ``address:external_port`` -> our ``internal_port``."""

    method: str  # "UPnP", "PCP" or "NAT-PMP"
    address: str
    external_port: int
    internal_port: int
    lifetime: int  # seconds granted; 0 = until removed (UPnP routers that refuse leases)
    nonce: bytes = b""  # PCP: the mapping's nonce (needed to renew or delete it)


@dataclass(frozen=True, slots=True)
class Reachability:
    """How a friend can reach this host: the host's one line and the invite's extra address."""

    internet: bool
    method: str = ""
    address: str = ""
    port: int = 0
    reason: str = ""  # why "this network only"
    machine_only: bool = False  # bound to loopback: not even the LAN

    @property
    def text(self) -> str:
        if self.internet:
            host = f"[{self.address}]" if ":" in self.address else self.address
            return f"reachable from the internet at {host}:{self.port} ({self.method})"
        if self.machine_only:
            return f"reachable from this machine only: {self.reason}"
        return f"reachable on this network only: {self.reason}; see {DOCS}"

    @property
    def candidate(self) -> Candidate | None:
        return Candidate(self.address, self.port, "router") if self.internet else None

    def to_event(self) -> dict[str, Any]:
        return {
            "event": "reachability",
            "internet": self.internet,
            "method": self.method or None,
            "address": self.address or None,
            "port": self.port or None,
            "text": self.text,
        }


NO_ROUTER: Final = "the router does not offer port mapping"
TURNED_OFF: Final = "port mapping is turned off (--no-port-mapping)"


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


class PortMapError(Exception):
    """The router answered but would not map the port (its words)."""


# --------------------------------------------------------------------- UPnP
@dataclass
class _Upnp:
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


# ------------------------------------------------------------------ the two
async def _first_mapping(port: int, bound: float, upnp: _Upnp) -> tuple[Mapping | None, list[str]]:
    """Both protocols at once for at most ``bound`` seconds: the first mapping, and why
    each protocol failed.  A loser's mapping of another port is deleted."""
    got: list[Mapping] = []
    why: list[str] = []
    done = trio.Event()
    pending = [2]

    def finished() -> None:
        pending[0] -= 1
        if got or pending[0] == 0:
            done.set()

    async def via_upnp() -> None:
        try:
            got.append(await trio.to_thread.run_sync(upnp.map, abandon_on_cancel=True))
        except PortMapError as exc:
            why.append(str(exc))
        finished()

    async def via_pcp() -> None:
        try:
            m = await map_pcp_natpmp(port)
        except (OSError, PortMapError) as exc:
            why.append(f"PCP/NAT-PMP: {exc}")
        else:
            if got and got[0].external_port != m.external_port:
                with trio.move_on_after(1):
                    await unmap_pcp_natpmp(m)
            elif not got:
                got.append(m)
        finished()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(via_upnp)
        nursery.start_soon(via_pcp)
        with trio.move_on_after(bound):
            await done.wait()
        nursery.cancel_scope.cancel()
    winner = got[0] if got else None
    with trio.move_on_after(1) as cs:
        cs.shield = True
        await trio.to_thread.run_sync(upnp.abandon, winner, abandon_on_cancel=True)
    return winner, why


def _reachability(mapping: Mapping | None) -> Reachability:
    if mapping is None:
        return Reachability(False, reason=NO_ROUTER)
    if not is_public(mapping.address):
        return Reachability(
            False,
            method=mapping.method,
            reason=(
                f"the router mapped the port ({mapping.method}) but its own address "
                f"{mapping.address} is not public: another NAT (carrier-grade NAT?) is "
                "in the way"
            ),
        )
    return Reachability(True, mapping.method, mapping.address, mapping.external_port)


def _unmappable(bind: str | None) -> Reachability | None:
    """A host bound to ``bind`` that no router mapping can help, and why (None: try)."""
    if not bind or bind.strip("[]") in ("0.0.0.0", "::"):
        return None
    try:
        ip = ipaddress.ip_address(bind.strip("[]"))
    except ValueError:
        return None
    if ip.is_loopback:
        return Reachability(False, reason=f"it listens on {ip} (--bind)", machine_only=True)
    if ip.version == 6:
        return Reachability(False, reason="it listens on one IPv6 address (--bind): no NAT")
    if ip.is_link_local:
        return Reachability(False, reason=f"it listens on the link-local address {ip} (--bind)")
    return None


@asynccontextmanager
async def open_reachability(
    port: int, *, bind: str | None, advertise: str | None, port_mapping: bool
) -> AsyncIterator[tuple[Reachability, list[Candidate], float]]:
    """For a host listening on ``port``: how it is reachable, the invite's candidates
    (:func:`~p2pkoikoi.transport.addresses.host_candidates`) and how long asking the
    router took; the mapping (if any) lives for the block."""
    began = trio.current_time()
    fixed = _unmappable(bind)
    if fixed is not None:
        yield fixed, host_candidates(port, bind=bind, advertise=advertise), 0.0
        return
    async with open_port_mapping(port, enabled=port_mapping) as reach:
        cands = host_candidates(port, bind=bind, advertise=advertise, mapped=reach.candidate)
        yield reach, cands, trio.current_time() - began


@asynccontextmanager
async def open_port_mapping(
    port: int, *, enabled: bool = True, bound: float = BOUND
) -> AsyncIterator[Reachability]:
    """Map ``port`` for the block (see the module's theory of operation)."""
    if not enabled:
        yield Reachability(False, reason=TURNED_OFF)
        return
    upnp = _Upnp(port)
    mapping, _why = await _first_mapping(port, bound, upnp)
    reach = _reachability(mapping)
    if mapping is None:
        yield reach
        return
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_renew, mapping, upnp)
            try:
                yield reach
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # the block's own error (Ctrl-C's KeyboardInterrupt, a KoiKoiError), not a
        # group of one: the CLI's dispatcher prints it as one line
        inner = group.exceptions
        if len(inner) == 1 and not isinstance(inner[0], BaseExceptionGroup):
            raise inner[0] from None
        raise
    finally:
        with trio.move_on_after(2) as cs:
            cs.shield = True
            with suppress(OSError, PortMapError, trio.TooSlowError):
                if mapping.method == "UPnP":
                    await trio.to_thread.run_sync(upnp.unmap, abandon_on_cancel=True)
                else:
                    await unmap_pcp_natpmp(mapping)


async def _renew(mapping: Mapping, upnp: _Upnp) -> None:
    """Renew at half the granted lifetime for as long as the host runs."""
    if mapping.lifetime <= 0:
        return  # permanent (UPnP without leases): removed on exit
    while True:
        await trio.sleep(max(mapping.lifetime / 2, 30))
        # a failed renewal must not end the match: the next one may work, and the
        # mapping lives on until its lifetime ends
        with suppress(Exception), trio.move_on_after(10):
            if mapping.method == "UPnP":
                await trio.to_thread.run_sync(upnp.renew, abandon_on_cancel=True)
            else:
                await map_pcp_natpmp(mapping.internal_port, mapping.lifetime, nonce=mapping.nonce)
