"""Whole hidden-deal matches between two in-memory sides, under every preset."""

from __future__ import annotations

import random

import pytest

from p2pkoikoi.engine import MatchState
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch
from tests.hidden_helpers import seed


def hidden(name: str, **changes: object):  # type: ignore[no-untyped-def]
    return PRESETS[name].with_settings(deal="hidden", **changes)


def run_match(
    rules, match_seed: bytes, rng: random.Random, watch=None
) -> tuple[HiddenMatch, HiddenMatch]:  # type: ignore[no-untyped-def]
    sides = (
        HiddenMatch(rules, match_seed, 0, seed("host secret")),
        HiddenMatch(rules, match_seed, 1, seed("joiner secret")),
    )
    steps = 0
    while not (sides[0].is_over and sides[1].is_over):
        steps += 1
        assert steps < 20_000
        moved = False
        for me in sides:
            other = sides[1 - me.seat]
            while me.outbox:
                mv, before = me.outbox.pop(0)
                assert other.state_hash() == before  # both sides agree before every move
                other.receive(mv)
                moved = True
                if watch:
                    watch(sides)
        for me in sides:
            if me.my_turn():
                me.act(rng.choice(me.legal_actions()))
                moved = True
        assert moved, (sides[0].expecting, sides[1].expecting)
        if sides[0].expecting == sides[1].expecting and sides[0].expecting is not None:
            assert sides[0].state_hash() == sides[1].state_hash()
    return sides


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_whole_hidden_match_under_every_preset(preset: str) -> None:
    rules = hidden(preset, rounds=3)
    h, j = run_match(rules, seed(preset), random.Random(preset))
    assert h.state.scores == j.state.scores and h.state.winner == j.state.winner
    assert len(h.state.results) == len(j.state.results) >= 1
    assert h.audits == j.audits >= len(h.state.results)
    assert h.state_hash() == j.state_hash()


def test_rules_that_read_hidden_hands_forced_capture_swap_and_hand_yaku() -> None:
    rules = hidden("rulebook", rounds=4, forced_capture=True, redeal_hand_four_pairs=True)
    for k in range(3):
        h, j = run_match(rules, seed(f"rb{k}"), random.Random(k))
        assert h.state.scores == j.state.scores


def test_neither_side_ever_holds_the_others_key_for_a_card_hidden_from_it() -> None:
    """The modified client at match level: everything each side received, at every step."""
    received: list[list[bytes]] = [[], []]

    def watch(sides: tuple[HiddenMatch, HiddenMatch]) -> None:
        for me in sides:
            peer = sides[1 - me.seat]
            if me.table.dealt and peer.table.secrets is not me.table.secrets:
                got = b"".join(received[me.seat])
                for pos in me.table.hidden_from_me():
                    assert peer.table.secrets.keys[pos] not in got

    rules = hidden("online", rounds=2)
    sides = (
        HiddenMatch(rules, seed("m"), 0, seed("a")),
        HiddenMatch(rules, seed("m"), 1, seed("b")),
    )
    rng = random.Random(3)
    while not (sides[0].is_over and sides[1].is_over):
        for me in sides:
            other = sides[1 - me.seat]
            while me.outbox:
                mv = me.outbox.pop(0)[0]
                if mv.kind != "audit":
                    received[other.seat].append(mv.keys + mv.deck)
                else:
                    received[other.seat].clear()  # a new deal: new keys
                other.receive(mv)
                if other.table.dealt and mv.kind != "audit":
                    watch(sides)
        for me in sides:
            if me.my_turn():
                me.act(rng.choice(me.legal_actions()))


def test_the_open_engine_is_unchanged_by_the_hidden_setting_default() -> None:
    s, _ = MatchState.start(PRESETS["online"], seed("x"))
    assert s.phase.value == "play" or s.phase.value == "hand_swap"


def test_card_move_kinds_are_checked() -> None:
    with pytest.raises(ValueError):
        CardMove("peek", 0)


def test_a_searching_bot_plays_a_hidden_match_from_its_view() -> None:
    """The hard bot searches with determinize; rounds past the current one deal openly."""
    from p2pkoikoi.bots import make_bot

    rules = hidden("online", rounds=2)
    bots = [make_bot("hard", seed=s) for s in (1, 2)]
    sides = (
        HiddenMatch(rules, seed("bot"), 0, seed("a")),
        HiddenMatch(rules, seed("bot"), 1, seed("b")),
    )
    while not (sides[0].is_over and sides[1].is_over):
        for me in sides:
            while me.outbox:
                sides[1 - me.seat].receive(me.outbox.pop(0)[0])
        for me in sides:
            if me.my_turn():
                me.act(bots[me.seat].choose(me.state.view(me.seat)))
    assert sides[0].state.scores == sides[1].state.scores


def test_local_play_deals_openly_whatever_the_deal_setting() -> None:
    from p2pkoikoi.bots.tournament import play_game

    rules = hidden("online", rounds=2)
    assert rules.with_open_deal().deal.value == "open"
    assert rules.with_open_deal().with_open_deal() == rules.with_open_deal()
    result = play_game("random", "random", rules, 1, 0)
    assert result.forfeit == "" and result.rounds >= 1


def test_scores_below_zero_without_the_pool_cap() -> None:
    rules = hidden("online", rounds=4).with_settings(
        pool_stake=1, pool_payment_cap=False, knockout=False
    )
    h, j = run_match(rules, seed("neg"), random.Random(0))
    assert h.state.scores == j.state.scores and min(h.state.scores) < 0
