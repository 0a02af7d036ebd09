"""Determinized playouts on the engine's playout core, shared by hard and medium.

A *sample* guesses the hidden cards -- a uniformly random split of exactly
the cards the seat has not seen into an opponent hand of the right size and
a stock order -- and plays every candidate action out to the end of the
round on that same guess (common random numbers: the luck of the deal
cancels out of the comparison) with :func:`rollout`, a fast greedy policy.
A finished round is scored by :func:`match_utility`: the estimated chance
of winning the *match* from the standings it leaves, plus a little for the
points.  Playouts stop at the round's end: later rounds would be dealt from
guesses that carry no information.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p2pkoikoi.bots.heuristics import Group, tables_for
from p2pkoikoi.engine import Action, PlayerView
from p2pkoikoi.engine.cards import SAME_MONTH, iter_mask
from p2pkoikoi.engine.playout import DRAW_CHOICE, KOIKOI, PLAY, SWAP, Playout, move_of, quick_deck
from p2pkoikoi.engine.rules import RuleSet, Scoring

#: spread of one round's point swing, for the match-win estimate
ROUND_SIGMA = 6.0
#: weight of raw points beside the match-win estimate
POINT_WEIGHT = 0.01
#: playout policy: bonus for a capture that completes or raises a yaku
ROLLOUT_YAKU_BONUS = 3.0
#: playout policy: share of a discarded card's value lost when the opponent can take it
DISCARD_RISK = 1.0


#: rounds :func:`round_spread` plays to measure a rule set's spread
SPREAD_ROUNDS = 1000
#: in those rounds a player calls koi-koi while it still holds this many cards
SPREAD_CALL_HAND = 4

_SPREADS: dict[RuleSet, float] = {}


def round_spread(rules: RuleSet) -> float:
    """The standard deviation of one round's swing in the lead under ``rules``, for
    :func:`match_utility`: measured, not guessed, by playing :data:`SPREAD_ROUNDS`
    rounds on the playout core (a fixed seed, so the figure is the same everywhere;
    cached per rule set).

    Why measure: how far one round moves the lead depends on nearly every rule --
    the doubling, the koi-koi multiplier, the yaku values, pool scoring (where the
    loser pays what the winner gains, so the lead moves twice over).  The rounds
    are played by :func:`rollout`'s greedy players calling koi-koi while they hold
    :data:`SPREAD_CALL_HAND` or more cards, about as often as medium and hard call:
    hard's own self-play moved the lead by 10.1 points a round under ``nintendo``
    and 18.8 under ``online`` (pool: twice the points won), where this gives
    9.7 and 22.1; never calling (easy's habit, :data:`ROUND_SIGMA`'s origin)
    gives 7.0 and 12.8."""
    hit = _SPREADS.get(rules)
    if hit is not None:
        return hit
    rng = random.Random(0)
    static = tables_for(rules).static
    stakes = (rules.pool_stake, rules.pool_stake) if rules.scoring is Scoring.POOL else (0, 0)
    factor = 2 if rules.scoring is Scoring.POOL else 1
    total = 0.0
    for i in range(SPREAD_ROUNDS):
        q = Playout.deal(rules, lambda: quick_deck(rng), i & 1, stakes)
        if q.phase == SWAP:
            q.swap(False)
        rollout(static, q, rng.random, call_hand=SPREAD_CALL_HAND)
        g0, g1 = q.gained
        total += (factor * (g0 - g1)) ** 2
    spread = _SPREADS[rules] = max(1.0, math.sqrt(total / SPREAD_ROUNDS))
    return spread


def match_utility(
    rules: RuleSet,
    seat: int,
    round_no: int,
    scores: tuple[int, int],
    gained: tuple[int, int],
    sigma: float = ROUND_SIGMA,
) -> float:
    """How good a finished round is for ``seat``: chance of winning the match, plus points.

    ``scores`` are the standings before the round and ``gained`` what each
    seat won in it (already capped by the pool).
    """
    g_me, g_opp = gained[seat], gained[1 - seat]
    s_me, s_opp = scores[seat], scores[1 - seat]
    if rules.scoring is Scoring.POOL:
        n_me, n_opp = s_me + g_me - g_opp, s_opp + g_opp - g_me
        if rules.knockout and (n_me <= 0 or n_opp <= 0):
            return (1.0 if n_opp <= 0 else 0.0) + POINT_WEIGHT * (g_me - g_opp)
    else:
        n_me, n_opp = s_me + g_me, s_opp + g_opp
    lead = n_me - n_opp
    left = rules.rounds - round_no
    if left <= 0:
        p = 1.0 if lead > 0 else 0.0 if lead < 0 else 0.5
    else:
        z = lead / (sigma * math.sqrt(left))
        p = 1.0 / (1.0 + math.exp(-1.7 * z))
    return p + POINT_WEIGHT * (g_me - g_opp)


def rollout(
    static: tuple[float, ...] | list[float],
    q: Playout,
    rnd: Callable[[], float],
    risk: float = DISCARD_RISK,
    fam: Families | None = None,
    feed: float = 0.0,
    call_hand: int = 99,
) -> None:
    """Play ``q``'s round out with the greedy policy: capture the most valuable
    cards (a capture that raises the yaku total first), discard the cheapest
    (dearer when the opponent's guessed hand can take it), take the best card
    on a draw choice, stop at the first yaku.  ``rnd`` breaks near-ties.

    With ``fam`` (:func:`families`) the plays are :func:`smart_move`'s, with an
    eye on the yaku families: about 1.2 times the cost of a greedy playout.
    ``call_hand``: call koi-koi (instead of stopping) while holding that many cards."""
    tally = q.tally
    while True:
        ph = q.phase
        if ph == PLAY:
            moves = q.plays()
            if len(moves) == 1:
                m = moves[0]
                q.play(m & 63, (m >> 6) - 1)
                continue
            if fam is not None:
                m = smart_move(static, fam, q, moves, rnd, risk, feed)
                q.play(m & 63, (m >> 6) - 1)
                continue
            p = q.to_act
            field = q.field
            pile = q.piles[p]
            opp_hand = q.hands[1 - p]
            before = tally(pile, field)
            best = moves[0]
            best_v = -1e9
            for m in moves:
                c = m & 63
                t = (m >> 6) - 1
                if t >= 0:
                    taken = 1 << t
                    v = static[c] + static[t]
                else:
                    taken = field & SAME_MONTH[c]
                    if taken:
                        v = static[c]
                        rest = taken
                        while rest:
                            b = rest & -rest
                            v += static[b.bit_length() - 1]
                            rest ^= b
                    else:
                        v = -0.5 * static[c]
                        if opp_hand & SAME_MONTH[c]:
                            v -= risk * static[c]
                if taken and tally(pile | taken | 1 << c, field) > before:
                    v += ROLLOUT_YAKU_BONUS  # a capture that scores ends the round our way
                v += rnd() * 0.3
                if v > best_v:
                    best_v, best = v, m
            q.play(best & 63, (best >> 6) - 1)
        elif ph == DRAW_CHOICE:
            q.take(max(q.moves(), key=static.__getitem__))
        elif ph == KOIKOI:
            q.decide(q.hands[q.to_act].bit_count() >= call_hand)
        else:
            return


#: smart playout policy: bonus per yaku point for a capture that leaves a family one card short
FAMILY_BONUS = 0.5
#: smart playout policy: bonus per yaku point for taking a card of a family the opponent
#: is one card short of (half that when two short)
BLOCK_BONUS = 0.5

#: per card id, its yaku families as ``(mask, need, family bonus, block bonus, bit)``:
#: the bonuses already in points of playout value, ``bit`` naming the family
Families = tuple[tuple[tuple[int, int, float, float, int], ...], ...]

_FAMILIES: dict[tuple[int, float, float], tuple[Sequence[Group], Families]] = {}


def families(
    groups: Sequence[Group], family_bonus: float = FAMILY_BONUS, block_bonus: float = BLOCK_BONUS
) -> Families:
    """Per card id, the yaku families it belongs to, for :func:`smart_move`
    (cached per groups tuple and bonuses)."""
    key = (id(groups), family_bonus, block_bonus)
    hit = _FAMILIES.get(key)
    if hit is not None and hit[0] is groups:
        return hit[1]
    fam = tuple(
        tuple(
            (g.mask, g.need, family_bonus * g.points, block_bonus * g.points, 1 << k)
            for k, g in enumerate(groups)
            if g.mask >> c & 1
        )
        for c in range(48)
    )
    if len(_FAMILIES) > 64:
        _FAMILIES.clear()
    _FAMILIES[key] = (groups, fam)
    return fam


def smart_move(
    static: tuple[float, ...] | list[float],
    fam: Families,
    q: Playout,
    moves: list[int] | tuple[int, ...],
    rnd: Callable[[], float],
    risk: float = DISCARD_RISK,
    feed: float = 0.0,
) -> int:
    """The play :func:`rollout` makes of ``moves`` when given ``fam`` (``q`` in phase PLAY):
    :func:`rollout`'s greedy choice, with a capture worth more when it brings one
    of my yaku families within a card of scoring (``fam``'s family bonus) or takes
    a card of a family the opponent is one card short of (its block bonus; half
    that when two short), and with ``feed``, a discard the opponent's hand can
    take worth less by the same measure."""
    p = q.to_act
    field = q.field
    pile = q.piles[p]
    theirs = q.piles[1 - p]
    opp_hand = q.hands[1 - p]
    before = q.tally(pile, field)
    best = moves[0]
    best_v = -1e9
    for m in moves:
        c = m & 63
        t = (m >> 6) - 1
        taken = 1 << t if t >= 0 else field & SAME_MONTH[c]
        if taken:
            gain = taken | 1 << c
            mine_after = pile | gain
            v = 0.0
            seen = 0
            rest = gain
            while rest:
                b = rest & -rest
                rest ^= b
                i = b.bit_length() - 1
                v += static[i]
                for mask, need, fb, bb, f in fam[i]:
                    if seen & f:
                        continue  # a family counted for another card of this capture
                    seen |= f
                    have = (theirs & mask).bit_count()
                    if need - 2 <= have < need:
                        v += bb if have == need - 1 else 0.5 * bb
                    if (mine_after & mask).bit_count() == need - 1 != (pile & mask).bit_count():
                        v += fb
            if q.tally(mine_after, field) > before:
                v += ROLLOUT_YAKU_BONUS  # a capture that scores ends the round our way
        else:
            v = -0.5 * static[c]
            if opp_hand & SAME_MONTH[c]:
                v -= risk * static[c]
                if feed:
                    for mask, need, _, bb, _ in fam[c]:
                        have = (theirs & mask).bit_count()
                        if need - 2 <= have < need:
                            v -= feed * (bb if have == need - 1 else 0.5 * bb)
        v += rnd() * 0.3
        if v > best_v:
            best_v, best = v, m
    return best


def guess_hidden(
    unseen: list[int], n_opp: int, rng: random.Random, exps: list[float] | None = None
) -> tuple[int, list[int]]:
    """One guess at the hidden cards: the opponent's hand (a mask of ``n_opp`` of
    ``unseen``) and the stock order (the rest).

    Uniform when ``exps`` is None (``unseen`` is shuffled in place).  Otherwise
    ``exps[k]`` is ``1 / weight`` of ``unseen[k]``: the hand is a weighted draw
    without replacement (Efraimidis-Spirakis: the ``n_opp`` largest keys
    ``u ** (1 / weight)``) and the stock the rest in a uniformly random order.
    """
    if exps is None:
        rng.shuffle(unseen)
        held = unseen[:n_opp]
        stock = unseen[n_opp:]
    else:
        rnd = rng.random
        keys = [rnd() ** e for e in exps]
        picked = [unseen[k] for k in sorted(range(len(unseen)), key=keys.__getitem__, reverse=True)]
        held = picked[:n_opp]
        stock = picked[n_opp:]
        rng.shuffle(stock)
    hand = 0
    for c in held:
        hand |= 1 << c
    return hand, stock


@dataclass(frozen=True)
class PlayoutPolicy:
    r"""How :func:`playout_sums`' playouts play and score a round: the discard
    ``risk`` the rollout takes, the card ``families`` it favours (None: none), how
    much it ``feed``\ s the opponent, and the ``sigma`` of a round's utility."""

    risk: float = DISCARD_RISK
    families: Families | None = None
    feed: float = 0.0
    sigma: float = ROUND_SIGMA


def playout_sums(
    view: PlayerView,
    acts: tuple[Action, ...],
    static: tuple[float, ...] | list[float],
    rng: random.Random,
    samples: int,
    deadline: float | None = None,
    weights: dict[int, float] | None = None,
    policy: PlayoutPolicy | None = None,
) -> tuple[list[float], int]:
    """Each action's summed utility over up to ``samples`` guesses (fewer if the
    ``time.perf_counter()`` deadline passes first), and the guesses made.

    ``weights`` (card id -> weight, 1 where missing) makes the guessed opponent
    hand favour some unseen cards over others (:func:`guess_hidden`); without
    it every split of the unseen cards is equally likely.  ``policy``: how the
    playouts play and score (:class:`PlayoutPolicy`; None: its defaults)."""
    pol = policy if policy is not None else PlayoutPolicy()
    risk, fam, feed, sigma = pol.risk, pol.families, pol.feed, pol.sigma
    seat = view.seat
    opp = 1 - seat
    unseen = list(iter_mask(view.unseen.mask))
    n_opp = view.opponent_hand_size
    rules = view.rules
    round_no = view.round
    scores = view.scores
    template = Playout.from_view(view)
    moves = [move_of(a) for a in acts]
    sums = [0.0] * len(acts)
    utility: dict[tuple[int, int], float] = {}
    done = 0
    exps = [1.0 / weights.get(c, 1.0) for c in unseen] if weights else None
    for _ in range(samples):
        hand, stock = guess_hidden(unseen, n_opp, rng, exps)
        root = template.copy()
        root.hands[opp] = hand
        root.stock = stock
        # The playout policy's coin flips are shared across actions too.
        flips = rng.getrandbits(64)
        for i, m in enumerate(moves):
            q = root.copy()
            q.do(m)
            rollout(static, q, random.Random(flips).random, risk, fam, feed)
            g = q.gained
            u = utility.get(g)
            if u is None:
                u = utility[g] = match_utility(rules, seat, round_no, scores, g, sigma)
            sums[i] += u
        done += 1
        if deadline is not None and time.perf_counter() >= deadline:
            break
    return sums, done
