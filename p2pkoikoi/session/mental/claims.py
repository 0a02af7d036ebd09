"""What a dealt hand obliges its holder to declare, and the check of a declaration.

With the hidden deal nobody sees the other hand at the deal, so the rules that
read a dealt hand (a hand yaku: Teshi, Kuttsuki; a redeal for a lucky hand)
work by declaration: a player whose hand has such a fact opens the whole hand
(sends its keys for it), which the other checks at once (:func:`check_declared`).
A player who declares nothing is checked at the round's audit
(:func:`check_undeclared`): its hand must have had nothing to declare.
"""

from __future__ import annotations

from p2pkoikoi.engine.cards import month_counts
from p2pkoikoi.engine.rules import RuleSet
from p2pkoikoi.engine.yaku import hand_yaku
from p2pkoikoi.session.mental.deck import SEAT_NAME
from p2pkoikoi.session.mental.errors import FalseClaimError

_COUNT_TWO = 0x222222222222
_COUNT_FOUR = 0x444444444444
_NIBBLE_LOW = 0x111111111111


def _four_pairs(mask: int) -> bool:
    counts = month_counts(mask)
    y = counts ^ _COUNT_TWO
    nonzero = (y | (y >> 1) | (y >> 2) | (y >> 3)) & _NIBBLE_LOW
    return (~nonzero & _NIBBLE_LOW).bit_count() == 4


def must_declare(hand: int, rules: RuleSet) -> bool:
    """Whether the dealt ``hand`` has a fact the rules act on: a hand yaku or a lucky hand."""
    if rules.redeal_hand_four_of_month and month_counts(hand) & _COUNT_FOUR:
        return True
    if rules.redeal_hand_four_pairs and _four_pairs(hand):
        return True
    return hand_yaku(hand, rules) is not None


def check_declared(seat: int, hand: int, rules: RuleSet) -> None:
    """A declared hand (opened with the declaration) must have something to declare."""
    if not must_declare(hand, rules):
        raise FalseClaimError(
            f"{SEAT_NAME[seat]} claimed a hand yaku or a lucky hand that its hand does not hold",
            seat,
        )


def check_undeclared(seat: int, hand: int, rules: RuleSet) -> None:
    """At the audit: a hand that was not declared must have had nothing to declare."""
    if must_declare(hand, rules):
        raise FalseClaimError(
            f"{SEAT_NAME[seat]} held a hand yaku or a lucky hand at the deal and did not declare it",
            seat,
        )
