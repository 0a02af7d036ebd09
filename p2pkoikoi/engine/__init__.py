"""The Koi-Koi engine: pure standard-library Python, no I/O, no clock, no global randomness.

Everything random comes from a 32-byte match seed passed in; the same rules,
seed and actions give the same states on any machine.
"""

from p2pkoikoi.engine.actions import Action, ActionKind, decode_action, encode_action
from p2pkoikoi.engine.cards import CARDS, Card, CardSet, Kind, parse_card, parse_cards
from p2pkoikoi.engine.deal import Deal, deal, derive_deck
from p2pkoikoi.engine.errors import IllegalActionError, InputError, KoiKoiError
from p2pkoikoi.engine.events import Event
from p2pkoikoi.engine.match import (
    MatchState,
    Phase,
    PlayerView,
    RoundResult,
    determinize,
    new_match,
)
from p2pkoikoi.engine.presets import DEFAULT_PRESET, PRESETS, get_preset
from p2pkoikoi.engine.rules import RuleSet
from p2pkoikoi.engine.yaku import ScoreBreakdown, YakuScore, evaluate, hand_yaku, score, total

__all__ = [
    "CARDS",
    "DEFAULT_PRESET",
    "PRESETS",
    "Action",
    "ActionKind",
    "Card",
    "CardSet",
    "Deal",
    "Event",
    "IllegalActionError",
    "InputError",
    "Kind",
    "KoiKoiError",
    "MatchState",
    "Phase",
    "PlayerView",
    "RoundResult",
    "RuleSet",
    "ScoreBreakdown",
    "YakuScore",
    "deal",
    "decode_action",
    "derive_deck",
    "determinize",
    "encode_action",
    "evaluate",
    "get_preset",
    "hand_yaku",
    "new_match",
    "parse_card",
    "parse_cards",
    "score",
    "total",
]
