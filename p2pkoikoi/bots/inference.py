"""What the opponent's plays say about its hand, for the hard bot's guesses.

Theory of operation: a Koi-Koi hand only shrinks (draws go to the field or a
pile, never to the hand), so whatever the opponent did not hold at one turn
it does not hold for the rest of the round.  A field card that was on the
field at two of my consecutive plays stayed there through the opponent's
whole turn: it was there to be taken, and an opponent holding a card of its
month would most likely have taken it -- unless it took something worth more.
So after each opponent turn, every month with such a card gets its unseen
cards' weight in the guessed opponent hand multiplied by :data:`STRONG` when
the opponent took nothing, or less than the card it left, and by
:data:`WEAK` otherwise.  Two more sources, with a share of the doubt where
the views cannot tell which card is which: a card my own draw laid on the
field also lay there through the opponent's turn (it is one of the new field
cards, unless my pile shows my draw took something), and when the opponent
moved first in the round, the field cards it left at my first view were
(mostly) dealt there.  Evidence that a card was passed up with chance ``p``
scales the weight by ``1 - p * (1 - factor)``.  The evidence accumulates over
the round and is forgotten at the next deal.  (Those two sources are off by
default -- :attr:`HandReader.draws`, :attr:`HandReader.opening` -- because
they predicted better but did not play measurably better; docs/bots.md.)

:meth:`HandReader.hold` turns the weights into each month's chance of being
in the guessed hand, which the hard bot can hand to medium's prior (the
exposure of the field it leaves; ``HardBot.infer_prior``, also off by
default), so the reading shapes its plays directly, not only through the
playouts.

Measured (docs/bots.md, ``bench/hand_reading.py``, 60 online matches
against ``hard-v1``): months weighted at most 0.2 were in the opponent's
hand 8% of the time, months with no evidence 47% (7% and 53% with both
extra sources on and WEAK at 0.85).  The reader sees only the views its bot is
handed, so it needs no more than a player may know.
"""

from __future__ import annotations

import math

from p2pkoikoi.engine import Phase, PlayerView
from p2pkoikoi.engine.cards import MONTH_MASKS, MONTH_OF, iter_mask

#: weight factor for a month the opponent left on the field while taking less (or nothing)
STRONG = 0.2
#: weight factor for a month the opponent left on the field while taking something dearer
WEAK = 0.7


class HandReader:
    """Follows one seat's views through a round; see the module docstring."""

    def __init__(self, strong: float = STRONG, weak: float = WEAK) -> None:
        self.strong = strong
        self.weak = weak
        #: also read the cards my own draw laid on the field (see :meth:`observe`)
        self.draws = False
        #: also read the opponent's opening turn, when it played before my first view
        self.opening = False
        self._round = -1
        #: (field, opponent's pile, my hand size, opponent's hand size, unseen, my pile)
        #: at my last play
        self._prev: tuple[int, int, int, int, int, int] | None = None
        #: weight of each month's unseen cards (index 1..12)
        self.month_weight = [1.0] * 13

    def observe(self, static: tuple[float, ...] | list[float], view: PlayerView) -> None:
        """Take in ``view`` (any phase; only plays are compared, one opponent turn apart)."""
        key = view.round * 1000 + len(view.results)
        fresh = key != self._round
        if fresh:
            self._round = key
            self._prev = None
            self.month_weight = [1.0] * 13
        if view.phase is not Phase.PLAY:
            return
        me = view.seat
        opp = 1 - me
        field = view.field.mask
        opp_pile = view.piles[opp].mask
        unseen = view.unseen.mask
        now = (
            field,
            opp_pile,
            view.hand_size,
            view.opponent_hand_size,
            unseen,
            view.piles[me].mask,
        )
        prev = self._prev
        self._prev = now
        if prev is None:
            if fresh and self.opening and view.opponent_hand_size + 1 == view.hand_size:
                self._opening(static, view)
            return
        if prev[2] != now[2] + 1 or prev[3] != now[3] + 1:
            return  # not exactly one play of mine and one of theirs apart
        gained = opp_pile & ~prev[1]
        v_gained = sum(static[c] for c in iter_mask(gained))
        # p = 1: the card sat on the field through the opponent's whole turn
        left = [(c, 1.0) for c in iter_mask(prev[0] & field)]
        if self.draws:
            # Cards first seen now are my draw, the opponent's play and its draw.  Mine
            # went to my pile if it took something; otherwise it lay on the field through
            # the opponent's turn: if it is still there, it was passed up too.  Which
            # new field card it is, is not known: each gets an even share of the doubt.
            revealed = prev[4] & ~unseen
            if not revealed & now[5] & ~prev[5]:
                new_on_field = list(iter_mask(revealed & field))
                k = len(new_on_field) + (1 if revealed & gained else 0)
                left += [(c, 1.0 / k) for c in new_on_field]
        self._mark(static, left, gained, v_gained, unseen)

    def _opening(self, static: tuple[float, ...] | list[float], view: PlayerView) -> None:
        """The opponent's first turn, played before my first view: the field cards it
        left were dealt there.  A month with two field cards was dealt so (a card laid
        down alone would have been taken); a lone card may be one the opponent laid,
        and each is one with the chance of the cards laid among the lone ones."""
        gained = view.piles[1 - view.seat].mask
        field = view.field.mask
        captures = len({MONTH_OF[c] for c in iter_mask(gained)})
        laid = max(0, 2 - captures)
        lone = [c for c in iter_mask(field) if not field & MONTH_MASKS[MONTH_OF[c]] & ~(1 << c)]
        p_lone = max(0.0, 1.0 - laid / len(lone)) if lone else 0.0
        left = [(c, p_lone if c in lone else 1.0) for c in iter_mask(field)]
        v_gained = sum(static[c] for c in iter_mask(gained))
        self._mark(static, left, gained, v_gained, view.unseen.mask)

    def _mark(
        self,
        static: tuple[float, ...] | list[float],
        left: list[tuple[int, float]],
        gained: int,
        v_gained: float,
        unseen: int,
    ) -> None:
        """Lower the weight of each month with a card the opponent left (with chance p)."""
        best: dict[int, tuple[float, float]] = {}
        for c, p in left:
            month = MONTH_OF[c]
            v0, p0 = best.get(month, (0.0, 0.0))
            best[month] = (max(v0, static[c]), max(p0, p))
        for month, (v, p) in best.items():
            if not unseen & MONTH_MASKS[month] or p <= 0.0:
                continue
            f = self.strong if not gained or v + 0.1 > v_gained else self.weak
            self.month_weight[month] *= f if p >= 1.0 else 1.0 - p * (1.0 - f)

    def weights(self, view: PlayerView) -> dict[int, float] | None:
        """Weights of the unseen cards for :func:`~p2pkoikoi.bots.playouts.playout_sums`
        (None when nothing has been learnt)."""
        w = self.month_weight
        out = {c: w[MONTH_OF[c]] for c in iter_mask(view.unseen.mask) if w[MONTH_OF[c]] != 1.0}
        return out or None

    def hold(self, view: PlayerView) -> list[float] | None:
        """Per month (index 1..12), the chance that the weighted guess of the opponent's
        hand holds at least one of its unseen cards (None when nothing has been learnt).

        Weighted sampling without replacement has no closed form; this uses the
        conditional-Poisson approximation: card ``c`` is held with chance
        ``1 - exp(-lam * w_c)``, ``lam`` chosen so that the chances add up to the
        hand size.  With equal weights it gives ``1 - (1 - h/n) ** k`` for ``k``
        unseen cards of a month, close to the exact hypergeometric chance."""
        w = self.month_weight
        if all(x == 1.0 for x in w):
            return None
        h = view.opponent_hand_size
        per_month = [0.0] * 13
        cards: list[float] = []
        for c in iter_mask(view.unseen.mask):
            x = w[MONTH_OF[c]]
            per_month[MONTH_OF[c]] += x
            cards.append(x)
        if h <= 0 or not cards:
            return [0.0] * 13
        if h >= len(cards):
            return [1.0 if per_month[m] > 0 else 0.0 for m in range(13)]
        lo, hi = 0.0, 1.0
        while sum(1.0 - math.exp(-hi * x) for x in cards) < h:
            hi *= 2.0
        for _ in range(30):
            mid = (lo + hi) / 2
            if sum(1.0 - math.exp(-mid * x) for x in cards) < h:
                lo = mid
            else:
                hi = mid
        lam = (lo + hi) / 2
        return [1.0 - math.exp(-lam * per_month[m]) for m in range(13)]
