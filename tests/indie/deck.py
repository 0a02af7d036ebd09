"""deal.md's shuffle, first dealer and card codes."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator

KINDS = "barc"
CODES: list[str] = []
_month_kinds = [
    "b r c1 c2",
    "a r c1 c2",
    "b r c1 c2",
    "a r c1 c2",
    "a r c1 c2",
    "a r c1 c2",
    "a r c1 c2",
    "b a c1 c2",
    "a r c1 c2",
    "a r c1 c2",
    "b a r c",
    "b c1 c2 c3",
]
for _m, _ks in enumerate(_month_kinds, start=1):
    for _k in _ks.split():
        CODES.append(f"{_m}{_k}")
CARD = {c: i for i, c in enumerate(CODES)}


def month(c: int) -> int:
    return c // 4


def kind(c: int) -> str:
    return CODES[c].lstrip("0123456789")[0]


def fisher_yates(seed: bytes) -> list[int]:
    def words() -> Iterator[int]:
        k = 0
        while True:
            d = hashlib.sha256(seed + struct.pack(">I", k)).digest()
            yield from struct.unpack(">8I", d)
            k += 1

    w = words()
    deck = list(range(48))
    for i in range(47, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        while True:
            x = next(w)
            if x < limit:
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def shuffled(tag: bytes, match_seed: bytes, rnd: int, attempt: int) -> list[int]:
    return fisher_yates(
        hashlib.sha256(tag + match_seed + struct.pack(">HH", rnd, attempt)).digest()
    )


def coin(match_seed: bytes) -> int:
    return (
        hashlib.sha256(b"p2pkoikoi/coin/v1" + match_seed + struct.pack(">HH", 0, 0)).digest()[31]
        & 1
    )


KIND_RANK = {"b": 3, "a": 2, "r": 1, "c": 0}


def card_draw(match_seed: bytes, rnd: int, tie: str) -> int:
    a = 0
    while True:
        d = shuffled(b"p2pkoikoi/dealer-draw/v1", match_seed, rnd, a)
        c0, c1 = d[0], d[1]
        if month(c0) != month(c1):
            return 0 if month(c0) < month(c1) else 1
        if tie == "higher_card":
            r0, r1 = KIND_RANK[kind(c0)], KIND_RANK[kind(c1)]
            if r0 != r1:
                return 0 if r0 > r1 else 1
        a += 1
