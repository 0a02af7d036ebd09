"""The RuleSet value: canonical encoding, fingerprints, settings and diffs."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from p2pkoikoi.engine.errors import InputError
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.engine.rules import (
    KoiKoiMultiplier,
    RainOut,
    RuleSet,
    SakeCup,
)


@pytest.mark.parametrize("name", list(PRESETS))
def test_encode_decode_round_trip(name: str) -> None:
    rules = PRESETS[name]
    data = rules.encode()
    assert RuleSet.decode(data) == rules
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert RuleSet.decode(data).fingerprint() == rules.fingerprint()


@pytest.mark.parametrize("name", list(PRESETS))
def test_encoding_is_canonical(name: str) -> None:
    rules = PRESETS[name]
    data = rules.encode()
    obj = json.loads(data)
    assert data == json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    assert b" " not in data
    assert list(obj) == sorted(obj)
    assert obj["plus_yaku"] == sorted(obj["plus_yaku"])
    assert isinstance(obj["sake_cup"], str) and isinstance(obj["koikoi_multiplier"], str)
    expected = hashlib.sha256(b"p2pkoikoi/rules/v1\x00" + data).hexdigest()
    assert rules.fingerprint() == expected


def test_fingerprints_distinct() -> None:
    prints = [r.fingerprint() for r in PRESETS.values()]
    assert len(set(prints)) == len(prints)
    assert all(len(p) == 64 and int(p, 16) >= 0 for p in prints)


def test_one_setting_changes_fingerprint() -> None:
    base = RuleSet()
    assert base.with_settings(rounds=12).fingerprint() != base.fingerprint()
    assert base.with_settings(rounds=6).fingerprint() == base.fingerprint()


def test_plus_yaku_order_does_not_matter() -> None:
    a = RuleSet(plus_yaku=("tane", "kasu", "tan"))
    b = RuleSet(plus_yaku=("kasu", "tan", "tane", "tan"))
    assert a == b and a.plus_yaku == ("kasu", "tan", "tane")
    assert a.fingerprint() == b.fingerprint()


# ---------------------------------------------------------------- settings


def test_apply_setting_types() -> None:
    r = RuleSet()
    assert r.apply_setting("rounds=12").rounds == 12
    assert r.apply_setting("double-at = 7").double_at == 7
    assert r.apply_setting("sake_cup=both").sake_cup is SakeCup.BOTH
    assert r.apply_setting("rain_out=field").rain_out is RainOut.FIELD
    assert r.apply_setting("hand_swap=yes").hand_swap is True
    assert r.apply_setting("knockout=off").knockout is False
    assert r.apply_setting("plus_yaku=tane, kasu").plus_yaku == ("kasu", "tane")
    assert r.apply_setting("plus_yaku=").plus_yaku == ()
    mode = r.apply_setting("koikoi_multiplier=koi_bai").koikoi_multiplier
    assert mode is KoiKoiMultiplier.KOI_BAI


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("rounds", "malformed setting 'rounds': expected KEY=VALUE"),
        ("=5", "malformed setting '=5'"),
        ("bogus=1", "unknown rule setting: bogus"),
        ("rounds=many", "setting rounds must be a whole number"),
        ("rounds=0", "setting rounds must be between 1 and 99"),
        ("rounds=100", "setting rounds must be between 1 and 99"),
        ("goko=-1", "setting goko must be a whole number >= 0"),
        ("goko=10001", "setting goko is too large"),
        ("hand_swap=maybe", "setting hand_swap must be true or false"),
        ("sake_cup=chaff", "setting sake_cup must be one of: animal, both"),
        ("plus_yaku=tane,bogus", "unknown yaku 'bogus'"),
        ("pool_stake=0", "pool_stake must be at least 1"),
    ],
)
def test_apply_setting_errors(assignment: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        RuleSet().apply_setting(assignment)
    assert message in str(err.value)
    assert err.value.exit_code == 2


def test_pool_stake_zero_fine_with_sum_scoring() -> None:
    assert PRESETS["nintendo"].apply_setting("pool_stake=0").pool_stake == 0


def test_from_dict_errors() -> None:
    data = RuleSet().to_dict()
    with pytest.raises(InputError, match="unknown rule setting: extra"):
        RuleSet.from_dict({**data, "extra": 1})
    short = dict(data)
    del short["goko"]
    with pytest.raises(InputError, match="rule set lacks setting: goko"):
        RuleSet.from_dict(short)
    with pytest.raises(InputError, match="not valid JSON"):
        RuleSet.decode(b"{nope")
    with pytest.raises(InputError, match="must be a whole number"):
        RuleSet.from_dict({**data, "goko": True})


def test_rules_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RuleSet().goko = 3  # type: ignore[misc]


# ---------------------------------------------------------------- diff


def test_diff_same_is_empty() -> None:
    assert PRESETS["online"].diff(RuleSet()) == []


def test_diff_lists_changes_in_field_order() -> None:
    online, toraco = PRESETS["online"], PRESETS["toraco"]
    d = online.diff(toraco)
    names = [k for k, _, _ in d]
    order = [f.name for f in dataclasses.fields(RuleSet)]
    assert names == sorted(names, key=order.index)
    as_dict = {k: (a, b) for k, a, b in d}
    assert as_dict["rounds"] == (6, 3)
    assert as_dict["koikoi_when"] == ("not_last_turn", "not_hand_empty")
    assert as_dict["teshi"] == (6, 0)
    assert "goko" not in as_dict


def test_diff_is_symmetric() -> None:
    a, b = PRESETS["nintendo"], PRESETS["fudawiki"]
    assert [(k, y, x) for k, x, y in a.diff(b)] == b.diff(a)
    assert {k for k, _, _ in a.diff(b)} == {"goko", "sanko", "koikoi_limit", "after_koikoi"} | {
        "both_hand_yaku",
        "redeal_field_four_pairs",
        "drawn_round",
    }
