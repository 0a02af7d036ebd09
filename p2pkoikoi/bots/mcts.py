"""The hard bot: determinized Monte Carlo search over the real engine.

Why this shape: Koi-Koi hides the opponent's hand and the stock order, so a
tree over the true state would cheat.  Instead the bot repeatedly *guesses*
the hidden cards -- a uniformly random split of exactly the cards its seat
has not seen into an opponent hand of the right size and a stock order --
builds a full state with :func:`determinize`, and plays every legal action
out to the end of the current round with a fast greedy policy.  Every action
is tried on the same guesses (common random numbers), which cancels most of
the luck of the deal out of the comparison.

Playouts stop when the round ends: later rounds would be dealt from a
stand-in seed, so they carry no information.  A round's outcome is scored as
an estimated chance of winning the *match* from the scores it leaves (exact
when the round ends the match: last round or a pool knock-out) plus a small
term for the points themselves, so the bot plays for the match, knows when a
small sure win is enough, and knows when it must gamble.

With a playout budget the bot is deterministic for its seed; with a time
budget it does as many playouts as fit, which depends on the machine.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from p2pkoikoi.bots.base import MediumBot, should_koikoi
from p2pkoikoi.bots.heuristics import Tables, tables_for
from p2pkoikoi.engine import Action, Phase, PlayerView
from p2pkoikoi.engine import actions as A
from p2pkoikoi.engine.cards import SAME_MONTH, iter_mask
from p2pkoikoi.engine.playout import DRAW_CHOICE, KOIKOI, PLAY, Playout, move_of
from p2pkoikoi.engine.rules import RuleSet, Scoring

#: default playouts per decision for a bare ``hard`` (well under a second here)
DEFAULT_PLAYOUTS = 1500
#: spread of one round's point swing, for the match-win estimate
ROUND_SIGMA = 6.0
#: weight of raw points beside the match-win estimate
POINT_WEIGHT = 0.01
#: playout policy: bonus for a capture that completes or raises a yaku
ROLLOUT_YAKU_BONUS = 3.0
#: playout policy: share of a discarded card's value lost when the opponent can take it
DISCARD_RISK = 1.0
#: match-win utility per point of medium's heuristic play value
PRIOR_WEIGHT = 0.06


def medium_values(
    tab: Tables, view: PlayerView, acts: tuple[Action, ...], medium: MediumBot
) -> list[float]:
    """Medium's value of each action, relative to its best (so the best is 0)."""
    vals = medium.values(tab, view, acts)
    top = max(vals)
    return [v - top for v in vals]


def match_utility(
    rules: RuleSet, seat: int, round_no: int, scores: tuple[int, int], gained: tuple[int, int]
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
        z = lead / (ROUND_SIGMA * math.sqrt(left))
        p = 1.0 / (1.0 + math.exp(-1.7 * z))
    return p + POINT_WEIGHT * (g_me - g_opp)


class HardBot:
    """Determinized Monte Carlo over the playout core; see the module docstring."""

    def __init__(
        self, seed: int, playouts: int | None = DEFAULT_PLAYOUTS, budget_ms: float | None = None
    ) -> None:
        if playouts is None and budget_ms is None:
            raise ValueError("hard needs a playout or a time budget")
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.budget_ms = budget_ms
        if budget_ms is not None and playouts is None:
            self.name = f"hard:{budget_ms:g}ms"
        else:
            self.name = f"hard:playouts={playouts}"
        #: playouts done in the last decision (for benchmarks)
        self.last_playouts = 0
        #: utility per point of medium's heuristic value (see :meth:`choose`)
        self.prior_weight = PRIOR_WEIGHT
        #: weight of a discard's risk: the card's value when the opponent (in the
        #: playout's guessed deal) holds a card of its month and would take it
        self.discard_risk = DISCARD_RISK
        self._medium = MediumBot(seed)

    # ------------------------------------------------------------------ policy
    def _rollout(
        self, static: tuple[float, ...] | list[float], q: Playout, rnd: Callable[[], float]
    ) -> None:
        """Play ``q``'s round out with the greedy policy: capture the most valuable
        cards (a capture that raises the yaku total first), discard the cheapest,
        take the best card on a draw choice, stop at the first yaku."""
        tally = q.tally
        risk = self.discard_risk
        while True:
            ph = q.phase
            if ph == PLAY:
                moves = q.plays()
                if len(moves) == 1:
                    m = moves[0]
                    q.play(m & 63, (m >> 6) - 1)
                    continue
                p = q.to_act
                field = q.field
                pile = q.piles[p]
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
                            while taken:
                                b = taken & -taken
                                v += static[b.bit_length() - 1]
                                taken ^= b
                            taken = field & SAME_MONTH[c]
                        else:
                            v = -0.5 * static[c]
                            if q.hands[1 - p] & SAME_MONTH[c]:
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
                q.decide(False)
            else:
                return

    # ------------------------------------------------------------------ search
    def choose(self, view: PlayerView) -> Action:
        acts = view.legal_actions
        if not acts:
            raise ValueError("the bot was asked to act on a view with no legal actions")
        self.last_playouts = 0
        if len(acts) == 1:
            return acts[0]
        if view.phase is Phase.HAND_SWAP:
            # Nothing is known before looking: both hands are equally likely good.
            return A.KEEP
        tab = tables_for(view.rules)
        static = tab.static
        rng = self.rng
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
        deadline = None
        if self.budget_ms is not None:
            deadline = time.perf_counter() + self.budget_ms / 1000.0
        samples = max(2, self.playouts // len(acts)) if self.playouts is not None else 1 << 30
        utility: dict[tuple[int, int], float] = {}
        done = 0
        for _ in range(samples):
            rng.shuffle(unseen)
            hand = 0
            for c in unseen[:n_opp]:
                hand |= 1 << c
            root = template.copy()
            root.hands[opp] = hand
            root.stock = unseen[n_opp:]
            # The playout policy's coin flips are shared across actions too.
            flips = rng.getrandbits(64)
            for i, m in enumerate(moves):
                q = root.copy()
                q.do(m)
                self._rollout(static, q, random.Random(flips).random)
                g = q.gained
                u = utility.get(g)
                if u is None:
                    u = utility[g] = match_utility(rules, seat, round_no, scores, g)
                sums[i] += u
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_playouts = done * len(acts)
        means = [x / done for x in sums]
        self.last_means = means  # the playouts' mean utility per action (for benchmarks)
        if view.phase is Phase.PLAY or view.phase is Phase.DRAW_CHOICE:
            # Playouts are noisy and their greedy players naive; medium's judgement
            # of the position, as a prior, steadies the choice between close actions.
            prior = medium_values(tab, view, acts, self._medium)
            means = [m + self.prior_weight * p for m, p in zip(means, prior, strict=True)]
        best = max(range(len(acts)), key=lambda i: means[i])
        if view.phase is Phase.KOIKOI and abs(sums[0] - sums[1]) < 1e-9:
            return A.KOIKOI if should_koikoi(view) else A.STOP
        return acts[best]
