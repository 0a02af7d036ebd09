"""Presets: each one's distinctive rules as its source states them, lookup, help
text, and the protocol vectors in ``protocol/vectors/rules.json``."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib

import pytest

from p2pkoikoi.engine.errors import InputError
from p2pkoikoi.engine.presets import (
    DEFAULT_PRESET,
    PRESET_SOURCES,
    PRESETS,
    describe_setting,
    get_preset,
)
from p2pkoikoi.engine.rules import (
    AfterKoiKoi,
    BothHandYaku,
    CardDrawTie,
    DrawnRound,
    FirstDealer,
    KoiKoiBonus,
    KoiKoiLimit,
    KoiKoiMultiplier,
    KoiKoiWhen,
    RainOut,
    RuleSet,
    SakeCup,
    Scoring,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAMES = (
    "online",
    "nintendo",
    "rulebook",
    "vanikar",
    "traditions",
    "toraco",
    "fudawiki",
    "koikoijapan",
)
ALL_PLUS = ("akatan", "akatan_aotan", "aotan", "inoshikacho", "kasu", "tan", "tane")


def test_preset_names_and_default() -> None:
    assert tuple(PRESETS) == NAMES
    assert DEFAULT_PRESET == "online"
    assert PRESETS[DEFAULT_PRESET] == RuleSet()
    assert set(PRESET_SOURCES) == set(PRESETS)
    assert all(PRESET_SOURCES[n] and "\n" not in PRESET_SOURCES[n] for n in NAMES)


def test_get_preset() -> None:
    assert get_preset("nintendo") is PRESETS["nintendo"]
    assert get_preset(" TORACO ") is PRESETS["toraco"]
    with pytest.raises(InputError) as err:
        get_preset("x")
    assert str(err.value) == (
        "unknown preset: 'x' (choose from: online, nintendo, rulebook, vanikar, "
        "traditions, toraco, fudawiki, koikoijapan)"
    )


def test_describe_every_setting() -> None:
    for f in dataclasses.fields(RuleSet):
        text = describe_setting(f.name)
        assert text and "\n" not in text and len(text) < 100, f.name
    with pytest.raises(InputError, match="unknown rule setting: bogus"):
        describe_setting("bogus")


def test_presets_all_differ() -> None:
    values = list(PRESETS.values())
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            assert a != b and a.diff(b)


# ---------------------------------------------------------------- each preset


def test_online() -> None:
    """002: Nintendo values, Tane/Tan beside the sets, 8+ doubled, shared multiplier, pool."""
    r = PRESETS["online"]
    assert (r.goko, r.shiko, r.ame_shiko, r.sanko) == (10, 8, 7, 5)
    assert (r.hanami, r.tsukimi, r.akatan_aotan, r.teshi, r.kuttsuki) == (5, 5, 10, 6, 6)
    assert r.plus_yaku == ALL_PLUS
    assert not r.tane_void_with_inoshikacho and not r.tan_void_with_akatan_aotan
    assert r.sake_cup is SakeCup.ANIMAL
    assert r.double_at == 8
    assert r.koikoi_multiplier is KoiKoiMultiplier.ALL_CALLS_PLUS_ONE
    assert r.koikoi_limit is KoiKoiLimit.UNLIMITED
    assert r.after_koikoi is AfterKoiKoi.CHOOSE_ON_RAISE
    assert r.koikoi_when is KoiKoiWhen.NOT_LAST_TURN
    assert r.both_hand_yaku is BothHandYaku.DEALER_FIRST
    assert r.redeal_field_four_of_month and not r.redeal_field_four_pairs
    assert r.drawn_round is DrawnRound.DEALER_STAYS
    assert r.first_dealer is FirstDealer.COIN
    assert (r.scoring, r.pool_stake, r.knockout, r.rounds) == (Scoring.POOL, 25, True, 6)
    assert r.rain_out is RainOut.NONE


def test_nintendo() -> None:
    r = PRESETS["nintendo"]
    assert (r.goko, r.shiko, r.ame_shiko, r.sanko, r.teshi, r.kuttsuki) == (10, 8, 7, 5, 6, 6)
    assert r.double_at == 7
    assert r.koikoi_multiplier is KoiKoiMultiplier.OPPONENT_DOUBLE
    assert r.koikoi_limit is KoiKoiLimit.ONCE_PER_ROUND
    assert r.after_koikoi is AfterKoiKoi.NEXT_YAKU_ENDS
    assert r.tane_void_with_inoshikacho and r.tan_void_with_akatan_aotan
    assert r.sake_cup is SakeCup.BOTH
    assert r.rounds == 12 and r.scoring is Scoring.SUM
    assert r.drawn_round is DrawnRound.DEALER_PASSES
    assert r.first_dealer is FirstDealer.CARD_DRAW
    assert r.redeal_field_four_of_month and not r.redeal_field_four_pairs


def test_rulebook() -> None:
    """000: no viewing yaku, 7+ doubled, one koi-koi, both quick victories score, swap."""
    r = PRESETS["rulebook"]
    assert (r.hanami, r.tsukimi) == (0, 0)
    assert (r.goko, r.shiko, r.ame_shiko, r.sanko, r.akatan_aotan) == (10, 8, 7, 5, 10)
    assert r.plus_yaku == ALL_PLUS
    assert r.double_at == 7
    assert r.koikoi_multiplier is KoiKoiMultiplier.OPPONENT_DOUBLE
    assert r.koikoi_limit is KoiKoiLimit.ONCE_PER_ROUND
    assert r.after_koikoi is AfterKoiKoi.NEXT_YAKU_ENDS
    assert r.both_hand_yaku is BothHandYaku.BOTH_SCORE
    assert r.hand_yaku_before_field_redeal
    assert r.redeal_field_four_of_month and r.redeal_field_four_pairs
    assert r.hand_swap
    assert r.drawn_round is DrawnRound.DEALER_PASSES
    assert r.first_dealer is FirstDealer.CARD_DRAW and r.card_draw_tie is CardDrawTie.REDRAW
    assert r.rounds == 12 and r.scoring is Scoring.SUM


def test_vanikar() -> None:
    """001: no hand yaku, +1 only on Tane/Tan/Kasu, 7+ doubled, opponent's call doubles."""
    r = PRESETS["vanikar"]
    assert (r.teshi, r.kuttsuki) == (0, 0)
    assert r.plus_yaku == ("kasu", "tan", "tane")
    assert r.akatan_aotan == 10
    assert r.sake_cup is SakeCup.ANIMAL
    assert r.double_at == 7
    assert r.koikoi_multiplier is KoiKoiMultiplier.OPPONENT_DOUBLE
    assert r.koikoi_limit is KoiKoiLimit.UNLIMITED
    assert r.koikoi_when is KoiKoiWhen.NOT_LAST_TURN
    assert r.drawn_round is DrawnRound.DEALER_PASSES
    assert r.rounds == 6 and r.scoring is Scoring.SUM


def test_traditions() -> None:
    """003: Goko 15, Shiko 10, Ame-shiko 8, Sanko 6, Akatan 6, Aotan 6, Sake cup both."""
    r = PRESETS["traditions"]
    assert (r.goko, r.shiko, r.ame_shiko, r.sanko) == (15, 10, 8, 6)
    assert (r.inoshikacho, r.akatan, r.aotan, r.akatan_aotan) == (5, 6, 6, 0)
    assert (r.hanami, r.tsukimi) == (0, 0)
    assert r.sake_cup is SakeCup.BOTH
    assert r.plus_yaku == ("kasu", "tan", "tane")
    assert (r.teshi, r.kuttsuki) == (6, 6)
    assert r.both_hand_yaku is BothHandYaku.REDEAL
    assert r.redeal_field_four_of_month and r.redeal_field_four_pairs
    assert r.double_at == 0 and r.koikoi_multiplier is KoiKoiMultiplier.NONE
    assert r.first_dealer is FirstDealer.COIN
    assert r.rounds == 1 and r.scoring is Scoring.SUM


def test_toraco() -> None:
    """004: no hand yaku but redeals for them, no koi-koi with an empty hand, 3 rounds."""
    r = PRESETS["toraco"]
    assert (r.teshi, r.kuttsuki) == (0, 0)
    assert r.redeal_hand_four_of_month and r.redeal_hand_four_pairs
    assert r.redeal_field_four_of_month and not r.redeal_field_four_pairs
    assert r.koikoi_when is KoiKoiWhen.NOT_HAND_EMPTY
    assert r.koikoi_multiplier is KoiKoiMultiplier.OPPONENT_DOUBLE
    assert r.koikoi_limit is KoiKoiLimit.UNLIMITED
    assert r.double_at == 7
    assert r.sake_cup is SakeCup.BOTH
    assert r.akatan_aotan == 0
    assert r.plus_yaku == ("kasu", "tan", "tane")
    assert (r.hanami, r.tsukimi) == (5, 5)
    assert r.drawn_round is DrawnRound.DEALER_STAYS
    assert r.rounds == 3 and r.scoring is Scoring.SUM


def test_fudawiki() -> None:
    """Fuda Wiki common rules: Goko 15, Sanko 6, one yaku per group, unlimited calls."""
    r = PRESETS["fudawiki"]
    assert (r.goko, r.shiko, r.ame_shiko, r.sanko) == (15, 8, 7, 6)
    assert r.tane_void_with_inoshikacho and r.tan_void_with_akatan_aotan
    assert r.koikoi_multiplier is KoiKoiMultiplier.OPPONENT_DOUBLE
    assert r.koikoi_limit is KoiKoiLimit.UNLIMITED
    assert r.after_koikoi is AfterKoiKoi.CHOOSE_ON_RAISE
    assert r.double_at == 7
    assert r.sake_cup is SakeCup.BOTH
    assert r.both_hand_yaku is BothHandYaku.DRAW
    assert r.redeal_field_four_of_month and r.redeal_field_four_pairs
    assert r.drawn_round is DrawnRound.DEALER_STAYS
    assert r.first_dealer is FirstDealer.CARD_DRAW
    assert r.card_draw_tie is CardDrawTie.HIGHER_CARD
    assert r.rounds == 12 and r.scoring is Scoring.SUM


def test_koikoijapan() -> None:
    """guansanghai/KoiKoi-AI koikoigame.py: 8 rounds from 30 points, uncapped payments,
    +1 per own koi-koi up to 3 then x(calls - 2), viewing 1 (3 after a call), no hand yaku."""
    r = PRESETS["koikoijapan"]
    assert (r.goko, r.shiko, r.ame_shiko, r.sanko, r.inoshikacho) == (10, 8, 7, 5, 5)
    assert (r.akatan, r.aotan, r.akatan_aotan) == (5, 5, 20)
    assert (r.tane, r.tan, r.kasu) == (1, 1, 1)
    assert r.plus_yaku == ("kasu", "tan", "tane")
    assert not r.tane_void_with_inoshikacho and not r.tan_void_with_akatan_aotan
    assert r.sake_cup is SakeCup.BOTH
    assert (r.hanami, r.tsukimi, r.viewing_after_koikoi) == (1, 1, 3)
    assert not r.viewing_needs_other_yaku and r.rain_out is RainOut.NONE
    assert (r.teshi, r.kuttsuki) == (0, 0)
    assert r.double_at == 0 and r.koikoi_multiplier is KoiKoiMultiplier.NONE
    assert r.koikoi_bonus is KoiKoiBonus.SELF_PLUS_ONE
    assert r.koikoi_limit is KoiKoiLimit.UNLIMITED
    assert r.after_koikoi is AfterKoiKoi.CHOOSE_ON_RAISE
    assert r.koikoi_when is KoiKoiWhen.NOT_HAND_EMPTY
    assert r.redeal_field_four_of_month and r.redeal_hand_four_of_month
    assert not r.redeal_field_four_pairs and not r.redeal_hand_four_pairs
    assert not r.hand_swap and not r.forced_capture
    assert (r.drawn_round, r.oya_ken_points) == (DrawnRound.OYA_KEN, 1)
    assert r.first_dealer is FirstDealer.COIN and r.next_dealer.value == "winner"
    assert (r.rounds, r.scoring, r.pool_stake, r.knockout) == (8, Scoring.POOL, 30, True)
    assert not r.pool_payment_cap


def test_new_settings_default_to_the_old_behaviour() -> None:
    """The three KoiKoi-Japan settings are off in every other preset."""
    for name, r in PRESETS.items():
        if name != "koikoijapan":
            assert r.viewing_after_koikoi == 0, name
            assert r.koikoi_bonus is KoiKoiBonus.NONE, name
            assert r.pool_payment_cap, name


# ---------------------------------------------------------------- protocol vectors


def test_vectors_file_matches_presets() -> None:
    """``protocol/vectors/rules.json`` is what the presets encode to now."""
    data = json.loads((ROOT / "protocol" / "vectors" / "rules.json").read_text("utf-8"))
    tag = bytes.fromhex(data["domain_tag_hex"])
    assert tag == b"p2pkoikoi/rules/v1\x00"
    entries = {e["name"]: e for e in data["presets"]}
    assert list(entries) == list(PRESETS)
    for name, rules in PRESETS.items():
        entry = entries[name]
        encoding = entry["encoding"].encode("utf-8")
        assert encoding == rules.encode(), name
        assert hashlib.sha256(tag + encoding).hexdigest() == entry["fingerprint"], name
        assert rules.fingerprint() == entry["fingerprint"], name
        assert RuleSet.decode(encoding) == rules, name


def test_rules_md_table_matches_the_presets() -> None:
    """docs/rules.md "Every setting side by side" shows every preset's every value."""
    text = (ROOT / "docs" / "rules.md").read_text("utf-8")
    start = text.index("| Setting | `online`")
    rows = text[start : text.index("\n\n", start)].splitlines()
    header = [c.strip().strip("`") for c in rows[0].strip("|").split("|")]
    assert header == ["Setting", *PRESETS]

    def shown(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, tuple):
            return "all seven" if value == ALL_PLUS else ", ".join(value)
        return str(getattr(value, "value", value))

    table = {}
    for row in rows[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        table[cells[0].strip("`")] = cells[1:]
    assert list(table) == [f.name for f in dataclasses.fields(RuleSet)]
    for name, cells in table.items():
        assert cells == [shown(getattr(r, name)) for r in PRESETS.values()], name
