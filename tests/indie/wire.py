"""Framing, messages, keys and the encrypted channel (README.md sections 3-6)."""

from __future__ import annotations

import base64
import hashlib
import socket
import struct
from typing import Any

import msgpack  # type: ignore[import-untyped]
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

V = 3
MAX_FRAME = 65536


class ProtocolError(Exception):
    pass


def tag(t: str) -> bytes:
    return t.encode() + b"\0"


def lpf(x: bytes | str | int) -> bytes:
    if isinstance(x, bool):
        raise TypeError("bool")
    if isinstance(x, int):
        b = struct.pack(">Q", x)
    elif isinstance(x, str):
        b = x.encode()
    else:
        b = x
    return struct.pack(">I", len(b)) + b


def entry(kind: str, *fields: bytes | str | int) -> bytes:
    return lpf(kind) + b"".join(lpf(f) for f in fields)


def pack(msg: dict[str, Any]) -> bytes:
    m = dict(msg)
    m["v"] = V
    return bytes(msgpack.packb({k: m[k] for k in sorted(m)}, use_bin_type=True))


def unpack(b: bytes) -> dict[str, Any]:
    m = msgpack.unpackb(b, raw=False, strict_map_key=True)
    if not isinstance(m, dict) or "type" not in m:
        raise ProtocolError("not a message")
    return m


def hkdf(salt: bytes, ikm: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def b32(b: bytes) -> str:
    return base64.b32encode(b).decode().lower().rstrip("=")


def unb32(s: str) -> bytes:
    return base64.b32decode(s.upper() + "=" * (-len(s) % 8))


class Framed:
    """A TCP socket carrying frames; encryption switches on after the hellos."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.tx: ChaCha20Poly1305 | None = None
        self.rx: ChaCha20Poly1305 | None = None
        self.ntx = 0
        self.nrx = 0

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError("the connection closed")
            out += chunk
        return out

    def read_frame(self) -> bytes:
        (n,) = struct.unpack(">I", self._read(4))
        if n == 0 or n > MAX_FRAME:
            raise ProtocolError("bad frame length")
        return self._read(n)

    def write_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">I", len(payload)) + payload)

    def send(self, msg: dict[str, Any]) -> None:
        data = pack(msg)
        assert self.tx is not None
        ct = self.tx.encrypt(bytes(4) + struct.pack(">Q", self.ntx), data, b"")
        self.ntx += 1
        self.write_frame(ct)

    def recv_raw(self) -> dict[str, Any]:
        ct = self.read_frame()
        assert self.rx is not None
        try:
            pt = self.rx.decrypt(bytes(4) + struct.pack(">Q", self.nrx), ct, b"")
        except Exception as exc:
            if self.nrx == 0:
                m = unpack(ct)
                raise ProtocolError(
                    f"the other player's program stopped: {m.get('reason')}"
                ) from exc
            raise ProtocolError("a frame did not decrypt") from exc
        self.nrx += 1
        return unpack(pt)

    def recv(self) -> dict[str, Any]:
        """The next message that matters (pings answered, chats dropped)."""
        while True:
            m = self.recv_raw()
            t = m["type"]
            if t == "ping":
                self.send({"type": "pong", "nonce": m["nonce"]})
                continue
            if t in ("pong", "chat"):
                continue
            if t == "abort":
                raise ProtocolError(f"the other player's program stopped: {m['reason']}")
            return m

    def keys(self, role: str, k_h2j: bytes, k_j2h: bytes) -> None:
        mine, theirs = (k_h2j, k_j2h) if role == "host" else (k_j2h, k_h2j)
        self.tx, self.rx = ChaCha20Poly1305(mine), ChaCha20Poly1305(theirs)


def handshake_hash(hh: bytes, jh: bytes) -> bytes:
    return hashlib.sha256(
        tag("p2pkoikoi/v2/handshake")
        + struct.pack(">I", len(hh))
        + hh
        + struct.pack(">I", len(jh))
        + jh
    ).digest()


def derive_keys(k: bytes, shared: bytes, h0: bytes) -> tuple[bytes, bytes, bytes]:
    return (
        hkdf(k, shared, tag("p2pkoikoi/v2/key/host-to-joiner") + h0),
        hkdf(k, shared, tag("p2pkoikoi/v2/key/joiner-to-host") + h0),
        hkdf(k, shared, tag("p2pkoikoi/v2/resume-secret") + h0),
    )


class Transcript:
    def __init__(self, h0: bytes) -> None:
        self.t = hashlib.sha256(tag("p2pkoikoi/v2/transcript") + h0).digest()

    def absorb(self, e: bytes) -> bytes:
        self.t = hashlib.sha256(self.t + e).digest()
        return self.t


def parse_invite(text: str) -> tuple[list[tuple[str, int]], bytes]:
    s = "".join(text.split()).lower()
    for q in "'\"`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a":
        s = s.replace(q, "")
    if not s.startswith("koi2-"):
        raise ValueError("not a koi2 invite")
    body, check = s.rsplit("-", 1)
    addrs, secret = body[5:].rsplit("-", 1)
    if b32(hashlib.sha256(tag("p2pkoikoi/v2/invite") + body.encode()).digest())[:4] != check:
        raise ValueError("checksum does not match")
    out = []
    for a in addrs.split("+"):
        h, p = a.rsplit("_", 1)
        if h[:1] in ("s", "h", "m") and not h[:1].isdigit() and (h[1:2].isdigit() or ":" in h):
            continue  # a UDP candidate
        out.append((h, int(p)))
    return out, unb32(secret)


def make_invite(addrs: list[tuple[str, int]], secret: bytes) -> str:
    body = "koi2-" + "+".join(f"{h}_{p}" for h, p in addrs) + "-" + b32(secret)
    return body + "-" + b32(hashlib.sha256(tag("p2pkoikoi/v2/invite") + body.encode()).digest())[:4]
