"""Where a friend might reach this host: the addresses an invite lists.

Theory of operation
-------------------
The old guess resolved the host name, and on an ordinary Debian or Ubuntu
machine that gives ``127.0.1.1`` from /etc/hosts, then loopback: an invite a
friend on another machine can never use.  Instead we read the interfaces
themselves with ``ifaddr`` (the standard library can list interface *names*
but not their addresses without per-OS ioctls; ifaddr does it on Linux, the
BSDs, macOS and Windows, and it is already a dependency of ``zeroconf``, which
LAN discovery needs anyway).

An invite then carries *candidates*, best first:

1. every LAN IPv4 address (private ranges first: the friend on the same
   network is the common case and the fastest to try),
2. every global IPv6 address (no NAT: reachable from the internet when no
   firewall blocks the port),
3. the router's external address with the mapped port, when port mapping
   worked (:mod:`p2pkoikoi.transport.nat.portmap`).

Loopback and link-local addresses are never advertised unless the host is
bound to one (a link-local address needs a zone that means nothing on the
friend's machine; loopback is only this machine).  A machine with no network
at all gets ``127.0.0.1`` so that two terminals on it can still play.

The joiner races the candidates (:mod:`p2pkoikoi.transport.open.race`), so one
invite serves a friend on the LAN and one on the internet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

#: the port a host listens on unless told otherwise (unassigned by IANA)
DEFAULT_PORT: Final = 47474
#: the most addresses one invite carries (a laptop with docker bridges and
#: several IPv6 privacy addresses could list a dozen; the rest add length and
#: stagger delay, not reach)
MAX_CANDIDATES: Final = 6
#: the most hosts a short code's multicast DNS search dials, and addresses per host:
#: anybody on the network may announce, so one announcer cannot make the joiner dial
#: a hundred addresses of its choosing
MAX_MDNS_HOSTS: Final = 4
MAX_MDNS_ADDRESSES: Final = 12
_ANY: Final = ("", "0.0.0.0", "::")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One address a joiner may dial; ``source`` says where it came from."""

    address: str
    port: int
    source: str = "lan"  # "lan", "ipv6", "router" (mapped), "bind", "advertise", "mdns"

    def __str__(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}"


def interface_addresses() -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address on this machine's interfaces (no packet is sent)."""
    import ifaddr  # imported here: only hosts need it, and it reads the OS tables

    out: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            raw = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            try:
                out.append(ipaddress.ip_address(str(raw).split("%")[0]))
            except ValueError:
                continue
    return out


def _advertisable(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        # global only: a unique-local (fc00::/7) or site-local address is as
        # private as a LAN IPv4 one, which the friend on the LAN reaches anyway
        return ip.is_global and ip.ipv4_mapped is None
    return True


def host_candidates(
    port: int,
    *,
    bind: str | None = None,
    advertise: str | None = None,
    mapped: Candidate | None = None,
    addresses: Iterable[ipaddress.IPv4Address | ipaddress.IPv6Address] | None = None,
) -> list[Candidate]:
    """The addresses an invite lists for a host listening on ``port``, best first.

    ``addresses`` defaults to this machine's interfaces (tests pass their own).
    A concrete ``bind`` is the one address (loopback and link-local included:
    the user asked for it); ``bind="0.0.0.0"`` lists IPv4 only, ``"::"`` IPv6
    only, as the listener does.  ``advertise`` (a public name or address the
    user knows) comes first; ``mapped`` (the router's external address) last.
    """
    out: list[Candidate] = []
    if advertise:
        out.append(Candidate(advertise, port, "advertise"))
    bound = bind.strip("[]") if bind else ""
    if bound not in _ANY:
        out.append(Candidate(bound, port, "bind"))
    else:
        ips = list(interface_addresses() if addresses is None else addresses)
        v4 = [ip for ip in ips if ip.version == 4 and _advertisable(ip)]
        v6 = [ip for ip in ips if ip.version == 6 and _advertisable(ip)]
        v4.sort(key=lambda ip: (not ip.is_private, int(ip)))  # LAN ranges first
        if bound != "::":
            out += [Candidate(str(ip), port, "lan") for ip in v4]
        if bound != "0.0.0.0":
            out += [Candidate(str(ip), port, "ipv6") for ip in v6]
    if mapped is not None and bound in _ANY and bound != "::":
        out.append(mapped)
    out = dedupe(out)
    if len(out) > MAX_CANDIDATES:  # keep the mapped address: it is the internet's way in
        keep = [c for c in out if c.source == "router"]
        out = [c for c in out if c.source != "router"][: MAX_CANDIDATES - len(keep)] + keep
    if not out:  # no network at all: two terminals on this machine can still play
        out.append(Candidate("::1" if bound == "::" else "127.0.0.1", port, "loopback"))
    return out


def dedupe(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates in order, each (address, port) once."""
    seen: set[tuple[str, int]] = set()
    out: list[Candidate] = []
    for c in candidates:
        if (c.address, c.port) not in seen:
            seen.add((c.address, c.port))
            out.append(c)
    return out


def is_public(address: str) -> bool:
    """Whether ``address`` is reachable from the internet at large (not private,
    not carrier-grade NAT's 100.64.0.0/10, not a documentation range)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_global


def is_local_only(address: str) -> bool:
    """Whether ``address`` is a loopback (or link-local) IP: only this machine, or a
    zone the friend's machine does not share."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_link_local


def local_kind(address: str) -> str:
    """``"loopback"`` or ``"link-local"`` for an address only this machine (or this
    network link) has, ``""`` otherwise; ``localhost`` names count as loopback."""
    name = address.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return "loopback"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return ""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified:
        return "loopback"
    return "link-local" if ip.is_link_local else ""


def screen_invite(candidates: Sequence[Candidate]) -> tuple[list[Candidate], list[str]]:
    """An invite's addresses as the joiner dials them, and a warning for each it holds
    on this machine (loopback) or this link (link-local).

    A host puts such an address in its invite only when bound to it (``--bind``), and
    then it is the invite's one address; an invite from someone else that names
    loopback points the joiner at services on its own computer (a listener on port
    6379 received our hello).  So the first such address is still tried (two
    terminals on one machine), and the others are dropped.
    """
    out: list[Candidate] = []
    warnings: list[str] = []
    kept_local = False
    for c in candidates:
        kind = local_kind(c.address)
        if not kind:
            out.append(c)
            continue
        where = "this computer itself" if kind == "loopback" else "this network link only"
        if kept_local:
            warnings.append(
                f"the invite names {c}, a {kind} address ({where}), besides another: not dialed"
            )
            continue
        kept_local = True
        out.append(c)
        warnings.append(
            f"the invite names {c}, a {kind} address ({where}):"
            " right only if the host runs "
            + ("on this computer" if kind == "loopback" else "on this network link")
            + "; an invite from anyone else should not point there"
        )
    return out, warnings
