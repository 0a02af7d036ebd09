"""Which address an invite names: the one the friend should dial.

Kept small and apart: how this host finds its reachable addresses (today one
guess from the host name; later the machine's interfaces) changes without
touching the link or the openers.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Final

#: the port a host listens on unless told otherwise (unassigned by IANA)
DEFAULT_PORT: Final = 47474


def guess_address() -> str:
    """An address the friend can probably reach: the first non-loopback one of this host.

    No packet is sent.  Behind NAT this is the LAN address; for internet play
    the user passes ``--advertise`` (see docs/network.md).
    """
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
    except OSError:
        return "127.0.0.1"
    for family in (socket.AF_INET, socket.AF_INET6):
        for fam, _, _, _, addr in infos:
            if fam != family:
                continue
            ip = ipaddress.ip_address(str(addr[0]).split("%")[0])
            if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
                return str(ip)
    return "127.0.0.1"


def invite_address(bind: str | None, advertise: str | None) -> str:
    """The host part of the invite: ``--advertise``, else a concrete ``--bind``, else a guess."""
    if advertise:
        return advertise
    if bind and bind not in ("0.0.0.0", "::", ""):
        return bind
    return guess_address()
