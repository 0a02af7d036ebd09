"""Yaku scoring: every worked example in the sources, each rule variation, and
agreement between the fast :func:`total` and the explaining :func:`evaluate`."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pkoikoi.engine.cards import (
    ALL_MASK,
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    INOSHIKACHO,
    MONTH_MASKS,
    POEM_RIBBONS,
    RIBBONS,
    parse_cards,
)
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.engine.rules import (
    HAND_YAKU_IDS,
    YAKU_IDS,
    KoiKoiMultiplier,
    RainOut,
    RuleSet,
    SakeCup,
)
from p2pkoikoi.engine.yaku import (
    YAKU_INFO,
    Multiplier,
    ScoreBreakdown,
    YakuScore,
    evaluate,
    four_pairs,
    hand_yaku,
    score,
    total,
    total_function,
)

ONLINE = PRESETS["online"]


def m(*codes: str) -> int:
    """Mask of the cards named by code or alias."""
    mask = 0
    for card in parse_cards(codes):
        mask |= card.bit
    return mask


def ids(captured: int, rules: RuleSet, field: int = 0) -> dict[str, int]:
    return {y.id: y.points for y in evaluate(captured, rules, field)}


# ---------------------------------------------------------------- worked examples


class TestSeed001VanikarTable:
    """The scoring table of seed 001, row by row."""

    rules = PRESETS["vanikar"]

    def test_sanko_only(self) -> None:
        yaku = evaluate(m("crane", "curtain", "moon"), self.rules)
        assert [(y.id, y.points) for y in yaku] == [("sanko", 5)]
        assert score(yaku, self.rules, 1, 0).score == 5

    def test_sanko_tsukimi_hanami_doubles_for_seven(self) -> None:
        yaku = evaluate(m("crane", "curtain", "moon", "sake-cup", "9c1"), self.rules)
        assert ids(m("crane", "curtain", "moon", "sake-cup"), self.rules) == {
            "sanko": 5,
            "hanami": 5,
            "tsukimi": 5,
        }
        own_call = score(yaku, self.rules, calls_winner=1, calls_loser=0)
        assert (own_call.base, own_call.score) == (15, 30)
        assert [mu.factor for mu in own_call.multipliers] == [2]

    def test_opponent_call_makes_sixty(self) -> None:
        yaku = evaluate(m("crane", "curtain", "moon", "sake-cup"), self.rules)
        assert score(yaku, self.rules, calls_winner=1, calls_loser=1).score == 60

    def test_tane_with_six_animals(self) -> None:
        pile = m("2a", "4a", "5a", "6a", "7a", "8a")
        yaku = evaluate(pile, self.rules)
        assert [(y.id, y.points) for y in yaku] == [("tane", 2)]
        assert score(yaku, self.rules, 0, 0).score == 2
        assert score(yaku, self.rules, 0, 1).score == 4

    def test_goko_after_opponent_called(self) -> None:
        yaku = evaluate(BRIGHTS, self.rules)
        assert [(y.id, y.points) for y in yaku] == [("goko", 10)]
        assert score(yaku, self.rules, 0, 1).score == 40

    def test_no_hand_yaku(self) -> None:
        assert hand_yaku(MONTH_MASKS[5] | m("1b", "2a", "3b", "4a"), self.rules) is None


def test_seed002_ten_times_two_times_three() -> None:
    """Online: Tsukimi 5 + Hanami 5, one call by each player -> 10 x 2 x 3 = 60."""
    yaku = evaluate(m("moon", "curtain", "sake-cup"), ONLINE)
    assert [(y.id, y.points) for y in yaku] == [("hanami", 5), ("tsukimi", 5)]
    result = score(yaku, ONLINE, calls_winner=1, calls_loser=1)
    assert result.base == 10
    assert [mu.factor for mu in result.multipliers] == [2, 3]
    assert result.score == 60
    assert "8 or more" in result.multipliers[0].reason


def test_seed002_exactly_seven_not_doubled_online_but_nintendo() -> None:
    """Seed 002: "hands worth exactly 7, which Nintendo doubles and this game does not"."""
    pile = m("crane", "curtain", "moon", "rain-man")
    yaku_online = evaluate(pile, ONLINE)
    assert score(yaku_online, ONLINE, 0, 0).score == 7
    nintendo = PRESETS["nintendo"]
    assert score(evaluate(pile, nintendo), nintendo, 0, 0).score == 14


def test_seed000_blue_scrolls_and_three_brights() -> None:
    rules = PRESETS["rulebook"]
    pile = m("6r", "9r", "10r", "crane", "curtain", "moon")
    yaku = evaluate(pile, rules)
    assert [(y.id, y.points) for y in yaku] == [("sanko", 5), ("aotan", 5)]
    result = score(yaku, rules, calls_winner=1, calls_loser=0)
    assert (result.base, result.score) == (10, 20)


def test_seed000_extra_blue_scroll_plus_red_scrolls() -> None:
    """ "In the Red Scrolls example, an extra Blue Scroll would be worth 1 additional point."""
    rules = PRESETS["rulebook"]
    assert ids(m("1r", "2r", "3r", "6r"), rules) == {"akatan": 6}


def test_seed000_no_viewing_yaku() -> None:
    assert ids(m("curtain", "moon", "sake-cup"), PRESETS["rulebook"]) == {}


# ---------------------------------------------------------------- hand yaku


class TestHandYaku:
    def test_four_of_a_month(self) -> None:
        hand = MONTH_MASKS[5] | m("1b", "2a", "3b", "4a")
        got = hand_yaku(hand, ONLINE)
        assert got == YakuScore("teshi", 6, MONTH_MASKS[5])

    def test_four_pairs(self) -> None:
        hand = m("1b", "1r", "2a", "2r", "3b", "3r", "12c1", "12c2")
        assert hand_yaku(hand, ONLINE) == YakuScore("kuttsuki", 6, hand)

    def test_four_of_month_and_two_pairs_is_teshi(self) -> None:
        hand = MONTH_MASKS[5] | m("1b", "1r", "2a", "2r")
        got = hand_yaku(hand, ONLINE)
        assert got is not None and got.id == "teshi"
        assert got.cards == MONTH_MASKS[5]

    def test_four_of_month_and_two_pairs_is_not_four_pairs(self) -> None:
        """Seed 000: kuttsuki is "2 cards from 4 different months"; 4+2+2 is two months
        of two, so with Teshi off the hand is nothing (it used to count as Kuttsuki)."""
        hand = MONTH_MASKS[5] | m("1b", "1r", "2a", "2r")
        assert not four_pairs(hand)
        assert hand_yaku(hand, dataclasses.replace(ONLINE, teshi=0)) is None

    def test_four_pairs_is_two_cards_of_four_months(self) -> None:
        assert four_pairs(m("1b", "1r", "2a", "2r", "3b", "3r", "12c1", "12c2"))
        assert not four_pairs(m("1b", "1r", "2a", "2r", "3b", "3r", "4a", "5a"))
        assert not four_pairs(m("1b", "1r", "1c1", "2a", "2r", "2c1", "3b", "3r"))
        assert not four_pairs(MONTH_MASKS[1] | MONTH_MASKS[2])

    def test_three_pairs_and_two_singles_is_nothing(self) -> None:
        hand = m("1b", "1r", "2a", "2r", "3b", "3r", "4a", "5a")
        assert hand_yaku(hand, ONLINE) is None

    def test_three_of_a_month_is_nothing(self) -> None:
        hand = m("1b", "1r", "1c1", "2a", "3b", "4a", "5a", "6a")
        assert hand_yaku(hand, ONLINE) is None

    def test_switched_off_is_none(self) -> None:
        off = dataclasses.replace(ONLINE, teshi=0, kuttsuki=0)
        assert hand_yaku(MONTH_MASKS[5] | m("1b", "2a", "3b", "4a"), off) is None
        pairs = m("1b", "1r", "2a", "2r", "3b", "3r", "12c1", "12c2")
        assert hand_yaku(pairs, off) is None

    def test_info(self) -> None:
        got = hand_yaku(MONTH_MASKS[1] | m("2a", "3b", "4a", "5a"), ONLINE)
        assert got is not None
        assert (got.name, got.romaji, got.japanese) == ("Four of a month in hand", "Teshi", "手四")


# ---------------------------------------------------------------- yaku rules


class TestBrights:
    def test_only_best_bright_counts(self) -> None:
        assert ids(BRIGHTS, ONLINE) == {"goko": 10}
        assert ids(m("crane", "curtain", "moon", "phoenix"), ONLINE) == {"shiko": 8}
        assert ids(m("crane", "curtain", "moon", "rain-man"), ONLINE) == {"ame_shiko": 7}
        assert ids(m("crane", "curtain", "rain-man"), ONLINE) == {}
        assert ids(m("crane", "curtain", "phoenix"), ONLINE) == {"sanko": 5}

    def test_switched_off_bright_falls_back(self) -> None:
        rules = dataclasses.replace(ONLINE, shiko=0)
        assert ids(m("crane", "curtain", "moon", "phoenix"), rules) == {"sanko": 5}
        rules = dataclasses.replace(ONLINE, goko=0)
        assert ids(BRIGHTS, rules) == {"shiko": 8}

    def test_bright_cards(self) -> None:
        (y,) = evaluate(m("crane", "curtain", "moon", "rain-man", "1c1"), ONLINE)
        assert y.cards == m("crane", "curtain", "moon", "rain-man")


class TestAnimals:
    def test_online_inoshikacho_and_tane_both_count_with_extras(self) -> None:
        pile = INOSHIKACHO | m("2a", "4a")
        assert ids(pile, ONLINE) == {"inoshikacho": 7, "tane": 1}

    def test_nintendo_tane_void_beside_inoshikacho(self) -> None:
        pile = INOSHIKACHO | m("2a", "4a", "5a")
        assert ids(pile, PRESETS["nintendo"]) == {"inoshikacho": 8}

    def test_tane_not_void_when_inoshikacho_switched_off(self) -> None:
        rules = dataclasses.replace(PRESETS["nintendo"], inoshikacho=0)
        assert ids(INOSHIKACHO | m("2a", "4a"), rules) == {"tane": 1}

    def test_without_plus_inoshikacho_is_flat(self) -> None:
        rules = PRESETS["traditions"]
        assert ids(INOSHIKACHO | m("2a", "4a", "5a"), rules) == {"inoshikacho": 5, "tane": 2}
        (ino,) = evaluate(INOSHIKACHO | m("2a"), rules)
        assert (ino.id, ino.points, ino.cards) == ("inoshikacho", 5, INOSHIKACHO)

    def test_all_nine_animals(self) -> None:
        assert ids(ANIMALS, ONLINE) == {"inoshikacho": 11, "tane": 5}


class TestRibbons:
    def test_combined_replaces_akatan_and_aotan(self) -> None:
        assert ids(POEM_RIBBONS | BLUE_RIBBONS, ONLINE) == {"akatan_aotan": 10, "tan": 2}

    def test_combined_counts_ribbons_beyond_six(self) -> None:
        assert ids(RIBBONS, ONLINE) == {"akatan_aotan": 14, "tan": 6}

    def test_combined_off_means_side_by_side(self) -> None:
        rules = PRESETS["traditions"]
        assert ids(POEM_RIBBONS | BLUE_RIBBONS, rules) == {"akatan": 6, "aotan": 6, "tan": 2}

    def test_single_sets_count_other_ribbons(self) -> None:
        assert ids(POEM_RIBBONS | m("4r"), ONLINE) == {"akatan": 6}
        assert ids(BLUE_RIBBONS | m("4r", "5r"), ONLINE) == {"aotan": 7, "tan": 1}

    def test_nintendo_tan_void(self) -> None:
        rules = PRESETS["nintendo"]
        assert ids(BLUE_RIBBONS | m("4r", "5r"), rules) == {"aotan": 7}
        assert ids(RIBBONS, rules) == {"akatan_aotan": 14}
        assert ids(m("4r", "5r", "7r", "11r", "1r"), rules) == {"tan": 1}

    def test_plain_red_ribbons_do_not_make_akatan(self) -> None:
        assert ids(m("4r", "5r", "7r"), ONLINE) == {}


class TestChaffAndSakeCup:
    nine_chaff = m("1c1", "1c2", "2c1", "2c2", "3c1", "3c2", "4c1", "4c2", "5c1")

    def test_sake_cup_animal_only_online(self) -> None:
        assert ids(self.nine_chaff | m("sake-cup"), ONLINE) == {}

    def test_sake_cup_also_chaff(self) -> None:
        for name in ("nintendo", "traditions", "toraco", "fudawiki"):
            got = ids(self.nine_chaff | m("sake-cup"), PRESETS[name])
            assert got == {"kasu": 1}, name

    def test_sake_cup_counts_both_at_once(self) -> None:
        pile = self.nine_chaff | m("sake-cup", "2a", "4a", "5a", "8a")
        assert ids(pile, PRESETS["toraco"]) == {"tane": 1, "kasu": 1}
        (tane, kasu) = evaluate(pile, PRESETS["toraco"])
        assert kasu.cards & m("sake-cup") and tane.cards & m("sake-cup")

    def test_all_chaff(self) -> None:
        assert ids(CHAFF, ONLINE) == {"kasu": 15}
        assert ids(CHAFF | m("sake-cup"), PRESETS["nintendo"]) == {"kasu": 16}


class TestViewing:
    hanami = m("curtain", "sake-cup")
    tsukimi = m("moon", "sake-cup")

    def test_needs_sake_cup(self) -> None:
        assert ids(m("curtain", "moon"), ONLINE) == {}

    def test_needs_other_yaku(self) -> None:
        rules = dataclasses.replace(ONLINE, viewing_needs_other_yaku=True)
        assert ids(self.hanami | self.tsukimi, rules) == {}
        pile = self.hanami | POEM_RIBBONS
        assert ids(pile, rules) == {"akatan": 5, "hanami": 5}
        assert total(pile, rules) == 10

    def test_rain_out_field(self) -> None:
        rules = dataclasses.replace(ONLINE, rain_out=RainOut.FIELD)
        pile = self.hanami | self.tsukimi
        assert ids(pile, rules, field=m("11c")) == {"tsukimi": 5}
        assert ids(pile, rules, field=m("12c1")) == {"hanami": 5}
        assert ids(pile, rules, field=m("11r", "12c3")) == {}
        assert ids(pile, rules, field=m("1c1")) == {"hanami": 5, "tsukimi": 5}
        assert total(pile, rules, m("11c")) == 5
        # no field given: an empty field, which spoils nothing
        assert total(pile, rules) == 10
        assert {y.id: y.points for y in evaluate(pile, rules)} == {"hanami": 5, "tsukimi": 5}

    def test_rain_out_captured_willow(self) -> None:
        rules = dataclasses.replace(ONLINE, rain_out=RainOut.CAPTURED_WILLOW)
        pile = self.hanami | self.tsukimi
        assert ids(pile | m("swallow"), rules) == {}
        assert ids(pile | m("12c1"), rules) == {"hanami": 5, "tsukimi": 5}
        # the field does not matter for this variant
        assert ids(pile, rules, field=MONTH_MASKS[11]) == {"hanami": 5, "tsukimi": 5}

    def test_field_ignored_without_rain_out(self) -> None:
        assert total(self.hanami, ONLINE, field=MONTH_MASKS[11]) == 5


class TestPresetValues:
    def test_traditions_values(self) -> None:
        rules = PRESETS["traditions"]
        assert ids(BRIGHTS, rules) == {"goko": 15}
        assert ids(BRIGHTS & ~m("rain-man"), rules) == {"shiko": 10}
        assert ids(m("rain-man", "crane", "moon", "phoenix"), rules) == {"ame_shiko": 8}
        assert ids(m("crane", "moon", "phoenix"), rules) == {"sanko": 6}
        assert ids(POEM_RIBBONS, rules) == {"akatan": 6}
        assert ids(BLUE_RIBBONS, rules) == {"aotan": 6}
        assert ids(m("curtain", "moon", "sake-cup"), rules) == {}

    def test_fudawiki_values(self) -> None:
        rules = PRESETS["fudawiki"]
        assert ids(BRIGHTS, rules) == {"goko": 15}
        assert ids(m("crane", "moon", "phoenix"), rules) == {"sanko": 6}
        assert ids(INOSHIKACHO | m("2a", "4a"), rules) == {"inoshikacho": 7}

    def test_toraco_no_combined_ribbons(self) -> None:
        rules = PRESETS["toraco"]
        assert ids(POEM_RIBBONS | BLUE_RIBBONS, rules) == {"akatan": 5, "aotan": 5, "tan": 2}


# ---------------------------------------------------------------- score()


class TestScore:
    five = (YakuScore("sanko", 5, 0),)
    ten = (YakuScore("goko", 10, 0),)

    def mode(self, mode: KoiKoiMultiplier, double_at: int = 0) -> RuleSet:
        return dataclasses.replace(ONLINE, koikoi_multiplier=mode, double_at=double_at)

    def test_double_threshold(self) -> None:
        assert score(self.five, self.mode(KoiKoiMultiplier.NONE, 5), 0, 0).score == 10
        assert score(self.five, self.mode(KoiKoiMultiplier.NONE, 6), 0, 0).score == 5
        assert score(self.five, self.mode(KoiKoiMultiplier.NONE, 0), 0, 0).score == 5

    def test_none(self) -> None:
        r = score(self.five, self.mode(KoiKoiMultiplier.NONE), 3, 3)
        assert (r.score, r.multipliers) == (5, ())

    def test_opponent_double_once_however_many_calls(self) -> None:
        rules = PRESETS["toraco"]
        assert score(self.ten, rules, 0, 3).score == 40
        assert score(self.ten, rules, 2, 0).score == 20

    def test_self_and_any_double(self) -> None:
        assert score(self.five, self.mode(KoiKoiMultiplier.SELF_DOUBLE), 1, 0).score == 10
        assert score(self.five, self.mode(KoiKoiMultiplier.SELF_DOUBLE), 0, 1).score == 5
        assert score(self.five, self.mode(KoiKoiMultiplier.ANY_DOUBLE), 0, 1).score == 10
        assert score(self.five, self.mode(KoiKoiMultiplier.ANY_DOUBLE), 2, 0).score == 10
        assert score(self.five, self.mode(KoiKoiMultiplier.ANY_DOUBLE), 0, 0).score == 5

    def test_calls_plus_one(self) -> None:
        all_calls = self.mode(KoiKoiMultiplier.ALL_CALLS_PLUS_ONE)
        assert score(self.five, all_calls, 2, 1).score == 20
        assert score(self.five, all_calls, 0, 0).multipliers == ()
        opp = self.mode(KoiKoiMultiplier.OPPONENT_CALLS_PLUS_ONE)
        assert score(self.five, opp, 2, 1).score == 10
        assert score(self.five, opp, 2, 2).score == 15

    def test_koi_bai(self) -> None:
        rules = self.mode(KoiKoiMultiplier.KOI_BAI)
        assert [score(self.five, rules, 1, n).score for n in range(4)] == [5, 10, 20, 40]

    def test_reason_names_calls(self) -> None:
        r = score(self.ten, ONLINE, 1, 1)
        assert r.multipliers[1] == Multiplier(3, "2 koi-koi calls in all (both players count): x3")

    def test_traditions_never_multiplies(self) -> None:
        rules = PRESETS["traditions"]
        r = score(evaluate(BRIGHTS, rules), rules, 1, 4)
        assert (r.base, r.score) == (15, 15)

    def test_empty(self) -> None:
        r = score((), ONLINE, 0, 0)
        assert (r.base, r.score, r.yaku) == (0, 0, ())


# ---------------------------------------------------------------- tables and order


def test_yaku_info_covers_every_id() -> None:
    assert set(YAKU_INFO) == set(YAKU_IDS) | set(HAND_YAKU_IDS)
    for yid in YAKU_INFO:
        y = YakuScore(yid, 1, 0)
        assert y.name and y.romaji and y.japanese


def test_results_in_yaku_ids_order() -> None:
    rng = random.Random(7)
    for _ in range(500):
        pile = rng.getrandbits(48)
        order = [YAKU_IDS.index(y.id) for y in evaluate(pile, ONLINE)]
        assert order == sorted(order)
        assert all(y.points > 0 for y in evaluate(pile, ONLINE))


def test_everything_captured() -> None:
    # goko 10, inoshikacho 5+6, akatan_aotan 10+4, tane 1+4, tan 1+5, kasu 1+14, hanami, tsukimi
    assert total(ALL_MASK, ONLINE) == 10 + 11 + 14 + 5 + 6 + 15 + 5 + 5


def test_cache_sees_new_rulesets() -> None:
    """A changed RuleSet is recompiled, never served stale tables."""
    three = m("crane", "curtain", "moon")
    for pts in range(1, 40):
        # each replaced RuleSet is freed at once, so ids get reused
        assert total(three, dataclasses.replace(ONLINE, sanko=pts)) == pts


# ---------------------------------------------------------------- property tests

#: dense random piles and sparse ones (a real pile rarely holds half the deck)
_PILES = st.one_of(
    st.integers(0, ALL_MASK),
    st.sets(st.integers(0, 47), max_size=20).map(lambda ids: sum(1 << i for i in ids)),
)

_RULE_VARIANTS = st.builds(
    lambda base, tv, av, sake, need, rain, plus, combo, shiko: dataclasses.replace(
        base,
        tane_void_with_inoshikacho=tv,
        tan_void_with_akatan_aotan=av,
        sake_cup=sake,
        viewing_needs_other_yaku=need,
        rain_out=rain,
        plus_yaku=tuple(plus),
        akatan_aotan=combo,
        shiko=shiko,
    ),
    st.sampled_from(list(PRESETS.values())),
    st.booleans(),
    st.booleans(),
    st.sampled_from(list(SakeCup)),
    st.booleans(),
    st.sampled_from(list(RainOut)),
    st.sets(st.sampled_from(YAKU_IDS)),
    st.sampled_from([0, 10]),
    st.sampled_from([0, 8]),
)


@pytest.mark.parametrize("name", list(PRESETS))
@settings(max_examples=300, deadline=None)
@given(captured=_PILES, field=st.integers(0, ALL_MASK))
def test_total_equals_sum_of_evaluate(name: str, captured: int, field: int) -> None:
    rules = PRESETS[name]
    field &= ~captured
    yaku = evaluate(captured, rules, field)
    assert total(captured, rules, field) == sum(y.points for y in yaku)
    for y in yaku:
        assert y.cards & ~captured == 0


@settings(max_examples=500, deadline=None)
@given(rules=_RULE_VARIANTS, captured=_PILES, field=st.integers(0, ALL_MASK))
def test_total_matches_evaluate_any_variant(rules: RuleSet, captured: int, field: int) -> None:
    field &= ~captured
    assert total(captured, rules, field) == sum(y.points for y in evaluate(captured, rules, field))


@settings(max_examples=300, deadline=None)
@given(captured=_PILES, extra=st.integers(0, 47))
def test_more_cards_never_score_less_online(captured: int, extra: int) -> None:
    """Without rain-out or voids, capturing a card can only keep or raise the total."""
    assert total(captured | 1 << extra, ONLINE) >= total(captured, ONLINE)


# ---------------------------------------------------------------- one viewing yaku, lowest values
@pytest.mark.parametrize(("on", "off"), [("hanami", "tsukimi"), ("tsukimi", "hanami")])
def test_only_one_viewing_yaku_switched_on(on: str, off: str) -> None:
    # Curtain, Moon and Sake cup: only the yaku that is on scores (a yaku at 0 is off).
    rules = ONLINE.with_settings(**{off: 0})
    pile = m("3b", "8b", "9a")
    assert ids(pile, rules) == {on: 5}
    assert total(pile, rules) == 5
    # with both on they add up; with both off nothing is left
    assert ids(pile, ONLINE) == {"hanami": 5, "tsukimi": 5}
    assert ids(pile, rules.with_settings(**{on: 0})) == {}
    # the one that is on still needs its own bright
    other_bright = "8b" if on == "hanami" else "3b"
    assert ids(m(other_bright, "9a"), rules) == {}


@pytest.mark.parametrize(("on", "off"), [("hanami", "tsukimi"), ("tsukimi", "hanami")])
def test_one_viewing_yaku_at_its_lowest_value(on: str, off: str) -> None:
    # Worth 1 (> 0, so on), the other at 0; after the holder's koi-koi it is worth
    # viewing_after_koikoi = 3 (docs/rules.md, "Viewing yaku").
    rules = ONLINE.with_settings(**{on: 1, off: 0, "viewing_after_koikoi": 3})
    pile = m("3b", "8b", "9a")
    for called, pts in ((False, 1), (True, 3)):
        assert total(pile, rules, 0, called) == pts
        assert {y.id: y.points for y in evaluate(pile, rules, 0, called)} == {on: pts}
        assert total_function(rules, called)(pile, 0) == pts


def test_combined_ribbons_at_their_lowest_value() -> None:
    # akatan_aotan = 1 (> 0) still replaces Akatan and Aotan: both sets score 1, not 5 + 5.
    rules = ONLINE.with_settings(akatan_aotan=1)
    six = m("1r", "2r", "3r", "6r", "9r", "10r")
    assert ids(six, rules) == {"akatan_aotan": 1, "tan": 2}
    assert total(six, rules) == 3
    seven = six | m("4r")
    assert ids(seven, rules) == {"akatan_aotan": 2, "tan": 3}
    assert total(seven, rules) == 5
    flat = rules.with_settings(plus_yaku="tan")
    assert ids(seven, flat) == {"akatan_aotan": 1, "tan": 3}
    # at 0 the two sets score side by side again, each counting the other's three
    # ribbons as extras ("an extra Blue Scroll would be worth 1 additional point")
    assert ids(six, rules.with_settings(akatan_aotan=0)) == {"akatan": 8, "aotan": 8, "tan": 2}


def test_a_bright_yaku_switched_off_never_scores() -> None:
    # Three plain brights with Sankō at 0: no bright yaku at all, not one worth 0.
    rules = ONLINE.with_settings(sanko=0)
    assert evaluate(m("1b", "3b", "8b"), rules) == ()
    assert total(m("1b", "3b", "8b"), rules) == 0
    # all bright yaku off: five brights make nothing
    off = ONLINE.with_settings(goko=0, shiko=0, ame_shiko=0, sanko=0)
    assert evaluate(m("1b", "3b", "8b", "11b", "12b"), off) == ()


def test_a_breakdown_has_no_bonus_unless_the_rules_add_one() -> None:
    assert ScoreBreakdown((), 1, (), 1).bonus == 0
    assert score((YakuScore("sanko", 5, m("1b", "3b", "8b")),), ONLINE, 1, 0).bonus == 0


def test_calling_changes_nothing_without_viewing_after_koikoi() -> None:
    # viewing_after_koikoi = 0 (every preset but koikoijapan): a caller's pile scores
    # exactly as before, viewing yaku included.
    pile, field = m("3b", "8b", "9a"), 0
    assert total(pile, ONLINE, field, True) == total(pile, ONLINE, field) == 10
    assert evaluate(pile, ONLINE, field, True) == evaluate(pile, ONLINE, field)


def test_viewing_after_koikoi_keeps_a_switched_off_viewing_yaku_off() -> None:
    # Tsukimi off, the caller's viewing value 3: Hanami scores 3, Tsukimi still nothing.
    rules = ONLINE.with_settings(tsukimi=0, viewing_after_koikoi=3)
    pile = m("3b", "8b", "9a")
    assert total(pile, rules, 0, True) == 3
    assert {y.id: y.points for y in evaluate(pile, rules, 0, True)} == {"hanami": 3}
    assert total(pile, rules) == 5  # before a call: Hanami's own 5
    off = ONLINE.with_settings(hanami=0, tsukimi=0, viewing_after_koikoi=3)
    assert total(pile, off, 0, True) == 0


def test_the_cards_of_the_combined_ribbons() -> None:
    seven = m("1r", "2r", "3r", "6r", "9r", "10r", "4r")
    (combo,) = [y for y in evaluate(seven, ONLINE) if y.id == "akatan_aotan"]
    assert combo.cards == seven and combo.points == 11  # extras count: all seven ribbons
    flat = ONLINE.with_settings(plus_yaku="tan")
    (combo,) = [y for y in evaluate(seven, flat) if y.id == "akatan_aotan"]
    assert combo.cards == m("1r", "2r", "3r", "6r", "9r", "10r") and combo.points == 10


@pytest.mark.parametrize(
    ("yaku", "three"), [("akatan", ("1r", "2r", "3r")), ("aotan", ("6r", "9r", "10r"))]
)
def test_the_cards_of_akatan_and_aotan(yaku: str, three: tuple[str, ...]) -> None:
    # With the yaku in plus_yaku (online) the extra ribbon is one of its cards and
    # worth +1; without (vanikar: kasu, tan, tane only) just its three ribbons, 5.
    four = m(*three, "4r")
    (online,) = evaluate(four, ONLINE)
    assert online == YakuScore(yaku, 6, four)
    (flat,) = evaluate(four, PRESETS["vanikar"])
    assert flat == YakuScore(yaku, 5, m(*three))


def test_koi_bai_names_its_factor() -> None:
    rules = ONLINE.with_settings(koikoi_multiplier="koi_bai", double_at=0)
    b = score((YakuScore("sanko", 5, m("1b", "3b", "8b")),), rules, 0, 2)
    assert b.multipliers == (Multiplier(4, "koi-bai, 2 koi-koi calls by the opponent: x4"),)
    assert b.score == 20
