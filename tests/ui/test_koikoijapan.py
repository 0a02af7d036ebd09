"""The koikoijapan preset's three settings, played through the engine with exact outcomes,
the deal-time option of ``MatchState.position``, and the one definition of four pairs.

The rules are guansanghai/KoiKoi-AI's ``koikoigame.py`` (see docs/rules.md):
``yaku_point`` adds the scorer's own calls for up to 3 calls and multiplies by
(calls - 2) from 4; viewing yaku are 1, or 3 once the scorer has called; the
round's points pass uncapped and the match ends when a total is 0 or less.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from p2pkoikoi.engine import (
    Action,
    InputError,
    MatchState,
    Phase,
    RoundResult,
    derive_deck,
    get_preset,
)
from p2pkoikoi.engine.cards import CARDS
from p2pkoikoi.engine.events import KoiKoiCalled, RoundEnded, YakuMade
from p2pkoikoi.engine.yaku import Multiplier, ScoreBreakdown, YakuScore, four_pairs, hand_yaku

KKJ = get_preset("koikoijapan")


def mask(codes: str) -> int:
    m = 0
    for c in CARDS:
        if c.code in codes.split():
            m |= c.bit
    return m


def act(m: MatchState, text: str) -> tuple[MatchState, tuple[object, ...]]:
    return m.apply(Action.parse(text))


# ---------------------------------------------------------------------- koi-koi bonus
#
# Seat 0 deals and holds nine chaff; each of its turns takes two more (a chaff
# of a month from its hand and the one on the field), so Kasu goes 2, 4, 6, ...
# and every turn raises its total.  Seat 1 plays cards that match nothing and
# its draws take back its own previous card, which never makes it a yaku; seat
# 0's draws join the field.
CALLS_POSITION = dict(
    piles=("1c1 1c2 2c1 2c2 3c1 3c2 4c1 4c2 5c1", ""),
    hands=("6c1 7c1 8c1 9c1 10c1 12c1 12c3", "1b 2a 3r 4a 5a 11a"),
    field="6c2 7c2 8c2 9c2 10c2 12c2",
    stock="6a 11b 7a 1r 8a 2r 9r 4r 10a 5r 12b",
)
SEAT0_PLAYS = ("6c1", "7c1", "8c1", "9c1", "10c1", "12c1")
SEAT1_PLAYS = ("1b", "2a", "3r", "4a", "5a")


def win_after_calls(rules: object, calls: int) -> tuple[MatchState, list[object]]:
    """Seat 0 calls koi-koi ``calls`` times, one per raising turn, then stops."""
    m = MatchState.position(rules, **CALLS_POSITION)
    events: list[object] = []
    for turn in range(calls + 1):
        m, ev = act(m, f"play {SEAT0_PLAYS[turn]}")
        events += ev
        assert m.phase is Phase.KOIKOI and m.to_act == 0, turn
        assert m.yaku_total(0) == 2 * (turn + 1)
        if turn == calls:
            m, ev = act(m, "stop")
            events += ev
            return m, events
        m, ev = act(m, "koikoi")
        events += ev
        assert m.calls == (turn + 1, 0) and m.last_total(0) == 2 * (turn + 1)
        m, ev = act(m, f"play {SEAT1_PLAYS[turn]}")
        events += ev
        assert m.phase is Phase.PLAY and m.to_act == 0, "seat 1 never makes a yaku"
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("calls", "base", "bonus", "factors", "points"),
    [
        (1, 4, 1, (), 5),  # Kasu 4, +1
        (2, 6, 2, (), 8),  # Kasu 6, +2
        (3, 8, 3, (), 11),  # Kasu 8, +3
        (4, 10, 0, (2,), 20),  # Kasu 10, x(4 - 2)
        (5, 12, 0, (3,), 36),  # Kasu 12, x(5 - 2)
    ],
)
def test_round_won_after_own_calls(
    calls: int, base: int, bonus: int, factors: tuple[int, ...], points: int
) -> None:
    m, events = win_after_calls(KKJ, calls)
    assert sum(isinstance(e, KoiKoiCalled) for e in events) == calls
    r = m.results[0]
    assert r.winner == 0 and r.reason == "stop" and r.gained == (points, 0)
    b = r.breakdown
    assert b is not None
    assert (b.base, b.bonus, tuple(f.factor for f in b.multipliers), b.score) == (
        base,
        bonus,
        factors,
        points,
    )
    assert [y.id for y in b.yaku] == ["kasu"]
    if factors:
        assert b.multipliers == (
            Multiplier(calls - 2, f"{calls} koi-koi calls of your own: x{calls - 2}"),
        )
    if calls < 5:  # 30 - 20 > 0: round 2 is dealt
        assert m.scores == (30 + points, 30 - points) and m.round == 2 and not m.is_over
    else:  # 30 - 36 < 0: the uncapped payment ends the match
        assert m.scores == (66, -6) and m.is_over
        assert (m.end_reason, m.winner) == ("knockout", 0)


def test_opponent_calls_change_nothing() -> None:
    """Only the winner's own calls count: seat 1's two calls leave seat 0's 4 points at 4."""
    m = MatchState.position(
        KKJ,
        piles=("1c1 1c2 2c1 2c2 3c1 3c2 4c1 4c2 5c1", "1b 1r"),
        hands=("6c1 7c1", "11a 2a"),
        field="6c2 7c2",
        stock="6a 11b",
        calls=(0, 2),
    )
    m, _ = act(m, "play 6c1")
    m, ev = act(m, "stop")
    b = m.results[0].breakdown
    assert b is not None and (b.base, b.bonus, b.multipliers, b.score) == (2, 0, (), 2)


def test_bonus_setting_alone_under_online() -> None:
    """koikoi_bonus composes: under online's x(1 + all calls), two own calls give
    (6 + 2) x 3 = 24."""
    rules = get_preset("online").with_settings(koikoi_bonus="self_plus_one", double_at=0)
    m, _ = win_after_calls(rules, 2)
    b = m.results[0].breakdown
    assert b is not None
    assert (b.base, b.bonus, [f.factor for f in b.multipliers], b.score) == (6, 2, [3], 24)


# ---------------------------------------------------------------------- viewing yaku
VIEW_POSITION = dict(
    piles=("9a", ""),
    hands=("3c1 7c1 8c1 12c1", "1b 2a 4a 5a"),
    field="3b 7c2 8b 11c",
    stock="6a 10a 4r 12b 3r",
)


def test_viewing_before_a_call_is_worth_1() -> None:
    m = MatchState.position(KKJ, **VIEW_POSITION)
    m, ev = act(m, "play 3c1")  # takes the Curtain: Hanami with the Sake cup
    made = [e for e in ev if isinstance(e, YakuMade)]
    assert made == [YakuMade(0, (YakuScore("hanami", 1, mask("3b 9a")),), 1, True)]
    m, ev = act(m, "stop")
    assert m.results[0].breakdown == ScoreBreakdown(
        (YakuScore("hanami", 1, mask("3b 9a")),), 1, (), 1, 0
    )
    assert m.scores == (31, 29)


def test_viewing_after_a_call_is_worth_3() -> None:
    """Hanami 1 -> koi-koi: it is now 3, the total to beat is 3 (not 1), so a turn
    that takes only chaff offers no choice; Tsukimi then makes 3 + 3 = 6, +1 for the call."""
    m = MatchState.position(KKJ, **VIEW_POSITION)
    m, _ = act(m, "play 3c1")
    m, _ = act(m, "koikoi")
    assert m.yaku(0) == (YakuScore("hanami", 3, mask("3b 9a")),)
    assert (m.yaku_total(0), m.last_total(0)) == (3, 3)
    assert m.view(1).yaku(0) == m.yaku(0)
    m, _ = act(m, "play 1b")
    m, _ = act(m, "play 7c1")  # two chaff: no new yaku, the 1 -> 3 is not a raise
    assert m.phase is Phase.PLAY and m.to_act == 1
    m, _ = act(m, "play 2a")
    m, ev = act(m, "play 8c1")  # takes the Moon: Tsukimi
    made = [e for e in ev if isinstance(e, YakuMade)]
    assert [(y.id, y.points) for y in made[0].yaku] == [("hanami", 3), ("tsukimi", 3)]
    assert made[0].total == 6
    m, _ = act(m, "stop")
    b = m.results[0].breakdown
    assert b is not None and (b.base, b.bonus, b.score) == (6, 1, 7)
    assert m.scores == (37, 23)


def test_viewing_value_applies_only_to_the_caller() -> None:
    """Seat 1 called, seat 0 did not: seat 0's Hanami is still 1."""
    m = MatchState.position(KKJ, calls=(0, 1), **VIEW_POSITION)
    m, _ = act(m, "play 3c1")
    assert m.phase is Phase.KOIKOI and m.yaku(0) == (YakuScore("hanami", 1, mask("3b 9a")),)


# ---------------------------------------------------------------------- uncapped pool
def test_payment_below_zero_ends_the_match() -> None:
    m = MatchState.position(KKJ, scores=(5, 3), **VIEW_POSITION)
    m, _ = act(m, "play 3c1")
    m, _ = act(m, "koikoi")
    m, _ = act(m, "play 1b")
    m, _ = act(m, "play 7c1")
    m, _ = act(m, "play 2a")
    m, _ = act(m, "play 8c1")
    m, ev = act(m, "stop")
    ended = [e for e in ev if isinstance(e, RoundEnded)]
    assert ended[0].gained == (7, 0) and ended[0].scores == (12, -4)
    assert m.results[0] == RoundResult(1, 0, 0, "stop", m.results[0].breakdown, (7, 0))
    assert m.is_over and m.scores == (12, -4)
    assert (m.end_reason, m.winner) == ("knockout", 0)
    assert m.legal_actions() == ()
    assert len(m.state_hash()) == 32  # a negative score still hashes (signed field)


def test_the_same_payment_capped() -> None:
    rules = KKJ.with_settings(pool_payment_cap=True)
    m = MatchState.position(rules, scores=(5, 3), **VIEW_POSITION)
    for a in ("play 3c1", "koikoi", "play 1b", "play 7c1", "play 2a", "play 8c1", "stop"):
        m, _ = act(m, a)
    assert m.results[0].gained == (3, 0) and m.scores == (8, 0)
    assert (m.end_reason, m.winner) == ("knockout", 0)


def test_drawn_round_pays_the_dealer_1_and_keeps_the_deal() -> None:
    """Nobody makes a yaku: the dealer (seat 1 here) takes 1 from seat 0."""
    m = MatchState.position(
        KKJ,
        hands=("1b", "2a"),
        field="3b",
        stock="4a 5a",
        dealer=1,
        scores=(20, 40),
    )
    m, _ = act(m, "play 2a")
    m, _ = act(m, "play 1b")
    r = m.results[0]
    assert (r.winner, r.reason, r.gained) == (1, "oya_ken", (0, 1))
    assert m.scores == (19, 41) and m.round == 2 and m.dealer == 1


# ---------------------------------------------------------------------- position(deal_rules=True)
PLAIN_DEAL = dict(
    hands=("1b 1r 2a 2r 3b 4a 5a 6a", "7a 8b 9a 10a 11b 12b 1c1 3r"),
    field="2c1 3c1 4r 5r 6r 7r 8a 9r",
)


def test_deal_rules_off_by_default_plays_any_hand() -> None:
    four = dict(PLAIN_DEAL, hands=("1b 1r 1c1 1c2 3b 4a 5a 6a", "7a 8b 9a 10a 11b 12b 2a 3r"))
    m = MatchState.position(KKJ, **four)
    assert (m.phase, m.to_act, m.attempt) == (Phase.PLAY, 0, 0)


def test_deal_rules_on_a_plain_deal_change_nothing() -> None:
    plain = MatchState.position(KKJ, **PLAIN_DEAL)
    dealt = MatchState.position(KKJ, deal_rules=True, **PLAIN_DEAL)
    assert dealt == plain and dealt.phase is Phase.PLAY


@pytest.mark.parametrize(
    "deal",
    [
        dict(PLAIN_DEAL, hands=("1b 1r 1c1 1c2 3b 4a 5a 6a", "7a 8b 9a 10a 11b 12b 2a 3r")),
        dict(
            PLAIN_DEAL,
            field="2c1 2c2 2a 2r 5r 6r 7r 8a",
            hands=("1b 1r 1c1 3c1 3b 4a 5a 6a", "7a 8b 9a 10a 11b 12b 4r 3r"),
        ),
    ],
    ids=["four of a month in a hand", "four of a month on the field"],
)
def test_deal_rules_redeal_from_the_seed(deal: dict[str, object]) -> None:
    seed = bytes(range(32))
    m = MatchState.position(KKJ, deal_rules=True, seed=seed, round=3, **deal)
    assert (m.round, m.attempt, m.phase) == (3, 1, Phase.PLAY)
    deck = derive_deck(seed, 3, 1)
    dealt_field = 0
    for r in range(0, 24, 6):
        dealt_field |= (1 << deck[r + 2]) | (1 << deck[r + 3])
    assert m.field.mask == dealt_field, "the redeal is the seed's attempt 1 of this round"


def test_deal_rules_hand_yaku_ends_the_round() -> None:
    """Under online (Teshi 6), the non-dealer's dealt Teshi wins at once; round 2 follows."""
    online = get_preset("online")
    teshi = dict(
        PLAIN_DEAL,
        hands=("1b 1r 2a 2r 3b 4a 5a 6a", "7a 7c1 7c2 7r 11b 12b 1c1 3r"),
        field="2c1 3c1 4r 5r 6r 8b 8a 9r",
    )
    m = MatchState.position(online, deal_rules=True, **teshi)
    r = m.results[0]
    assert (r.round, r.dealer, r.winner, r.reason, r.gained) == (1, 0, 1, "hand_yaku", (0, 6))
    assert m.scores == (19, 31) and m.round == 2 and m.dealer == 1
    plain = MatchState.position(online, **teshi)
    assert plain.results == () and plain.phase is Phase.PLAY


def test_deal_rules_offer_the_hand_swap() -> None:
    rulebook = get_preset("rulebook")
    m = MatchState.position(rulebook, deal_rules=True, dealer=1, **PLAIN_DEAL)
    assert (m.phase, m.to_act) == (Phase.HAND_SWAP, 0)
    m2, _ = act(m, "swap")
    assert m2.phase is Phase.PLAY and m2.hand(0) == m.hand(1) and m2.to_act == 1


def test_deal_rules_need_a_fresh_deal() -> None:
    with pytest.raises(InputError, match="deal_rules needs a fresh deal"):
        MatchState.position(KKJ, deal_rules=True, hands=("1b", "2a"), field="3b")
    with pytest.raises(InputError, match="deal_rules needs a fresh deal"):
        MatchState.position(KKJ, deal_rules=True, calls=(1, 0), **PLAIN_DEAL)


# ---------------------------------------------------------------------- four pairs
FOUR_TWO_TWO = dict(
    hands=("1b 1r 1c1 1c2 2a 2r 3b 3r", "4a 5a 6a 7a 8b 9a 10a 11b"),
    field="4r 5r 6r 7r 8a 9r 10r 12b",
)
FOUR_PAIRS = dict(
    hands=("1b 1r 2a 2r 3b 3r 12c1 12c2", "4a 5a 6a 7a 8b 9a 10a 11b"),
    field="4r 5r 6r 7r 8a 9r 10r 12b",
)


def test_four_two_two_is_not_kuttsuki_under_nintendo_teshi_off() -> None:
    rules = get_preset("nintendo").apply_setting("teshi=0")
    assert not four_pairs(mask(FOUR_TWO_TWO["hands"][0]))
    assert hand_yaku(mask(FOUR_TWO_TWO["hands"][0]), rules) is None
    m = MatchState.position(rules, deal_rules=True, **FOUR_TWO_TWO)
    assert (m.results, m.phase, m.to_act) == ((), Phase.PLAY, 0)
    # two cards of four months is Kuttsuki, and the dealer wins at once
    m = MatchState.position(rules, deal_rules=True, **FOUR_PAIRS)
    r = m.results[0]
    assert (r.winner, r.reason, r.gained) == (0, "hand_yaku", (6, 0))


def test_four_two_two_is_no_redeal_under_toraco_without_four_of_month() -> None:
    rules = get_preset("toraco").apply_setting("redeal_hand_four_of_month=false")
    m = MatchState.position(rules, deal_rules=True, **FOUR_TWO_TWO)
    assert (m.attempt, m.phase, m.to_act) == (0, Phase.PLAY, 0)
    m = MatchState.position(rules, deal_rules=True, **FOUR_PAIRS)
    assert m.attempt == 1, "four pairs still redeal"


# ---------------------------------------------------------------------- docs/engine.md
def test_docs_replay_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The example of "Replaying a recorded match from its deals" runs and prints what it says."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "engine.md").read_text()
    section = text[text.index("## Replaying a recorded match from its deals") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/engine.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    promised = [
        line[2:].split("    ")[0] for line in code.group(1).splitlines() if line.startswith("# ")
    ]
    assert printed == promised == ["1 1 stop (0, 3) (27, 33)", "2 1 stop (0, 1) (26, 34)"]


# ---------------------------------------------------------------------- what the table shows
def test_table_shows_the_bonus_and_the_rules() -> None:
    from p2pkoikoi.transport.link.contract import Update
    from p2pkoikoi.ui import render as R
    from p2pkoikoi.ui.reference import rules_lines, yaku_lines
    from p2pkoikoi.ui.state import TableState

    def text(lines: list[R.StyleAndTextTuples]) -> str:
        return "\n".join("".join(f[1] for f in line) for line in lines)

    st = TableState(names=("You", "Computer"), rules=KKJ)
    m = MatchState.position(KKJ, **CALLS_POSITION)
    st.apply_update(Update("state", m.view(0), ()))
    for a in ("play 6c1", "koikoi", "play 1b", "play 7c1"):
        actor = m.to_act
        m, ev = act(m, a)
        st.apply_update(Update("state", m.view(0), ev, actor))
    assert m.phase is Phase.KOIKOI and m.calls == (1, 0)
    dialog = text(R.koikoi_lines(st))
    assert "Stop now: 5 points (4 +1)" in dialog
    assert "if you win later: +2 for your calls (now +1)" in dialog
    assert "capped" not in dialog
    m, ev = act(m, "stop")
    st.apply_update(Update("state", m.view(0), ev, 0))
    page = text(R.round_lines(st, st.summaries[0]))
    assert "your own koi-koi calls" in page and "+1" in page
    ref = "\n".join(t for _, t in yaku_lines(KKJ) + rules_lines(KKJ))
    assert "Hanami and Tsukimi are worth 3 once you have called koi-koi." in ref
    assert "Bonus: +1 for each of the winner's own calls up to 3; from 4 calls x(calls - 2)." in ref
    assert "the loser pays in full (a pool may go below 0)" in ref
