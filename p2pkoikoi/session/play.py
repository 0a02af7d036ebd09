"""Play: actions, resignations and the signed end of a match (protocol/README.md section 9).

Theory of operation
-------------------
The player to act sends ``action`` (:func:`send_action`) or ``resign``
(:func:`send_resign`), each with its sequence number, the state hash after it
and a signature over the transcript; the other side checks turn, sequence,
legality, hash and signature (:func:`check_turn`, :func:`on_action`,
:func:`on_resign`) before anything is emitted.  Every accepted step, ours or
the peer's, goes through :func:`commit_step`, the one place the state, the
transcript and the record advance together (and where a catch-up after a resume
ends); a finished match is signed by both (:func:`finish`, :func:`on_over`).
With the hidden deal, decisions are card moves
(:mod:`p2pkoikoi.session.hidden_session`), but a resignation and the end are
the same as here.  It is separate because it is the hot path of a match and the
part whose every check guards the record; the functions are the
:class:`~p2pkoikoi.session.session.Session`'s own methods (``s`` is the
session), kept in a module of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkoikoi.engine import Action, IllegalActionError, InputError, MatchState
from p2pkoikoi.session import crypto, wire
from p2pkoikoi.session.errors import (
    CheatingError,
    LocalProtocolError,
    RemoteProtocolError,
    ResumeError,
)
from p2pkoikoi.session.events import ActionReceived, MatchOver, PeerResigned
from p2pkoikoi.session.record import RESIGN_TEXTS, ActionRecord, ResultRecord
from p2pkoikoi.session.states import Role, State

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session

_CANONICAL: dict[str, Action] = {}


def parse_canonical(seq: int, text: str) -> Action:
    """The action a peer's text names; it must be in canonical form."""
    action = _CANONICAL.get(text)
    if action is not None:
        return action
    try:
        action = Action.parse(text)
    except InputError as exc:
        raise RemoteProtocolError(f"malformed action {seq} from peer: {exc}") from None
    if str(action) != text:
        raise RemoteProtocolError(f"action {seq} from peer is not in canonical form: {text!r}")
    _CANONICAL[text] = action
    return action


def my_turn(s: Session, what: str) -> MatchState:
    if s._state is not State.PLAY:
        raise LocalProtocolError(f"cannot {what}: the match is not in play")
    if s._catchup is not None:
        raise LocalProtocolError(
            f"cannot {what} yet: the other player is re-sending the actions we lack"
        )
    m = s._match
    assert m is not None
    if s._hidden is not None:
        if not s._hidden.my_turn():
            raise LocalProtocolError(f"cannot {what}: it is not your turn")
    elif m.to_act != s.our_seat:
        raise LocalProtocolError(f"cannot {what}: it is not your turn")
    return m


def send_action(s: Session, action: Action | str) -> None:
    m = my_turn(s, "act")
    if isinstance(action, str):
        try:
            action = Action.parse(action)
        except InputError as exc:
            raise LocalProtocolError(str(exc)) from None
    if s._hidden is not None:
        s.last_local_events = ()
        s._hidden.act(action)  # the table checks legality; a play waits for the draw key
        s._pump_hidden()  # (its events are reported as HiddenProgress, not last_local_events)
        return
    try:
        new, events = m.apply(action)
    except IllegalActionError as exc:
        raise LocalProtocolError(str(exc)) from None
    seq, text, h = s._seq + 1, str(action), new.state_hash()
    t = crypto.absorb_action(s._transcript, seq, s.our_seat, text, h)
    sig = crypto.sign(s._key, crypto.sig_message(t))
    s._queue(wire.ActionMsg(seq=seq, action=text, hash=h, sig=sig))
    s._commit_step(new, t, ActionRecord(seq, s.our_seat, text, h, sig))
    s.last_local_events = events
    if new.is_over:
        s._finish()


def send_resign(s: Session, reason: str) -> None:
    m = my_turn(s, "resign")
    if s._hidden is not None:
        events = s._hidden.resign(s.our_seat)  # no hidden report follows the end
        new = s._hidden.state
        seq, h = s._seq + 1, s._hidden.state_hash()
    else:
        new, events = m.resign(s.our_seat)
        seq, h = s._seq + 1, new.state_hash()
    fields = crypto.resign_fields(seq, s.our_seat, h, reason)
    t = crypto.absorb(s._transcript, "resign", *fields)
    sig = crypto.sign(s._key, crypto.sig_message(t))
    s._queue(wire.ResignMsg(seq=seq, sig=sig, reason=reason or None))
    s._commit_step(new, t, ActionRecord(seq, s.our_seat, RESIGN_TEXTS[reason], h, sig))
    s.last_local_events = events
    _after_resign(s)


def _after_resign(s: Session) -> None:
    """The match is over; with the hidden deal, the deal in play is audited first
    (protocol/hidden-deal.md section 5): the match finishes once both audits are in."""
    h = s._hidden
    if h is None:
        s._finish()
        return
    s._hidden_seen = (len(h.events), h.applied)  # the resignation's events are reported
    s._pump_hidden()


def check_turn(s: Session, seq: int, what: str) -> tuple[MatchState, int, bytes]:
    """The state, the acting seat and its identity key for a received action.

    Normally the peer's turn; while catching up after a resume, also our own
    actions that the peer re-sends: we lost them from the end of our record
    (a crash before the journal reached the disk) but signed them, and the
    peer holds them (protocol/README.md section 12).
    """
    if s._state is not State.PLAY:
        raise s._unexpected(what)
    if s.role is Role.HOST and Role.JOINER not in s._start_sigs:
        raise RemoteProtocolError(f"the joiner sent {what} {seq} before its start signature")
    m = s._match
    assert m is not None and s.peer_key is not None
    if s._hidden is not None:  # the hidden deal: whose decision the table waits for
        due = s._hidden.expecting
        seat = due[1] if due is not None and due[0] == "act" else None
    else:
        seat = m.to_act
    if seat == s.role.other.seat:
        key = s.peer_key
    elif seat is not None and s._catchup is not None and seq <= s._catchup[0]:
        key = s._pub
    else:
        raise RemoteProtocolError(f"the other player sent {what} {seq} out of turn")
    if seq != s._seq + 1:
        raise RemoteProtocolError(
            f"wrong sequence number on {what}: expected {s._seq + 1}, got {seq}"
        )
    return m, seat, key


def on_action(s: Session, msg: wire.ActionMsg) -> None:
    if s._hidden is not None:  # with the hidden deal, decisions are card moves
        raise RemoteProtocolError("bad message from peer: an action message in a hidden-deal match")
    m, seat, key = check_turn(s, msg.seq, "action")
    action = parse_canonical(msg.seq, msg.action)
    try:
        new, events = m.apply(action)
    except IllegalActionError as exc:
        raise RemoteProtocolError(
            f"the other player sent an illegal action {msg.seq}: {exc}"
        ) from None
    if new.state_hash() != msg.hash:
        raise RemoteProtocolError(
            f"state hash mismatch after action {msg.seq} ({msg.action}): the two programs "
            "disagree about the game (different versions, or tampering)"
        )
    t = crypto.absorb_action(s._transcript, msg.seq, seat, msg.action, msg.hash)
    if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
        raise CheatingError(f"the signature on action {msg.seq} is invalid (forged)")
    s._commit_step(new, t, ActionRecord(msg.seq, seat, msg.action, msg.hash, msg.sig))
    s._events.append(ActionReceived(msg.seq, action, events, seat))
    if new.is_over:
        s._finish()


def on_resign(s: Session, msg: wire.ResignMsg) -> None:
    m, seat, key = check_turn(s, msg.seq, "resign")
    reason = msg.reason or ""
    if s._hidden is not None:
        # (its events go out in PeerResigned; no hidden report follows the end)
        events = s._hidden.resign(seat)
        new = s._hidden.state
        h = s._hidden.state_hash()
    else:
        new, events = m.resign(seat)
        h = new.state_hash()
    t = crypto.absorb(s._transcript, "resign", *crypto.resign_fields(msg.seq, seat, h, reason))
    if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
        raise CheatingError(f"the signature on resignation {msg.seq} is invalid (forged)")
    text = RESIGN_TEXTS[reason]
    s._commit_step(new, t, ActionRecord(msg.seq, seat, text, h, msg.sig))
    s._events.append(PeerResigned(msg.seq, seat, events, reason))
    _after_resign(s)


def commit_step(s: Session, new: MatchState, t: bytes, rec: ActionRecord) -> None:
    s._match = new
    s._transcript = t
    s._seq = rec.seq
    s._actions.append(rec)
    s._tx_at.append(t)
    s._hash_at.append(rec.state_hash)
    if s._catchup is not None and rec.seq >= s._catchup[0]:
        target, tx = s._catchup
        s._catchup = None
        if rec.seq == target and t != tx:
            raise ResumeError(
                f"after catching up to action {target} the transcripts differ: "
                "the match cannot resume"
            )


def finish(s: Session, *, queue: bool = True) -> None:
    m = s._match
    assert m is not None and m.is_over
    h = m.state_hash() if s._hidden is None else s._hidden.state_hash()
    s._result = ResultRecord(m.scores, m.winner, h, s._transcript)
    sig = crypto.sign(s._key, crypto.final_message(s._transcript, h))
    s._final_sigs[s.role] = sig
    s._state = State.FINISH
    if not queue:
        return
    s._queue(wire.OverMsg(hash=h, tx=s._transcript, scores=m.scores, winner=m.winner, sig=sig))


def on_over(s: Session, msg: wire.OverMsg) -> None:
    if s._state is State.DONE and msg.sig == s._final_sigs.get(s.role.other):
        return  # re-sent after a resume: we have it already
    if s._state is not State.FINISH:
        raise s._unexpected("over")
    assert s._result is not None and s.peer_key is not None
    r = s._result
    if msg.tx != r.transcript_hash:
        raise RemoteProtocolError("the final transcripts differ: the match records disagree")
    if msg.hash != r.final_state_hash:
        raise RemoteProtocolError("the final state hashes differ")
    if tuple(msg.scores) != r.scores or msg.winner != r.winner:
        raise RemoteProtocolError("the other player reports a different result")
    if not crypto.verify_sig(s.peer_key, msg.sig, crypto.final_message(msg.tx, msg.hash)):
        raise CheatingError("the other player's final signature is invalid (forged)")
    s._final_sigs[s.role.other] = msg.sig
    s._state = State.DONE
    s._events.append(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
