"""One side of one hidden deal: who holds which position, what is open, whose key is due.

Theory of operation
-------------------
The masked deck (:mod:`.deck`) has 48 positions laid out as ``protocol/deal.md``
deals an open deck: of every six positions from the top, two go to the
non-dealer's hand, two to the field, two to the dealer's hand; positions 24..47
are the stock in draw order.  A position opens only with both players' keys, so
the layout says who may see what:

* a **field** position: both send their key after the deal;
* a **hand** position: the *other* player sends its key to the owner after the
  deal (after the hand-swap decision where the rules have one); the owner's key
  goes out when the card is played, or with a claim about the hand, or at the audit;
* a **stock** position: the player who draws sends its key with its play, the
  other answers with its key; nobody sends a stock key earlier.

A :class:`HiddenTable` is one side's bookkeeping: its own secrets, the three
decks, the keys received and sent, and the cards opened to it.  It never holds
the other side's key for a position that is still hidden from it, which is what
makes the hidden deal hidden; :class:`~p2pkoikoi.session.mental.snoop` tests it.
Every method that takes the peer's data checks it and raises a
:class:`~p2pkoikoi.session.mental.errors.HiddenDealError` naming the peer.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Final

from p2pkoikoi.session.mental.deck import (
    HOST,
    JOINER,
    SEAT_NAME,
    Deck,
    DeckSecrets,
    check_audit,
    check_opens,
    deck_digest,
    decode_step1,
    decode_step2,
    decode_step3,
    open_position,
    step1_message,
    step2_message,
    step3_message,
    verify_step1,
)
from p2pkoikoi.session.mental.errors import (
    BadPointError,
    DuplicateCardError,
    SwappedCardError,
    WithheldKeyError,
)
from p2pkoikoi.session.mental.group import DECK_SIZE, SCALAR_LEN, Scalar, check_scalar

STOCK_START: Final = 24


class Zone(enum.Enum):
    FIELD = "field"
    HAND = "hand"
    STOCK = "stock"


def dealt_owner(pos: int, dealer: int) -> int | None:
    """The seat whose hand position ``pos`` is in the deal (None: field or stock)."""
    if pos >= STOCK_START:
        return None
    r = pos % 6
    if r < 2:
        return 1 - dealer
    if r < 4:
        return None
    return dealer


FIELD_POSITIONS: Final = tuple(p for p in range(STOCK_START) if p % 6 in (2, 3))


def encode_keys(keys: Sequence[Scalar]) -> bytes:
    return b"".join(keys)


def decode_keys(data: bytes, count: int, sender: int) -> tuple[Scalar, ...]:
    if not isinstance(data, bytes) or len(data) != count * SCALAR_LEN:
        raise WithheldKeyError(
            f"{SEAT_NAME[sender]} sent {len(data) // SCALAR_LEN if isinstance(data, bytes) else 0}"
            f" keys where {count} were due",
            sender,
        )
    try:
        return tuple(
            check_scalar(data[i * SCALAR_LEN : (i + 1) * SCALAR_LEN]) for i in range(count)
        )
    except BadPointError:
        raise BadPointError(
            f"{SEAT_NAME[sender]} sent a key that is not a scalar", sender
        ) from None


class HiddenTable:
    """One side's state for one hidden deal (see the module docstring)."""

    def __init__(self, seat: int, dealer: int, secrets: DeckSecrets, context: bytes = b"") -> None:
        """``context`` binds the deal's proofs to this deal (the match passes
        :func:`~p2pkoikoi.session.mental.play.deal_context`: round, attempt, dealer)."""
        if secrets.seat != seat:
            raise ValueError("secrets belong to the other seat")
        self.seat = seat
        self.peer = 1 - seat
        self.dealer = dealer
        self.secrets = secrets
        self.context = context
        self.decks: list[Deck] = []
        self.owner: list[int | None] = [dealt_owner(p, dealer) for p in range(DECK_SIZE)]
        self.cards: dict[int, int] = {}  # position -> card, as opened to this side
        self.got: dict[int, Scalar] = {}  # position -> the peer's key
        self.sent: set[int] = set()  # positions whose own key went out
        self.draws = 0  # stock cards drawn so far
        self.audited: tuple[int, ...] | None = None
        self._unchecked: bytes | None = None  # D1's message, its proof not yet checked

    # ------------------------------------------------------------------ dealing
    def step1(self) -> bytes:
        """Host: the shuffled deck under one mask (``D1``) with its shuffle proof."""
        assert self.seat == HOST and not self.decks
        d1, message = step1_message(self.secrets, self.context)
        self.decks.append(d1)
        return message

    def on_step1(self, data: bytes, *, later: bool = False) -> bytes:
        """Joiner: check ``D1`` and its proof, answer with ``D2`` and its proofs.

        ``later``: the proof is checked by :meth:`settle` instead, after the answer has
        gone out, so that checking it overlaps the host's check of ours (hidden-deal.md
        section 7: a step may leave before the proof of its input is checked, a key of
        the deal may not)."""
        assert self.seat == JOINER and not self.decks
        d1 = decode_step1(data, self.context, proof=not later)
        d2, message = step2_message(self.secrets, d1, self.context)
        self.decks += [d1, d2]
        if later:
            self._unchecked = data
        return message

    @property
    def unsettled(self) -> bool:
        """A proof received is still to be checked (:meth:`settle`)."""
        return self._unchecked is not None

    def settle(self) -> None:
        """Check the proof that :meth:`on_step1` left for later; raises naming the host.
        Every path that sends a key or takes the next step of the deal calls it first."""
        data = self._unchecked
        if data is not None:  # (kept on failure: the table then refuses to open anything)
            verify_step1(data, self.decks[0], self.context)
            self._unchecked = None

    def on_step2(self, data: bytes) -> bytes:
        """Host: check ``D2`` and its proofs, answer with the locked deck ``D3``."""
        assert self.seat == HOST and len(self.decks) == 1
        d2 = decode_step2(data, self.decks[0], self.context)
        d3, message = step3_message(self.secrets, d2, self.context)
        self.decks += [d2, d3]
        return message

    def on_step3(self, data: bytes) -> None:
        """Joiner: check ``D3`` and its proof (before any card of the deal opens)."""
        assert self.seat == JOINER and len(self.decks) == 2
        self.settle()
        self.decks.append(decode_step3(data, self.decks[1], self.context))

    @property
    def dealt(self) -> bool:
        return len(self.decks) == 3

    def digest(self) -> bytes:
        """The masked decks so far, for the hidden state hash."""
        return deck_digest(*self.decks)

    # ------------------------------------------------------------------ positions
    def hand_positions(self, seat: int) -> tuple[int, ...]:
        """``seat``'s hand positions not yet played."""
        return tuple(p for p in range(STOCK_START) if self.owner[p] == seat)

    def swap_hands(self) -> None:
        """The rulebook's hand swap, before anyone looked: the hands change owners."""
        if any(self.owner[p] is not None and p in self.cards for p in range(STOCK_START)):
            raise ValueError("hands are swapped before they are opened")
        self.owner = [None if o is None else 1 - o for o in self.owner]

    @property
    def draw_position(self) -> int:
        return STOCK_START + self.draws

    def position_of(self, card: int) -> int | None:
        for p, c in self.cards.items():
            if c == card:
                return p
        return None

    def hidden_from_me(self) -> tuple[int, ...]:
        """Positions whose card this side has not seen (the peer's hand, the stock)."""
        return tuple(p for p in range(DECK_SIZE) if p not in self.cards)

    # ------------------------------------------------------------------ keys
    def keys_for(self, positions: Iterable[int]) -> bytes:
        """This side's keys for ``positions``, to send; records that they went out."""
        self.settle()
        pos = tuple(positions)
        self.sent.update(pos)
        return encode_keys([self.secrets.keys[p] for p in pos])

    def on_keys(self, positions: Sequence[int], data: bytes) -> dict[int, int]:
        """The peer's keys for ``positions``: open what this side now holds both keys for."""
        keys = decode_keys(data, len(positions), self.peer)
        opened: dict[int, int] = {}
        for p, k in zip(positions, keys, strict=True):
            self._take_key(p, k)
            if p not in self.cards:
                opened[p] = self._open(p)
        return opened

    def deal_keys(self) -> tuple[int, ...]:
        """The positions this side sends keys for after the deal: the field and the peer's hand."""
        return FIELD_POSITIONS + self.hand_positions(self.peer)

    def field_keys(self) -> tuple[int, ...]:
        return FIELD_POSITIONS

    def _take_key(self, pos: int, key: Scalar) -> None:
        old = self.got.get(pos)
        if old is not None and old != key:
            raise SwappedCardError(
                f"{SEAT_NAME[self.peer]} sent two different keys for position {pos}", self.peer
            )
        self.got[pos] = key

    def _pair(self, pos: int) -> tuple[Scalar, Scalar]:
        mine, theirs = self.secrets.keys[pos], self.got[pos]
        return (mine, theirs) if self.seat == HOST else (theirs, mine)

    def _open(self, pos: int) -> int:
        hk, jk = self._pair(pos)
        card = open_position(self.decks[2], pos, hk, jk, self.peer)
        self._learn(pos, card)
        return card

    def _learn(self, pos: int, card: int) -> None:
        other = self.position_of(card)
        if other is not None and other != pos:
            raise DuplicateCardError(
                f"the card at position {pos} was already dealt at position {other}:"
                f" {SEAT_NAME[self.peer]}'s masking duplicated a card",
                self.peer,
            )
        self.cards[pos] = card

    # ------------------------------------------------------------------ play
    def reveal(self, card: int) -> tuple[int, bytes]:
        """Play ``card`` from this side's hand: its position and this side's key for it."""
        pos = self.position_of(card)
        if pos is None or self.owner[pos] != self.seat:
            raise ValueError(f"card {card} is not in this side's hand")
        self.owner[pos] = None
        return pos, self.keys_for([pos])

    def on_reveal(self, card: int, pos: int, data: bytes) -> None:
        """The peer plays ``card`` from position ``pos`` with its key: check it opens there."""
        if not 0 <= pos < STOCK_START or self.owner[pos] != self.peer:
            raise SwappedCardError(
                f"{SEAT_NAME[self.peer]} played from position {pos}, which is not in its hand",
                self.peer,
            )
        (key,) = decode_keys(data, 1, self.peer)
        self._take_key(pos, key)
        hk, jk = self._pair(pos)
        check_opens(self.decks[2], pos, hk, jk, card, self.peer)
        self._learn(pos, card)
        self.owner[pos] = None

    def draw_share(self) -> bytes:
        """This side's key for the next stock position (the drawer sends it with its play)."""
        if self.draws >= DECK_SIZE - STOCK_START:
            raise ValueError("the stock is empty")
        return self.keys_for([self.draw_position])

    def on_draw_share(self, data: bytes) -> int:
        """The peer's key for the next stock position: open it, return the card drawn.

        The drawer's share comes first; the other side opens at once and sends its
        own share back.  A drawer that has not yet sent its share must not be given
        the peer's (the draw would be known before the play).
        """
        pos = self.draw_position
        (key,) = decode_keys(data, 1, self.peer)
        self._take_key(pos, key)
        card = self._open(pos)
        return card

    def drawn(self) -> None:
        """The draw at the current stock position is done: move to the next one."""
        self.draws += 1

    def withheld(self, what: str) -> WithheldKeyError:
        """The error for a key the peer should have sent and did not."""
        return WithheldKeyError(
            f"{SEAT_NAME[self.peer]} withheld {what} (position {self.draw_position})", self.peer
        )

    # ------------------------------------------------------------------ audit
    def audit(self) -> bytes:
        """This side's secrets, published when the deal is over."""
        self.settle()
        return self.secrets.encode()

    def on_audit(self, data: bytes) -> tuple[int, ...]:
        """Check the peer's audit against the decks and every key it sent; the dealt deck."""
        peer = DeckSecrets.decode(self.peer, data)
        host, joiner = (self.secrets, peer) if self.seat == HOST else (peer, self.secrets)
        d1, d2, d3 = self.decks
        sigma = check_audit(
            d1,
            d2,
            d3,
            host,
            joiner,
            {(self.peer, p): k for p, k in self.got.items()},
            trust=self.seat,
        )
        for p, c in self.cards.items():
            if sigma[p] != c:  # pragma: no cover - implied by the checks above
                raise DuplicateCardError(f"position {p} opened to another card", self.peer)
        self.audited = sigma
        return sigma
