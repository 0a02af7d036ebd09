"""Card tiles: the compact, coloured text form of a card, and names made plain for ``--ascii``.

A tile is six cells: the month number (two cells), a three-letter flower and
one mark for the kind.  The mark alone tells the kind without colour (for
``NO_COLOR`` and monochrome terminals); the colour only repeats it::

     1Pin*   bright          (unicode: ★)
     2Plm@   animal          (unicode: ◆)
     1Pinp   poetry ribbon   (red, with writing)
     6Pnyb   blue ribbon
     4Wisr   plain red ribbon
     3Chy.   chaff           (unicode: ·)

Everything here is pure: card in, ``(style, text)`` out.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from p2pkoikoi.engine import Card, CardSet, Kind

# the labels are the engine's (engine/cards.py: the same labels name cards as input)
from p2pkoikoi.engine.cards import FLOWER3, TILE_MARKS, variety

TILE_WIDTH: Final = 6

#: group order and titles for captured piles
GROUPS: Final = (
    (Kind.BRIGHT, "Brights"),
    (Kind.ANIMAL, "Animals"),
    (Kind.RIBBON, "Ribbons"),
    (Kind.CHAFF, "Chaff"),
)


def mark(card: Card, ascii: bool) -> str:
    return TILE_MARKS[variety(card)][1 if ascii else 0]


def tile_text(card: Card, ascii: bool) -> str:
    """The six-cell text of a tile, e.g. ``" 8Pmp★"``."""
    return f"{card.month:>2}{FLOWER3[card.month]}{mark(card, ascii)}"


def short_text(card: Card, ascii: bool) -> str:
    """A three-cell tile for captured piles: month and mark, e.g. ``" 8★"``."""
    return f"{card.month:>2}{mark(card, ascii)}"


def tile_style(card: Card, extra: str = "") -> str:
    style = f"class:card class:card.{variety(card)}"
    return f"{style} {extra}" if extra else style


def plain(text: str, ascii: bool) -> str:
    """``text`` without accents and non-ASCII signs when ``ascii`` is set (Inoshikachō -> Inoshikacho)."""
    if not ascii:
        return text
    replaced = text.replace("—", "-").replace("–", "-").replace("…", "...").replace("×", "x")
    replaced = replaced.replace("←→", "Left/Right").replace("↑↓", "Up/Down")
    replaced = replaced.replace("←", "<-").replace("↑", "Up").replace("↓", "Down")
    replaced = replaced.replace("→", "->").replace("·", ".").replace("★", "*").replace("◆", "@")
    decomposed = unicodedata.normalize("NFKD", replaced)
    return "".join(ch for ch in decomposed if ord(ch) < 128)


def card_label(card: Card) -> str:
    """A readable name with its month, e.g. ``"Crane (Pine, 1)"``."""
    return f"{card.english} ({card.flower}, {card.month})"


def by_kind(cards: CardSet) -> dict[Kind, list[Card]]:
    out: dict[Kind, list[Card]] = {k: [] for k, _ in GROUPS}
    for c in cards:
        out[c.kind].append(c)
    return out


def by_month(cards: CardSet) -> list[list[Card]]:
    groups: dict[int, list[Card]] = {}
    for c in cards:
        groups.setdefault(c.month, []).append(c)
    return [groups[m] for m in sorted(groups)]
