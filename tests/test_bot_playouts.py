"""The hard bot's playout policies: what the family-aware policy adds to greedy."""

from __future__ import annotations

import hashlib

import pytest

from p2pkoikoi.bots import make_bot
from p2pkoikoi.bots.heuristics import tables_for
from p2pkoikoi.bots.playouts import (
    ROUND_SIGMA,
    families,
    match_utility,
    pool_aware_sigma,
    smart_move,
)
from p2pkoikoi.engine import get_preset, new_match
from p2pkoikoi.engine.cards import CARDS
from p2pkoikoi.engine.playout import PLAY, Playout

RULES = get_preset("online")
TAB = tables_for(RULES)
ID = {c.code: c.id for c in CARDS}


def mask(*codes: str) -> int:
    return sum(1 << ID[c] for c in codes)


def position(hand: int, field: int, mine: int, theirs: int, opp_hand: int = 0) -> Playout:
    """Seat 0 to play, with the given cards (the stock is never drawn from here)."""
    q = Playout._new(RULES, 0, (25, 25))
    q.hands = [hand, opp_hand]
    q.piles = [mine, theirs]
    q.field = field
    q.stock = []
    q.pos = 0
    q.calls = [0, 0]
    q.last = [0, 0]
    q.phase = PLAY
    q.to_act = 0
    return q


def choose(q: Playout, family_bonus: float, block_bonus: float) -> str:
    fam = families(TAB.groups, family_bonus, block_bonus)
    m = smart_move(TAB.static, fam, q, q.plays(), lambda: 0.5)
    return CARDS[m & 63].code


def test_taking_the_card_the_opponent_needs_for_its_brights() -> None:
    # Three of June on the field, the fourth in hand,
    # take 4.3 points of cards; the Phoenix with a chaff only 3.  The opponent holds
    # two brights, so the Phoenix is the card that stops its Sanko.
    q = position(
        hand=mask("12c1", "6c2"),
        field=mask("12b", "6a", "6r", "6c1"),
        mine=0,
        theirs=mask("1b", "3b"),
    )
    assert choose(q, 0.5, 0.5) == "12c1"
    assert choose(q, 0.5, 0.0) == "6c2"  # greedy: the dearer capture


def test_bringing_my_own_family_within_a_card_of_scoring() -> None:
    # A second poem ribbon (Akatan needs three) against more cards of October.
    q = position(
        hand=mask("2a", "10c2"),
        field=mask("2r", "10a", "10r", "10c1"),
        mine=mask("1r"),
        theirs=0,
    )
    assert choose(q, 0.5, 0.5) == "2a"
    assert choose(q, 0.0, 0.5) == "10c2"


def test_families_are_per_card_and_cached() -> None:
    fam = families(TAB.groups, 0.5, 0.5)
    assert fam is families(TAB.groups, 0.5, 0.5)
    names = {g.mask: g.name for g in TAB.groups}
    assert {names[f[0]] for f in fam[ID["9a"]]} == {"hanami", "tsukimi", "tane"}
    brights = next(f for f in fam[ID["12b"]] if names[f[0]] == "brights")
    assert brights[1:4] == (3, 4.0, 4.0)  # need 3; 0.5 x 8 points each
    assert families(TAB.groups, 1.0, 0.0) is not fam


def test_a_pool_lead_counts_half_as_much_as_a_lead_in_points_won() -> None:
    # A 5-point round moves a pool lead by 10 (the winner gains what the loser pays):
    # hard's estimate treats it as the same 5-point lead under running totals.
    pool = get_preset("online")
    total = get_preset("nintendo").with_settings(rounds=pool.rounds)
    assert pool_aware_sigma(pool) == 2 * ROUND_SIGMA
    assert pool_aware_sigma(total) == ROUND_SIGMA
    by_pool = match_utility(pool, 0, 1, (25, 25), (5, 0), pool_aware_sigma(pool))
    by_sum = match_utility(total, 0, 1, (0, 0), (5, 0), pool_aware_sigma(total))
    assert by_pool == pytest.approx(by_sum)
    assert match_utility(pool, 0, 1, (25, 25), (5, 0)) > by_pool  # hard-v1's: surer of it


def _digest(specs: tuple[str, str], preset: str) -> str:
    rules = get_preset(preset).with_settings(rounds=2)
    h = hashlib.sha256()
    for k in range(3):
        bots = [make_bot(specs[0], k), make_bot(specs[1], k + 7)]
        m = new_match(rules, hashlib.sha256(b"dig%d" % k).digest())
        while not m.is_over:
            p = m.to_act
            assert p is not None
            a = bots[p].choose(m.view(p))
            h.update(str(a).encode())
            m = m.apply(a)[0]
    return h.hexdigest()[:16]


@pytest.mark.parametrize(
    ("preset", "specs", "digest"),
    [
        ("online", ("hard-v1:playouts=12", "medium"), "dae4fe93f958a2a1"),
        ("nintendo", ("hard-v1:playouts=12", "medium"), "f17fb2ceef583ad0"),
        ("online", ("medium", "easy"), "2feb4dc11194e203"),
        ("nintendo", ("medium", "easy"), "5cb9c4c5fab305c8"),
    ],
)
def test_hard_v1_and_medium_play_as_they_always_have(
    preset: str, specs: tuple[str, str], digest: str
) -> None:
    """``hard-v1`` is the yardstick for ``hard`` (docs/bots.md): a change to the
    shared playout code must not move it, nor medium, its prior.  Every action of
    three two-round matches, hashed; the digests are those of the code before
    ``hard``'s family-aware playouts."""
    assert _digest(specs, preset) == digest
