"""The 48 hanafuda cards, their names, and immutable card sets backed by bitmasks.

Card ``id`` order (0..47) is the canonical order of the protocol: month, then
kind (bright, animal, ribbon, chaff).  Card sets are plain ``int`` bitmasks in
the engine's hot path (bit ``id`` set = card present); :class:`CardSet` wraps a
mask behind an immutable, set-like API for everyone else.
"""

from __future__ import annotations

import enum

from p2pkoikoi.engine.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Final


class Kind(enum.Enum):
    BRIGHT = "b"
    ANIMAL = "a"
    RIBBON = "r"
    CHAFF = "c"

    @property
    def label(self) -> str:
        return _KIND_LABELS[self]


_KIND_OF_LETTER = {k.value: k for k in Kind}  # Kind(letter) without EnumType.__call__

_KIND_LABELS = {
    Kind.BRIGHT: "bright",
    Kind.ANIMAL: "animal",
    Kind.RIBBON: "ribbon",
    Kind.CHAFF: "chaff",
}

#: (English flower, romaji, Japanese) for months 1..12 (index 0 unused).
MONTHS: Final = (
    ("", "", ""),
    ("Pine", "Matsu", "松"),
    ("Plum", "Ume", "梅"),
    ("Cherry", "Sakura", "桜"),
    ("Wisteria", "Fuji", "藤"),
    ("Iris", "Ayame", "菖蒲"),
    ("Peony", "Botan", "牡丹"),
    ("Bush clover", "Hagi", "萩"),
    ("Pampas", "Susuki", "芒"),
    ("Chrysanthemum", "Kiku", "菊"),
    ("Maple", "Momiji", "紅葉"),
    ("Willow", "Yanagi", "柳"),
    ("Paulownia", "Kiri", "桐"),
)

# code, English, romaji, Japanese, extra aliases
_CARD_TABLE: Final = (
    ("1b", "Crane", "Matsu ni Tsuru", "松に鶴", ("crane", "pine-crane")),
    ("1r", "Pine poetry ribbon", "Matsu ni Akatan", "松に赤短", ("pine-ribbon", "pine-poem")),
    ("1c1", "Pine chaff", "Matsu no Kasu", "松のカス", ()),
    ("1c2", "Pine chaff", "Matsu no Kasu", "松のカス", ()),
    ("2a", "Bush warbler", "Ume ni Uguisu", "梅に鶯", ("warbler", "bush-warbler", "nightingale")),
    ("2r", "Plum poetry ribbon", "Ume ni Akatan", "梅に赤短", ("plum-ribbon", "plum-poem")),
    ("2c1", "Plum chaff", "Ume no Kasu", "梅のカス", ()),
    ("2c2", "Plum chaff", "Ume no Kasu", "梅のカス", ()),
    ("3b", "Curtain", "Sakura ni Maku", "桜に幕", ("curtain", "cherry-curtain")),
    (
        "3r",
        "Cherry poetry ribbon",
        "Sakura ni Akatan",
        "桜に赤短",
        ("cherry-ribbon", "cherry-poem"),
    ),
    ("3c1", "Cherry chaff", "Sakura no Kasu", "桜のカス", ()),
    ("3c2", "Cherry chaff", "Sakura no Kasu", "桜のカス", ()),
    ("4a", "Cuckoo", "Fuji ni Hototogisu", "藤に不如帰", ("cuckoo",)),
    ("4r", "Wisteria ribbon", "Fuji ni Tanzaku", "藤に短冊", ("wisteria-ribbon",)),
    ("4c1", "Wisteria chaff", "Fuji no Kasu", "藤のカス", ()),
    ("4c2", "Wisteria chaff", "Fuji no Kasu", "藤のカス", ()),
    ("5a", "Eight-plank bridge", "Ayame ni Yatsuhashi", "菖蒲に八橋", ("bridge", "yatsuhashi")),
    ("5r", "Iris ribbon", "Ayame ni Tanzaku", "菖蒲に短冊", ("iris-ribbon",)),
    ("5c1", "Iris chaff", "Ayame no Kasu", "菖蒲のカス", ()),
    ("5c2", "Iris chaff", "Ayame no Kasu", "菖蒲のカス", ()),
    ("6a", "Butterflies", "Botan ni Chō", "牡丹に蝶", ("butterflies", "butterfly")),
    ("6r", "Peony blue ribbon", "Botan ni Aotan", "牡丹に青短", ("peony-ribbon",)),
    ("6c1", "Peony chaff", "Botan no Kasu", "牡丹のカス", ()),
    ("6c2", "Peony chaff", "Botan no Kasu", "牡丹のカス", ()),
    ("7a", "Boar", "Hagi ni Inoshishi", "萩に猪", ("boar",)),
    (
        "7r",
        "Bush clover ribbon",
        "Hagi ni Tanzaku",
        "萩に短冊",
        ("clover-ribbon", "bush-clover-ribbon"),
    ),
    ("7c1", "Bush clover chaff", "Hagi no Kasu", "萩のカス", ()),
    ("7c2", "Bush clover chaff", "Hagi no Kasu", "萩のカス", ()),
    ("8b", "Moon", "Susuki ni Tsuki", "芒に月", ("moon", "full-moon")),
    ("8a", "Geese", "Susuki ni Kari", "芒に雁", ("geese", "goose")),
    ("8c1", "Pampas chaff", "Susuki no Kasu", "芒のカス", ()),
    ("8c2", "Pampas chaff", "Susuki no Kasu", "芒のカス", ()),
    ("9a", "Sake cup", "Kiku ni Sakazuki", "菊に盃", ("sake-cup", "sake", "sakazuki", "cup")),
    ("9r", "Chrysanthemum blue ribbon", "Kiku ni Aotan", "菊に青短", ("chrysanthemum-ribbon",)),
    ("9c1", "Chrysanthemum chaff", "Kiku no Kasu", "菊のカス", ()),
    ("9c2", "Chrysanthemum chaff", "Kiku no Kasu", "菊のカス", ()),
    ("10a", "Deer", "Momiji ni Shika", "紅葉に鹿", ("deer",)),
    ("10r", "Maple blue ribbon", "Momiji ni Aotan", "紅葉に青短", ("maple-ribbon",)),
    ("10c1", "Maple chaff", "Momiji no Kasu", "紅葉のカス", ()),
    ("10c2", "Maple chaff", "Momiji no Kasu", "紅葉のカス", ()),
    (
        "11b",
        "Rain man",
        "Yanagi ni Ono no Michikaze",
        "柳に小野道風",
        ("rain-man", "rainman", "ono-no-michikaze"),
    ),
    ("11a", "Swallow", "Yanagi ni Tsubame", "柳に燕", ("swallow",)),
    ("11r", "Willow ribbon", "Yanagi ni Tanzaku", "柳に短冊", ("willow-ribbon",)),
    (
        "11c",
        "Lightning",
        "Yanagi no Kasu (Kaminari)",
        "柳のカス（雷）",
        ("lightning", "thunder", "willow-chaff"),
    ),
    ("12b", "Phoenix", "Kiri ni Hōō", "桐に鳳凰", ("phoenix", "hoo")),
    ("12c1", "Paulownia chaff", "Kiri no Kasu", "桐のカス", ()),
    ("12c2", "Paulownia chaff", "Kiri no Kasu", "桐のカス", ()),
    ("12c3", "Paulownia chaff", "Kiri no Kasu", "桐のカス", ()),
)


class Card:
    """One hanafuda card; there are exactly 48 instances.

    ``Card("1b")``, ``Card("crane")`` and ``Card(0)`` all return the same object,
    so cards compare by identity and ``repr`` pastes back.
    """

    __slots__ = ("id", "month", "kind", "code", "english", "romaji", "japanese", "aliases", "bit")

    id: int
    month: int
    kind: Kind
    code: str
    english: str
    romaji: str
    japanese: str
    aliases: tuple[str, ...]
    bit: int

    def __new__(cls, key: CardLike) -> Card:
        return parse_card(key)

    @classmethod
    def _make(cls, cid: int) -> Card:
        code, english, romaji, japanese, extra = _CARD_TABLE[cid]
        self = object.__new__(cls)
        month = _month_of(code)
        kind = _KIND_OF_LETTER[code[len(str(month))]]
        flower = MONTHS[month][0].lower().replace(" ", "-")
        generic = [f"{flower}-{kind.label}"]
        if code[-1].isdigit() and kind is Kind.CHAFF:
            generic = [f"{flower}-chaff-{code[-1]}", f"{flower}-chaff{code[-1]}"]
        for name, value in (
            ("id", cid),
            ("month", month),
            ("kind", kind),
            ("code", code),
            ("english", english),
            ("romaji", romaji),
            ("japanese", japanese),
            ("aliases", tuple(extra) + tuple(generic)),
            ("bit", 1 << cid),
        ):
            object.__setattr__(self, name, value)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __repr__(self) -> str:
        return f"Card({self.code!r})"

    def __str__(self) -> str:
        return self.code

    def __lt__(self, other: Card) -> bool:
        return self.id < other.id

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Card, (self.id,))

    @property
    def flower(self) -> str:
        return MONTHS[self.month][0]

    @property
    def name(self) -> str:
        """A readable English name, e.g. ``"Crane (Pine bright)"``."""
        return self.english


def _month_of(code: str) -> int:
    digits = ""
    for ch in code:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits)


CardLike = Card | int | str

CARDS: Final[tuple[Card, ...]] = tuple(Card._make(i) for i in range(48))
ALL_MASK: Final = (1 << 48) - 1

#: three-letter flower names for months 1..12 (index 0 unused): the table's tiles
FLOWER3: Final = (
    "",
    "Pin",
    "Plm",
    "Chy",
    "Wis",
    "Irs",
    "Pny",
    "Clv",
    "Pmp",
    "Chr",
    "Mpl",
    "Wlw",
    "Pau",
)
#: the table's mark for each variety (``bright``, ``animal``, ``poem``, ``blue``, ``red``,
#: ``chaff``): Unicode, then ASCII (``--ascii``)
TILE_MARKS: Final = {
    "bright": ("★", "*"),
    "animal": ("◆", "@"),
    "poem": ("p", "p"),
    "blue": ("b", "b"),
    "red": ("r", "r"),
    "chaff": ("·", "."),
}
_POEM_CODES: Final = frozenset(("1r", "2r", "3r"))
_BLUE_CODES: Final = frozenset(("6r", "9r", "10r"))


def variety(card: Card) -> str:
    """``bright``, ``animal``, ``poem``, ``blue``, ``red`` (a plain red ribbon) or ``chaff``."""
    if card.kind is Kind.RIBBON:
        if card.code in _POEM_CODES:
            return "poem"
        return "blue" if card.code in _BLUE_CODES else "red"
    return card.kind.label


def table_label(card: Card, ascii: bool = False) -> str:
    """The label of the card's tile on the table, e.g. ``"3Chy★"`` (``"3Chy*"`` with
    ``ascii``): month, three-letter flower, the mark of its variety.  The chaff of a
    month share a label (they are interchangeable)."""
    return f"{card.month}{FLOWER3[card.month]}{TILE_MARKS[variety(card)][1 if ascii else 0]}"


#: each card's code, the names records and actions use (``verify`` looks up only these)
_CODES: Final[dict[str, tuple[Card, ...]]] = {c.code: (c,) for c in CARDS}
#: every name of a card, normalised (see :func:`_normalise`), to the cards it may mean:
#: one card, or a month's chaff in order (``pine-chaff``, ``1Pin·``): the first free one.
#: Made by :func:`_names` on first use (about 550 names: a sixtieth of ``verify``'s
#: start-up, which needs none of them)
_lookup: dict[str, tuple[Card, ...]] | None = None
#: the longest name in words, to find an unquoted name ("sake cup") in a command line
_most_words = 0
#: a tile's month and flower without its mark ("3Chy"): month
_MONTH_TILES: Final = {f"{m}{FLOWER3[m]}".lower(): m for m in range(1, 13)}


def _normalise(text: str) -> str:
    return "-".join(text.strip().lower().replace("_", "-").replace(" ", "-").split("-"))


def _names() -> dict[str, tuple[Card, ...]]:
    """Every name of every card (see :data:`_lookup`), made on the first call."""
    global _lookup, _most_words
    if _lookup is not None:
        return _lookup
    table: dict[str, tuple[Card, ...]] = dict(_CODES)

    def claim(name: str, card: Card) -> None:
        key = _normalise(name)
        cards = table.get(key, ())
        if card not in cards:
            table[key] = (*cards, card)

    for c in CARDS:
        for alias in c.aliases:
            claim(alias, c)  # a generic one ("pine-chaff") is the month's chaff, first free first
        for name in (c.english, c.romaji, c.japanese):
            claim(name, c)
        for ascii in (False, True):
            label = table_label(c, ascii)
            claim(label, c)
            claim(f"{c.month}{TILE_MARKS[variety(c)][1 if ascii else 0]}", c)  # a pile's tile
            claim(f"{c.english} [{label}]", c)  # the log's form: "Crane [1Pin★]"
    claim("sakura-curtain", CARDS[8])
    _most_words = max(len(k.split("-")) for k in table)
    _lookup = table  # whole, or not at all
    return table


def _candidates(key: str) -> tuple[Card, ...]:
    exact = _CODES.get(key)  # a code as records and actions write it ("1b", "12c3")
    if exact is not None:
        return exact
    names = _names()
    norm = _normalise(key)
    cards = names.get(norm)
    if cards is None and len(norm) > 1 and norm[-1] in "123" and not norm[-2].isdigit():
        # a tile with the table's 1/2 choice marker after it ("12Pau·2")
        cards = names.get(norm[:-1])
    return cards or ()


def parse_card(key: CardLike) -> Card:
    """Return the card named by a code (``"9a"``), a name (``"sake cup"``, ``"sake-cup"``,
    ``"Kiku ni Sakazuki"``), the table's label (``"9Chr◆"``, ``"9Chr@"``) or an id.

    Raises :class:`InputError` with a message naming the bad input.
    """
    if isinstance(key, Card):
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key < 48:
            return CARDS[key]
        raise InputError(f"card id out of range: {key} (0..47)")
    if isinstance(key, str):
        cards = _candidates(key)
        if cards:
            return cards[0]
        month = _MONTH_TILES.get(_normalise(key))
        if month is not None:
            options = ", ".join(dict.fromkeys(table_label(c) for c in CARDS if c.month == month))
            raise InputError(f"which card of {MONTHS[month][0]}? {key!r} needs its mark: {options}")
        raise InputError(
            f"unknown card: {key!r} (use a code like 1b, 9a, 12c3, a name like crane or "
            "'sake cup', or the table's label like 3Chy★; 'p2pkoikoi cards' lists them)"
        )
    raise InputError(f"not a card: {key!r}")


def _split_name(keys: list[CardLike], i: int) -> str | None:
    """The words around ``keys[i]`` that together name one card ("sake" "cup"), quoted."""
    words = [k if isinstance(k, str) else "" for k in keys]
    names = _names()
    for n in range(min(_most_words, len(words)), 1, -1):
        for start in range(max(0, i - n + 1), min(i, len(words) - n) + 1):
            phrase = " ".join(words[start : start + n])
            if all(words[start : start + n]) and _normalise(phrase) in names:
                return phrase
    return None


def parse_cards(keys: Iterable[CardLike], *, unique: bool = True) -> tuple[Card, ...]:
    """Parse many cards; with ``unique`` a repeated card is an :class:`InputError`.

    A name shared by a month's chaff (``pine-chaff``, ``1Pin·``) means the first of
    them not named yet.  A name of several words split over several keys (``sake``,
    ``cup``, as an unquoted command line gives it) is an error that says to quote it.
    """
    items = list(keys)
    out: list[Card] = []
    seen = 0
    for i, key in enumerate(items):
        try:
            cards = (parse_card(key),) if not isinstance(key, str) else _candidates(key)
            if not cards:
                parse_card(key)  # raises: unknown card
        except InputError:
            phrase = _split_name(items, i)
            if phrase is not None:
                raise InputError(_quote_advice(phrase)) from None
            raise
        free = [c for c in cards if not seen & c.bit] if unique else list(cards)
        if not free:
            phrase = _split_name(items, i)
            if phrase is not None:
                raise InputError(_quote_advice(phrase))
            raise InputError(f"duplicate card: {cards[-1].code}")
        card = free[0]
        seen |= card.bit
        out.append(card)
    return tuple(out)


def _quote_advice(phrase: str) -> str:
    card = _names()[_normalise(phrase)][0]
    return (
        f'{phrase!r} is one card\'s name ({card.code}): quote it ("{phrase}") '
        f"or join its words ({_normalise(phrase)})"
    )


def _mask(pred: object) -> int:
    m = 0
    for c in CARDS:
        if pred(c):  # type: ignore[operator]
            m |= c.bit
    return m


BRIGHTS: Final = _mask(lambda c: c.kind is Kind.BRIGHT)
ANIMALS: Final = _mask(lambda c: c.kind is Kind.ANIMAL)
RIBBONS: Final = _mask(lambda c: c.kind is Kind.RIBBON)
CHAFF: Final = _mask(lambda c: c.kind is Kind.CHAFF)
MONTH_MASKS: Final[tuple[int, ...]] = (0,) + tuple(
    _mask(lambda c, m=m: c.month == m) for m in range(1, 13)
)
#: month (1..12) of each card id, for the hot path
MONTH_OF: Final[tuple[int, ...]] = tuple(c.month for c in CARDS)
#: mask of the other cards of the same month, per card id
SAME_MONTH: Final[tuple[int, ...]] = tuple(MONTH_MASKS[c.month] & ~c.bit for c in CARDS)

CRANE, CURTAIN, MOON, RAIN_MAN, PHOENIX = (CARDS[i] for i in (0, 8, 28, 40, 44))
SAKE_CUP: Final = CARDS[32]
BOAR, DEER, BUTTERFLIES = CARDS[24], CARDS[36], CARDS[20]
LIGHTNING: Final = CARDS[43]
POEM_RIBBONS: Final = CARDS[1].bit | CARDS[5].bit | CARDS[9].bit
BLUE_RIBBONS: Final = CARDS[21].bit | CARDS[33].bit | CARDS[37].bit
INOSHIKACHO: Final = BOAR.bit | DEER.bit | BUTTERFLIES.bit


#: one bit per month nibble (cards are four per month, so a month is a nibble of a mask)
NIBBLE_LOW: Final = 0x111111111111
_PAIRS_OF_BITS: Final = 0x555555555555
_NIBBLE_2BITS: Final = 0x333333333333


def month_counts(mask: int) -> int:
    """Each month's nibble of ``mask`` replaced by how many of its cards are present
    (0..4), for all twelve months at once (SWAR bit counting)."""
    x = mask - ((mask >> 1) & _PAIRS_OF_BITS)
    return (x & _NIBBLE_2BITS) + ((x >> 2) & _NIBBLE_2BITS)


def iter_mask(mask: int) -> Iterator[int]:
    """Yield the card ids in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class CardSet:
    """An immutable set of cards backed by a 48-bit mask; iterates in id order."""

    __slots__ = ("mask",)
    mask: int

    def __init__(self, cards: Iterable[CardLike] | int = 0) -> None:
        if isinstance(cards, int):
            if cards < 0 or cards > ALL_MASK:
                raise InputError("card mask out of range")
            mask = cards
        else:
            mask = 0
            for c in parse_cards(cards, unique=False):
                mask |= c.bit
        object.__setattr__(self, "mask", mask)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("CardSet is immutable")

    def __iter__(self) -> Iterator[Card]:
        return (CARDS[i] for i in iter_mask(self.mask))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return isinstance(card, Card) and bool(self.mask & card.bit)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(("CardSet", self.mask))

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def __bool__(self) -> bool:
        return self.mask != 0

    def __repr__(self) -> str:
        return f"CardSet({[c.code for c in self]!r})"

    def codes(self) -> list[str]:
        return [c.code for c in self]

    def of_month(self, month: int) -> CardSet:
        return CardSet(self.mask & MONTH_MASKS[month])
