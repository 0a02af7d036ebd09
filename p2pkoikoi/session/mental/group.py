"""The prime-order group the hidden deal masks cards in: Ed25519's, through libsodium.

Why this group: masking must commute (``a·(b·P) = b·(a·P)``) and be removable
(``a⁻¹·(a·P) = P``), so it needs scalar multiplication *without* clamping in a
group of prime order.  libsodium exposes exactly that for the prime-order
subgroup of Ed25519 (order ``L = 2^252 + 27742317777372353535851937790883648493``):
``crypto_scalarmult_ed25519_noclamp`` and the scalar arithmetic mod ``L``.
(X25519 clamps scalars, so a mask could not be removed; ristretto255 is not in
the PyNaCl bindings.)  ``crypto_scalarmult_ed25519_noclamp`` refuses a point
that is not canonical, of small order or outside the prime-order subgroup, and
refuses a result that is the identity: every point that comes from the peer
goes through :func:`check_point` or a multiplication, so none is used unchecked.

Card points come from hash-to-curve (``crypto_core_ed25519_from_uniform``,
Elligator 2 with the cofactor cleared) of a tagged hash of the card id, so
nobody knows their discrete logarithms: a masked deck reveals nothing even to
someone who tries every card (``i·G`` would let a peer unmask a deck by a
table look-up).

Points and scalars are 32-byte strings (libsodium's encodings: a compressed
point; a little-endian scalar reduced mod ``L``).
"""

from __future__ import annotations

import hashlib
from typing import Final

import nacl.bindings as sodium
import nacl.exceptions

from p2pkoikoi.engine.deal import shuffle_ids
from p2pkoikoi.session.mental.errors import BadPointError

TAG_CARD: Final = b"p2pkoikoi/v2/hidden/card\x00"
TAG_SCALAR: Final = b"p2pkoikoi/v2/hidden/scalar\x00"
TAG_PERM: Final = b"p2pkoikoi/v2/hidden/perm\x00"
POINT_LEN: Final = 32
SCALAR_LEN: Final = 32
DECK_SIZE: Final = 48

Point = bytes
Scalar = bytes


def card_point(card: int) -> Point:
    """The public point of card ``card`` (0..47): hash-to-curve of a tagged hash."""
    if not 0 <= card < DECK_SIZE:
        raise ValueError("card id out of range")
    digest = hashlib.sha256(TAG_CARD + bytes([card])).digest()
    return bytes(sodium.crypto_core_ed25519_from_uniform(digest))


CARD_POINTS: Final[tuple[Point, ...]] = tuple(card_point(i) for i in range(DECK_SIZE))
CARD_OF_POINT: Final[dict[Point, int]] = {p: i for i, p in enumerate(CARD_POINTS)}
assert len(CARD_OF_POINT) == DECK_SIZE  # 48 distinct points


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
        s = bytes(sodium.crypto_core_ed25519_scalar_reduce(wide))
        if s != bytes(SCALAR_LEN):
            return s
        counter += 1  # pragma: no cover - probability 2^-252


def derive_permutation(seed: bytes) -> tuple[int, ...]:
    """A uniformly random permutation of 0..47 from ``seed`` (deal.md's Fisher-Yates)."""
    return tuple(shuffle_ids(hashlib.sha256(TAG_PERM + seed).digest()))


def check_point(p: bytes) -> Point:
    """``p`` if it is a valid point of the prime-order subgroup, not the identity."""
    if (
        not isinstance(p, bytes)
        or len(p) != POINT_LEN
        or not sodium.crypto_core_ed25519_is_valid_point(p)
    ):
        raise BadPointError("the other player sent a card that is not a valid group element")
    return p


def check_scalar(s: bytes) -> Scalar:
    """``s`` if it is a canonical (reduced) nonzero scalar."""
    if not isinstance(s, bytes) or len(s) != SCALAR_LEN or s == bytes(SCALAR_LEN):
        raise BadPointError("the other player sent a key that is not a valid scalar")
    if int.from_bytes(s, "little") >= GROUP_ORDER:
        raise BadPointError("the other player sent a key that is not reduced")
    return s


GROUP_ORDER: Final = 2**252 + 27742317777372353535851937790883648493


def mul(s: Scalar, p: Point) -> Point:
    """``s·p``; raises :class:`BadPointError` for an invalid point (libsodium checks it)."""
    try:
        return bytes(sodium.crypto_scalarmult_ed25519_noclamp(s, p))
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError, TypeError):
        raise BadPointError(
            "the other player sent a card that is not a valid group element"
        ) from None


def smul(a: Scalar, b: Scalar) -> Scalar:
    """``a·b mod L``."""
    return bytes(sodium.crypto_core_ed25519_scalar_mul(a, b))


def inv(s: Scalar) -> Scalar:
    """``s⁻¹ mod L`` (``s`` nonzero)."""
    return bytes(sodium.crypto_core_ed25519_scalar_invert(s))


def unmask(p: Point, *keys: Scalar) -> Point:
    """``(k1·k2·...)⁻¹·p``: remove every key's mask with one multiplication."""
    k = keys[0]
    for other in keys[1:]:
        k = smul(k, other)
    return mul(inv(k), p)
