"""Events: what an action caused, for logs, interfaces and headless JSON output.

Each event is a small frozen value with a ``kind`` and a ``to_dict()`` whose
``"event"`` key is that kind.  Cards appear as their codes in ``to_dict()``.

Every event class is a :class:`typing.NamedTuple`: immutable, cheap to make in the
hot path (``tuple.__new__``), compared and hashed as a tuple.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from p2pkoikoi.engine.cards import CARDS, Card
from p2pkoikoi.engine.yaku import ScoreBreakdown, YakuScore


def _plain(value: Any) -> Any:
    if isinstance(value, Card):
        return value.code
    if isinstance(value, ScoreBreakdown):
        return {
            "yaku": [_plain(y) for y in value.yaku],
            "base": value.base,
            "multipliers": [{"factor": m.factor, "reason": m.reason} for m in value.multipliers],
            "score": value.score,
            "bonus": value.bonus,
        }
    if isinstance(value, YakuScore):
        return {"id": value.id, "points": value.points}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _to_dict(self: Any) -> dict[str, Any]:
    # what _plain does, with the common fields first (numbers, a card, a tuple of
    # cards): a headless player writes every event of every action as JSON
    out: dict[str, Any] = {"event": self.kind}
    for name, value in zip(self._fields, self, strict=True):
        t = type(value)
        if t is int or t is str or value is None:
            out[name] = value
        elif t is Card:
            out[name] = value.code
        elif t is tuple:
            out[name] = [v.code if type(v) is Card else _plain(v) for v in value]
        else:
            out[name] = _plain(value)
    return out


_CARDS_OF: dict[int, tuple[Card, ...]] = {}


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask as a tuple, memoised: captures repeat the same few masks.

    The cache keeps 4,096 masks, and past that still every capture's (no card, or up
    to four of one month: a month's cards are one nibble of the mask), so that whole
    fields, which rarely repeat, cannot crowd the captures out."""
    got = _CARDS_OF.get(mask)
    if got is None:
        cards = []  # iter_mask inlined: a generator costs twice as much for a whole field
        rest = mask
        while rest:
            low = rest & -rest
            cards.append(CARDS[low.bit_length() - 1])
            rest ^= low
        got = tuple(cards)
        if (
            len(_CARDS_OF) < 4096
            or not mask
            or mask >> (((mask & -mask).bit_length() - 1) & ~3) < 16
        ):
            _CARDS_OF[mask] = got
    return got


class DealerChosen(NamedTuple):
    """The first dealer (or the next, after both players scored a hand yaku)."""

    dealer: int
    method: str  # "coin" or "card_draw"
    draws: tuple[tuple[Card, Card], ...] = ()  # card draw: (seat 0's card, seat 1's card) per try

    @property
    def kind(self) -> str:
        return "dealer_chosen"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class RoundStarted(NamedTuple):
    round: int
    dealer: int
    attempt: int
    field: tuple[Card, ...]

    @property
    def kind(self) -> str:
        return "round_started"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Redealt(NamedTuple):
    round: int
    attempt: int
    reason: str

    @property
    def kind(self) -> str:
        return "redeal"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class HandSwapDecided(NamedTuple):
    seat: int
    swapped: bool

    @property
    def kind(self) -> str:
        return "hand_swap"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class HandYaku(NamedTuple):
    seat: int
    yaku: YakuScore
    hand: tuple[Card, ...]

    @property
    def kind(self) -> str:
        return "hand_yaku"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Played(NamedTuple):
    seat: int
    card: Card
    captured: tuple[Card, ...]  # field cards taken (empty: the card joined the field)

    @property
    def kind(self) -> str:
        return "played"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Drew(NamedTuple):
    seat: int
    card: Card
    captured: tuple[Card, ...]
    pending: bool = False  # two field cards match: the player chooses next

    @property
    def kind(self) -> str:
        return "drew"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Took(NamedTuple):
    seat: int
    card: Card  # the drawn card
    captured: tuple[Card, ...]

    @property
    def kind(self) -> str:
        return "took"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class YakuMade(NamedTuple):
    seat: int
    yaku: tuple[YakuScore, ...]
    total: int
    can_koikoi: bool

    @property
    def kind(self) -> str:
        return "yaku"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class KoiKoiCalled(NamedTuple):
    seat: int
    calls: int  # this player's calls this round, this one included

    @property
    def kind(self) -> str:
        return "koikoi"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class RoundEnded(NamedTuple):
    round: int
    winner: int | None  # None: nobody won the round
    reason: str  # stop, next_yaku, hand_yaku, both_hand_yaku, drawn, oya_ken
    breakdown: ScoreBreakdown | None
    gained: tuple[int, int]  # points each seat gained this round (after any pool cap)
    scores: tuple[int, int]

    @property
    def kind(self) -> str:
        return "round_over"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class MatchEnded(NamedTuple):
    scores: tuple[int, int]
    winner: int | None
    reason: str  # rounds, knockout, resign

    @property
    def kind(self) -> str:
        return "match_ended"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Resigned(NamedTuple):
    seat: int

    @property
    def kind(self) -> str:
        return "resigned"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


Event = (
    DealerChosen
    | RoundStarted
    | Redealt
    | HandSwapDecided
    | HandYaku
    | Played
    | Drew
    | Took
    | YakuMade
    | KoiKoiCalled
    | RoundEnded
    | MatchEnded
    | Resigned
)
