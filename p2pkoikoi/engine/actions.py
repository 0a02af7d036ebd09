"""Actions: the small immutable values that players send.

Every action has one canonical text form, used on the wire, in records and in
the bot protocol (``str(action)`` / :meth:`Action.parse`)::

    play 3b          play a hand card (no choice of capture)
    play 3c1 3b      play 3c1 and take 3b where two field cards match
    take 8a          take 8a with the drawn card where two field cards match
    koikoi | stop    after a new yaku or a raised total
    swap | keep      the non-dealer's hand swap before looking (rulebook)

All actions are interned: :meth:`Action.parse` and the engine return the same
objects, so they compare fast and hash well.
"""

from __future__ import annotations

import enum

from p2pkoikoi.engine.cards import CARDS, Card, parse_card
from p2pkoikoi.engine.errors import InputError
from p2pkoikoi.engine.values import make, value


class ActionKind(enum.Enum):
    PLAY = "play"
    TAKE = "take"
    KOIKOI = "koikoi"
    STOP = "stop"
    SWAP = "swap"
    KEEP = "keep"


_KIND_OF_WORD = {k.value: k for k in ActionKind}  # ActionKind(word) without EnumType.__call__


@value
class Action:
    """A player's decision: its kind and the cards it names (``str()``: its text)."""

    kind: ActionKind
    card: Card | None = None  # PLAY: the hand card; TAKE: the field card taken
    target: Card | None = None  # PLAY: the field card taken where two match

    def __str__(self) -> str:
        parts = [self.kind.value]
        if self.card is not None:
            parts.append(self.card.code)
        if self.target is not None:
            parts.append(self.target.code)
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Action.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> Action:
        """Parse the canonical text form (card aliases are accepted too)."""
        if not isinstance(text, str):
            raise InputError(f"action must be text, not {type(text).__name__}")
        words = text.strip().lower().split()
        if not words:
            raise InputError("empty action")
        kind = _KIND_OF_WORD.get(words[0])
        if kind is None:
            raise InputError(f"unknown action {words[0]!r} (play, take, koikoi, stop, swap, keep)")
        args = [parse_card(w) for w in words[1:]]
        if kind is ActionKind.PLAY and len(args) == 1:
            return PLAY[args[0].id]
        if kind is ActionKind.PLAY and len(args) == 2:
            card, target = args
            return PLAY_TAKING[card.id].get(target.id) or Action(kind, card, target)
        if kind is ActionKind.TAKE and len(args) == 1:
            return TAKE[args[0].id]
        if kind in _BARE and not args:
            return _BARE[kind]
        raise InputError(f"malformed action: {text!r}")

    @property
    def is_play(self) -> bool:
        return self.kind is ActionKind.PLAY


# The tables are made with values.make (no __init__: these are known good)
PLAY: tuple[Action, ...] = tuple(make(Action, ActionKind.PLAY, c, None) for c in CARDS)
#: ``PLAY_TAKING[c][t]``: play card ``c`` taking field card ``t`` of its month (the
#: only pairs a legal play names; 144 actions, not 48 x 48 built at every start-up).
#: A month's four cards are ids ``4 * (month - 1)`` to ``4 * month - 1``.
PLAY_TAKING: tuple[dict[int, Action], ...] = tuple(
    {
        t.id: make(Action, ActionKind.PLAY, c, t)
        for t in CARDS[c.id & ~3 : (c.id | 3) + 1]
        if t is not c
    }
    for c in CARDS
)
TAKE: tuple[Action, ...] = tuple(make(Action, ActionKind.TAKE, c, None) for c in CARDS)
KOIKOI = Action(ActionKind.KOIKOI)
STOP = Action(ActionKind.STOP)
SWAP = Action(ActionKind.SWAP)
KEEP = Action(ActionKind.KEEP)
_BARE = {
    ActionKind.KOIKOI: KOIKOI,
    ActionKind.STOP: STOP,
    ActionKind.SWAP: SWAP,
    ActionKind.KEEP: KEEP,
}


def encode_action(action: Action) -> str:
    return str(action)


def decode_action(text: str) -> Action:
    return Action.parse(text)
