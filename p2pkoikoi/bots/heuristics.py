"""Card and position values shared by the easy and medium bots and the hard bot's playouts.

Everything here works on card bitmasks and a :class:`RuleSet`, never on a
hidden state: the functions take what a player can see (their pile, the
opponent's pile, the field, the unseen cards) so a bot built on them cannot
peek.  Tables are worked out once per RuleSet because bots call these
thousands of times per decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from p2pkoikoi.engine.cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CARDS,
    CHAFF,
    CURTAIN,
    INOSHIKACHO,
    MONTH_MASKS,
    MONTH_OF,
    MOON,
    POEM_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    SAME_MONTH,
)
from p2pkoikoi.engine.rules import RuleSet, SakeCup


@dataclass(frozen=True, slots=True)
class Group:
    """A yaku family a player can build: ``need`` cards of ``mask`` score ``points``.

    ``plus`` is true when every card beyond ``need`` adds a point, which makes
    the cards of a finished family still worth taking.
    """

    name: str
    mask: int
    need: int
    points: int
    plus: bool


class Tables:
    """Per-RuleSet yaku families and static card values (see :func:`tables_for`)."""

    __slots__ = ("rules", "groups", "static", "static_list")

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        plus = set(rules.plus_yaku)
        sake = SAKE_CUP.bit
        bright_pts = max(rules.sanko, rules.shiko, rules.goko // 2, 3)
        kasu_mask = CHAFF | (sake if rules.sake_cup is SakeCup.BOTH else 0)
        groups = [
            Group("brights", BRIGHTS & ~RAIN_MAN.bit, 3, bright_pts, False),
            Group("inoshikacho", INOSHIKACHO, 3, rules.inoshikacho, "inoshikacho" in plus),
            Group("akatan", POEM_RIBBONS, 3, rules.akatan, "akatan" in plus),
            Group("aotan", BLUE_RIBBONS, 3, rules.aotan, "aotan" in plus),
            Group("hanami", CURTAIN.bit | sake, 2, rules.hanami, False),
            Group("tsukimi", MOON.bit | sake, 2, rules.tsukimi, False),
            Group("tane", ANIMALS, 5, rules.tane, "tane" in plus),
            Group("tan", RIBBONS, 5, rules.tan, "tan" in plus),
            Group("kasu", kasu_mask, 10, rules.kasu, "kasu" in plus),
        ]
        self.groups = tuple(g for g in groups if g.points > 0)
        # A card's static worth: what it adds, on average, to the families it belongs to.
        static = []
        for c in range(48):
            bit = 1 << c
            v = 0.0
            for g in self.groups:
                if g.mask & bit:
                    v += g.points / g.need
            if bit & RAIN_MAN.bit:
                v += 1.0  # only counts with three other brights
            static.append(v + 0.1)
        self.static_list = static
        self.static = tuple(static)


_TABLES: dict[int, Tables] = {}


def tables_for(rules: RuleSet) -> Tables:
    """The cached :class:`Tables` for ``rules`` (keyed by identity, checked by equality)."""
    t = _TABLES.get(id(rules))
    if t is None or t.rules is not rules:
        if len(_TABLES) > 64:
            _TABLES.clear()
        t = Tables(rules)
        _TABLES[id(rules)] = t
    return t


def potential(tab: Tables, mine: int, theirs: int) -> float:
    """How close ``mine`` is to scoring, counting only families ``theirs`` has not blocked.

    A family needing ``k`` cards with ``h`` held counts ``points * f * (0.4 + 0.6 f)``
    with ``f = h/k``: the square part rewards finishing a family over spreading
    cards thinly, the linear part keeps a first card worth something.
    """
    v = 0.0
    for g in tab.groups:
        m = g.mask
        have = (mine & m).bit_count()
        if not have:
            continue
        need = g.need
        if have >= need:
            v += g.points
            if g.plus:
                v += have - need
            continue
        if (m & ~theirs).bit_count() < need:
            continue  # blocked: the opponent holds too many of the family
        f = have / need
        v += g.points * f * (0.4 + 0.6 * f)
    return v


def position_value(tab: Tables, mine: int, theirs: int) -> float:
    """My prospects minus the opponent's, from the piles alone."""
    return potential(tab, mine, theirs) - potential(tab, theirs, mine)


def capture_of(card: int, field: int) -> int:
    """The field cards that ``card`` takes when there is no choice (0, 1 or 3 matches)."""
    m = field & SAME_MONTH[card]
    rest = m & (m - 1)
    if rest and not rest & (rest - 1):
        return -1  # two matches: the caller chooses
    return m


def best_of_two(tab: Tables, choices: int, mine: int, theirs: int) -> int:
    """Of two matching field cards, the one worth more to me (a mask of one card)."""
    a = choices & -choices
    b = choices ^ a
    va = potential(tab, mine | a, theirs) + 0.5 * tab.static[a.bit_length() - 1]
    vb = potential(tab, mine | b, theirs) + 0.5 * tab.static[b.bit_length() - 1]
    return a if va >= vb else b


def p_holds_any(k: int, unseen: int, hand: int) -> float:
    """Chance that a hidden hand of ``hand`` cards from ``unseen`` holds one of ``k`` given cards."""
    if k <= 0 or hand <= 0 or unseen <= 0:
        return 0.0
    if unseen - k < hand:
        return 1.0
    return 1.0 - comb(unseen - k, hand) / comb(unseen, hand)


def exposure(
    tab: Tables,
    field: int,
    mine: int,
    theirs: int,
    unseen: int,
    opp_hand: int,
    my_hand: int,
    hold: Sequence[float] | None = None,
) -> float:
    """What the field offers the opponent next turn, minus what it offers me.

    For each month on the field: the best card there, weighted by the chance
    the opponent holds a matching card (they hold ``opp_hand`` of the ``unseen``
    cards), against my own matching cards in hand, which make that month mine.
    ``hold[month]``, when given, is that chance read from the opponent's play
    (:meth:`~p2pkoikoi.bots.inference.HandReader.hold`) instead of counted from
    a uniformly random hand.
    """
    n_unseen = unseen.bit_count()
    v = 0.0
    seen_months = 0
    f = field
    while f:
        low = f & -f
        f ^= low
        c = low.bit_length() - 1
        month = MONTH_OF[c]
        if seen_months >> month & 1:
            continue
        seen_months |= 1 << month
        mm = field & MONTH_MASKS[month]
        best_them = 0.0
        best_me = 0.0
        base_t = potential(tab, theirs, mine)
        base_m = potential(tab, mine, theirs)
        x = mm
        while x:
            lb = x & -x
            x ^= lb
            best_them = max(best_them, potential(tab, theirs | lb, mine) - base_t)
            best_me = max(best_me, potential(tab, mine | lb, theirs) - base_m)
        k = (unseen & MONTH_MASKS[month]).bit_count()
        p = hold[month] if hold is not None else p_holds_any(k, n_unseen, opp_hand)
        if my_hand & MONTH_MASKS[month]:
            v -= 0.5 * best_me
            v += 0.5 * p * best_them
        else:
            v += p * best_them
    return v


def card_codes(mask: int) -> list[str]:
    return [CARDS[i].code for i in range(48) if mask >> i & 1]
