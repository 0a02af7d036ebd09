"""The Koi-Koi engine: pure standard-library Python, no I/O, no clock, no global randomness.

Everything random comes from a 32-byte match seed passed in; the same rules,
seed and actions give the same states on any machine.
"""

import importlib

# ``deal`` is both a submodule and a function: import it now, so the package
# attribute is the function (as it always was) whichever is imported first.
from p2pkoikoi.engine.deal import Deal, deal, derive_deck
from p2pkoikoi.engine.errors import IllegalActionError, InputError, KoiKoiError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from p2pkoikoi.engine.actions import Action, ActionKind, decode_action, encode_action
    from p2pkoikoi.engine.cards import CARDS, Card, CardSet, Kind, parse_card, parse_cards
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

_LAZY: dict[str, str] = {
    "Action": "p2pkoikoi.engine.actions",
    "ActionKind": "p2pkoikoi.engine.actions",
    "decode_action": "p2pkoikoi.engine.actions",
    "encode_action": "p2pkoikoi.engine.actions",
    "CARDS": "p2pkoikoi.engine.cards",
    "Card": "p2pkoikoi.engine.cards",
    "CardSet": "p2pkoikoi.engine.cards",
    "Kind": "p2pkoikoi.engine.cards",
    "parse_card": "p2pkoikoi.engine.cards",
    "parse_cards": "p2pkoikoi.engine.cards",
    "Event": "p2pkoikoi.engine.events",
    "MatchState": "p2pkoikoi.engine.match",
    "Phase": "p2pkoikoi.engine.match",
    "PlayerView": "p2pkoikoi.engine.match",
    "RoundResult": "p2pkoikoi.engine.match",
    "determinize": "p2pkoikoi.engine.match",
    "new_match": "p2pkoikoi.engine.match",
    "DEFAULT_PRESET": "p2pkoikoi.engine.presets",
    "PRESETS": "p2pkoikoi.engine.presets",
    "get_preset": "p2pkoikoi.engine.presets",
    "RuleSet": "p2pkoikoi.engine.rules",
    "ScoreBreakdown": "p2pkoikoi.engine.yaku",
    "YakuScore": "p2pkoikoi.engine.yaku",
    "evaluate": "p2pkoikoi.engine.yaku",
    "hand_yaku": "p2pkoikoi.engine.yaku",
    "score": "p2pkoikoi.engine.yaku",
    "total": "p2pkoikoi.engine.yaku",
}


def __getattr__(name: str) -> object:
    """Import the submodule that defines ``name`` on first use (PEP 562), so a
    command that needs only the cards or the rules does not load the match
    engine (start-up time; see tests/house/test_startup.py)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
