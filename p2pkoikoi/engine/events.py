"""Events: what an action caused, for logs, interfaces and headless JSON output.

Each event is a small frozen value with a ``kind`` and a ``to_dict()`` whose
``"event"`` key is that kind.  Cards appear as their codes in ``to_dict()``.

Every event class is an :class:`EventTuple`, which type checkers read as
``typing.NamedTuple`` and which makes at run time the same kind of class
without compiling anything (see its docstring).
"""

from __future__ import annotations

from p2pkoikoi.engine.cards import CARDS, Card
from p2pkoikoi.engine.yaku import ScoreBreakdown, YakuScore

# ``typing.TYPE_CHECKING`` without importing ``typing`` (see p2pkoikoi/cli/__init__.py):
# type checkers read any ``TYPE_CHECKING`` as true, so to them every event below is a
# ``typing.NamedTuple`` with its fields' types; at run time it is an ``EventTuple``.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple as EventTuple
else:
    try:  # what ``collections.namedtuple`` makes its fields with: a C descriptor
        from _collections import _tuplegetter
    except ImportError:  # another Python: the same through ``property``
        from operator import itemgetter

        def _tuplegetter(index, doc):
            return property(itemgetter(index), doc=doc)

    _tuple_new = tuple.__new__
    _MISSING = object()

    class _EventTupleMeta(type):
        """Makes each subclass of ``EventTuple`` what ``typing.NamedTuple`` makes of it.

        Nothing is checked: type checkers check these classes as NamedTuples (fields
        with defaults last, no field starting with ``_``, no NamedTuple method redone).
        """

        def __new__(mcls, name, bases, ns):
            if bases != (tuple,):  # an event class (not EventTuple itself)
                # the fields' names only: their types are strings here (``annotations``
                # from ``__future__``), and nothing evaluates them
                fields = tuple(ns.get("__annotations__", ()))
                defaults = {f: ns[f] for f in fields if f in ns}
                for i, f in enumerate(fields):
                    ns[f] = _tuplegetter(i, f"Alias for field number {i}")
                ns.setdefault("__doc__", f"{name}{fields!r}".replace("'", ""))
                ns.update(
                    __slots__=(),
                    __match_args__=fields,
                    _fields=fields,
                    _field_defaults=defaults,
                    _required=len(fields) - len(defaults),
                    _default_values=tuple(defaults.values()),
                    _repr_fmt="(" + ", ".join(f"{f}=%r" for f in fields) + ")",
                )
            return super().__new__(mcls, name, bases, ns)

    class EventTuple(tuple, metaclass=_EventTupleMeta):
        """A class as ``typing.NamedTuple`` makes it, made without compiling anything.

        ``collections.namedtuple`` builds each class's ``__new__`` with ``eval``, and
        ``typing`` adds its own work: 0.68 million instructions a class, 9 million for
        the 13 events, all of it part of ``verify``'s start-up (issue 25).  A subclass
        of this one is a tuple of its annotated fields with a NamedTuple's API: fields
        by name (``_tuplegetter``, as namedtuple's) and by index, ``_fields``,
        ``_field_defaults``, ``__match_args__``, construction by position and by
        keyword (a ``TypeError`` for a wrong argument), NamedTuple's ``__repr__``,
        equality and hashing as tuples, ``_make``, ``_replace``, ``_asdict``,
        pickling and :mod:`copy`.  The methods are this class's, shared: they read
        the subclass's tables.  Type checkers see ``typing.NamedTuple`` instead.
        """

        __slots__ = ()

        def __new__(cls, *args, **kwargs):
            fields = cls._fields
            n = len(args)
            if not kwargs:
                if n == len(fields):
                    return _tuple_new(cls, args)
                if cls._required <= n < len(fields):  # the last fields' defaults
                    return _tuple_new(cls, args + cls._default_values[n - cls._required :])
            named = dict(zip(fields, args, strict=False))
            repeated = n > len(fields) or named.keys() & kwargs
            named.update(kwargs)
            defaults = cls._field_defaults
            values = [named.pop(f, defaults.get(f, _MISSING)) for f in fields]
            if repeated or named or any(v is _MISSING for v in values):
                raise TypeError(
                    f"{cls.__name__}() takes ({', '.join(fields)}), not {n} "
                    f"arguments by position and {', '.join(kwargs) or 'none'} by keyword"
                )
            return _tuple_new(cls, values)

        @classmethod
        def _make(cls, iterable):
            result = _tuple_new(cls, iterable)
            if len(result) != len(cls._fields):
                raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
            return result

        def _replace(self, /, **kwargs):
            result = self._make(map(kwargs.pop, self._fields, self))
            if kwargs:
                raise ValueError(f"Got unexpected field names: {list(kwargs)!r}")
            return result

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        def __repr__(self):
            return self.__class__.__name__ + self._repr_fmt % self

        def __getnewargs__(self):
            return tuple(self)


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
    fields, which rarely repeat, cannot crowd the captures out.  (It was filled with
    the 192 capture masks at import: 1.3 M instructions of ``verify``'s start-up.)"""
    got = _CARDS_OF.get(mask)
    if got is None:
        cards = []  # iter_mask inlined: a generator costs twice as much for a whole field
        rest = mask
        while rest:
            low = rest & -rest
            cards.append(CARDS[low.bit_length() - 1])
            rest ^= low
        got = tuple(cards)
        if len(_CARDS_OF) < 4096 or not mask or mask >> ((mask & -mask).bit_length() - 1 & ~3) < 16:
            _CARDS_OF[mask] = got
    return got


class DealerChosen(EventTuple):
    """The first dealer (or the next, after both players scored a hand yaku)."""

    dealer: int
    method: str  # "coin" or "card_draw"
    draws: tuple[tuple[Card, Card], ...] = ()  # card draw: (seat 0's card, seat 1's card) per try

    @property
    def kind(self) -> str:
        return "dealer_chosen"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class RoundStarted(EventTuple):
    round: int
    dealer: int
    attempt: int
    field: tuple[Card, ...]

    @property
    def kind(self) -> str:
        return "round_started"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Redealt(EventTuple):
    round: int
    attempt: int
    reason: str

    @property
    def kind(self) -> str:
        return "redeal"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class HandSwapDecided(EventTuple):
    seat: int
    swapped: bool

    @property
    def kind(self) -> str:
        return "hand_swap"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class HandYaku(EventTuple):
    seat: int
    yaku: YakuScore
    hand: tuple[Card, ...]

    @property
    def kind(self) -> str:
        return "hand_yaku"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Played(EventTuple):
    seat: int
    card: Card
    captured: tuple[Card, ...]  # field cards taken (empty: the card joined the field)

    @property
    def kind(self) -> str:
        return "played"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Drew(EventTuple):
    seat: int
    card: Card
    captured: tuple[Card, ...]
    pending: bool = False  # two field cards match: the player chooses next

    @property
    def kind(self) -> str:
        return "drew"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Took(EventTuple):
    seat: int
    card: Card  # the drawn card
    captured: tuple[Card, ...]

    @property
    def kind(self) -> str:
        return "took"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class YakuMade(EventTuple):
    seat: int
    yaku: tuple[YakuScore, ...]
    total: int
    can_koikoi: bool

    @property
    def kind(self) -> str:
        return "yaku"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class KoiKoiCalled(EventTuple):
    seat: int
    calls: int  # this player's calls this round, this one included

    @property
    def kind(self) -> str:
        return "koikoi"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class RoundEnded(EventTuple):
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


class MatchEnded(EventTuple):
    scores: tuple[int, int]
    winner: int | None
    reason: str  # rounds, knockout, resign

    @property
    def kind(self) -> str:
        return "match_ended"

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class Resigned(EventTuple):
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
