"""ristretto255 through rbcl, scalars as Python ints mod L (hidden-deal.md section 2)."""

from __future__ import annotations

import hashlib
import struct

import rbcl  # type: ignore[import-untyped]

L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes(32)
G = rbcl.crypto_scalarmult_ristretto255_base((1).to_bytes(32, "little"))


def sb(s: int) -> bytes:
    return (s % L).to_bytes(32, "little")


def mul(s: int, p: bytes) -> bytes:
    s %= L
    if s == 0:
        return IDENTITY
    if p == IDENTITY:
        return IDENTITY
    return bytes(rbcl.crypto_scalarmult_ristretto255(sb(s), p))


def base(s: int) -> bytes:
    return mul(s, G)


def add(p: bytes, q: bytes) -> bytes:
    if p == IDENTITY:
        return q
    if q == IDENTITY:
        return p
    return bytes(rbcl.crypto_core_ristretto255_add(p, q))


def sub(p: bytes, q: bytes) -> bytes:
    if q == IDENTITY:
        return p
    if p == q:
        return IDENTITY
    if p == IDENTITY:
        return mul(L - 1, q)
    return bytes(rbcl.crypto_core_ristretto255_sub(p, q))


def msum(terms: list[tuple[int, bytes]]) -> bytes:
    acc = IDENTITY
    for s, p in terms:
        acc = add(acc, mul(s, p))
    return acc


def from_hash(h64: bytes) -> bytes:
    return bytes(rbcl.crypto_core_ristretto255_from_hash(h64))


def valid_point(p: bytes) -> bool:
    return len(p) == 32 and p != IDENTITY and bool(rbcl.crypto_core_ristretto255_is_valid_point(p))


def hscalar(data: bytes) -> int:
    """H(x): SHA-512 read little-endian, mod L."""
    return int.from_bytes(hashlib.sha512(data).digest(), "little") % L


def inv(s: int) -> int:
    return pow(s, L - 2, L)


def scalar_from(b: bytes) -> int:
    if len(b) != 32:
        raise ValueError("scalar of the wrong size")
    v = int.from_bytes(b, "little")
    if v == 0 or v >= L:
        raise ValueError("bad scalar")
    return v


def lp(b: bytes) -> bytes:
    return struct.pack(">I", len(b)) + b


CARD_TAG = b"p2pkoikoi/v3/hidden/card\0"
GEN_TAG = b"p2pkoikoi/v3/hidden/generator\0"
CARD_POINTS = [from_hash(hashlib.sha512(CARD_TAG + bytes([c])).digest()) for c in range(48)]
CARD_OF_POINT = {p: c for c, p in enumerate(CARD_POINTS)}
H_CHAIN = from_hash(hashlib.sha512(GEN_TAG + b"chain").digest())
H_GEN = [from_hash(hashlib.sha512(GEN_TAG + struct.pack(">I", i)).digest()) for i in range(48)]
