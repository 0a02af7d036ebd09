"""Whole hidden-deal matches between two in-memory sides, under every preset."""

from __future__ import annotations

import random

import pytest
from hidden_helpers import seed

from p2pkoikoi.engine import MatchState
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch


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
    """The modified client at match level: each side keeps everything it holds (its own
    deal secrets, every deck and key it received this deal) and, at every step, looks for
    the other's key to a position still hidden from it; at every fifth step it also tries
    to open three such positions with every 32-byte piece it holds."""
    from hidden_helpers import Snoop

    from p2pkoikoi.session.mental.deck import encode_deck

    received: list[list[bytes]] = [[], []]
    steps = [0]
    tries = [0]

    def watch(sides: tuple[HiddenMatch, HiddenMatch]) -> None:
        steps[0] += 1
        for me in sides:
            peer = sides[1 - me.seat]
            if not me.table.dealt or me.table.audited is not None:
                continue
            got = b"".join(received[me.seat])
            for pos in me.table.hidden_from_me():
                assert peer.table.secrets.keys[pos] not in got
            if steps[0] % 5 == 0:
                spy = Snoop(me.table)
                spy.held.extend(received[me.seat])
                spy.held.extend(encode_deck(d) for d in me.table.decks)
                spy.try_to_read(peer.table.secrets)
                tries[0] += spy.attempts

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
                if mv.kind == "audit":
                    received[other.seat].clear()  # the deal is over: its keys are public
                elif mv.kind == "deck1":
                    received[other.seat].clear()
                    received[other.seat].append(mv.deck)
                else:
                    received[other.seat].append(mv.keys + mv.deck)
                other.receive(mv)
                watch(sides)
        for me in sides:
            if me.my_turn():
                me.act(rng.choice(me.legal_actions()))
    assert tries[0] > 1000


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


def crafted(seat: int, deck: list[int]):  # type: ignore[no-untyped-def]
    """A secret source whose first deal deals ``deck`` (host permutation = the deck,
    joiner permutation = identity); later deals are random."""
    from p2pkoikoi.session.mental.deck import DeckSecrets
    from p2pkoikoi.session.mental.play import deal_secrets

    calls = [0]

    def source(round_no: int, attempt: int) -> DeckSecrets:
        calls[0] += 1
        base = deal_secrets(seat, seed(f"crafted{seat}"), round_no, attempt)
        if calls[0] > 1:
            return base
        perm = tuple(deck) if seat == 0 else tuple(range(48))
        return DeckSecrets(seat, base.scalar, perm, base.keys)

    return source


def both_teshi_deck(dealer: int) -> list[int]:
    """Non-dealer: all of January plus four singles; dealer: all of February plus four."""
    from p2pkoikoi.engine.cards import CARDS

    nd = [0, 1, 2, 3, 8, 12, 16, 20]  # 1b 1r 1c1 1c2 3b 4a 5a 6a
    dl = [4, 5, 6, 7, 24, 28, 32, 36]  # 2a 2r 2c1 2c2 7a 8b 9a 10a
    field = [9, 13, 17, 21, 25, 29, 33, 37]  # one of each of eight months
    rest = [c for c in range(48) if c not in nd + dl + field]
    deck: list[int] = []
    for r in range(4):
        deck += nd[2 * r : 2 * r + 2] + field[2 * r : 2 * r + 2] + dl[2 * r : 2 * r + 2]
    assert len({CARDS[c].month for c in field}) == 8
    return deck + rest


@pytest.mark.parametrize("mode", ["dealer_first", "both_score", "draw", "redeal"])
def test_both_players_dealt_a_hand_yaku_declare_and_the_rules_decide(mode: str) -> None:
    from p2pkoikoi.engine.deal import coin

    rules = hidden("online", rounds=1).with_settings(both_hand_yaku=mode, first_dealer="coin")
    match_seed = seed("both-teshi")
    dealer = coin(match_seed, 0)
    deck = both_teshi_deck(dealer)
    sides = (
        HiddenMatch(rules, match_seed, 0, crafted(0, deck)),
        HiddenMatch(rules, match_seed, 1, crafted(1, deck)),
    )
    rng = random.Random(1)
    while not (sides[0].is_over and sides[1].is_over):
        for me in sides:
            while me.outbox:
                sides[1 - me.seat].receive(me.outbox.pop(0)[0])
        for me in sides:
            if me.my_turn():
                me.act(rng.choice(me.legal_actions()))
    first = sides[0].state.results[0]
    if mode == "dealer_first":
        assert first.reason == "hand_yaku" and first.winner == dealer
    elif mode in ("both_score", "draw"):
        assert first.reason == "both_hand_yaku"
    else:  # a redeal: the round was dealt again and played out
        assert sides[0].audits >= 2 and first.reason != "hand_yaku"
    assert sides[0].state.scores == sides[1].state.scores


@pytest.mark.parametrize("decision", ["swap", "keep"])
def test_the_hand_swap_is_decided_before_looking_and_the_swapped_hand_declares(
    decision: str,
) -> None:
    from p2pkoikoi.engine import Action
    from p2pkoikoi.engine.deal import coin

    rules = hidden("online", rounds=1).with_settings(hand_swap=True, first_dealer="coin")
    match_seed = seed("swap-teshi")
    dealer = coin(match_seed, 0)
    deck = both_teshi_deck(dealer)
    # only the non-dealer's hand holds a hand yaku: February goes to four singles
    singles = [c for c in deck[24:] if c % 4 == 3][:4]
    for i, c in enumerate([4, 5, 6, 7]):
        a, b = deck.index(c), deck.index(singles[i])
        deck[a], deck[b] = deck[b], deck[a]
    sides = (
        HiddenMatch(rules, match_seed, 0, crafted(0, deck)),
        HiddenMatch(rules, match_seed, 1, crafted(1, deck)),
    )
    while not (sides[0].is_over and sides[1].is_over):
        for me in sides:
            while me.outbox:
                sides[1 - me.seat].receive(me.outbox.pop(0)[0])
        for me in sides:
            if me.my_turn():
                legal = me.legal_actions()
                want = Action.parse(decision)
                me.act(want if want in legal else legal[0])
    first = sides[0].state.results[0]
    holder = dealer if decision == "swap" else 1 - dealer
    assert first.reason == "hand_yaku" and first.winner == holder, first


def test_the_joiner_answers_d1_before_checking_its_proof_and_opens_nothing_unchecked() -> None:
    """A live joiner (``check_later``) queues its masking step before it checks the proof
    of the host's D1, so that its check runs while the host checks ours; the proof is
    still checked before anything else of the deal: a forged D1 (the sum attack on
    step 1) is refused by :meth:`HiddenMatch.settle`, or at the latest when the next move
    comes in, naming the host, and no key of the deal has gone out.  On the old code
    the joiner checked on receipt and had no ``check_later``."""
    from hidden_helpers import forged_step

    from p2pkoikoi.session.mental.errors import BadProofError

    rules = hidden("online")
    for settle_first in (True, False):
        host = HiddenMatch(rules, seed("m"), 0, seed("a"))
        joiner = HiddenMatch(rules, seed("m"), 1, seed("b"), check_later=True)
        ((deck1, _),) = host.outbox
        forged = forged_step(1, host.table.secrets, (), host.table.context, {0: [1, 2]})
        joiner.receive(CardMove("deck1", 0, deck=forged))
        assert joiner.unsettled and [m.kind for m, _ in joiner.outbox] == ["deck2"]
        assert not joiner.table.sent  # no key of the deal went out
        with pytest.raises(BadProofError, match="the host's shuffle proof") as caught:
            if settle_first:
                joiner.settle()
            else:  # the next move in settles first, whatever it is
                joiner.receive(CardMove("deck3", 0, deck=b""))
        assert caught.value.seat == 0
        with pytest.raises(BadProofError):
            joiner.table.keys_for([0])  # nothing opens while the proof is unchecked
    # honest steps: the match plays on, settled on the way
    h, j = (
        HiddenMatch(rules, seed("m"), 0, seed("a")),
        HiddenMatch(rules, seed("m"), 1, seed("b"), check_later=True),
    )
    ((deck1, _),) = h.outbox
    j.receive(deck1)
    assert j.unsettled
    j.settle()
    assert not j.unsettled


def _to_first_audit(cheater: int) -> tuple[HiddenMatch, HiddenMatch, CardMove]:
    """Two live sides played to the first deal's end; the cheater's audit, held back."""
    rules = hidden("online", rounds=3)
    sides = (
        HiddenMatch(rules, seed("m"), 0, seed("a"), check_later=True),
        HiddenMatch(rules, seed("m"), 1, seed("b"), check_later=True),
    )
    rng = random.Random(3)
    for _ in range(5_000):
        for me in sides:
            other = sides[1 - me.seat]
            me.settle()  # as the session does once our move has gone out
            while me.outbox:
                mv = me.outbox.pop(0)[0]
                if mv.kind == "audit" and mv.seat == cheater:
                    return sides[0], sides[1], mv
                other.receive(mv)
            if me.my_turn():
                me.act(rng.choice(me.legal_actions()))
    raise AssertionError("the first deal did not end")  # pragma: no cover


@pytest.mark.parametrize("cheater", [0, 1])
def test_a_live_side_answers_an_audit_before_checking_it_and_still_names_the_forger(
    cheater: int,
) -> None:
    """A live side takes the peer's audit of a finished deal, sends its next move (the
    joiner its own audit, the host the next deal's first step) and checks the audit
    after (``settle``), while the other side works.  A forged audit is still refused
    before anything of the next deal opens, naming the forger, with the finished
    deal's secrets as the evidence (``deal_id``, ``deal_table``); and the host makes
    the next deal's first step while it waits for the joiner's audit."""
    from p2pkoikoi.session.mental.errors import BrokenAuditError

    host, joiner, audit = _to_first_audit(cheater)
    honest = (host, joiner)[1 - cheater]
    finished = honest.table
    assert honest.deal_id == (1, 0)
    d = bytearray(audit.deck)
    d[32 + 48 + 2 * 32] ^= 1  # the key for position 2, a field card opened in the round
    honest.receive(CardMove("audit", cheater, deck=bytes(d)))
    sent = [m.kind for m, _ in honest.outbox]
    assert sent == (["deck1"] if cheater == 1 else ["audit"])  # answered, not yet checked
    assert honest.unsettled and honest.deal_id == (1, 0) and honest.deal_table is finished
    assert honest.table is not finished and not honest.table.sent  # no key of round 2
    with pytest.raises(BrokenAuditError) as caught:
        honest.settle()
    assert caught.value.seat == cheater
    with pytest.raises(BrokenAuditError):  # a failed check stays failed
        honest.receive(CardMove("deck2" if cheater == 1 else "deck1", cheater, deck=b""))
    assert honest.deal_id == (1, 0)


def test_an_honest_audit_checked_later_plays_the_same_match() -> None:
    """The live sides' order of work changes no byte: a match between two live sides
    gives the moves and hashes of two sides that check everything on receipt."""
    rules = hidden("online", rounds=3)

    def moves(later: bool) -> list[tuple[CardMove, bytes]]:
        sides = (
            HiddenMatch(rules, seed("m"), 0, seed("a"), check_later=later),
            HiddenMatch(rules, seed("m"), 1, seed("b"), check_later=later),
        )
        rng, log = random.Random(5), []
        while not (sides[0].is_over and sides[1].is_over):
            for me in sides:
                other = sides[1 - me.seat]
                me.settle()
                while me.outbox:
                    mv, before = me.outbox.pop(0)
                    log.append((mv, before))
                    other.receive(mv)
                if me.my_turn():
                    me.act(rng.choice(me.legal_actions()))
        return log

    later, now = moves(True), moves(False)
    assert later == now and sum(m.kind == "audit" for m, _ in later) >= 6
