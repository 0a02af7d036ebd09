"""One side of a whole hidden-deal match, sans I/O: card moves in, card moves out.

Theory of operation
-------------------
Each side runs the ordinary engine (:class:`~p2pkoikoi.engine.MatchState`) on a
deck *as far as it knows it*: the cards it has seen are in their places, every
other position holds a stand-in.  The stand-ins never decide anything the
other player could contest:

* the engine waits in ``Phase.DEAL`` before every deal (rule ``deal = hidden``);
  the side hands it a deck only once the field, its own hand and every declared
  hand are open, and picks stand-in hands that declare nothing (no hand yaku, no
  lucky hand), so the deal-time rules act on declarations only;
* before a play is applied, the played card is put into the player's hand and
  the drawn card on top of the stock (:meth:`MatchState.rehand`); where
  ``forced_capture`` is on, stand-ins for the rest of that hand match nothing
  on the field, so a play is refused only if *no* hand could make it legal.

When a deal ends (a redeal, or the round's end), both sides publish their deck
secrets (the audit).  Each checks the other's (:mod:`.deck`), then replays the
deal through the engine with the real deck: every play must be legal with the
hands really held (forced capture), every undeclared hand must have had
nothing to declare, and the replay must end in the same public state.

Moves, in order (``protocol/hidden-deal.md`` has the wire form):

* per deal: ``deck1`` (host), ``deck2`` (joiner), ``deck3`` (host, with its keys
  for the field and the joiner's hand), ``keys`` (joiner: the field and the
  host's hand); with ``hand_swap``, the non-dealer's ``act`` swap/keep comes
  first and each hand's keys follow in ``hand`` moves; then ``declare`` (host,
  then joiner: empty, or the keys of the declarer's whole hand);
* per decision: ``act`` by the player to act (a play carries the key of the
  played card and the player's key for the card it draws); after a play,
  ``draw`` by the other player (its key for the drawn card);
* per deal's end: ``audit`` (host, then joiner).

The side that sends a move processes it exactly like a received one, so both
sides walk the same path.  ``outbox`` collects the moves to send.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from typing import Final

from p2pkoikoi.engine import Action, Event, IllegalActionError, InputError, MatchState, RuleSet
from p2pkoikoi.engine.actions import ActionKind
from p2pkoikoi.engine.match import Phase
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session.errors import LocalProtocolError, RemoteProtocolError
from p2pkoikoi.session.mental.claims import check_declared, check_undeclared, must_declare
from p2pkoikoi.session.mental.deck import HOST, JOINER, SEAT_NAME, DeckSecrets
from p2pkoikoi.session.mental.errors import (
    BrokenAuditError,
    HiddenDealError,
    IllegalHiddenPlayError,
)
from p2pkoikoi.session.mental.group import SCALAR_LEN
from p2pkoikoi.session.mental.standins import (
    TAG_DECKS,
    TAG_STATE,
    hidden_state_hash,
    known_deck,
    public_encoding,
    rehand_for_play,
)
from p2pkoikoi.session.mental.table import FIELD_POSITIONS, STOCK_START, HiddenTable

TAG_DEAL_SECRET: Final = b"p2pkoikoi/v2/hidden/deal-secret\x00"
SecretSource = Callable[[int, int], DeckSecrets]  # (round, attempt) -> this side's secrets
KINDS: Final = ("deck1", "deck2", "deck3", "keys", "hand", "declare", "act", "draw", "audit")


@dataclasses.dataclass(frozen=True, slots=True)
class CardMove:
    """One move of the hidden deal; which fields it uses depends on ``kind``."""

    kind: str
    seat: int
    action: str = ""  # act: the canonical action text
    pos: int = -1  # act (a play): the deck position of the played card
    deck: bytes = b""  # deck1/2/3: 48 points; audit: the sender's deck secrets
    keys: bytes = b""  # 32-byte keys, concatenated

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown card move {self.kind!r}")


@dataclasses.dataclass(frozen=True, slots=True)
class _DealEnd:
    """A finished deal as checking the peer's audit of it needs it: its table, the
    engine before it, the decisions made in it, and the public state it ended in.
    A live side may check the audit after its next move has gone out (:meth:`settle`),
    when the match already holds the next deal."""

    table: HiddenTable
    pre_deal: MatchState
    log: tuple[tuple[int, Action], ...]
    declared: tuple[tuple[int, bool], ...]
    resigned: int | None
    state: MatchState
    audit: bytes


def deal_secrets(seat: int, secret: bytes, round_no: int, attempt: int) -> DeckSecrets:
    """One deal's secrets from the side's match secret (kept in its .resume file)."""
    seed = hashlib.sha256(
        TAG_DEAL_SECRET + secret + round_no.to_bytes(2, "big") + attempt.to_bytes(2, "big")
    ).digest()
    return DeckSecrets.derive(seat, seed)


def deal_context(state: MatchState) -> bytes:
    """What a deal's proofs are bound to: ``u16 round || u16 attempt || u8 dealer``
    (each proof's own hash adds its step, its input and its output deck)."""
    return state.round.to_bytes(2, "big") + state.attempt.to_bytes(2, "big") + bytes([state.dealer])


class HiddenMatch:
    """One side of a hidden-deal match (see the module docstring)."""

    def __init__(
        self,
        rules: RuleSet,
        match_seed: bytes,
        seat: int,
        secret: bytes | SecretSource,
        *,
        check_later: bool = False,
    ) -> None:
        """``secret``: this side's 32-byte match secret (each deal's secrets derive from
        it), or a function giving each deal's secrets (a verifier reads them from a record).

        ``check_later`` (a live joiner): the proof of the host's first masking step is
        checked after our answer is queued, by :meth:`settle` (or, at the latest, before
        the next move is taken in); a verifier and a replay check it on receipt."""
        if rules.deal is not DealMode.HIDDEN:
            raise LocalProtocolError("the hidden match needs rules with deal = hidden")
        if isinstance(secret, bytes):
            if len(secret) != 32:
                raise LocalProtocolError("the hidden deal needs a 32-byte secret")
            master = bytes(secret)
            self._secrets: SecretSource = lambda r, a: deal_secrets(seat, master, r, a)
        else:
            self._secrets = secret
        self.rules = rules
        self.seat = seat
        self.peer = 1 - seat
        self._check_later = check_later
        self.state, events = MatchState.start(rules, match_seed)
        self.events: list[Event] = list(events)
        #: moves to send, each with the hidden state hash *before* it (which the peer checks)
        self.outbox: list[tuple[CardMove, bytes]] = []
        self.audits = 0  # deals audited so far
        self.applied = 0  # decisions applied to the engine so far
        self.last_applied: tuple[int, Action] | None = None
        self._decks = b""
        self._resigned: int | None = None  # who resigned (the deal in play is audited)
        self._expect: list[tuple[str, int]] = []
        #: the peer's audit of the last deal, still to check (:meth:`settle`)
        self._unchecked_audit: _DealEnd | None = None
        #: host: make the next deal's first step once our audit has gone out
        self._prepare_next = False
        self._prepared: tuple[HiddenTable, bytes] | None = None  # the next deal's table, deck1
        #: the hidden state hash before any move (what a resume compares at seq 0)
        self.initial_hash = hidden_state_hash(self.state, hashlib.sha256(TAG_DECKS).digest())
        self._begin_deal()

    # ------------------------------------------------------------------ reading
    @property
    def is_over(self) -> bool:
        return self.state.is_over and not self._expect

    @property
    def expecting(self) -> tuple[str, int] | None:
        """The next move due and who sends it (None: the match is over)."""
        return self._expect[0] if self._expect else None

    def my_turn(self) -> bool:
        """Whether the local player must choose an action now (call :meth:`act`)."""
        return self.expecting == ("act", self.seat)

    @property
    def deal_id(self) -> tuple[int, int]:
        """(round, attempt) of the deal a check is about: the deal on the table, or the
        last one while the peer's audit of it waits to be checked (at its audit the engine
        is past it)."""
        pre = self._unchecked_audit.pre_deal if self._unchecked_audit else self._pre_deal
        return pre.round, pre.attempt

    @property
    def deal_table(self) -> HiddenTable:
        """The table of the deal :attr:`deal_id` names (whose secrets are evidence)."""
        return self._unchecked_audit.table if self._unchecked_audit else self.table

    def state_hash(self) -> bytes:
        """The hidden state hash now: the public state and the masked decks of this deal."""
        return hidden_state_hash(self.state, self._decks)

    def legal_actions(self) -> tuple[Action, ...]:
        return self.state.legal_actions() if self.my_turn() else ()

    # ------------------------------------------------------------------ input
    def act(self, action: Action) -> None:
        """The local player's decision."""
        self.settle()
        if not self.my_turn():
            raise LocalProtocolError("it is not your turn")
        if action not in self.state.legal_actions():
            raise LocalProtocolError(f"illegal action {action}")
        if action.kind is ActionKind.PLAY:
            assert action.card is not None
            pos, key = self.table.reveal(action.card.id)
            share = self.table.draw_share()
            self._send(CardMove("act", self.seat, str(action), pos, keys=key + share))
        else:
            self._send(CardMove("act", self.seat, str(action)))

    @property
    def unsettled(self) -> bool:
        """Work left for after our last move went out (:meth:`settle`): a proof or an audit
        received and still to check, or (host) the next deal's first step to make."""
        return self.table.unsettled or self._unchecked_audit is not None or self._prepare_next

    def settle(self) -> None:
        """Do what was left for later; raises a :class:`HiddenDealError` naming a cheat.

        A live side leaves three things for the moment its answer has gone out, so
        that they run while the other side works (hidden-deal.md sections 3 and 5): checking
        the proof of the host's first step (joiner), checking the peer's audit of the
        deal that ended, and (host) making the next deal's first step, which reveals
        nothing and waits only for the joiner's audit.  Every path that takes in a
        move or sends a key settles first; a failed check stays failed."""
        end = self._unchecked_audit
        if end is not None:
            self._check_audit(end)
            self._unchecked_audit = None
        if self._prepare_next:
            self._prepare_next = False
            table = self._new_table(self.state)
            self._prepared = (table, table.step1())
        self.table.settle()

    def receive(self, move: CardMove) -> None:
        """A move from the peer; raises a :class:`HiddenDealError` naming a cheat."""
        self.settle()
        due = self.expecting
        if move.seat != self.peer:
            raise RemoteProtocolError("a card move claims the wrong sender")
        if due is None or due != (move.kind, move.seat):
            if due == ("draw", self.peer):
                raise self.table.withheld("its key for the drawn card")
            if due is not None and due[0] == "audit" and due[1] == self.peer:
                raise BrokenAuditError(
                    f"{SEAT_NAME[self.peer]} did not publish its audit", self.peer
                )
            raise RemoteProtocolError(
                f"unexpected card move {move.kind} from {SEAT_NAME[move.seat]}"
                + (f" (expected {due[0]} from {SEAT_NAME[due[1]]})" if due else "")
            )
        self._process(move)

    # ------------------------------------------------------------------ the flow
    def resign(self, seat: int) -> tuple[Event, ...]:
        """``seat`` gives up (on its turn): the match ends, and the deal in play is audited
        as any other (host, then joiner), so that the record verifies complete."""
        self.state, events = self.state.resign(seat)
        # (not in self.events: the session reports them with the resignation itself, and
        # the audits that follow add none)
        self._resigned = seat
        if self.table.dealt:
            self._expect = [("audit", HOST), ("audit", JOINER)]
            if self.seat == HOST:
                self._send(CardMove("audit", HOST, deck=self.table.audit()))
        else:  # pragma: no cover - a resignation comes on a turn, after the masking
            self._expect = []
        return events

    def _send(self, move: CardMove) -> None:
        self.outbox.append((move, self.state_hash()))
        self._process(move)

    def _process(self, move: CardMove) -> None:
        self._expect.pop(0)
        if move.kind in ("deck1", "deck2", "deck3"):
            self._decks = hashlib.sha256(self._decks + move.deck).digest()
        getattr(self, "_on_" + move.kind)(move, move.seat == self.seat)

    def _begin_deal(self) -> None:
        s = self.state
        assert s.phase is Phase.DEAL
        self._pre_deal = s
        self._log: list[tuple[int, Action]] = []
        self._declared: dict[int, bool] = {}
        self._pending_play: tuple[int, Action, int] | None = None  # seat, action, drawn card
        self._resigned = None
        self._decks = hashlib.sha256(TAG_DECKS).digest()  # chain over this deal's decks
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[0].context == deal_context(s):
            self.table, deck1 = prepared
        else:
            self.table = self._new_table(s)
            deck1 = self.table.step1() if self.seat == HOST else b""
        self._expect = [("deck1", HOST), ("deck2", JOINER), ("deck3", HOST), ("keys", JOINER)]
        if self.seat == HOST:
            self._send(CardMove("deck1", HOST, deck=deck1))

    def _new_table(self, s: MatchState) -> HiddenTable:
        return HiddenTable(self.seat, s.dealer, self._secrets(s.round, s.attempt), deal_context(s))

    def _deal_key_positions(self, sender: int) -> tuple[int, ...]:
        """Positions ``sender`` opens after the masking: the field, and (unless a hand
        swap is still to be decided) the other player's hand."""
        if self.rules.hand_swap:
            return FIELD_POSITIONS
        return FIELD_POSITIONS + self.table.hand_positions(1 - sender)

    def _on_deck1(self, move: CardMove, mine: bool) -> None:
        if not mine:
            deck2 = self.table.on_step1(move.deck, later=self._check_later)
            self._send(CardMove("deck2", JOINER, deck=deck2))

    def _on_deck2(self, move: CardMove, mine: bool) -> None:
        if not mine:
            d3 = self.table.on_step2(move.deck)
            keys = self.table.keys_for(self._deal_key_positions(HOST))
            self._send(CardMove("deck3", HOST, deck=d3, keys=keys))

    def _on_deck3(self, move: CardMove, mine: bool) -> None:
        if not mine:
            self.table.on_step3(move.deck)
            self.table.on_keys(self._deal_key_positions(HOST), move.keys)
            keys = self.table.keys_for(self._deal_key_positions(JOINER))
            self._send(CardMove("keys", JOINER, keys=keys))

    def _on_keys(self, move: CardMove, mine: bool) -> None:
        if not mine:
            self.table.on_keys(self._deal_key_positions(JOINER), move.keys)
        if self.rules.hand_swap:
            # the swap is decided before anyone looks: deal stand-ins for both hands
            self._engine_deal()
        else:
            self._expect_declarations()

    def _expect_declarations(self) -> None:
        self._expect = [("declare", HOST), ("declare", JOINER)]
        if self.seat == HOST:
            self._declare()

    def _declare(self) -> None:
        own = self.table.hand_positions(self.seat)
        hand = 0
        for p in own:
            hand |= 1 << self.table.cards[p]
        keys = self.table.keys_for(own) if must_declare(hand, self.rules) else b""
        self._send(CardMove("declare", self.seat, keys=keys))

    def _on_declare(self, move: CardMove, mine: bool) -> None:
        declared = bool(move.keys)
        self._declared[move.seat] = declared
        if declared and not mine:
            own = self.table.hand_positions(move.seat)
            self.table.on_keys(own, move.keys)
            hand = 0
            for p in own:
                hand |= 1 << self.table.cards[p]
            check_declared(move.seat, hand, self.rules)
        if move.seat == HOST:
            if self.seat == JOINER:
                self._declare()
            return
        # both declared
        if self.rules.hand_swap:
            decision = self._swap_decision
            self._rehand_for_deal()
            self._apply(self.state.to_act, decision)
        else:
            self._engine_deal()

    def _on_hand(self, move: CardMove, mine: bool) -> None:
        positions = self.table.hand_positions(self.peer if mine else self.seat)
        if not mine:
            self.table.on_keys(positions, move.keys)
        if move.seat == HOST:
            if self.seat == JOINER:
                own_for_peer = self.table.hand_positions(HOST)
                self._send(CardMove("hand", JOINER, keys=self.table.keys_for(own_for_peer)))
            return
        self._expect_declarations()

    # ------------------------------------------------------------------ the engine's deck
    def _known_deck(self) -> tuple[int, ...]:
        return known_deck(self.table, self.seat)

    def _engine_deal(self) -> None:
        self.state, events = self.state.deal(self._known_deck())
        self.events.extend(events)
        self._after_engine()

    def _rehand_for_deal(self) -> None:
        """After the hand-swap decision and the declarations: the engine's hands as known.

        The engine still holds the pre-swap hands; the table's owners are already
        swapped, so a swap puts each table hand on the other seat here.
        """
        deck = self._known_deck()
        t = self.table
        hands = [0, 0]
        for seat in (HOST, JOINER):
            for p in t.hand_positions(seat):
                hands[seat] |= 1 << deck[p]
        if self._swap_decision.kind is ActionKind.SWAP:
            hands.reverse()
        self.state = self.state.rehand((hands[0], hands[1]), tuple(deck[STOCK_START:]))

    def _rehand_for_play(self, seat: int, card: int, drawn: int) -> None:
        """Before applying a play: ``card`` in ``seat``'s hand, ``drawn`` on top of the stock."""
        self.state = rehand_for_play(self.state, self.peer, seat, card, drawn)

    # ------------------------------------------------------------------ decisions
    def _on_act(self, move: CardMove, mine: bool) -> None:
        try:
            action = Action.parse(move.action)
        except InputError as exc:
            raise RemoteProtocolError(f"unreadable action {move.action!r}: {exc}") from None
        if str(action) != move.action:
            raise RemoteProtocolError(f"action {move.action!r} is not in canonical form")
        if self.state.phase is Phase.HAND_SWAP:
            if action.kind not in (ActionKind.SWAP, ActionKind.KEEP):
                raise IllegalHiddenPlayError(f"illegal action {action}: expected swap or keep")
            self._swap_decision = action
            if action.kind is ActionKind.SWAP:
                self.table.swap_hands()
            self._expect = [("hand", HOST), ("hand", JOINER)]
            if self.seat == HOST:
                peer_hand = self.table.hand_positions(JOINER)
                self._send(CardMove("hand", HOST, keys=self.table.keys_for(peer_hand)))
            return
        if action.kind is not ActionKind.PLAY:
            self._apply(move.seat, action)
            return
        assert action.card is not None
        card = action.card.id
        if not mine:
            if len(move.keys) != 2 * SCALAR_LEN:
                raise self.table.withheld("the keys of its play")
            self.table.on_reveal(card, move.pos, move.keys[:SCALAR_LEN])
            drawn = self.table.on_draw_share(move.keys[SCALAR_LEN:])
            self._pending_play = (move.seat, action, drawn)
            self._expect = [("draw", self.seat)]
            self._send(CardMove("draw", self.seat, keys=self.table.draw_share()))
        else:
            self._pending_play = (move.seat, action, -1)
            self._expect = [("draw", self.peer)]

    def _on_draw(self, move: CardMove, mine: bool) -> None:
        assert self._pending_play is not None
        seat, action, drawn = self._pending_play
        if not mine:
            drawn = self.table.on_draw_share(move.keys)
        self._pending_play = None
        self.table.drawn()
        assert action.card is not None
        self._rehand_for_play(seat, action.card.id, drawn)
        self._apply(seat, action)

    def _apply(self, seat: int | None, action: Action) -> None:
        assert seat is not None
        try:
            self.state, events = self.state.apply(action)
        except IllegalActionError as exc:
            if seat == self.seat:
                raise LocalProtocolError(str(exc)) from None
            raise IllegalHiddenPlayError(f"{SEAT_NAME[seat]}: {exc}", seat) from None
        self.events.extend(events)
        self._log.append((seat, action))
        self.applied += 1
        self.last_applied = (seat, action)
        self._after_engine()

    def _after_engine(self) -> None:
        s = self.state
        if s.phase in (Phase.DEAL, Phase.OVER):
            self._expect = [("audit", HOST), ("audit", JOINER)]
            if self.seat == HOST:
                self._send(CardMove("audit", HOST, deck=self.table.audit()))
                self._prepare_next = self._check_later and s.phase is Phase.DEAL
            return
        assert s.to_act is not None
        self._expect = [("act", s.to_act)]

    # ------------------------------------------------------------------ the audit
    def _on_audit(self, move: CardMove, mine: bool) -> None:
        if not mine:
            end = _DealEnd(
                self.table,
                self._pre_deal,
                tuple(self._log),
                tuple(self._declared.items()),
                self._resigned,
                self.state,
                move.deck,
            )
            if self._check_later and self.state.phase is Phase.DEAL:
                # checked once our next move (our audit, or the next deal's first step)
                # has gone out; before the match's end it is checked at once, so no
                # final signature leaves over an unchecked audit
                self._unchecked_audit = end
            else:
                self._check_audit(end)
        if move.seat == HOST and self.seat == JOINER:
            self._send(CardMove("audit", JOINER, deck=self.table.audit()))
            return
        if move.seat == JOINER:
            self.audits += 1
            if self.state.phase is Phase.DEAL:
                self._begin_deal()
            else:
                self._expect = []

    def _check_audit(self, end: _DealEnd) -> None:
        """Check the peer's audit of a finished deal, then play the deal again with the
        audited deck: every hidden rule checked now."""
        sigma = end.table.on_audit(end.audit)
        state, _ = end.pre_deal.deal(sigma)
        hands = [0, 0]
        dealer = end.pre_deal.dealer
        for p in range(STOCK_START):
            r = p % 6
            if r < 2:
                hands[1 - dealer] |= 1 << sigma[p]
            elif r >= 4:
                hands[dealer] |= 1 << sigma[p]
        log = list(end.log)
        declared = dict(end.declared)
        if state.phase is Phase.HAND_SWAP and (log or declared):
            seat, decision = log.pop(0)
            if decision.kind is ActionKind.SWAP:
                hands.reverse()
            self._check_declarations(hands, declared)
            state, _ = state.apply(decision)
        elif declared:
            self._check_declarations(hands, declared)
        for seat, action in log:
            if action not in state.legal_actions():
                raise IllegalHiddenPlayError(
                    f"{SEAT_NAME[seat]}'s action {action} was illegal with the cards it held",
                    seat,
                )
            state, _ = state.apply(action)
        if end.resigned is not None:
            state, _ = state.resign(end.resigned)
        if public_encoding(state) != public_encoding(end.state):
            raise BrokenAuditError(
                "the deal played again with the audited cards ends differently", self.peer
            )

    def _check_declarations(self, hands: Iterable[int], declared: dict[int, bool]) -> None:
        for seat, hand in enumerate(hands):
            if not declared.get(seat, False):
                check_undeclared(seat, hand, self.rules)


__all__ = [
    "TAG_DECKS",
    "TAG_STATE",
    "CardMove",
    "HiddenDealError",
    "HiddenMatch",
    "hidden_state_hash",
    "public_encoding",
]
