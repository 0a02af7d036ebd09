"""The search core (engine/playout.py) plays every round exactly as MatchState does."""

from __future__ import annotations

import random

import pytest

from p2pkoikoi.engine import PRESETS, MatchState, Phase, RuleSet, derive_deck, get_preset
from p2pkoikoi.engine import playout as P
from p2pkoikoi.engine.playout import Playout, action_of, move_of, quick_deck
from p2pkoikoi.engine.rules import Scoring

_PHASES = {Phase.PLAY: P.PLAY, Phase.DRAW_CHOICE: P.DRAW_CHOICE, Phase.KOIKOI: P.KOIKOI}

# Every preset, and variations that reach the core's rarer branches.
VARIANTS: dict[str, RuleSet] = dict(PRESETS)
VARIANTS.update(
    {
        "forced+rain": get_preset("online").with_settings(forced_capture=True, rain_out="field"),
        "next_yaku": get_preset("online").with_settings(after_koikoi="next_yaku_ends"),
        "once_round+oya_ken": get_preset("online").with_settings(
            koikoi_limit="once_per_round", drawn_round="oya_ken", oya_ken_points=6, scoring="sum"
        ),
        "once_player+hand_empty": get_preset("nintendo").with_settings(
            koikoi_limit="once_per_player",
            koikoi_when="not_hand_empty",
            drawn_round="dealer_passes",
        ),
        "swap+redeals": get_preset("online").with_settings(
            hand_swap=True, redeal_hand_four_pairs=True, redeal_field_four_pairs=True
        ),
    }
)


def _same_round(m: MatchState, p: Playout) -> None:
    assert p.phase == _PHASES[m.phase]
    assert p.to_act == m.to_act
    assert tuple(p.hands) == (m.hand(0).mask, m.hand(1).mask)
    assert tuple(p.piles) == (m.pile(0).mask, m.pile(1).mask)
    assert p.field == m.field.mask
    assert tuple(p.calls) == m.calls
    assert tuple(p.last) == (m.last_total(0), m.last_total(1))
    assert sorted(str(action_of(p.phase, x)) for x in p.moves()) == sorted(
        str(a) for a in m.legal_actions()
    )


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_playout_follows_match_state_move_for_move(name: str) -> None:
    rules = VARIANTS[name].with_settings(rounds=4)
    rng = random.Random(name)
    rounds = 0
    for _ in range(40):
        m, _ = MatchState.start(rules, rng.randbytes(32))
        p = None
        while not m.is_over:
            if p is None and m.phase is not Phase.HAND_SWAP:
                p = Playout.from_state(m)
                n = len(m.results)
            a = rng.choice(m.legal_actions())
            m = m.after(a)
            if p is None:
                continue
            assert action_of(p.phase, move_of(a)) == a
            p.do(move_of(a))
            if len(m.results) > n:  # the round ended (and the next may be dealt)
                res = m.results[n]
                assert p.phase == P.DONE
                assert not p.moves()
                assert (p.gained, p.winner, p.reason) == (res.gained, res.winner, res.reason)
                if len(m.results) == n + 1 and not m.is_over and res.reason != "both_hand_yaku":
                    assert p.next_dealer == m.dealer
                rounds += 1
                p = None
            else:
                _same_round(m, p)
    assert rounds > 40


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_playout_deals_as_match_state_does(name: str) -> None:
    """Given the match's own decks, ``Playout.deal`` deals (and redeals) the same round."""
    rules = VARIANTS[name]
    rng = random.Random(name)
    for _ in range(150):
        seed = rng.randbytes(32)
        m, events = MatchState.start(rules, seed)
        dealer = events[0].dealer  # DealerChosen; m.dealer is the next round's after a hand yaku
        stake = rules.pool_stake if rules.scoring is Scoring.POOL else 0
        decks = (derive_deck(seed, 1, attempt) for attempt in range(100))
        p = Playout.deal(rules, decks.__next__, dealer, (stake, stake))
        while m.phase is Phase.HAND_SWAP and not m.results:
            assert (p.phase, p.to_act) == (P.SWAP, m.to_act)
            swap = rng.random() < 0.5
            m = m.after(m.legal_actions()[0 if swap else 1])
            p.swap(swap)
        if m.results:
            res = m.results[0]
            assert (p.phase, p.gained, p.winner, p.reason) == (
                P.DONE,
                res.gained,
                res.winner,
                res.reason,
            )
        else:
            _same_round(m, p)
            assert list(p.stock) == [c.id for c in m.stock]


def test_copy_is_independent() -> None:
    rules = get_preset("online")
    rng = random.Random(3)
    p = Playout.deal(rules, lambda: quick_deck(rng))
    q = p.copy()
    while q.phase != P.DONE:
        q.do(rng.choice(q.moves()))
    assert p.phase == P.PLAY and sum(h.bit_count() for h in p.hands) == 16
    assert p.piles == [0, 0]


def test_quick_deck_is_a_permutation_and_uniform_enough() -> None:
    rng = random.Random(5)
    top = [0] * 48
    for _ in range(4800):
        deck = quick_deck(rng)
        assert sorted(deck) == list(range(48))
        top[deck[0]] += 1
    assert min(top) > 50 and max(top) < 160  # ~100 each; far outside this is a bias bug
