"""Asking the home router to open the host's port: UPnP IGD, PCP and NAT-PMP.

Theory of operation
-------------------
:func:`open_port_mapping` is an async context manager around one hosting:

* On entry it asks the router, **in parallel**, by UPnP IGD and by PCP,
  falling back to NAT-PMP (how: :mod:`p2pkoikoi.transport.nat.router`).
  Everything is bounded by ``bound`` (:data:`BOUND`, 1.8 s), so the invite
  appears within 3 s even when no router answers: a UPnP thread still
  searching then is abandoned and told to remove any mapping it makes later.
* The first protocol to map the port wins; a second success is deleted at
  once (one open port, not two).
* It yields a :class:`Reachability`: the one line the host reads, and the
  mapped :class:`Candidate` for the invite.
* While the block runs, a task renews the mapping at half its lifetime.
* On exit -- the match ended, an error, Ctrl-C (``KeyboardInterrupt`` unwinds
  through here) -- the mapping is deleted under a shielded 2 s bound.  A
  process killed outright leaves it to expire with its lifetime (1 hour).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, Final

import trio

from p2pkoikoi.transport.nat.router import (
    LIFETIME,
    Mapping,
    PortMapError,
    Upnp,
    map_pcp_natpmp,
    unmap_pcp_natpmp,
)
from p2pkoikoi.transport.open.addresses import Candidate, host_candidates, is_public

#: how long the host waits for any router before showing the invite: a UPnP router
#: answers the search in about 1.1 s (miniupnpc's shortest search, MX=1), PCP and
#: NAT-PMP in milliseconds; with the program's start that keeps the invite within 3 s
BOUND: Final = 1.8
DOCS: Final = "docs/network.md"


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


# ------------------------------------------------------------------ the two
async def _first_mapping(
    port: int, bound: float, upnp: Upnp, lifetime: int = LIFETIME
) -> tuple[Mapping | None, list[str]]:
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
            m = await map_pcp_natpmp(port, lifetime)
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
    (:func:`~p2pkoikoi.transport.open.addresses.host_candidates`) and how long asking the
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
    port: int,
    *,
    enabled: bool = True,
    bound: float = BOUND,
    lifetime: int = LIFETIME,
    renew_floor: float = 30.0,
) -> AsyncIterator[Reachability]:
    """Map ``port`` for the block (see the module's theory of operation).

    ``lifetime`` is asked for; renewals come at half of what the router grants,
    never more often than every ``renew_floor`` seconds (tests shorten both)."""
    if not enabled:
        yield Reachability(False, reason=TURNED_OFF)
        return
    upnp = Upnp(port, lifetime)
    mapping, _why = await _first_mapping(port, bound, upnp, lifetime)
    reach = _reachability(mapping)
    if mapping is None:
        yield reach
        return
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_renew, mapping, upnp, renew_floor)
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


async def _renew(mapping: Mapping, upnp: Upnp, floor: float = 30.0) -> None:
    """Renew at half the granted lifetime for as long as the host runs."""
    if mapping.lifetime <= 0:
        return  # permanent (UPnP without leases): removed on exit
    while True:
        await trio.sleep(max(mapping.lifetime / 2, floor))
        # a failed renewal must not end the match: the next one may work, and the
        # mapping lives on until its lifetime ends
        with suppress(Exception), trio.move_on_after(10):
            if mapping.method == "UPnP":
                await trio.to_thread.run_sync(upnp.renew, abandon_on_cancel=True)
            else:
                await map_pcp_natpmp(mapping.internal_port, mapping.lifetime, nonce=mapping.nonce)
