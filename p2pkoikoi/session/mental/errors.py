"""What the hidden deal's checks raise: each cheat its own error, naming the cheater.

Every error is a :class:`~p2pkoikoi.session.errors.CheatingError` (the user reads
its message) and carries ``seat``, the seat whose message proved the cheat (0
the host, 1 the joiner; ``None`` where a single party's check cannot tell yet).
"""

from __future__ import annotations

from p2pkoikoi.session.errors import CheatingError


class HiddenDealError(CheatingError):
    """Base: a check of the hidden deal failed; ``seat`` is who cheated, if known."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat


class BadPointError(HiddenDealError):
    """A point or key from the peer is not a valid group element or scalar."""


class WrongMaskingError(HiddenDealError):
    """A masked deck is not what its sender's revealed keys and permutation give."""


class DuplicateCardError(HiddenDealError):
    """A card opened twice, or a masked deck with two equal cards."""


class SwappedCardError(HiddenDealError):
    """A player named a card that the key it sent does not open (it played a card it lacks)."""


class NotACardError(HiddenDealError):
    """Opening a position with both keys gave no card at all: a wrong key or deck."""


class FalseClaimError(HiddenDealError):
    """A claim about a hidden hand (a hand yaku, a redeal) that the hand does not bear out,
    or a hand that needed a claim and was not declared."""


class WithheldKeyError(HiddenDealError):
    """A player did not send a key the deal needs (a draw key, a key to its own hand)."""


class BrokenAuditError(HiddenDealError):
    """A round's audit is malformed or disagrees with keys revealed during the round."""


class IllegalHiddenPlayError(HiddenDealError):
    """A decision that the cards really held made illegal (forced capture, found at the
    audit at the latest), or a play of a card that was not hidden."""


class BadProofError(HiddenDealError):
    """A masking step's proof does not hold: the step is not a masked permutation of its
    input under keys its sender knows (the deck is refused before any card opens)."""
