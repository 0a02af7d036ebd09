"""NAT-PMP (RFC 6886) and PCP (RFC 6887) messages: encoders and decoders, no I/O.

Why our own: the PyPI clients (``nat-pmp``, ``py-natpmp``) speak NAT-PMP only
(no PCP), block in ``socket.recv`` (no trio), find the gateway through
platform commands, and have not been released since 2021/2023.  The two
protocols are a handful of fixed-layout UDP datagrams, so a sans-I/O codec
with test vectors is smaller than an adapter around them;
:mod:`p2pkoikoi.transport.nat.portmap` does the sending, retries and timing.

Only what a host needs: the external address (NAT-PMP opcode 0), a TCP
mapping and its deletion (NAT-PMP opcode 2, PCP MAP with lifetime 0).
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from typing import Final

PORT: Final = 5351  # the gateway's NAT-PMP and PCP port (both RFCs)
NATPMP_VERSION: Final = 0
PCP_VERSION: Final = 2
_OP_EXTERNAL: Final = 0
_OP_MAP_TCP: Final = 2
_PCP_MAP: Final = 1
_TCP: Final = 6
#: PCP result code 1 / NAT-PMP result 1: the server speaks the other version
UNSUPP_VERSION: Final = 1

NATPMP_RESULTS: Final = {
    0: "success",
    1: "unsupported version",
    2: "not authorized (port mapping is turned off on the router)",
    3: "network failure (the router has no external address yet)",
    4: "out of resources",
    5: "unsupported opcode",
}
PCP_RESULTS: Final = {
    0: "success",
    1: "unsupported version",
    2: "not authorized (port mapping is turned off on the router)",
    3: "malformed request",
    4: "unsupported opcode",
    5: "unsupported option",
    6: "malformed option",
    7: "network failure",
    8: "no resources",
    9: "unsupported protocol",
    10: "user exceeded quota",
    11: "cannot provide the external port",
    12: "address mismatch (a NAT between us and the router?)",
    13: "excessive remote peers",
}


class PortMapProtocolError(ValueError):
    """A datagram that is not the answer we wait for (ignored by the caller)."""


@dataclass(frozen=True, slots=True)
class ExternalAddress:
    """NAT-PMP's answer to "what is your external address"."""

    result: int
    epoch: int
    address: str


@dataclass(frozen=True, slots=True)
class MapResult:
    """A mapping answer of either protocol; ``address`` is "" for NAT-PMP (ask opcode 0)."""

    result: int
    epoch: int
    internal_port: int
    external_port: int
    lifetime: int
    address: str = ""
    nonce: bytes = b""


# ------------------------------------------------------------------ NAT-PMP
def encode_natpmp_external() -> bytes:
    """Request the router's external IPv4 address (RFC 6886 section 3.2)."""
    return struct.pack("!BB", NATPMP_VERSION, _OP_EXTERNAL)


def decode_natpmp_external(data: bytes) -> ExternalAddress:
    if len(data) < 12 or data[0] != NATPMP_VERSION or data[1] != 128 + _OP_EXTERNAL:
        raise PortMapProtocolError("not a NAT-PMP external-address response")
    result, epoch = struct.unpack("!HI", data[2:8])
    return ExternalAddress(result, epoch, str(ipaddress.IPv4Address(data[8:12])))


def encode_natpmp_map(internal_port: int, external_port: int, lifetime: int) -> bytes:
    """Map a TCP port (RFC 6886 section 3.3); lifetime 0 with external 0 deletes it."""
    return struct.pack(
        "!BBHHHI", NATPMP_VERSION, _OP_MAP_TCP, 0, internal_port, external_port, lifetime
    )


def decode_natpmp_map(data: bytes) -> MapResult:
    if len(data) < 16 or data[0] != NATPMP_VERSION or data[1] != 128 + _OP_MAP_TCP:
        if len(data) >= 4 and data[1] >= 128:  # an error for another version/opcode
            (result,) = struct.unpack("!H", data[2:4])
            return MapResult(result, 0, 0, 0, 0)
        raise PortMapProtocolError("not a NAT-PMP TCP mapping response")
    result, epoch, internal, external, lifetime = struct.unpack("!HIHHI", data[2:16])
    return MapResult(result, epoch, internal, external, lifetime)


# ---------------------------------------------------------------------- PCP
def _v6(address: str) -> bytes:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv4Address):
        return ipaddress.IPv6Address("::ffff:" + str(ip)).packed
    return ip.packed


def _from_v6(raw: bytes) -> str:
    ip = ipaddress.IPv6Address(raw)
    return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else str(ip)


def encode_pcp_map(
    client: str,
    nonce: bytes,
    internal_port: int,
    external_port: int,
    lifetime: int,
    external_address: str = "0.0.0.0",
) -> bytes:
    """A PCP MAP request for TCP (RFC 6887 sections 7.1 and 11.1).

    ``client`` is our own address as the router sees it (a mismatch means a
    NAT between us); lifetime 0 deletes the mapping of this ``nonce``.
    """
    if len(nonce) != 12:
        raise ValueError("a PCP nonce is 12 bytes")
    header = struct.pack("!BBHI", PCP_VERSION, _PCP_MAP, 0, lifetime) + _v6(client)
    body = nonce + struct.pack("!B3xHH", _TCP, internal_port, external_port)
    return header + body + _v6(external_address)


def decode_pcp_map(data: bytes) -> MapResult:
    """A PCP MAP response; a version-0 answer (a NAT-PMP-only router) has result 1."""
    if len(data) >= 4 and data[0] == NATPMP_VERSION and data[1] >= 128:
        return MapResult(UNSUPP_VERSION, 0, 0, 0, 0)
    if len(data) < 60 or data[0] != PCP_VERSION or data[1] != 0x80 | _PCP_MAP:
        raise PortMapProtocolError("not a PCP MAP response")
    result = data[3]
    lifetime, epoch = struct.unpack("!II", data[4:12])
    nonce = data[24:36]
    proto, internal, external = struct.unpack("!B3xHH", data[36:44])
    if proto not in (_TCP, 0):
        raise PortMapProtocolError("a PCP MAP response for another protocol")
    return MapResult(result, epoch, internal, external, lifetime, _from_v6(data[44:60]), nonce)


def describe_result(protocol: str, result: int) -> str:
    """The words for a result code, for the one-line reachability reason."""
    table = PCP_RESULTS if protocol == "PCP" else NATPMP_RESULTS
    return table.get(result, f"result code {result}")
