"""The hidden deal (rule ``deal = hidden``): mental poker for Koi-Koi.

Neither program learns a card of the other's hand or of the stock before the
rules reveal it, even if it is modified.  Modules, bottom up:

* :mod:`.group`  -- the prime-order group (Ed25519's, through libsodium), card points;
* :mod:`.deck`   -- the three masking steps, opening one position, the audit;
* :mod:`.table`  -- one side's bookkeeping of one deal: who holds which position,
  which keys went out, what is open;
* :mod:`.claims` -- declarations about dealt hands (hand yaku, lucky hands);
* :mod:`.standins` -- the hidden state hash, stand-ins for cards a side has not seen;
* :mod:`.play`   -- one side of a whole match, sans I/O (card moves in, card moves out);
* :mod:`.replay` -- verifying a record: both sides replayed from their audits;
* :mod:`.vectors` -- ``protocol/vectors/hidden.json``;
* :mod:`.errors` -- one error per cheat, each naming the cheater.

The session (:mod:`p2pkoikoi.session.session`) carries the moves in signed
``card`` messages.

The protocol is specified in ``protocol/hidden-deal.md``.
"""

from p2pkoikoi.session.mental.deck import DeckSecrets, check_audit, dealt_deck
from p2pkoikoi.session.mental.errors import (
    BadPointError,
    BrokenAuditError,
    DuplicateCardError,
    FalseClaimError,
    HiddenDealError,
    NotACardError,
    SwappedCardError,
    WithheldKeyError,
    WrongMaskingError,
)
from p2pkoikoi.session.mental.table import HiddenTable

__all__ = [
    "BadPointError",
    "BrokenAuditError",
    "DeckSecrets",
    "DuplicateCardError",
    "FalseClaimError",
    "HiddenDealError",
    "HiddenTable",
    "NotACardError",
    "SwappedCardError",
    "WithheldKeyError",
    "WrongMaskingError",
    "check_audit",
    "dealt_deck",
]
