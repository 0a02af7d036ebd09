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
    round_spread,
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


def test_a_round_moves_a_pool_lead_twice_as_far() -> None:
    # The same deals and plays (the spread's seed is fixed); under pool scoring the
    # loser pays what the winner gains, so the lead moves by twice the points won.
    total = get_preset("nintendo")
    pool = total.with_settings(scoring="pool", pool_stake=10_000)
    assert round_spread(pool) == pytest.approx(2 * round_spread(total))


def test_the_spread_follows_the_stakes() -> None:
    # Doubling at 7 and doubling the opponent after a call make rounds swing wider.
    nintendo = get_preset("nintendo")
    flat = nintendo.with_settings(double_at=0, koikoi_multiplier="none")
    assert round_spread(flat) < round_spread(nintendo)
    assert round_spread(nintendo) > ROUND_SIGMA  # the old constant: too sure of a lead
    assert round_spread(nintendo) == round_spread(get_preset("nintendo"))  # a fixed seed


def test_a_wider_spread_makes_the_estimate_less_sure_of_a_lead() -> None:
    rules = get_preset("nintendo").with_settings(rounds=6)
    sure = match_utility(rules, 0, 4, (0, 0), (10, 0), ROUND_SIGMA)
    wide = match_utility(rules, 0, 4, (0, 0), (10, 0), round_spread(rules))
    assert 0.5 < wide < sure


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
