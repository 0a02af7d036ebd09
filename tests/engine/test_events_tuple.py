"""The engine's events are named tuples (engine/events.py).

Every event class is checked against what ``collections.namedtuple`` gives for the
same fields and defaults: fields, defaults, construction by position and by keyword,
``TypeError`` for a wrong argument, ``repr``, equality and hashing as tuples,
pattern matching, pickling, :mod:`copy`, ``_make``, ``_replace`` and ``_asdict``;
then what the engine relies on (``kind``, ``to_dict``, the capture memo).
"""

from __future__ import annotations

import collections
import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from p2pkoikoi.engine.cards import CARDS
from p2pkoikoi.engine.events import (
    DealerChosen,
    Drew,
    Event,
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
)
from p2pkoikoi.engine.yaku import Multiplier, ScoreBreakdown, YakuScore

ROOT = Path(__file__).resolve().parents[2]

SANKO = YakuScore("sanko", 5, 0b1)
BREAKDOWN = ScoreBreakdown((SANKO,), 5, (Multiplier(2, "seven or more"),), 10)

#: every event class, its fields (names and defaults), and one full set of values
CASES: list[tuple[type[Any], tuple[str, ...], dict[str, Any], tuple[Any, ...]]] = [
    (
        DealerChosen,
        ("dealer", "method", "draws"),
        {"draws": ()},
        (1, "card_draw", ((CARDS[0], CARDS[4]),)),
    ),
    (RoundStarted, ("round", "dealer", "attempt", "field"), {}, (3, 0, 1, CARDS[:8])),
    (Redealt, ("round", "attempt", "reason"), {}, (2, 1, "a lucky hand")),
    (HandSwapDecided, ("seat", "swapped"), {}, (1, True)),
    (HandYaku, ("seat", "yaku", "hand"), {}, (0, SANKO, CARDS[8:16])),
    (Played, ("seat", "card", "captured"), {}, (0, CARDS[1], (CARDS[2],))),
    (Drew, ("seat", "card", "captured", "pending"), {"pending": False}, (1, CARDS[5], (), True)),
    (Took, ("seat", "card", "captured"), {}, (1, CARDS[6], (CARDS[7],))),
    (YakuMade, ("seat", "yaku", "total", "can_koikoi"), {}, (0, (SANKO,), 5, True)),
    (KoiKoiCalled, ("seat", "calls"), {}, (1, 2)),
    (
        RoundEnded,
        ("round", "winner", "reason", "breakdown", "gained", "scores"),
        {},
        (4, 0, "stop", BREAKDOWN, (10, 0), (30, 12)),
    ),
    (MatchEnded, ("scores", "winner", "reason"), {}, ((30, 12), 0, "rounds")),
    (Resigned, ("seat",), {}, (1,)),
]
IDS = [case[0].__name__ for case in CASES]


def reference(cls: type[Any], fields: tuple[str, ...], defaults: dict[str, Any]) -> type[Any]:
    """What ``typing.NamedTuple`` makes of the same fields (it calls ``namedtuple``)."""
    ref = collections.namedtuple(cls.__name__, fields, defaults=tuple(defaults.values()))  # type: ignore[misc]  # noqa: PYI024
    ref.__module__ = __name__
    return ref


def test_every_event_class_is_checked() -> None:
    assert {case[0] for case in CASES} == set(Event.__args__)


@pytest.mark.parametrize(("cls", "fields", "defaults", "values"), CASES, ids=IDS)
def test_fields_defaults_and_construction(
    cls: type[Any], fields: tuple[str, ...], defaults: dict[str, Any], values: tuple[Any, ...]
) -> None:
    assert cls._fields == fields
    assert cls.__match_args__ == fields
    assert cls._field_defaults == defaults
    assert cls.__slots__ == ()
    assert cls.__mro__ == (cls, tuple, object)
    by_position = cls(*values)
    by_keyword = cls(**dict(zip(fields, values, strict=True)))
    half = len(fields) // 2
    mixed = cls(*values[:half], **dict(zip(fields[half:], values[half:], strict=True)))
    hot_path = tuple.__new__(cls, values)  # engine/match.py's ``_new_event``
    for ev in (by_position, by_keyword, mixed, hot_path):
        assert type(ev) is cls and isinstance(ev, tuple)
        assert tuple(ev) == values
        assert [getattr(ev, f) for f in fields] == list(values)
        assert ev[-1] is values[-1]
    # the defaults, by position and by keyword
    required = len(fields) - len(defaults)
    short = cls(*values[:required])
    assert tuple(short) == values[:required] + tuple(defaults.values())
    assert cls(**dict(zip(fields[:required], values, strict=False))) == short
    # immutable, no instance dictionary
    with pytest.raises(AttributeError):
        by_position.__dict__  # noqa: B018
    with pytest.raises(AttributeError):
        setattr(by_position, fields[0], values[0])


def test_the_defaults_the_engine_relies_on() -> None:
    assert Drew(0, CARDS[0], ()).pending is False
    assert DealerChosen(1, "coin").draws == ()
    assert Drew.pending.__doc__ == "Alias for field number 3"


@pytest.mark.parametrize(("cls", "fields", "defaults", "values"), CASES, ids=IDS)
def test_wrong_arguments_raise_type_error_as_named_tuples_do(
    cls: type[Any], fields: tuple[str, ...], defaults: dict[str, Any], values: tuple[Any, ...]
) -> None:
    ref = reference(cls, fields, defaults)
    required = len(fields) - len(defaults)
    wrong: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        (values + (None,), {}),  # one too many
        (values, {"nonsense": 1}),  # an unknown keyword
        (values[:-1], {"nonsense": 1, fields[-1]: values[-1]}),
        (values, {fields[0]: values[0]}),  # the first field twice
        (values[: required - 1], {}),  # a required field missing
        ((), {f: v for f, v in zip(fields[1:], values[1:], strict=True)}),
    ]
    for args, kwargs in wrong:
        with pytest.raises(TypeError):
            ref(*args, **kwargs)
        with pytest.raises(TypeError, match=cls.__name__):
            cls(*args, **kwargs)


@pytest.mark.parametrize(("cls", "fields", "defaults", "values"), CASES, ids=IDS)
def test_repr_equality_hash_and_methods_match_named_tuples(
    cls: type[Any], fields: tuple[str, ...], defaults: dict[str, Any], values: tuple[Any, ...]
) -> None:
    ref = reference(cls, fields, defaults)
    ev, nt = cls(*values), ref(*values)
    assert repr(ev) == repr(nt)
    assert repr(ev).startswith(f"{cls.__name__}({fields[0]}=")
    assert ev == nt == values and hash(ev) == hash(nt) == hash(values)
    assert ev == cls(*values) and (ev != values) is False
    assert ev != values[:-1] and ev < values + (0,)
    assert {ev: 1}[values] == 1
    assert ev._asdict() == nt._asdict()
    assert list(ev._asdict()) == list(fields)
    assert ev._replace() == ev and type(ev._replace()) is cls
    changed = ev._replace(**{fields[0]: "changed"})
    assert type(changed) is cls and changed == nt._replace(**{fields[0]: "changed"})
    # an unknown field: what namedtuple raises (ValueError until 3.12, TypeError from 3.13)
    with pytest.raises((ValueError, TypeError), match="nonsense") as theirs:
        nt._replace(nonsense=1)
    with pytest.raises(type(theirs.value), match="nonsense"):
        ev._replace(nonsense=1)
    made = cls._make(iter(values))
    assert type(made) is cls and made == ev
    with pytest.raises(TypeError):
        cls._make(values[:-1])
    if (cls.__doc__ or "").startswith(cls.__name__ + "("):  # no docstring of its own
        assert cls.__doc__ == ref.__doc__


@pytest.mark.parametrize(("cls", "fields", "defaults", "values"), CASES, ids=IDS)
def test_pickle_and_copy_keep_an_event(
    cls: type[Any], fields: tuple[str, ...], defaults: dict[str, Any], values: tuple[Any, ...]
) -> None:
    ev = cls(*values)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(ev, protocol))
        assert type(back) is cls and back == ev
    for got in (copy.copy(ev), copy.deepcopy(ev)):
        assert type(got) is cls and got == ev


@pytest.mark.parametrize(("cls", "fields", "defaults", "values"), CASES, ids=IDS)
def test_kind_and_to_dict(
    cls: type[Any], fields: tuple[str, ...], defaults: dict[str, Any], values: tuple[Any, ...]
) -> None:
    ev = cls(*values)
    out = ev.to_dict()
    assert out["event"] == ev.kind and isinstance(ev.kind, str)
    assert list(out) == ["event", *fields]
    json.dumps(out)


def test_pattern_matching_by_position_and_by_keyword() -> None:
    played = Played(0, CARDS[1], (CARDS[2],))
    match played:
        case Drew():
            pytest.fail("a Played is no Drew")
        case Played(seat, card, (taken,)):
            assert (seat, card, taken) == (0, CARDS[1], CARDS[2])
        case _:
            pytest.fail("no match")
    match Drew(1, CARDS[5], (), pending=True):
        case Drew(seat=1, pending=True, card=card):
            assert card == CARDS[5]
        case _:
            pytest.fail("no match")
    match DealerChosen(0, "coin"):
        case DealerChosen(0, method="coin", draws=()):
            pass
        case _:
            pytest.fail("no match")
    match (0, CARDS[1], (CARDS[2],)):
        case Played():
            pytest.fail("a plain tuple is not an event")
        case (0, _, _):
            pass


def test_captures_stay_memoised_once_the_cache_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cards_of`` keeps 4,096 masks, and past that every capture's (up to four cards
    of one month): no longer filled at import (verify's start-up), never crowded out."""
    import random

    from p2pkoikoi.engine import events

    monkeypatch.setattr(events, "_CARDS_OF", {})
    rng = random.Random(4096)
    while len(events._CARDS_OF) < 4096:
        events.cards_of(rng.getrandbits(48) | 1 << 47)  # whole fields: many months
    field = (1 << 3) | (1 << 30)  # two months
    assert events.cards_of(field) is not events.cards_of(field)  # not kept any more
    for capture in (0, 1 << 5, 0b1100 << 8, 0b1111 << 44):
        first = events.cards_of(capture)
        assert events.cards_of(capture) is first  # kept
        assert [c.id for c in first] == [i for i in range(48) if capture >> i & 1]
