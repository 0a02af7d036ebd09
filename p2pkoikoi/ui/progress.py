"""How close a captured pile is to the yaku it has not made yet ("Inoshikachō 2/3").

Pure functions of the piles and the rules in force; a yaku switched off, one
already made, or one the other player has made impossible (they hold a card
it needs, or too many of its kind) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pkoikoi.engine import CardSet, RuleSet, YakuScore
from p2pkoikoi.engine.cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INOSHIKACHO,
    MOON,
    POEM_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
)
from p2pkoikoi.engine.rules import SakeCup
from p2pkoikoi.engine.yaku import YAKU_INFO


@dataclass(frozen=True, slots=True)
class Progress:
    yaku: str  # yaku id
    have: int
    need: int
    points: int

    @property
    def romaji(self) -> str:
        return YAKU_INFO[self.yaku][1]

    @property
    def missing(self) -> int:
        return self.need - self.have


def _targets(rules: RuleSet) -> list[tuple[str, int, int, bool]]:
    """(yaku id, card mask, cards needed, specific cards) for each yaku that scores."""
    chaff = CHAFF | (SAKE_CUP.bit if rules.sake_cup is SakeCup.BOTH else 0)
    plain_brights = BRIGHTS & ~RAIN_MAN.bit
    out = [
        ("sanko", plain_brights, 3, False),
        ("shiko", plain_brights, 4, False),
        ("goko", BRIGHTS, 5, False),
        ("inoshikacho", INOSHIKACHO, 3, True),
        ("akatan", POEM_RIBBONS, 3, True),
        ("aotan", BLUE_RIBBONS, 3, True),
        ("tane", ANIMALS, 5, False),
        ("tan", RIBBONS, 5, False),
        ("kasu", chaff, 10, False),
        ("hanami", CURTAIN.bit | SAKE_CUP.bit, 2, True),
        ("tsukimi", MOON.bit | SAKE_CUP.bit, 2, True),
    ]
    return [t for t in out if getattr(rules, t[0]) > 0]


def near_yaku(
    pile: CardSet, other: CardSet, rules: RuleSet, made: tuple[YakuScore, ...], limit: int = 4
) -> list[Progress]:
    """The yaku ``pile`` is working towards, closest first (at most ``limit``).

    ``other`` is the other player's captured pile: a card there is out of reach.
    """
    made_ids = {y.id for y in made}
    bright_made = made_ids & {"sanko", "shiko", "ame_shiko", "goko"}
    out: list[Progress] = []
    for yid, mask, need, _specific in _targets(rules):
        if yid in made_ids:
            continue
        # with a bright yaku in hand, only the bigger ones are worth showing
        if (
            yid in ("sanko", "shiko")
            and bright_made
            and (yid == "sanko" or "shiko" in bright_made or "goko" in bright_made)
        ):
            continue
        have = (pile.mask & mask).bit_count()
        reachable = (mask & ~other.mask).bit_count()
        if have == 0 or reachable < need:
            continue
        if need - have > max(2, need // 2):
            continue
        out.append(Progress(yid, have, need, getattr(rules, yid)))
    out.sort(key=lambda p: (p.missing, -p.points))
    return out[:limit]
