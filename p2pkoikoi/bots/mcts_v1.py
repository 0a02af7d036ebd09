"""``hard-v1``: the hard bot as it was before the playout core (kept for comparison).

It searches exactly as :mod:`p2pkoikoi.bots.mcts` does, but plays its
playouts through the immutable :class:`MatchState` (a copy per action), so
it fits fewer playouts in the same time.  ``selfplay --bots hard,hard-v1``
measures what the faster playouts are worth; see docs/bots.md.

The original description follows.

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

import random
import time

from p2pkoikoi.bots.base import MediumBot, should_koikoi
from p2pkoikoi.bots.heuristics import Tables, tables_for
from p2pkoikoi.bots.mcts import medium_values
from p2pkoikoi.bots.playouts import ROLLOUT_YAKU_BONUS, match_utility
from p2pkoikoi.engine import Action, MatchState, Phase, PlayerView, determinize
from p2pkoikoi.engine import actions as A
from p2pkoikoi.engine.actions import ActionKind
from p2pkoikoi.engine.cards import SAME_MONTH, iter_mask
from p2pkoikoi.engine.yaku import total

#: playouts per decision of a bare ``hard-v1`` (today's ``hard`` default before the core)
V1_PLAYOUTS = 600
#: match-win utility per point of medium's heuristic play value
PRIOR_WEIGHT = 0.06


class HardBotV1:
    """Determinized Monte Carlo over the immutable engine; see the module docstring."""

    def __init__(
        self, seed: int, playouts: int | None = V1_PLAYOUTS, budget_ms: float | None = None
    ) -> None:
        if playouts is None and budget_ms is None:
            raise ValueError("hard needs a playout or a time budget")
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.budget_ms = budget_ms
        if budget_ms is not None and playouts is None:
            self.name = f"hard-v1:{budget_ms:g}ms"
        else:
            self.name = f"hard-v1:playouts={playouts}"
        #: playouts done in the last decision (for benchmarks)
        self.last_playouts = 0
        #: utility per point of medium's heuristic value (see :meth:`choose`)
        self.prior_weight = PRIOR_WEIGHT
        self._medium = MediumBot(seed)

    # ------------------------------------------------------------------ policy
    def _rollout_action(self, tab: Tables, s: MatchState, rng: random.Random) -> Action:
        acts = s.legal_actions()
        if len(acts) == 1:
            return acts[0]
        kind = acts[0].kind
        if kind is ActionKind.KOIKOI:
            return A.STOP
        if kind is ActionKind.SWAP:
            return A.KEEP
        static = tab.static
        if kind is ActionKind.TAKE:
            return max(acts, key=lambda a: static[a.card.id] if a.card else 0.0)
        field = s.field.mask
        p = s.to_act
        assert p is not None
        pile = s.pile(p).mask
        rules = s.rules
        before = total(pile, rules, field)
        best = acts[0]
        best_v = -1e9
        for a in acts:
            card = a.card
            assert card is not None
            c = card.id
            if a.target is not None:
                taken = a.target.bit
                v = static[c] + static[a.target.id]
            else:
                taken = field & SAME_MONTH[c]
                if taken:
                    v = static[c]
                    for i in iter_mask(taken):
                        v += static[i]
                else:
                    v = -0.5 * static[c]
            if taken and total(pile | taken | 1 << c, rules, field) > before:
                v += ROLLOUT_YAKU_BONUS  # a capture that scores ends the round our way
            v += rng.random() * 0.3
            if v > best_v:
                best_v, best = v, a
        return best

    def _playout(
        self,
        tab: Tables,
        s: MatchState,
        seat: int,
        round_no: int,
        n_results: int,
        scores: tuple[int, int],
        rng: random.Random,
    ) -> float:
        rules = s.rules
        while not s.is_over and s.round == round_no and len(s.results) == n_results:
            s = s.after(self._rollout_action(tab, s, rng))
        res = s.results[n_results]
        return match_utility(rules, seat, round_no, scores, res.gained)

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
        rng = self.rng
        seat = view.seat
        unseen = list(iter_mask(view.unseen.mask))
        n_opp = view.opponent_hand_size
        n_results = len(view.results)
        sums = [0.0] * len(acts)
        deadline = None
        if self.budget_ms is not None:
            deadline = time.perf_counter() + self.budget_ms / 1000.0
        samples = max(2, self.playouts // len(acts)) if self.playouts is not None else 1 << 30
        done = 0
        for _ in range(samples):
            rng.shuffle(unseen)
            opp = 0
            for c in unseen[:n_opp]:
                opp |= 1 << c
            stock = tuple(unseen[n_opp:])
            root = determinize(view, opp, stock)
            # The playout policy's coin flips are shared across actions too.
            flips = rng.getrandbits(64)
            for i, a in enumerate(acts):
                sums[i] += self._playout(
                    tab,
                    root.after(a),
                    seat,
                    view.round,
                    n_results,
                    view.scores,
                    random.Random(flips),
                )
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
