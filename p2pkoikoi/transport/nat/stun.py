"""A small sans-I/O STUN codec (RFC 8489, the parts a binding needs).

Theory of operation
-------------------
STUN does two jobs here, both on the UDP socket that will carry the match:

* a *binding request* to a public STUN server answers with the address and
  port the server saw (``XOR-MAPPED-ADDRESS``): this side's reflexive
  candidate, the NAT's mapping for this very socket;
* the connectivity checks between the two players are binding requests too
  (as in ICE, RFC 8445): ``USERNAME`` carries the joiner's answer nonce and
  ``MESSAGE-INTEGRITY`` an HMAC-SHA1 keyed from the invite secret and that
  nonce, so a check from anybody who does not hold the invite is dropped
  unanswered.  ``FINGERPRINT`` (CRC-32) tells STUN apart from QUIC on the
  shared socket.

This module only turns bytes into :class:`Message` values and back; it has no
socket and no clock.  It is tested against RFC 5769's vectors.

Why our own and not aioice's: aioice's message code is sound but ships
inside an asyncio ICE agent (its module imports asyncio transactions, and the
package pulls dnspython and ifaddr's asyncio users); the part we need is about
150 lines with the RFC's vectors, and owning it keeps the transport on trio
with no asyncio import.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import ipaddress
import os
import struct
from dataclasses import dataclass, field
from typing import Final

MAGIC: Final = 0x2112A442
HEADER: Final = 20

BINDING_REQUEST: Final = 0x0001
BINDING_SUCCESS: Final = 0x0101
BINDING_ERROR: Final = 0x0111

MAPPED_ADDRESS: Final = 0x0001
USERNAME: Final = 0x0006
MESSAGE_INTEGRITY: Final = 0x0008
ERROR_CODE: Final = 0x0009
XOR_MAPPED_ADDRESS: Final = 0x0020
PRIORITY: Final = 0x0024
USE_CANDIDATE: Final = 0x0025
SOFTWARE: Final = 0x8022
FINGERPRINT: Final = 0x8028
ICE_CONTROLLED: Final = 0x8029
ICE_CONTROLLING: Final = 0x802A

_FP_XOR: Final = 0x5354554E


class StunError(ValueError):
    """Bytes that are not a well-formed STUN message (dropped by the caller)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One STUN message: its type, transaction id and attributes in order (raw values)."""

    type: int
    transaction: bytes
    attributes: tuple[tuple[int, bytes], ...] = field(default=())

    def get(self, kind: int) -> bytes | None:
        for k, v in self.attributes:
            if k == kind:
                return v
        return None

    @property
    def mapped(self) -> tuple[str, int] | None:
        """The (XOR-)MAPPED-ADDRESS: where the server saw this request come from."""
        raw = self.get(XOR_MAPPED_ADDRESS)
        if raw is not None:
            return decode_address(raw, self.transaction, xor=True)
        raw = self.get(MAPPED_ADDRESS)
        return decode_address(raw, self.transaction, xor=False) if raw is not None else None


def new_transaction() -> bytes:
    return os.urandom(12)


def looks_like_stun(data: bytes) -> bool:
    """RFC 7983's first-byte demultiplexing plus the magic cookie: STUN, not QUIC."""
    return (
        len(data) >= HEADER
        and data[0] < 4
        and struct.unpack_from("!I", data, 4)[0] == MAGIC
        and struct.unpack_from("!H", data, 2)[0] % 4 == 0
    )


def _pad(n: int) -> int:
    return (4 - n % 4) % 4


def _attr(kind: int, value: bytes, pad: bytes = b"\x00") -> bytes:
    return struct.pack("!HH", kind, len(value)) + value + pad * _pad(len(value))


def encode_address(host: str, port: int, transaction: bytes, *, xor: bool = True) -> bytes:
    """The value of an XOR-MAPPED-ADDRESS (or, ``xor=False``, MAPPED-ADDRESS)."""
    ip = ipaddress.ip_address(host)
    raw = ip.packed
    if xor:
        port ^= MAGIC >> 16
        mask = struct.pack("!I", MAGIC) + transaction
        raw = bytes(a ^ b for a, b in zip(raw, mask, strict=False))
    return struct.pack("!BBH", 0, 1 if ip.version == 4 else 2, port) + raw


def decode_address(raw: bytes, transaction: bytes, *, xor: bool) -> tuple[str, int]:
    if len(raw) < 4:
        raise StunError("address attribute too short")
    _, family, port = struct.unpack_from("!BBH", raw)
    size = {1: 4, 2: 16}.get(family)
    if size is None or len(raw) != 4 + size:
        raise StunError("bad address family or length")
    addr = raw[4:]
    if xor:
        port ^= MAGIC >> 16
        mask = struct.pack("!I", MAGIC) + transaction
        addr = bytes(a ^ b for a, b in zip(addr, mask, strict=False))
    return str(ipaddress.ip_address(addr)), port


def encode(
    msg: Message,
    *,
    key: bytes | None = None,
    fingerprint: bool = True,
    pad: bytes = b"\x00",
) -> bytes:
    """The bytes of ``msg``; with ``key`` a MESSAGE-INTEGRITY (HMAC-SHA1) is appended,
    then (``fingerprint``) a FINGERPRINT.  ``pad`` is the padding byte (RFC 5769's
    vectors pad with spaces; any value is valid)."""
    if len(msg.transaction) != 12:
        raise StunError("a transaction id is 12 bytes")
    body = b"".join(_attr(k, v, pad) for k, v in msg.attributes)

    def header(length: int) -> bytes:
        return struct.pack("!HHI", msg.type, length, MAGIC) + msg.transaction

    if key is not None:
        mac = hmac.new(key, header(len(body) + 24) + body, hashlib.sha1).digest()
        body += _attr(MESSAGE_INTEGRITY, mac)
    if fingerprint:
        crc = binascii.crc32(header(len(body) + 8) + body) ^ _FP_XOR
        body += _attr(FINGERPRINT, struct.pack("!I", crc & 0xFFFFFFFF))
    return header(len(body)) + body


def decode(data: bytes, *, key: bytes | None = None) -> Message:
    """Parse one message.  A FINGERPRINT, when present, must match; with ``key`` a
    MESSAGE-INTEGRITY must be present and match (else :class:`StunError`)."""
    if len(data) < HEADER:
        raise StunError("shorter than a STUN header")
    kind, length, magic = struct.unpack_from("!HHI", data)
    if kind & 0xC000 or magic != MAGIC:
        raise StunError("not a STUN message")
    if length % 4 or HEADER + length != len(data):
        raise StunError("STUN length does not match")
    transaction = data[8:20]
    attrs: list[tuple[int, bytes]] = []
    pos = HEADER
    integrity_at = -1
    while pos < len(data):
        if pos + 4 > len(data):
            raise StunError("truncated attribute")
        a_kind, a_len = struct.unpack_from("!HH", data, pos)
        end = pos + 4 + a_len
        if end > len(data):
            raise StunError("truncated attribute")
        value = data[pos + 4 : end]
        if a_kind == FINGERPRINT:
            if len(value) != 4 or end != len(data):
                raise StunError("FINGERPRINT must be last")
            head = struct.pack("!HHI", kind, pos - HEADER + 8, MAGIC) + transaction
            want = (binascii.crc32(head + data[HEADER:pos]) ^ _FP_XOR) & 0xFFFFFFFF
            if struct.unpack("!I", value)[0] != want:
                raise StunError("FINGERPRINT does not match")
        elif a_kind == MESSAGE_INTEGRITY:
            if len(value) != 20:
                raise StunError("MESSAGE-INTEGRITY is 20 bytes")
            integrity_at = pos
            if key is not None:
                head = struct.pack("!HHI", kind, pos - HEADER + 24, MAGIC) + transaction
                mac = hmac.new(key, head + data[HEADER:pos], hashlib.sha1).digest()
                if not hmac.compare_digest(mac, value):
                    raise StunError("MESSAGE-INTEGRITY does not match")
        elif integrity_at >= 0:
            raise StunError("only FINGERPRINT may follow MESSAGE-INTEGRITY")
        attrs.append((a_kind, value))
        pos = end + _pad(a_len)
    if key is not None and integrity_at < 0:
        raise StunError("no MESSAGE-INTEGRITY")
    return Message(kind, transaction, tuple(attrs))


def binding_request(transaction: bytes | None = None) -> tuple[bytes, bytes]:
    """A plain binding request to a STUN server: (transaction id, bytes)."""
    tid = transaction or new_transaction()
    return tid, encode(Message(BINDING_REQUEST, tid), fingerprint=True)


def binding_success(request: Message, host: str, port: int, *, key: bytes | None) -> bytes:
    """The answer to ``request`` seen from ``host``:``port``."""
    attrs = ((XOR_MAPPED_ADDRESS, encode_address(host, port, request.transaction)),)
    return encode(Message(BINDING_SUCCESS, request.transaction, attrs), key=key)
