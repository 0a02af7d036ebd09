"""Verify a hidden-deal record: both sides replayed by the reference implementation.

Theory of operation
-------------------
A hidden-deal record holds every card move, signed by its sender, and for
every finished deal both sides' audits (their deck secrets).  ``verify`` runs
one :class:`~p2pkoikoi.session.mental.play.HiddenMatch` per seat, each given
that seat's secrets *from the audits* (deal by deal, in order), and walks the
recorded moves:

* every move's signature and the transcript chain, as for actions;
* the hidden state hash before the move equals the replay's;
* the *other* seat's instance receives the move and runs every check a live
  program runs (valid points, keys that open the named cards, declarations,
  forced capture, the audit and the replay of the deal);
* the *sender's* instance, which knows the sender's audited secrets, must
  produce exactly the recorded move (a decision is replayed with
  :meth:`HiddenMatch.act`): a move its own secrets do not give is a cheat.

The last deal of a record that stops early has no audits.  If the side that
caught a cheat put its own secrets for that deal in the record (``evidence``),
its instance goes on and re-runs the check that failed, which names the
cheater; a side without secrets stops being replayed ("blind") and its moves
are only checked for signatures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import Action, InputError, RuleSet
from p2pkoikoi.session.errors import ProtocolError
from p2pkoikoi.session.mental.deck import SEAT_NAME, DeckSecrets
from p2pkoikoi.session.mental.errors import HiddenDealError
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch
from p2pkoikoi.session.records.record import ActionRecord, Evidence, resign_reason

Add = Callable[[str, bool, str], bool]


@dataclasses.dataclass
class HiddenReplay:
    """What the replay ends with: the transcript, a live instance (if any), and counts."""

    transcript: bytes
    state: HiddenMatch | None
    audited: int
    blind: bool
    failed: bool


class _Source:
    """One seat's deck secrets, deal by deal: its audits in order, then its evidence."""

    def __init__(self, seat: int, audits: list[bytes], evidence: Evidence | None) -> None:
        self.seat = seat
        self.audits = audits
        self.evidence = evidence if evidence is not None and evidence.seat == seat else None
        self.calls = 0
        self.blind = False

    def __call__(self, round_no: int, attempt: int) -> DeckSecrets:
        k = self.calls
        self.calls += 1
        try:
            if k < len(self.audits):
                return DeckSecrets.decode(self.seat, self.audits[k])
            e = self.evidence
            if (
                e is not None
                and k == len(self.audits)
                and (e.round, e.attempt)
                == (
                    round_no,
                    attempt,
                )
            ):
                return DeckSecrets.decode(self.seat, e.secrets)
        except HiddenDealError:
            pass
        self.blind = True  # secrets unknown from here on: this seat is no longer replayed
        return DeckSecrets.derive(self.seat, bytes(32))


def replay_hidden(
    rules: RuleSet,
    seed: bytes,
    actions: tuple[ActionRecord, ...],
    evidence: Evidence | None,
    keys: tuple[bytes, bytes],
    t: bytes,
    add: Add,
) -> HiddenReplay:
    """Check every card move of a hidden-deal record (see the module docstring)."""
    audits: list[list[bytes]] = [[], []]
    for a in actions:
        if a.kind == "audit":
            audits[a.seat].append(a.deck)
    sources = [_Source(s, audits[s], evidence) for s in (0, 1)]
    sides = [HiddenMatch(rules, seed, s, sources[s]) for s in (0, 1)]
    live = [not src.blind for src in sources]
    out = HiddenReplay(t, None, 0, False, False)

    def fail(name: str, detail: str) -> HiddenReplay:
        add(name, False, detail)
        out.failed = True
        return out

    for n, a in enumerate(actions, start=1):
        s, o = a.seat, 1 - a.seat
        if a.seq != n:
            return fail(f"card move {n} turn", f"seq {a.seq}, expected {n}")
        ref = sides[o] if live[o] else sides[s] if live[s] else None
        if a.kind == "":
            reason = resign_reason(a.action)
            if reason is None:
                return fail(f"card move {n}", f"{a.action!r} is not a card move")
            if ref is not None and ref.expecting != ("act", s):
                return fail(f"card move {n} turn", f"seat {s} resigned out of turn")
            for i in (0, 1):
                if live[i]:
                    sides[i].resign(s)
            if ref is not None and ref.state_hash() != a.state_hash:
                return fail(f"card move {n} state hash", "resign: the replayed state differs")
            t = crypto.absorb(t, "resign", *crypto.resign_fields(a.seq, s, a.state_hash, reason))
            if not crypto.verify_sig(keys[s], a.sig, crypto.sig_message(t)):
                return fail(f"card move {n} signature", f"resign: signature by seat {s} fails")
            continue
        fields = crypto.card_entry_fields(
            a.seq, s, a.kind, a.action or None, a.pos, a.deck or None, a.keys or None, a.state_hash
        )
        t = crypto.absorb(t, "card", *fields)
        if not crypto.verify_sig(keys[s], a.sig, crypto.sig_message(t)):
            return fail(f"card move {n} signature", f"{a.kind}: signature by seat {s} fails")
        if ref is None:
            continue  # nobody's secrets: signatures only
        if live[o] or a.kind == "act":
            before = ref.state_hash()
        else:  # only the sender is replayed, and it made this move already: its hash then
            before = sides[s].outbox[0][1] if sides[s].outbox else b""
        if before != a.state_hash:
            return fail(f"card move {n} state hash", f"{a.kind}: the replayed state differs")
        move = CardMove(a.kind, s, a.action, -1 if a.pos is None else a.pos, a.deck, a.keys)
        who = f"{SEAT_NAME[s]} (seat {s})"
        if live[o]:
            try:
                sides[o].receive(move)
            except HiddenDealError as exc:
                cheat = exc.seat if exc.seat is not None else s
                return fail(f"card move {n} {a.kind}", f"seat {cheat} cheated: {exc}")
            except ProtocolError as exc:
                return fail(f"card move {n} {a.kind}", f"{who} broke the protocol: {exc}")
        if live[s]:
            me = sides[s]
            if a.kind == "act":
                try:
                    me.act(Action.parse(a.action))
                except (ProtocolError, InputError) as exc:
                    return fail(
                        f"card move {n} act", f"seat {s} cheated: {a.action} was illegal: {exc}"
                    )
            if not me.outbox or me.outbox[0][0] != move:
                return fail(
                    f"card move {n} {a.kind}",
                    f"seat {s} cheated: its move is not what its own audited secrets give",
                )
            me.outbox.pop(0)
        if a.kind == "audit" and s == 1:
            out.audited += 1
        for i in (0, 1):
            if live[i] and sources[i].blind:
                live[i] = False
    out.transcript = t
    out.blind = not (live[0] and live[1])
    out.state = sides[0] if live[0] else sides[1] if live[1] else None
    return out
