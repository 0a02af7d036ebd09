"""The hard bot's reading of the opponent's hand: weighted guesses and the HandReader."""

from __future__ import annotations

import dataclasses
import hashlib
import random

from p2pkoikoi.bots import make_bot
from p2pkoikoi.bots.heuristics import exposure, tables_for
from p2pkoikoi.bots.inference import STRONG, WEAK, HandReader
from p2pkoikoi.bots.playouts import guess_hidden
from p2pkoikoi.engine import CardSet, MatchState, Phase, PlayerView, get_preset, new_match
from p2pkoikoi.engine.cards import BRIGHTS, MONTH_MASKS, MONTH_OF, iter_mask


def test_guess_hidden_splits_the_unseen_cards() -> None:
    unseen = list(range(10, 34))
    for exps in (None, [1.0 / 0.2 if c < 22 else 1.0 for c in unseen]):
        rng = random.Random(3)
        hand, stock = guess_hidden(list(unseen), 8, rng, exps)
        assert hand.bit_count() == 8 and len(stock) == 16
        assert sorted(list(iter_mask(hand)) + stock) == unseen
        again = guess_hidden(list(unseen), 8, random.Random(3), exps)
        assert again == (hand, stock)  # deterministic for a seed


def test_weighted_guesses_favour_the_heavier_cards() -> None:
    """Cards of weight 0.2 land in the guessed hand far less often than cards of
    weight 1, and the stock order is not sorted by weight."""
    unseen = list(range(24))
    light = set(range(12))
    exps = [5.0 if c in light else 1.0 for c in unseen]
    rng = random.Random(8)
    in_hand = [0] * 24
    light_first = 0
    n = 3000
    for _ in range(n):
        hand, stock = guess_hidden(list(unseen), 8, rng, exps)
        for c in iter_mask(hand):
            in_hand[c] += 1
        light_first += stock[0] in light
    light_rate = sum(in_hand[c] for c in light) / (12 * n)
    heavy_rate = sum(in_hand[c] for c in unseen if c not in light) / (12 * n)
    assert light_rate < 0.5 * heavy_rate
    # the stock is shuffled after the draw: light cards lead it about as often as
    # their share of the stock (12 light of the 16 left is typical)
    assert 0.55 < light_first / n < 0.9


def _first_play_view() -> tuple[MatchState, PlayerView]:
    rules = get_preset("online")
    for i in range(50):
        m = new_match(rules, hashlib.sha256(b"reader%d" % i).digest())
        if m.phase is Phase.PLAY and m.to_act == 0:
            v = m.view(0)
            # a field month with unseen cards left, and a bright on the field
            if v.field.mask & BRIGHTS:
                return m, v
    raise AssertionError("no suitable deal")


def _exchanged(v: PlayerView, mine: int, field: int, piles: list[CardSet]) -> PlayerView:
    """``v`` after one play of mine (``mine`` from my hand) and one of the opponent's,
    with the field and piles they left."""
    return dataclasses.replace(
        v,
        hand=CardSet(v.hand.mask & ~(1 << mine)),
        hand_size=v.hand_size - 1,
        opponent_hand_size=v.opponent_hand_size - 1,
        field=CardSet(field),
        piles=(piles[0], piles[1]),
        stock_size=v.stock_size - 2,
    )


def _after_opponent_turn(v: PlayerView, opp_gained: int) -> PlayerView:
    """``v`` one play of mine and one of the opponent's later: I discarded a hand card
    of a month not on the field, the opponent took ``opp_gained`` (unseen cards) or,
    when that is 0, discarded an unseen card of another month."""
    field = v.field.mask
    months_on_field = {MONTH_OF[c] for c in iter_mask(field)}
    mine = next(c for c in iter_mask(v.hand.mask) if MONTH_OF[c] not in months_on_field)
    new_field = field | 1 << mine
    if not opp_gained:
        used = months_on_field | {MONTH_OF[mine]}
        theirs = next(c for c in iter_mask(v.unseen.mask) if MONTH_OF[c] not in used)
        new_field |= 1 << theirs
    piles = list(v.piles)
    piles[1] = CardSet(piles[1].mask | opp_gained)
    return _exchanged(v, mine, new_field, piles)


def test_reader_marks_months_the_opponent_passed_up() -> None:
    _, v1 = _first_play_view()
    static = tables_for(v1.rules).static
    reader = HandReader()
    reader.draws = False  # the opponent's laid card is new on the field: see the next tests
    reader.observe(static, v1)
    assert reader.weights(v1) is None  # nothing learnt from one view
    v2 = _after_opponent_turn(v1, 0)
    reader.observe(static, v2)
    left = {MONTH_OF[c] for c in iter_mask(v1.field.mask)}
    w = reader.weights(v2)
    assert w is not None
    for c in iter_mask(v2.unseen.mask):
        expected = STRONG if MONTH_OF[c] in left else 1.0
        assert w.get(c, 1.0) == expected, c
    # the same view again (another decision in the same turn) teaches nothing new
    reader.observe(static, v2)
    assert reader.weights(v2) == w


def test_reader_is_less_sure_when_the_opponent_took_something_dearer() -> None:
    _, v1 = _first_play_view()
    static = tables_for(v1.rules).static
    field = v1.field.mask
    field_months = {MONTH_OF[c] for c in iter_mask(field)}

    def best_left(month: int) -> float:
        return max(static[f] for f in iter_mask(field & MONTH_MASKS[month]))

    # the opponent took the dearest pair of unseen cards of a month not on the field
    pairs = [
        list(iter_mask(v1.unseen.mask & MONTH_MASKS[m]))[:2]
        for m in range(1, 13)
        if m not in field_months and (v1.unseen.mask & MONTH_MASKS[m]).bit_count() >= 2
    ]
    pair = max(pairs, key=lambda p: static[p[0]] + static[p[1]])
    took = static[pair[0]] + static[pair[1]]
    reader = HandReader()
    reader.observe(static, v1)
    reader.observe(static, _after_opponent_turn(v1, (1 << pair[0]) | (1 << pair[1])))
    factors = {MONTH_OF[c]: x for c, x in (reader.weights(v1) or {}).items()}
    assert set(factors) <= field_months
    for month, x in factors.items():
        assert x == (STRONG if best_left(month) + 0.1 > took else WEAK), month
    assert WEAK in factors.values()  # a cheap month left beside a dear capture
    assert STRONG in factors.values()  # the bright left on the field outweighs the pair


def test_reader_forgets_at_the_next_round() -> None:
    _, v1 = _first_play_view()
    static = tables_for(v1.rules).static
    reader = HandReader()
    reader.observe(static, v1)
    reader.observe(static, _after_opponent_turn(v1, 0))
    assert any(x != 1.0 for x in reader.month_weight)
    reader.observe(static, dataclasses.replace(v1, round=v1.round + 1))
    assert reader.month_weight == [1.0] * 13


def test_hard_plays_whole_matches_reproducibly() -> None:
    """The reader keeps state across decisions; a match still replays from the seeds."""
    rules = get_preset("nintendo").with_settings(rounds=2)

    def actions() -> list[str]:
        m = new_match(rules, hashlib.sha256(b"replay").digest())
        bots = (make_bot("hard:playouts=24", 5), make_bot("hard-v1:playouts=12", 6))
        out = []
        while not m.is_over:
            p = m.to_act
            assert p is not None
            a = bots[p].choose(m.view(p))
            out.append(str(a))
            m = m.apply(a)[0]
        return out

    assert actions() == actions()


def _three_laid(v: PlayerView, my_draw_takes: bool) -> PlayerView:
    """``v`` one exchange later: I discarded a hand card; my draw either lay on the field
    or took my discard's month mate; the opponent laid its play and its draw on the
    field (three months not on the field before)."""
    field = v.field.mask
    months = {MONTH_OF[c] for c in iter_mask(field)}
    mine = next(c for c in iter_mask(v.hand.mask) if MONTH_OF[c] not in months)
    months.add(MONTH_OF[mine])
    unseen = v.unseen.mask
    laid = []
    for c in iter_mask(unseen):
        month = MONTH_OF[c]
        used = months | {MONTH_OF[x] for x in laid}
        if month not in used and (unseen & MONTH_MASKS[month]).bit_count() >= 2:
            laid.append(c)
        if len(laid) == 3:
            break
    piles = list(v.piles)
    new_field = field | 1 << laid[1] | 1 << laid[2]
    if my_draw_takes:
        mate = next(c for c in iter_mask(unseen & MONTH_MASKS[MONTH_OF[mine]]))
        piles[0] = CardSet(piles[0].mask | 1 << mine | 1 << mate)
        new_field |= 1 << laid[0]  # then the opponent's three: laid[0..2]
    else:
        new_field |= 1 << mine | 1 << laid[0]
    return _exchanged(v, mine, new_field, piles)


def test_reader_shares_the_doubt_over_cards_my_draw_may_have_laid() -> None:
    """A card my draw laid on the field sat there through the opponent's turn; which
    of the three new field cards it is, is unknown, so each month gets a third of the
    evidence -- and none when my draw went to my pile instead."""
    _, v1 = _first_play_view()
    static = tables_for(v1.rules).static
    old_months = {MONTH_OF[c] for c in iter_mask(v1.field.mask)}
    for draws in (False, True):
        reader = HandReader()
        reader.draws = draws
        reader.observe(static, v1)
        v2 = _three_laid(v1, my_draw_takes=False)
        reader.observe(static, v2)
        new = v2.field.mask & ~v1.field.mask & v1.unseen.mask
        assert new.bit_count() == 3
        for c in iter_mask(new):
            w = reader.month_weight[MONTH_OF[c]]
            assert w == (1.0 - (1.0 - STRONG) / 3 if draws else 1.0)
        for month in old_months:
            if v2.unseen.mask & MONTH_MASKS[month]:
                assert reader.month_weight[month] == STRONG
    reader = HandReader()
    reader.draws = True
    reader.observe(static, v1)
    v2 = _three_laid(v1, my_draw_takes=True)
    reader.observe(static, v2)
    for c in iter_mask(v2.field.mask & ~v1.field.mask):
        assert reader.month_weight[MONTH_OF[c]] == 1.0


def test_reader_reads_the_opening_turn_it_did_not_see() -> None:
    """When the opponent played first, the field cards it left were (mostly) dealt
    there: months with two field cards surely, lone cards with the chance that they
    are not the ones it laid down."""
    rules = get_preset("online")
    for i in range(200):
        m = new_match(rules, hashlib.sha256(b"opening%d" % i).digest())
        if m.phase is not Phase.PLAY or m.to_act != 1:
            continue
        m = m.apply(make_bot("easy", i).choose(m.view(1)))[0]
        v = m.view(0)
        field = v.field.mask
        pairs = {
            MONTH_OF[c]
            for c in iter_mask(field)
            if (field & MONTH_MASKS[MONTH_OF[c]]).bit_count() >= 2
            and v.unseen.mask & MONTH_MASKS[MONTH_OF[c]]
        }
        if v.phase is Phase.PLAY and pairs:
            break
    else:
        raise AssertionError("no suitable deal")
    static = tables_for(rules).static
    off = HandReader()
    off.opening = False
    off.observe(static, v)
    assert off.weights(v) is None
    on = HandReader()
    on.opening = True
    on.observe(static, v)
    field_months = {MONTH_OF[c] for c in iter_mask(field)}
    for month in range(1, 13):
        w = on.month_weight[month]
        if month in pairs:
            assert w in (STRONG, WEAK)
        elif month not in field_months:
            assert w == 1.0
        else:
            assert w <= 1.0


def test_hold_follows_the_weights() -> None:
    """The chance that the guessed hand holds a month: lower for a month the reader
    marked, about ``1 - (1 - h/n) ** k`` otherwise, and None before any evidence."""
    _, v1 = _first_play_view()
    static = tables_for(v1.rules).static
    reader = HandReader()
    reader.observe(static, v1)
    assert reader.hold(v1) is None
    v2 = _after_opponent_turn(v1, 0)
    reader.observe(static, v2)
    hold = reader.hold(v2)
    assert hold is not None
    unseen = v2.unseen.mask
    counts = {m: (unseen & MONTH_MASKS[m]).bit_count() for m in range(1, 13)}
    marked = [m for m in range(1, 13) if reader.month_weight[m] < 1.0 and counts[m]]
    plain = [m for m in range(1, 13) if reader.month_weight[m] == 1.0 and counts[m]]
    assert marked and plain
    compared = 0
    for a in marked:
        for b in plain:
            if counts[a] <= counts[b]:
                assert hold[a] < hold[b]
                compared += 1
    assert compared
    for m in range(1, 13):
        if not counts[m]:
            assert hold[m] == 0.0
    assert all(0.0 <= x < 1.0 for x in hold)
    # a plain month's chance is near the uniform one (weights elsewhere raise it a little)
    n = unseen.bit_count()
    h = v2.opponent_hand_size
    for m in plain:
        uniform = 1.0 - (1.0 - h / n) ** counts[m]
        assert uniform <= hold[m] < uniform + 0.25


def test_exposure_uses_the_read_chances() -> None:
    """Medium's exposure term with the opponent surely holding nothing is at most its
    value with chances counted from a random hand, and equal to it without a reading."""
    _, v1 = _first_play_view()
    tab = tables_for(v1.rules)
    me = v1.seat
    args = (
        tab,
        v1.field.mask,
        v1.piles[me].mask,
        v1.piles[1 - me].mask,
        v1.unseen.mask,
        v1.opponent_hand_size,
        0,
    )
    plain = exposure(*args)
    assert plain > 0.0
    assert exposure(*args, None) == plain
    assert exposure(*args, [0.0] * 13) == 0.0
    assert exposure(*args, [1.0] * 13) > plain
