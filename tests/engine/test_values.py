"""engine.values: ``@value`` makes what ``@dataclass(frozen=True, slots=True)`` makes."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import types

import pytest

from p2pkoikoi.engine import Action, RuleSet
from p2pkoikoi.engine.values import field_names, field_types, make, replace, value
from p2pkoikoi.session.records.record import ResultRecord


@value
class Point:
    """A value for the tests (pickle finds it here, at module level)."""

    x: int
    y: int = 0
    label: str = "p"

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("x < 0")


@dataclasses.dataclass(frozen=True, slots=True)
class DataPoint:
    """The standard decorator's class with the same fields, to compare with."""

    x: int
    y: int = 0
    label: str = "p"


def test_the_methods_are_the_dataclass_ones() -> None:
    p = Point(1, label="q")
    d = DataPoint(1, label="q")
    assert repr(p) == repr(d).replace("DataPoint", "Point") == "Point(x=1, y=0, label='q')"
    assert eval(repr(p)) == p  # a repr you can paste back
    assert p == Point(1, 0, "q") and p != Point(2) and p != d
    assert hash(p) == hash(Point(1, 0, "q"))
    assert Point.__match_args__ == ("x", "y", "label")
    assert not hasattr(p, "__dict__") and Point.__slots__ == ("x", "y", "label")
    match p:
        case Point(x, y, label):
            assert (x, y, label) == (1, 0, "q")


def test_a_value_is_frozen_as_a_dataclass_is() -> None:
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.x  # type: ignore[misc]
    with pytest.raises(ValueError, match="x < 0"):
        Point(-1)
    with pytest.raises(TypeError):
        Point(1, 2, "a", 4)  # type: ignore[call-arg]


def test_replace_and_the_standard_library_agree() -> None:
    p = Point(1, 2)
    assert replace(p, y=5) == dataclasses.replace(p, y=5) == Point(1, 5)
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(Point)] == list(field_names(p))
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "label": "p"}
    assert field_types(Point) == {"x": "int", "y": "int", "label": "str"}
    with pytest.raises(ValueError):
        replace(p, x=-3)  # __post_init__ runs on the copy too


def test_pickle_and_copy_keep_a_value() -> None:
    p = Point(3, 4, "z")
    assert pickle.loads(pickle.dumps(p)) == p
    assert copy.copy(p) == p and copy.deepcopy(p) == p


def test_the_engine_and_record_values() -> None:
    a = Action.parse("play 1b")
    assert repr(a) == "Action.parse('play 1b')"  # its own __repr__ is kept
    rules = RuleSet()
    assert rules.with_settings(rounds=3).rounds == 3 and rules.rounds != 3
    assert dataclasses.replace(rules, rounds=3) == rules.with_settings(rounds="3")
    r = ResultRecord((1, 2), 0, b"s", b"t")
    assert eval(repr(r)) == r


def test_a_method_is_made_on_its_first_use_and_is_then_the_classs_own() -> None:
    """Each generated method is made when first looked up, then is a plain function in
    the class: later calls go straight to it, and what introspection sees of it
    (signature, qualified name) is what a dataclass shows."""

    @value
    class Fresh:
        a: int
        b: str = "x"

    made = Fresh.__dict__
    f = Fresh(1)
    assert isinstance(made["__init__"], types.FunctionType)
    assert f == Fresh(1, "x") and f != Fresh(2) and hash(f) == hash(Fresh(1))
    assert repr(f).endswith(".Fresh(a=1, b='x')")  # the local class's qualified name
    for name in ("__init__", "__repr__", "__eq__", "__hash__"):
        assert isinstance(made[name], types.FunctionType), name
        assert made[name].__qualname__ == f"{Fresh.__qualname__}.{name}"


def test_the_signature_is_the_dataclasss_before_and_after_the_first_instance() -> None:
    """:func:`inspect.signature` of a value class is its fields, as for a dataclass,
    whether or not an instance has been made yet (3.13's inspect looks ``__init__``
    up through the descriptor protocol: the method it finds must be the real one)."""

    @value
    class Later:
        x: int
        y: int = 2

    @dataclasses.dataclass(frozen=True, slots=True)
    class DataLater:
        x: int
        y: int = 2

    def params(cls: type) -> list[tuple[str, object]]:
        return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()]

    assert params(Later) == params(DataLater) == [("x", inspect.Parameter.empty), ("y", 2)]
    assert str(inspect.signature(Later)) == "(x, y=2)"
    assert Later(1) == Later(x=1, y=2)
    assert str(inspect.signature(Later)) == "(x, y=2)"

    @value
    class AfterAnInstance:
        x: int
        y: int = 2

    assert AfterAnInstance(3).y == 2
    assert str(inspect.signature(AfterAnInstance)) == "(x, y=2)"


def test_wrong_arguments_are_refused_as_python_refuses_them() -> None:
    """The generated ``__init__`` takes the fields by position and by keyword, with
    their defaults, runs ``__post_init__``, and refuses a wrong call in the
    interpreter's own words, the first time as every later time."""

    @value
    class Pair:
        a: int
        b: str = "x"

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a < 0")

    def refused() -> list[str]:
        out = []
        for args, kwargs in (((1, "y", 3), {}), ((), {}), ((1,), {"c": 2}), ((1,), {"a": 2})):
            with pytest.raises(TypeError) as err:
                Pair(*args, **kwargs)  # type: ignore[misc]
            out.append(str(err.value))
        with pytest.raises(ValueError, match="a < 0"):
            Pair(-1)
        return out

    first = refused()  # before any instance is made
    made = [Pair(1), Pair(1, "y"), Pair(a=1, b="y"), Pair(1, b="y"), Pair(b="y", a=2)]
    assert [(p.a, p.b) for p in made] == [(1, "x"), (1, "y"), (1, "y"), (1, "y"), (2, "y")]
    assert refused() == first
    assert "positional" in first[0] and "missing" in first[1], first
    assert "unexpected" in first[2] and "multiple" in first[3], first


def test_make_sets_every_field_in_order_and_checks_their_number() -> None:
    """``make`` (no ``__init__``: tables and checked record actions) gives the value
    ``__init__`` gives from the same fields, and refuses a wrong number of them
    (``map`` would stop at the shorter list without a word)."""
    made = make(Point, 3, 4, "q")
    assert made == Point(3, 4, "q") and type(made) is Point
    assert make(Point, -1, 0, "p").x == -1  # no __post_init__: the caller checked
    for fields in ((1, 2), (1, 2, "p", 4)):
        with pytest.raises(TypeError, match="3 fields"):
            make(Point, *fields)
