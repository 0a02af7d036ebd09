"""The yaku table and the rules in force, as lines of text for the ``?`` page and the start screen.

Built from a :class:`RuleSet` value, never from a preset's name, so a ``--set``
change shows up here too.
"""

from __future__ import annotations

import dataclasses
import enum

from p2pkoikoi.engine import RuleSet
from p2pkoikoi.engine.rules import (
    YAKU_IDS,
    AfterKoiKoi,
    DealMode,
    KoiKoiBonus,
    KoiKoiLimit,
    KoiKoiMultiplier,
    KoiKoiWhen,
    RainOut,
    SakeCup,
    Scoring,
)
from p2pkoikoi.engine.yaku import YAKU_INFO
from p2pkoikoi.ui.tiles import plain

Line = tuple[str, str]  # (style, text) for one line

_NEEDS = {
    "goko": "all five brights",
    "shiko": "four brights, not the Rain man",
    "ame_shiko": "four brights with the Rain man",
    "sanko": "three brights, not the Rain man",
    "inoshikacho": "Boar, Deer and Butterflies",
    "akatan": "the three red poetry ribbons",
    "aotan": "the three blue ribbons",
    "akatan_aotan": "all six poetry and blue ribbons",
    "tane": "any five animals",
    "tan": "any five ribbons",
    "kasu": "any ten chaff",
    "hanami": "Curtain and Sake cup",
    "tsukimi": "Moon and Sake cup",
    "teshi": "dealt four cards of a month",
    "kuttsuki": "dealt four pairs",
}
_EXTRA_KIND = {
    "inoshikacho": "animal",
    "tane": "animal",
    "akatan": "ribbon",
    "aotan": "ribbon",
    "akatan_aotan": "ribbon",
    "tan": "ribbon",
    "kasu": "chaff",
}

_MULTIPLIER = {
    KoiKoiMultiplier.NONE: "koi-koi calls do not multiply the score",
    KoiKoiMultiplier.OPPONENT_DOUBLE: "x2 if the loser of the round called koi-koi",
    KoiKoiMultiplier.SELF_DOUBLE: "x2 if the winner of the round called koi-koi",
    KoiKoiMultiplier.ANY_DOUBLE: "x2 if anybody called koi-koi",
    KoiKoiMultiplier.ALL_CALLS_PLUS_ONE: "x(1 + all calls by both players)",
    KoiKoiMultiplier.OPPONENT_CALLS_PLUS_ONE: "x(1 + the loser's calls)",
    KoiKoiMultiplier.KOI_BAI: "x2 for each call by the loser (x2, x4, x8...)",
}
_LIMIT = {
    KoiKoiLimit.UNLIMITED: "any number of calls",
    KoiKoiLimit.ONCE_PER_ROUND: "one call per round, by either player",
    KoiKoiLimit.ONCE_PER_PLAYER: "one call per player per round",
}
_AFTER = {
    AfterKoiKoi.CHOOSE_ON_RAISE: "after a call, raising your total offers the choice again",
    AfterKoiKoi.NEXT_YAKU_ENDS: "after a call, the next new yaku by either player ends the round",
}
_WHEN = {
    KoiKoiWhen.ALWAYS: "koi-koi may be called at any time",
    KoiKoiWhen.NOT_LAST_TURN: "no koi-koi on the last turn (both hands empty)",
    KoiKoiWhen.NOT_HAND_EMPTY: "no koi-koi once your own hand is empty",
}

#: settings covered by the sections above; the rest are listed under "Other rules"
_COVERED = set(YAKU_IDS) | {
    "deal",
    "teshi",
    "kuttsuki",
    "plus_yaku",
    "koikoi_multiplier",
    "koikoi_limit",
    "after_koikoi",
    "koikoi_when",
    "double_at",
    "rounds",
    "scoring",
    "pool_stake",
    "knockout",
    "viewing_after_koikoi",
    "koikoi_bonus",
    "pool_payment_cap",
    "sake_cup",
    "rain_out",
    "viewing_needs_other_yaku",
}


def _describe(name: str) -> str:
    try:
        from p2pkoikoi.engine.presets import describe_setting
    except ImportError:  # pragma: no cover - the presets module always has it now
        return name.replace("_", " ")
    try:
        return describe_setting(name)
    except Exception:  # noqa: BLE001 - an undocumented setting still gets a line
        return name.replace("_", " ")


def _value(value: object) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value).replace("_", " ")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def yaku_lines(rules: RuleSet, ascii: bool = False) -> list[Line]:
    out: list[Line] = [
        ("class:heading", "Yaku in these rules                                      pts")
    ]
    off: list[str] = []
    for yid in (*YAKU_IDS, "teshi", "kuttsuki"):
        points = int(getattr(rules, yid))
        romaji = YAKU_INFO[yid][1]
        if points == 0:
            if yid != "akatan_aotan":
                off.append(romaji)
            continue
        needs = _NEEDS[yid]
        if yid == "kasu" and rules.sake_cup is SakeCup.BOTH:
            needs += " (Sake cup counts)"
        extra = ""
        if yid in rules.plus_yaku and yid in _EXTRA_KIND:
            extra = f" +1/extra {_EXTRA_KIND[yid]}"
        if yid == "akatan_aotan":
            needs = "all six poetry and blue ribbons"
        out.append(("", f" {romaji:<24} {needs:<34}{points:>3}{extra}"))
    if rules.akatan_aotan == 0 and rules.akatan and rules.aotan:
        out.append(("", " Both ribbon sets: Akatan and Aotan simply add up."))
    notes: list[str] = []
    if rules.tane_void_with_inoshikacho:
        notes.append("Tane scores nothing beside Inoshikachō.")
    if rules.tan_void_with_akatan_aotan:
        notes.append("Tan scores nothing beside Akatan or Aotan.")
    if rules.viewing_needs_other_yaku:
        notes.append("Hanami and Tsukimi count only beside another yaku.")
    if rules.viewing_after_koikoi and (rules.hanami or rules.tsukimi):
        notes.append(
            f"Hanami and Tsukimi are worth {rules.viewing_after_koikoi} once you have called koi-koi."
        )
    if rules.rain_out is RainOut.FIELD:
        notes.append("A Willow card on the field spoils Hanami; a Paulownia card, Tsukimi.")
    elif rules.rain_out is RainOut.CAPTURED_WILLOW:
        notes.append("Capturing a Willow card spoils your Hanami and Tsukimi.")
    if rules.sake_cup is SakeCup.BOTH:
        notes.append("The Sake cup is an animal and also a chaff.")
    notes.append("Only the best bright yaku counts.")
    out.extend(("class:note", f" {n}") for n in notes)
    if off:
        out.append(("class:note", " Off: " + ", ".join(off)))
    return [(s, plain(t, ascii)) for s, t in out]


def deal_text(rules: RuleSet) -> str:
    """One line: which deal, and what it protects against (or does not)."""
    if rules.deal is DealMode.HIDDEN:
        return "hidden: even a modified program cannot see your hand or the stock"
    return "open: a modified program could read your hand and the stock"


def rules_lines(rules: RuleSet, ascii: bool = False) -> list[Line]:
    out: list[Line] = [("class:heading", "Koi-koi")]
    out.append(("", f" Multiplier: {_MULTIPLIER[rules.koikoi_multiplier]}"))
    out.append(("", f" Limit: {_LIMIT[rules.koikoi_limit]}; {_WHEN[rules.koikoi_when]}"))
    out.append(("", f" {_AFTER[rules.after_koikoi]}"))
    if rules.koikoi_bonus is KoiKoiBonus.SELF_PLUS_ONE:
        out.append(
            (
                "",
                " Bonus: +1 for each of the winner's own calls up to 3; from 4 calls x(calls - 2).",
            )
        )
    if rules.double_at:
        out.append(("", f" A round worth {rules.double_at} or more is doubled."))
    out.append(("class:heading", "Match"))
    if rules.scoring is Scoring.POOL:
        ko = "; a player left with 0 loses at once" if rules.knockout else ""
        if not rules.pool_payment_cap:
            ko = " in full (a pool may go below 0)" + ko.replace("with 0", "with 0 or less")
        out.append(
            (
                "",
                f" {rules.rounds} rounds. Pool: each starts with {rules.pool_stake}, the loser pays{ko}.",
            )
        )
    else:
        out.append(("", f" {rules.rounds} rounds. Running totals; the higher total wins."))
    out.append(("", f" Deal: {deal_text(rules)}."))
    out.append(("class:heading", "Other rules"))
    for f in dataclasses.fields(rules):
        if f.name in _COVERED:
            continue
        out.append(("", f" {f.name.replace('_', ' ')}: {_value(getattr(rules, f.name))}"))
        out.append(("class:note", f"   {_describe(f.name)}"))
    return [(s, plain(t, ascii)) for s, t in out]


def legend_lines(ascii: bool) -> list[Line]:
    from p2pkoikoi.engine.cards import TILE_MARKS

    marks = {variety: pair[1 if ascii else 0] for variety, pair in TILE_MARKS.items()}
    return [
        ("class:heading", "Card tiles: month, flower, kind"),
        (
            "",
            f" {marks['bright']} bright   {marks['animal']} animal   {marks['poem']} poetry ribbon (red)"
            f"   {marks['blue']} blue ribbon   {marks['red']} plain red ribbon   {marks['chaff']} chaff",
        ),
        ("", " Pin Plm Chy Wis Irs Pny Clv Pmp Chr Mpl Wlw Pau = months 1..12"),
    ]


KEYS_HELP = (
    ("class:heading", "Keys"),
    ("", " Left/Right or 1-8: choose   Enter: confirm   Escape: back   mouse: click a card"),
    ("", " ?: this page   c: chat   r: resign   q: leave   Up/Down, PgUp/PgDn: scroll pages"),
)


def help_lines(rules: RuleSet, ascii: bool) -> list[Line]:
    return [
        *yaku_lines(rules, ascii),
        ("", ""),
        *rules_lines(rules, ascii),
        ("", ""),
        *legend_lines(ascii),
        ("", ""),
        *[(s, plain(t, ascii)) for s, t in KEYS_HELP],
    ]
