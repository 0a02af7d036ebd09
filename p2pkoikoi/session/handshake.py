"""The handshake: hellos, keys, identities and the rules (protocol/README.md sections 5-7).

Theory of operation
-------------------
Everything from the first byte to the agreed rules: both sides' plaintext
``hello`` (:func:`make_hello`, :func:`on_hello`: SPAKE2 and X25519 give one key
per direction, the handshake hash is the session id), the peer's first
encrypted frame, whose decrypting is the proof of the password
(:func:`first_frame`, :func:`wrong_secret`), the signed ``auth`` messages
(:func:`send_auth`, :func:`on_auth`) and the joiner's decision on the host's
rules (:func:`accept`, :func:`on_accept`, :func:`on_decline`,
:func:`send_rules_decision`).  It is separate because it is the part an
attacker reaches first: a wrong guess at the password, a hello from another
program, a forged identity must all fail here, before any state of a match
exists, and the checks read best in one place.  The functions are the
:class:`~p2pkoikoi.session.session.Session`'s own methods (``s`` is the session),
kept in a module of their own, as in :mod:`p2pkoikoi.session.hidden_session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkoikoi.engine import InputError, RuleSet
from p2pkoikoi.session import commit_reveal, crypto, resume_session, side_channel, wire
from p2pkoikoi.session.errors import (
    LocalProtocolError,
    RemoteProtocolError,
    ResumeError,
    RulesDeclinedError,
    RulesMismatchError,
    WrongSecretError,
)
from p2pkoikoi.session.events import AcceptRules, DeclineRules, HandshakeComplete, RulesProposed
from p2pkoikoi.session.states import Role, State, check_name, sanitize

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def describe_diff(mine_rules: RuleSet, theirs_rules: RuleSet, mine: str, theirs: str) -> str:
    """Which presets the two sides play, then one differing setting per line."""
    from p2pkoikoi.engine.presets import describe_mismatch

    return describe_mismatch(mine_rules, theirs_rules, mine, theirs)


def make_hello(s: Session, resume: bytes | None) -> bytes:
    host = s.role is Role.HOST
    return wire.encode_message(
        wire.HelloMsg(
            role=s.role.value,
            program=s.program,
            eph=crypto.x25519_public(s._eph),
            pake=s._pake.message,
            pake_code=s._pake_code.message if s._pake_code is not None else None,
            via=None if host else s.via,
            resume=resume,
        )
    )


def first_frame(s: Session, payload: bytes) -> wire.Message:
    """The peer's first frame after the hellos: its decrypting proves the password.

    It must be ``auth`` (``resume`` on a resumed connection): nothing else,
    so its AEAD counter is always 0.  A frame that does not decrypt is a
    wrong password, unless it is a plaintext ``abort`` (an error the peer
    met before it had keys: reported, not counted as a guess).
    """
    assert s._recv is not None
    try:
        plain = s._recv.open(payload)
    except RemoteProtocolError:
        try:
            early = wire.decode_message(payload)
        except RemoteProtocolError:
            early = None
        if isinstance(early, wire.AbortMsg):
            side_channel.on_abort(s, early)
        raise wrong_secret(s) from None
    s._confirmed = True
    msg = wire.decode_message(plain)
    first = wire.ResumeMsg if s._resume_id is not None else wire.AuthMsg
    if not isinstance(msg, first | wire.AbortMsg):
        raise RemoteProtocolError(
            f"bad message from peer: expected {wire.TYPE_NAMES[first]} first, "
            f"got {wire.TYPE_NAMES[type(msg)]}"
        )
    return msg


def wrong_secret(s: Session) -> WrongSecretError:
    if s.role is Role.JOINER:
        what = {"code": "code", "invite": "invite", "resume": "match"}[s.via]
        return WrongSecretError(
            f"the host's first message does not decrypt: it does not hold this {what}'s "
            "secret (a wrong code or invite, or not the host you meant)",
            s.via,
        )
    text = {
        "code": "the code does not match: check it with the host (each wrong code is "
        "counted, and after a few the host needs a new one)",
        "invite": "the joiner does not hold this invite's secret (its first message does "
        "not decrypt)",
        "resume": "the reconnecting side does not hold this match's resume secret",
    }[s.via]
    return WrongSecretError(text, s.via)


def on_hello(s: Session, msg: wire.HelloMsg, payload: bytes) -> None:
    if msg.role == s.role.value:
        raise RemoteProtocolError(f"both players claim to be the {msg.role}")
    host = s.role is Role.HOST
    if host and msg.via is None:
        raise RemoteProtocolError("bad hello from the joiner: it lacks 'via'")
    if host and msg.pake_code is not None:
        raise RemoteProtocolError("bad hello from the joiner: 'pake_code' is the host's")
    if not host and msg.via is not None:
        raise RemoteProtocolError("bad hello from the host: 'via' is the joiner's")
    if msg.resume != s._resume_id:
        if s._resume_id is None:
            raise RemoteProtocolError(
                "the other player wants to resume an earlier match, not start a new one"
            )
        if msg.resume is None:
            raise ResumeError("the other player starts a new match instead of resuming ours")
        raise ResumeError("the other player resumes a different match")
    if host and (msg.via == "resume") != (s._resume_id is not None):
        raise RemoteProtocolError("bad hello from the joiner: 'via' does not fit 'resume'")
    pake, peer_message = s._pake, msg.pake
    if host and msg.via == "code":
        if s._pake_code is None:
            raise RemoteProtocolError(
                "this host does not accept a code now (it made none, or too many wrong "
                "guesses ended it): ask the host for a new code, or for the invite"
            )
        pake = s._pake_code
    elif not host and s.via == "code":
        if msg.pake_code is None:
            raise RemoteProtocolError(
                "the host does not accept a code now: ask it for a new code, or for the invite"
            )
        peer_message = msg.pake_code
    if host:
        assert msg.via is not None
        s.via = msg.via
    pake_key = pake.finish(peer_message)
    if host:
        h0 = crypto.handshake_hash(s._hello_payload, payload)
    else:
        h0 = crypto.handshake_hash(payload, s._hello_payload)
    shared = crypto.shared_secret(s._eph, msg.eph)
    k_h2j, k_j2h = crypto.derive_keys(pake_key, shared, h0)
    s._send = crypto.Channel(k_h2j if host else k_j2h)
    s._recv = crypto.Channel(k_j2h if host else k_h2j)
    s.connection_id = h0
    if s._resume_id is not None:
        s._state = State.RESUME
        if not host:  # the joiner proves the secret first; the host answers after
            resume_session.send_resume(s, h0)
        return
    s.session_id = h0
    s.resume_secret = crypto.derive_resume_secret(pake_key, shared, h0)
    s._state = State.AUTH
    if not host:  # the joiner's auth is the key confirmation the host waits for
        send_auth(s)


def send_auth(s: Session) -> None:
    assert s.session_id is not None
    sig = crypto.sign(
        s._key,
        crypto.auth_message(
            s.session_id,
            s.role.value,
            s.name,
            s._pub,
            s._rules_bytes,
            s.turn_limit,
        ),
    )
    s._auth_sigs[s.role] = sig
    if s.role is Role.HOST:
        assert s.rules is not None
        auth = wire.AuthMsg(
            name=s.name,
            key=s._pub,
            sig=sig,
            rules=s._rules_bytes,
            fp=s.rules.fingerprint(),
            rounds=s.rules.rounds,
            turn_limit=s.turn_limit,
        )
    else:
        auth = wire.AuthMsg(name=s.name, key=s._pub, sig=sig)
    s._queue(auth)
    s._sent_first = True


def on_auth(s: Session, msg: wire.AuthMsg) -> None:
    if s._state is not State.AUTH:
        raise s._unexpected("auth")
    assert s.session_id is not None
    peer = s.role.other
    check_name(msg.name, RemoteProtocolError)
    if peer is Role.HOST:
        if msg.rules is None or msg.fp is None or msg.rounds is None or msg.turn_limit is None:
            raise RemoteProtocolError("bad auth message from host: it lacks the rules")
        rules = decode_rules(s, msg.rules, "host")
        if rules.fingerprint() != msg.fp:
            raise RemoteProtocolError("bad auth message from host: rules fingerprint mismatch")
        if rules.rounds != msg.rounds:
            raise RemoteProtocolError("bad auth message from host: rounds do not match rules")
        peer_rules, peer_limit = msg.rules, msg.turn_limit
    else:
        if (
            msg.rules is not None
            or msg.fp is not None
            or msg.rounds is not None
            or msg.turn_limit is not None
        ):
            raise RemoteProtocolError("bad auth message from joiner: it proposes rules")
        peer_rules, peer_limit = b"", 0
    signed = crypto.auth_message(
        s.session_id, peer.value, msg.name, msg.key, peer_rules, peer_limit
    )
    if not crypto.verify_sig(msg.key, msg.sig, signed):
        raise RemoteProtocolError(
            "the other player's identity signature is invalid: the connection may be under attack"
        )
    s.peer_name, s.peer_key = msg.name, msg.key
    s._auth_sigs[peer] = msg.sig
    if peer is Role.HOST:
        s.rules = rules
        s._rules_bytes = peer_rules
        s.turn_limit = peer_limit
    else:  # the joiner proved the password and its identity: now the host speaks
        send_auth(s)
    host_name = s.name if s.role is Role.HOST else msg.name
    host_key = s._pub if s.role is Role.HOST else msg.key
    join_name = msg.name if s.role is Role.HOST else s.name
    join_key = msg.key if s.role is Role.HOST else s._pub
    t = crypto.transcript_start(s.session_id)
    t = crypto.absorb(t, "auth", "host", host_name, host_key, s._rules_bytes, s.turn_limit)
    s._transcript = crypto.absorb(t, "auth", "joiner", join_name, join_key, b"", 0)
    s._state = State.RULES
    if s.role is Role.JOINER:
        assert s.rules is not None
        if s._expected is None:
            s._events.append(
                RulesProposed(
                    rules=s.rules,
                    fingerprint=s.rules.fingerprint(),
                    rounds=s.rules.rounds,
                    peer_name=msg.name,
                    peer_key=msg.key,
                    peer_fingerprint=crypto.fingerprint(msg.key),
                    turn_limit=s.turn_limit,
                )
            )
        else:
            diff = s._expected.diff(s.rules)
            if diff:
                text = describe_diff(s._expected, s.rules, "you expect", "the host proposes")
                s._queue(
                    wire.DeclineMsg(
                        reason=f"rules differ: {text}"[: wire.MAX_REASON],
                        expected=s._expected.encode(),
                    )
                )
                raise RulesMismatchError(f"the host's rules differ from yours:\n{text}")
            accept(s)


def decode_rules(s: Session, data: bytes, who: str) -> RuleSet:
    try:
        rules = RuleSet.decode(data)
    except InputError as exc:
        raise RulesMismatchError(
            f"cannot read the {who}'s rules ({exc}); both players need the same release"
        ) from None
    if rules.encode() != data:
        raise RemoteProtocolError(f"bad rules from the {who}: not in canonical form")
    return rules


def handshake_event(s: Session) -> HandshakeComplete:
    assert s.peer_name is not None and s.peer_key is not None and s.rules
    return HandshakeComplete(
        peer_name=s.peer_name,
        peer_key=s.peer_key,
        peer_fingerprint=crypto.fingerprint(s.peer_key),
        rules=s.rules,
    )


def accept(s: Session) -> None:
    assert s.rules is not None
    fp = s.rules.fingerprint()
    s._queue(wire.AcceptMsg(fp=fp))
    s._transcript = crypto.absorb(s._transcript, "accept", fp)
    s._t_commit = s._transcript
    s._accepted = True
    s._state = State.SEED
    s._events.append(handshake_event(s))


def on_accept(s: Session, msg: wire.AcceptMsg) -> None:
    if s._state is not State.RULES or s.role is not Role.HOST:
        raise s._unexpected("accept")
    assert s.rules is not None
    if msg.fp != s.rules.fingerprint():
        raise RemoteProtocolError("the joiner accepted rules other than the ones proposed")
    s._transcript = crypto.absorb(s._transcript, "accept", msg.fp)
    s._t_commit = s._transcript
    s._accepted = True
    s._state = State.SEED
    s._events.append(handshake_event(s))
    commit_reveal.send_commit(s)


def on_decline(s: Session, msg: wire.DeclineMsg) -> None:
    if s._state is not State.RULES or s.role is not Role.HOST:
        raise s._unexpected("decline")
    assert s.rules is not None
    if msg.expected is not None:
        try:
            expected = RuleSet.decode(msg.expected)
        except InputError:
            expected = None
        if expected is not None and s.rules.diff(expected):
            text = describe_diff(s.rules, expected, "you propose", "the joiner expects")
            raise RulesMismatchError(f"the joiner expects other rules:\n{text}")
    reason = sanitize(msg.reason) or "no reason given"
    raise RulesDeclinedError(f"the joiner declined the rules: {reason}")


def send_rules_decision(s: Session, event: AcceptRules | DeclineRules) -> None:
    if s.role is not Role.JOINER or s._state is not State.RULES or s._expected:
        raise LocalProtocolError("there are no proposed rules to accept or decline")
    if isinstance(event, AcceptRules):
        accept(s)
    else:
        reason = sanitize(event.reason)[: wire.MAX_REASON] or "declined"
        s._queue(wire.DeclineMsg(reason=reason))
        s._state = State.CLOSED
