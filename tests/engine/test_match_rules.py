"""Exact outcomes of the round and match rules, from docs/rules.md and the seeds.

Every expected value here (scores, seats, events with their fields, the next dealer)
is worked out by hand from the rules text quoted beside it, not read off the engine.
Seeds named ``scenario_seed(n)`` were picked by searching ``derive_deck`` /
``dealer_draw`` (both pinned by protocol/vectors/deal.json) for a deal with the
property the test needs; the deal is spelled out in a comment so the expectation can
be checked by hand against protocol/deal.md.
"""

from __future__ import annotations

import hashlib
import struct

import pytest

from p2pkoikoi.engine import (
    Action,
    MatchState,
    Phase,
    RuleSet,
    YakuScore,
    get_preset,
    parse_cards,
)
from p2pkoikoi.engine.events import (
    DealerChosen,
    Event,
    HandSwapDecided,
    HandYaku,
    KoiKoiCalled,
    MatchEnded,
    Redealt,
    RoundEnded,
    RoundStarted,
    YakuMade,
)
from p2pkoikoi.engine.yaku import Multiplier, ScoreBreakdown

ONLINE = get_preset("online")
NINTENDO = get_preset("nintendo")
VANIKAR = get_preset("vanikar")


def mask(codes: str) -> int:
    m = 0
    for c in parse_cards(codes.split()):
        m |= c.bit
    return m


def cards(codes: str) -> tuple:  # type: ignore[type-arg]
    return parse_cards(codes.split())


def scenario_seed(n: int) -> bytes:
    return hashlib.sha256(b"tests15/%d" % n).digest()


def spec_coin(seed: bytes, round_no: int) -> int:
    """protocol/deal.md: low bit of the last byte of SHA-256(coin tag || seed || u16 r || u16 0)."""
    return (
        hashlib.sha256(b"p2pkoikoi/coin/v1" + seed + struct.pack(">HH", round_no, 0)).digest()[-1]
        & 1
    )


def of(events: tuple[Event, ...], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def play(m: MatchState, *texts: str) -> tuple[MatchState, tuple[Event, ...]]:
    """Apply actions in turn; the events of all of them."""
    out: list[Event] = []
    for t in texts:
        m, ev = m.apply(Action.parse(t))
        out += ev
    return m, tuple(out)


# ---------------------------------------------------------------------- 1. koi-koi calls
# Seat 1 captures the Sake cup beside its Moon (Tsukimi 5) and calls koi-koi; then
# seat 0 captures the Phoenix beside its Crane and Curtain (Sankō 5).  The draws
# (5c1, 6c1) match nothing on the field.
def _seat1_calls(rules: RuleSet) -> MatchState:
    return MatchState.position(
        rules,
        hands=("12c1 2c1 2c2", "9c1 4c1 4c2"),
        field="9a 12b 10c1 11c",
        piles=("1b 3b", "8b"),
        stock="5c1 6c1 7c1 7c2",
        dealer=0,
        to_act=1,
    )


def test_koikoi_by_seat_1_is_counted_for_seat_1_and_multiplies_the_winner_online() -> None:
    m = _seat1_calls(ONLINE)
    m, ev = play(m, "play 9c1")
    assert of(ev, YakuMade) == [YakuMade(1, (YakuScore("tsukimi", 5, mask("8b 9a")),), 5, True)]
    assert m.phase is Phase.KOIKOI and m.to_act == 1
    m, ev = play(m, "koikoi")
    assert of(ev, KoiKoiCalled) == [KoiKoiCalled(1, 1)]
    assert m.calls == (0, 1) and m.last_total(1) == 5 and m.last_total(0) == 0
    assert m.phase is Phase.PLAY and m.to_act == 0
    m, ev = play(m, "play 12c1")
    assert of(ev, YakuMade) == [YakuMade(0, (YakuScore("sanko", 5, mask("1b 3b 12b")),), 5, True)]
    # online (002): "1 plus every koi-koi call made this round by both players": x2.
    assert m.potential_score(0) == ScoreBreakdown(
        (YakuScore("sanko", 5, mask("1b 3b 12b")),),
        5,
        (Multiplier(2, "1 koi-koi call in all (both players count): x2"),),
        10,
    )
    # Stopping now would give the caller, seat 1, Tsukimi 5 x2 as well.
    assert m.potential_score(1).score == 10
    m, ev = play(m, "stop")
    (end,) = of(ev, RoundEnded)
    assert (end.round, end.winner, end.reason, end.gained, end.scores) == (
        1,
        0,
        "stop",
        (10, 0),
        (35, 15),
    )
    assert end.breakdown is not None and end.breakdown.score == 10
    assert m.round == 2 and m.dealer == 0  # the winner deals
    assert m.calls == (0, 0) and (m.last_total(0), m.last_total(1)) == (0, 0)


def test_nintendo_after_a_call_the_next_yaku_ends_the_round_doubled() -> None:
    # 002 on Nintendo: "After a koi-koi the round ends as soon as either player makes a
    # yaku; if it is the opponent, the caller scores 0 and the opponent's total is doubled."
    m = _seat1_calls(NINTENDO)
    m, _ = play(m, "play 9c1", "koikoi")
    assert m.calls == (0, 1)
    m, ev = play(m, "play 12c1")
    assert of(ev, YakuMade) == []  # no choice is offered
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained, end.scores) == (0, "next_yaku", (10, 0), (10, 0))
    assert end.breakdown == ScoreBreakdown(
        (YakuScore("sanko", 5, mask("1b 3b 12b")),),
        5,
        (Multiplier(2, "opponent called koi-koi: x2"),),
        10,
    )
    assert m.dealer == 0


def test_nintendo_allows_one_call_per_round() -> None:
    # "one koi-koi per round": once seat 1 has called, seat 0 is offered no choice...
    # and the round ends on its yaku anyway.  With choose_on_raise, seat 0 stops at once.
    rules = NINTENDO.with_settings(after_koikoi="choose_on_raise")
    m = _seat1_calls(rules)
    m, _ = play(m, "play 9c1", "koikoi")
    m, ev = play(m, "play 12c1")
    (made,) = of(ev, YakuMade)
    assert made.seat == 0 and made.can_koikoi is False
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained) == (0, "stop", (10, 0))


def test_own_call_never_doubles_under_opponent_double() -> None:
    # 001: Sankō, koi-koi, then the Sake cup adds Tsukimi and Hanami: 15, x2 for 7 or
    # more = 30; "Your own Koi-Koi does not double it; had your opponent called ... 60".
    def after_raise(calls: tuple[int, int]) -> MatchState:
        m = MatchState.position(
            VANIKAR,
            hands=("2c1 2c2", "9c1 4c1"),
            field="9a 10c1",
            piles=("", "1b 3b 8b"),
            stock="5c1 6c1",
            dealer=0,
            to_act=1,
            calls=calls,
        )
        assert m.last_total(1) == (5 if calls[1] else 0) and m.last_total(0) == 0
        m, ev = play(m, "play 9c1")
        assert of(ev, YakuMade)[0].total == 15
        return m

    own = after_raise((0, 1))
    assert own.potential_score(1).score == 30
    both = after_raise((1, 1))
    assert both.potential_score(1).score == 60
    m, ev = play(both, "stop")
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.gained, end.scores) == (1, (0, 60), (0, 60))


def test_a_caller_is_asked_again_only_when_the_total_rises() -> None:
    m = _seat1_calls(ONLINE)
    m, _ = play(m, "play 9c1", "koikoi", "play 2c1")  # seat 0 captures nothing
    # Seat 1 captures 4c1+... nothing raising its 5: 4c1 joins the field, 7c1 too.
    m, ev = play(m, "play 4c1")
    assert of(ev, YakuMade) == [] and m.to_act == 0 and m.phase is Phase.PLAY


# ---------------------------------------------------------------------- 2. both hand yaku
# scenario_seed(144599), round 1 (protocol/deal.md, deck[0..23]):
#   2r 7c2 | 7r 8b | 12c2 11r | 9c1 1r | 4r 11b | 12c3 4a | 1c2 12c1 | 9c2 5c2 | 10r 10a
#   | 1c1 1b | 6r 6a | 11a 4c2
# non-dealer: 2r 7c2 9c1 1r 1c2 12c1 1c1 1b  -> Teshi (all four January cards)
# dealer:     12c2 11r 12c3 4a 10r 10a 11a 4c2 -> Kuttsuki (pairs of 12, 11, 4, 10)
# field:      7r 8b 4r 11b 9c2 5c2 6r 6a      -> no four of a month, no four pairs
# The coin gives the first deal to seat 1, so seat 0 holds Teshi, seat 1 Kuttsuki.
BOTH = scenario_seed(144599)
TESHI_1 = YakuScore("teshi", 6, mask("1b 1r 1c1 1c2"))
KUTTSUKI = YakuScore("kuttsuki", 6, mask("12c2 11r 12c3 4a 10r 10a 11a 4c2"))


def _both(mode: str) -> tuple[MatchState, tuple[Event, ...]]:
    rules = ONLINE.with_settings(both_hand_yaku=mode, scoring="sum")
    assert spec_coin(BOTH, 0) == 1
    return MatchState.start(rules, BOTH)


def test_both_hand_yaku_events_name_each_seat_dealer_first() -> None:
    _, ev = _both("dealer_first")
    assert ev[0] == DealerChosen(1, "coin")
    # The dealer's hand is checked first; each event carries the whole hand, in id order.
    assert of(ev, HandYaku) == [
        HandYaku(1, KUTTSUKI, cards("4a 4c2 10a 10r 11a 11r 12c2 12c3")),
        HandYaku(0, TESHI_1, cards("1b 1r 1c1 1c2 2r 7c2 9c1 12c1")),
    ]


def test_both_hand_yaku_dealer_first() -> None:
    # 002: "This game checks the dealer's hand first, and the dealer's hand yaku counts
    # ... its holder deals next."
    m, ev = _both("dealer_first")
    (end,) = of(ev, RoundEnded)
    assert (end.round, end.winner, end.reason, end.gained, end.scores) == (
        1,
        1,
        "hand_yaku",
        (0, 6),
        (0, 6),
    )
    assert end.breakdown == ScoreBreakdown((KUTTSUKI,), 6, (), 6)
    assert m.round == 2 and m.dealer == 1 and m.attempt == 0
    assert [(s.round, s.dealer, s.attempt) for s in of(ev, RoundStarted)] == [(1, 1, 0), (2, 1, 0)]


def test_both_hand_yaku_both_score_and_the_dealer_is_drawn_again() -> None:
    # 000: "If both opponents have either condition, both are awarded 6 points. In this
    # instance, follow the Determine the Dealer steps"; deal.md: drawn again "with
    # round r in place of 0" (here the coin of round 2).
    m, ev = _both("both_score")
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.breakdown, end.gained, end.scores) == (
        None,
        "both_hand_yaku",
        None,
        (6, 6),
        (6, 6),
    )
    redraw = of(ev, DealerChosen)
    assert redraw == [DealerChosen(1, "coin"), DealerChosen(spec_coin(BOTH, 2), "coin")]
    assert m.round == 2 and m.dealer == spec_coin(BOTH, 2) and m.attempt == 0
    assert [(s.round, s.attempt) for s in of(ev, RoundStarted)] == [(1, 0), (2, 0)]


def test_both_score_gives_each_seat_its_own_hand_yaku() -> None:
    # With Kuttsuki worth 4, seat 0's Teshi scores 6 and seat 1's Kuttsuki 4.
    rules = ONLINE.with_settings(both_hand_yaku="both_score", scoring="sum", kuttsuki=4)
    _, ev = MatchState.start(rules, BOTH)
    (end,) = of(ev, RoundEnded)
    assert (end.gained, end.scores) == ((6, 4), (6, 4))


def test_both_hand_yaku_redeal() -> None:
    # 003: "If both players have one, redeal": the same round, attempt 1, no points.
    m, ev = _both("redeal")
    assert of(ev, RoundEnded) == []
    assert Redealt(1, 1, "both players hold a hand yaku") in ev
    starts = of(ev, RoundStarted)
    assert [(s.round, s.dealer, s.attempt) for s in starts[:2]] == [(1, 1, 0), (1, 1, 1)]
    assert m.round == 1 and m.scores == (0, 0) and m.dealer == 1


def test_both_hand_yaku_draw() -> None:
    # Fuda Wiki (reference): "Both players -> draw, no score, same dealer".
    m, ev = _both("draw")
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.breakdown, end.gained, end.scores) == (
        None,
        "both_hand_yaku",
        None,
        (0, 0),
        (0, 0),
    )
    assert of(ev, DealerChosen) == [DealerChosen(1, "coin")]
    assert m.round == 2 and m.dealer == 1 and m.attempt == 0
    assert [(s.round, s.dealer, s.attempt) for s in of(ev, RoundStarted)] == [(1, 1, 0), (2, 1, 0)]


def test_rulebook_swap_then_both_score() -> None:
    # The rulebook offers the swap to the non-dealer first; the swap event names that
    # seat; both hands still hold a hand yaku, so both score 6.
    rules = get_preset("rulebook")
    m, ev = MatchState.start(rules, BOTH)
    dealer = of(ev, DealerChosen)[0].dealer
    assert m.phase is Phase.HAND_SWAP and m.to_act == 1 - dealer
    m2, ev = play(m, "swap")
    assert ev[0] == HandSwapDecided(1 - dealer, True)
    seats = {h.seat: h.yaku.id for h in of(ev, HandYaku)}
    # the dealer now holds the non-dealer's Teshi hand, and the other way round
    assert seats == {dealer: "teshi", 1 - dealer: "kuttsuki"}
    (end,) = of(ev, RoundEnded)
    assert (end.reason, end.gained, end.scores) == ("both_hand_yaku", (6, 6), (6, 6))
    _, ev = play(m, "keep")
    assert ev[0] == HandSwapDecided(1 - dealer, False)
    assert {h.seat: h.yaku.id for h in of(ev, HandYaku)} == {
        dealer: "kuttsuki",
        1 - dealer: "teshi",
    }


def test_one_hand_yaku_wins_and_its_holder_deals_next() -> None:
    # scenario_seed(164): the coin gives seat 1 the deal; the non-dealer (seat 0) holds
    # 7c2 3c2 4a 12c2 5c1 2c2 7c1 7a ... all four July cards: Teshi, 6 points.
    seed = scenario_seed(164)
    m, ev = MatchState.start(ONLINE, seed)
    assert of(ev, DealerChosen) == [DealerChosen(1, "coin")]
    (hy,) = of(ev, HandYaku)
    assert (hy.seat, hy.yaku) == (0, YakuScore("teshi", 6, mask("7a 7r 7c1 7c2")))
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained, end.scores) == (0, "hand_yaku", (6, 0), (31, 19))
    assert m.round == 2 and m.dealer == 0 and m.attempt == 0
    assert [(s.round, s.dealer, s.attempt) for s in of(ev, RoundStarted)] == [(1, 1, 0), (2, 0, 0)]


def test_dealer_hand_yaku_keeps_the_deal() -> None:
    # scenario_seed(43): the coin gives seat 1 the deal, and the dealer's hand is Kuttsuki.
    m, ev = MatchState.start(ONLINE, scenario_seed(43))
    (hy,) = of(ev, HandYaku)
    assert hy.seat == 1 and hy.yaku.id == "kuttsuki" and hy.yaku.points == 6
    assert hy.yaku.cards == m.results[0].breakdown.yaku[0].cards  # type: ignore[union-attr]
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.gained, end.scores) == (1, (0, 6), (19, 31))
    assert m.dealer == 1


# ---------------------------------------------------------------------- 3. oya-ken
# Both hands run out with no yaku: seat 1 (the dealer) plays 4c1 and draws 10c1,
# seat 0 plays 6c1 and draws 10c2, taking 10c1: five chaff, no yaku.
def _drawn(rules: RuleSet, dealer: int) -> tuple[MatchState, tuple[Event, ...]]:
    hands = ("6c1", "4c1") if dealer == 1 else ("4c1", "6c1")
    m = MatchState.position(
        rules,
        hands=hands,
        field="11c 12c3",
        piles=("1c1 2c1 3c1", "5c1 7c1"),
        stock="10c1 10c2",
        dealer=dealer,
    )
    first, second = ("4c1", "6c1")
    return play(m, f"play {first}", f"play {second}")


@pytest.mark.parametrize("dealer", [0, 1])
def test_oya_ken_gives_the_dealer_the_points_and_the_deal(dealer: int) -> None:
    rules = ONLINE.with_settings(drawn_round="oya_ken", oya_ken_points=1)
    m, ev = _drawn(rules, dealer)
    (end,) = of(ev, RoundEnded)
    gained = (1, 0) if dealer == 0 else (0, 1)
    assert (end.winner, end.reason, end.gained) == (dealer, "oya_ken", gained)
    assert end.breakdown == ScoreBreakdown((), 1, (), 1)
    assert end.scores == ((26, 24) if dealer == 0 else (24, 26))
    assert m.round == 2 and m.dealer == dealer


def test_oya_ken_with_no_points_is_a_plain_drawn_round_and_the_dealer_stays() -> None:
    rules = ONLINE.with_settings(drawn_round="oya_ken", oya_ken_points=0)
    m, ev = _drawn(rules, 1)
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained, end.breakdown) == (None, "drawn", (0, 0), None)
    assert m.dealer == 1


@pytest.mark.parametrize(
    ("preset", "dealer", "next_dealer"),
    [("online", 1, 1), ("nintendo", 1, 0), ("vanikar", 0, 1), ("fudawiki", 0, 0)],
)
def test_drawn_round_next_dealer(preset: str, dealer: int, next_dealer: int) -> None:
    m, ev = _drawn(get_preset(preset), dealer)
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained) == (None, "drawn", (0, 0))
    assert m.dealer == next_dealer


# ---------------------------------------------------------------------- 4. the card draw
# scenario_seed(34): draw 0 turns 5r (seat 0) and 5c1 (seat 1), one month; draw 1
# turns 10r and 1c1.  scenario_seed(5114): 3c1/3c2, then 7r/7c1, then 6r/1b.
CARD_DRAW = ONLINE.with_settings(first_dealer="card_draw")


def _dealer_chosen(rules: RuleSet, n: int) -> DealerChosen:
    _, ev = MatchState.start(rules, scenario_seed(n))
    (d,) = of(ev, DealerChosen)
    return d


def _codes(d: DealerChosen) -> list[tuple[str, str]]:
    return [(a.code, b.code) for a, b in d.draws]


def test_card_draw_higher_card_breaks_a_month_tie() -> None:
    # A ribbon is worth more than a chaff card: seat 0's 5r deals.
    d = _dealer_chosen(CARD_DRAW.with_settings(card_draw_tie="higher_card"), 34)
    assert (d.dealer, d.method, _codes(d)) == (0, "card_draw", [("5r", "5c1")])


def test_card_draw_higher_card_for_seat_1() -> None:
    # scenario_seed(28): seat 0 turns 6c2, seat 1 the 6r ribbon, worth more: seat 1 deals.
    d = _dealer_chosen(CARD_DRAW.with_settings(card_draw_tie="higher_card"), 28)
    assert (d.dealer, _codes(d)) == (1, [("6c2", "6r")])


def test_card_draw_earlier_month_for_seat_0() -> None:
    # scenario_seed(0): seat 0 turns 4r (April), seat 1 12c1 (December): seat 0 deals.
    d = _dealer_chosen(CARD_DRAW, 0)
    assert (d.dealer, _codes(d)) == (0, [("4r", "12c1")])


# protocol/deal.md: "the card worth more deals (bright > animal > ribbon > chaff)".
# Every ordered pair of kinds, each from the first draw of scenario_seed(n).
@pytest.mark.parametrize(
    ("n", "draw", "dealer"),
    [
        (689, ("8b", "8a"), 0),
        (3123, ("11a", "11b"), 1),
        (735, ("3b", "3r"), 0),
        (543, ("11r", "11b"), 1),
        (99, ("3b", "3c2"), 0),
        (52, ("3c2", "3b"), 1),
        (820, ("5a", "5r"), 0),
        (321, ("4r", "4a"), 1),
        (41, ("8a", "8c2"), 0),
        (60, ("7c1", "7a"), 1),
    ],
)
def test_card_draw_higher_card_ranks_every_pair_of_kinds(
    n: int, draw: tuple[str, str], dealer: int
) -> None:
    d = _dealer_chosen(CARD_DRAW.with_settings(card_draw_tie="higher_card"), n)
    assert (d.dealer, _codes(d)) == (dealer, [draw])


def test_card_draw_redraw_ignores_the_kinds() -> None:
    # 000: "If tied, repeat": January (seat 1's 1c1) is earlier than October.
    d = _dealer_chosen(CARD_DRAW.with_settings(card_draw_tie="redraw"), 34)
    assert (d.dealer, _codes(d)) == (1, [("5r", "5c1"), ("10r", "1c1")])


def test_card_draw_equal_kinds_draw_again_under_both_rules() -> None:
    d = _dealer_chosen(CARD_DRAW.with_settings(card_draw_tie="higher_card"), 5114)
    assert (d.dealer, _codes(d)) == (0, [("3c1", "3c2"), ("7r", "7c1")])
    d = _dealer_chosen(CARD_DRAW.with_settings(card_draw_tie="redraw"), 5114)
    assert (d.dealer, _codes(d)) == (1, [("3c1", "3c2"), ("7r", "7c1"), ("6r", "1b")])


# ---------------------------------------------------------------------- 5. koikoi_when
# Seat 0 (dealer) plays its last card, 12c1, taking the Phoenix beside its Crane and
# Curtain: Sankō.  Seat 1 still holds one card, so this is not the last turn.
def _second_to_last(rules: RuleSet) -> tuple[MatchState, tuple[Event, ...]]:
    m = MatchState.position(
        rules,
        hands=("12c1", "4c1"),
        field="12b 10c1",
        piles=("1b 3b", ""),
        stock="5c1 6c1",
        dealer=0,
    )
    return play(m, "play 12c1")


def test_not_last_turn_still_allows_koikoi_with_one_hand_empty() -> None:
    m, ev = _second_to_last(ONLINE)
    assert of(ev, YakuMade) == [YakuMade(0, (YakuScore("sanko", 5, mask("1b 3b 12b")),), 5, True)]
    assert m.phase is Phase.KOIKOI and m.legal_actions() == (
        Action.parse("koikoi"),
        Action.parse("stop"),
    )
    m, ev = play(m, "koikoi", "play 4c1")  # seat 1's last card makes nothing
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained) == (None, "drawn", (0, 0))


def test_not_hand_empty_stops_at_once() -> None:
    # 004: "If you make a yaku with no cards left in your hand, you can't call Koi-Koi;
    # the round ends right there."
    m, ev = _second_to_last(ONLINE.with_settings(koikoi_when="not_hand_empty"))
    assert of(ev, YakuMade) == [YakuMade(0, (YakuScore("sanko", 5, mask("1b 3b 12b")),), 5, False)]
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained) == (0, "stop", (5, 0))
    assert m.round == 2


# ---------------------------------------------------------------------- redeals, exactly
# Deals of round 1, attempt 0 (deck[0..23] as protocol/deal.md lays them out):
# scenario_seed(25): field 2c2 3b 1c1 2r 2c1 10a 2a 6c1 - all four February cards;
# scenario_seed(153): field 2r 2a 4c1 1b 1c2 5r 5a 4a - four pairs;
# scenario_seed(56): the dealer's hand 11b 1b 11r 12c1 11c 5c2 3c2 11a holds all four
#   November cards; scenario_seed(43): the dealer's hand is four pairs;
# scenario_seed(55948): the non-dealer holds a hand yaku and the field four of a month.
# Each attempt 1 deals nothing special.
def _start(rules: RuleSet, n: int) -> tuple[MatchState, tuple[Event, ...]]:
    return MatchState.start(rules, scenario_seed(n))


def test_four_of_a_month_on_the_field_is_dealt_again() -> None:
    m, ev = _start(ONLINE, 25)
    assert [e for e in ev if isinstance(e, Redealt)] == [
        Redealt(1, 1, "four of a month on the field")
    ]
    assert [(s.round, s.attempt) for s in of(ev, RoundStarted)] == [(1, 0), (1, 1)]
    assert m.round == 1 and m.attempt == 1 and m.phase is Phase.PLAY and m.to_act == m.dealer
    off = ONLINE.with_settings(redeal_field_four_of_month=False)
    m, ev = _start(off, 25)
    assert of(ev, Redealt) == [] and m.attempt == 0 and m.phase is Phase.PLAY


def test_four_pairs_on_the_field_only_where_the_rules_say() -> None:
    m, ev = _start(get_preset("traditions"), 153)
    assert of(ev, Redealt) == [Redealt(1, 1, "four pairs on the field")]
    assert m.attempt == 1
    m, ev = _start(ONLINE, 153)  # 002: "This game plays on with four pairs on the table"
    assert of(ev, Redealt) == [] and m.attempt == 0 and m.phase is Phase.PLAY


@pytest.mark.parametrize("n", [56, 43])
def test_toraco_deals_again_for_a_lucky_hand(n: int) -> None:
    # 004: "I'll deal again if a hand has four cards of one month or four pairs".
    m, ev = _start(get_preset("toraco"), n)
    assert of(ev, Redealt) == [Redealt(1, 1, "a lucky hand")]
    assert of(ev, HandYaku) == [] and of(ev, RoundEnded) == []
    assert m.attempt == 1 and m.scores == (0, 0)


def test_hand_yaku_checked_before_or_after_the_field() -> None:
    # Field first (online): the field's redeal voids the deal, hand yaku included.
    m, ev = _start(ONLINE, 55948)
    assert of(ev, HandYaku) == [] and of(ev, Redealt) == [
        Redealt(1, 1, "four of a month on the field")
    ]
    # Hands first (the rulebook's order): the non-dealer's hand yaku ends the round.
    first = ONLINE.with_settings(hand_yaku_before_field_redeal=True)
    m, ev = _start(first, 55948)
    assert of(ev, DealerChosen) == [DealerChosen(0, "coin")]
    assert [(h.seat, h.yaku.points) for h in of(ev, HandYaku)] == [(1, 6)]
    assert of(ev, Redealt) == []
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason, end.gained) == (1, "hand_yaku", (0, 6))
    assert m.round == 2 and m.dealer == 1


def test_field_checked_after_the_hands_still_deals_again() -> None:
    # rulebook order: hands first "and then the common area for a BAD DEAL".
    first = ONLINE.with_settings(hand_yaku_before_field_redeal=True)
    m, ev = _start(first, 25)
    assert of(ev, Redealt) == [Redealt(1, 1, "four of a month on the field")]
    assert m.attempt == 1 and m.phase is Phase.PLAY


def test_once_per_player_limits_each_seat_separately() -> None:
    rules = ONLINE.with_settings(koikoi_limit="once_per_player")
    m = _seat1_calls(rules)
    m, _ = play(m, "play 9c1", "koikoi")
    m, ev = play(m, "play 12c1")  # seat 0 has not called: it may
    assert of(ev, YakuMade)[0].can_koikoi is True
    m, _ = play(m, "koikoi")
    assert m.calls == (1, 1)
    # seat 1 raises again (4c1 takes nothing; 4c2 ... ) - its second call is refused
    m = MatchState.position(
        rules,
        hands=("2c1 2c2", "9c1 4c1"),
        field="9a 10c1",
        piles=("", "1b 3b 8b"),
        stock="5c1 6c1",
        dealer=0,
        to_act=1,
        calls=(0, 1),
    )
    m, ev = play(m, "play 9c1")
    (made,) = of(ev, YakuMade)
    assert (made.seat, made.total, made.can_koikoi) == (1, 15, False)
    (end,) = of(ev, RoundEnded)
    assert (end.winner, end.reason) == (1, "stop")


def test_a_second_call_by_seat_1_counts_for_seat_1_only() -> None:
    # Seat 1 called once before (calls (0, 1), standing at Sankō 5); the Sake cup adds
    # Tsukimi and Hanami: 15, and it calls again.  Seat 0's count stays 0.
    m = MatchState.position(
        ONLINE,
        hands=("2c1 2c2", "9c1 4c1"),
        field="9a 10c1",
        piles=("", "1b 3b 8b"),
        stock="5c1 6c1",
        dealer=0,
        to_act=1,
        calls=(0, 1),
    )
    m, ev = play(m, "play 9c1", "koikoi")
    assert of(ev, KoiKoiCalled) == [KoiKoiCalled(1, 2)]
    assert m.calls == (0, 2) and (m.last_total(0), m.last_total(1)) == (0, 15)
    # and the other way round: seat 0, at one call, calls a second time
    m = MatchState.position(
        ONLINE,
        hands=("9c1 4c1", "2c1 2c2"),
        field="9a 10c1",
        piles=("1b 3b 8b", ""),
        stock="5c1 6c1",
        calls=(1, 0),
    )
    m, ev = play(m, "play 9c1", "koikoi")
    assert of(ev, KoiKoiCalled) == [KoiKoiCalled(0, 2)]
    assert m.calls == (2, 0) and (m.last_total(0), m.last_total(1)) == (15, 0)


@pytest.mark.parametrize("dealer", [0, 1])
def test_next_dealer_alternate_passes_the_deal_whoever_wins(dealer: int) -> None:
    rules = ONLINE.with_settings(next_dealer="alternate")
    m = MatchState.position(
        rules,
        hands=("12c1 2c1", "4c1 4c2"),
        field="12b",
        piles=("1b 3b", ""),
        dealer=dealer,
        to_act=0,
    )
    m, ev = play(m, "play 12c1", "stop")
    (end,) = of(ev, RoundEnded)
    assert end.winner == 0
    assert m.round == 2 and m.dealer == 1 - dealer


# ---------------------------------------------------------------------- the end of the match
# Seat 0 captures the Phoenix beside its Crane and Curtain (Sankō) and stops, in the
# last round of the match.
def _sanko_stop(rules: RuleSet, **kw: object) -> tuple[MatchState, tuple[Event, ...]]:
    m = MatchState.position(
        rules,
        hands=("12c1 4c1", "9c1 4c2"),
        field="12b 10c1",
        piles=("1b 3b", ""),
        stock="5c1 6c1",
        dealer=0,
        **kw,  # type: ignore[arg-type]
    )
    return play(m, "play 12c1", "stop")


def test_the_last_round_ends_the_match_with_its_scores_and_winner() -> None:
    # traditions (003): "a single deal", Sankō 6, no multipliers, running totals.
    m, ev = _sanko_stop(get_preset("traditions"))
    assert ev[-2:] == (
        RoundEnded(
            1,
            0,
            "stop",
            ScoreBreakdown((YakuScore("sanko", 6, mask("1b 3b 12b")),), 6, (), 6),
            (6, 0),
            (6, 0),
        ),
        MatchEnded((6, 0), 0, "rounds"),
    )
    assert m.is_over and m.phase is Phase.OVER and m.to_act is None
    assert (m.winner, m.end_reason, m.scores, m.legal_actions()) == (0, "rounds", (6, 0), ())


def test_a_match_that_ends_level_has_no_winner() -> None:
    # online: round 6 of 6, pool scoring; seat 1 pays Sankō's 5 and both hold 25.
    m, ev = _sanko_stop(ONLINE, round=6, scores=(20, 30))
    assert ev[-1] == MatchEnded((25, 25), None, "rounds")
    assert m.is_over and m.winner is None and m.end_reason == "rounds"


def test_a_player_left_with_nothing_is_knocked_out_before_the_last_round() -> None:
    # online, round 2 of 6: seat 1 has 3 left, so it pays 3 of the 5 (the cap) and is out.
    m, ev = _sanko_stop(ONLINE, round=2, scores=(47, 3))
    (end,) = of(ev, RoundEnded)
    assert (end.gained, end.scores) == ((3, 0), (50, 0))
    assert ev[-1] == MatchEnded((50, 0), 0, "knockout")
    assert m.is_over and (m.winner, m.end_reason, m.round) == (0, "knockout", 2)


@pytest.mark.parametrize("winner", [0, 1])
@pytest.mark.parametrize(("left", "knocked"), [(5, True), (6, False)])
def test_knockout_at_exactly_nothing_left_for_either_seat(
    winner: int, left: int, knocked: bool
) -> None:
    # online (002): "0 loses". The loser pays Sankō's 5 from what it has left.
    loser = 1 - winner
    piles = ("1b 3b", "") if winner == 0 else ("", "1b 3b")
    hands = ("12c1 4c1", "9c1 4c2") if winner == 0 else ("9c1 4c2", "12c1 4c1")
    scores = (50 - left, left) if winner == 0 else (left, 50 - left)
    m = MatchState.position(
        ONLINE,
        hands=hands,
        field="12b 10c1",
        piles=piles,
        stock="5c1 6c1",
        to_act=winner,
        round=2,
        scores=scores,
    )
    m, ev = play(m, "play 12c1", "stop")
    (end,) = of(ev, RoundEnded)
    assert end.winner == winner and end.scores[loser] == left - 5
    if knocked:
        assert ev[-1] == MatchEnded(end.scores, winner, "knockout") and m.round == 2
    else:
        assert of(ev, MatchEnded) == [] and not m.is_over and m.round == 3


def test_a_round_before_the_last_ends_no_match() -> None:
    m, ev = _sanko_stop(ONLINE, round=5, scores=(20, 30))
    assert of(ev, MatchEnded) == [] and not m.is_over and m.round == 6


def test_the_same_pile_is_scored_under_each_rule_set_in_turn() -> None:
    # The engine remembers the last pile it evaluated; the same pile, field and call
    # under other rules must be evaluated afresh: Sankō is 5 online, 6 in traditions.
    for rules, pts in ((ONLINE, 5), (get_preset("traditions"), 6), (ONLINE, 5)):
        _, ev = _second_to_last(rules)
        assert of(ev, YakuMade) == [
            YakuMade(0, (YakuScore("sanko", pts, mask("1b 3b 12b")),), pts, True)
        ]


def test_a_call_changes_the_viewing_yaku_of_the_same_pile() -> None:
    # koikoijapan: Hanami is 1, and 3 once its holder has called koi-koi; the same
    # turn on the same table, with and without seat 0's earlier call, in turn.  Seat 0
    # plays the Sake cup on 9c1 and the drawn 5c1 takes 5c2: the field is left empty.
    for calls, pts in (((0, 0), 1), ((1, 0), 3), ((0, 0), 1)):
        m = MatchState.position(
            get_preset("koikoijapan"),
            hands=("9a 4c1", "2c1 2c2"),
            field="9c1 5c2",
            piles=("3b", ""),
            stock="5c1 6c1",
            calls=calls,
        )
        m, ev = play(m, "play 9a")
        assert not m.field
        assert of(ev, YakuMade) == [
            YakuMade(0, (YakuScore("hanami", pts, mask("3b 9a")),), pts, True)
        ]


def test_the_same_pile_beside_another_field_is_scored_afresh() -> None:
    # rain_out = field: "any Willow card on the field voids Hanami".  Seat 0 takes the
    # Phoenix (Sankō) and the drawn 5c1 takes 5c2; the Willow 11c stays on the field or
    # was never there.  Same pile both times, other fields.
    rules = ONLINE.with_settings(rain_out="field")
    sanko = YakuScore("sanko", 5, mask("1b 3b 12b"))
    hanami = YakuScore("hanami", 5, mask("3b 9a"))
    for field, made in (("12b 5c2 11c", (sanko,)), ("12b 5c2", (sanko, hanami))) * 2:
        m = MatchState.position(
            rules, hands=("12c1 4c1", "2c1 2c2"), field=field, piles=("1b 3b 9a", ""), stock="5c1"
        )
        after, ev = play(m, "play 12c1")
        assert after.pile(0).mask == mask("1b 3b 9a 12b 12c1 5c1 5c2")
        total = sum(y.points for y in made)
        assert of(ev, YakuMade) == [YakuMade(0, made, total, True)]


def test_two_piles_on_the_same_table_are_scored_each_for_its_own_cards() -> None:
    # The same turn (seat 0 takes the Phoenix, the drawn 5c1 joins the field) with two
    # different pairs of brights already captured: Sankō of other cards each time.
    for before in ("1b 3b", "1b 8b", "1b 3b"):
        m = MatchState.position(
            ONLINE, hands=("12c1 4c1", "2c1 2c2"), field="12b 10c1", piles=(before, ""), stock="5c1"
        )
        _, ev = play(m, "play 12c1")
        made = YakuScore("sanko", 5, mask(f"{before} 12b"))
        assert of(ev, YakuMade) == [YakuMade(0, (made,), 5, True)]


def test_a_take_scores_the_viewing_yaku_by_the_takers_own_calls() -> None:
    # koikoijapan: Hanami 1, 3 once its holder has called.  Seat 0 plays 4c1 (no match);
    # the drawn Sake cup matches 9c1 and 9c2, and seat 0 takes 9c1 beside its Curtain.
    for calls, pts in (((0, 0), 1), ((0, 1), 1), ((1, 0), 3)):
        m = MatchState.position(
            get_preset("koikoijapan"),
            hands=("4c1 5c1", "2c1 2c2"),
            field="9c1 9c2 10c1",
            piles=("3b", ""),
            stock="9a 6c1",
            calls=calls,
        )
        m, _ = play(m, "play 4c1")
        assert m.phase is Phase.DRAW_CHOICE
        _, ev = play(m, "take 9c1")
        assert of(ev, YakuMade) == [
            YakuMade(0, (YakuScore("hanami", pts, mask("3b 9a")),), pts, True)
        ]
