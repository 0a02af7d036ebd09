"""The round and match state machine.

Theory of operation
-------------------
A :class:`MatchState` is an immutable snapshot of a whole match: the rules,
the match seed, the scores, the results of finished rounds and the current
round (hands, field, piles, stock, koi-koi calls).  The only way forward is
:meth:`MatchState.apply`, which validates an :class:`~p2pkoikoi.engine.actions.Action`
and returns a *new* state plus the events the action caused.  Everything that
needs no decision happens inside ``apply``: the draw from the stock, captures
with one or three matching cards, scoring a round, dealing the next round,
redeals and hand yaku.  So a state always waits for exactly one player's
decision (``to_act``), or the match is over.

Decision points (:class:`Phase`):

* ``HAND_SWAP`` -- the rulebook's offer to the non-dealer to swap hands before looking;
* ``PLAY``      -- play a hand card (choosing which of two matching field cards to take);
* ``DRAW_CHOICE`` -- the drawn card matches two field cards: take one;
* ``KOIKOI``    -- the turn raised the player's yaku total: call koi-koi or stop.

A decision with a single legal answer is made automatically (a capture with
one match, a stop when koi-koi is not allowed), so it never costs a message.

Speed: card sets are ``int`` bitmasks and the state is a ``__slots__`` object
whose fields are private and set only while a new state is being built inside
``apply``; outside that, nothing mutates a state.  Yaku totals come from
:func:`p2pkoikoi.engine.yaku.total`, which works on masks.

Seats are 0 and 1 (on the network, 0 is the host).  Every random choice comes
from the match seed through :mod:`p2pkoikoi.engine.deal`, so the same rules,
seed and actions give the same states on any machine.
"""

from __future__ import annotations

import enum
import struct

import p2pkoikoi.engine.actions as A
from p2pkoikoi.engine.actions import Action, ActionKind
from p2pkoikoi.engine.cards import (
    ALL_MASK,
    CARDS,
    MONTH_MASKS,
    MONTH_OF,
    NIBBLE_LOW,
    SAME_MONTH,
    Card,
    CardSet,
    iter_mask,
    month_counts,
)
from p2pkoikoi.engine.deal import coin, dealer_draw, derive_deck
from p2pkoikoi.engine.digest import sha256
from p2pkoikoi.engine.errors import IllegalActionError, InputError
from p2pkoikoi.engine.events import (
    DealerChosen,
    Drew,
    HandSwapDecided,
    HandYaku,
    KoiKoiCalled,
    MatchEnded,
    Played,
    Redealt,
    Resigned,
    RoundEnded,
    RoundStarted,
    Took,
    YakuMade,
    cards_of,
)
from p2pkoikoi.engine.rules import (
    AfterKoiKoi,
    BothHandYaku,
    CardDrawTie,
    DealMode,
    DrawnRound,
    FirstDealer,
    KoiKoiLimit,
    KoiKoiWhen,
    NextDealer,
    RainOut,
    RuleSet,
    Scoring,
)
from p2pkoikoi.engine.values import value
from p2pkoikoi.engine.yaku import (
    ScoreBreakdown,
    YakuScore,
    evaluate,
    four_pairs,
    hand_yaku,
    score,
    total,
    total_function,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from p2pkoikoi.engine.events import Event


STATE_HASH_TAG = b"p2pkoikoi/state/v1\x00"


class Phase(enum.Enum):
    HAND_SWAP = "hand_swap"
    PLAY = "play"
    DRAW_CHOICE = "draw_choice"
    KOIKOI = "koikoi"
    OVER = "over"
    DEAL = "deal"  # deal = hidden: waiting for the deck of a mental-poker deal (:meth:`deal`)


_PHASE_CODE = {p: i for i, p in enumerate(Phase)}

# Enum members read during play, as module globals: in CPython 3.11 ``Phase.PLAY`` is a
# lookup through the enum's metaclass (about 70 ns), a module global a few ns.
_PLAY = Phase.PLAY
_DRAW_CHOICE = Phase.DRAW_CHOICE
_KOIKOI = Phase.KOIKOI
_OVER = Phase.OVER
_HAND_SWAP = Phase.HAND_SWAP
_DEAL = Phase.DEAL
_KIND_PLAY = ActionKind.PLAY
_KIND_TAKE = ActionKind.TAKE
_KIND_KOIKOI = ActionKind.KOIKOI
_KIND_STOP = ActionKind.STOP
_KIND_SWAP = ActionKind.SWAP
_KIND_KEEP = ActionKind.KEEP
_POOL = Scoring.POOL
_WINNER_DEALS = NextDealer.WINNER
_HIDDEN_DEAL = DealMode.HIDDEN
_ONCE_PER_ROUND = KoiKoiLimit.ONCE_PER_ROUND
_ONCE_PER_PLAYER = KoiKoiLimit.ONCE_PER_PLAYER
_NOT_LAST_TURN = KoiKoiWhen.NOT_LAST_TURN
_NOT_HAND_EMPTY = KoiKoiWhen.NOT_HAND_EMPTY
_RAIN_OUT_FIELD = RainOut.FIELD
_KIND_RANK = {"b": 0, "a": 1, "r": 2, "c": 3}  # card draw: a lower rank is worth more


@value
class RoundResult:
    """How one finished round went; ``gained`` is what each seat got, after any pool cap."""

    round: int
    dealer: int
    winner: int | None
    reason: str
    breakdown: ScoreBreakdown | None
    gained: tuple[int, int]


_COUNT_FOUR = 0x444444444444


def _four_of_month(mask: int) -> bool:
    return bool(month_counts(mask) & _COUNT_FOUR)


def _plays_by_byte() -> tuple[tuple[tuple[Action, ...], ...], ...]:
    """``[k][b]``: the plays of the cards ``8 * k + i`` for each bit ``i`` of ``b``, in order.

    Built by extending the row of ``b`` without its highest bit: one tuple each,
    with no generator per byte, so the engine's import stays short."""
    out = []
    for k in range(6):
        row: list[tuple[Action, ...]] = [()]
        for i in range(8):
            play = (A.PLAY[8 * k + i],)
            row += [r + play for r in row]
        out.append(tuple(row))
    return tuple(out)


_PLAYS_BY_BYTE = _plays_by_byte()
_KOIKOI_OR_STOP = (A.KOIKOI, A.STOP)
_PLAYS_0, _PLAYS_1, _PLAYS_2, _PLAYS_3, _PLAYS_4, _PLAYS_5 = _PLAYS_BY_BYTE  # one global load each


class MatchState:
    """An immutable snapshot of a match; see the module docstring."""

    __slots__ = (
        "_rules",
        "_seed",
        "_round",
        "_attempt",
        "_dealer",
        "_scores",
        "_results",
        "_phase",
        "_to_act",
        "_hands",
        "_field",
        "_piles",
        "_stock",
        "_pos",
        "_calls",
        "_last",
        "_pending",
        "_winner",
        "_end",
        "_tally",
    )

    _rules: RuleSet
    _seed: bytes
    _round: int
    _attempt: int
    _dealer: int
    _scores: tuple[int, int]
    _results: tuple[RoundResult, ...]
    _phase: Phase
    _to_act: int | None
    _hands: tuple[int, int]
    _field: int
    _piles: tuple[int, int]
    _stock: tuple[int, ...]
    _pos: int
    _calls: tuple[int, int]
    _last: tuple[int, int]
    _pending: int
    _winner: int | None
    _end: str
    _tally: Callable[[int, int], int]  # yaku total of (pile, field) under these rules

    def __init__(self) -> None:
        raise TypeError("use new_match() or MatchState.start() to create a match")

    # ------------------------------------------------------------------ creation
    @classmethod
    def _blank(cls, rules: RuleSet, seed: bytes) -> MatchState:
        """A match before its first deal: the match-level fields every constructor shares."""
        s = object.__new__(cls)
        s._rules = rules
        s._tally = total_function(rules)
        s._seed = bytes(seed)
        s._round = 1
        s._attempt = 0
        s._scores = (rules.pool_stake, rules.pool_stake) if rules.scoring is _POOL else (0, 0)
        s._results = ()
        s._winner = None
        s._end = ""
        s._pending = -1
        return s

    @classmethod
    def start(cls, rules: RuleSet, match_seed: bytes) -> tuple[MatchState, tuple[Event, ...]]:
        """The match at its first decision, and the events of choosing a dealer and dealing."""
        ev: list[Event] = []
        return cls._started(rules, match_seed, ev), tuple(ev)

    @classmethod
    def _started(cls, rules: RuleSet, match_seed: bytes, ev: list[Event] | None) -> MatchState:
        """:meth:`start`'s state; its events go to ``ev`` (None: no events are made)."""
        if not isinstance(rules, RuleSet):
            raise InputError("rules must be a RuleSet")
        if not isinstance(match_seed, (bytes, bytearray)) or len(match_seed) != 32:
            raise InputError("match seed must be exactly 32 bytes (64 hex digits)")
        s = cls._blank(rules, match_seed)
        s._dealer = _choose_dealer(rules, s._seed, 0, ev)
        _begin_round(s, ev)
        return s

    @classmethod
    def position(  # noqa: PLR0913 -- a position by hand, one keyword per part of the table
        cls,
        rules: RuleSet,
        *,
        hands: tuple[str, str],
        field: str,
        stock: str = "",
        piles: tuple[str, str] = ("", ""),
        dealer: int = 0,
        to_act: int | None = None,
        calls: tuple[int, int] = (0, 0),
        scores: tuple[int, int] | None = None,
        round: int = 1,
        seed: bytes = bytes(32),
        deal_rules: bool = False,
    ) -> MatchState:
        """A state set up by hand, like a chess position: cards as space-separated codes.

        For tests, puzzles and examples.  No card may appear twice.  ``stock``
        lists the next cards to be drawn, left to right; every card not named
        anywhere follows them in id order.  Later rounds are dealt from ``seed``.

        By default play starts at once, whatever the cards.  ``deal_rules=True``
        treats the position as a fresh deal (8 cards in each hand and on the
        field, no piles, no calls) and applies what a real deal would: a redeal
        (dealt from ``seed``, as attempt 1), the hand-swap offer, hand yaku (the
        round may be over, and the next one dealt, before anyone plays) -- so a
        round rebuilt from a recorded deal behaves as it did.
        """
        from p2pkoikoi.engine.cards import parse_cards

        def mask(text: str) -> int:
            m = 0
            for c in parse_cards(text.split()):
                m |= c.bit
            return m

        parts = [mask(hands[0]), mask(hands[1]), mask(field), mask(piles[0]), mask(piles[1])]
        stock_ids = tuple(c.id for c in parse_cards(stock.split()))
        smask = 0
        for i in stock_ids:
            smask |= 1 << i
        seen = 0
        for m in parts + [smask]:
            if seen & m:
                raise InputError("a card appears twice in the position")
            seen |= m
        stock_ids += tuple(iter_mask(ALL_MASK & ~seen))
        s = cls._blank(rules, seed)
        s._round = round
        s._dealer = dealer
        if scores is not None:
            s._scores = scores
        s._phase = _PLAY
        s._to_act = dealer if to_act is None else to_act
        s._hands = (parts[0], parts[1])
        s._field = parts[2]
        s._piles = (parts[3], parts[4])
        s._stock = stock_ids
        s._pos = 0
        s._calls = calls
        # A player who has called stands at their current total: only a raise offers a choice.
        s._last = (
            total(parts[3], rules, parts[2], True) if calls[0] else 0,
            total(parts[4], rules, parts[2], True) if calls[1] else 0,
        )
        if deal_rules:
            if (
                any(m.bit_count() != 8 for m in parts[:3])
                or parts[3]
                or parts[4]
                or calls != (0, 0)
                or s._to_act != dealer
            ):
                raise InputError(
                    "deal_rules needs a fresh deal: 8 cards in each hand and on the field,"
                    " no piles, no koi-koi calls, the dealer to act"
                )
            if _deal_rules(s, []):
                s._attempt += 1
                _begin_round(s, None)
        return s

    def _copy(self) -> MatchState:
        n = object.__new__(MatchState)
        n._rules = self._rules
        n._seed = self._seed
        n._round = self._round
        n._attempt = self._attempt
        n._dealer = self._dealer
        n._scores = self._scores
        n._results = self._results
        n._phase = self._phase
        n._to_act = self._to_act
        n._hands = self._hands
        n._field = self._field
        n._piles = self._piles
        n._stock = self._stock
        n._pos = self._pos
        n._calls = self._calls
        n._last = self._last
        n._pending = self._pending
        n._winner = self._winner
        n._end = self._end
        n._tally = self._tally
        return n

    # ------------------------------------------------------------------ reading
    @property
    def rules(self) -> RuleSet:
        return self._rules

    @property
    def match_seed(self) -> bytes:
        return self._seed

    @property
    def round(self) -> int:
        """The current round, from 1 (after the match: the last round played)."""
        return self._round

    @property
    def attempt(self) -> int:
        """How many times this round was dealt again."""
        return self._attempt

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def to_act(self) -> int | None:
        return self._to_act

    @property
    def scores(self) -> tuple[int, int]:
        """Pool amounts (pool scoring) or running totals (sum scoring)."""
        return self._scores

    @property
    def results(self) -> tuple[RoundResult, ...]:
        return self._results

    @property
    def is_over(self) -> bool:
        return self._phase is _OVER

    @property
    def winner(self) -> int | None:
        """The match winner once it is over; ``None`` for a draw or a match in play."""
        return self._winner

    @property
    def end_reason(self) -> str:
        return self._end

    def hand(self, seat: int) -> CardSet:
        return CardSet(self._hands[seat])

    def pile(self, seat: int) -> CardSet:
        return CardSet(self._piles[seat])

    @property
    def field(self) -> CardSet:
        return CardSet(self._field)

    @property
    def stock(self) -> tuple[Card, ...]:
        """The cards still in the stock, the next to be drawn first (hidden information)."""
        return tuple(CARDS[i] for i in self._stock[self._pos :])

    @property
    def calls(self) -> tuple[int, int]:
        """Koi-koi calls by each seat this round."""
        return self._calls

    @property
    def drawn_card(self) -> Card | None:
        """In ``DRAW_CHOICE``: the drawn card waiting to take one of two field cards."""
        return CARDS[self._pending] if self._pending >= 0 else None

    def yaku(self, seat: int) -> tuple[YakuScore, ...]:
        return evaluate(self._piles[seat], self._rules, self._field, self._calls[seat] > 0)

    def yaku_total(self, seat: int) -> int:
        return total(self._piles[seat], self._rules, self._field, self._calls[seat] > 0)

    def last_total(self, seat: int) -> int:
        """The yaku total at this seat's last koi-koi call (a raise beyond it offers a choice)."""
        return self._last[seat]

    def potential_score(self, seat: int) -> ScoreBreakdown:
        """What stopping now would be worth to ``seat`` (before any pool cap)."""
        return score(self.yaku(seat), self._rules, self._calls[seat], self._calls[1 - seat])

    def __repr__(self) -> str:
        return (
            f"<MatchState round {self._round}/{self._rules.rounds} {self._phase.value}"
            f" to_act={self._to_act} scores={self._scores} hash={self.state_hash().hex()[:12]}>"
        )

    # ------------------------------------------------------------------ actions
    def legal_actions(self) -> tuple[Action, ...]:
        ph = self._phase
        if ph is _PLAY:
            p = self._to_act
            assert p is not None
            hand = self._hands[p]
            field = self._field
            if self._rules.forced_capture:
                matching = 0
                for c in iter_mask(hand):
                    if field & SAME_MONTH[c]:
                        matching |= 1 << c
                if matching:
                    hand = matching
            # Hand cards of a month with exactly two field cards need a choice of
            # capture; every other card is one action, looked up by byte.  (This runs
            # every decision: cards are four per month, so a month is a nibble of the
            # mask; cards.month_counts inlined counts every nibble's bits at once, and
            # a count of 2 = 0b010 is where bit 1 is set and bits 0 and 2 are not.)
            y = field - ((field >> 1) & 0x555555555555)
            y = (y & 0x333333333333) + ((y >> 2) & 0x333333333333)
            two = hand & ((((y >> 1) & ~(y | (y >> 2))) & NIBBLE_LOW) * 0xF)
            if not two:
                return (
                    _PLAYS_0[hand & 0xFF]
                    + _PLAYS_1[(hand >> 8) & 0xFF]
                    + _PLAYS_2[(hand >> 16) & 0xFF]
                    + _PLAYS_3[(hand >> 24) & 0xFF]
                    + _PLAYS_4[(hand >> 32) & 0xFF]
                    + _PLAYS_5[hand >> 40]
                )
            single = hand & ~two
            out = (
                _PLAYS_0[single & 0xFF]
                + _PLAYS_1[(single >> 8) & 0xFF]
                + _PLAYS_2[(single >> 16) & 0xFF]
                + _PLAYS_3[(single >> 24) & 0xFF]
                + _PLAYS_4[(single >> 32) & 0xFF]
                + _PLAYS_5[single >> 40]
            )
            # Insert each choosing card's two actions where its id sorts, highest
            # card first so earlier insertion points stay valid.
            merged = list(out)
            while two:
                c = two.bit_length() - 1
                two ^= 1 << c
                row = A.PLAY_TAKING[c]
                m = field & SAME_MONTH[c]
                t1 = m & -m
                at = (single & ((1 << c) - 1)).bit_count()
                merged[at:at] = (row[t1.bit_length() - 1], row[(m ^ t1).bit_length() - 1])
            return tuple(merged)
        if ph is _KOIKOI:
            return _KOIKOI_OR_STOP
        if ph is _DRAW_CHOICE:
            d = self._pending
            m = self._field & MONTH_MASKS[MONTH_OF[d]] & ~(1 << d)
            return tuple(A.TAKE[t] for t in iter_mask(m))
        if ph is _HAND_SWAP:
            return (A.SWAP, A.KEEP)
        return ()  # OVER, DEAL

    # ------------------------------------------------------------------ the hidden deal
    def deal(self, deck: tuple[int, ...]) -> tuple[MatchState, tuple[Event, ...]]:
        """In ``Phase.DEAL`` (rule ``deal = hidden``): deal this round from ``deck``.

        ``deck`` lists all 48 card ids, top first, laid out as from the seed
        (``protocol/deal.md``).  A session passes the deck as far as its side
        knows it, hidden cards filled in (:meth:`rehand` places them anew as
        they are revealed); a verifier passes the audited deck.
        """
        if self._phase is not _DEAL:
            raise IllegalActionError("no deal is due")
        if sorted(deck) != list(range(48)):
            raise InputError("a deck lists each of the 48 cards once")
        s = self._copy()
        ev: list[Event] = []
        _begin_round(s, ev, tuple(deck))
        return s, tuple(ev)

    def rehand(self, hands: tuple[int, int], stock: tuple[int, ...]) -> MatchState:
        """A copy with the hands and the rest of the stock replaced by other cards.

        For the hidden deal, where a side fills the cards it has not seen with
        stand-ins: the new hands and stock must hold the same number of cards,
        and together the same cards, as the old ones.
        """
        old_stock = self._stock[self._pos :]
        old = self._hands[0] | self._hands[1]
        new = hands[0] | hands[1]
        for c in old_stock:
            old |= 1 << c
        for c in stock:
            new |= 1 << c
        if (
            hands[0] & hands[1]
            or old != new
            or len(stock) != len(old_stock)
            or len(set(stock)) != len(stock)
            or hands[0].bit_count() != self._hands[0].bit_count()
            or hands[1].bit_count() != self._hands[1].bit_count()
        ):
            raise InputError("the new hands and stock must hold the same cards as the old")
        s = self._copy()
        s._hands = (hands[0], hands[1])
        s._stock = self._stock[: self._pos] + tuple(stock)
        return s

    def is_legal(self, action: Action) -> bool:
        return action in self.legal_actions()

    def apply(self, action: Action) -> tuple[MatchState, tuple[Event, ...]]:
        """The state after ``action`` and the events it caused.

        Raises :class:`IllegalActionError` (naming the action and why) if the
        rules do not allow it here; ``self`` is never changed.
        """
        if self._phase is _PLAY and action.kind is _KIND_PLAY:  # the common case
            return self._play(action, True)
        ev: list[Event] = []
        s = self._apply(action, ev)
        return s, tuple(ev)

    def after(self, action: Action) -> MatchState:
        """Like :meth:`apply` but without collecting events (bots search with the
        faster :class:`~p2pkoikoi.engine.playout.Playout`)."""
        if self._phase is _PLAY and action.kind is _KIND_PLAY:
            return self._play(action, False)[0]
        return self._apply(action, None)

    def resign(self, seat: int) -> tuple[MatchState, tuple[Event, ...]]:
        """``seat`` gives up: the match ends and the other seat wins."""
        if seat not in (0, 1):
            raise InputError("seat must be 0 or 1")
        if self.is_over:
            raise IllegalActionError("the match is already over")
        s = self._copy()
        ev: list[Event] = [Resigned(seat)]
        s._phase = _OVER
        s._to_act = None
        s._winner = 1 - seat
        s._end = "resign"
        ev.append(MatchEnded(s._scores, s._winner, "resign"))
        return s, tuple(ev)

    def _apply(self, action: Action, ev: list[Event] | None) -> MatchState:
        """Every action but a play in the play phase (``apply`` and ``after`` call
        ``_play`` for that themselves, so it is not checked again here)."""
        ph = self._phase
        kind = action.kind
        if ph is _KOIKOI and (kind is _KIND_KOIKOI or kind is _KIND_STOP):
            return self._decide(kind is _KIND_KOIKOI, ev)
        if ph is _DRAW_CHOICE and kind is _KIND_TAKE:
            return self._take(action, ev)
        if ph is _HAND_SWAP and (kind is _KIND_SWAP or kind is _KIND_KEEP):
            return self._swap(kind is _KIND_SWAP, ev)
        if ph is _OVER:
            raise IllegalActionError(f"illegal action {action}: the match is over")
        if ph is _DEAL:
            raise IllegalActionError(f"illegal action {action}: the cards are not dealt yet")
        raise IllegalActionError(f"illegal action {action}: expected {_EXPECTED[ph]}")

    def _play(self, action: Action, events: bool) -> tuple[MatchState, tuple[Event, ...]]:
        """A whole turn: the play, the draw, the captures and the turn's end, in one call.

        The new state is built here field by field (not copied, then changed), and a
        plain turn's two events come from ``_PLAYED`` and ``_DREW``: this is most of
        the actions of a match.  ``events`` False returns no events (``after``).
        """
        p = self._to_act
        card = action.card
        assert p is not None and card is not None
        c = card.id
        bit = 1 << c
        hands = self._hands
        hand = hands[p]
        if not hand & bit:
            raise IllegalActionError(f"illegal action {action}: {card.code} is not in your hand")
        field = self._field
        m = field & SAME_MONTH[c]
        rules = self._rules
        if not m and rules.forced_capture:
            for other in iter_mask(hand):
                if field & SAME_MONTH[other]:
                    raise IllegalActionError(
                        f"illegal action {action}: a card that captures must be played"
                        f" ({CARDS[other].code} matches the field)"
                    )
        target = action.target
        rest = m & (m - 1)
        if rest and not rest & (rest - 1):  # exactly two matches: the player chose one
            if target is None or not m & target.bit:
                raise IllegalActionError(
                    f"illegal action {action}: two field cards match; name the one to take"
                    f" ({' or '.join(CARDS[i].code for i in iter_mask(m))})"
                )
            taken = target.bit
        elif target is not None:
            raise IllegalActionError(
                f"illegal action {action}: no choice of capture for {card.code}"
            )
        else:
            taken = m  # 0, 1 or 3 cards
        p0, p1 = self._piles
        if taken:
            field ^= taken
            if p == 0:
                p0 |= taken | bit
            else:
                p1 |= taken | bit
        else:
            field |= bit
        # Draw from the stock.
        pos = self._pos
        d = self._stock[pos]
        dbit = 1 << d
        m = field & SAME_MONTH[d]
        s = _new_state(MatchState)
        s._rules = rules
        s._seed = self._seed
        s._round = self._round
        s._attempt = self._attempt
        s._dealer = self._dealer
        s._scores = self._scores
        s._results = self._results
        s._hands = (hand ^ bit, hands[1]) if p == 0 else (hands[0], hand ^ bit)
        s._stock = self._stock
        s._pos = pos + 1
        calls = s._calls = self._calls
        last = s._last = self._last
        s._winner = self._winner
        s._end = self._end
        tally = s._tally = self._tally
        rest = m & (m - 1)
        if rest and not rest & (rest - 1):  # two field cards match the drawn card: choose
            s._field = field | dbit
            s._piles = (p0, p1)
            s._phase = _DRAW_CHOICE
            s._to_act = p
            s._pending = d
            if events:
                return s, (
                    _PLAYED[(p * 48 + c) << 4 | taken >> (c & 60)],
                    _DREW_PENDING[p * 48 + d],
                )
            return s, ()
        if m:
            field ^= m
            if p == 0:
                p0 |= m | dbit
            else:
                p1 |= m | dbit
        else:
            field |= dbit
        s._field = field
        s._piles = (p0, p1)
        s._pending = -1
        s._phase = _PLAY
        # The end of the turn (_end_turn, inlined for the common turn that raises nothing).
        # A turn that captured nothing cannot raise the total, except under rain-out.
        if taken or m or rules.rain_out is _RAIN_OUT_FIELD:
            t = _seat_total(s, p) if calls[p] else tally(p0 if p == 0 else p1, field)
            if t > last[p]:
                s._to_act = p
                if not events:
                    _raised(s, p, t, None)
                    return s, ()
                ev = self._turn_events(p, c, taken, d, m)
                _raised(s, p, t, ev)
                return s, tuple(ev)
        if hands[1 - p] or hand ^ bit:
            s._to_act = 1 - p
            if events:
                return s, (
                    _PLAYED[(p * 48 + c) << 4 | taken >> (c & 60)],
                    _DREW[(p * 48 + d) << 4 | m >> (d & 60)],
                )
            return s, ()
        s._to_act = p
        if not events:
            _drawn_round(s, None)
            return s, ()
        ev = self._turn_events(p, c, taken, d, m)
        _drawn_round(s, ev)
        return s, tuple(ev)

    @staticmethod
    def _turn_events(p: int, c: int, taken: int, d: int, m: int) -> list[Event]:
        """A turn's ``Played`` and ``Drew`` events, to which the turn's end adds more."""
        return [
            _PLAYED[(p * 48 + c) << 4 | taken >> (c & 60)],
            _DREW[(p * 48 + d) << 4 | m >> (d & 60)],
        ]

    def _take(self, action: Action, ev: list[Event] | None) -> MatchState:
        p = self._to_act
        assert p is not None and action.card is not None
        d = self._pending
        m = self._field & MONTH_MASKS[MONTH_OF[d]] & ~(1 << d)
        t = action.card.bit
        if not m & t:
            raise IllegalActionError(
                f"illegal action {action}: take one of"
                f" {' or '.join(CARDS[i].code for i in iter_mask(m))}"
            )
        s = self._copy()
        gained = t | (1 << d)
        s._field = self._field & ~gained
        if p == 0:
            s._piles = (self._piles[0] | gained, self._piles[1])
        else:
            s._piles = (self._piles[0], self._piles[1] | gained)
        s._pending = -1
        if ev is not None:
            ev.append(_new_event(Took, (p, CARDS[d], (action.card,))))
        _end_turn(s, p, ev)
        return s

    def _decide(self, koikoi: bool, ev: list[Event] | None) -> MatchState:
        p = self._to_act
        assert p is not None
        s = self._copy()
        if not koikoi:
            _win_round(s, p, "stop", ev)
            return s
        calls = (
            (self._calls[0] + 1, self._calls[1]) if p == 0 else (self._calls[0], self._calls[1] + 1)
        )
        s._calls = calls
        t = _seat_total(s, p)  # after the call: viewing yaku at their after-koi-koi value
        s._last = (t, s._last[1]) if p == 0 else (s._last[0], t)
        if ev is not None:
            ev.append(_new_event(KoiKoiCalled, (p, calls[p])))
        _pass_turn(s, p, ev)
        return s

    def _swap(self, swap: bool, ev: list[Event] | None) -> MatchState:
        s = self._copy()
        if swap:
            s._hands = (self._hands[1], self._hands[0])
        if ev is not None:
            ev.append(HandSwapDecided(1 - self._dealer, swap))
        if _after_deal(s, ev):
            s._attempt += 1
            _begin_round(s, ev)
        return s

    # ------------------------------------------------------------------ views and hashes
    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may see: not the opponent's hand, not the stock's order."""
        if seat not in (0, 1):
            raise InputError("seat must be 0 or 1")
        looking = self._phase is not _HAND_SWAP
        return PlayerView(
            seat=seat,
            rules=self._rules,
            round=self._round,
            dealer=self._dealer,
            scores=self._scores,
            results=self._results,
            phase=self._phase,
            to_act=self._to_act,
            hand=CardSet(self._hands[seat] if looking else 0),
            hand_size=self._hands[seat].bit_count(),
            opponent_hand_size=self._hands[1 - seat].bit_count(),
            field=CardSet(self._field),
            piles=(CardSet(self._piles[0]), CardSet(self._piles[1])),
            stock_size=len(self._stock) - self._pos,
            calls=self._calls,
            last_totals=self._last,
            drawn=self.drawn_card,
            legal_actions=self.legal_actions() if self._to_act == seat else (),
            winner=self._winner,
        )

    def encode_state(self) -> bytes:
        """The canonical state encoding hashed by :meth:`state_hash` (``protocol/deal.md``, "State hash")."""
        stock = bytes(self._stock[self._pos :])
        head = struct.pack(
            ">HHBBBiiQQQQQBBHHBBB",  # scores signed: negative only without the pool cap
            self._round,
            self._attempt,
            self._dealer,
            _PHASE_CODE[self._phase],
            255 if self._to_act is None else self._to_act,
            self._scores[0],
            self._scores[1],
            self._hands[0],
            self._hands[1],
            self._field,
            self._piles[0],
            self._piles[1],
            self._calls[0],
            self._calls[1],
            self._last[0],
            self._last[1],
            255 if self._pending < 0 else self._pending,
            255 if self._winner is None else self._winner,
            len(self._results),
        )
        return bytes.fromhex(self._rules.fingerprint()) + head + bytes([len(stock)]) + stock

    def state_hash(self) -> bytes:
        """SHA-256 of a domain tag and :meth:`encode_state`: equal hashes, equal tables."""
        return sha256(STATE_HASH_TAG + self.encode_state()).digest()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MatchState)
            and self._seed == other._seed
            and self._results == other._results
            and self.encode_state() == other.encode_state()
        )

    def __hash__(self) -> int:
        return hash(self.encode_state())


_EXPECTED = {
    Phase.PLAY: "a card to play (play CARD)",
    Phase.KOIKOI: "koikoi or stop",
    Phase.DRAW_CHOICE: "the field card to take with the drawn card (take CARD)",
    Phase.HAND_SWAP: "swap or keep",
    Phase.DEAL: "the deal",
}


# ---------------------------------------------------------------------- round flow
def _choose_dealer(rules: RuleSet, seed: bytes, before_round: int, ev: list[Event] | None) -> int:
    """The first dealer (``before_round`` 0) or a dealer drawn again later."""
    if rules.first_dealer is FirstDealer.COIN:
        d = coin(seed, before_round)
        if ev is not None:
            ev.append(DealerChosen(d, "coin"))
        return d
    draws: list[tuple[Card, Card]] = []
    for attempt in range(0x10000):
        a, b = dealer_draw(seed, before_round, attempt)
        draws.append((a, b))
        if a.month != b.month:
            d = 0 if a.month < b.month else 1
            break
        ra, rb = _KIND_RANK[a.kind.value], _KIND_RANK[b.kind.value]
        if rules.card_draw_tie is CardDrawTie.HIGHER_CARD and ra != rb:
            d = 0 if ra < rb else 1
            break
    else:  # pragma: no cover - 65536 ties in a row cannot happen with SHA-256
        raise RuntimeError("no dealer after 65536 draws")
    if ev is not None:
        ev.append(DealerChosen(d, "card_draw", tuple(draws)))
    return d


def _lay_out(s: MatchState, given: tuple[int, ...] | None = None) -> None:
    """Deal the current round and attempt from the seed (or from ``given``: the hidden deal)."""
    deck = derive_deck(s._seed, s._round, s._attempt) if given is None else given
    nd: int = 0
    fd: int = 0
    dl: int = 0
    for r in range(0, 24 if deck else 0, 6):
        nd |= (1 << deck[r]) | (1 << deck[r + 1])
        fd |= (1 << deck[r + 2]) | (1 << deck[r + 3])
        dl |= (1 << deck[r + 4]) | (1 << deck[r + 5])
    s._hands = (dl, nd) if s._dealer == 0 else (nd, dl)
    s._field = fd
    s._stock = tuple(deck[24:])
    s._pos = 0
    s._piles = (0, 0)
    s._calls = (0, 0)
    s._last = (0, 0)
    s._pending = -1


def _field_redeal_reason(s: MatchState) -> str:
    r = s._rules
    if r.redeal_field_four_of_month and _four_of_month(s._field):
        return "four of a month on the field"
    if r.redeal_field_four_pairs and four_pairs(s._field):
        return "four pairs on the field"
    return ""


def _begin_round(
    s: MatchState, ev: list[Event] | None, given: tuple[int, ...] | None = None
) -> None:
    """Deal (again, while the rules ask for a redeal) and stop at the round's first decision.

    With ``deal = hidden`` every deal waits in ``Phase.DEAL`` for its deck (``given``).
    """
    while True:
        if s._attempt > 0xFFFF:  # pragma: no cover - astronomically unlikely
            raise RuntimeError("too many redeals")
        if given is None and s._rules.deal is _HIDDEN_DEAL:
            _lay_out(s, ())  # an empty table until the deck comes
            s._phase = _DEAL
            s._to_act = None
            return
        _lay_out(s, given)
        given = None
        if ev is not None:
            started = (s._round, s._dealer, s._attempt, cards_of(s._field))
            ev.append(_new_event(RoundStarted, started))
        if not _deal_rules(s, ev):
            return
        s._attempt += 1


def _deal_rules(s: MatchState, ev: list[Event] | None) -> bool:
    """The deal-time rules on a fresh deal: field redeal, hand swap offer, hand checks.

    True means deal again (the caller counts the attempt).  Otherwise the state waits
    at the round's first decision, or the round is already over (a hand yaku).
    """
    if not s._rules.hand_yaku_before_field_redeal:
        reason = _field_redeal_reason(s)
        if reason:
            if ev is not None:
                ev.append(Redealt(s._round, s._attempt + 1, reason))
            return True
    if s._rules.hand_swap:
        s._phase = _HAND_SWAP
        s._to_act = 1 - s._dealer
        return False
    return _after_deal(s, ev)


def _plain_hands(hands: tuple[int, int]) -> bool:
    """Neither hand holds four cards of a month or four pairs (two cards of each of
    four months), the only hands that make a hand yaku or a lucky-hand redeal.

    ``cards.month_counts`` inlined (a nibble per month); a count of 2 = 0b010 is where
    bit 1 is set and bits 0 and 2 are not, a count of 4 where bit 2 is set.
    """
    for h in hands:
        y = h - ((h >> 1) & 0x555555555555)
        y = (y & 0x333333333333) + ((y >> 2) & 0x333333333333)
        if y & _COUNT_FOUR or (((y >> 1) & ~(y | (y >> 2))) & NIBBLE_LOW).bit_count() == 4:
            return False
    return True


def _after_deal(s: MatchState, ev: list[Event] | None) -> bool:
    """Hand checks after the deal (and any swap).  True means deal again."""
    r = s._rules
    dealer = s._dealer
    hands = s._hands
    if not _plain_hands(hands):  # else no hand yaku and no lucky-hand redeal: skip them
        for h in hands:
            if (r.redeal_hand_four_of_month and _four_of_month(h)) or (
                r.redeal_hand_four_pairs and four_pairs(h)
            ):
                if ev is not None:
                    ev.append(Redealt(s._round, s._attempt + 1, "a lucky hand"))
                return True
        hy = (hand_yaku(hands[0], r), hand_yaku(hands[1], r))
        if hy[0] is not None or hy[1] is not None:
            for seat in (dealer, 1 - dealer):
                y = hy[seat]
                if y is not None and ev is not None:
                    ev.append(HandYaku(seat, y, cards_of(hands[seat])))
            if hy[0] is not None and hy[1] is not None:
                mode = r.both_hand_yaku
                if mode is BothHandYaku.REDEAL:
                    if ev is not None:
                        ev.append(
                            Redealt(s._round, s._attempt + 1, "both players hold a hand yaku")
                        )
                    return True
                if mode is BothHandYaku.DRAW:
                    _round_over(s, None, "both_hand_yaku", None, (0, 0), dealer, ev)
                    return False
                if mode is BothHandYaku.BOTH_SCORE:
                    b0 = score((hy[0],), r, 0, 0)
                    b1 = score((hy[1],), r, 0, 0)
                    _round_over(s, None, "both_hand_yaku", None, (b0.score, b1.score), None, ev)
                    return False
                # DEALER_FIRST: the dealer's hand is checked first and counts alone.
                _round_won(s, dealer, (hy[dealer],), "hand_yaku", ev)  # type: ignore[arg-type]
                return False
            winner = 0 if hy[0] is not None else 1
            _round_won(s, winner, (hy[winner],), "hand_yaku", ev)  # type: ignore[arg-type]
            return False
    if r.hand_yaku_before_field_redeal:
        reason = _field_redeal_reason(s)
        if reason:
            if ev is not None:
                ev.append(Redealt(s._round, s._attempt + 1, reason))
            return True
    s._phase = _PLAY
    s._to_act = dealer
    return False


def _seat_total(s: MatchState, p: int) -> int:
    """Seat ``p``'s yaku total now; once ``p`` has called, with ``viewing_after_koikoi``."""
    if s._calls[p] and s._rules.viewing_after_koikoi:
        return total(s._piles[p], s._rules, s._field, called=True)
    return s._tally(s._piles[p], s._field)


def _may_call(s: MatchState, p: int) -> bool:
    r = s._rules
    lim = r.koikoi_limit
    if lim is _ONCE_PER_ROUND and (s._calls[0] or s._calls[1]):
        return False
    if lim is _ONCE_PER_PLAYER and s._calls[p]:
        return False
    when = r.koikoi_when
    if when is _NOT_LAST_TURN and not (s._hands[0] | s._hands[1]):
        return False
    return not (when is _NOT_HAND_EMPTY and not s._hands[p])


def _end_turn(s: MatchState, p: int, ev: list[Event] | None) -> None:
    """After the play and the draw: a raised yaku total offers a choice or ends the round.

    A turn that captured nothing cannot raise the total (only the pile counts),
    except where Willow and Paulownia cards on the field spoil viewing yaku:
    ``_play`` passes such turns on without calling this.
    """
    t = _seat_total(s, p)
    if t > s._last[p]:
        _raised(s, p, t, ev)
        return
    _pass_turn(s, p, ev)


def _raised(s: MatchState, p: int, t: int, ev: list[Event] | None) -> None:
    """The turn raised ``p``'s yaku total to ``t``: offer koi-koi or end the round."""
    if (s._calls[0] or s._calls[1]) and s._rules.after_koikoi is AfterKoiKoi.NEXT_YAKU_ENDS:
        _win_round(s, p, "next_yaku", ev)
        return
    may = _may_call(s, p)
    if ev is not None:
        ev.append(_new_event(YakuMade, (p, _evaluate(s, p), t, may)))
    if may:
        s._phase = _KOIKOI
        s._to_act = p
        return
    _win_round(s, p, "stop", ev)


def _pass_turn(s: MatchState, p: int, ev: list[Event] | None) -> None:
    if not (s._hands[0] | s._hands[1]):
        _drawn_round(s, ev)
        return
    s._phase = _PLAY
    s._to_act = 1 - p


#: the last yaku evaluated, as (rules, pile, field, called, yaku): a turn that makes a
#: yaku evaluates it for its event and again when the round is won (one reference, so
#: threads see an old entry or a new one, never half of each)
_LAST_EVALUATED: tuple[RuleSet | None, int, int, bool, tuple[YakuScore, ...]] = (
    None,
    0,
    0,
    False,
    (),
)

#: build an event tuple without its class's Python-level ``__new__`` (hot path only;
#: every field must be given)
_new_event = tuple.__new__

#: a new state without ``__init__`` (which refuses), for the hot path
_new_state = object.__new__


if TYPE_CHECKING:
    _E = TypeVar("_E", Played, Drew)


class _EventTable(dict[int, "_E"]):  # a string: the type variable is the type checkers' alone
    """Every ``Played`` (or ``Drew``) event there can be, each made on its first use.

    A card captures only cards of its own month, so an event is fixed by the seat,
    the card and one nibble (which of its month's four cards were taken):
    ``_PLAYED[(seat * 48 + card) << 4 | captured >> (card & 60)]``, the same for
    ``_DREW``, and ``_DREW_PENDING[seat * 48 + card]`` for a drawn card waiting to
    choose.  Events are immutable, so every turn can share them.  They are made on
    first use rather than all 3,168 at import: a replay with ``after`` (``verify``)
    and the bots' playouts use none of them.
    """

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[int], _E]) -> None:
        super().__init__()
        self._make: Callable[[int], _E] = make

    def __missing__(self, key: int) -> _E:
        event = self[key] = self._make(key)
        return event


def _played(key: int) -> Played:
    seat_card, nibble = divmod(key, 16)
    p, c = divmod(seat_card, 48)
    event: Played = _new_event(Played, (p, CARDS[c], cards_of(nibble << (c & 60))))
    return event


def _drew(key: int) -> Drew:
    seat_card, nibble = divmod(key, 16)
    p, c = divmod(seat_card, 48)
    event: Drew = _new_event(Drew, (p, CARDS[c], cards_of(nibble << (c & 60)), False))
    return event


def _drew_pending(key: int) -> Drew:
    p, c = divmod(key, 48)
    event: Drew = _new_event(Drew, (p, CARDS[c], (), True))
    return event


_PLAYED: _EventTable[Played] = _EventTable(_played)
_DREW: _EventTable[Drew] = _EventTable(_drew)
_DREW_PENDING: _EventTable[Drew] = _EventTable(_drew_pending)


def _evaluate(s: MatchState, p: int) -> tuple[YakuScore, ...]:
    """``s.yaku(p)``, remembering the last answer (see ``_LAST_EVALUATED``)."""
    global _LAST_EVALUATED
    rules, pile, field, called = s._rules, s._piles[p], s._field, s._calls[p] > 0
    last = _LAST_EVALUATED
    if last[0] is rules and last[1] == pile and last[2] == field and last[3] == called:
        return last[4]
    yaku = evaluate(pile, rules, field, called)
    _LAST_EVALUATED = (rules, pile, field, called, yaku)
    return yaku


def _win_round(s: MatchState, p: int, reason: str, ev: list[Event] | None) -> None:
    _round_won(s, p, _evaluate(s, p), reason, ev)


def _round_won(
    s: MatchState, p: int, yaku: tuple[YakuScore, ...], reason: str, ev: list[Event] | None
) -> None:
    breakdown = score(yaku, s._rules, s._calls[p], s._calls[1 - p])
    gained = (breakdown.score, 0) if p == 0 else (0, breakdown.score)
    nxt = p if s._rules.next_dealer is _WINNER_DEALS else 1 - s._dealer
    _round_over(s, p, reason, breakdown, gained, nxt, ev)


def _drawn_round(s: MatchState, ev: list[Event] | None) -> None:
    r = s._rules
    d = s._dealer
    if r.drawn_round is DrawnRound.OYA_KEN and r.oya_ken_points > 0:
        pts = r.oya_ken_points
        breakdown = ScoreBreakdown((), pts, (), pts)
        gained = (pts, 0) if d == 0 else (0, pts)
        _round_over(s, d, "oya_ken", breakdown, gained, d, ev)
        return
    nxt = 1 - d if r.drawn_round is DrawnRound.DEALER_PASSES else d
    _round_over(s, None, "drawn", None, (0, 0), nxt, ev)


def _round_over(
    s: MatchState,
    winner: int | None,
    reason: str,
    breakdown: ScoreBreakdown | None,
    gained: tuple[int, int],
    next_dealer: int | None,
    ev: list[Event] | None,
) -> None:
    """Settle the round's points, record it, and deal the next round or end the match.

    ``next_dealer`` None means the dealer is drawn again (both players scored a hand yaku).
    """
    r = s._rules
    s0, s1 = s._scores
    g0, g1 = gained
    if r.scoring is _POOL:
        # Each side's gain is paid by the other, up to what they have left (pool_payment_cap).
        pay0 = min(g0, s1) if r.pool_payment_cap else g0
        pay1 = min(g1, s0) if r.pool_payment_cap else g1
        g0, g1 = pay0, pay1
        s0, s1 = s0 + pay0 - pay1, s1 + pay1 - pay0
    else:
        s0, s1 = s0 + g0, s1 + g1
    s._scores = (s0, s1)
    s._results = s._results + (
        RoundResult(s._round, s._dealer, winner, reason, breakdown, (g0, g1)),
    )
    s._to_act = None
    if ev is not None:
        ev.append(
            _new_event(RoundEnded, (s._round, winner, reason, breakdown, (g0, g1), s._scores))
        )
    knocked = r.scoring is _POOL and r.knockout and (s0 <= 0 or s1 <= 0)
    if knocked or s._round >= r.rounds:
        s._phase = _OVER
        s._end = "knockout" if knocked else "rounds"
        s._winner = 0 if s0 > s1 else 1 if s1 > s0 else None
        if ev is not None:
            ev.append(_new_event(MatchEnded, (s._scores, s._winner, s._end)))
        return
    s._round += 1
    s._attempt = 0
    if next_dealer is None:
        next_dealer = _choose_dealer(r, s._seed, s._round, ev)
    s._dealer = next_dealer
    _begin_round(s, ev)


# ---------------------------------------------------------------------- views
@value
class PlayerView:
    """One seat's view of the match: everything that seat may know, nothing more.

    Bots are handed only this (and the legal actions in it).  Two states that
    differ only in hidden cards give equal views.
    """

    seat: int
    rules: RuleSet
    round: int
    dealer: int
    scores: tuple[int, int]
    results: tuple[RoundResult, ...]
    phase: Phase
    to_act: int | None
    hand: CardSet
    hand_size: int
    opponent_hand_size: int
    field: CardSet
    piles: tuple[CardSet, CardSet]
    stock_size: int
    calls: tuple[int, int]
    last_totals: tuple[int, int]
    drawn: Card | None
    legal_actions: tuple[Action, ...]
    winner: int | None

    @property
    def opponent(self) -> int:
        return 1 - self.seat

    @property
    def my_pile(self) -> CardSet:
        return self.piles[self.seat]

    @property
    def opponent_pile(self) -> CardSet:
        return self.piles[1 - self.seat]

    @property
    def unseen(self) -> CardSet:
        """Cards this seat cannot see: the opponent's hand and the stock (and, before
        looking, its own hand)."""
        seen = self.hand.mask | self.field.mask | self.piles[0].mask | self.piles[1].mask
        if self.drawn is not None:
            seen |= self.drawn.bit
        return CardSet(ALL_MASK & ~seen)

    def yaku(self, seat: int) -> tuple[YakuScore, ...]:
        return evaluate(self.piles[seat].mask, self.rules, self.field.mask, self.calls[seat] > 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, as sent to bots over the engine protocol."""
        return {
            "seat": self.seat,
            "round": self.round,
            "rounds": self.rules.rounds,
            "dealer": self.dealer,
            "scores": list(self.scores),
            "phase": self.phase.value,
            "to_act": self.to_act,
            "hand": self.hand.codes(),
            "hand_size": self.hand_size,
            "opponent_hand_size": self.opponent_hand_size,
            "field": self.field.codes(),
            "piles": [self.piles[0].codes(), self.piles[1].codes()],
            "stock_size": self.stock_size,
            "calls": list(self.calls),
            "drawn": self.drawn.code if self.drawn else None,
            "yaku": [[{"id": y.id, "points": y.points} for y in self.yaku(i)] for i in (0, 1)],
            "legal_actions": [str(a) for a in self.legal_actions],
        }


def determinize(
    view: PlayerView, opponent_hand: int, stock: tuple[int, ...], seed: bytes = bytes(32)
) -> MatchState:
    """A full state consistent with ``view``, given a guess at the hidden cards.

    ``opponent_hand`` is a mask of ``view.opponent_hand_size`` cards and
    ``stock`` the remaining stock order; together they must be exactly the
    unseen cards.  Bots use this to search; rounds after the current one are
    dealt from ``seed``, which is a stand-in, not the real match seed.
    """
    unseen = view.unseen.mask
    stock_mask = 0
    for c in stock:
        stock_mask |= 1 << c
    if view.phase is _HAND_SWAP:
        raise InputError("cannot determinize before the hands are looked at")
    if (
        opponent_hand & stock_mask
        or (opponent_hand | stock_mask) != unseen
        or opponent_hand.bit_count() != view.opponent_hand_size
        or len(stock) != view.stock_size
    ):
        raise InputError("hidden cards do not match the view")
    s = MatchState._blank(view.rules.with_open_deal(), seed)  # later rounds: from ``seed``
    s._round = view.round
    s._dealer = view.dealer
    s._scores = view.scores
    s._results = view.results
    s._phase = view.phase
    s._to_act = view.to_act
    me = view.seat
    hands = [0, 0]
    hands[me] = view.hand.mask
    hands[1 - me] = opponent_hand
    s._hands = (hands[0], hands[1])
    s._field = view.field.mask | (view.drawn.bit if view.drawn is not None else 0)
    s._piles = (view.piles[0].mask, view.piles[1].mask)
    s._stock = tuple(stock)
    s._pos = 0
    s._calls = view.calls
    s._last = view.last_totals
    s._pending = view.drawn.id if view.drawn is not None else -1
    s._winner = view.winner
    return s


def new_match(rules: RuleSet, match_seed: bytes) -> MatchState:
    """The match at its first decision (:meth:`MatchState.start` without making its
    events: with :meth:`MatchState.after`, a replay that makes none)."""
    return MatchState._started(rules, match_seed, None)
