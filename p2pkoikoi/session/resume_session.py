"""Resuming a match on a new connection, and catching up (protocol/README.md section 12).

Theory of operation
-------------------
A broken connection does not end a match.  :func:`resume` builds a session from
our record (a :class:`~p2pkoikoi.session.resume.ResumePoint`: verified and
replayed once per break) for the new connection: its hello carries the match's
session id, the keys are fresh, and the state, transcript and signatures are
the record's.  After the hellos each side sends a signed ``resume`` (its last
seq, transcript and state hash: :func:`send_resume`), checked against the
identity key recorded for the peer's seat (:func:`on_resume`); the side that is
ahead re-sends the signed actions (or card moves) the peer lacks, and its final
signature; the side behind catches up (``s._catchup``) until
:func:`p2pkoikoi.session.play.commit_step` reaches the peer's seq with the same
transcript.  The transcript is untouched, so the record verifies as if nothing
happened.  It is separate because it is a second way into every phase after the
seed, with checks of its own; the functions are the
:class:`~p2pkoikoi.session.session.Session`'s own methods (``s`` is the
session), kept in a module of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session import crypto, handshake, hidden_session, wire
from p2pkoikoi.session.errors import LocalProtocolError, ResumeError
from p2pkoikoi.session.events import Resumed
from p2pkoikoi.session.record import Record, resign_reason
from p2pkoikoi.session.resume import ResumePoint
from p2pkoikoi.session.states import Role, State

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def resume(
    cls: type[Session],
    point: ResumePoint | Record,
    role: Role | str,
    *,
    identity_key: Ed25519PrivateKey,
    resume_secret: bytes,
    entropy: bytes,
    program: str,
    hidden_secret: bytes | None,
) -> Session:
    """:meth:`Session.resume` (see there)."""
    role = Role(role)
    if isinstance(point, Record):
        point = ResumePoint.from_record(point)
    r = point.record
    assert r.session_id is not None and r.rules is not None
    assert r.host is not None and r.joiner is not None
    if r.rules.deal is DealMode.HIDDEN and (hidden_secret is None or len(hidden_secret) != 32):
        raise LocalProtocolError(
            "resuming a hidden-deal match needs this side's deal secret from the .resume"
            " file, which is missing or damaged: the match cannot resume"
        )
    me, peer = (r.host, r.joiner) if role is Role.HOST else (r.joiner, r.host)
    if me.key != crypto.public_bytes(identity_key):
        raise LocalProtocolError(
            f"this record's {role.value} is another identity "
            f"({crypto.fingerprint(me.key)}): resume it with that player's identity"
        )
    s = cls(
        role,
        identity_key=identity_key,
        name=me.name,
        entropy=entropy,
        rules=r.rules if role is Role.HOST else None,
        expected_rules=r.rules if role is Role.JOINER else None,
        turn_limit=r.turn_limit,  # range-checked here; the joiner keeps it below
        program=program,
        _resume_secret=resume_secret,
    )
    s._resume_id = r.session_id
    s._hello_payload = handshake.make_hello(s, r.session_id)
    s._out = bytearray(wire.encode_frame(s._hello_payload))
    s.session_id = r.session_id
    s.resume_secret = resume_secret
    s.rules = r.rules
    s._rules_bytes = r.rules.encode()
    s.turn_limit = r.turn_limit
    s.peer_name, s.peer_key = peer.name, peer.key
    for rl, p in ((Role.HOST, r.host), (Role.JOINER, r.joiner)):
        if p.auth_sig is not None:
            s._auth_sigs[rl] = p.auth_sig
        if p.start_sig is not None:
            s._start_sigs[rl] = p.start_sig
    s._accepted = True
    s._commitment, s._commit_sig = r.commitment, r.commit_sig
    s._host_value, s._joiner_value = r.host_value, r.joiner_value
    s._t_commit = point.t_commit
    s._t_reveal = point.t_reveal
    s.match_number, s._previous = r.match_number, r.previous
    s.seed = r.match_seed
    if r.rules.deal is DealMode.HIDDEN:
        assert hidden_secret is not None
        s.hidden_secret = bytes(hidden_secret)
        s._transcript = point.t_reveal
        hidden_session.rebuild(s, r)  # every card move again, committed one by one
    else:
        s._match = point.match
        s._actions = list(r.actions)
        s._seq = r.actions[-1].seq if r.actions else 0
        s._transcript = point.tx_at[-1]
        s._tx_at, s._hash_at = list(point.tx_at), list(point.hash_at)
    if r.result is not None:
        s._result = r.result
        for rl in Role:
            sig = r.final_sigs[rl.seat]
            if sig is not None:
                s._final_sigs[rl] = sig
        s._resume_state = State.DONE if r.is_complete else State.FINISH
    elif s._hidden.is_over if s._hidden is not None else point.match.is_over:
        # we crashed between the last action and our final signature
        s._finish(queue=False)  # the over message goes out after the resume handshake
        s._resume_state = State.FINISH
    s._state = State.HELLO
    return s


def send_resume(s: Session, h_resume: bytes) -> None:
    assert s.session_id is not None
    seq, tx, h = s._seq, s._transcript, s._hash_at[s._seq]
    msg = crypto.resume_message(h_resume, s.role.value, s.session_id, seq, tx, h)
    s._queue(wire.ResumeMsg(seq=seq, tx=tx, hash=h, sig=crypto.sign(s._key, msg)))
    s._sent_first = True
    mine = s._start_sigs.get(s.role)
    if s.role is Role.JOINER and mine is not None:
        s._queue(wire.StartMsg(sig=mine))  # the host may lack it: sent again


def on_resume(s: Session, msg: wire.ResumeMsg) -> None:
    if s._state is not State.RESUME:
        raise s._unexpected("resume")
    assert s.connection_id and s.session_id and s.peer_key
    signed = crypto.resume_message(
        s.connection_id, s.role.other.value, s.session_id, msg.seq, msg.tx, msg.hash
    )
    if not crypto.verify_sig(s.peer_key, msg.sig, signed):
        raise ResumeError(
            "the reconnecting player is not the one this match was played with "
            "(its identity signature fails): refused"
        )
    if msg.seq <= s._seq:
        if s._tx_at[msg.seq] != msg.tx or s._hash_at[msg.seq] != msg.hash:
            raise ResumeError(
                f"the two records disagree at action {msg.seq}: the match cannot resume"
            )
    elif s._result is not None:
        raise ResumeError("the other player claims actions after the end of the match")
    else:
        s._catchup = (msg.seq, msg.tx)
    if not s._sent_first:  # the host answers once the joiner proved the secret
        send_resume(s, s.connection_id)
    s._state = s._resume_state
    s._events.append(Resumed(s._seq, msg.seq))
    for a in s._actions[msg.seq :]:  # we are ahead: re-send what the peer lacks
        reason = resign_reason(a.action)
        if a.kind:
            s._queue(
                wire.CardMsg(
                    seq=a.seq,
                    kind=a.kind,
                    hash=a.state_hash,
                    sig=a.sig,
                    action=a.action or None,
                    pos=a.pos,
                    deck=a.deck or None,
                    keys=a.keys or None,
                )
            )
        elif reason is not None:
            s._queue(wire.ResignMsg(seq=a.seq, sig=a.sig, reason=reason or None))
        else:
            s._queue(wire.ActionMsg(seq=a.seq, action=a.action, hash=a.state_hash, sig=a.sig))
    if s._hidden is not None and s._result is None and s._catchup is None:
        s._pump_hidden()  # moves our table made after the last one in the record
    mine = s._final_sigs.get(s.role)
    if s._result is not None and mine is not None:
        r = s._result
        s._queue(
            wire.OverMsg(
                hash=r.final_state_hash,
                tx=r.transcript_hash,
                scores=r.scores,
                winner=r.winner,
                sig=mine,
            )
        )
        if s.role.other in s._final_sigs:
            s._state = State.DONE
