"""The hidden deal's moves in a session: signed ``card`` messages (``protocol/hidden-deal.md``).

A :class:`~p2pkoikoi.session.session.Session` whose rules say ``deal = hidden``
drives a :class:`~p2pkoikoi.session.mental.play.HiddenMatch`: the functions here
sign and queue the moves it makes (:func:`pump`), check and record the peer's
(:func:`on_card`; a move is recorded *before* it is checked, so one that proves
a cheat stays in the record, with this side's own deal secrets as evidence),
report what the table did as session events (:func:`report`), and rebuild the
table from a record and this side's deal secret when resuming (:func:`rebuild`).
They are the session's own methods, kept in a module of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkoikoi.engine import Action, InputError
from p2pkoikoi.session import crypto, forfeits, wire
from p2pkoikoi.session.errors import (
    CheatingError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    ResumeError,
)
from p2pkoikoi.session.events import ActionReceived, HiddenProgress
from p2pkoikoi.session.mental.errors import HiddenDealError
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch
from p2pkoikoi.session.record import ActionRecord, Evidence, Record, resign_reason
from p2pkoikoi.session.states import Role, State

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def pump(s: Session) -> None:
    """Sign and queue the hidden deal's outgoing moves; report what the table did."""
    h = s._hidden
    assert h is not None
    while h.outbox:
        move, before = h.outbox.pop(0)
        seq = s._seq + 1
        fields = crypto.card_entry_fields(
            seq,
            s.our_seat,
            move.kind,
            move.action or None,
            move.pos if move.pos >= 0 else None,
            move.deck or None,
            move.keys or None,
            before,
        )
        t = crypto.absorb(s._transcript, "card", *fields)
        sig = crypto.sign(s._key, crypto.sig_message(t))
        s._queue(
            wire.CardMsg(
                seq=seq,
                kind=move.kind,
                hash=before,
                sig=sig,
                action=move.action or None,
                pos=move.pos if move.pos >= 0 else None,
                deck=move.deck or None,
                keys=move.keys or None,
            )
        )
        s._commit_card(
            t,
            ActionRecord(
                seq,
                s.our_seat,
                move.action,
                before,
                sig,
                move.kind,
                move.pos if move.pos >= 0 else None,
                move.deck,
                move.keys,
            ),
        )
    report(s)


def report(s: Session) -> None:
    """Events for what the hidden table did since the last report; the end of the match."""
    h = s._hidden
    assert h is not None
    s._match = h.state
    seen_events, seen_applied = s._hidden_seen
    new = tuple(h.events[seen_events:])
    s._hidden_seen = (len(h.events), h.applied)
    if new or h.applied != seen_applied:
        last = h.last_applied
        if h.applied == seen_applied + 1 and last is not None and last[0] != s.our_seat:
            s._events.append(ActionReceived(s._seq, last[1], new, last[0]))
        else:
            actor = last[0] if last is not None and h.applied != seen_applied else None
            # every engine event goes out once, here (also those of a decision of ours
            # applied at once: a caller that showed last_local_events too showed it twice)
            s.last_local_events = ()
            s._events.append(HiddenProgress(s._seq, actor, new))
    if h.is_over and s._result is None:
        s._finish()


def on_card(s: Session, msg: wire.CardMsg) -> None:
    """A ``card`` message: the peer's move, or (catching up after a resume) one of ours
    that our record lost and the peer re-sends (protocol/README.md section 12)."""
    if s._state is not State.PLAY or s._hidden is None:
        raise s._unexpected("card")
    h = s._hidden
    if s.role is Role.HOST and Role.JOINER not in s._start_sigs:
        # as for actions (protocol/README.md section 8): the joiner's start signature
        # binds it to the match before any move of its own counts
        raise RemoteProtocolError(f"the joiner sent card move {msg.seq} before its start signature")
    if msg.seq != s._seq + 1:
        raise RemoteProtocolError(
            f"wrong sequence number on card move: expected {s._seq + 1}, got {msg.seq}"
        )
    catching = s._catchup is not None and msg.seq <= s._catchup[0]
    if catching and h.outbox:  # our table made this move again; the peer has it signed
        seat, before = s.our_seat, h.outbox[0][1]
    elif catching and h.expecting == ("act", s.our_seat):  # a decision of ours, lost
        seat, before = s.our_seat, h.state_hash()
    else:
        seat, before = s.role.other.seat, h.state_hash()
    if msg.hash != before:
        raise RemoteProtocolError(
            f"state hash mismatch before card move {msg.seq} ({msg.kind}): the two "
            "programs disagree about the game (different versions, or tampering)"
        )
    fields = crypto.card_entry_fields(
        msg.seq, seat, msg.kind, msg.action, msg.pos, msg.deck, msg.keys, msg.hash
    )
    t = crypto.absorb(s._transcript, "card", *fields)
    key = s._pub if seat == s.our_seat else s.peer_key
    assert key is not None
    if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
        raise CheatingError(f"the signature on card move {msg.seq} is invalid (forged)")
    rec = ActionRecord(
        msg.seq,
        seat,
        msg.action or "",
        msg.hash,
        msg.sig,
        msg.kind,
        msg.pos,
        msg.deck or b"",
        msg.keys or b"",
    )
    move = CardMove(
        msg.kind,
        seat,
        msg.action or "",
        -1 if msg.pos is None else msg.pos,
        msg.deck or b"",
        msg.keys or b"",
    )
    if seat == s.our_seat:
        _take_back(s, h, move, t, rec)
        return
    # recorded before it is checked: a move that proves a cheat stays in the record
    s._commit_card(t, rec)
    try:
        h.receive(move)
    except HiddenDealError as exc:
        round_no, attempt = h.deal_id  # the deal the table is in (the engine may be past it)
        s._evidence = Evidence(s.our_seat, round_no, attempt, h.table.secrets.encode())
        if exc.seat == h.peer and s.forfeit is None:
            # the cheater forfeits: our signed claim, resting on the evidence beside it
            forfeits.record_forfeit(s, h.peer, f"cheated: {exc}"[:200])
        raise
    if s._catchup is None:
        pump(s)
    else:  # still catching up: the moves our table makes now, the peer re-sends to us
        report(s)


def _take_back(s: Session, h: HiddenMatch, move: CardMove, t: bytes, rec: ActionRecord) -> None:
    """One of our own moves, lost from our record, re-sent by the peer: our table must
    make exactly that move (signed by us, so it is ours)."""
    if move.kind == "act" and not h.outbox:
        try:
            h.act(Action.parse(move.action))
        except (ProtocolError, InputError) as exc:
            raise ResumeError(
                f"the other player re-sent a move of ours we cannot make: {exc}"
            ) from None
    if not h.outbox or h.outbox[0][0] != move:
        raise ResumeError(
            f"the other player re-sent card move {rec.seq} of ours, which our table does"
            " not make: the match cannot resume"
        )
    h.outbox.pop(0)
    s._commit_card(t, rec)
    if s._catchup is None:  # caught up: what our table made after it goes out now
        pump(s)
    else:
        report(s)


def rebuild(s: Session, r: Record) -> None:
    """Rebuild the hidden table from the record and this side's secret: our own moves
    are made again (they must come out identical), the peer's are received again."""
    assert r.rules is not None and r.match_seed is not None
    h = HiddenMatch(r.rules, r.match_seed, s.our_seat, s.hidden_secret)
    s._hidden = h
    s._match = h.state
    s._tx_at, s._hash_at = [s._transcript], [h.initial_hash]
    for a in r.actions:
        if a.kind == "":  # a resignation
            h.resign(a.seat)
            reason = resign_reason(a.action) or ""
            fields = crypto.resign_fields(a.seq, a.seat, a.state_hash, reason)
            t = crypto.absorb(s._transcript, "resign", *fields)
            s._commit_step(h.state, t, a)
            continue
        move = CardMove(a.kind, a.seat, a.action, -1 if a.pos is None else a.pos, a.deck, a.keys)
        try:
            if a.seat == s.our_seat:
                if a.kind == "act":
                    h.act(Action.parse(a.action))
                if not h.outbox or h.outbox[0][0] != move:
                    raise LocalProtocolError(
                        f"card move {a.seq} in the record is not what this side's deal"
                        " secret gives: a .resume file of another match?"
                    )
                h.outbox.pop(0)
            else:
                h.receive(move)
        except (ProtocolError, InputError) as exc:
            raise LocalProtocolError(f"the record cannot be replayed: {exc}") from None
        fields = crypto.card_entry_fields(
            a.seq,
            a.seat,
            a.kind,
            a.action or None,
            a.pos,
            a.deck or None,
            a.keys or None,
            a.state_hash,
        )
        s._commit_card(crypto.absorb(s._transcript, "card", *fields), a)
    s._hidden_seen = (len(h.events), h.applied)
