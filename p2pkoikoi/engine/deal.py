"""Deterministic shuffles from a match seed (specified in ``protocol/deal.md``).

Theory of operation: every random choice of a match comes from the 32-byte
match seed through SHA-256, so that both peers, and anyone verifying a record
later, derive the same decks.  A deck is a Fisher-Yates shuffle driven by a
stream of 32-bit words, with rejection sampling so every permutation is equally
likely (no modulo bias).
"""

from __future__ import annotations

import struct

from p2pkoikoi.engine.cards import CARDS, Card
from p2pkoikoi.engine.digest import sha256
from p2pkoikoi.engine.errors import InputError
from p2pkoikoi.engine.values import value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

DECK_TAG = b"p2pkoikoi/deck/v1"
DEALER_DRAW_TAG = b"p2pkoikoi/dealer-draw/v1"
COIN_TAG = b"p2pkoikoi/coin/v1"


def _check_seed(match_seed: bytes) -> None:
    if not isinstance(match_seed, (bytes, bytearray)) or len(match_seed) != 32:
        raise InputError("match seed must be exactly 32 bytes (64 hex digits)")


def deck_seed(match_seed: bytes, round_no: int, attempt: int, tag: bytes = DECK_TAG) -> bytes:
    """``SHA-256(tag || match_seed || round (u16 BE) || attempt (u16 BE))``."""
    _check_seed(match_seed)
    if not 0 <= round_no <= 0xFFFF or not 0 <= attempt <= 0xFFFF:
        raise InputError("round and attempt must be between 0 and 65535")
    return _sha256(tag + bytes(match_seed) + (round_no << 16 | attempt).to_bytes(4, "big")).digest()


def random_words(seed: bytes) -> Iterator[int]:
    """Words of ``SHA-256(seed || k (u32 BE))`` for k = 0, 1, 2, ..., eight per digest."""
    k = 0
    while True:
        digest = sha256(seed + k.to_bytes(4, "big")).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(digest[i : i + 4], "big")
        k += 1


def shuffle_ids(seed: bytes) -> list[int]:
    """The card ids 0..47 shuffled by the word stream of ``seed``; index 0 is the top."""
    # Fast path: the 47 draws take the first 47 words unless a word is rejected,
    # which needs a word of at least _MIN_LIMIT (probability under 47 * 48 / 2^32
    # per deck); then the general loop redoes it word by word.  Such a word starts
    # with three 0xFF bytes, so bytes without three 0xFF in a row need no check of
    # each word (a false alarm only takes the general loop: about 1 deck in 90,000).
    sha = _sha256
    data = b"".join(
        (
            sha(seed + _K0).digest(),
            sha(seed + _K1).digest(),
            sha(seed + _K2).digest(),
            sha(seed + _K3).digest(),
            sha(seed + _K4).digest(),
            sha(seed + _K5).digest(),
        )
    )
    if b"\xff\xff\xff" in data:
        return _shuffle_general(seed)
    words = _WORD_STREAM.unpack(data)
    deck = list(range(48))
    for (i, n), w in zip(_TOP_SIZE, words, strict=True):  # plain % beats map(int.__mod__)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _shuffle_general(seed: bytes) -> list[int]:
    """The shuffle as specified, word by word, rejection included."""
    deck = list(range(48))
    words = random_words(seed)
    for i, n, limit in _STEPS:
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


_WORD_STREAM = struct.Struct(">47I4x")  # the first 47 words of six digests
_K0, _K1, _K2, _K3, _K4, _K5 = (k.to_bytes(4, "big") for k in range(6))
_STEPS = tuple((i, i + 1, (1 << 32) - ((1 << 32) % (i + 1))) for i in range(47, 0, -1))
_TOP_SIZE = tuple((i, n) for i, n, _ in _STEPS)
_MIN_LIMIT = min(limit for _, _, limit in _STEPS)
assert _MIN_LIMIT >= 0xFFFFFF00  # every rejected word starts with three 0xFF bytes
_sha256 = sha256


def derive_deck(match_seed: bytes, round_no: int = 1, attempt: int = 0) -> list[int]:
    """The deck (card ids, top first) for one deal of one round."""
    return shuffle_ids(deck_seed(match_seed, round_no, attempt))


@value
class Deal:
    """One deal, split as the rules deal it: 2 to the non-dealer, 2 to the field,
    2 to the dealer, four times; the remaining 24 are the stock, top first."""

    deck: tuple[int, ...]
    nondealer_hand: tuple[int, ...]
    field: tuple[int, ...]
    dealer_hand: tuple[int, ...]
    stock: tuple[int, ...]

    @classmethod
    def from_deck(cls, deck: list[int] | tuple[int, ...]) -> Deal:
        nd: list[int] = []
        fd: list[int] = []
        dl: list[int] = []
        for r in range(4):
            base = r * 6
            nd += deck[base : base + 2]
            fd += deck[base + 2 : base + 4]
            dl += deck[base + 4 : base + 6]
        return cls(tuple(deck), tuple(nd), tuple(fd), tuple(dl), tuple(deck[24:]))

    def to_dict(self) -> dict[str, list[str]]:
        def codes(ids: tuple[int, ...]) -> list[str]:
            return [CARDS[i].code for i in ids]

        return {
            "deck": codes(self.deck),
            "nondealer_hand": codes(self.nondealer_hand),
            "field": codes(self.field),
            "dealer_hand": codes(self.dealer_hand),
            "stock": codes(self.stock),
        }


def deal(match_seed: bytes, round_no: int = 1, attempt: int = 0) -> Deal:
    return Deal.from_deck(derive_deck(match_seed, round_no, attempt))


def coin(match_seed: bytes, round_no: int) -> int:
    """A fair coin for the seat that deals: low bit of ``SHA-256(COIN_TAG || seed || round)``."""
    return deck_seed(match_seed, round_no, 0, COIN_TAG)[-1] & 1


def dealer_draw(match_seed: bytes, round_no: int, attempt: int) -> tuple[Card, Card]:
    """The two cards turned over to choose a dealer: seat 0 takes the top card, seat 1 the next."""
    deck = shuffle_ids(deck_seed(match_seed, round_no, attempt, DEALER_DRAW_TAG))
    return CARDS[deck[0]], CARDS[deck[1]]
