"""The hidden state hash, and the stand-ins a side puts where it has not seen a card.

Each side runs the ordinary engine on the deck as far as it knows it; every
card it has not seen is a stand-in, chosen so that it decides nothing the
other side could dispute (``protocol/hidden-deal.md`` section 4): stand-in
hands declare nothing, and a play is refused for forced capture only if no
hand the player could hold makes it legal.  The hidden state hash covers only
what both sides know: the public state and the masked decks.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Final

from p2pkoikoi.engine import MatchState
from p2pkoikoi.engine.cards import CARDS, MONTH_OF, SAME_MONTH, iter_mask
from p2pkoikoi.engine.match import Phase
from p2pkoikoi.session.mental.deck import SEAT_NAME
from p2pkoikoi.session.mental.errors import IllegalHiddenPlayError
from p2pkoikoi.session.mental.table import HiddenTable

TAG_STATE: Final = b"p2pkoikoi/v2/hidden/state\x00"
TAG_DECKS: Final = b"p2pkoikoi/v2/hidden/decks\x00"
_PHASE_CODE: Final = {p: i for i, p in enumerate(Phase)}


def public_encoding(state: MatchState) -> bytes:
    """The state as both sides see it: hand sizes and stock size instead of their cards."""
    pending = state.drawn_card
    return bytes.fromhex(state.rules.fingerprint()) + struct.pack(
        ">HHBBBiiBBQQQBBHHBBBB",  # scores signed, as in the open state hash
        state.round,
        state.attempt,
        state.dealer,
        _PHASE_CODE[state.phase],
        255 if state.to_act is None else state.to_act,
        state.scores[0],
        state.scores[1],
        len(state.hand(0)),
        len(state.hand(1)),
        state.field.mask,
        state.pile(0).mask,
        state.pile(1).mask,
        state.calls[0],
        state.calls[1],
        state.last_total(0),
        state.last_total(1),
        255 if pending is None else pending.id,
        255 if state.winner is None else state.winner,
        len(state.results),
        len(state.stock),
    )


def hidden_state_hash(state: MatchState, deck_digest: bytes) -> bytes:
    """``SHA-256(tag || public encoding || masked-deck chain)``: what both sides compare."""
    return hashlib.sha256(TAG_STATE + public_encoding(state) + deck_digest).digest()


def fact_free_fill(pool: list[int], count: int, avoid_months: int = 0) -> list[int]:
    """``count`` cards from ``pool`` (removed from it), as many months as possible, none of
    the months in the ``avoid_months`` bit set if that can be helped: a stand-in hand
    that declares nothing and, where asked, captures nothing."""
    chosen: list[int] = []
    held = [0] * 13  # cards of each month (1..12) chosen so far
    left = [0] * 13  # cards of each month still in the pool
    for c in pool:
        left[MONTH_OF[c]] += 1
    for _ in range(count):
        best = min(
            pool,
            key=lambda c: (
                (avoid_months >> MONTH_OF[c]) & 1,
                held[MONTH_OF[c]],
                -left[MONTH_OF[c]],
                c,
            ),
        )
        pool.remove(best)
        chosen.append(best)
        held[MONTH_OF[best]] += 1
        left[MONTH_OF[best]] -= 1
    return chosen


def known_deck(table: HiddenTable, seat: int) -> tuple[int, ...]:
    """The deck as ``seat``'s side knows it, stand-ins (hands that declare nothing) elsewhere."""
    deck: list[int | None] = [table.cards.get(p) for p in range(48)]
    pool = sorted(set(range(48)) - set(table.cards.values()))
    for owner in (seat, 1 - seat):
        hidden = [p for p in table.hand_positions(owner) if deck[p] is None]
        for p, c in zip(hidden, fact_free_fill(pool, len(hidden)), strict=True):
            deck[p] = c
    for p in range(48):
        if deck[p] is None:
            deck[p] = pool.pop(0)
    out = tuple(c for c in deck if c is not None)
    assert len(out) == 48
    return out


def rehand_for_play(state: MatchState, peer: int, seat: int, card: int, drawn: int) -> MatchState:
    """``state`` with ``card`` in ``seat``'s hand and ``drawn`` on top of the stock, for the
    side whose opponent is ``peer``.

    Every card that side has not seen (the peer's stand-in hand and the stock) is
    placed anew around the two cards the play revealed; with forced capture, the
    rest of a peer's hand that played a card matching nothing avoids the field's
    months where any unseen card allows it.
    """
    s = state
    hands = [s.hand(0).mask, s.hand(1).mask]
    pool = sorted(set(iter_mask(hands[peer])) | {c.id for c in s.stock})
    revealed = [drawn] + ([card] if seat == peer else [])
    if len(set(revealed)) != len(revealed) or any(c not in pool for c in revealed):
        raise IllegalHiddenPlayError(
            f"{SEAT_NAME[peer]} played or drew a card that is not hidden from this side", peer
        )
    for c in revealed:
        pool.remove(c)
    size = hands[peer].bit_count() - (1 if seat == peer else 0)
    field = s.field.mask
    avoid = 0
    if seat == peer and s.rules.forced_capture and not field & SAME_MONTH[card]:
        for c in iter_mask(field):
            avoid |= 1 << MONTH_OF[c]
    others = fact_free_fill(pool, size, avoid)
    if avoid and any(field & SAME_MONTH[c] for c in others):
        raise IllegalHiddenPlayError(
            f"{SEAT_NAME[peer]} played {CARDS[card].code} though every hand it could hold"
            " has a card that captures (forced capture)",
            peer,
        )
    hand = 1 << card if seat == peer else 0
    for c in others:
        hand |= 1 << c
    hands[peer] = hand
    return s.rehand((hands[0], hands[1]), (drawn, *pool))
