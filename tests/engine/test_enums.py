"""The engine's enums are plain :class:`enum.Enum` classes: their values are the words
the rules, records and wire carry, so each member must round-trip through its value."""

from __future__ import annotations

import enum
import importlib
import pickle

import pytest

MODULES = (
    "p2pkoikoi.engine.cards",
    "p2pkoikoi.engine.rules",
    "p2pkoikoi.engine.actions",
    "p2pkoikoi.engine.match",
)


def engine_enums() -> dict[str, type[enum.Enum]]:
    """Every enum class the engine's modules define (not those they import)."""
    out: dict[str, type[enum.Enum]] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, enum.Enum)
                and obj.__module__ == module_name
            ):
                out[f"{module_name}.{name}"] = obj
    return out


def test_every_engine_enum_round_trips_its_members() -> None:
    found = engine_enums()
    assert len(found) == 17, sorted(found)  # rules 14, cards, actions, match
    for name, cls in found.items():
        assert type(cls) is enum.EnumType, name  # a plain enum, no maker of its own
        values = [m.value for m in cls]
        assert len(set(values)) == len(values), name  # no aliases: one word, one member
        for member in cls:
            assert cls(member.value) is member and cls[member.name] is member
            assert pickle.loads(pickle.dumps(member)) is member
            assert repr(member) == f"<{cls.__name__}.{member.name}: {member.value!r}>"


def test_properties_methods_and_errors_as_an_enum() -> None:
    from p2pkoikoi.engine.cards import Kind
    from p2pkoikoi.engine.rules import Scoring

    assert Kind.BRIGHT.label == "bright"  # a property of the class body
    with pytest.raises(ValueError, match="is not a valid Scoring"):
        Scoring("nope")
    with pytest.raises(AttributeError):
        Scoring.SUM.value = "x"  # type: ignore[misc]
    assert list(Scoring.__members__) == ["SUM", "POOL"]


def test_the_rules_write_each_setting_as_its_enums_value() -> None:
    """A rule set's dictionary (what its fingerprint covers) holds each enum setting
    as its member's value, and reading it back gives the same members."""
    from p2pkoikoi.engine.presets import PRESETS
    from p2pkoikoi.engine.rules import RuleSet
    from p2pkoikoi.engine.values import field_names

    seen = 0
    for rules in PRESETS.values():
        d = rules.to_dict()
        for field in field_names(rules):
            setting = getattr(rules, field)
            if isinstance(setting, enum.Enum):
                seen += 1
                assert d[field] == setting.value and type(d[field]) is str
        assert RuleSet.from_dict(d) == rules
    assert seen >= 14
