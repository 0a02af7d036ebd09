"""Yaku totals of a pile, as docs/rules.md describes them (no viewing yaku beyond the basics)."""

from __future__ import annotations

from typing import Any

from .deck import CARD, kind

BRIGHTS = [CARD[c] for c in ("1b", "3b", "8b", "11b", "12b")]
RAIN = CARD["11b"]
ANIMALS = [c for c in range(48) if kind(c) == "a"]
RIBBONS = [c for c in range(48) if kind(c) == "r"]
CHAFF = [c for c in range(48) if kind(c) == "c"]
INO = [CARD["6a"], CARD["7a"], CARD["10a"]]
AKA = [CARD["1r"], CARD["2r"], CARD["3r"]]
AO = [CARD["6r"], CARD["9r"], CARD["10r"]]
SAKE = CARD["9a"]
CURTAIN = CARD["3b"]
MOON = CARD["8b"]


def _has(pile: int, cards: list[int]) -> bool:
    return all(pile >> c & 1 for c in cards)


def _count(pile: int, cards: list[int]) -> int:
    return sum(pile >> c & 1 for c in cards)


def total(r: dict[str, Any], pile: int, called: bool = False) -> int:
    plus = set(r["plus_yaku"])
    pts = 0
    nb = _count(pile, BRIGHTS)
    rain = bool(pile >> RAIN & 1)
    bright_options = []
    if nb == 5 and r["goko"]:
        bright_options.append(r["goko"])
    if nb >= 4:
        if rain and r["ame_shiko"]:
            bright_options.append(r["ame_shiko"])
        if (nb - rain) >= 4 and r["shiko"]:
            bright_options.append(r["shiko"])
    if (nb - rain) >= 3 and r["sanko"]:
        bright_options.append(r["sanko"])
    if bright_options:
        pts += max(bright_options)
    n_an = _count(pile, ANIMALS)
    n_rib = _count(pile, RIBBONS)
    n_chaff = _count(pile, CHAFF) + (1 if r["sake_cup"] == "both" and pile >> SAKE & 1 else 0)
    ino = r["inoshikacho"] and _has(pile, INO)
    if ino:
        pts += r["inoshikacho"] + (n_an - 3 if "inoshikacho" in plus else 0)
    aka = bool(r["akatan"]) and _has(pile, AKA)
    ao = bool(r["aotan"]) and _has(pile, AO)
    both = _has(pile, AKA) and _has(pile, AO)
    ribbon_set = False
    if both and r["akatan_aotan"]:
        pts += r["akatan_aotan"] + (n_rib - 6 if "akatan_aotan" in plus else 0)
        ribbon_set = True
    else:
        if aka:
            pts += r["akatan"] + (n_rib - 3 if "akatan" in plus else 0)
            ribbon_set = True
        if ao:
            pts += r["aotan"] + (n_rib - 3 if "aotan" in plus else 0)
            ribbon_set = True
    if r["tane"] and n_an >= 5 and not (r["tane_void_with_inoshikacho"] and ino):
        pts += r["tane"] + (n_an - 5 if "tane" in plus else 0)
    if r["tan"] and n_rib >= 5 and not (r["tan_void_with_akatan_aotan"] and ribbon_set):
        pts += r["tan"] + (n_rib - 5 if "tan" in plus else 0)
    if r["kasu"] and n_chaff >= 10:
        pts += r["kasu"] + (n_chaff - 10 if "kasu" in plus else 0)
    viewing = 0
    if pile >> SAKE & 1:
        vh = r["hanami"] and pile >> CURTAIN & 1
        vt = r["tsukimi"] and pile >> MOON & 1
        for on, val in ((vh, r["hanami"]), (vt, r["tsukimi"])):
            if on:
                viewing += (
                    r["viewing_after_koikoi"] if (called and r["viewing_after_koikoi"]) else val
                )
    if viewing and (not r["viewing_needs_other_yaku"] or pts):
        pts += viewing
    return pts


def months(cards: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for c in cards:
        out[c // 4] = out.get(c // 4, 0) + 1
    return out


def four_of_month(cards: list[int]) -> bool:
    return any(n == 4 for n in months(cards).values())


def four_pairs(cards: list[int]) -> bool:
    m = months(cards)
    return len(m) == 4 and all(n == 2 for n in m.values())


def hand_yaku(r: dict[str, Any], cards: list[int]) -> int:
    """Points of the best hand yaku of a dealt hand (0: none)."""
    best = 0
    if r["teshi"] and four_of_month(cards):
        best = max(best, r["teshi"])
    if r["kuttsuki"] and four_pairs(cards):
        best = max(best, r["kuttsuki"])
    return best


def must_declare(r: dict[str, Any], cards: list[int]) -> bool:
    """hidden-deal.md section 3, 'When to declare': judged from the hand alone."""
    if four_of_month(cards) and (r["teshi"] > 0 or r["redeal_hand_four_of_month"]):
        return True
    return four_pairs(cards) and (r["kuttsuki"] > 0 or r["redeal_hand_four_pairs"])
