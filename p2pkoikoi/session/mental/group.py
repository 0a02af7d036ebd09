"""The prime-order group the hidden deal masks cards in: ristretto255, through libsodium.

Why this group: masking must commute (``a·(b·P) = b·(a·P)``) and be removable
(``a⁻¹·(a·P) = P``), so it needs scalar multiplication *without* clamping in a
group of prime order ``L = 2^252 + 27742317777372353535851937790883648493``.
ristretto255 is exactly such a group (RFC 9496): every 32-byte string that
decodes is a group element, so decoding *is* the validity check, and a
multiplication costs one Edwards multiplication.  (The protocol's version 2
used Ed25519's prime-order subgroup through PyNaCl; libsodium's
``crypto_scalarmult_ed25519_noclamp`` checks subgroup membership of its input
with a second multiplication by ``L``, which made every multiplication cost
about twice as much: 210 µs against 64 µs for ristretto255 on the development
machine.  The shuffle proofs of :mod:`.proof` multiply about 800 times a side
per deal, which is what decided it.)  PyNaCl does not bind libsodium's
``crypto_core_ristretto255_*`` functions, so they come from ``rbcl``, which
wraps the same libsodium (bundled in its wheels, so nothing to install beside
it).  X25519 clamps its scalars, so a mask could not be removed.

Card points come from hash-to-group (``crypto_core_ristretto255_from_hash`` of
a tagged SHA-512 of the card id), so nobody knows their discrete logarithms:
a masked deck reveals nothing even to someone who tries every card (``i·G``
would let a peer unmask a deck by a table look-up).

Points and scalars are 32-byte strings (a canonical ristretto255 encoding; a
little-endian scalar reduced mod ``L``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Final

import rbcl  # type: ignore[import-untyped]

from p2pkoikoi.engine.deal import shuffle_ids
from p2pkoikoi.session.mental.errors import BadPointError


def _remove_rbcl_copy() -> None:
    """Delete the copy of libsodium that importing ``rbcl`` writes to the temporary folder.

    rbcl carries its libsodium inside a Python module and writes it to a new
    temporary file (``NamedTemporaryFile(delete=False)``) on every import, so each
    process that dealt hidden left 2.7 MB behind in ``/tmp``: hundreds of
    megabytes for someone who plays often.  The library is loaded by then, and a
    loaded shared object outlives its file's name on POSIX; where the name cannot
    be removed (Windows keeps a loaded file), it stays as before.
    """
    path = getattr(sys.modules.get("rbcl._sodium"), "lib_path", None)
    if isinstance(path, str):
        with contextlib.suppress(OSError):
            os.unlink(path)


_remove_rbcl_copy()

TAG_CARD: Final = b"p2pkoikoi/v3/hidden/card\x00"
TAG_SCALAR: Final = b"p2pkoikoi/v2/hidden/scalar\x00"
TAG_PERM: Final = b"p2pkoikoi/v2/hidden/perm\x00"
POINT_LEN: Final = 32
SCALAR_LEN: Final = 32
DECK_SIZE: Final = 48
GROUP_ORDER: Final = 2**252 + 27742317777372353535851937790883648493
IDENTITY: Final = bytes(32)

Point = bytes
Scalar = bytes

_mul = rbcl.crypto_scalarmult_ristretto255
_base = rbcl.crypto_scalarmult_ristretto255_base
_add = rbcl.crypto_core_ristretto255_add
_sub = rbcl.crypto_core_ristretto255_sub
_valid = rbcl.crypto_core_ristretto255_is_valid_point


def hash_point(tag: bytes, data: bytes) -> Point:
    """A group element nobody knows the discrete logarithm of: hash-to-group."""
    return bytes(rbcl.crypto_core_ristretto255_from_hash(hashlib.sha512(tag + data).digest()))


def card_point(card: int) -> Point:
    """The public point of card ``card`` (0..47): hash-to-group of a tagged hash."""
    if not 0 <= card < DECK_SIZE:
        raise ValueError("card id out of range")
    return hash_point(TAG_CARD, bytes([card]))


CARD_POINTS: Final[tuple[Point, ...]] = tuple(card_point(i) for i in range(DECK_SIZE))
CARD_OF_POINT: Final[dict[Point, int]] = {p: i for i, p in enumerate(CARD_POINTS)}
assert len(CARD_OF_POINT) == DECK_SIZE  # 48 distinct points


def reduce_wide(wide: bytes) -> int:
    """A 64-byte hash reduced mod ``L``, as an integer."""
    return int.from_bytes(wide, "little") % GROUP_ORDER


def derive_scalar(seed: bytes, label: bytes, index: int) -> Scalar:
    """A secret nonzero scalar from caller-given ``seed`` (randomness is passed in).

    ``SHA-512(tag || seed || label || u32 index || u32 counter)`` reduced mod L;
    the counter only moves on in the (2^-252) case of a zero result.
    """
    counter = 0
    while True:
        wide = hashlib.sha512(
            TAG_SCALAR + seed + label + index.to_bytes(4, "big") + counter.to_bytes(4, "big")
        ).digest()
        s = reduce_wide(wide)
        if s:
            return s.to_bytes(SCALAR_LEN, "little")
        counter += 1  # pragma: no cover - probability 2^-252


def derive_permutation(seed: bytes) -> tuple[int, ...]:
    """A uniformly random permutation of 0..47 from ``seed`` (deal.md's Fisher-Yates)."""
    return tuple(shuffle_ids(hashlib.sha256(TAG_PERM + seed).digest()))


def is_point(p: object) -> bool:
    """Whether ``p`` is the canonical encoding of a group element other than the identity."""
    return isinstance(p, bytes) and len(p) == POINT_LEN and p != IDENTITY and bool(_valid(p))


def check_point(p: bytes) -> Point:
    """``p`` if it is a valid group element, not the identity."""
    if not is_point(p):
        raise BadPointError("the other player sent a card that is not a valid group element")
    return p


def check_scalar(s: bytes) -> Scalar:
    """``s`` if it is a canonical (reduced) nonzero scalar."""
    if not isinstance(s, bytes) or len(s) != SCALAR_LEN or s == bytes(SCALAR_LEN):
        raise BadPointError("the other player sent a key that is not a valid scalar")
    if int.from_bytes(s, "little") >= GROUP_ORDER:
        raise BadPointError("the other player sent a key that is not reduced")
    return s


def mul(s: Scalar, p: Point) -> Point:
    """``s·p``; raises :class:`BadPointError` for an invalid point (decoding checks it)."""
    try:
        return bytes(_mul(s, p))
    except (RuntimeError, ValueError, TypeError):
        raise BadPointError(
            "the other player sent a card that is not a valid group element"
        ) from None


def smul(a: Scalar, b: Scalar) -> Scalar:
    """``a·b mod L``."""
    return (int.from_bytes(a, "little") * int.from_bytes(b, "little") % GROUP_ORDER).to_bytes(
        SCALAR_LEN, "little"
    )


def inv(s: Scalar) -> Scalar:
    """``s⁻¹ mod L`` (``s`` nonzero)."""
    return pow(int.from_bytes(s, "little"), -1, GROUP_ORDER).to_bytes(SCALAR_LEN, "little")


def unmask(p: Point, *keys: Scalar) -> Point:
    """``(k1·k2·...)⁻¹·p``: remove every key's mask with one multiplication."""
    k = keys[0]
    for other in keys[1:]:
        k = smul(k, other)
    return mul(inv(k), p)


# ---------------------------------------------------------------------- for the proofs
def scalar_bytes(n: int) -> Scalar:
    return (n % GROUP_ORDER).to_bytes(SCALAR_LEN, "little")


def imul(n: int, p: Point) -> Point:
    """``n·p`` for an integer ``n`` (any value; 0 gives the identity)."""
    n %= GROUP_ORDER
    if n == 0 or p == IDENTITY:
        return IDENTITY
    return mul(n.to_bytes(SCALAR_LEN, "little"), p)


def ibase(n: int) -> Point:
    """``n·G`` for the group's standard generator ``G``."""
    n %= GROUP_ORDER
    if n == 0:
        return IDENTITY
    return bytes(_base(n.to_bytes(SCALAR_LEN, "little")))


def padd(p: Point, q: Point) -> Point:
    if p == IDENTITY:
        return q
    if q == IDENTITY:
        return p
    return bytes(_add(p, q))


def psub(p: Point, q: Point) -> Point:
    if q == IDENTITY:
        return p
    return bytes(_sub(p, q))


def psum(points: Iterable[Point]) -> Point:
    acc = IDENTITY
    for p in points:
        acc = padd(acc, p)
    return acc


# ---------------------------------------------------------------------- many products at once
#: ``n·P`` (an integer ``n``; the point ``None`` is ``G``): one term of a linear combination
Term = tuple[int, Point | None]


def _term(n: int, p: Point | None) -> Point:
    if p is None:
        return ibase(n)
    if n % GROUP_ORDER == 1:
        return p  # the point itself: no multiplication
    return imul(n, p)


def _combine(groups: Sequence[Sequence[Term]]) -> list[Point]:
    out = []
    for group in groups:
        acc = IDENTITY
        for n, p in group:
            acc = padd(acc, _term(n, p))
        out.append(acc)
    return out


class _Helper:
    """One worker thread that takes half of the terms of a large batch of linear combinations.

    libsodium runs outside Python's lock (rbcl calls it through ctypes), so two
    threads multiply and add at nearly twice the rate on two cores.  A deal's
    proofs sit on the critical path of both players (each waits while the other
    proves or checks), so the waiting side's core is idle then.  On one core, or
    for a small batch, the thread is not used; the results are the same bytes
    either way (a group cut in two is summed in two parts, and the group law
    does not care in which order).
    """

    MIN_TERMS: Final = 32

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        affinity = getattr(os, "sched_getaffinity", None)
        self.cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
        self.enabled = self.cores >= 2

    def combine(self, groups: Sequence[Sequence[Term]]) -> list[Point]:
        total = sum(len(g) for g in groups)
        if not self.enabled or total < self.MIN_TERMS:
            return _combine(groups)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="p2pkoikoi-mul")
        # cut at the middle term: group k's first `cut` terms here, the rest there
        half, at, k = total // 2, 0, 0
        while at + len(groups[k]) <= half:
            at += len(groups[k])
            k += 1
        cut = half - at
        later = self._pool.submit(_combine, [groups[k][cut:], *groups[k + 1 :]])
        try:
            first = _combine([*groups[:k], groups[k][:cut]])
        finally:
            rest = later.result()  # waited for even when the first part raised
        return [*first[:-1], padd(first[-1], rest[0]), *rest[1:]]


_HELPER: Final = _Helper()


def use_helper_thread(on: bool) -> bool:
    """Turn the helper thread on or off (a benchmark compares the two; on one core it
    stays off); returns whether it was on."""
    was = _HELPER.enabled
    _HELPER.enabled = on and _HELPER.cores >= 2
    return was


def combine_many(groups: Sequence[Sequence[Term]]) -> list[Point]:
    """``[Σ n·p for (n, p) in group]`` for each group (``p = None`` is ``G``).

    The proofs hand each phase's combinations over at once, as they are
    independent; a large batch is split between this thread and one helper
    (:class:`_Helper`).
    """
    return _HELPER.combine(groups)


def mul_many(pairs: Sequence[Term]) -> list[Point]:
    """``[n·p for n, p in pairs]``: :func:`combine_many` of one term each."""
    return _HELPER.combine([(pair,) for pair in pairs])
