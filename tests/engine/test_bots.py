"""Bots: fairness (decisions depend on the view alone), legality on every preset, specs."""

from __future__ import annotations

import hashlib
import random

import pytest

from p2pkoikoi.bots import EngineBot, HardBot, make_bot
from p2pkoikoi.bots.mcts import match_utility
from p2pkoikoi.engine import (
    PRESETS,
    InputError,
    MatchState,
    Phase,
    PlayerView,
    determinize,
    get_preset,
    new_match,
)
from p2pkoikoi.engine.cards import iter_mask

FAST_SPECS = ("random", "easy", "medium", "hard:playouts=16", "hard-v1:playouts=16")


def seed32(n: int) -> bytes:
    return hashlib.sha256(b"test-bots-%d" % n).digest()


def play(rules_name: str, specs: tuple[str, str], n: int, rounds: int = 2) -> MatchState:
    rules = get_preset(rules_name).with_settings(rounds=rounds)
    bots = [make_bot(specs[0], n), make_bot(specs[1], n + 1)]
    m = new_match(rules, seed32(n))
    while not m.is_over:
        p = m.to_act
        assert p is not None
        view = m.view(p)
        a = bots[p].choose(view)
        assert a in view.legal_actions
        m = m.apply(a)[0]
    return m


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_level_finishes_matches_on_every_preset(preset: str) -> None:
    for i, spec in enumerate(FAST_SPECS):
        m = play(preset, (spec, FAST_SPECS[(i + 1) % len(FAST_SPECS)]), i, rounds=1)
        assert m.is_over and m.results


def test_rulebook_hand_swap_and_choices_are_answered() -> None:
    # The rulebook offers a hand swap every round; bots must answer it.
    rules = get_preset("rulebook").with_settings(rounds=2)
    m = new_match(rules, seed32(7))
    assert m.phase is Phase.HAND_SWAP
    for spec in FAST_SPECS:
        a = make_bot(spec, 1).choose(m.view(m.to_act or 0))
        assert str(a) in ("swap", "keep")


def _mid_round_views(preset: str, count: int) -> list[PlayerView]:
    """Views at real decisions (PLAY, DRAW_CHOICE, KOIKOI) from random matches."""
    rules = get_preset(preset)
    rng = random.Random(5)
    views: list[PlayerView] = []
    n = 0
    while len(views) < count:
        m = new_match(rules, seed32(100 + n))
        n += 1
        steps = 0
        while not m.is_over and m.round == 1 and steps < 40:
            p = m.to_act
            assert p is not None
            if m.phase is not Phase.HAND_SWAP and len(m.legal_actions()) > 1 and steps % 3 == 0:
                views.append(m.view(p))
            acts = m.legal_actions()
            m = m.after(acts[rng.randrange(len(acts))])
            steps += 1
    return views


@pytest.mark.parametrize("spec", FAST_SPECS)
def test_decisions_do_not_depend_on_hidden_cards(spec: str) -> None:
    """Permuting the opponent's hand and the stock changes nothing a bot decides."""
    rng = random.Random(11)
    for view in _mid_round_views("online", 6):
        unseen = list(iter_mask(view.unseen.mask))
        choices = set()
        for _ in range(4):
            rng.shuffle(unseen)
            opp = sum(1 << c for c in unseen[: view.opponent_hand_size])
            state = determinize(view, opp, tuple(unseen[view.opponent_hand_size :]))
            seen = state.view(view.seat)
            assert seen.legal_actions == view.legal_actions
            assert seen.hand == view.hand and seen.field == view.field
            choices.add(make_bot(spec, 42).choose(seen))
        assert len(choices) == 1, (spec, view.phase, choices)


def test_hard_with_playouts_is_deterministic_for_a_seed() -> None:
    views = _mid_round_views("nintendo", 3)
    for v in views:
        a1 = HardBot(9, playouts=24).choose(v)
        a2 = HardBot(9, playouts=24).choose(v)
        assert a1 == a2


def test_easy_takes_the_most_valuable_capture() -> None:
    """Easy captures whenever it can, and nothing it could take now is worth more."""
    from p2pkoikoi.bots.base import capture_value
    from p2pkoikoi.bots.heuristics import tables_for

    tab = tables_for(get_preset("online"))
    checked = 0
    for v in _mid_round_views("online", 40):
        if v.phase is not Phase.PLAY:
            continue
        field = v.field.mask
        captures = [
            a
            for a in v.legal_actions
            if a.card is not None and any(f.month == a.card.month for f in v.field)
        ]
        a = make_bot("easy", 0).choose(v)
        if captures:
            assert a in captures
            assert capture_value(tab, a, field) == max(
                capture_value(tab, c, field) for c in captures
            )
            checked += 1
    assert checked > 5


def test_make_bot_specs() -> None:
    assert make_bot("Hard:playouts=5", 1).name == "hard:playouts=5"
    assert make_bot("hard:250", 1).name == "hard:250ms"
    assert make_bot("hard", 1).name.startswith("hard")
    assert make_bot("hard", 1, reproducible=True).name == "hard:playouts=1500"
    assert make_bot("hard-v1", 1, reproducible=True).name == "hard-v1:playouts=600"
    assert make_bot("hard-v1:playouts=7", 1).name == "hard-v1:playouts=7"
    assert make_bot("HARD-v1:40", 1).name == "hard-v1:40ms"
    assert isinstance(make_bot("cmd:python -c pass", 1), EngineBot)
    bad_specs = ("nope", "hard:", "hard:playouts=x", "hard:playouts=0", "cmd:", "", "hard:-5")
    for bad in (*bad_specs, "hard-v1:", "hard-v2", "hard-v1:playouts=0"):
        with pytest.raises(InputError) as err:
            make_bot(bad, 1)
        assert bad in str(err.value) or "cmd:" in str(err.value)


def test_match_utility_is_pool_aware() -> None:
    rules = get_preset("online")  # pool of 25, knockout
    # Taking the opponent's last points wins the match outright.
    assert match_utility(rules, 0, 1, (40, 10), (10, 0)) > 1.0
    assert match_utility(rules, 0, 1, (10, 40), (0, 10)) < 0.0 + 1e-9
    # Early on, winning a round is better than losing it, and more is better.
    assert match_utility(rules, 0, 1, (25, 25), (5, 0)) > match_utility(
        rules, 0, 1, (25, 25), (1, 0)
    )
    assert match_utility(rules, 0, 1, (25, 25), (0, 3)) < 0.5
    # Last round: only the match result counts (a drawn match is half).
    last = rules.rounds
    assert match_utility(rules, 1, last, (20, 30), (0, 0)) == pytest.approx(1.0)


def test_bots_answer_every_kind_of_decision() -> None:
    """Over a few matches the bots meet two-way captures, draw choices and koi-koi calls."""
    seen: set[str] = set()
    rules = get_preset("online").with_settings(rounds=6)
    for n in range(8):
        bots = [make_bot("hard:playouts=8", n), make_bot("medium", n)]
        m = new_match(rules, seed32(300 + n))
        while not m.is_over:
            p = m.to_act
            assert p is not None
            view = m.view(p)
            a = bots[p].choose(view)
            assert a in view.legal_actions
            if view.phase is Phase.PLAY and a.target is not None:
                seen.add("play-with-target")
            elif view.phase is not Phase.PLAY:
                seen.add(view.phase.value)
            m = m.apply(a)[0]
        if {"play-with-target", "draw_choice", "koikoi"} <= seen:
            break
    assert {"play-with-target", "draw_choice", "koikoi"} <= seen


def test_hard_time_budget_is_respected() -> None:
    import time

    view = _mid_round_views("online", 1)[0]
    bot = make_bot("hard:40", 3)
    t0 = time.perf_counter()
    a = bot.choose(view)
    assert time.perf_counter() - t0 < 0.5  # 40 ms budget, one sample of slack
    assert a in view.legal_actions
    assert isinstance(bot, HardBot) and bot.last_playouts >= len(view.legal_actions)
