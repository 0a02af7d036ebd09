"""The masked deck of one deal: three masking steps, one key per card, and the audit.

Theory of operation
-------------------
Cards are points ``P_c`` of a prime-order group (:mod:`.group`).  With ``π_h``,
``π_j`` the host's and joiner's secret permutations, ``a`` the host's deck
scalar and ``a_j``, ``b_j`` the host's and joiner's secret key for position
``j`` (0..47):

1. host:   ``D1[j] = a · P[π_h(j)]``              shuffle, one mask for the deck
2. joiner: ``E[j]  = b · D1[π_j(j)]``             shuffle, one mask for the deck
   joiner: ``D2[j] = (b_j · b⁻¹) · E[j]``         swap its deck mask for per-position keys
3. host:   ``D3[j] = (a_j · a⁻¹) · D2[j]``        swap its deck mask for per-position keys

so ``D3[j] = a_j · b_j · P[σ(j)]`` with ``σ = π_h ∘ π_j``.  Position ``j`` opens
only with *both* ``a_j`` and ``b_j``; each key opens no other position.  Nobody
knows ``σ``: the host does not know ``π_j``, the joiner does not know ``π_h``,
and telling ``x·P`` apart from ``x·Q`` without ``x`` is the decisional
Diffie-Hellman problem.  The joiner masks each position with its own key in the
same step as its shuffle, so no relation between points the host slips into
``D1`` survives into ``D2`` (a host could otherwise follow a card through the
joiner's shuffle).

At the end of the round each side publishes its :class:`DeckSecrets` (the
audit); :func:`check_audit` recomputes the three steps from them and names the
seat whose step differs, and checks every key revealed during the round
against the audit.

Every step travels with a zero-knowledge proof (:mod:`.proof`) that its
sender knows the permutation and keys linking its output to its input: a
shuffle proof for ``D1`` (from the card points) and ``E`` (from ``D1``), a
re-keying proof for ``D2`` (from ``E``) and ``D3`` (from ``D2``).  Each is
checked on receipt, before any card of the deal opens, so a step that is not
a masked permutation (the "sum attack": ``D1[i] + D1[i']`` at a position) is
refused where it is sent and names its sender.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import Final

from p2pkoikoi.session.mental.errors import (
    BadPointError,
    BadProofError,
    BrokenAuditError,
    DuplicateCardError,
    NotACardError,
    SwappedCardError,
    WrongMaskingError,
)
from p2pkoikoi.session.mental.group import (
    CARD_OF_POINT,
    CARD_POINTS,
    DECK_SIZE,
    POINT_LEN,
    SCALAR_LEN,
    Point,
    Scalar,
    check_point,
    check_scalar,
    derive_permutation,
    derive_scalar,
    inv,
    mul,
    mul_many,
    smul,
    unmask,
)
from p2pkoikoi.session.mental.proof import (
    REKEY_PROOF_LEN,
    SHUFFLE_PROOF_LEN,
    prove_rekey,
    prove_shuffle,
    verify_rekey,
    verify_shuffle,
)

HOST: Final = 0
JOINER: Final = 1
TAG_DECK_DIGEST: Final = b"p2pkoikoi/v2/hidden/deck\x00"
SEAT_NAME: Final = ("the host", "the joiner")

Deck = tuple[Point, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class DeckSecrets:
    """One side's secrets for one deal; published whole as the round's audit.

    ``scalar`` is the seat's deck mask (``a`` for the host, ``b`` for the joiner);
    ``perm`` its permutation; ``keys[j]`` its key for position ``j``.
    """

    seat: int
    scalar: Scalar
    perm: tuple[int, ...]
    keys: tuple[Scalar, ...]

    @classmethod
    def derive(cls, seat: int, seed: bytes) -> DeckSecrets:
        """Secrets from 32 caller-given random bytes (the session passes fresh entropy)."""
        if seat not in (HOST, JOINER):
            raise ValueError("seat must be 0 or 1")
        if len(seed) != 32:
            raise ValueError("deck secrets need a 32-byte seed")
        return cls(
            seat=seat,
            scalar=derive_scalar(seed, b"deck", 0),
            perm=derive_permutation(seed),
            keys=tuple(derive_scalar(seed, b"key", j) for j in range(DECK_SIZE)),
        )

    def encode(self) -> bytes:
        """``scalar || perm (48 bytes) || keys (48 x 32 bytes)``: 1,616 bytes."""
        return self.scalar + bytes(self.perm) + b"".join(self.keys)

    @classmethod
    def decode(cls, seat: int, data: bytes) -> DeckSecrets:
        """Parse and check an audit from ``seat``; anything malformed is a broken audit."""
        who = SEAT_NAME[seat]
        want = SCALAR_LEN + DECK_SIZE + DECK_SIZE * SCALAR_LEN
        if not isinstance(data, bytes) or len(data) != want:
            raise BrokenAuditError(f"{who}'s audit has the wrong length", seat)
        try:
            scalar = check_scalar(data[:SCALAR_LEN])
            at = SCALAR_LEN
            perm = tuple(data[at : at + DECK_SIZE])
            at += DECK_SIZE
            keys = tuple(
                check_scalar(data[at + i * SCALAR_LEN : at + (i + 1) * SCALAR_LEN])
                for i in range(DECK_SIZE)
            )
        except BadPointError:
            raise BrokenAuditError(
                f"{who}'s audit holds a key that is not a scalar", seat
            ) from None
        if sorted(perm) != list(range(DECK_SIZE)):
            raise BrokenAuditError(f"{who}'s audit permutation is not a permutation", seat)
        return cls(seat, scalar, perm, keys)


def _int(s: Scalar) -> int:
    return int.from_bytes(s, "little")


# ---------------------------------------------------------------------- the three steps
def host_mask(sec: DeckSecrets) -> Deck:
    """Step 1 (host): ``D1[j] = a · P[π_h(j)]``."""
    assert sec.seat == HOST
    a = _int(sec.scalar)
    return tuple(mul_many([(a, CARD_POINTS[sec.perm[j]]) for j in range(DECK_SIZE)]))


def joiner_mask(sec: DeckSecrets, d1: Deck) -> Deck:
    """Step 2 (joiner): ``D2[j] = b_j · D1[π_j(j)]`` (``d1`` already checked)."""
    assert sec.seat == JOINER
    return tuple(mul_many([(_int(sec.keys[j]), d1[sec.perm[j]]) for j in range(DECK_SIZE)]))


def host_lock(sec: DeckSecrets, d2: Deck) -> Deck:
    """Step 3 (host): ``D3[j] = (a_j · a⁻¹) · D2[j]``; multiplying checks each point of ``d2``."""
    assert sec.seat == HOST
    ai = inv(sec.scalar)
    return tuple(mul_many([(_int(smul(sec.keys[j], ai)), d2[j]) for j in range(DECK_SIZE)]))


def joiner_shuffle(sec: DeckSecrets, d1: Deck) -> Deck:
    """Step 2, first half (joiner): ``E[j] = b · D1[π_j(j)]``, the deck its proof shuffles."""
    assert sec.seat == JOINER
    b = _int(sec.scalar)
    return tuple(mul_many([(b, d1[sec.perm[j]]) for j in range(DECK_SIZE)]))


def rekey_factors(sec: DeckSecrets) -> tuple[Scalar, ...]:
    """``k_j · s⁻¹``: what turns the seat's deck mask ``s`` into its position keys."""
    si = inv(sec.scalar)
    return tuple(smul(k, si) for k in sec.keys)


# ---------------------------------------------------------------------- the steps with proofs
def _ctx(context: bytes, step: int) -> bytes:
    return context + bytes([step])


def step1_message(sec: DeckSecrets, context: bytes) -> tuple[Deck, bytes]:
    """Host: ``D1`` and its message ``D1 || shuffle proof (card points -> D1)``."""
    d1 = host_mask(sec)
    proof = prove_shuffle(_ctx(context, 1), CARD_POINTS, d1, sec.perm, sec.scalar)
    return d1, encode_deck(d1) + proof


def step2_message(sec: DeckSecrets, d1: Deck, context: bytes) -> tuple[Deck, bytes]:
    """Joiner: ``D2`` and its message ``D2 || E || shuffle proof (D1 -> E)
    || re-keying proof (E -> D2)``."""
    e = joiner_shuffle(sec, d1)
    d2 = joiner_mask(sec, d1)
    ctx = _ctx(context, 2)
    shuffle = prove_shuffle(ctx, d1, e, sec.perm, sec.scalar)
    rekey = prove_rekey(ctx, e, d2, rekey_factors(sec))
    return d2, encode_deck(d2) + encode_deck(e) + shuffle + rekey


def step3_message(sec: DeckSecrets, d2: Deck, context: bytes) -> tuple[Deck, bytes]:
    """Host: ``D3`` and its message ``D3 || re-keying proof (D2 -> D3)``."""
    d3 = host_lock(sec, d2)
    return d3, encode_deck(d3) + prove_rekey(_ctx(context, 3), d2, d3, rekey_factors(sec))


DECK_LEN: Final = DECK_SIZE * POINT_LEN
STEP_LEN: Final = {
    1: DECK_LEN + SHUFFLE_PROOF_LEN,
    2: 2 * DECK_LEN + SHUFFLE_PROOF_LEN + REKEY_PROOF_LEN,
    3: DECK_LEN + REKEY_PROOF_LEN,
}


def _length(data: bytes, sender: int, step: int) -> None:
    if not isinstance(data, bytes) or len(data) != STEP_LEN[step]:
        raise BadProofError(
            f"{SEAT_NAME[sender]}'s masked deck (step {step}) has the wrong length", sender
        )


def decode_step1(data: bytes, context: bytes, *, proof: bool = True) -> Deck:
    """Joiner: the host's ``D1``, its points checked and (unless ``proof`` is False: the
    caller checks it later with :func:`verify_step1`) its shuffle proof verified."""
    _length(data, HOST, 1)
    d1 = decode_deck(data[:DECK_LEN], HOST, 1)
    if proof:
        verify_step1(data, d1, context)
    return d1


def verify_step1(data: bytes, d1: Deck, context: bytes) -> None:
    """Joiner: the shuffle proof of the host's ``D1`` (``data``, decoded as ``d1``)."""
    verify_shuffle(_ctx(context, 1), CARD_POINTS, d1, data[DECK_LEN:], "the host", HOST)


def decode_step2(data: bytes, d1: Deck, context: bytes) -> Deck:
    """Host: the joiner's ``D2``, with both its proofs verified."""
    _length(data, JOINER, 2)
    d2 = decode_deck(data[:DECK_LEN], JOINER, 2)
    e = decode_deck(data[DECK_LEN : 2 * DECK_LEN], JOINER, 2)
    ctx = _ctx(context, 2)
    at = 2 * DECK_LEN
    verify_shuffle(ctx, d1, e, data[at : at + SHUFFLE_PROOF_LEN], "the joiner", JOINER)
    verify_rekey(ctx, e, d2, data[at + SHUFFLE_PROOF_LEN :], "the joiner", JOINER)
    return d2


def decode_step3(data: bytes, d2: Deck, context: bytes) -> Deck:
    """Joiner: the host's ``D3``, its re-keying proof verified."""
    _length(data, HOST, 3)
    d3 = decode_deck(data[:DECK_LEN], HOST, 3)
    verify_rekey(_ctx(context, 3), d2, d3, data[DECK_LEN:], "the host", HOST)
    return d3


def decode_deck(data: bytes, sender: int, step: int) -> Deck:
    """48 valid, pairwise distinct points from ``sender``'s step-``step`` message."""
    who = SEAT_NAME[sender]
    if not isinstance(data, bytes) or len(data) != DECK_SIZE * POINT_LEN:
        raise BadPointError(f"{who}'s masked deck (step {step}) has the wrong length", sender)
    deck = tuple(data[i * POINT_LEN : (i + 1) * POINT_LEN] for i in range(DECK_SIZE))
    try:
        for p in deck:
            check_point(p)
    except BadPointError:
        raise BadPointError(
            f"{who}'s masked deck (step {step}) holds a point outside the group", sender
        ) from None
    if len(set(deck)) != DECK_SIZE:
        raise DuplicateCardError(f"{who}'s masked deck (step {step}) holds a card twice", sender)
    return deck


def encode_deck(deck: Sequence[Point]) -> bytes:
    return b"".join(deck)


def deck_digest(*decks: Sequence[Point]) -> bytes:
    """What the hidden state hash binds: ``SHA-256(tag || D1 || D2 || D3)`` (those sent so far)."""
    h = hashlib.sha256(TAG_DECK_DIGEST)
    for d in decks:
        h.update(encode_deck(d))
    return h.digest()


# ---------------------------------------------------------------------- opening one position
def open_position(d3: Deck, pos: int, host_key: Scalar, joiner_key: Scalar, blame: int) -> int:
    """The card at ``pos``, opened with both keys; ``blame`` is the seat whose key is new.

    The caller's own key is right (it made it), so a point that is no card
    proves the other seat's key or masking wrong.
    """
    p = unmask(d3[pos], host_key, joiner_key)
    card = CARD_OF_POINT.get(p)
    if card is None:
        raise NotACardError(
            f"{SEAT_NAME[blame]}'s key for position {pos} opens no card"
            " (a wrong key or a wrongly masked deck)",
            blame,
        )
    return card


def check_opens(
    d3: Deck, pos: int, host_key: Scalar, joiner_key: Scalar, card: int, blame: int
) -> None:
    """Raise :class:`SwappedCardError` unless ``pos`` opens to ``card`` (one multiplication)."""
    if mul(smul(host_key, joiner_key), CARD_POINTS[card]) != d3[pos]:
        raise SwappedCardError(
            f"{SEAT_NAME[blame]} named a card that position {pos} does not hold", blame
        )


# ---------------------------------------------------------------------- the audit
def dealt_deck(host: DeckSecrets, joiner: DeckSecrets) -> tuple[int, ...]:
    """``σ``: the card at each position, from both audits (``σ(j) = π_h(π_j(j))``)."""
    return tuple(host.perm[joiner.perm[j]] for j in range(DECK_SIZE))


def _same_deck(made: Deck, sent: Deck, what: str, seat: int) -> None:
    """A step recomputed from an audit must be the deck its sender sent."""
    for j, p in enumerate(made):
        if p != sent[j]:
            raise WrongMaskingError(f"{what} is wrong at position {j}", seat)


def check_audit(
    d1: Deck,
    d2: Deck,
    d3: Deck,
    host: DeckSecrets,
    joiner: DeckSecrets,
    revealed: Mapping[tuple[int, int], Scalar] = {},
    trust: int | None = None,
) -> tuple[int, ...]:
    """Recompute every step from both audits; return the dealt deck ``σ``.

    ``revealed`` maps ``(seat, position)`` to the key that seat sent during the
    round: each must equal its audit.  ``trust`` is the caller's own seat,
    whose steps need no recomputing (a verifier passes ``None`` and checks all).
    """
    for (seat, pos), key in revealed.items():
        audit = host if seat == HOST else joiner
        if audit.keys[pos] != key:
            raise BrokenAuditError(
                f"{SEAT_NAME[seat]}'s audit key for position {pos} is not the key it sent"
                " during the round",
                seat,
            )
    if trust != HOST:
        _same_deck(host_mask(host), d1, "the host's masked deck (step 1)", HOST)
    if trust != JOINER:
        _same_deck(joiner_mask(joiner, d1), d2, "the joiner's masked deck (step 2)", JOINER)
    if trust != HOST:
        _same_deck(host_lock(host, d2), d3, "the host's locked deck (step 3)", HOST)
    return dealt_deck(host, joiner)
