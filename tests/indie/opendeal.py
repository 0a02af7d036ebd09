"""Play with `deal = open` (README.md section 9): signed actions, the state hash after each."""

from __future__ import annotations

import random
from typing import Any

from .engine import OVER, IllegalAction
from .handshake import Session, verify_sig
from .wire import ProtocolError, entry


class OpenMatch:
    def __init__(self, s: Session, rng: random.Random, log: Any = None, resign_at: int = 0) -> None:
        from .engine import Engine

        self.s = s
        self.seat, self.other = s.seat, 1 - s.seat
        self.rng = rng
        self.eng = Engine.start(s.rules, s.fp, s.seed)
        self.seq = 0
        self.log = log or (lambda *a: None)
        self.resign_at = resign_at
        self.decisions = 0

    def _mine(self) -> None:
        e = self.eng
        self.decisions += 1
        self.seq += 1
        if self.decisions == self.resign_at:
            e.resign(self.seat)
            h = e.open_state_hash()
            t = self.s.tx.absorb(entry("resign", self.seq, self.seat, h))
            self.s.ch.send(
                {"type": "resign", "seq": self.seq, "sig": self.s.sign("p2pkoikoi/v2/sig", t)}
            )
            return
        hand = [c for c in range(48) if e.known[self.seat] >> c & 1]
        action = self.rng.choice(e.legal(hand))
        if action.startswith("play"):
            e.apply_play(self.seat, action, -1)
        else:
            e.apply_decision(self.seat, action)
        h = e.open_state_hash()
        t = self.s.tx.absorb(entry("action", self.seq, self.seat, action, h))
        self.s.ch.send(
            {
                "type": "action",
                "seq": self.seq,
                "action": action,
                "hash": h,
                "sig": self.s.sign("p2pkoikoi/v2/sig", t),
            }
        )
        self.log("played", action)

    def _theirs(self) -> None:
        e = self.eng
        m = self.s.ch.recv()
        if m["type"] not in ("action", "resign"):
            raise ProtocolError(f"expected an action, got {m['type']}")
        if m["seq"] != self.seq + 1:
            raise ProtocolError("wrong sequence number")
        self.seq += 1
        if m["type"] == "resign":
            reason = m.get("reason")
            e.resign(self.other)
            fields: list[bytes | str | int] = [self.seq, self.other, e.open_state_hash()]
            if reason:
                fields.append(str(reason))
            t = self.s.tx.absorb(entry("resign", *fields))
        else:
            action = m["action"]
            try:
                if action.startswith("play"):
                    e.apply_play(self.other, action, -1)
                else:
                    e.apply_decision(self.other, action)
            except (IllegalAction, KeyError, IndexError) as exc:
                raise ProtocolError(f"illegal action {action!r}") from exc
            h = e.open_state_hash()
            if h != m["hash"]:
                raise ProtocolError(f"state hash mismatch after {action}")
            t = self.s.tx.absorb(entry("action", self.seq, self.other, action, h))
        verify_sig(self.s.peer_key, m["sig"], b"p2pkoikoi/v2/sig\0" + t, f"action {m['seq']}")

    def run(self) -> dict[str, Any]:
        while self.eng.phase != OVER:
            if self.eng.to_act == self.seat:
                self._mine()
            else:
                self._theirs()
        final = self.eng.open_state_hash()
        t_f = self.s.tx.t
        winner = None if self.eng.winner == 255 else self.eng.winner
        self.s.ch.send(
            {
                "type": "over",
                "hash": final,
                "tx": t_f,
                "scores": list(self.eng.scores),
                "winner": winner,
                "sig": self.s.sign("p2pkoikoi/v2/final", t_f + final),
            }
        )
        m = self.s.ch.recv()
        if m["type"] != "over":
            raise ProtocolError(f"expected over, got {m['type']}")
        if (
            m["hash"] != final
            or m["tx"] != t_f
            or list(m["scores"]) != self.eng.scores
            or m["winner"] != winner
        ):
            raise ProtocolError("the final states differ")
        verify_sig(
            self.s.peer_key, m["sig"], b"p2pkoikoi/v2/final\0" + t_f + final, "final signature"
        )
        return {"scores": self.eng.scores, "winner": winner, "seq": self.seq}
