"""The hard bot: determinized Monte Carlo search over the engine's playout core.

Why this shape: Koi-Koi hides the opponent's hand and the stock order, so a
tree over the true state would cheat.  Instead the bot repeatedly *guesses*
the hidden cards -- a uniformly random split of exactly the cards its seat
has not seen into an opponent hand of the right size and a stock order --
builds that round on a mutable :class:`~p2pkoikoi.engine.playout.Playout`
(the same rules as ``MatchState``, a copy per playout instead of per action),
and plays every legal action out to the end of the current round with a
fast greedy policy (:mod:`p2pkoikoi.bots.playouts`; ``smart`` switches on
:func:`~p2pkoikoi.bots.playouts.smart_move` for the plays, greedy with an eye on the yaku
families, off by default: not stronger at 50 ms, docs/bots.md).  Every action
is tried on the same guesses (common random numbers), which cancels most of
the luck of the deal out of the comparison.  The guesses are not quite
uniform: a :class:`~p2pkoikoi.bots.inference.HandReader` follows the views
of the round and makes the months the opponent passed up less likely in its
guessed hand (and, with ``infer_prior``, in medium's estimate -- the prior
below -- of what the field each play leaves offers the opponent).

Playouts stop when the round ends: later rounds would be dealt from a
stand-in seed, so they carry no information.  A round's outcome is scored as
an estimated chance of winning the *match* from the scores it leaves (exact
when the round ends the match: last round or a pool knock-out) plus a small
term for the points themselves, so the bot plays for the match, knows when a
small sure win is enough, and knows when it must gamble.  (``round_sigma=0``
takes the estimate's spread from :func:`~p2pkoikoi.bots.playouts.round_spread`,
measured for the rules, instead of the fixed 6 points; off by default: 52.0%
online and 50.4% nintendo against ``hard-v1`` at 50 ms, no better than without.)

Why the playouts are not simply greedy: the search is *saturated* well inside
its budget -- four times the playouts (1600 against 400) won 48.5% online and
47.8% nintendo -- so what the time buys is likelier playouts, not more of
them (docs/bots.md, "Saturation").  The family-aware playouts won 54% in
those fixed-count screens under nintendo but not at 50 ms against ``hard-v1``.

With a playout budget the bot is deterministic for its seed; with a time
budget it does as many playouts as fit, which depends on the machine.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from p2pkoikoi.bots.base import MediumBot, should_koikoi
from p2pkoikoi.bots.heuristics import Tables, tables_for
from p2pkoikoi.bots.inference import HandReader
from p2pkoikoi.bots.playouts import (
    BLOCK_BONUS,
    DISCARD_RISK,
    FAMILY_BONUS,
    ROUND_SIGMA,
    PlayoutPolicy,
    families,
    playout_sums,
    round_spread,
)
from p2pkoikoi.bots.playouts import match_utility as match_utility  # re-exported
from p2pkoikoi.engine import Action, Phase, PlayerView
from p2pkoikoi.engine import actions as A

#: default playouts per decision for a bare ``hard``: the CPU time ``hard-v1`` spends on its 600
DEFAULT_PLAYOUTS = 1500
#: match-win utility per point of medium's heuristic play value (hard-v1 used 0.06;
#: 0.12 won 53% against it at equal time, see docs/bots.md)
PRIOR_WEIGHT = 0.12


def medium_values(
    tab: Tables,
    view: PlayerView,
    acts: tuple[Action, ...],
    medium: MediumBot,
    hold: Sequence[float] | None = None,
) -> list[float]:
    """Medium's value of each action, relative to its best (so the best is 0);
    ``hold`` as in :meth:`MediumBot.values`."""
    vals = medium.values(tab, view, acts, hold)
    top = max(vals)
    return [v - top for v in vals]


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
        #: read the opponent's plays for its hand (off: uniform guesses, for measuring)
        self.infer = True
        #: let that reading shape medium's prior too (its estimate of what the field
        #: it leaves offers the opponent), not only the playouts' guesses; off: it
        #: did not measure stronger at 50 ms (docs/bots.md)
        self.infer_prior = False
        #: playouts with :func:`~p2pkoikoi.bots.playouts.smart_move`'s eye on the yaku families
        self.smart = False
        #: its bonuses, per yaku point (:data:`~p2pkoikoi.bots.playouts.FAMILY_BONUS`, ...)
        self.family_bonus = FAMILY_BONUS
        self.block_bonus = BLOCK_BONUS
        #: in those playouts, a discard the opponent can take costs this share of the
        #: block bonus of the families it is near
        self.feed = 0.0
        #: spread of one round's swing in the lead, for the match-win estimate
        #: (0: :func:`~p2pkoikoi.bots.playouts.round_spread`, measured for the rules)
        self.round_sigma = ROUND_SIGMA
        self._reader = HandReader()
        self._medium = MediumBot(seed)

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
        if self.infer:
            self._reader.observe(tab.static, view)
        deadline = None
        if self.budget_ms is not None:
            deadline = time.perf_counter() + self.budget_ms / 1000.0
        prior = None
        if view.phase is Phase.PLAY or view.phase is Phase.DRAW_CHOICE:
            # Playouts are noisy and their greedy players naive; medium's judgement
            # of the position, as a prior, steadies the choice between close actions.
            # (Inside the time budget: the budget is the whole decision.)
            hold = self._reader.hold(view) if self.infer and self.infer_prior else None
            prior = medium_values(tab, view, acts, self._medium, hold)
        samples = max(2, self.playouts // len(acts)) if self.playouts is not None else 1 << 30
        weights = self._reader.weights(view) if self.infer else None
        sums, done = playout_sums(
            view,
            acts,
            tab.static,
            self.rng,
            samples,
            deadline,
            weights,
            PlayoutPolicy(
                self.discard_risk,
                families(tab.groups, self.family_bonus, self.block_bonus) if self.smart else None,
                self.feed,
                self.round_sigma or round_spread(view.rules),
            ),
        )
        self.last_playouts = done * len(acts)
        means = [x / done for x in sums]
        self.last_means = means  # the playouts' mean utility per action (for benchmarks)
        if prior is not None:
            means = [m + self.prior_weight * p for m, p in zip(means, prior, strict=True)]
        best = max(range(len(acts)), key=lambda i: means[i])
        if view.phase is Phase.KOIKOI and abs(sums[0] - sums[1]) < 1e-9:
            return A.KOIKOI if should_koikoi(view) else A.STOP
        return acts[best]
