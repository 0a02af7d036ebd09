"""The koi-koi engine of one side, on the cards it knows (hidden-deal.md 3b, docs/rules.md).

Hands are a known card mask plus a count: a side never needs stand-ins,
because with the rules played here (no forced capture) nothing public depends
on a hidden card. Hand yaku come in by declaration.
"""

from __future__ import annotations

import copy
import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any

from . import yaku
from .deck import CARD, CODES, card_draw, coin, shuffled

HAND_SWAP, PLAY, DRAW_CHOICE, KOIKOI, OVER, DEAL = 0, 1, 2, 3, 4, 5
NONE = 255


class IllegalAction(Exception):
    pass


def mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(m: int) -> list[int]:
    return [c for c in range(48) if m >> c & 1]


@dataclass
class Engine:
    rules: dict[str, Any]
    fp: bytes
    seed: bytes
    round: int = 1
    attempt: int = 0
    dealer: int = 0
    phase: int = DEAL
    to_act: int = NONE
    scores: list[int] = field(default_factory=lambda: [0, 0])
    known: list[int] = field(default_factory=lambda: [0, 0])  # known cards in each hand
    count: list[int] = field(default_factory=lambda: [0, 0])  # hand sizes
    field_: int = 0
    piles: list[int] = field(default_factory=lambda: [0, 0])
    calls: list[int] = field(default_factory=lambda: [0, 0])
    last_total: list[int] = field(default_factory=lambda: [0, 0])
    pending: int = NONE
    winner: int = NONE
    rounds_finished: int = 0
    stock: int = 0
    any_call: bool = False
    swap_decision: str = ""
    stock_cards: list[int] = field(default_factory=list)  # the open deal only: the stock, top first

    @classmethod
    def start(cls, rules: dict[str, Any], fp: bytes, seed: bytes) -> Engine:
        e = cls(rules, fp, seed)
        if rules["scoring"] == "pool":
            e.scores = [rules["pool_stake"], rules["pool_stake"]]
        if rules["first_dealer"] == "coin":
            e.dealer = coin(seed)
        else:
            e.dealer = card_draw(seed, 0, rules["card_draw_tie"])
        if e.is_open:
            e._deal_open()
        return e

    @property
    def is_open(self) -> bool:
        return bool(self.rules["deal"] == "open")

    def _deal_open(self) -> None:
        """The open deal: the deck from the seed (deal.md), every card known."""
        deck = shuffled(b"p2pkoikoi/deck/v1", self.seed, self.round, self.attempt)
        hands: dict[int, list[int]] = {0: [], 1: []}
        field_cards: list[int] = []
        for j in range(24):
            k = j % 6
            (
                hands[self.nondealer] if k < 2 else field_cards if k < 4 else hands[self.dealer]
            ).append(deck[j])
        self.stock_cards = deck[24:]
        self.deal_known([hands[0], hands[1]], [8, 8], field_cards)
        if self.phase == PLAY:
            self.after_declarations([hands[0], hands[1]])

    def open_state_hash(self) -> bytes:
        enc = (
            self.fp
            + struct.pack(
                ">HHBBBiiQQQQQBBHHBBBB",
                self.round,
                self.attempt,
                self.dealer,
                self.phase,
                self.to_act,
                self.scores[0],
                self.scores[1],
                self.known[0],
                self.known[1],
                self.field_,
                self.piles[0],
                self.piles[1],
                self.calls[0],
                self.calls[1],
                self.last_total[0],
                self.last_total[1],
                self.pending,
                self.winner,
                self.rounds_finished,
                len(self.stock_cards),
            )
            + bytes(self.stock_cards)
        )
        return hashlib.sha256(b"p2pkoikoi/state/v1\0" + enc).digest()

    def copy(self) -> Engine:
        return copy.deepcopy(self)

    # -- the hash ------------------------------------------------------
    def public(self) -> bytes:
        return self.fp + struct.pack(
            ">HHBBBiiBBQQQBBHHBBBB",
            self.round,
            self.attempt,
            self.dealer,
            self.phase,
            self.to_act,
            self.scores[0],
            self.scores[1],
            self.count[0],
            self.count[1],
            self.field_,
            self.piles[0],
            self.piles[1],
            self.calls[0],
            self.calls[1],
            self.last_total[0],
            self.last_total[1],
            self.pending,
            self.winner,
            self.rounds_finished,
            self.stock,
        )

    def hidden_hash(self, chain: bytes) -> bytes:
        return hashlib.sha256(b"p2pkoikoi/v2/hidden/state\0" + self.public() + chain).digest()

    # -- dealing ---------------------------------------------------------
    @property
    def nondealer(self) -> int:
        return 1 - self.dealer

    def deal_known(self, hands: list[list[int]], counts: list[int], field_cards: list[int]) -> None:
        """Cards laid out (phase DEAL -> the deal-time rules)."""
        self.known = [mask(hands[0]), mask(hands[1])]
        self.count = list(counts)
        self.field_ = mask(field_cards)
        self.stock = 24
        self.piles = [0, 0]
        self.calls = [0, 0]
        self.last_total = [0, 0]
        self.pending = NONE
        self.any_call = False
        r = self.rules
        if not r["hand_yaku_before_field_redeal"] and self._field_redeal():
            return
        if r["hand_swap"]:
            self.phase, self.to_act = HAND_SWAP, self.nondealer
            return
        self.phase, self.to_act = PLAY, self.dealer  # until the declarations

    def _redeal(self) -> None:
        self.attempt += 1
        self._empty()

    def _empty(self) -> None:
        self.phase, self.to_act = DEAL, NONE
        self.known, self.count = [0, 0], [0, 0]
        self.field_, self.piles, self.stock = 0, [0, 0], 0
        self.calls, self.last_total, self.pending = [0, 0], [0, 0], NONE
        self.any_call = False
        self.stock_cards = []
        if self.is_open:
            self._deal_open()

    def _field_redeal(self) -> bool:
        f = cards_of(self.field_)
        r = self.rules
        if (r["redeal_field_four_of_month"] and yaku.four_of_month(f)) or (
            r["redeal_field_four_pairs"] and yaku.four_pairs(f)
        ):
            self._redeal()
            return True
        return False

    def after_declarations(self, declared: list[list[int] | None]) -> None:
        """The rest of the deal-time rules (3b steps 3-6) once both hands are as known."""
        r = self.rules
        # the caller has set the hands as known after any swap
        lucky = [
            d is not None
            and (
                (r["redeal_hand_four_of_month"] and yaku.four_of_month(d))
                or (r["redeal_hand_four_pairs"] and yaku.four_pairs(d))
            )
            for d in declared
        ]
        if any(lucky):
            self._redeal()
            return
        pts = [yaku.hand_yaku(r, d) if d is not None else 0 for d in declared]
        if any(pts):
            holders = [s for s in (0, 1) if pts[s]]
            if len(holders) == 2:
                mode = r["both_hand_yaku"]
                if mode == "redeal":
                    self._redeal()
                    return
                if mode == "draw":
                    self._end_round(None, [0, 0], drawn=True)
                    return
                if mode == "both_score":
                    self._end_round(None, pts, both=True)
                    return
                holders = [self.dealer]
            w = holders[0]
            gained = [0, 0]
            gained[w] = pts[w]
            self._end_round(w, gained)
            return
        if r["hand_yaku_before_field_redeal"] and self._field_redeal():
            return
        self.phase, self.to_act = PLAY, self.dealer

    def resign(self, seat: int) -> None:
        """A guess (GAPS.md): the match ends, the other seat wins, nothing else moves."""
        self.phase, self.to_act = OVER, NONE
        self.winner = 1 - seat

    # -- play --------------------------------------------------------------
    def legal_plays(self, hand: list[int]) -> list[str]:
        out = []
        for c in sorted(hand):
            matches = [f for f in cards_of(self.field_) if f // 4 == c // 4]
            if len(matches) == 2:
                out += [f"play {CODES[c]} {CODES[t]}" for t in matches]
            else:
                out.append(f"play {CODES[c]}")
        return out

    def legal(self, hand: list[int]) -> list[str]:
        if self.phase == HAND_SWAP:
            return ["swap", "keep"]
        if self.phase == PLAY:
            return self.legal_plays(hand)
        if self.phase == DRAW_CHOICE:
            return [
                f"take {CODES[f]}"
                for f in cards_of(self.field_)
                if f // 4 == self.pending // 4 and f != self.pending
            ]
        if self.phase == KOIKOI:
            return ["koikoi", "stop"]
        return []

    def _capture(self, seat: int, c: int, target: int | None) -> bool:
        """Place c; return False when two field cards match and none was named."""
        matches = [f for f in cards_of(self.field_) if f // 4 == c // 4]
        if len(matches) == 0:
            self.field_ |= 1 << c
        elif len(matches) == 2:
            if target is None:
                return False
            if target not in matches:
                raise IllegalAction("not a matching card")
            self.field_ &= ~(1 << target)
            self.piles[seat] |= (1 << c) | (1 << target)
        else:
            for f in matches:
                self.field_ &= ~(1 << f)
                self.piles[seat] |= 1 << f
            self.piles[seat] |= 1 << c
        return True

    def apply_play(self, seat: int, text: str, drawn: int) -> None:
        """A play and its draw (both cards known now; the open deal draws its own)."""
        if self.is_open:
            drawn = self.stock_cards[0]
        if self.phase != PLAY or seat != self.to_act:
            raise IllegalAction("out of turn")
        words = text.split()
        if words[0] != "play" or len(words) not in (2, 3):
            raise IllegalAction(text)
        c = CARD[words[1]]
        t = CARD[words[2]] if len(words) == 3 else None
        matches = [f for f in cards_of(self.field_) if f // 4 == c // 4]
        if (len(matches) == 2) != (t is not None):
            raise IllegalAction(text)
        if self.is_open and not self.known[seat] >> c & 1:
            raise IllegalAction(f"{text}: not in the hand")
        if self.known[seat] >> c & 1:
            self.known[seat] &= ~(1 << c)
        self.count[seat] -= 1
        self._capture(seat, c, t)
        self.stock -= 1
        if self.is_open:
            self.stock_cards.pop(0)
        dm = [f for f in cards_of(self.field_) if f // 4 == drawn // 4]
        if len(dm) == 2:
            self.field_ |= 1 << drawn
            self.pending = drawn
            self.phase = DRAW_CHOICE
            return
        self._capture(seat, drawn, None)
        self._after_turn(seat)

    def apply_decision(self, seat: int, text: str) -> None:
        if seat != self.to_act:
            raise IllegalAction("out of turn")
        if self.phase == HAND_SWAP:
            if text not in ("swap", "keep"):
                raise IllegalAction(text)
            self.swap_decision = text
            if self.is_open:
                if text == "swap":
                    self.known = [self.known[1], self.known[0]]
                self.after_declarations([cards_of(self.known[0]), cards_of(self.known[1])])
            return
        if self.phase == DRAW_CHOICE:
            w = text.split()
            if len(w) != 2 or w[0] != "take":
                raise IllegalAction(text)
            t = CARD[w[1]]
            if t == self.pending or not (self.field_ >> t & 1) or t // 4 != self.pending // 4:
                raise IllegalAction(text)
            self.field_ &= ~((1 << t) | (1 << self.pending))
            self.piles[seat] |= (1 << t) | (1 << self.pending)
            self.pending = NONE
            self._after_turn(seat)
            return
        if self.phase == KOIKOI:
            if text == "koikoi":
                self.calls[seat] += 1
                self.any_call = True
                self.last_total[seat] = yaku.total(self.rules, self.piles[seat], True)
                self._pass_turn(seat)
                return
            if text == "stop":
                self._stop(seat)
                return
        raise IllegalAction(text)

    def _after_turn(self, seat: int) -> None:
        r = self.rules
        tot = yaku.total(r, self.piles[seat], self.calls[seat] > 0)
        if tot > self.last_total[seat]:
            can_call = True
            if r["after_koikoi"] == "next_yaku_ends" and self.any_call:
                can_call = False
            if r["koikoi_limit"] == "once_per_round" and self.any_call:
                can_call = False
            when = r["koikoi_when"]
            if when == "not_last_turn" and self.count[0] == 0 and self.count[1] == 0:
                can_call = False
            if when == "not_hand_empty" and self.count[seat] == 0:
                can_call = False
            if can_call:
                self.phase, self.to_act = KOIKOI, seat
                return
            self._stop(seat)
            return
        self._pass_turn(seat)

    def _pass_turn(self, seat: int) -> None:
        if self.count[0] == 0 and self.count[1] == 0:
            if self.rules["drawn_round"] == "oya_ken":
                gained = [0, 0]
                gained[self.dealer] = self.rules["oya_ken_points"]
                self._end_round(self.dealer, gained)
                return
            self._end_round(None, [0, 0], drawn=True)
            return
        self.phase, self.to_act = PLAY, 1 - seat

    def _stop(self, seat: int) -> None:
        r = self.rules
        base = yaku.total(r, self.piles[seat], self.calls[seat] > 0)
        bonus, factor, own = 0, 1, self.calls[seat]
        if r["koikoi_bonus"] == "self_plus_one":
            if 1 <= own <= 3:
                bonus = own
            elif own >= 4:
                factor = own - 2
        pts = (base + bonus) * factor
        if r["double_at"] and base >= r["double_at"]:
            pts *= 2
        other = 1 - seat
        mult = r["koikoi_multiplier"]
        if mult == "opponent_double" and self.calls[other] > 0:
            pts *= 2
        elif mult == "all_calls_plus_one":
            pts *= 1 + self.calls[0] + self.calls[1]
        gained = [0, 0]
        gained[seat] = pts
        self._end_round(seat, gained)

    def _end_round(
        self, w: int | None, gained: list[int], drawn: bool = False, both: bool = False
    ) -> None:
        r = self.rules
        if r["scoring"] == "pool":
            for s in (0, 1):
                if gained[s]:
                    pay = min(gained[s], self.scores[1 - s]) if r["pool_payment_cap"] else gained[s]
                    self.scores[s] += pay
                    self.scores[1 - s] -= pay
        else:
            self.scores = [self.scores[0] + gained[0], self.scores[1] + gained[1]]
        self.rounds_finished += 1
        if both:
            next_dealer = card_draw(self.seed, self.round + 1, r["card_draw_tie"])
        elif w is not None:
            next_dealer = w
        elif drawn and r["drawn_round"] == "dealer_passes":
            next_dealer = 1 - self.dealer
        else:
            next_dealer = self.dealer
        knocked = r["scoring"] == "pool" and r["knockout"] and min(self.scores) <= 0
        if self.rounds_finished >= r["rounds"] or knocked:
            self.phase, self.to_act = OVER, NONE
            if self.scores[0] != self.scores[1]:
                self.winner = 0 if self.scores[0] > self.scores[1] else 1
            return
        self.round += 1
        self.attempt = 0
        self.dealer = next_dealer
        self._empty()
