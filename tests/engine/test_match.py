"""The round and match state machine: scenarios from the rules, and properties under every preset."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pkoikoi.engine import (
    PRESETS,
    Action,
    IllegalActionError,
    InputError,
    MatchState,
    Phase,
    determinize,
    get_preset,
    new_match,
)
from p2pkoikoi.engine.cards import ALL_MASK, CARDS
from p2pkoikoi.engine.events import Drew, Played, RoundEnded
from p2pkoikoi.engine.rules import Scoring

ONLINE = get_preset("online")
SEED = bytes(range(32))


def play_random(rules, seed: bytes, rng: random.Random, check=None):
    m, _ = MatchState.start(rules, seed)
    actions = []
    while not m.is_over:
        a = rng.choice(m.legal_actions())
        actions.append(a)
        m, events = m.apply(a)
        if check:
            check(m, events)
    return m, actions


def all_cards_somewhere(m: MatchState) -> bool:
    masks = [m.hand(0).mask, m.hand(1).mask, m.field.mask, m.pile(0).mask, m.pile(1).mask]
    stock = 0
    for c in m.stock:
        stock |= c.bit
    masks.append(stock)
    seen = 0
    for x in masks:
        if seen & x:
            return False
        seen |= x
    return seen == ALL_MASK


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_matches_under_every_preset(preset: str) -> None:
    rules = PRESETS[preset]
    rng = random.Random(preset)
    for _ in range(15):

        def check(m: MatchState, events) -> None:
            if not m.is_over:
                assert all_cards_somewhere(m)
                assert m.legal_actions(), "a state that waits must offer an action"
            if rules.scoring is Scoring.POOL:
                assert sum(m.scores) == 2 * rules.pool_stake
                if rules.pool_payment_cap:
                    assert min(m.scores) >= 0
                if not m.is_over:
                    assert min(m.scores) > 0 or not rules.knockout

        m, _ = play_random(rules, rng.randbytes(32), rng, check)
        assert m.is_over and m.to_act is None and m.legal_actions() == ()
        assert len(m.results) <= rules.rounds
        if rules.scoring is Scoring.POOL and rules.knockout and min(m.scores) <= 0:
            assert m.end_reason == "knockout"
            assert m.winner == (0 if m.scores[1] <= 0 else 1)
        else:
            assert len(m.results) == rules.rounds
            if m.scores[0] != m.scores[1]:
                assert m.winner == (0 if m.scores[0] > m.scores[1] else 1)
            else:
                assert m.winner is None


@settings(max_examples=25, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    choice=st.integers(0, 2**32),
    preset=st.sampled_from(sorted(PRESETS)),
)
def test_replay_is_deterministic(seed: bytes, choice: int, preset: str) -> None:
    rules = PRESETS[preset]
    m1, actions = play_random(rules, seed, random.Random(choice))
    m2 = new_match(rules, seed)
    hashes = []
    for a in actions:
        m2 = m2.after(Action.parse(str(a)))
        hashes.append(m2.state_hash())
    assert m2.state_hash() == m1.state_hash()
    assert m2.scores == m1.scores and m2.results == m1.results
    # apply and after agree
    m3 = new_match(rules, seed)
    for a, h in zip(actions, hashes, strict=True):
        m3, _ = m3.apply(a)
        assert m3.state_hash() == h


def test_sum_scores_match_round_results() -> None:
    rules = get_preset("nintendo")
    m, _ = play_random(rules, SEED, random.Random(3))
    assert m.scores == (
        sum(r.gained[0] for r in m.results),
        sum(r.gained[1] for r in m.results),
    )


def test_knockout_ends_the_match() -> None:
    rules = ONLINE.with_settings(pool_stake=1, rounds=12)
    m, _ = play_random(rules, SEED, random.Random(1))
    winners = [r for r in m.results if r.winner is not None]
    assert winners, "someone won a round"
    assert m.end_reason == "knockout" and 0 in m.scores
    assert m.results[-1] is winners[0]


# ---------------------------------------------------------------------- scenarios
def position(**kw):
    kw.setdefault("hands", ("1b 1r 1c1 1c2 2a 2r 2c1 2c2", "3b 3r 3c1 3c2 4a 4r 4c1 4c2"))
    return MatchState.position(ONLINE, **kw)


REST = (
    "7a 7r 7c1 7c2 8b 8a 8c1 8c2 9a 9r 9c1 9c2 10a 10r 10c1 10c2 11b 11a 11r 11c 12b 12c1 12c2 12c3"
)


def test_play_without_match_joins_the_field() -> None:
    m = position(field="5a 5r 5c1 5c2 6a 6r 6c1 6c2", stock=REST)
    m2, ev = m.apply(Action.parse("play 1b"))
    assert CARDS[0] in m2.field
    assert ev[0] == Played(0, CARDS[0], ())
    assert isinstance(ev[1], Drew) and ev[1].card.code == "7a"
    assert m2.to_act == 1 and m2.phase is Phase.PLAY


def test_two_matches_need_a_choice_and_three_take_all() -> None:
    hands = ("1b 5a 2c1 2c2 3c1 3c2 4c1 4c2", "3b 3r 2a 2r 4a 4r 6c1 6c2")
    m = MatchState.position(ONLINE, hands=hands, field="1r 1c1 5r 5c1 5c2 6a 6r 1c2", stock="8a")
    acts = {str(a) for a in m.legal_actions()}
    assert "play 1b" in acts and "play 5a" in acts  # 1: three match, 5: three match
    m2, ev = m.apply(Action.parse("play 1b"))
    assert {c.code for c in ev[0].captured} == {"1r", "1c1", "1c2"}
    assert {"1b", "1r", "1c1", "1c2"} <= set(m2.pile(0).codes())

    two = MatchState.position(ONLINE, hands=hands, field="1r 1c1 5r 5c1 11c 6a 7r 12c1", stock="8a")
    acts = {str(a) for a in two.legal_actions()}
    assert {"play 1b 1r", "play 1b 1c1"} <= acts and "play 1b" not in acts
    with pytest.raises(IllegalActionError, match="two field cards match"):
        two.apply(Action.parse("play 1b"))
    after, _ = two.apply(Action.parse("play 1b 1c1"))
    assert "1r" in after.field.codes() and "1c1" in after.pile(0).codes()


def test_drawn_card_with_two_matches_asks_for_a_take() -> None:
    m = position(field="7r 7c1 5c1 5c2 6a 6r 6c1 6c2", stock="7a")
    m2, ev = m.apply(Action.parse("play 1b"))
    assert m2.phase is Phase.DRAW_CHOICE and m2.to_act == 0 and m2.drawn_card is CARDS[24]
    assert {str(a) for a in m2.legal_actions()} == {"take 7r", "take 7c1"}
    with pytest.raises(IllegalActionError):
        m2.apply(Action.parse("take 6a"))
    m3, ev = m2.apply(Action.parse("take 7r"))
    assert {"7a", "7r"} <= set(m3.pile(0).codes()) and "7c1" in m3.field.codes()
    assert m3.to_act == 1


def test_koikoi_then_stop_scores_with_the_shared_multiplier() -> None:
    # Seat 0 holds Moon and Sake cup (Tsukimi 5); the Curtain comes later.
    m = MatchState.position(
        ONLINE,
        hands=("3c1 1c1 1c2 2c1 2c2 4c1 4c2 5c1", "6c1 6c2 7c1 7c2 10c1 10c2 11r 11c"),
        field="3b 12b 12c1 12c2 12c3 11b 11a 10a",
        piles=("8b 9a", ""),
        stock="1b",
        calls=(1, 1),
    )
    m2, ev = m.apply(Action.parse("play 3c1"))
    assert m2.phase is Phase.KOIKOI
    assert m2.potential_score(0).score == 10 * 2 * 3  # 002's example: 10 x 2 x 3 = 60
    m3, ev = m2.apply(Action.parse("stop"))
    end = [e for e in ev if isinstance(e, RoundEnded)][0]
    assert end.winner == 0 and end.breakdown.score == 60
    assert end.gained == (25, 0)  # paid up to what the loser had


def test_no_koikoi_on_the_last_turn_under_online() -> None:
    m = MatchState.position(
        ONLINE,
        hands=("8b", "4c1"),
        field="8a",
        piles=("1b 3b", ""),
        stock="11b 12b",
        dealer=0,
        to_act=1,
    )
    m, _ = m.apply(Action.parse("play 4c1"))  # seat 1 draws 11b: nothing
    assert m.to_act == 0
    m, ev = m.apply(Action.parse("play 8b"))  # 8b takes 8a, draws 12b: Sankō on the last turn
    assert m.round == 2 or m.is_over
    end = [e for e in ev if isinstance(e, RoundEnded)][0]
    assert end.winner == 0 and end.reason == "stop"


def test_drawn_round_keeps_dealer_online_and_passes_under_nintendo() -> None:
    # Each hand holds one card; nobody can make a yaku with what is left.
    for preset, next_dealer in (("online", 0), ("nintendo", 1)):
        m = MatchState.position(
            get_preset(preset),
            hands=("4c1", "6c1"),
            field="11c 12c3",
            piles=("1c1 2c1 3c1", "5c1 7c1"),
            stock="10c1 10c2",
            dealer=0,
        )
        m, _ = m.apply(Action.parse("play 4c1"))
        m, ev = m.apply(Action.parse("play 6c1"))
        (end,) = [e for e in ev if isinstance(e, RoundEnded)]
        assert end.reason == "drawn" and end.winner is None and end.gained == (0, 0)
        assert m.round == 2 and m.dealer == next_dealer, preset


def test_view_hides_the_opponent_hand_and_stock() -> None:
    m = new_match(ONLINE, SEED)
    v = m.view(0)
    assert v.hand == m.hand(0)
    assert len(v.unseen) == 8 + 24
    assert v.unseen.mask == (m.hand(1).mask | sum(c.bit for c in m.stock))
    d = v.to_dict()
    for c in m.hand(1):
        assert c.code not in d["hand"] and c.code not in d["field"]


def test_determinize_gives_an_equal_view() -> None:
    rng = random.Random(9)
    m = new_match(ONLINE, SEED)
    for _ in range(5):
        m = m.after(rng.choice(m.legal_actions()))
    seat = m.to_act
    v = m.view(seat)
    unseen = list(v.unseen)
    rng.shuffle(unseen)
    opp = sum(c.bit for c in unseen[: v.opponent_hand_size])
    stock = tuple(c.id for c in unseen[v.opponent_hand_size :])
    d = determinize(v, opp, stock)
    assert d.view(seat) == v
    with pytest.raises(InputError):
        determinize(v, opp, stock[1:])


def test_illegal_actions_name_the_problem() -> None:
    m = new_match(ONLINE, SEED)
    not_mine = next(iter(m.hand(1 - m.to_act)))
    with pytest.raises(IllegalActionError, match="not in your hand"):
        m.apply(Action.parse(f"play {not_mine.code}"))
    with pytest.raises(IllegalActionError, match="expected a card to play"):
        m.apply(Action.parse("koikoi"))
    over, _ = m.resign(0)
    assert over.is_over and over.winner == 1
    with pytest.raises(IllegalActionError, match="over"):
        over.apply(Action.parse("stop"))


def test_forced_capture_rule() -> None:
    rules = ONLINE.with_settings(forced_capture=True)
    m = MatchState.position(
        rules,
        field="1r 1c1 5c1 5c2 6a 6r 6c1 6c2",
        hands=("1b 2a 2r 2c1 2c2 3b 3r 4a", "3c1 3c2 4r 4c1 4c2 1c2 5a 5r"),
    )
    assert {str(a) for a in m.legal_actions()} == {"play 1b 1r", "play 1b 1c1"}
    with pytest.raises(IllegalActionError, match="captures must be played"):
        m.apply(Action.parse("play 2a"))


def test_hand_swap_is_offered_to_the_nondealer() -> None:
    m = new_match(get_preset("rulebook"), SEED)
    if m.phase is Phase.HAND_SWAP:
        assert m.to_act == 1 - m.dealer
        assert {str(a) for a in m.legal_actions()} == {"swap", "keep"}
        assert len(m.view(m.to_act).hand) == 0  # not looked at yet
        h0, h1 = m.hand(0), m.hand(1)
        m2, _ = m.apply(Action.parse("swap"))
        if m2.round == 1 and m2.phase is Phase.PLAY:
            assert (m2.hand(0), m2.hand(1)) == (h1, h0)
    else:  # the round ended at once on a hand yaku; still a valid state
        assert m.round >= 1


def naive_plays(m: MatchState) -> list[str]:
    """Legal plays straight from the rules, to check the engine's bit tricks."""
    out = []
    for c in m.hand(m.to_act):
        matches = [f for f in m.field if f.month == c.month]
        if len(matches) == 2:
            out += [f"play {c.code} {f.code}" for f in matches]
        else:
            out.append(f"play {c.code}")
    return out


def test_legal_plays_agree_with_the_naive_rule() -> None:
    rng = random.Random(11)
    checked = 0
    for _ in range(60):
        m = new_match(ONLINE, rng.randbytes(32))
        while not m.is_over:
            if m.phase is Phase.PLAY:
                assert [str(a) for a in m.legal_actions()] == naive_plays(m)
                checked += 1
            m = m.after(rng.choice(m.legal_actions()))
    assert checked > 500


def test_a_match_started_without_events_is_the_same_match() -> None:
    """``new_match`` (no events made: the redeals, hand yaku and dealer draws of a start
    go unrecorded) reaches the state ``MatchState.start`` reaches, with every preset,
    over enough seeds to meet redeals, hand yaku and the hand-swap offer."""
    import hashlib

    kinds: set[str] = set()
    phases: set[Phase] = set()
    for name, rules in PRESETS.items():
        for i in range(300):
            seed = hashlib.sha256(b"start%d" % i).digest()
            started, events = MatchState.start(rules, seed)
            kinds.update(type(e).__name__ for e in events)
            phases.add(started.phase)
            quiet = new_match(rules, seed)
            assert quiet.encode_state() == started.encode_state(), (name, i)
            assert quiet.results == started.results and quiet.phase is started.phase
    # the other paths were met: redeals, hand yaku (a round over before play), the swap offer
    assert {"Redealt", "HandYaku", "RoundEnded", "MatchEnded"} <= kinds
    assert Phase.HAND_SWAP in phases
