"""The guided first round: one tip at a time, chosen from what the table shows now.

A tip is a pure function of the :class:`~p2pkoikoi.ui.state.TableState` (what is
to decide, the selected card, the field), so it always explains what the player
is looking at: matching and captures while choosing a card, the stock draw
while the computer plays, yaku as they come near, and koi-koi when it is asked.
The guide covers the first round only; ``g`` turns it off at any time.
"""

from __future__ import annotations

from p2pkoikoi.ui.progress import near_yaku
from p2pkoikoi.ui.state import Decision, Page, TableState

WELCOME = "Guide (g: off): each month has 4 cards; a card captures one of its month."


def tutorial_tip(st: TableState) -> str:
    """The tip for what the table shows now, or "" (guide off, or after round 1)."""
    v = st.view
    if not st.tutorial or v is None or st.over is not None:
        return ""
    if v.round > 1:
        return ""
    if st.page is Page.ROUND:
        return (
            "Guide: the round is over. The winner scores their yaku; the first round of "
            "your own is next. Press Enter to go on (the guide ends here)."
        )
    if st.page is not None:
        return ""
    d = st.decision
    if d is Decision.KOIKOI:
        return (
            "Guide: you made a yaku! Stop (s) ends the round and scores it now. Koi-koi (k) "
            "plays on for more points, but if the computer makes a yaku first, it wins "
            "the round instead."
        )
    if d is Decision.TARGET:
        return (
            "Guide: two field cards share this month. Choose which one your card takes "
            "(arrows or 1-2, then Enter); the other stays on the field."
        )
    if d is Decision.TAKE:
        return (
            "Guide: after playing a card you draw one from the stock, and it matches the "
            "same way. This one matches two field cards: choose which one it takes."
        )
    if d is Decision.SWAP:
        return "Guide: a house rule lets you swap hands with the dealer before looking."
    if d is Decision.PLAY:
        card = st.selected
        near = near_yaku(v.piles[st.seat], v.piles[1 - st.seat], v.rules, v.yaku(st.seat), 1)
        if len(v.hand) == 8 and not v.piles[st.seat]:
            base = WELCOME + " "
        elif near:
            p = near[0]
            base = (
                f"Guide: captured cards build yaku, scoring sets: you have {p.have} of the "
                f"{p.need} cards for {p.romaji} (side panel; ? lists them all). "
            )
        else:
            base = "Guide: "
        if card is None:
            return base
        grab = [c for c in v.field if c.month == card.month]
        if grab:
            return base + (
                f"Your {card.english} ({card.flower}, month {card.month}) matches "
                f"{'a field card' if len(grab) == 1 else f'{len(grab)} field cards'} "
                "(underlined): Enter plays it and captures."
            )
        return base + (
            f"No field card is of month {card.month} ({card.flower}): played, your card "
            "stays on the field. Try the arrows for a card that matches."
        )
    if v.to_act is not None and v.to_act != st.seat:
        return (
            f"Guide: {st.them} plays a card, then draws one from the stock; the top line "
            "shows what they took. Cards you have not seen yet: press u."
        )
    return ""
