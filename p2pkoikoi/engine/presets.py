"""Named rule sets, each traced to a published source.

A preset is nothing but a :class:`~p2pkoikoi.engine.rules.RuleSet` value: the
engine never asks which preset is in force, it reads the fields.  The reasons
for every value a source leaves open are written down in ``docs/rules.md``
("Choices where the sources are silent"); keep the two in step.
"""

from __future__ import annotations

from p2pkoikoi.engine.errors import InputError
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
    RuleSet,
    SakeCup,
    Scoring,
)
from p2pkoikoi.engine.values import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

DEFAULT_PRESET: Final = "online"

#: Tane, Tan and Kasu only: the sources that print "+1 for each extra card"
#: beside those three yaku and nowhere else.
_PLUS_COUNTS: Final = ("kasu", "tan", "tane")

# Every other preset is a copy of this one made by ``values.replace``, which needs
# none of :mod:`dataclasses` (RuleSet is an ``engine.values`` class)
_ONLINE = RuleSet()

_NINTENDO = replace(
    _ONLINE,
    tane_void_with_inoshikacho=True,
    tan_void_with_akatan_aotan=True,
    sake_cup=SakeCup.BOTH,
    double_at=7,
    koikoi_multiplier=KoiKoiMultiplier.OPPONENT_DOUBLE,
    koikoi_limit=KoiKoiLimit.ONCE_PER_ROUND,
    after_koikoi=AfterKoiKoi.NEXT_YAKU_ENDS,
    drawn_round=DrawnRound.DEALER_PASSES,
    first_dealer=FirstDealer.CARD_DRAW,
    rounds=12,
    scoring=Scoring.SUM,
)

_RULEBOOK = replace(
    _ONLINE,
    hanami=0,
    tsukimi=0,
    double_at=7,
    koikoi_multiplier=KoiKoiMultiplier.OPPONENT_DOUBLE,
    koikoi_limit=KoiKoiLimit.ONCE_PER_ROUND,
    after_koikoi=AfterKoiKoi.NEXT_YAKU_ENDS,
    both_hand_yaku=BothHandYaku.BOTH_SCORE,
    hand_yaku_before_field_redeal=True,
    redeal_field_four_pairs=True,
    hand_swap=True,
    drawn_round=DrawnRound.DEALER_PASSES,
    first_dealer=FirstDealer.CARD_DRAW,
    card_draw_tie=CardDrawTie.REDRAW,
    rounds=12,
    scoring=Scoring.SUM,
)

_VANIKAR = replace(
    _ONLINE,
    teshi=0,
    kuttsuki=0,
    plus_yaku=_PLUS_COUNTS,
    double_at=7,
    koikoi_multiplier=KoiKoiMultiplier.OPPONENT_DOUBLE,
    drawn_round=DrawnRound.DEALER_PASSES,
    scoring=Scoring.SUM,
)

_TRADITIONS = replace(
    _ONLINE,
    goko=15,
    shiko=10,
    ame_shiko=8,
    sanko=6,
    akatan=6,
    aotan=6,
    akatan_aotan=0,
    hanami=0,
    tsukimi=0,
    plus_yaku=_PLUS_COUNTS,
    sake_cup=SakeCup.BOTH,
    double_at=0,
    koikoi_multiplier=KoiKoiMultiplier.NONE,
    both_hand_yaku=BothHandYaku.REDEAL,
    redeal_field_four_pairs=True,
    rounds=1,
    scoring=Scoring.SUM,
)

_TORACO = replace(
    _ONLINE,
    akatan_aotan=0,
    teshi=0,
    kuttsuki=0,
    plus_yaku=_PLUS_COUNTS,
    sake_cup=SakeCup.BOTH,
    double_at=7,
    koikoi_multiplier=KoiKoiMultiplier.OPPONENT_DOUBLE,
    koikoi_when=KoiKoiWhen.NOT_HAND_EMPTY,
    redeal_hand_four_of_month=True,
    redeal_hand_four_pairs=True,
    rounds=3,
    scoring=Scoring.SUM,
)

_FUDAWIKI = replace(
    _ONLINE,
    goko=15,
    sanko=6,
    tane_void_with_inoshikacho=True,
    tan_void_with_akatan_aotan=True,
    sake_cup=SakeCup.BOTH,
    double_at=7,
    koikoi_multiplier=KoiKoiMultiplier.OPPONENT_DOUBLE,
    both_hand_yaku=BothHandYaku.DRAW,
    redeal_field_four_pairs=True,
    first_dealer=FirstDealer.CARD_DRAW,
    rounds=12,
    scoring=Scoring.SUM,
)

#: The PC game KoiKoi-Japan, as guansanghai/KoiKoi-AI's ``koikoigame.py`` implements it.
_KOIKOIJAPAN = replace(
    _ONLINE,
    akatan_aotan=20,  # its "Red & Blue 10" scores beside Red 5 and Blue 5: 20 in all, flat
    hanami=1,
    tsukimi=1,
    viewing_after_koikoi=3,
    teshi=0,
    kuttsuki=0,
    plus_yaku=_PLUS_COUNTS,
    sake_cup=SakeCup.BOTH,
    double_at=0,
    koikoi_multiplier=KoiKoiMultiplier.NONE,
    koikoi_bonus=KoiKoiBonus.SELF_PLUS_ONE,
    koikoi_when=KoiKoiWhen.NOT_HAND_EMPTY,
    redeal_hand_four_of_month=True,
    drawn_round=DrawnRound.OYA_KEN,
    oya_ken_points=1,
    rounds=8,
    pool_stake=30,
    pool_payment_cap=False,
)

PRESETS: Final[dict[str, RuleSet]] = {
    "online": _ONLINE,
    "nintendo": _NINTENDO,
    "rulebook": _RULEBOOK,
    "vanikar": _VANIKAR,
    "traditions": _TRADITIONS,
    "toraco": _TORACO,
    "fudawiki": _FUDAWIKI,
    "koikoijapan": _KOIKOIJAPAN,
}

PRESET_SOURCES: Final[dict[str, str]] = {
    "online": "this program's default for play over the network, with Nintendo's yaku values",
    "nintendo": "Nintendo's Koi-Koi rules for its hanafuda cards",
    "rulebook": "the printed Hanafuda Rulebook's Koi-Koi rules and its set reference sheet",
    "vanikar": "the Vanikar app's Koi-Koi rules and scoring table",
    "traditions": "the Traditions app's single-deal Koi-Koi against the computer",
    "toraco": "the TORACO Hanafuda app's 3-round Koi-Koi",
    "fudawiki": "Fuda Wiki's common Koi-Koi rules: Goko 15, Sanko 6, one yaku per group, "
    "unlimited calls",
    "koikoijapan": "the PC game KoiKoi-Japan (8 rounds, 30-point pool, +1 per own koi-koi)",
}


def rules_label(rules: RuleSet) -> str:
    """``"nintendo"``, or ``"online with 2 changes"``: rules named as a player knows them."""
    name, diffs = closest_preset(rules)
    if not diffs:
        return name
    return f"{name} with {len(diffs)} change{'s' if len(diffs) != 1 else ''}"


def _readable(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v).replace("_", " ") for v in value) or "none"
    return str(value).replace("_", " ")


def describe_mismatch(mine: RuleSet, theirs: RuleSet, me: str, them: str) -> str:
    """Two rule sets that differ, for people: who plays which preset, then one line
    per differing setting with readable values, e.g. with ``me="you expect"`` and
    ``them="the host proposes"``::

        the host plays nintendo, you expect online
          sake_cup: you expect animal, the host proposes both
    """
    me_who, me_verb = me.rsplit(" ", 1)
    them_who, _ = them.rsplit(" ", 1)
    lines = [f"{them_who} plays {rules_label(theirs)}, {me_who} {me_verb} {rules_label(mine)}"]
    for key, a, b in mine.diff(theirs):
        # the setting as --set names it, so the fix can be typed
        lines.append(f"  {key}: {me} {_readable(a)}, {them} {_readable(b)}")
    return "\n".join(lines)


_SETTING_HELP: Final[dict[str, str]] = {
    "goko": "points for Goko, all five brights (0 = off)",
    "shiko": "points for Shiko, four brights without the Rain man (0 = off)",
    "ame_shiko": "points for Ame-shiko, four brights including the Rain man (0 = off)",
    "sanko": "points for Sanko, three brights without the Rain man (0 = off)",
    "inoshikacho": "points for Inoshikacho, the Boar, Deer and Butterflies (0 = off)",
    "akatan": "points for Akatan, the three red poetry ribbons (0 = off)",
    "aotan": "points for Aotan, the three blue ribbons (0 = off)",
    "akatan_aotan": "points for holding both ribbon sets, replacing Akatan and Aotan "
    "(0 = they simply add up)",
    "tane": "points for Tane, any five animals (0 = off)",
    "tan": "points for Tan, any five ribbons (0 = off)",
    "kasu": "points for Kasu, any ten chaff cards (0 = off)",
    "hanami": "points for Hanami-zake, the Curtain and the Sake cup (0 = off)",
    "tsukimi": "points for Tsukimi-zake, the Moon and the Sake cup (0 = off)",
    "viewing_after_koikoi": "points for Hanami and Tsukimi once their scorer has called "
    "koi-koi (0 = unchanged)",
    "teshi": "points for Teshi, being dealt all four cards of a month (0 = off)",
    "kuttsuki": "points for Kuttsuki, being dealt two cards of each of four months (0 = off)",
    "plus_yaku": "yaku that score +1 for each card of their kind beyond the ones they need",
    "tane_void_with_inoshikacho": "Tane scores nothing once Inoshikacho is made",
    "tan_void_with_akatan_aotan": "Tan scores nothing once Akatan or Aotan is made",
    "sake_cup": "whether the Sake cup counts only as an animal or also as a chaff card",
    "viewing_needs_other_yaku": "Hanami and Tsukimi score only beside another yaku",
    "rain_out": "whether Willow or Paulownia cards spoil Hanami and Tsukimi",
    "double_at": "a round total of at least this many points is doubled (0 = never)",
    "koikoi_multiplier": "how koi-koi calls multiply the round winner's score",
    "koikoi_bonus": "self_plus_one: the winner's own calls add 1 each up to 3; from 4, "
    "x(calls - 2)",
    "koikoi_limit": "how many koi-koi calls a round allows",
    "after_koikoi": "after a koi-koi, whether a raise offers a new choice or ends the round",
    "koikoi_when": "when a player who may stop may also call koi-koi",
    "both_hand_yaku": "what happens when both players are dealt a hand yaku",
    "hand_yaku_before_field_redeal": "hands are checked for hand yaku before the field "
    "is checked for a redeal",
    "redeal_field_four_of_month": "deal again when the field shows all four cards of a month",
    "redeal_field_four_pairs": "deal again when the field shows two cards of each of four months",
    "redeal_hand_four_of_month": "deal again when a hand holds all four cards of a month",
    "redeal_hand_four_pairs": "deal again when a hand holds two cards of each of four months",
    "hand_swap": "the non-dealer may swap hands with the dealer before looking",
    "forced_capture": "a player holding a card that matches the field must play one",
    "deal": "hidden: cards stay hidden even from a modified program (mental poker)",
    "drawn_round": "what happens when both hands run out and nobody stopped",
    "oya_ken_points": "points the dealer scores for a drawn round under oya-ken",
    "first_dealer": "how the first dealer is chosen",
    "card_draw_tie": "who deals when both drawn cards are of one month",
    "next_dealer": "who deals the next round",
    "rounds": "number of rounds in the match",
    "scoring": "running totals, or a pool paid by the loser of each round",
    "pool_stake": "points each player starts with under pool scoring",
    "knockout": "under pool scoring, a player left with 0 points (or less) loses at once",
    "pool_payment_cap": "under pool scoring, the loser pays at most what they have left "
    "(false: totals may go below 0)",
}


def get_preset(name: str) -> RuleSet:
    """The preset called ``name`` (case and surrounding space ignored)."""
    key = name.strip().lower() if isinstance(name, str) else name
    try:
        return PRESETS[key]
    except (KeyError, TypeError):
        raise InputError(f"unknown preset: {name!r} (choose from: {', '.join(PRESETS)})") from None


def describe_setting(name: str) -> str:
    """One English line explaining a RuleSet field, for ``p2pkoikoi rules`` and the UI."""
    try:
        return _SETTING_HELP[name]
    except KeyError:
        raise InputError(f"unknown rule setting: {name}") from None


def closest_preset(rules: RuleSet) -> tuple[str, list[tuple[str, object, object]]]:
    """The preset that ``rules`` differ least from, and the differences.

    Each difference is ``(setting, value in rules, value in the preset)``.  Ties go
    to the preset listed first in :data:`PRESETS` (the default comes first).
    """
    best = min(PRESETS, key=lambda name: len(rules.diff(PRESETS[name])))
    return best, [(k, mine, theirs) for k, mine, theirs in rules.diff(PRESETS[best])]
