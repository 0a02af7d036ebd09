"""The rule set: one immutable value that covers every published Koi-Koi variant.

Each variation is one field.  Code that needs a rule reads the field; nothing
anywhere asks which preset is in force.  Presets live in
:mod:`p2pkoikoi.engine.presets` and are traced to their sources in ``docs/rules.md``.

The canonical encoding (:meth:`RuleSet.encode`) is UTF-8 JSON with sorted keys
and no spaces; enum fields are written as their string values.  Its SHA-256
under a domain tag is the fingerprint that the network handshake compares.
"""

from __future__ import annotations

import enum

import p2pkoikoi.engine.values as values
from p2pkoikoi.engine.digest import sha256
from p2pkoikoi.engine.errors import InputError
from p2pkoikoi.engine.jsontext import canonical, loads
from p2pkoikoi.engine.values import value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

YAKU_IDS: Final = (
    "goko",
    "shiko",
    "ame_shiko",
    "sanko",
    "inoshikacho",
    "akatan",
    "aotan",
    "akatan_aotan",
    "tane",
    "tan",
    "kasu",
    "hanami",
    "tsukimi",
)
HAND_YAKU_IDS: Final = ("teshi", "kuttsuki")


class SakeCup(enum.Enum):
    """How the Sake cup (9a) counts beyond being an animal."""

    ANIMAL = "animal"  # an animal (tane) only
    BOTH = "both"  # an animal and also a chaff (kasu) card


class RainOut(enum.Enum):
    """Whether Willow / Paulownia cards spoil the viewing yaku."""

    NONE = "none"
    FIELD = "field"  # a Willow card on the field voids Hanami, a Paulownia card voids Tsukimi
    CAPTURED_WILLOW = "captured_willow"  # a player who captured a Willow card loses both


class KoiKoiMultiplier(enum.Enum):
    """What the koi-koi calls of this round do to the round winner's score."""

    NONE = "none"
    OPPONENT_DOUBLE = "opponent_double"  # x2 once if the loser called at least once
    SELF_DOUBLE = "self_double"  # x2 once if the winner called at least once
    ANY_DOUBLE = "any_double"  # x2 once if anybody called
    ALL_CALLS_PLUS_ONE = "all_calls_plus_one"  # x(1 + every call by both players)
    OPPONENT_CALLS_PLUS_ONE = "opponent_calls_plus_one"  # x(1 + the loser's calls)
    KOI_BAI = "koi_bai"  # x2 for each call by the loser: x2, x4, x8


class KoiKoiBonus(enum.Enum):
    """Points the round winner's own koi-koi calls add, before ``koikoi_multiplier``."""

    NONE = "none"
    #: KoiKoi-Japan: +1 per own call for up to 3 calls; from 4 calls the total is
    #: multiplied by (calls - 2) instead (x2 at 4 calls, x3 at 5, ...)
    SELF_PLUS_ONE = "self_plus_one"


class KoiKoiLimit(enum.Enum):
    UNLIMITED = "unlimited"
    ONCE_PER_ROUND = "once_per_round"  # one call in the whole round, by either player
    ONCE_PER_PLAYER = "once_per_player"


class AfterKoiKoi(enum.Enum):
    """What a koi-koi call in force does to later yaku."""

    CHOOSE_ON_RAISE = "choose_on_raise"  # whoever raises their total chooses again
    NEXT_YAKU_ENDS = "next_yaku_ends"  # the next raise by either player ends the round


class KoiKoiWhen(enum.Enum):
    """When a player who may stop may also call koi-koi."""

    ALWAYS = "always"
    NOT_LAST_TURN = "not_last_turn"  # not once both hands are empty: only Stop
    NOT_HAND_EMPTY = "not_hand_empty"  # not once your own hand is empty: only Stop


class BothHandYaku(enum.Enum):
    """When both players are dealt a hand yaku (teshi / kuttsuki)."""

    DEALER_FIRST = "dealer_first"  # the dealer's is checked first and counts alone
    BOTH_SCORE = "both_score"  # both score; the next dealer is drawn again
    DRAW = "draw"  # nobody scores, the dealer stays
    REDEAL = "redeal"  # the cards are dealt again


class DrawnRound(enum.Enum):
    """When both hands run out with nobody stopping."""

    DEALER_STAYS = "dealer_stays"
    DEALER_PASSES = "dealer_passes"
    OYA_KEN = "oya_ken"  # the dealer scores ``oya_ken_points`` and keeps the deal


class FirstDealer(enum.Enum):
    COIN = "coin"
    CARD_DRAW = "card_draw"


class CardDrawTie(enum.Enum):
    """Card draw for the dealer when both cards are of one month."""

    REDRAW = "redraw"
    HIGHER_CARD = "higher_card"  # the card worth more (bright > animal > ribbon > chaff) deals


class NextDealer(enum.Enum):
    WINNER = "winner"
    ALTERNATE = "alternate"


class DealMode(enum.Enum):
    """How the cards are dealt between two programs (``protocol/hidden-deal.md``)."""

    OPEN = "open"  # both derive the deck from the shared seed: a modified client sees it
    HIDDEN = "hidden"  # a mental-poker deal: nobody sees a hidden card before it is revealed


class Scoring(enum.Enum):
    SUM = "sum"  # running totals, the higher total wins
    POOL = "pool"  # both start with ``pool_stake``; the loser pays the winner


@value
class RuleSet:
    """Every rule on which Koi-Koi rule sets disagree.  Defaults are the ``online`` preset.

    Yaku points of 0 switch the yaku off.  ``akatan_aotan`` of 0 means holding
    both ribbon sets simply scores Akatan and Aotan side by side.
    """

    # --- yaku values (0 = off) ---
    goko: int = 10
    shiko: int = 8
    ame_shiko: int = 7
    sanko: int = 5
    inoshikacho: int = 5
    akatan: int = 5
    aotan: int = 5
    akatan_aotan: int = 10
    tane: int = 1
    tan: int = 1
    kasu: int = 1
    hanami: int = 5
    tsukimi: int = 5
    #: Hanami and Tsukimi (those switched on) are worth this once their scorer has
    #: called koi-koi this round; 0 = they keep their value
    viewing_after_koikoi: int = 0
    teshi: int = 6
    kuttsuki: int = 6
    #: yaku that score +1 for each card of their kind beyond the ones they need
    plus_yaku: tuple[str, ...] = (
        "akatan",
        "akatan_aotan",
        "aotan",
        "inoshikacho",
        "kasu",
        "tan",
        "tane",
    )
    # --- yaku interactions ---
    tane_void_with_inoshikacho: bool = False
    tan_void_with_akatan_aotan: bool = False
    sake_cup: SakeCup = SakeCup.ANIMAL
    viewing_needs_other_yaku: bool = False
    rain_out: RainOut = RainOut.NONE
    # --- multipliers ---
    double_at: int = 8  # a round total of at least this is doubled; 0 = never
    koikoi_multiplier: KoiKoiMultiplier = KoiKoiMultiplier.ALL_CALLS_PLUS_ONE
    koikoi_bonus: KoiKoiBonus = KoiKoiBonus.NONE
    # --- koi-koi ---
    koikoi_limit: KoiKoiLimit = KoiKoiLimit.UNLIMITED
    after_koikoi: AfterKoiKoi = AfterKoiKoi.CHOOSE_ON_RAISE
    koikoi_when: KoiKoiWhen = KoiKoiWhen.NOT_LAST_TURN
    # --- deal ---
    both_hand_yaku: BothHandYaku = BothHandYaku.DEALER_FIRST
    hand_yaku_before_field_redeal: bool = False
    redeal_field_four_of_month: bool = True
    redeal_field_four_pairs: bool = False
    redeal_hand_four_of_month: bool = False
    redeal_hand_four_pairs: bool = False
    hand_swap: bool = False  # the non-dealer may swap hands with the dealer before looking
    forced_capture: bool = False  # a player holding a matching card must play one
    deal: DealMode = DealMode.OPEN  # open (from the shared seed) or hidden (mental poker)
    # --- round end and dealers ---
    drawn_round: DrawnRound = DrawnRound.DEALER_STAYS
    oya_ken_points: int = 0
    first_dealer: FirstDealer = FirstDealer.COIN
    card_draw_tie: CardDrawTie = CardDrawTie.HIGHER_CARD
    next_dealer: NextDealer = NextDealer.WINNER
    # --- match ---
    rounds: int = 6
    scoring: Scoring = Scoring.POOL
    pool_stake: int = 25
    knockout: bool = True  # POOL: a player left with 0 (or less) loses at once
    #: POOL: the loser pays at most what they have left; False: the whole score,
    #: so a total may go below zero
    pool_payment_cap: bool = True

    def __post_init__(self) -> None:
        for name in values.field_names(self):
            value = getattr(self, name)
            if name == "plus_yaku":
                if not isinstance(value, tuple) or any(v not in YAKU_IDS for v in value):
                    raise InputError(f"plus_yaku must name yaku among: {', '.join(YAKU_IDS)}")
                if list(value) != sorted(set(value)):
                    object.__setattr__(self, "plus_yaku", tuple(sorted(set(value))))
                continue
            kind = _FIELD_TYPES[name]
            if kind is int:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise InputError(f"setting {name} must be a whole number >= 0")
                if value > 10_000:
                    raise InputError(f"setting {name} is too large: {value}")
            elif kind is bool:
                if not isinstance(value, bool):
                    raise InputError(f"setting {name} must be true or false")
            elif not isinstance(value, kind):
                raise InputError(f"setting {name} must be one of: {_choices(kind)}")
        if not 1 <= self.rounds <= 99:
            raise InputError("setting rounds must be between 1 and 99")
        if self.scoring is Scoring.POOL and self.pool_stake < 1:
            raise InputError("setting pool_stake must be at least 1 with pool scoring")

    # ----- encoding -----
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values: enums as strings, ``plus_yaku`` as a list."""
        out: dict[str, Any] = {}
        for name in values.field_names(self):
            value = getattr(self, name)
            if isinstance(value, enum.Enum):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Inverse of :meth:`to_dict`; every key must be known and every key present."""
        if not isinstance(data, dict):
            raise InputError("rule set must be a mapping")
        names = set(values.field_names(cls))
        unknown = sorted(set(data) - names)
        if unknown:
            raise InputError(f"unknown rule setting: {unknown[0]}")
        missing = sorted(names - set(data))
        if missing:
            raise InputError(f"rule set lacks setting: {missing[0]}")
        kwargs: dict[str, Any] = {}
        for name in names:
            kwargs[name] = _convert(name, data[name])
        return cls(**kwargs)

    def encode(self) -> bytes:
        """Canonical bytes: sorted-key compact UTF-8 JSON of :meth:`to_dict`
        (remembered with the fingerprint: a record's check asks for both)."""
        return self._encoded()[1]

    @classmethod
    def decode(cls, data: bytes) -> RuleSet:
        try:
            obj = loads(data.decode("utf-8"))
        except ValueError as exc:  # not UTF-8, or json.JSONDecodeError (see jsontext)
            raise InputError(f"rule set is not valid JSON: {exc}") from None
        return cls.from_dict(obj)

    def fingerprint(self) -> str:
        """Hex SHA-256 of the domain tag and the canonical encoding.

        Remembered per rule set object: every state hash includes it, so a match
        asks for it twice an action (a JSON encoding and a hash cost 60 us; hashing
        the rule set's 30 fields for a dictionary key still 3 us; this lookup 0.1 us).
        """
        return self._encoded()[2]

    def _encoded(self) -> tuple[RuleSet, bytes, str]:
        """(self, :meth:`encode`, :meth:`fingerprint`), made once per rule set object."""
        hit = _ENCODED.get(id(self))
        if hit is not None and hit[0] is self:
            return hit
        data = canonical(self.to_dict()).encode()
        made = (self, data, sha256(b"p2pkoikoi/rules/v1\x00" + data).hexdigest())
        if len(_ENCODED) >= 64:
            _ENCODED.clear()
        _ENCODED[id(self)] = made  # the reference keeps the id from being reused
        return made

    # ----- settings -----
    def with_settings(self, **changes: Any) -> RuleSet:
        """A copy with some settings changed (values already typed or as strings)."""
        names = set(values.field_names(self))
        for key in changes:
            if key not in names:
                raise InputError(f"unknown rule setting: {key}")
        typed = {k: _convert(k, v) for k, v in changes.items()}
        return values.replace(self, **typed)

    def apply_setting(self, assignment: str) -> RuleSet:
        """Apply one ``KEY=VALUE`` string, as given to ``--set``."""
        key, sep, value = assignment.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"malformed setting {assignment!r}: expected KEY=VALUE")
        return self.with_settings(**{key: value.strip()})

    def with_open_deal(self) -> RuleSet:
        """These rules dealing from the seed: for play in one program (practice, selfplay,
        benchmarks) and a bot's search, where hiding cards from a peer gains nothing."""
        if self.deal is DealMode.OPEN:
            return self
        return values.replace(self, deal=DealMode.OPEN)

    def diff(self, other: RuleSet) -> list[tuple[str, Any, Any]]:
        """``(setting, mine, theirs)`` for every setting that differs, in field order."""
        mine, theirs = self.to_dict(), other.to_dict()
        return [(k, mine[k], theirs[k]) for k in mine if mine[k] != theirs[k]]


def _choices(kind: type) -> str:
    return ", ".join(m.value for m in kind)  # type: ignore[attr-defined]


_FIELD_TYPES: dict[str, type] = {}
for _name, _t in values.field_types(RuleSet).items():
    _FIELD_TYPES[_name] = {
        "int": int,
        "bool": bool,
        "tuple[str, ...]": tuple,
    }.get(_t) or globals()[_t]


def _convert(name: str, value: Any) -> Any:
    """Turn a string or JSON value into the field's type, or raise :class:`InputError`."""
    kind = _FIELD_TYPES.get(name)
    if kind is None:
        raise InputError(f"unknown rule setting: {name}")
    if kind is tuple:
        if isinstance(value, str):
            items = [v.strip() for v in value.split(",") if v.strip()]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise InputError(f"setting {name} must be a comma-separated list of yaku")
        for item in items:
            if not isinstance(item, str) or item not in YAKU_IDS:
                raise InputError(f"setting {name}: unknown yaku {item!r}")
        return tuple(sorted(set(items)))
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "yes", "on", "1"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "no", "off", "0"):
            return False
        raise InputError(f"setting {name} must be true or false, not {value!r}")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value, 10)
            except ValueError:
                pass
        raise InputError(f"setting {name} must be a whole number, not {value!r}")
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        raise InputError(
            f"setting {name} must be one of: {_choices(kind)}; not {value!r}"
        ) from None


#: id(rule set) -> (that rule set, its encoding, its fingerprint); see RuleSet._encoded
_ENCODED: dict[int, tuple[RuleSet, bytes, str]] = {}
