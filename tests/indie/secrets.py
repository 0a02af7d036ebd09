"""One side's secrets of one deal (hidden-deal.md section 3: the reference derivation)."""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass

from .deck import fisher_yates
from .group import L, inv

TAG_DEAL = b"p2pkoikoi/v2/hidden/deal-secret\0"
TAG_SCALAR = b"p2pkoikoi/v2/hidden/scalar\0"
TAG_PERM = b"p2pkoikoi/v2/hidden/perm\0"


@dataclass(frozen=True)
class DealSecrets:
    scalar: int
    perm: tuple[int, ...]
    keys: tuple[int, ...]

    @property
    def rekey(self) -> list[int]:
        si = inv(self.scalar)
        return [k * si % L for k in self.keys]

    def audit_bytes(self) -> bytes:
        return (
            self.scalar.to_bytes(32, "little")
            + bytes(self.perm)
            + b"".join(k.to_bytes(32, "little") for k in self.keys)
        )


def _scalar(seed: bytes, label: bytes, index: int) -> int:
    counter = 0
    while True:
        d = hashlib.sha512(TAG_SCALAR + seed + label + struct.pack(">II", index, counter)).digest()
        v = int.from_bytes(d, "little") % L
        if v:
            return v
        counter += 1


def derive(master: bytes, rnd: int, attempt: int) -> DealSecrets:
    if os.environ.get("INDIE_SECRETS") == "random":  # "any uniformly random values will do"
        import secrets as _s

        perm = list(range(48))
        _s.SystemRandom().shuffle(perm)
        return DealSecrets(
            _s.randbelow(L - 1) + 1, tuple(perm), tuple(_s.randbelow(L - 1) + 1 for _ in range(48))
        )
    seed = hashlib.sha256(TAG_DEAL + master + struct.pack(">HH", rnd, attempt)).digest()
    perm = fisher_yates(hashlib.sha256(TAG_PERM + seed).digest())
    return DealSecrets(
        _scalar(seed, b"deck", 0), tuple(perm), tuple(_scalar(seed, b"key", j) for j in range(48))
    )


def parse_audit(b: bytes) -> DealSecrets:
    from .group import scalar_from

    if len(b) != 32 + 48 + 48 * 32:
        raise ValueError("broken audit: wrong size")
    perm = tuple(b[32:80])
    if sorted(perm) != list(range(48)):
        raise ValueError("broken audit: not a permutation")
    keys = tuple(scalar_from(b[80 + 32 * j : 112 + 32 * j]) for j in range(48))
    return DealSecrets(scalar_from(b[:32]), perm, keys)
