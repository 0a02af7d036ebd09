"""Yaku scoring: which yaku a captured pile makes, and what a round is worth.

This runs after every turn of every random playout, so :func:`total` must cost
a few microseconds.  Everything that depends only on the :class:`RuleSet` is
worked out once per rule set into a :class:`_Compiled` value (points tables
indexed by card counts, the chaff mask with or without the Sake cup, the
bright yaku for each of the 32 bright subsets); a call is then a handful of
``&``, ``int.bit_count()`` and tuple look-ups.  :func:`evaluate` uses the same
tables and only adds the bookkeeping of *which* yaku and cards, so the two
cannot drift apart (``tests/engine/test_yaku.py`` checks that they agree).

Semantics fixed here (and in ``docs/rules.md``):

* Only the best bright yaku counts (the one worth most; on a tie, the one first
  in :data:`~p2pkoikoi.engine.rules.YAKU_IDS`).  A bright yaku switched off
  (0 points) never counts, so with Shikō off four brights fall back to Sankō.
* ``plus_yaku`` counts cards of the yaku's own kind beyond those it needs:
  Inoshikachō and Tane count animals (beyond 3 and 5), Akatan, Aotan and Tan
  count ribbons (beyond 3, 3 and 5), the combined Akatan+Aotan counts ribbons
  beyond 6, Kasu counts chaff beyond 10 (the Sake cup included when it counts
  as chaff).  It has no effect on the bright and viewing yaku, which have no
  "extra card" to count.
* A yaku "is made" only when it scores points: Tane is void beside
  Inoshikachō only if Inoshikachō is switched on, and so on.
* Hanami and Tsukimi that need another yaku need one that is not a viewing
  yaku, counted after every void rule.
* ``called``: the pile's owner has called koi-koi this round, which matters only
  with ``viewing_after_koikoi`` (the viewing yaku then take that value).  The
  tables for it are a second :class:`_Compiled`, of the same rules with the
  viewing values replaced, so the hot path gains no branch.
* "Four pairs" is one definition for hand yaku and redeals alike
  (:func:`four_pairs`): two cards from each of four different months.
"""

from __future__ import annotations

import p2pkoikoi.engine.values as values
from p2pkoikoi.engine.cards import (
    ALL_MASK,
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CHAFF,
    CURTAIN,
    INOSHIKACHO,
    MONTH_MASKS,
    MOON,
    NIBBLE_LOW,
    POEM_RIBBONS,
    RAIN_MAN,
    RIBBONS,
    SAKE_CUP,
    month_counts,
)
from p2pkoikoi.engine.rules import (
    KoiKoiBonus,
    KoiKoiMultiplier,
    RainOut,
    RuleSet,
    SakeCup,
)
from p2pkoikoi.engine.values import value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final

#: yaku id -> (English, romaji, Japanese)
YAKU_INFO: Final[dict[str, tuple[str, str, str]]] = {
    "goko": ("Five brights", "Gokō", "五光"),
    "shiko": ("Four brights", "Shikō", "四光"),
    "ame_shiko": ("Rainy four brights", "Ame-shikō", "雨四光"),
    "sanko": ("Three brights", "Sankō", "三光"),
    "inoshikacho": ("Boar, deer and butterflies", "Inoshikachō", "猪鹿蝶"),
    "akatan": ("Red poetry ribbons", "Akatan", "赤短"),
    "aotan": ("Blue ribbons", "Aotan", "青短"),
    "akatan_aotan": ("Red and blue ribbons", "Akatan Aotan no Chōfuku", "赤短・青短の重複"),
    "tane": ("Animals", "Tane", "タネ"),
    "tan": ("Ribbons", "Tan", "タン"),
    "kasu": ("Chaff", "Kasu", "カス"),
    "hanami": ("Flower viewing", "Hanami-zake", "花見酒"),
    "tsukimi": ("Moon viewing", "Tsukimi-zake", "月見酒"),
    "teshi": ("Four of a month in hand", "Teshi", "手四"),
    "kuttsuki": ("Four pairs in hand", "Kuttsuki", "くっつき"),
}


@value
class YakuScore:
    """One yaku made: its id, its points (extra cards included) and its cards as a mask."""

    id: str
    points: int
    cards: int

    @property
    def name(self) -> str:
        return YAKU_INFO[self.id][0]

    @property
    def romaji(self) -> str:
        return YAKU_INFO[self.id][1]

    @property
    def japanese(self) -> str:
        return YAKU_INFO[self.id][2]


@value
class Multiplier:
    """One factor applied to a round's base points, with a reason a player can read."""

    factor: int
    reason: str


@value
class ScoreBreakdown:
    """How a round's score came about: yaku, their sum, the multipliers, the result.

    ``score`` is ``(base + bonus)`` times every factor; ``bonus`` is the points
    added for the winner's own koi-koi calls (``koikoi_bonus``), 0 elsewhere.
    """

    yaku: tuple[YakuScore, ...]
    base: int
    multipliers: tuple[Multiplier, ...]
    score: int
    bonus: int = 0


# ----- card masks used below -----
_BRIGHT_IDS: Final = tuple(i for i in range(48) if BRIGHTS >> i & 1)
_RAIN: Final = RAIN_MAN.bit
_SAKE: Final = SAKE_CUP.bit
_CURTAIN_SAKE: Final = CURTAIN.bit | _SAKE
_MOON_SAKE: Final = MOON.bit | _SAKE
_POEM_BLUE: Final = POEM_RIBBONS | BLUE_RIBBONS
_WILLOW: Final = MONTH_MASKS[11]
_PAULOWNIA: Final = MONTH_MASKS[12]


def _count_table(points: int, need: int, size: int, plus: bool) -> tuple[int, ...]:
    """Points by number of cards of the kind: 0 below ``need``, +1 per extra with ``plus``."""
    if points <= 0:
        return (0,) * (size + 1)
    return tuple(0 if n < need else points + (n - need if plus else 0) for n in range(size + 1))


def _best_bright(brights: int, rules: RuleSet) -> tuple[str, int, int] | None:
    """The best bright yaku for a set of captured brights: (id, points, cards)."""
    n = brights.bit_count()
    rain = bool(brights & _RAIN)
    plain = brights & ~_RAIN
    candidates: list[tuple[str, int, int]] = []
    if n == 5:
        candidates.append(("goko", rules.goko, brights))
    if plain.bit_count() >= 4:
        candidates.append(("shiko", rules.shiko, plain))
    if rain and n >= 4:
        candidates.append(("ame_shiko", rules.ame_shiko, brights))
    if plain.bit_count() >= 3:
        candidates.append(("sanko", rules.sanko, plain))
    best: tuple[str, int, int] | None = None
    for cand in candidates:
        if cand[1] > 0 and (best is None or cand[1] > best[1]):
            best = cand
    return best


class _Compiled:
    """Everything :func:`total` and :func:`evaluate` need from one RuleSet, worked out once."""

    __slots__ = (
        "rules",
        "bright_pts",
        "bright_yaku",
        "kasu_mask",
        "kasu_tab",
        "tane_tab",
        "tan_tab",
        "ino_tab",
        "aka_tab",
        "ao_tab",
        "combo_tab",
        "combo_on",
        "tane_void",
        "tan_void",
        "hanami",
        "tsukimi",
        "viewing_on",
        "viewing_needs_other",
        "rain_out",
        "plus",
        "fast",
        "_called",
    )

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        plus = frozenset(rules.plus_yaku)
        self.plus = plus
        # brights: index by the captured-brights mask itself (32 keys)
        self.bright_pts: dict[int, int] = {}
        self.bright_yaku: dict[int, tuple[str, int, int] | None] = {}
        for sub in range(32):
            mask = 0
            for j, cid in enumerate(_BRIGHT_IDS):
                if sub >> j & 1:
                    mask |= 1 << cid
            best = _best_bright(mask, rules)
            self.bright_yaku[mask] = best
            self.bright_pts[mask] = best[1] if best else 0
        self.kasu_mask = CHAFF | (_SAKE if rules.sake_cup is SakeCup.BOTH else 0)
        self.kasu_tab = _count_table(rules.kasu, 10, 48, "kasu" in plus)
        self.tane_tab = _count_table(rules.tane, 5, 48, "tane" in plus)
        self.tan_tab = _count_table(rules.tan, 5, 48, "tan" in plus)
        # The yaku below are checked for their named cards first; the table
        # then only prices the kind count (always >= the cards needed).
        self.ino_tab = _count_table(rules.inoshikacho, 3, 48, "inoshikacho" in plus)
        self.aka_tab = _count_table(rules.akatan, 3, 48, "akatan" in plus)
        self.ao_tab = _count_table(rules.aotan, 3, 48, "aotan" in plus)
        self.combo_tab = _count_table(rules.akatan_aotan, 6, 48, "akatan_aotan" in plus)
        self.combo_on = rules.akatan_aotan > 0
        self.tane_void = rules.tane_void_with_inoshikacho
        self.tan_void = rules.tan_void_with_akatan_aotan
        self.hanami = rules.hanami
        self.tsukimi = rules.tsukimi
        self.viewing_on = rules.hanami > 0 or rules.tsukimi > 0
        self.viewing_needs_other = rules.viewing_needs_other_yaku
        self.rain_out = rules.rain_out
        self.fast = _make_total(self)
        self._called: _Compiled | None = None

    @property
    def called(self) -> _Compiled:
        """The tables for a pile whose owner has called koi-koi (``viewing_after_koikoi``)."""
        if self._called is None:
            v = self.rules.viewing_after_koikoi
            if v == 0 or not self.viewing_on:
                self._called = self
            else:
                self._called = _Compiled(
                    values.replace(
                        self.rules,
                        hanami=v if self.rules.hanami else 0,
                        tsukimi=v if self.rules.tsukimi else 0,
                        viewing_after_koikoi=0,
                    )
                )
        return self._called


_CACHE: dict[int, _Compiled] = {}
_CACHE_MAX: Final = 64


def _compiled(rules: RuleSet) -> _Compiled:
    """The compiled tables for ``rules``, cached by identity.

    Keyed by ``id(rules)`` because hashing a 45-field dataclass costs more than
    the whole evaluation; the entry holds the RuleSet itself, so its id cannot
    be reused while cached, and ``is`` confirms the hit.
    """
    comp = _CACHE.get(id(rules))
    if comp is not None and comp.rules is rules:
        return comp
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    comp = _Compiled(rules)
    _CACHE[id(rules)] = comp
    return comp


def total_function(rules: RuleSet, called: bool = False) -> Callable[[int, int], int]:
    """``total`` for one rule set as a two-argument function ``(captured, field)``:
    for callers that score many piles under the same rules (the engine's states)."""
    c = _CACHE.get(id(rules))
    if c is None or c.rules is not rules:
        c = _compiled(rules)
    return c.called.fast if called else c.fast


def total(captured: int, rules: RuleSet, field: int = 0, called: bool = False) -> int:
    """The sum of the points of every yaku in ``captured`` (the hot path).

    Agrees with ``sum(y.points for y in evaluate(captured, rules, field, called))``.
    ``called``: the pile's owner has called koi-koi this round.
    """
    c = _CACHE.get(id(rules))
    if c is None or c.rules is not rules:
        c = _compiled(rules)
    if called:
        c = c.called
    return c.fast(captured, field)


def _make_total(c: _Compiled) -> Callable[[int, int], int]:
    """The scoring function for one RuleSet, with its tables bound as closure constants.

    Reading closure cells is cheaper than reading a dozen attributes per call,
    which is most of the cost of a call.
    """
    bright_pts = c.bright_pts
    kasu_mask = c.kasu_mask
    kasu_tab = c.kasu_tab
    ino_tab = c.ino_tab
    tane_tab = c.tane_tab
    tane_void = c.tane_void
    combo_on = c.combo_on
    combo_tab = c.combo_tab
    aka_tab = c.aka_tab
    ao_tab = c.ao_tab
    tan_tab = c.tan_tab
    tan_void = c.tan_void
    viewing_on = c.viewing_on
    hanami = c.hanami
    tsukimi = c.tsukimi
    # with no rain-out and no needs-another-yaku rule the viewing yaku are plain
    simple_view = c.rain_out is RainOut.NONE and not c.viewing_needs_other

    def fast(captured: int, field: int) -> int:
        na = (captured & ANIMALS).bit_count()
        nr = (captured & RIBBONS).bit_count()
        s = bright_pts[captured & BRIGHTS] + kasu_tab[(captured & kasu_mask).bit_count()]
        if captured & INOSHIKACHO == INOSHIKACHO and ino_tab[na]:
            s += ino_tab[na]
            if not tane_void:
                s += tane_tab[na]
        else:
            s += tane_tab[na]
        if captured & _POEM_BLUE == _POEM_BLUE and combo_on:
            rib = combo_tab[nr]
        else:
            rib = aka_tab[nr] if captured & POEM_RIBBONS == POEM_RIBBONS else 0
            if captured & BLUE_RIBBONS == BLUE_RIBBONS:
                rib += ao_tab[nr]
        if rib:
            s += rib
            if not tan_void:
                s += tan_tab[nr]
        else:
            s += tan_tab[nr]
        if viewing_on and captured & _SAKE:
            if not simple_view:
                return s + _viewing(c, captured, field, s)
            if captured & _CURTAIN_SAKE == _CURTAIN_SAKE:
                s += hanami
            if captured & _MOON_SAKE == _MOON_SAKE:
                s += tsukimi
        return s

    return fast


def _viewing(c: _Compiled, captured: int, field: int, others: int) -> int:
    """Points of Hanami and Tsukimi after rain-out and the needs-another-yaku rule."""
    pts = 0
    if captured & _CURTAIN_SAKE == _CURTAIN_SAKE and _viewing_survives(
        c, "hanami", captured, field, others
    ):
        pts = c.hanami
    if captured & _MOON_SAKE == _MOON_SAKE and _viewing_survives(
        c, "tsukimi", captured, field, others
    ):
        pts += c.tsukimi
    return pts


def evaluate(
    captured: int, rules: RuleSet, field: int = 0, called: bool = False
) -> tuple[YakuScore, ...]:
    """Every yaku in the captured pile, in :data:`YAKU_IDS` order.

    ``field`` is the current field mask, read only by ``RainOut.FIELD``;
    ``called`` says the pile's owner has called koi-koi this round (read only
    with ``viewing_after_koikoi``).
    """
    c = _compiled(rules)
    if called:
        c = c.called
    plus = c.plus
    out: list[YakuScore] = []
    animals = captured & ANIMALS
    ribbons = captured & RIBBONS
    na = animals.bit_count()
    nr = ribbons.bit_count()

    best = c.bright_yaku[captured & BRIGHTS]
    if best is not None:
        out.append(YakuScore(*best))

    ino = c.ino_tab[na] if captured & INOSHIKACHO == INOSHIKACHO else 0
    if ino:
        out.append(YakuScore("inoshikacho", ino, animals if "inoshikacho" in plus else INOSHIKACHO))

    rib = 0
    if captured & _POEM_BLUE == _POEM_BLUE and c.combo_on:
        rib = c.combo_tab[nr]
        cards = ribbons if "akatan_aotan" in plus else _POEM_BLUE
        out.append(YakuScore("akatan_aotan", rib, cards))
    else:
        if captured & POEM_RIBBONS == POEM_RIBBONS and c.aka_tab[nr]:
            pts = c.aka_tab[nr]
            rib += pts
            out.append(YakuScore("akatan", pts, ribbons if "akatan" in plus else POEM_RIBBONS))
        if captured & BLUE_RIBBONS == BLUE_RIBBONS and c.ao_tab[nr]:
            pts = c.ao_tab[nr]
            rib += pts
            out.append(YakuScore("aotan", pts, ribbons if "aotan" in plus else BLUE_RIBBONS))

    if c.tane_tab[na] and not (ino and c.tane_void):
        out.append(YakuScore("tane", c.tane_tab[na], animals))
    if c.tan_tab[nr] and not (rib and c.tan_void):
        out.append(YakuScore("tan", c.tan_tab[nr], ribbons))
    kasu_cards = captured & c.kasu_mask
    if c.kasu_tab[kasu_cards.bit_count()]:
        out.append(YakuScore("kasu", c.kasu_tab[kasu_cards.bit_count()], kasu_cards))

    if captured & _SAKE and c.viewing_on:
        others = sum(y.points for y in out)
        hanami_held = captured & _CURTAIN_SAKE == _CURTAIN_SAKE
        if c.hanami and hanami_held and _viewing_survives(c, "hanami", captured, field, others):
            out.append(YakuScore("hanami", c.hanami, _CURTAIN_SAKE))
        moon_held = captured & _MOON_SAKE == _MOON_SAKE
        if c.tsukimi and moon_held and _viewing_survives(c, "tsukimi", captured, field, others):
            out.append(YakuScore("tsukimi", c.tsukimi, _MOON_SAKE))

    return tuple(out)  # appended in YAKU_IDS order: no sort needed


def _viewing_survives(c: _Compiled, yid: str, captured: int, field: int, others: int) -> bool:
    """Whether one viewing yaku survives rain-out and the needs-another-yaku rule."""
    if c.viewing_needs_other and not others:
        return False
    if c.rain_out is RainOut.FIELD:
        return not field & (_WILLOW if yid == "hanami" else _PAULOWNIA)
    if c.rain_out is RainOut.CAPTURED_WILLOW:
        return not captured & _WILLOW
    return True


_COUNT_TWO: Final = 0x222222222222
_COUNT_FOUR: Final = 0x444444444444


def months_held_whole(cards: int) -> int:
    """Mask of the cards of every month whose four cards are all in ``cards``."""
    return ((month_counts(cards) & _COUNT_FOUR) >> 2) * 0xF


def pair_months(cards: int) -> int:
    """Mask of the months (all four cards of each) of which ``cards`` hold exactly two.

    Cards are four per month in id order, so a month is one nibble of the mask;
    every nibble's count is compared with two at once (SWAR).
    """
    y = month_counts(cards) ^ _COUNT_TWO  # a nibble is zero where the count is two
    nonzero = (y | (y >> 1) | (y >> 2) | (y >> 3)) & NIBBLE_LOW
    return (~nonzero & NIBBLE_LOW) * 0xF


def four_pairs(cards: int) -> bool:
    """Whether ``cards`` are "four pairs": two cards from each of four different months.

    The printed rulebook's wording (seed 000: "2 cards from 4 different
    months"), used by the Kuttsuki hand yaku and by every four-pairs redeal
    check alike.  In an 8-card hand or field that is months of 2+2+2+2 cards;
    four of a month plus two pairs (4+2+2) is *not* four pairs.
    """
    return pair_months(cards & ALL_MASK).bit_count() == 16  # four months, four bits each


def hand_yaku(hand: int, rules: RuleSet) -> YakuScore | None:
    """Teshi (all four cards of a month) or Kuttsuki (:func:`four_pairs`) in a dealt hand.

    The two cannot both hold in an 8-card hand (a 4+2+2 hand is not four
    pairs), so the order of the checks does not matter.  ``None`` when absent
    or switched off.
    """
    if rules.teshi > 0:
        fours = months_held_whole(hand)
        if fours:
            return YakuScore("teshi", rules.teshi, fours)
    if rules.kuttsuki > 0 and four_pairs(hand):
        return YakuScore("kuttsuki", rules.kuttsuki, hand)
    return None


def score(
    yaku: tuple[YakuScore, ...], rules: RuleSet, calls_winner: int, calls_loser: int
) -> ScoreBreakdown:
    """A round winner's score: the yaku sum, doubled for its size, the winner's own
    koi-koi bonus, multiplied for koi-koi.

    ``calls_winner`` / ``calls_loser`` are the koi-koi calls each player made
    this round.  The result is before any pool cap (the loser paying at most
    what they have left is the round's business, not the yaku's).  The size
    doubling (``double_at``) looks at the yaku sum alone, before any bonus.
    """
    base = sum(y.points for y in yaku)
    mults: list[Multiplier] = []
    bonus = 0
    if rules.double_at and base >= rules.double_at:
        mults.append(Multiplier(2, f"{rules.double_at} or more: x2"))
    if calls_winner and rules.koikoi_bonus is _SELF_PLUS_ONE:
        if calls_winner <= 3:
            bonus = calls_winner
        else:
            f = calls_winner - 2
            mults.append(Multiplier(f, f"{_calls(calls_winner)} of your own: x{f}"))
    # (enum members as module globals: a member lookup costs ~70 ns on CPython 3.11;
    # the reasons are written only for a factor above 1)
    mode = rules.koikoi_multiplier
    if mode is _ALL_CALLS_PLUS_ONE:
        calls = calls_winner + calls_loser
        if calls:
            factor = 1 + calls
            mults.append(
                Multiplier(factor, f"{_calls(calls)} in all (both players count): x{factor}")
            )
    elif mode is _OPPONENT_DOUBLE:
        if calls_loser > 0:
            mults.append(Multiplier(2, "opponent called koi-koi: x2"))
    elif mode is _SELF_DOUBLE:
        if calls_winner > 0:
            mults.append(Multiplier(2, "you called koi-koi: x2"))
    elif mode is _ANY_DOUBLE:
        if calls_winner + calls_loser > 0:
            mults.append(Multiplier(2, "koi-koi was called: x2"))
    elif mode is _OPPONENT_CALLS_PLUS_ONE:
        if calls_loser:
            factor = 1 + calls_loser
            mults.append(Multiplier(factor, f"{_calls(calls_loser)} by the opponent: x{factor}"))
    elif mode is _KOI_BAI and calls_loser:
        factor = 2**calls_loser
        mults.append(
            Multiplier(factor, f"koi-bai, {_calls(calls_loser)} by the opponent: x{factor}")
        )
    result = base + bonus
    for m in mults:
        result *= m.factor
    return ScoreBreakdown(tuple(yaku), base, tuple(mults), result, bonus)


_SELF_PLUS_ONE = KoiKoiBonus.SELF_PLUS_ONE
_ALL_CALLS_PLUS_ONE = KoiKoiMultiplier.ALL_CALLS_PLUS_ONE
_OPPONENT_DOUBLE = KoiKoiMultiplier.OPPONENT_DOUBLE
_SELF_DOUBLE = KoiKoiMultiplier.SELF_DOUBLE
_ANY_DOUBLE = KoiKoiMultiplier.ANY_DOUBLE
_OPPONENT_CALLS_PLUS_ONE = KoiKoiMultiplier.OPPONENT_CALLS_PLUS_ONE
_KOI_BAI = KoiKoiMultiplier.KOI_BAI


def _calls(n: int) -> str:
    return f"{n} koi-koi call" + ("" if n == 1 else "s")
