"""The practice table's hint: what the ``medium`` computer player would do, and why.

The bot sees only the player's view (as every bot does), so a hint knows no
more than the person asking.  The reason is one line read off the move: a yaku
it makes, a yaku it brings closer, a card it keeps from the other player's
yaku, or (a card that captures nothing) that it gives the other player least.
"""

from __future__ import annotations

from p2pkoikoi.bots.base import MediumBot, opponent_threat, stop_gain
from p2pkoikoi.engine import Action, ActionKind, Card, CardSet, Phase, PlayerView
from p2pkoikoi.engine.yaku import evaluate
from p2pkoikoi.ui.progress import near_yaku
from p2pkoikoi.ui.tiles import tile_text


def hint(view: PlayerView, seed: int = 0, ascii: bool = False) -> tuple[Action, str]:
    """Medium's choice for ``view`` and one line saying what it is and why."""
    action = MediumBot(seed).choose(view)
    return action, explain(view, action, ascii)


def _card(card: Card, ascii: bool) -> str:
    return f"{card.english} [{tile_text(card, ascii).strip()}]"


def _names(cards: list[Card]) -> str:
    names = [c.english for c in cards]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def captured_by(view: PlayerView, action: Action) -> list[Card]:
    """The cards ``action`` moves into the player's pile now (its own card included)."""
    if view.phase is Phase.DRAW_CHOICE and action.card is not None and view.drawn is not None:
        return [action.card, view.drawn]
    card = action.card
    if card is None:
        return []
    if action.target is not None:
        return [card, action.target]
    same = [c for c in view.field if c.month == card.month]
    return [card, *same] if same else []


def explain(view: PlayerView, action: Action, ascii: bool = False) -> str:
    """One line: the move and the reason medium would make it."""
    me, them = view.seat, 1 - view.seat
    if action.kind is ActionKind.STOP:
        gain = stop_gain(view)
        why = (
            "the other player is close to a yaku"
            if opponent_threat(view) >= 1
            else "calling risks it for little"
        )
        return f"Stop: {gain} point{'s' if gain != 1 else ''} now, and {why}."
    if action.kind is ActionKind.KOIKOI:
        gain, n = stop_gain(view), view.hand_size
        risk = (
            ", and the other player is far from a yaku"
            if opponent_threat(view) < 1
            else ", though the other player is near a yaku: a gamble"
        )
        return (
            f"Koi-koi: {n} card{'s' if n != 1 else ''} in hand to add to {gain}"
            f" point{'s' if gain != 1 else ''}{risk}."
        )
    if action.kind in (ActionKind.SWAP, ActionKind.KEEP):
        return "Keep: a swap is a blind guess, and this hand is as good as any."
    card = action.card
    if card is None:
        return f"{action}."
    taking = view.phase is Phase.DRAW_CHOICE
    what = (
        f"take {_card(card, ascii)} with the drawn card" if taking else f"play {_card(card, ascii)}"
    )
    gained = captured_by(view, action)
    if not gained:
        return f"Play {_card(card, ascii)}: nothing captures well, and it gives the other player least."
    mine, theirs = view.piles[me], view.piles[them]
    after = CardSet(mine.mask | CardSet(gained).mask)
    rules = view.rules
    before_ids = {y.id for y in view.yaku(me)}
    made = [
        y
        for y in evaluate(after.mask, rules, view.field.mask, view.calls[me] > 0)
        if y.id not in before_ids
    ]
    others = [c for c in gained if c is not card] if not taking else []
    took = f", taking {_names(others)}" if others else ""
    head = what[0].upper() + what[1:] + took
    if made:
        return f"{head}: it makes {made[0].romaji} ({made[0].points})."
    now = {p.yaku: p.have for p in near_yaku(mine, theirs, rules, view.yaku(me), limit=11)}
    closer = [
        p
        for p in near_yaku(after, theirs, rules, view.yaku(me), limit=11)
        if p.have > now.get(p.yaku, 0)
    ]
    threat = near_yaku(theirs, mine, rules, view.yaku(them), limit=11)
    blocked = [
        p
        for p in threat
        if p.yaku not in {q.yaku for q in near_yaku(theirs, after, rules, view.yaku(them), 11)}
    ]
    if blocked:
        return f"{head}: it keeps a card from the other player's {blocked[0].romaji}."
    if closer:
        p = closer[0]
        return f"{head}: it brings {p.romaji} to {p.have}/{p.need}."
    return f"{head}: the most it can gain now."
