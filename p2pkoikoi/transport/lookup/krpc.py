"""The Mainline DHT's messages (BEP 5 KRPC) and mutable items (BEP 44), sans I/O.

Theory of operation
-------------------
KRPC is one bencoded dictionary per UDP datagram: a query ``{"t", "y": "q",
"q": method, "a": args}``, a response ``{"t", "y": "r", "r": values}`` or an
error ``{"t", "y": "e", "e": [code, text]}``.  This module turns datagrams into
typed values and back, and holds the parts of the DHT that are pure logic: the
XOR metric, compact node lists, BEP 44's signed mutable items and the state of
one iterative lookup (:class:`Lookup`).  It sends nothing and reads no clock;
:mod:`p2pkoikoi.transport.lookup.dht` drives it with a trio UDP socket.

A mutable item (BEP 44) is stored under ``target = SHA-1(k || salt)`` by the
nodes closest to it: ``k`` an Ed25519 public key, ``salt`` up to 64 bytes,
``seq`` an integer that must grow with every change, ``v`` a bencoded value of
at most 1000 bytes, and ``sig`` the Ed25519 signature of
``"4:salt" len ":" salt "3:seqi" seq "e1:v" v`` (the salt part only when the
salt is not empty).  A node refuses a put whose signature does not verify or
whose ``seq`` is lower than the one it holds; a reader verifies the signature
again (a node can lie) and that the key and salt are the ones it asked for.

Bencoding is ``fastbencode``'s (strict: keys in order, no leading zeros, no
trailing bytes), so a value decodes and re-encodes to the same bytes, which is
what a signature covers.
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
import struct
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from fastbencode import bdecode, bencode  # type: ignore[attr-defined]

ID_BYTES: Final = 20
#: nodes a lookup keeps and a put stores at (BEP 5's K)
K: Final = 8
#: queries a lookup keeps in flight at once (BEP 5's alpha)
ALPHA: Final = 3
MAX_VALUE: Final = 1000  # bytes of a bencoded ``v`` (BEP 44)
MAX_SALT: Final = 64
MAX_DATAGRAM: Final = 1500
#: BEP 44 error codes
ERR_TOO_BIG, ERR_BAD_SIG, ERR_SALT, ERR_CAS, ERR_SEQ = 205, 206, 207, 301, 302


class KrpcError(Exception):
    """A datagram that is not a KRPC message we can use (dropped, never fatal)."""


def target_of(key: bytes, salt: bytes = b"") -> bytes:
    """BEP 44's target of a mutable item: SHA-1 of the public key and the salt."""
    return hashlib.sha1(key + salt).digest()


def distance(a: bytes, b: bytes) -> int:
    """The XOR metric of BEP 5."""
    return int.from_bytes(a, "big") ^ int.from_bytes(b, "big")


def public_key(seed: bytes) -> bytes:
    """The Ed25519 public key of a 32-byte seed."""
    pub = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    return pub.public_bytes(Encoding.Raw, PublicFormat.Raw)


# ------------------------------------------------------------------ nodes
@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A DHT node: its id and UDP address."""

    id: bytes
    host: str
    port: int

    @property
    def addr(self) -> tuple[str, int]:
        return (self.host, self.port)


def encode_nodes(nodes: list[NodeInfo]) -> bytes:
    """BEP 5's compact node info: 20-byte id, 4-byte IPv4, 2-byte port, each."""
    out = b""
    for n in nodes:
        with_ip = ipaddress.ip_address(n.host)
        if with_ip.version == 4:
            out += n.id + with_ip.packed + struct.pack(">H", n.port)
    return out


def decode_nodes(data: bytes) -> list[NodeInfo]:
    """The nodes of a compact list; a list whose length is not a multiple of 26 is refused."""
    if len(data) % 26:
        raise KrpcError("a compact node list's length is not a multiple of 26")
    out = []
    for i in range(0, len(data), 26):
        nid, ip, (port,) = (
            data[i : i + 20],
            data[i + 20 : i + 24],
            struct.unpack(">H", data[i + 24 : i + 26]),
        )
        if port:
            out.append(NodeInfo(nid, socket.inet_ntoa(ip), port))
    return out


# ------------------------------------------------------------------ mutable items
def signature_input(salt: bytes, seq: int, value: bytes) -> bytes:
    """What a mutable item's signature covers (``value`` is the bencoded ``v``)."""
    head = b"4:salt" + str(len(salt)).encode() + b":" + salt if salt else b""
    return head + b"3:seqi" + str(seq).encode() + b"e1:v" + value


@dataclass(frozen=True, slots=True)
class MutableItem:
    """A BEP 44 mutable item; ``value`` is the bencoded ``v``, exactly as signed."""

    key: bytes
    salt: bytes
    seq: int
    value: bytes
    sig: bytes

    @property
    def target(self) -> bytes:
        return target_of(self.key, self.salt)

    def verify(self) -> bool:
        """The signature holds, and the sizes are BEP 44's."""
        if len(self.key) != 32 or len(self.sig) != 64 or len(self.salt) > MAX_SALT:
            return False
        if len(self.value) > MAX_VALUE or not 0 <= self.seq < 2**63:
            return False
        try:
            Ed25519PublicKey.from_public_bytes(self.key).verify(
                self.sig, signature_input(self.salt, self.seq, self.value)
            )
        except (InvalidSignature, ValueError):
            return False
        return True

    def decoded(self) -> Any:
        """``v`` decoded (bencode)."""
        return bdecode(self.value)


def sign_item(seed: bytes, salt: bytes, seq: int, v: Any) -> MutableItem:
    """A mutable item signed with the Ed25519 key of ``seed``; ``v`` is bencoded here."""
    value = bencode(v)
    if len(value) > MAX_VALUE:
        raise ValueError(f"a DHT item holds at most {MAX_VALUE} bytes, not {len(value)}")
    sk = Ed25519PrivateKey.from_private_bytes(seed)
    sig = sk.sign(signature_input(salt, seq, value))
    return MutableItem(public_key(seed), salt, seq, value, sig)


# ------------------------------------------------------------------ messages
@dataclass(frozen=True, slots=True)
class Query:
    tid: bytes
    method: str
    args: dict[bytes, Any]
    ro: bool = False  # BEP 43: a read-only sender, not to be added to routing tables


@dataclass(frozen=True, slots=True)
class Response:
    tid: bytes
    values: dict[bytes, Any]

    @property
    def sender(self) -> bytes:
        nid = self.values.get(b"id")
        return nid if isinstance(nid, bytes) and len(nid) == ID_BYTES else b""

    def nodes(self) -> list[NodeInfo]:
        raw = self.values.get(b"nodes", b"")
        return decode_nodes(raw) if isinstance(raw, bytes) else []

    @property
    def token(self) -> bytes | None:
        tok = self.values.get(b"token")
        return tok if isinstance(tok, bytes) and 0 < len(tok) <= 64 else None

    def item(self, key: bytes, salt: bytes) -> MutableItem | None:
        """The mutable item this response carries for (``key``, ``salt``), verified, or None."""
        r = self.values
        k, seq, sig, v = r.get(b"k"), r.get(b"seq"), r.get(b"sig"), r.get(b"v")
        if k != key or not isinstance(seq, int) or not isinstance(sig, bytes) or v is None:
            return None
        try:
            value = bencode(v)
        except (TypeError, ValueError):
            return None
        item = MutableItem(key, salt, seq, value, sig)
        return item if item.verify() else None


@dataclass(frozen=True, slots=True)
class ErrorReply:
    tid: bytes
    code: int
    text: str


Message = Query | Response | ErrorReply


def decode_message(data: bytes) -> Message:
    """One datagram as a KRPC message; anything else is a :class:`KrpcError`."""
    if len(data) > MAX_DATAGRAM * 2:
        raise KrpcError("datagram too long")
    try:
        msg = bdecode(data)
    except Exception:
        raise KrpcError("not bencoded") from None
    if not isinstance(msg, dict):
        raise KrpcError("not a dictionary")
    tid, kind = msg.get(b"t"), msg.get(b"y")
    if not isinstance(tid, bytes) or len(tid) > 16:
        raise KrpcError("no transaction id")
    if kind == b"q":
        method, args = msg.get(b"q"), msg.get(b"a")
        if not isinstance(method, bytes) or not isinstance(args, dict):
            raise KrpcError("a query without a method or arguments")
        return Query(tid, method.decode("ascii", "replace"), args, msg.get(b"ro") == 1)
    if kind == b"r":
        values = msg.get(b"r")
        if not isinstance(values, dict):
            raise KrpcError("a response without values")
        return Response(tid, values)
    if kind == b"e":
        err = msg.get(b"e")
        if isinstance(err, list) and len(err) >= 2 and isinstance(err[0], int):
            text = err[1].decode("utf-8", "replace") if isinstance(err[1], bytes) else ""
            return ErrorReply(tid, err[0], text)
        raise KrpcError("a malformed error")
    raise KrpcError("neither query, response nor error")


def encode_query(tid: bytes, method: str, args: dict[bytes, Any], *, ro: bool = True) -> bytes:
    """A query datagram; ``ro`` (BEP 43): we answer no queries, keep us out of tables."""
    msg: dict[bytes, Any] = {b"t": tid, b"y": b"q", b"q": method.encode(), b"a": args}
    if ro:
        msg[b"ro"] = 1
    return bytes(bencode(msg))


def encode_response(tid: bytes, values: dict[bytes, Any]) -> bytes:
    return bytes(bencode({b"t": tid, b"y": b"r", b"r": values}))


def encode_error(tid: bytes, code: int, text: str) -> bytes:
    return bytes(bencode({b"t": tid, b"y": b"e", b"e": [code, text.encode()]}))


def get_args(node_id: bytes, target: bytes) -> dict[bytes, Any]:
    return {b"id": node_id, b"target": target}


def put_args(
    node_id: bytes, token: bytes, item: MutableItem, cas: int | None = None
) -> dict[bytes, Any]:
    args: dict[bytes, Any] = {
        b"id": node_id,
        b"token": token,
        b"k": item.key,
        b"seq": item.seq,
        b"sig": item.sig,
        b"v": bdecode(item.value),
    }
    if item.salt:
        args[b"salt"] = item.salt
    if cas is not None:
        args[b"cas"] = cas
    return args


def item_from_put(args: dict[bytes, Any]) -> MutableItem | None:
    """The item a put query carries (verified), for a node that stores it; None if unusable."""
    k, seq, sig, v = args.get(b"k"), args.get(b"seq"), args.get(b"sig"), args.get(b"v")
    salt = args.get(b"salt", b"")
    if not (isinstance(k, bytes) and isinstance(seq, int) and isinstance(sig, bytes)):
        return None
    if not isinstance(salt, bytes) or v is None:
        return None
    item = MutableItem(k, salt, seq, bytes(bencode(v)), sig)
    return item if item.verify() else None


# ------------------------------------------------------------------ one lookup
@dataclass
class _Entry:
    node: NodeInfo
    state: str = "new"  # new, asked, answered, failed
    token: bytes | None = None


@dataclass
class Lookup:
    """An iterative lookup of ``target`` (BEP 5): ask the closest nodes not yet asked,
    ALPHA at a time, learn closer ones from their answers, stop when the K closest
    known nodes have all answered or failed.  Sans I/O: :meth:`next_queries` says whom
    to ask, :meth:`answered` / :meth:`failed` take what happened."""

    target: bytes
    entries: dict[tuple[str, int], _Entry] = field(default_factory=dict)
    items: list[MutableItem] = field(default_factory=list)
    #: addresses not to ask (they did not answer lately)
    skip: frozenset[tuple[str, int]] = frozenset()

    def add(self, nodes: list[NodeInfo]) -> None:
        for n in nodes:
            if n.addr not in self.entries and n.addr not in self.skip:
                self.entries[n.addr] = _Entry(n)

    def _closest(self) -> list[_Entry]:
        live = [e for e in self.entries.values() if e.state != "failed"]
        return sorted(live, key=lambda e: distance(e.node.id or b"\xff" * 20, self.target))[:K]

    @property
    def in_flight(self) -> int:
        return sum(1 for e in self.entries.values() if e.state == "asked")

    def next_queries(self) -> list[NodeInfo]:
        """Nodes to ask now (marked asked), keeping at most ALPHA in flight."""
        out = []
        for e in self._closest():
            if self.in_flight >= ALPHA:
                break
            if e.state == "new":
                e.state = "asked"
                out.append(e.node)
        return out

    @property
    def done(self) -> bool:
        return all(e.state in ("answered", "failed") for e in self._closest())

    def answered(self, addr: tuple[str, int], response: Response) -> None:
        e = self.entries.get(addr)
        if e is None:
            return
        if response.sender:
            e.node = NodeInfo(response.sender, e.node.host, e.node.port)
        e.state = "answered"
        e.token = response.token
        with suppress(KrpcError):
            self.add(response.nodes())

    def failed(self, addr: tuple[str, int]) -> None:
        e = self.entries.get(addr)
        if e is not None:
            e.state = "failed"

    def storers(self) -> list[tuple[NodeInfo, bytes]]:
        """The closest answered nodes with their write tokens: where a put goes."""
        return [
            (e.node, e.token)
            for e in self._closest()
            if e.state == "answered" and e.token is not None
        ]
