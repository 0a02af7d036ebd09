"""A fast, mutable single-round core for search playouts.

Theory of operation
-------------------
:class:`~p2pkoikoi.engine.match.MatchState` is immutable: every action copies a
20-field state, validates the action, and at a round's end scores it, records
it and deals the next round from the match seed with SHA-256.  That is right
for a match, and wasted in a bot's playouts, which play thousands of rounds to
their end from guessed hidden cards and then throw them away.

A :class:`Playout` is one round on one *mutable* state: a bot copies it once
per playout (:meth:`Playout.copy`), then every move changes it in place, and
a whole turn (the play, the draw and what follows) is one method call.
Moves are small ints, not :class:`~p2pkoikoi.engine.actions.Action` values:

* ``PLAY``: ``card + 64 * (target + 1)``; ``target`` is -1 (``move == card``)
  unless two field cards match and the player names one;
* ``DRAW_CHOICE``: the id of the field card to take;
* ``KOIKOI``: 1 for koi-koi, 0 for stop;  ``SWAP``: 1 to swap, 0 to keep.

Moves are trusted (they come from :meth:`Playout.moves`, or from a legal
``Action`` through :func:`move_of`): nothing is validated.  The round ends
in the ``DONE`` phase with :attr:`Playout.gained` (what each seat won, after
the pool cap, as ``RoundResult.gained`` would say), :attr:`Playout.winner`
and :attr:`Playout.reason`; no next round is dealt.

The rules are the same as ``match.py``'s (every ``RuleSet`` field that
matters within a round is read here too), and ``tests/engine/test_playout.py`` plays
random rounds of every preset through both and checks that they agree
move for move.  :meth:`Playout.deal` deals a round from any deck, so search
and benchmarks can use a cheap shuffle (:func:`quick_deck`); the match's own
deals stay the verifiable ones of ``protocol/deal.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import p2pkoikoi.engine.actions as A
from p2pkoikoi.engine.actions import Action, ActionKind
from p2pkoikoi.engine.cards import NIBBLE_LOW, SAME_MONTH, month_counts
from p2pkoikoi.engine.match import MatchState, Phase, PlayerView
from p2pkoikoi.engine.rules import (
    AfterKoiKoi,
    BothHandYaku,
    DrawnRound,
    KoiKoiLimit,
    KoiKoiWhen,
    NextDealer,
    RainOut,
    RuleSet,
    Scoring,
)
from p2pkoikoi.engine.yaku import YakuScore, four_pairs, hand_yaku, score, total_function

PLAY = 0
DRAW_CHOICE = 1
KOIKOI = 2
SWAP = 3
DONE = 4

_PHASE_OF = {Phase.PLAY: PLAY, Phase.DRAW_CHOICE: DRAW_CHOICE, Phase.KOIKOI: KOIKOI}
_COUNT_TWO = 0x222222222222
_COUNT_FOUR = 0x444444444444
_IDS = tuple(range(48))
_FACT48 = math.factorial(48)

#: card ids of each byte value, for the six bytes of a 48-bit mask
_IDS_BY_BYTE: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(6)
)


def _two_card_months(field: int) -> int:
    """Mask of the months holding exactly two of ``field``'s cards (as in match.py)."""
    y = month_counts(field) ^ _COUNT_TWO
    nonzero = (y | (y >> 1) | (y >> 2) | (y >> 3)) & NIBBLE_LOW
    return (~nonzero & NIBBLE_LOW) * 0xF


def _ids(mask: int) -> tuple[int, ...]:
    t = _IDS_BY_BYTE
    return (
        t[0][mask & 0xFF]
        + t[1][(mask >> 8) & 0xFF]
        + t[2][(mask >> 16) & 0xFF]
        + t[3][(mask >> 24) & 0xFF]
        + t[4][(mask >> 32) & 0xFF]
        + t[5][mask >> 40]
    )


class RandomSource(Protocol):
    """What :func:`quick_deck` needs of a random source (``random.Random`` has it): the
    engine takes randomness as a parameter and never imports a global one."""

    def randrange(self, stop: int, /) -> int: ...


def quick_deck(rng: RandomSource) -> list[int]:
    """A uniformly random deck from ``rng``, cheaply: one big random number read as
    the 47 Fisher-Yates choices (mixed radix).  Not verifiable; for search only."""
    x = rng.randrange(_FACT48)
    deck = list(_IDS)
    for i in range(47, 0, -1):
        x, j = divmod(x, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


class _Plan:
    """What a rule set means for the round, read once per ``RuleSet`` (enums as bools)."""

    __slots__ = (
        "rules",
        "tally",
        "tally_called",
        "forced",
        "rain_field",
        "next_yaku_ends",
        "once_per_round",
        "once_per_player",
        "not_last_turn",
        "not_hand_empty",
        "oya_ken",
        "dealer_passes",
        "winner_deals",
        "pool",
        "pay_cap",
        "points",
    )

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.tally = total_function(rules)
        #: the total of a pile whose owner has called koi-koi (``viewing_after_koikoi``)
        self.tally_called = total_function(rules, called=True)
        self.forced = rules.forced_capture
        self.rain_field = rules.rain_out is RainOut.FIELD
        self.next_yaku_ends = rules.after_koikoi is AfterKoiKoi.NEXT_YAKU_ENDS
        self.once_per_round = rules.koikoi_limit is KoiKoiLimit.ONCE_PER_ROUND
        self.once_per_player = rules.koikoi_limit is KoiKoiLimit.ONCE_PER_PLAYER
        self.not_last_turn = rules.koikoi_when is KoiKoiWhen.NOT_LAST_TURN
        self.not_hand_empty = rules.koikoi_when is KoiKoiWhen.NOT_HAND_EMPTY
        self.oya_ken = rules.drawn_round is DrawnRound.OYA_KEN and rules.oya_ken_points > 0
        self.dealer_passes = rules.drawn_round is DrawnRound.DEALER_PASSES
        self.winner_deals = rules.next_dealer is NextDealer.WINNER
        self.pool = rules.scoring is Scoring.POOL
        self.pay_cap = rules.pool_payment_cap
        #: (yaku total, winner's calls, loser's calls) -> the round's points
        self.points: dict[tuple[int, int, int], int] = {}

    def round_points(self, base: int, calls_winner: int, calls_loser: int) -> int:
        """:func:`~p2pkoikoi.engine.yaku.score` of a yaku total, memoised (its multipliers
        depend only on the total and the calls)."""
        key = (base, calls_winner, calls_loser)
        got = self.points.get(key)
        if got is None:
            got = score((YakuScore("total", base, 0),), self.rules, calls_winner, calls_loser).score
            self.points[key] = got
        return got


_PLANS: dict[int, _Plan] = {}


def _plan(rules: RuleSet) -> _Plan:
    """The plan for ``rules``, cached by identity (the entry holds the rules, so the id
    cannot be reused while cached)."""
    p = _PLANS.get(id(rules))
    if p is None or p.rules is not rules:
        if len(_PLANS) >= 64:
            _PLANS.clear()
        p = _PLANS[id(rules)] = _Plan(rules)
    return p


class Playout:
    """One round of a match on a mutable state, for search; see the module docstring."""

    __slots__ = (
        "plan",
        "tally",
        "hands",
        "piles",
        "field",
        "stock",
        "pos",
        "calls",
        "last",
        "phase",
        "to_act",
        "pending",
        "dealer",
        "scores",
        "gained",
        "winner",
        "reason",
        "redeal",
    )

    plan: _Plan
    tally: Callable[[int, int], int]
    hands: list[int]
    piles: list[int]
    field: int
    stock: tuple[int, ...] | list[int]
    pos: int
    calls: list[int]
    last: list[int]
    phase: int
    to_act: int
    pending: int
    dealer: int
    scores: tuple[int, int]
    gained: tuple[int, int]
    winner: int | None
    reason: str
    redeal: Callable[[], list[int]] | None  # the deck source, for a redeal after a swap

    # ------------------------------------------------------------------ creation
    @classmethod
    def _new(cls, rules: RuleSet, dealer: int, scores: tuple[int, int]) -> Playout:
        s = object.__new__(cls)
        s.plan = plan = _plan(rules)
        s.tally = plan.tally
        s.dealer = dealer
        s.scores = scores
        s.gained = (0, 0)
        s.winner = None
        s.reason = ""
        s.pending = -1
        s.redeal = None
        return s

    @classmethod
    def from_state(cls, state: MatchState) -> Playout:
        """The current round of a :class:`~p2pkoikoi.engine.match.MatchState` (not
        over, not at the hand swap), for example one built by ``determinize``."""
        ph = state._phase
        if ph is Phase.OVER or ph is Phase.HAND_SWAP or state._to_act is None:
            raise ValueError("a playout starts from a state waiting for a play or a choice")
        s = cls._new(state._rules, state._dealer, state._scores)
        s.hands = list(state._hands)
        s.piles = list(state._piles)
        s.field = state._field
        s.stock = state._stock
        s.pos = state._pos
        s.calls = list(state._calls)
        s.last = list(state._last)
        s.phase = _PHASE_OF[ph]
        s.to_act = state._to_act
        s.pending = state._pending
        return s

    @classmethod
    def from_view(
        cls, view: PlayerView, opponent_hand: int = 0, stock: tuple[int, ...] | list[int] = ()
    ) -> Playout:
        """The round ``view`` shows, with a guess at the hidden cards: the opponent's
        hand (a mask) and the stock order.  Like ``determinize``, without its checks
        (a bot copies one of these per guess and sets ``hands`` and ``stock``)."""
        ph = view.phase
        if ph is Phase.OVER or ph is Phase.HAND_SWAP or view.to_act is None:
            raise ValueError("a playout starts from a state waiting for a play or a choice")
        s = cls._new(view.rules, view.dealer, view.scores)
        me = view.seat
        s.hands = [view.hand.mask, opponent_hand] if me == 0 else [opponent_hand, view.hand.mask]
        s.piles = [view.piles[0].mask, view.piles[1].mask]
        drawn = view.drawn
        s.field = view.field.mask | (drawn.bit if drawn is not None else 0)
        s.pending = drawn.id if drawn is not None else -1
        s.stock = stock
        s.pos = 0
        s.calls = list(view.calls)
        s.last = list(view.last_totals)
        s.phase = _PHASE_OF[ph]
        s.to_act = view.to_act
        return s

    @classmethod
    def deal(
        cls,
        rules: RuleSet,
        next_deck: Callable[[], list[int]],
        dealer: int = 0,
        scores: tuple[int, int] = (0, 0),
    ) -> Playout:
        """A round dealt as ``match.py`` deals it, from ``next_deck()`` (called again
        for each redeal): redeals, hand yaku and the hand swap offer included."""
        s = cls._new(rules, dealer, scores)
        s.redeal = next_deck
        s._lay_out()
        return s

    def _lay_out(self) -> None:
        """Deal from ``self.redeal`` until a deal stands; stop at its first decision."""
        s = self
        r = self.plan.rules
        dealer = self.dealer
        next_deck = self.redeal
        assert next_deck is not None
        while True:
            deck = next_deck()
            nd = fd = dl = 0
            for k in (0, 6, 12, 18):
                nd |= (1 << deck[k]) | (1 << deck[k + 1])
                fd |= (1 << deck[k + 2]) | (1 << deck[k + 3])
                dl |= (1 << deck[k + 4]) | (1 << deck[k + 5])
            s.hands = [dl, nd] if dealer == 0 else [nd, dl]
            s.field = fd
            s.stock = deck[24:]
            s.pos = 0
            s.piles = [0, 0]
            s.calls = [0, 0]
            s.last = [0, 0]
            if not r.hand_yaku_before_field_redeal and _field_redeal(r, fd):
                continue
            if r.hand_swap:
                s.phase = SWAP
                s.to_act = 1 - dealer
                return
            if not s._after_deal():
                return

    def _after_deal(self) -> bool:
        """The checks after the deal and any swap, as ``match._after_deal``; True: deal again."""
        r = self.plan.rules
        hands = self.hands
        dealer = self.dealer
        for h in hands:
            if (r.redeal_hand_four_of_month and month_counts(h) & _COUNT_FOUR) or (
                r.redeal_hand_four_pairs and four_pairs(h)
            ):
                return True
        hy = (hand_yaku(hands[0], r), hand_yaku(hands[1], r))
        if hy[0] is not None or hy[1] is not None:
            if hy[0] is not None and hy[1] is not None:
                mode = r.both_hand_yaku
                if mode is BothHandYaku.REDEAL:
                    return True
                if mode is BothHandYaku.DRAW:
                    self._over(None, "both_hand_yaku", 0, 0)
                    return False
                if mode is BothHandYaku.BOTH_SCORE:
                    b0 = score((hy[0],), r, 0, 0).score
                    b1 = score((hy[1],), r, 0, 0).score
                    self._over(None, "both_hand_yaku", b0, b1)
                    return False
                winner = dealer
            else:
                winner = 0 if hy[0] is not None else 1
            pts = score((hy[winner],), r, 0, 0).score  # type: ignore[arg-type]
            self._over(winner, "hand_yaku", pts if winner == 0 else 0, pts if winner == 1 else 0)
            return False
        if r.hand_yaku_before_field_redeal and _field_redeal(r, self.field):
            return True
        self.phase = PLAY
        self.to_act = dealer
        return False

    def copy(self) -> Playout:
        """An independent copy (the one copy a playout costs)."""
        n = object.__new__(Playout)
        n.plan = self.plan
        n.tally = self.tally
        n.hands = self.hands[:]
        n.piles = self.piles[:]
        n.field = self.field
        n.stock = self.stock
        n.pos = self.pos
        n.calls = self.calls[:]
        n.last = self.last[:]
        n.phase = self.phase
        n.to_act = self.to_act
        n.pending = self.pending
        n.dealer = self.dealer
        n.scores = self.scores
        n.gained = self.gained
        n.winner = self.winner
        n.reason = self.reason
        n.redeal = self.redeal
        return n

    # ------------------------------------------------------------------ moves
    def plays(self) -> list[int] | tuple[int, ...]:
        """The legal play moves (phase ``PLAY``)."""
        hand = self.hands[self.to_act]
        field = self.field
        if self.plan.forced:
            matching = 0
            for c in _ids(hand):
                if field & SAME_MONTH[c]:
                    matching |= 1 << c
            if matching:
                hand = matching
        # months with exactly two field cards (SWAR nibble counts, as in match.py)
        y = field - ((field >> 1) & 0x555555555555)
        y = ((y & 0x333333333333) + ((y >> 2) & 0x333333333333)) ^ _COUNT_TWO
        two = hand & ~(((y | (y >> 1) | (y >> 2) | (y >> 3)) & NIBBLE_LOW) * 0xF)
        t = _IDS_BY_BYTE
        if not two:
            return (
                t[0][hand & 0xFF]
                + t[1][(hand >> 8) & 0xFF]
                + t[2][(hand >> 16) & 0xFF]
                + t[3][(hand >> 24) & 0xFF]
                + t[4][(hand >> 32) & 0xFF]
                + t[5][hand >> 40]
            )
        out = list(_ids(hand & ~two))
        for c in _ids(two):
            m = field & SAME_MONTH[c]
            t1 = m & -m
            out.append(c + 64 * t1.bit_length())
            out.append(c + 64 * (m ^ t1).bit_length())
        return out

    def moves(self) -> list[int] | tuple[int, ...]:
        """The legal moves in any phase (empty once the round is over)."""
        ph = self.phase
        if ph == PLAY:
            return self.plays()
        if ph == DRAW_CHOICE:
            d = self.pending
            return list(_ids(self.field & SAME_MONTH[d]))
        if ph == DONE:
            return ()
        return (1, 0)

    def do(self, move: int) -> None:
        """Make ``move`` (a legal one) in the current phase."""
        ph = self.phase
        if ph == PLAY:
            self.play(move & 63, (move >> 6) - 1)
        elif ph == DRAW_CHOICE:
            self.take(move)
        elif ph == KOIKOI:
            self.decide(bool(move))
        elif ph == SWAP:
            self.swap(bool(move))
        else:
            raise ValueError("the round is over")

    def play(self, c: int, target: int = -1) -> None:
        """A whole turn: play hand card ``c`` (taking ``target`` where two field cards
        match), draw, and everything that follows up to the next decision."""
        p = self.to_act
        bit = 1 << c
        self.hands[p] ^= bit
        field = self.field
        piles = self.piles
        m = field & SAME_MONTH[c]
        if m:
            taken = m if target < 0 else 1 << target
            field &= ~taken
            piles[p] |= taken | bit
            captured = True
        else:
            field |= bit
            captured = False
        pos = self.pos
        d = self.stock[pos]
        self.pos = pos + 1
        dbit = 1 << d
        m = field & SAME_MONTH[d]
        if m:
            rest = m & (m - 1)
            if rest and not rest & (rest - 1):  # two matches: the player chooses
                self.field = field | dbit
                self.pending = d
                self.phase = DRAW_CHOICE
                return
            self.field = field & ~m
            piles[p] |= m | dbit
            self._end_turn(p)
            return
        self.field = field | dbit
        if captured or self.plan.rain_field:
            self._end_turn(p)
            return
        hands = self.hands
        if hands[0] | hands[1]:  # nothing captured: the total cannot rise; pass the turn
            self.to_act = 1 - p
        else:
            self._drawn()

    def take(self, target: int) -> None:
        """In ``DRAW_CHOICE``: the drawn card takes field card ``target``."""
        p = self.to_act
        gained = (1 << target) | (1 << self.pending)
        self.field &= ~gained
        self.piles[p] |= gained
        self.pending = -1
        self._end_turn(p)

    def decide(self, koikoi: bool) -> None:
        """In ``KOIKOI``: call koi-koi (play on) or stop (score the round)."""
        p = self.to_act
        if not koikoi:
            self._win(p, "stop")
            return
        self.calls[p] += 1
        self.last[p] = self.plan.tally_called(self.piles[p], self.field)
        self._pass(p)

    def swap(self, swap: bool) -> None:
        """In ``SWAP``: the non-dealer swaps hands or keeps them."""
        if swap:
            self.hands.reverse()
        if self._after_deal():
            self._lay_out()

    # ------------------------------------------------------------------ round flow
    def _end_turn(self, p: int) -> None:
        """After a turn that captured (or under rain-out, any turn): a raised total
        offers a choice or ends the round; otherwise the turn passes."""
        tally = self.plan.tally_called if self.calls[p] else self.tally
        if tally(self.piles[p], self.field) > self.last[p]:
            calls = self.calls
            if self.plan.next_yaku_ends and (calls[0] or calls[1]):
                self._win(p, "next_yaku")
                return
            if self._may_call(p):
                self.phase = KOIKOI
                return
            self._win(p, "stop")
            return
        hands = self.hands
        if not (hands[0] | hands[1]):
            self._drawn()
            return
        self.phase = PLAY
        self.to_act = 1 - p

    def _pass(self, p: int) -> None:
        hands = self.hands
        if not (hands[0] | hands[1]):
            self._drawn()
            return
        self.phase = PLAY
        self.to_act = 1 - p

    def _may_call(self, p: int) -> bool:
        plan = self.plan
        calls = self.calls
        if plan.once_per_round and (calls[0] or calls[1]):
            return False
        if plan.once_per_player and calls[p]:
            return False
        if plan.not_last_turn and not (self.hands[0] | self.hands[1]):
            return False
        return not (plan.not_hand_empty and not self.hands[p])

    def _win(self, p: int, reason: str) -> None:
        plan = self.plan
        tally = plan.tally_called if self.calls[p] else self.tally
        pts = plan.round_points(tally(self.piles[p], self.field), self.calls[p], self.calls[1 - p])
        if p == 0:
            self._over(0, reason, pts, 0)
        else:
            self._over(1, reason, 0, pts)

    def _drawn(self) -> None:
        plan = self.plan
        if plan.oya_ken:
            pts = plan.rules.oya_ken_points
            d = self.dealer
            self._over(d, "oya_ken", pts if d == 0 else 0, pts if d == 1 else 0)
        else:
            self._over(None, "drawn", 0, 0)

    def _over(self, winner: int | None, reason: str, g0: int, g1: int) -> None:
        if self.plan.pool and self.plan.pay_cap:
            s0, s1 = self.scores
            g0, g1 = min(g0, s1), min(g1, s0)
        self.gained = (g0, g1)
        self.winner = winner
        self.reason = reason
        self.phase = DONE

    @property
    def next_dealer(self) -> int:
        """Who deals the next round (once ``DONE``; a both-hand-yaku draw redraws instead)."""
        plan = self.plan
        w = self.winner
        if w is None:
            return 1 - self.dealer if plan.dealer_passes else self.dealer
        if self.reason == "oya_ken":
            return self.dealer
        return w if plan.winner_deals else 1 - self.dealer


def _field_redeal(r: RuleSet, field: int) -> bool:
    return bool(
        (r.redeal_field_four_of_month and month_counts(field) & _COUNT_FOUR)
        or (r.redeal_field_four_pairs and four_pairs(field))
    )


def move_of(action: Action) -> int:
    """The :class:`Playout` move for a legal ``action``."""
    kind = action.kind
    card = action.card
    if kind is ActionKind.PLAY:
        assert card is not None
        t = action.target
        return card.id if t is None else card.id + 64 * (t.id + 1)
    if kind is ActionKind.TAKE:
        assert card is not None
        return card.id
    return 1 if kind is ActionKind.KOIKOI or kind is ActionKind.SWAP else 0


def action_of(phase: int, move: int) -> Action:
    """The :class:`Action` for ``move`` in ``phase`` (the inverse of :func:`move_of`)."""
    if phase == PLAY:
        c, t = move & 63, (move >> 6) - 1
        return A.PLAY[c] if t < 0 else A.PLAY_TAKING[c][t]
    if phase == DRAW_CHOICE:
        return A.TAKE[move]
    if phase == KOIKOI:
        return A.KOIKOI if move else A.STOP
    if phase == SWAP:
        return A.SWAP if move else A.KEEP
    raise ValueError("no move once the round is over")
