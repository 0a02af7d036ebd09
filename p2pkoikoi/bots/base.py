"""The bot interface and the three cheap bots: random, easy and medium.

A bot is handed a :class:`PlayerView` -- what its seat may see, with the legal
actions -- and answers an :class:`Action`.  It never receives a
:class:`MatchState`, so it cannot look at the opponent's hand or the stock:
fairness is a property of the interface, not of each bot's good manners.
Each bot owns a ``random.Random(seed)`` made at construction, so a match
between bots replays exactly from the seeds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from p2pkoikoi.bots.heuristics import (
    Tables,
    best_of_two,
    exposure,
    position_value,
    potential,
    tables_for,
)
from p2pkoikoi.bots.playouts import playout_sums
from p2pkoikoi.engine import Action, Phase, PlayerView
from p2pkoikoi.engine import actions as A
from p2pkoikoi.engine.cards import SAME_MONTH, iter_mask
from p2pkoikoi.engine.rules import Scoring
from p2pkoikoi.engine.yaku import score, total


@runtime_checkable
class Bot(Protocol):
    """Anything that picks an action from a view; ``name`` is shown to people."""

    name: str

    def choose(self, view: PlayerView) -> Action: ...


def _check(view: PlayerView) -> tuple[Action, ...]:
    acts = view.legal_actions
    if not acts:
        raise ValueError("the bot was asked to act on a view with no legal actions")
    return acts


class RandomBot:
    """Uniformly random legal actions: the floor every other level must beat."""

    #: decides in microseconds: a network player calls it inline rather than in a
    #: worker thread (a thread hop per move costs more than the decision)
    instant = True

    def __init__(self, seed: int) -> None:
        self.name = "random"
        self.rng = random.Random(seed)

    def choose(self, view: PlayerView) -> Action:
        acts = _check(view)
        return acts[self.rng.randrange(len(acts))]


def capture_value(tab: Tables, action: Action, field: int) -> float:
    """What a play takes right now, by static card value; a discard costs its card."""
    card = action.card
    assert card is not None
    c = card.id
    taken = action.target.bit if action.target is not None else field & SAME_MONTH[c]
    if not taken:
        return -0.5 * tab.static[c]
    return tab.static[c] + sum(tab.static[i] for i in iter_mask(taken))


class EasyBot:
    """Greedy: takes the most valuable capture on the table now, stops at its first yaku."""

    instant = True  #: see RandomBot.instant

    def __init__(self, seed: int) -> None:
        self.name = "easy"
        self.rng = random.Random(seed)

    def choose(self, view: PlayerView) -> Action:
        acts = _check(view)
        if view.phase is Phase.KOIKOI:
            return A.STOP
        if view.phase is Phase.HAND_SWAP:
            return A.KEEP
        tab = tables_for(view.rules)
        field = view.field.mask
        if view.phase is Phase.DRAW_CHOICE:
            return max(acts, key=lambda a: tab.static[a.card.id] if a.card else 0.0)
        # ties broken at random so easy is not trivially exploitable
        return max(acts, key=lambda a: (capture_value(tab, a, field), self.rng.random()))


# ---------------------------------------------------------------------- medium
#: bonus for a turn that raises my yaku total: it wins the round if I stop
YAKU_BONUS = 4.0
#: share of a card's static value lost by discarding it instead of keeping it to capture
HAND_KEEP = 0.5
#: weight of the yaku-aware look-ahead beside the plain value of what a play takes now;
#: measured: the look-ahead alone was no better than greedy, the blend beats it
MEDIUM_LOOKAHEAD = 0.5
#: guesses of the hidden cards behind medium's koi-koi decision (0: the rule of thumb alone)
MEDIUM_KOIKOI_SAMPLES = 100


def play_result(card: int, target: int, field: int, mine: int) -> tuple[int, int]:
    """(my pile, field) after playing ``card`` (taking ``target`` where two match)."""
    bit = 1 << card
    taken = target if target else field & SAME_MONTH[card]
    if taken:
        return mine | taken | bit, field & ~taken
    return mine, field | bit


class MediumBot:
    """Values cards by the yaku both players are building, blocks, and weighs koi-koi.

    A play is scored by the position after it -- my families' progress minus
    the opponent's (a capture that blocks their family lowers theirs) --
    averaged over every card the stock could turn up next, less what the
    field it leaves offers the opponent.  Koi-koi is called only with turns
    to spare, no pressing threat from the opponent, and nothing to lose in
    the match standings.
    """

    def __init__(self, seed: int) -> None:
        self.name = "medium"
        self.rng = random.Random(seed)
        #: the weights of :meth:`play_value` (module defaults; the hard bot tunes its own)
        self.yaku_bonus = YAKU_BONUS
        self.hand_keep = HAND_KEEP
        self.lookahead = MEDIUM_LOOKAHEAD
        #: weight of what the field a play leaves offers the opponent
        self.exposure_weight = 1.0

    def choose(self, view: PlayerView) -> Action:
        acts = _check(view)
        if len(acts) == 1:
            return acts[0]
        if view.phase is Phase.HAND_SWAP:
            return A.KEEP
        if view.phase is Phase.KOIKOI:
            return self.koikoi(view)
        tab = tables_for(view.rules)
        vals = self.values(tab, view, acts)
        return max(
            zip(vals, [self.rng.random() for _ in acts], acts, strict=True),
            key=lambda t: (t[0], t[1]),
        )[2]

    def koikoi(self, view: PlayerView) -> Action:
        """Koi-koi or stop: a quick look at both answers over guessed deals, played
        out greedily (:data:`MEDIUM_KOIKOI_SAMPLES` guesses), where :func:`should_koikoi`'s
        rule of thumb breaks a tie."""
        acts = (A.KOIKOI, A.STOP)
        if MEDIUM_KOIKOI_SAMPLES:
            tab = tables_for(view.rules)
            sums, _ = playout_sums(view, acts, tab.static, self.rng, MEDIUM_KOIKOI_SAMPLES)
            if abs(sums[0] - sums[1]) > 1e-9:
                return A.KOIKOI if sums[0] > sums[1] else A.STOP
        return A.KOIKOI if should_koikoi(view) else A.STOP

    def values(
        self,
        tab: Tables,
        view: PlayerView,
        acts: tuple[Action, ...],
        hold: Sequence[float] | None = None,
    ) -> list[float]:
        """Medium's value of each PLAY or DRAW_CHOICE action (higher is better).

        ``hold`` (per month, the chance the opponent holds one of its cards) is
        the hard bot's reading of the opponent's hand; medium itself passes None
        and counts those chances from a uniformly random hand (:func:`exposure`)."""
        me = view.seat
        mine = view.piles[me].mask
        theirs = view.piles[1 - me].mask
        field = view.field.mask
        if view.phase is Phase.DRAW_CHOICE:
            drawn = view.drawn
            assert drawn is not None
            out = []
            for a in acts:
                assert a.card is not None
                gained = a.card.bit | drawn.bit
                m2 = mine | gained
                f2 = field & ~gained
                out.append(
                    position_value(tab, m2, theirs)
                    - exposure(
                        tab,
                        f2,
                        m2,
                        theirs,
                        view.unseen.mask,
                        view.opponent_hand_size,
                        view.hand.mask,
                        hold,
                    )
                )
            return out
        return [
            capture_value(tab, a, field)
            + self.lookahead * self.play_value(tab, view, a, mine, theirs, field, hold)
            for a in acts
        ]

    def play_value(
        self,
        tab: Tables,
        view: PlayerView,
        a: Action,
        mine: int,
        theirs: int,
        field: int,
        hold: Sequence[float] | None = None,
    ) -> float:
        assert a.card is not None
        c = a.card.id
        rules = view.rules
        me = view.seat
        last = view.last_totals[me]
        called = view.calls[me] > 0  # the total ``last`` was taken with (viewing_after_koikoi)
        mine1, field1 = play_result(c, a.target.bit if a.target else 0, field, mine)
        hand1 = view.hand.mask & ~(1 << c)
        unseen = view.unseen.mask
        n = unseen.bit_count()
        acc = 0.0
        if view.stock_size and n:
            d_iter = unseen
            while d_iter:
                low = d_iter & -d_iter
                d_iter ^= low
                d = low.bit_length() - 1
                md = field1 & SAME_MONTH[d]
                rest = md & (md - 1)
                if rest and not rest & (rest - 1):
                    md = best_of_two(tab, md, mine1, theirs)
                mine2 = mine1 | md | low if md else mine1
                v = position_value(tab, mine2, theirs)
                if total(mine2, rules, field1, called) > last:
                    v += self.yaku_bonus
                acc += v
            acc /= n
        else:
            acc = position_value(tab, mine1, theirs)
            if total(mine1, rules, field1, called) > last:
                acc += self.yaku_bonus
        acc -= self.exposure_weight * exposure(
            tab, field1, mine1, theirs, unseen, view.opponent_hand_size, hand1, hold
        )
        if mine1 == mine:
            acc -= self.hand_keep * tab.static[c]  # a discard gives up the card's own capture
        return acc


def stop_gain(view: PlayerView) -> int:
    """Points stopping now would bring, after any pool cap."""
    me = view.seat
    rules = view.rules
    b = score(view.yaku(me), rules, view.calls[me], view.calls[1 - me])
    g = b.score
    if rules.scoring is Scoring.POOL and rules.pool_payment_cap:
        g = min(g, view.scores[1 - me])
    return g


def opponent_threat(view: PlayerView) -> float:
    """How near the opponent is to a yaku: the largest family points one card away, or
    two cards away at half weight; families I have blocked do not count."""
    tab = tables_for(view.rules)
    me = view.seat
    mine = view.piles[me].mask
    theirs = view.piles[1 - me].mask
    worst = 0.0
    for g in tab.groups:
        have = (theirs & g.mask).bit_count()
        if have >= g.need:
            continue  # already scored; a further card only adds a point
        if (g.mask & ~mine).bit_count() < g.need:
            continue
        short = g.need - have
        if short == 1:
            worst = max(worst, float(g.points))
        elif short == 2:
            worst = max(worst, g.points / 2)
    return worst


def should_koikoi(view: PlayerView) -> bool:
    """Medium's koi-koi rule: go on only with time, a safe table and nothing to lose."""
    me = view.seat
    opp = 1 - me
    rules = view.rules
    gain = stop_gain(view)
    hand = view.hand_size
    last_round = view.round >= rules.rounds
    s_me, s_opp = view.scores
    if me == 1:
        s_me, s_opp = s_opp, s_me
    if rules.scoring is Scoring.POOL:
        if rules.knockout and gain >= s_opp:
            return False  # stopping wins the match outright
        after_me, after_opp = s_me + gain, s_opp - gain
    else:
        after_me, after_opp = s_me + gain, s_opp
    if last_round:
        if after_me > after_opp:
            return False
        return hand >= 1  # stopping loses the match anyway
    if hand < 3:
        return False
    threat = opponent_threat(view)
    if view.piles[opp].mask and total(view.piles[opp].mask, rules, view.field.mask) > 0:
        threat = max(threat, 3.0)  # any raise of theirs ends it in their favour
    tab = tables_for(rules)
    mine = view.piles[me].mask
    theirs = view.piles[opp].mask
    upside = potential(tab, mine, theirs) - total(mine, rules, view.field.mask)
    return threat < 3.0 and gain < 7 and (hand >= 5 or upside >= 2.0)
