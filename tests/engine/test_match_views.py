"""Known answers for the state encoding, positions set up by hand, views and small queries.

The state encoding is rebuilt here field by field from protocol/deal.md ("State
hash"), independently of ``MatchState.encode_state``; the hex digests are the known
answers that encoding gives.
"""

from __future__ import annotations

import hashlib

import pytest

from p2pkoikoi.engine import (
    CARDS,
    Action,
    MatchState,
    Phase,
    RuleSet,
    derive_deck,
    determinize,
    get_preset,
    parse_cards,
)
from p2pkoikoi.engine.events import Drew, Played, RoundEnded, RoundStarted, Took
from p2pkoikoi.engine.yaku import YakuScore

ONLINE = get_preset("online")
NINTENDO = get_preset("nintendo")


def mask(codes: str) -> int:
    m = 0
    for c in parse_cards(codes.split()):
        m |= c.bit
    return m


def ids(codes: str) -> list[int]:
    return [c.id for c in parse_cards(codes.split())]


def spec_encoding(  # noqa: PLR0913 -- the spec's fields, one keyword each
    rules: RuleSet,
    *,
    round: int,
    attempt: int,
    dealer: int,
    phase: int,
    to_act: int,
    scores: tuple[int, int],
    hands: tuple[str, str],
    field: str,
    piles: tuple[str, str],
    calls: tuple[int, int],
    last: tuple[int, int],
    pending: int,
    winner: int,
    finished: int,
    stock: list[int],
) -> bytes:
    """protocol/deal.md, "State hash", one field at a time (all big-endian)."""

    def u(n: int, width: int) -> bytes:
        return n.to_bytes(width, "big")

    out = bytes.fromhex(rules.fingerprint())
    out += u(round, 2) + u(attempt, 2) + u(dealer, 1) + u(phase, 1) + u(to_act, 1)
    out += u(scores[0], 4) + u(scores[1], 4)
    for codes in (*hands, field, *piles):
        out += u(mask(codes), 8)
    out += u(calls[0], 1) + u(calls[1], 1) + u(last[0], 2) + u(last[1], 2)
    out += u(pending, 1) + u(winner, 1) + u(finished, 1)
    return out + u(len(stock), 1) + bytes(stock)


def spec_hash(encoding: bytes) -> str:
    return hashlib.sha256(b"p2pkoikoi/state/v1\x00" + encoding).hexdigest()


# Seat 0 holds Sankō (5; two of the Inoshikachō animals) and has called once; seat 1 holds Tsukimi and Akatan (10) and
# has called twice.
CALLED = dict(
    hands=("12c1 2c1 10c2", "9c1 4c1 4c2"),
    field="10a 11c",
    piles=("1b 3b 12b 6a 7a", "8b 9a 1r 2r 3r"),
    stock="5c1 6c1",
    dealer=1,
    to_act=0,
    calls=(1, 2),
    scores=(20, 30),
    round=3,
)


def rest_of_stock(named: str, *elsewhere: str) -> list[int]:
    """position(): the named stock cards, then every card not named anywhere, by id."""
    used = set(ids(named))
    for codes in elsewhere:
        used |= set(ids(codes))
    return ids(named) + [i for i in range(48) if i not in used]


def test_state_hash_known_answer_with_calls_and_last_totals() -> None:
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    stock = rest_of_stock("5c1 6c1", *CALLED["hands"], CALLED["field"], *CALLED["piles"])  # type: ignore[misc]
    enc = spec_encoding(
        ONLINE,
        round=3,
        attempt=0,
        dealer=1,
        phase=1,
        to_act=0,
        scores=(20, 30),
        hands=CALLED["hands"],  # type: ignore[arg-type]
        field="10a 11c",
        piles=CALLED["piles"],  # type: ignore[arg-type]
        calls=(1, 2),
        last=(5, 10),
        pending=255,
        winner=255,
        finished=0,
        stock=stock,
    )
    assert m.encode_state() == enc
    assert m.state_hash().hex() == spec_hash(enc)
    # The known answer covers the state after the rules fingerprint (the fingerprint has
    # its own vectors in protocol/vectors/rules.json and changes with every new setting).
    assert (
        hashlib.sha256(enc[32:]).hexdigest()
        == "5ae5010f7dd2c95f70a923d5f1819f0193dea95cdf8c07e7f536be838c290fd3"
    )
    assert enc[32 + 55 : 32 + 61].hex() == "01020005000a"  # calls 1, 2; last 5, 10


def test_state_hash_after_a_koikoi_call() -> None:
    # Seat 0 takes the Deer with 10c2: Inoshikachō beside Sankō raises 5 to 10; it
    # calls koi-koi again: calls (2, 2), last totals (10, 10).
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    m, _ = m.apply(Action.parse("play 10c2"))
    m, _ = m.apply(Action.parse("koikoi"))
    stock = rest_of_stock("5c1 6c1", *CALLED["hands"], CALLED["field"], *CALLED["piles"])  # type: ignore[misc]
    enc = spec_encoding(
        ONLINE,
        round=3,
        attempt=0,
        dealer=1,
        phase=1,
        to_act=1,
        scores=(20, 30),
        hands=("12c1 2c1", "9c1 4c1 4c2"),
        field="11c 5c1",
        piles=("1b 3b 12b 6a 7a 10a 10c2", "8b 9a 1r 2r 3r"),
        calls=(2, 2),
        last=(10, 10),
        pending=255,
        winner=255,
        finished=0,
        stock=stock[1:],
    )
    assert m.encode_state() == enc
    assert m.state_hash().hex() == spec_hash(enc)


# ---------------------------------------------------------------------- position()
def test_position_fills_the_stock_and_defaults() -> None:
    m = MatchState.position(ONLINE, hands=("1b", "2a"), field="3b", stock="12c3 5a")
    assert [c.id for c in m.stock] == rest_of_stock("12c3 5a", "1b", "2a", "3b")
    assert len(m.stock) == 48 - 3
    assert m.calls == (0, 0) and (m.last_total(0), m.last_total(1)) == (0, 0)
    assert m.round == 1 and m.dealer == 0 and m.to_act == 0 and m.scores == (25, 25)
    assert m.phase is Phase.PLAY and m.attempt == 0 and m.results == ()


def test_position_round_argument_and_the_next_deal_from_the_seed() -> None:
    seed = bytes(range(32))
    m = MatchState.position(
        ONLINE.with_settings(rounds=6),
        hands=("4c1", "6c1"),
        field="11c 12c3",
        piles=("1c1 2c1 3c1", "5c1 7c1"),
        stock="10c1 10c2",
        round=4,
        seed=seed,
    )
    assert m.round == 4
    m, _ = m.apply(Action.parse("play 4c1"))
    m, ev = m.apply(Action.parse("play 6c1"))  # a drawn round: round 5 is dealt
    (end,) = [e for e in ev if isinstance(e, RoundEnded)]
    assert end.round == 4
    start = [e for e in ev if isinstance(e, RoundStarted)][0]
    deck = derive_deck(seed, 5, 0)
    field = sorted(deck[r + k] for r in range(0, 24, 6) for k in (2, 3))
    assert (start.round, start.attempt) == (5, 0)
    assert [c.id for c in start.field] == field
    assert m.round == 5 and m.results[0].round == 4


def test_position_last_total_of_a_caller_is_their_current_total() -> None:
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    assert (m.last_total(0), m.last_total(1)) == (5, 10)
    only1 = MatchState.position(ONLINE, **{**CALLED, "calls": (0, 1)})  # type: ignore[arg-type]
    assert (only1.last_total(0), only1.last_total(1)) == (0, 10)
    # With rain-out on the field, 11c on the field spoils Hanami: the total is 0.
    rain = ONLINE.with_settings(rain_out="field")
    held = dict(hands=("2c1", "4c1"), piles=("3b 9a", ""), calls=(1, 0))
    assert MatchState.position(rain, field="11c", **held).last_total(0) == 0  # type: ignore[arg-type]
    assert MatchState.position(rain, field="10c1", **held).last_total(0) == 5  # type: ignore[arg-type]


# ---------------------------------------------------------------------- small queries
def test_potential_score_for_each_seat_under_opponent_double() -> None:
    m = MatchState.position(NINTENDO, **{**CALLED, "calls": (0, 1)})  # type: ignore[arg-type]
    # Seat 1 called: its own call does not double (10 >= 7 doubles: 20); seat 0's
    # Sankō 5 is doubled for the opponent's call: 10.
    assert m.potential_score(1).score == 20
    assert m.potential_score(0).score == 10
    assert m.yaku_total(0) == 5 and m.yaku_total(1) == 10


def test_is_legal() -> None:
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    assert m.is_legal(Action.parse("play 2c1"))
    assert not m.is_legal(Action.parse("play 9c1"))  # seat 1's card
    assert not m.is_legal(Action.parse("koikoi"))
    assert m.is_legal(Action.parse("play 12c1"))
    assert not m.is_legal(Action.parse("play 12c1 12b"))


def test_view_opponent_and_piles() -> None:
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    for seat in (0, 1):
        v = m.view(seat)
        assert v.seat == seat and v.opponent == 1 - seat
        assert v.my_pile == m.pile(seat) and v.opponent_pile == m.pile(1 - seat)
        assert v.calls == (1, 2) and v.last_totals == (5, 10)
        assert v.hand_size == len(m.hand(seat)) and v.opponent_hand_size == len(m.hand(1 - seat))
    assert m.view(0).legal_actions == m.legal_actions() and m.view(1).legal_actions == ()


def test_a_pending_drawn_card_with_id_0() -> None:
    # The drawn card is the Crane (1b, id 0) and two January cards lie on the field.
    m = MatchState.position(ONLINE, hands=("5c1 5c2", "6c1 6c2"), field="1r 1c1 10c1", stock="1b")
    m, ev = m.apply(Action.parse("play 5c1"))
    assert m.phase is Phase.DRAW_CHOICE and m.to_act == 0
    assert m.drawn_card is CARDS[0]
    v = m.view(0)
    assert v.drawn is CARDS[0] and CARDS[0] not in v.unseen
    assert [str(a) for a in m.legal_actions()] == ["take 1r", "take 1c1"]
    # the encoding names the pending card 0, not "none" (255)
    enc = m.encode_state()
    assert enc[32 + 2 + 2 + 1 + 1 + 1 + 4 + 4 + 40 + 1 + 1 + 2 + 2] == 0
    opp = m.hand(1).mask
    d = determinize(v, opp, tuple(c.id for c in m.stock))
    assert d.view(0) == v and d.drawn_card is CARDS[0]
    m2, _ = m.apply(Action.parse("take 1c1"))
    assert {"1b", "1c1"} <= set(m2.pile(0).codes()) and "1r" in m2.field.codes()
    assert m2.drawn_card is None and m2.to_act == 1


def test_legal_actions_in_id_order_around_a_choice() -> None:
    # 1b (id 0) sorts before 5a's two choices, 6c1 after them.
    m = MatchState.position(ONLINE, hands=("1b 5a 6c1", "2a"), field="5r 5c1 7a")
    assert [str(a) for a in m.legal_actions()] == [
        "play 1b",
        "play 5a 5r",
        "play 5a 5c1",
        "play 6c1",
    ]


def test_start_checks_its_arguments_and_keeps_the_seed() -> None:
    import pytest

    from p2pkoikoi.engine import InputError

    seed = bytes(range(32))
    m, _ = MatchState.start(ONLINE, seed)
    assert m.match_seed == seed and m.round == 1
    for bad in (bytes(31), bytes(33), "x" * 32):
        with pytest.raises(InputError, match="exactly 32 bytes"):
            MatchState.start(ONLINE, bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="RuleSet"):
        MatchState.start("online", seed)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="appears twice"):
        MatchState.position(ONLINE, hands=("1b", "2a"), field="1b")
    with pytest.raises(InputError, match="appears twice"):
        MatchState.position(ONLINE, hands=("1b", "2a"), field="3b", stock="2a")


def test_resign_guards_and_the_over_state_encoding() -> None:
    import pytest

    from p2pkoikoi.engine import IllegalActionError, InputError

    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="seat must be 0 or 1"):
        m.resign(2)
    over, _ = m.resign(1)
    assert over.is_over and over.winner == 0 and over.end_reason == "resign"
    with pytest.raises(IllegalActionError, match="already over"):
        over.resign(0)
    stock = rest_of_stock("5c1 6c1", *CALLED["hands"], CALLED["field"], *CALLED["piles"])  # type: ignore[misc]
    enc = spec_encoding(
        ONLINE,
        round=3,
        attempt=0,
        dealer=1,
        phase=4,
        to_act=255,
        scores=(20, 30),
        hands=CALLED["hands"],  # type: ignore[arg-type]
        field="10a 11c",
        piles=CALLED["piles"],  # type: ignore[arg-type]
        calls=(1, 2),
        last=(5, 10),
        pending=255,
        winner=0,
        finished=0,
        stock=stock,
    )
    assert over.encode_state() == enc


def test_repr_names_round_phase_scores_and_hash() -> None:
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    h = m.state_hash().hex()
    assert repr(m) == f"<MatchState round 3/6 play to_act=0 scores=(20, 30) hash={h[:12]}>"


def test_determinize_keeps_the_results_and_refuses_before_looking() -> None:
    import pytest

    from p2pkoikoi.engine import InputError, new_match

    m = MatchState.position(
        ONLINE,
        hands=("4c1 5c1", "6c1 5c2"),
        field="11c 12c3",
        piles=("1c1 2c1 3c1", "7c1"),
        stock="10c1 10c2",
    )
    for t in ("play 4c1", "play 6c1", "play 5c1", "play 5c2"):  # a drawn round: round 2
        m, _ = m.apply(Action.parse(t))
    assert len(m.results) == 1 and m.round == 2
    seat = m.to_act
    assert seat is not None
    v = m.view(seat)
    d = determinize(v, m.hand(1 - seat).mask, tuple(c.id for c in m.stock))
    assert d.results == m.results and d.view(seat) == v
    swap = new_match(get_preset("rulebook"), bytes(range(32)))
    assert swap.phase is Phase.HAND_SWAP
    sv = swap.view(swap.to_act)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="before the hands are looked at"):
        determinize(sv, 0, ())


def _table(m: MatchState) -> tuple[object, ...]:
    return (
        m.field,
        m.hand(0),
        m.hand(1),
        m.pile(0),
        m.pile(1),
        m.stock,
        m.calls,
        (m.last_total(0), m.last_total(1)),
        m.scores,
        m.round,
        m.dealer,
        m.phase,
        m.to_act,
        m.drawn_card,
        m.winner,
    )


def test_determinize_with_the_true_hidden_cards_rebuilds_the_table() -> None:
    # The Crane (1b, id 0) is in seat 1's hidden hand: it must not show up anywhere else.
    m = MatchState.position(
        ONLINE,
        hands=("5c1 5c2 4c1", "1b 6c1 4c2"),
        field="10c1 11c",
        piles=("3b 8b 12b", "9a 2r"),
        calls=(1, 1),
        scores=(21, 29),
        dealer=1,
        to_act=0,
        round=2,
    )
    over, _ = m.resign(1)
    for state in (m, over):
        for seat in (0, 1):
            hidden = state.hand(1 - seat).mask
            d = determinize(state.view(seat), hidden, tuple(c.id for c in state.stock))
            assert _table(d) == _table(state)


def test_states_are_made_only_by_the_constructors_and_keep_their_end_reason() -> None:
    import pytest

    with pytest.raises(TypeError, match="use new_match"):
        MatchState()
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    after, _ = m.apply(Action.parse("play 2c1"))
    assert after.end_reason == "" and not after.is_over
    over, _ = after.resign(0)
    assert over.end_reason == "resign"


def test_each_phase_names_the_action_it_expects() -> None:
    import pytest

    from p2pkoikoi.engine import IllegalActionError, new_match

    def refused(m: MatchState, text: str, expected: str) -> None:
        with pytest.raises(IllegalActionError, match=f"illegal action {text}: expected {expected}"):
            m.apply(Action.parse(text))
        with pytest.raises(IllegalActionError, match=f"illegal action {text}: expected {expected}"):
            m.after(Action.parse(text))  # the same check without events

    m = MatchState.position(ONLINE, hands=("5c1 5c2", "6c1 6c2"), field="1r 1c1 10c1", stock="1b")
    refused(m, "take 1r", r"a card to play \(play CARD\)")
    refused(m, "koikoi", r"a card to play \(play CARD\)")
    choice, _ = m.apply(Action.parse("play 5c1"))
    assert choice.phase is Phase.DRAW_CHOICE
    expected = r"the field card to take with the drawn card \(take CARD\)"
    refused(choice, "play 5c2", expected)
    refused(choice, "stop", expected)
    koi, _ = MatchState.position(
        ONLINE, hands=("12c1 2c1", "4c1 4c2"), field="12b", piles=("1b 3b", "")
    ).apply(Action.parse("play 12c1"))
    assert koi.phase is Phase.KOIKOI
    refused(koi, "play 2c1", "koikoi or stop")
    refused(koi, "take 12b", "koikoi or stop")
    swap = new_match(get_preset("rulebook"), bytes(range(32)))
    assert swap.phase is Phase.HAND_SWAP
    refused(swap, "stop", "swap or keep")
    refused(swap, "koikoi", "swap or keep")


def test_view_of_a_seat_that_does_not_exist() -> None:
    import pytest

    from p2pkoikoi.engine import InputError

    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    for seat in (-1, 2):
        with pytest.raises(InputError, match="seat must be 0 or 1"):
            m.view(seat)


def test_forced_capture_offers_only_hand_cards() -> None:
    rules = ONLINE.with_settings(forced_capture=True)
    # nothing matches: every hand card may be played (and only hand cards)
    m = MatchState.position(rules, hands=("2a 3b", "4a"), field="5c1 6c1")
    assert [str(a) for a in m.legal_actions()] == ["play 2a", "play 3b"]
    # 2a matches 2r: it must be played; 1b matches nothing
    m = MatchState.position(rules, hands=("1b 2a", "4a"), field="2r 5c1")
    assert [str(a) for a in m.legal_actions()] == ["play 2a"]


def test_deal_rules_check_each_part_of_a_fresh_deal() -> None:
    import pytest

    from p2pkoikoi.engine import InputError

    fresh = dict(
        hands=("1b 1r 2a 2r 3b 3r 4a 4r", "5a 5r 6a 6r 7a 7r 8b 8a"),
        field="9a 9r 10a 10r 11b 11a 12b 12c1",
    )
    m = MatchState.position(ONLINE, deal_rules=True, **fresh)  # type: ignore[arg-type]
    assert m.phase is Phase.PLAY or m.round == 2  # a legal fresh deal is accepted
    seven = dict(fresh, field="9a 9r 10a 10r 11b 11a 12b")
    short_hand = dict(fresh, hands=("1b 1r 2a 2r 3b 3r 4a", fresh["hands"][1]))
    for bad in (
        dict(seven),
        dict(short_hand),
        dict(fresh, piles=("12c2", "")),
        dict(fresh, piles=("", "12c2")),
        dict(fresh, calls=(0, 1)),
        dict(fresh, to_act=1),
    ):
        with pytest.raises(InputError, match="deal_rules needs a fresh deal"):
            MatchState.position(ONLINE, deal_rules=True, **bad)  # type: ignore[arg-type]


def test_view_to_dict_names_each_seat() -> None:
    m = MatchState.position(ONLINE, **CALLED)  # type: ignore[arg-type]
    d = m.view(0).to_dict()
    assert d["piles"] == [m.pile(0).codes(), m.pile(1).codes()]
    assert d["piles"][0] != d["piles"][1]
    assert (d["seat"], d["round"], d["dealer"], d["to_act"], d["calls"]) == (0, 3, 1, 0, [1, 2])
    assert d["scores"] == [20, 30] and d["hand"] == m.hand(0).codes()
    assert d["yaku"][0] == [{"id": "sanko", "points": 5}]
    assert sorted(y["id"] for y in d["yaku"][1]) == ["akatan", "tsukimi"]


def test_a_round_after_a_redeal_starts_at_attempt_0() -> None:
    import random

    from p2pkoikoi.engine.events import Redealt

    m, ev = MatchState.start(ONLINE, hashlib.sha256(b"tests15/25").digest())
    assert any(isinstance(e, Redealt) for e in ev) and m.attempt == 1
    rng = random.Random(1)
    while m.round == 1 and not m.is_over:
        m, ev = m.apply(rng.choice(m.legal_actions()))
    starts = [e for e in ev if isinstance(e, RoundStarted) and e.round == 2]
    assert starts and starts[0].attempt == 0


def test_a_view_scores_viewing_yaku_by_its_own_seats_calls() -> None:
    # koikoijapan: Hanami is 1, and 3 in the pile of a player who has called koi-koi
    # ("the opponent's calls do not count", docs/rules.md).
    kkj = get_preset("koikoijapan")
    hanami = mask("3b 9a")
    for calls, pts in (((0, 0), 1), ((0, 1), 1), ((1, 0), 3)):
        m = MatchState.position(
            kkj, hands=("1c1", "2c1"), field="4c1", piles=("3b 9a", ""), calls=calls
        )
        for seat in (0, 1):
            assert m.view(seat).yaku(0) == m.yaku(0) == (YakuScore("hanami", pts, hanami),)
            assert m.view(seat).yaku(1) == m.yaku(1) == ()


def test_equality_needs_the_same_seed_results_and_table() -> None:
    def at(seed: bytes) -> MatchState:
        return MatchState.position(ONLINE, hands=("1c1", "2c1"), field="4c1", seed=seed)

    a, b, other_seed = at(bytes(32)), at(bytes(32)), at(bytes(31) + b"\x01")
    assert a == b and hash(a) == hash(b)
    assert a.encode_state() == other_seed.encode_state() and a != other_seed
    assert a != at(bytes(32)).after(Action.parse("play 1c1"))
    assert a != "a state" and a != None  # noqa: E711 - __eq__ against a non-state


# ---------------------------------------------------------------------- the hidden deal
HIDDEN = ONLINE.with_settings(deal="hidden")
SEED = bytes(range(32))


def test_the_hidden_deal_waits_for_its_deck_and_checks_it() -> None:
    import pytest

    from p2pkoikoi.engine import IllegalActionError, InputError, new_match

    m, _ = MatchState.start(HIDDEN, SEED)
    assert (m.phase, m.to_act, m.legal_actions(), m.stock) == (Phase.DEAL, None, (), ())
    assert not m.hand(0) and not m.hand(1) and not m.field
    deck = tuple(derive_deck(SEED, 1, 0))
    for bad in (deck[:47], deck[:47] + deck[:1], (*deck, 48)):
        with pytest.raises(InputError, match="a deck lists each of the 48 cards once"):
            m.deal(bad)
    # protocol/deal.md: the deck is laid out as from the seed, so the audited deck of
    # the seed deals the open deal's table
    dealt, ev = m.deal(deck)
    seen = new_match(ONLINE, SEED)
    assert ev == (RoundStarted(1, seen.dealer, 0, tuple(seen.field)),)
    for seat in (0, 1):
        assert dealt.hand(seat) == seen.hand(seat) and dealt.pile(seat) == seen.pile(seat)
    assert (dealt.field, dealt.stock, dealt.phase, dealt.to_act) == (
        seen.field,
        seen.stock,
        Phase.PLAY,
        seen.dealer,
    )
    assert m.phase is Phase.DEAL  # deal() leaves the state it was given alone
    with pytest.raises(IllegalActionError, match="no deal is due"):
        dealt.deal(deck)


def test_rehand_places_the_unseen_cards_anew_but_only_the_same_cards() -> None:
    import pytest

    from p2pkoikoi.engine import InputError

    m = MatchState.position(HIDDEN, hands=("1c1 2c1", "3c1 4c1"), field="5c1", stock="6c1 7c1 8c1")
    m = m.after(Action.parse("play 1c1"))  # 6c1 is drawn: the stock starts at 7c1
    h0, h1, rest = mask("2c1"), mask("3c1 4c1"), tuple(c.id for c in m.stock)
    assert rest[:2] == tuple(ids("7c1 8c1"))

    def refused(hands: tuple[int, int], stock: tuple[int, ...]) -> None:
        with pytest.raises(InputError, match="must hold the same cards as the old"):
            m.rehand(hands, stock)

    refused((h0, mask("3c1 5c1")), rest)  # a field card for a hand card
    refused((h0 | mask("3c1"), mask("3c1 4c1")), rest)  # one card in both hands
    refused((h0, h1), rest[:-1])  # a card fewer in the stock
    refused((h0, h1), (rest[0], *rest[:-1]))  # a card twice, one lost
    refused((mask("2c1 3c1"), mask("4c1")), rest)  # same cards, other hand sizes
    # a hand card and the next card to draw change places; nothing else changes
    swapped = m.rehand((h0, mask("3c1 7c1")), (ids("4c1")[0], *rest[1:]))
    assert swapped.hand(1).codes() == ["3c1", "7c1"] and swapped.hand(0) == m.hand(0)
    assert [c.code for c in swapped.stock[:2]] == ["4c1", "8c1"]
    assert len(swapped.stock) == len(m.stock) and swapped.field == m.field
    assert swapped.pile(0) == m.pile(0) and swapped.phase is m.phase
    assert swapped.to_act == m.to_act == 1
    # the drawn card stays drawn: the next draw is the new top card
    after = swapped.after(Action.parse("play 3c1"))
    assert "4c1" in after.field.codes() and [c.code for c in after.stock[:1]] == ["8c1"]


# ---------------------------------------------------------------------- a turn's events
def _turn(seat: int, mine: str, field: str, stock: str, pile: str = "") -> MatchState:
    hands = (mine, "9c1 9c2") if seat == 0 else ("9c1 9c2", mine)
    piles = (pile, "") if seat == 0 else ("", pile)
    return MatchState.position(
        ONLINE, hands=hands, field=field, stock=stock, piles=piles, to_act=seat
    )


@pytest.mark.parametrize("seat", [0, 1])
def test_a_turns_events_name_the_seat_the_cards_and_each_capture(seat: int) -> None:
    c = {card.code: card for card in CARDS}
    # a plain turn: 2a takes 2c1 (February: a month whose cards' ids have bit 2 set),
    # the drawn 5r (an odd id) takes 5c1
    m, ev = _turn(seat, "2a 4c1", "2c1 5c1 10c1", "5r").apply(Action.parse("play 2a"))
    assert ev == (Played(seat, c["2a"], (c["2c1"],)), Drew(seat, c["5r"], (c["5c1"],), False))
    assert m.to_act == 1 - seat and m.pile(seat).codes() == ["2a", "2c1", "5r", "5c1"]
    # a turn that makes Sankō: the same two events, then the yaku
    m, ev = _turn(seat, "12c1 4c1", "12b 5c1 10c1", "5r", "1b 3b").apply(Action.parse("play 12c1"))
    assert ev[:2] == (
        Played(seat, c["12c1"], (c["12b"],)),
        Drew(seat, c["5r"], (c["5c1"],), False),
    )
    assert [type(e).__name__ for e in ev[2:]] == ["YakuMade"] and m.to_act == seat
    # a drawn card that matches two field cards waits for the choice
    m, ev = _turn(seat, "2a 4c1", "2c1 1r 1c1 10c1", "1b").apply(Action.parse("play 2a"))
    assert ev == (Played(seat, c["2a"], (c["2c1"],)), Drew(seat, c["1b"], (), True))
    assert m.phase is Phase.DRAW_CHOICE and m.to_act == seat
    m, ev = m.apply(Action.parse("take 1c1"))
    assert ev[0] == Took(seat, c["1b"], (c["1c1"],))
    assert m.to_act == 1 - seat and "1r" in m.field.codes()


@pytest.mark.parametrize("seat", [0, 1])
def test_a_resignation_tells_who_gave_up_and_who_won(seat: int) -> None:
    from p2pkoikoi.engine.events import MatchEnded, Resigned

    m = MatchState.position(ONLINE, hands=("1c1", "2c1"), field="4c1", scores=(30, 20))
    over, ev = m.resign(seat)
    # the scores stand as they are: a resignation settles no round
    assert ev == (Resigned(seat), MatchEnded((30, 20), 1 - seat, "resign"))
    assert (over.phase, over.to_act, over.scores) == (Phase.OVER, None, (30, 20))
