"""Cards and the deterministic deal, checked against protocol/vectors/deal.json."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from p2pkoikoi.engine import CARDS, Card, CardSet, InputError, parse_card, parse_cards
from p2pkoikoi.engine.deal import coin, deal, dealer_draw, deck_seed, derive_deck

VECTORS = json.loads((Path(__file__).parents[2] / "protocol" / "vectors" / "deal.json").read_text())

CODES = [
    "1b",
    "1r",
    "1c1",
    "1c2",
    "2a",
    "2r",
    "2c1",
    "2c2",
    "3b",
    "3r",
    "3c1",
    "3c2",
    "4a",
    "4r",
    "4c1",
    "4c2",
    "5a",
    "5r",
    "5c1",
    "5c2",
    "6a",
    "6r",
    "6c1",
    "6c2",
    "7a",
    "7r",
    "7c1",
    "7c2",
    "8b",
    "8a",
    "8c1",
    "8c2",
    "9a",
    "9r",
    "9c1",
    "9c2",
    "10a",
    "10r",
    "10c1",
    "10c2",
    "11b",
    "11a",
    "11r",
    "11c",
    "12b",
    "12c1",
    "12c2",
    "12c3",
]


def test_card_codes_in_id_order() -> None:
    assert [c.code for c in CARDS] == CODES
    assert [c.id for c in CARDS] == list(range(48))


@pytest.mark.parametrize(
    "alias,code",
    [
        ("crane", "1b"),
        ("Curtain", "3b"),
        ("MOON", "8b"),
        ("rain-man", "11b"),
        ("phoenix", "12b"),
        ("sake-cup", "9a"),
        ("boar", "7a"),
        ("deer", "10a"),
        ("butterflies", "6a"),
        ("lightning", "11c"),
        ("sake cup", "9a"),
        ("12C3", "12c3"),
    ],
)
def test_aliases(alias: str, code: str) -> None:
    assert parse_card(alias).code == code


def test_card_values_paste_back() -> None:
    c = Card("9a")
    assert c is CARDS[32] and eval(repr(c)) is c
    s = CardSet(["1b", "3b"])
    assert eval(repr(s)) == s and len(s) == 2 and Card("1b") in s
    assert c.english == "Sake cup" and c.romaji and c.japanese == "菊に盃"


def test_bad_cards() -> None:
    with pytest.raises(InputError, match="unknown card: 'zz'"):
        parse_card("zz")
    with pytest.raises(InputError, match="duplicate card: 1b"):
        parse_cards(["1b", "crane"])
    with pytest.raises(InputError, match="out of range"):
        parse_card(48)


@pytest.mark.parametrize(
    "v", VECTORS["deals"], ids=lambda v: f"{v['match_seed'][:6]}-r{v['round']}a{v['attempt']}"
)
def test_deal_vectors(v: dict) -> None:
    seed = bytes.fromhex(v["match_seed"])
    assert deck_seed(seed, v["round"], v["attempt"]).hex() == v["deck_seed"]
    d = deal(seed, v["round"], v["attempt"]).to_dict()
    for key in ("deck", "nondealer_hand", "field", "dealer_hand", "stock"):
        assert d[key] == v[key]


def test_coin_and_dealer_draw_vectors() -> None:
    for v in VECTORS["coins"]:
        assert coin(bytes.fromhex(v["match_seed"]), v["round"]) == v["dealer"]
    for v in VECTORS["dealer_draws"]:
        a, b = dealer_draw(bytes.fromhex(v["match_seed"]), v["round"], v["attempt"])
        assert (a.code, b.code) == (v["seat0"], v["seat1"])


def test_deal_follows_the_spec_split() -> None:
    deck = derive_deck(bytes(32), 1, 0)
    d = deal(bytes(32))
    assert sorted(deck) == list(range(48))
    assert d.nondealer_hand == tuple(deck[0:2] + deck[6:8] + deck[12:14] + deck[18:20])
    assert d.field == tuple(deck[2:4] + deck[8:10] + deck[14:16] + deck[20:22])
    assert d.dealer_hand == tuple(deck[4:6] + deck[10:12] + deck[16:18] + deck[22:24])
    assert d.stock == tuple(deck[24:])


def test_shuffle_positions_are_unbiased_enough() -> None:
    # Where card 0 lands over many seeds: every position is hit, none wildly often.
    counts = [0] * 48
    for k in range(4800):
        deck = derive_deck(k.to_bytes(32, "big"), 1, 0)
        counts[deck.index(0)] += 1
    assert min(counts) > 50 and max(counts) < 160


def test_bad_seed() -> None:
    with pytest.raises(InputError, match="32 bytes"):
        derive_deck(b"short", 1, 0)


def test_rejected_words_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word at or above the limit is skipped (the fast path hands such decks to the
    general loop); SHA-256 almost never yields one, so feed the loop a stream that does."""
    deal_module = importlib.import_module("p2pkoikoi.engine.deal")  # the module, not deal()

    plain = list(range(1000, 1100))
    rejected = [0xFFFFFFFF] + plain  # 2^32 - 1 is above every limit for n = 48
    monkeypatch.setattr(deal_module, "random_words", lambda seed: iter(rejected))
    with_rejection = deal_module._shuffle_general(b"x")
    monkeypatch.setattr(deal_module, "random_words", lambda seed: iter(plain))
    assert with_rejection == deal_module._shuffle_general(b"x")
    assert sorted(with_rejection) == list(range(48))


@pytest.mark.parametrize(
    ("at", "general"),
    [(0, True), (4 * 46, True), (188, True), (1, True), (None, False)],
)
def test_fast_shuffle_hands_words_near_the_limit_to_the_general_loop(
    monkeypatch: pytest.MonkeyPatch, at: int | None, general: bool
) -> None:
    """Three 0xFF bytes anywhere in the six digests (word-aligned or not, even in the
    four bytes no draw reads) send the deck to the general loop, which skips words at
    the limit; without them the fast path shuffles on its own."""
    deal_module = importlib.import_module("p2pkoikoi.engine.deal")
    data = bytes(i % 251 for i in range(192))  # no 0xFF anywhere
    assert b"\xff" not in data
    if at is not None:
        data = data[:at] + b"\xff\xff\xff" + data[at + 3 :]
    digests = iter([data[i : i + 32] for i in range(0, 192, 32)])

    class FakeHash:
        def __init__(self, _: bytes) -> None:
            self.value = next(digests)

        def digest(self) -> bytes:
            return self.value

    calls: list[bytes] = []
    monkeypatch.setattr(deal_module, "_sha256", FakeHash)
    monkeypatch.setattr(deal_module, "_shuffle_general", lambda seed: calls.append(seed) or [])
    deal_module.shuffle_ids(b"seed")
    assert calls == ([b"seed"] if general else [])
