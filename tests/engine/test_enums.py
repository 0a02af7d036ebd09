"""engine.enums: a ``ValueEnum`` is the enum ``class X(enum.Enum)`` makes (issue 25)."""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import pickle
import subprocess
import sys

import pytest

from p2pkoikoi.engine import enums
from p2pkoikoi.engine.enums import ValueEnum, checked_enum

MODULES = (
    "p2pkoikoi.engine.cards",
    "p2pkoikoi.engine.rules",
    "p2pkoikoi.engine.actions",
    "p2pkoikoi.engine.match",
)


def checked_twins(module_name: str) -> dict[str, tuple[type[enum.Enum], type[enum.Enum]]]:
    """Each ``ValueEnum`` of the module, and the same class statement run again with
    ``enum.Enum`` for a base (the checked way), in the module's own namespace."""
    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    out = {}
    for node in tree.body:
        bases = [ast.unparse(b) for b in node.bases] if isinstance(node, ast.ClassDef) else []
        if isinstance(node, ast.ClassDef) and bases == ["ValueEnum"]:
            node.bases = [ast.parse("enum.Enum", mode="eval").body]
            scope = {**vars(module), "enum": enum}
            code = compile(ast.Module(body=[node], type_ignores=[]), module_name, "exec")
            exec(code, scope)  # noqa: S102
            out[node.name] = (scope[node.name], getattr(module, node.name))
    return out


def test_every_engine_enum_is_the_checked_one() -> None:
    found = 0
    for module_name in MODULES:
        for name, (checked, made) in checked_twins(module_name).items():
            found += 1
            assert isinstance(made, enum.EnumType) and issubclass(made, enum.Enum), name
            assert [(m.name, m.value) for m in made] == [(m.name, m.value) for m in checked]
            assert made.__qualname__ == checked.__qualname__
            assert made.__doc__ == checked.__doc__ or checked.__doc__ is None  # (a default)
            if hasattr(enum, "_test_simple_enum"):  # the standard library's own comparison
                enum._test_simple_enum(checked, made)
            for member in made:
                assert made(member.value) is member and made[member.name] is member
                assert pickle.loads(pickle.dumps(member)) is member
                assert repr(member) == repr(checked[member.name])
    assert found == 17  # every enum of the engine: rules 14, cards, actions, match


def test_properties_methods_and_errors_as_an_enum() -> None:
    from p2pkoikoi.engine.cards import Kind
    from p2pkoikoi.engine.rules import Scoring

    assert Kind.BRIGHT.label == "bright"  # a property of the class body
    with pytest.raises(ValueError, match="is not a valid Scoring"):
        Scoring("nope")
    with pytest.raises(AttributeError):
        Scoring.SUM.value = "x"  # type: ignore[misc]
    assert list(Scoring.__members__) == ["SUM", "POOL"]


def test_without_simple_enum_the_checked_way_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(enums, "_SIMPLE", None)

    class Colour(ValueEnum):
        """A test enum."""

        RED = "r"
        BLUE = "b"

    assert issubclass(Colour, enum.Enum) and Colour("r") is Colour.RED
    twin = checked_enum("Colour", {"__doc__": "A test enum.", "RED": "r", "BLUE": "b"})
    assert [(m.name, m.value) for m in twin] == [(m.name, m.value) for m in Colour]


def test_the_enums_skip_the_checked_path() -> None:
    """A fact, not a timing: the engine's enums go through ``_simple_enum`` (the
    standard library's maker for its own enums), not ``EnumType.__prepare__`` and its
    member-by-member checks.  Counted in a fresh interpreter."""
    if not hasattr(enum, "_simple_enum"):
        pytest.skip("this Python has no enum._simple_enum")
    probe = (
        "import enum\n"
        "made = []\n"
        "real = enum.EnumType.__prepare__\n"
        "def prepare(*a, **k):\n"
        "    made.append(a[0])\n"
        "    return real(*a, **k)\n"
        "enum.EnumType.__prepare__ = prepare\n"
        "import p2pkoikoi.engine.match, p2pkoikoi.engine.rules\n"
        "print(sorted(made))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]", out
