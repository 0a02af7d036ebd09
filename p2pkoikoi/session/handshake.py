"""The handshake: hellos, keys, identities and the rules (protocol/README.md sections 5-7).

Theory of operation
-------------------
Everything from the first byte to the agreed rules: both sides' plaintext
``hello`` (:meth:`Handshake.on_hello`: SPAKE2 and X25519 give one key per
direction, the handshake hash is the session id), the peer's first encrypted
frame, whose decrypting is the proof of the password
(:meth:`Handshake.first_frame`, :meth:`Handshake.wrong_secret`), the signed
``auth`` messages (:meth:`Handshake.send_auth`, :meth:`Handshake.on_auth`) and
the joiner's decision on the host's rules (:meth:`Handshake.on_accept`,
:meth:`Handshake.on_decline`, :meth:`Handshake.send_rules_decision`).  It is
separate because it is the part an attacker reaches first: a wrong guess at
the password, a hello from another program, a forged identity must all fail
here, before any state of a match exists, and the checks read best in one
place.  :class:`Handshake` owns what the connection agreed (keys, session id,
the peer's identity, the rules, the turn limit) and hands the transcript up to
the accept to the session (``on_agreed``), which starts the commit-reveal; on a
resumed connection it hands over the keys instead (``on_resume_keys``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import p2pkoikoi.session.channel as channel
import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine import InputError, RuleSet
from p2pkoikoi.engine.values import value
from p2pkoikoi.session.codes.pake import Pake
from p2pkoikoi.session.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    ResumeError,
    RulesDeclinedError,
    RulesMismatchError,
    WrongSecretError,
)
from p2pkoikoi.session.events import (
    AcceptRules,
    DeclineRules,
    HandshakeComplete,
    RulesProposed,
)
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.states import Role, State, check_name, sanitize

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey


#: the host's plaintext abort to every failed guess at its short code
WRONG_CODE_REASON: Final = (
    "the code does not match: check it with the host (each wrong code is counted, and"
    " after a few the host needs a new one)"
)


def describe_diff(mine_rules: RuleSet, theirs_rules: RuleSet, mine: str, theirs: str) -> str:
    """Which presets the two sides play, then one differing setting per line."""
    from p2pkoikoi.engine.presets import describe_mismatch

    return describe_mismatch(mine_rules, theirs_rules, mine, theirs)


@value
class HelloKeys:
    """What this side proves itself with in its hello: which password (``via``:
    invite, code or resume), the ephemeral X25519 key and the PAKE exchange(s)
    (``pake_code``: the host's second one, for its short code)."""

    via: str
    eph: X25519PrivateKey
    pake: Pake
    pake_code: Pake | None


@value
class Terms:
    """What this side offers (the host: ``rules``, ``turn_limit``) or accepts (the
    joiner: ``expected`` rules, None for any, and ``min_turn_limit``)."""

    rules: RuleSet | None
    expected: RuleSet | None
    turn_limit: int
    min_turn_limit: int


class Handshake(Part):
    """One connection's handshake, and what it agreed (read by the other parts)."""

    def __init__(
        self,
        ctx: PartContext,
        *,
        program: str,
        keys: HelloKeys,
        terms: Terms,
        resume_id: bytes | None,
        on_abort: Callable[[wire.AbortMsg], None],
        on_agreed: Callable[[bytes], None],
        on_resume_keys: Callable[[bytes], None],
    ) -> None:
        super().__init__(ctx)
        via, eph, pake, pake_code = keys.via, keys.eph, keys.pake, keys.pake_code
        rules, expected = terms.rules, terms.expected
        turn_limit, min_turn_limit = terms.turn_limit, terms.min_turn_limit
        self._on_abort = on_abort
        self._on_agreed = on_agreed
        self._on_resume_keys = on_resume_keys
        self._eph = eph
        self._pake = pake
        self._pake_code = pake_code
        self._via = via
        self._expected = expected
        self._rules = rules
        self._rules_bytes = rules.encode() if rules is not None else b""
        self._turn_limit = turn_limit
        #: the joiner declines a host's turn limit under this (0: any limit)
        self._min_turn_limit = min_turn_limit
        self._resume_id = resume_id  # the match's session id when resuming
        self._confirmed = False  # an authenticated frame from the peer has arrived
        self._session_id: bytes | None = None  # H0
        self._resume_secret: bytes | None = None  # what a reconnection proves it holds
        self._connection_id: bytes | None = None  # this connection's handshake hash
        self._peer_name: str | None = None
        self._peer_key: bytes | None = None
        self._auth_sigs: dict[Role, bytes] = {}
        self._accepted = False
        self._transcript = b""
        self._hello = wire.encode_message(
            wire.HelloMsg(
                role=ctx.me.role.value,
                program=program,
                eph=channel.x25519_public(eph),
                pake=pake.message,
                pake_code=pake_code.message if pake_code is not None else None,
                via=None if ctx.me.is_host else via,
                resume=resume_id,
            )
        )
        ctx.outbox.plain(self._hello)

    def __repr__(self) -> str:
        return f"Handshake({self._me.role!r}, via={self._via!r}, {self._phase!r})"

    # ------------------------------------------------------------------ what it agreed
    @property
    def hello_payload(self) -> bytes:
        return self._hello

    @property
    def via(self) -> str:
        return self._via

    @property
    def confirmed(self) -> bool:
        """An authenticated frame from the peer has arrived (it shares our keys)."""
        return self._confirmed

    @property
    def rules(self) -> RuleSet | None:
        return self._rules

    @property
    def rules_bytes(self) -> bytes:
        return self._rules_bytes

    @property
    def turn_limit(self) -> int:
        return self._turn_limit

    @property
    def session_id(self) -> bytes | None:
        return self._session_id

    @property
    def resume_secret(self) -> bytes | None:
        return self._resume_secret

    @property
    def connection_id(self) -> bytes | None:
        return self._connection_id

    @property
    def peer_name(self) -> str | None:
        return self._peer_name

    @property
    def peer_key(self) -> bytes | None:
        return self._peer_key

    @property
    def accepted(self) -> bool:
        return self._accepted

    @property
    def transcript(self) -> bytes:
        """The transcript up to the accept (as far as the handshake got)."""
        return self._transcript

    def auth_sig(self, role: Role) -> bytes | None:
        return self._auth_sigs.get(role)

    def restore(
        self,
        *,
        session_id: bytes,
        resume_secret: bytes,
        rules: RuleSet,
        turn_limit: int,
        peer_name: str,
        peer_key: bytes,
        auth_sigs: dict[Role, bytes],
    ) -> None:
        """What a resumed connection agreed on its first connection (from the record)."""
        self._session_id, self._resume_secret = session_id, resume_secret
        self._rules, self._rules_bytes = rules, rules.encode()
        self._turn_limit = turn_limit
        self._peer_name, self._peer_key = peer_name, peer_key
        self._auth_sigs.update(auth_sigs)
        self._accepted = True

    def match_transcript(self, number: int, previous: bytes) -> bytes:
        """A rematch's transcript up to the accept: the same players, roles and rules,
        chained to the previous match's final transcript (protocol/README.md section 13)."""
        assert self._session_id is not None and self._peer_name is not None
        assert self._peer_key is not None and self._rules is not None
        me = self._me
        host = me.is_host
        names = (me.name, self._peer_name) if host else (self._peer_name, me.name)
        keys = (me.pub, self._peer_key) if host else (self._peer_key, me.pub)
        t = crypto.rematch_start(self._session_id, number, previous)
        t = crypto.absorb(t, "auth", "host", names[0], keys[0], self._rules_bytes, self._turn_limit)
        t = crypto.absorb(t, "auth", "joiner", names[1], keys[1], b"", 0)
        return crypto.absorb(t, "accept", self._rules.fingerprint())

    # ------------------------------------------------------------------ hellos and keys
    @property
    def guessing(self) -> bool:
        """We are a host and the joiner proves a short code: until its auth verifies,
        every way its first frame can fail is one counted guess, answered alike."""
        return self._me.role is Role.HOST and self._via == "code" and not self._confirmed

    def first_frame(self, payload: bytes, handle: Callable[[wire.Message], None]) -> None:
        """The peer's first frame after the hellos: its decrypting proves the password;
        ``handle`` is given its message.

        It must be ``auth`` (``resume`` on a resumed connection): nothing else,
        so its AEAD counter is always 0.  A frame that does not decrypt is a
        wrong password.  On an invite or a resume, a plaintext ``abort`` that does
        not decrypt is reported (an error the peer met before it had keys).  A short
        code has 16 bits: there, any first frame that fails -- it does not decrypt,
        whatever else it parses as (a plaintext ``abort`` map that is also a valid
        ciphertext), or it decrypts to anything but an ``auth`` whose signature holds
        -- is the same :meth:`wrong_secret`, answered by the same plaintext abort,
        so a guesser learns nothing until it has proved the key.
        """
        if self.guessing:
            try:
                self._first_frame(payload, handle)
            except ProtocolError:
                self._confirmed = False  # the abort goes out in plaintext, as for a wrong key
                raise self.wrong_secret() from None
            return
        self._first_frame(payload, handle)

    def _first_frame(self, payload: bytes, handle: Callable[[wire.Message], None]) -> None:
        try:
            plain = self._outbox.open(payload)
        except RemoteProtocolError:
            if not self.guessing:
                try:
                    early = wire.decode_message(payload)
                except RemoteProtocolError:
                    early = None
                if isinstance(early, wire.AbortMsg):
                    self._on_abort(early)
            raise self.wrong_secret() from None
        guessing = self.guessing
        self._confirmed = True
        msg = wire.decode_message(plain)
        first = wire.ResumeMsg if self._resume_id is not None else wire.AuthMsg
        allowed = first if guessing else first | wire.AbortMsg
        if not isinstance(msg, allowed):
            raise RemoteProtocolError(
                f"bad message from peer: expected {wire.TYPE_NAMES[first]} first, "
                f"got {wire.TYPE_NAMES[type(msg)]}"
            )
        handle(msg)

    def wrong_secret(self) -> WrongSecretError:
        via = self._via
        if self._me.role is Role.JOINER:
            what = {"code": "code", "invite": "invite", "resume": "match"}[via]
            return WrongSecretError(
                f"the host's first message does not decrypt: it does not hold this {what}'s "
                "secret (a wrong code or invite, or not the host you meant)",
                via,
            )
        text = {
            "code": WRONG_CODE_REASON,
            "invite": "the joiner does not hold this invite's secret (its first message does "
            "not decrypt)",
            "resume": "the reconnecting side does not hold this match's resume secret",
        }[via]
        return WrongSecretError(text, via)

    def on_hello(self, msg: wire.HelloMsg, payload: bytes) -> None:
        me = self._me
        if msg.role == me.role.value:
            raise RemoteProtocolError(f"both players claim to be the {msg.role}")
        host = me.is_host
        if host and msg.via is None:
            raise RemoteProtocolError("bad hello from the joiner: it lacks 'via'")
        if host and msg.pake_code is not None:
            raise RemoteProtocolError("bad hello from the joiner: 'pake_code' is the host's")
        if not host and msg.via is not None:
            raise RemoteProtocolError("bad hello from the host: 'via' is the joiner's")
        if msg.resume != self._resume_id:
            if self._resume_id is None:
                raise RemoteProtocolError(
                    "the other player wants to resume an earlier match, not start a new one"
                )
            if msg.resume is None:
                raise ResumeError("the other player starts a new match instead of resuming ours")
            raise ResumeError("the other player resumes a different match")
        if host and (msg.via == "resume") != (self._resume_id is not None):
            raise RemoteProtocolError("bad hello from the joiner: 'via' does not fit 'resume'")
        pake, peer_message = self._pake, msg.pake
        if host and msg.via == "code":
            if self._pake_code is None:
                raise RemoteProtocolError(
                    "this host does not accept a code now (it made none, or too many wrong "
                    "guesses ended it): ask the host for a new code, or for the invite"
                )
            pake = self._pake_code
        elif not host and self._via == "code":
            if msg.pake_code is None:
                raise RemoteProtocolError(
                    "the host does not accept a code now: ask it for a new code, or for the invite"
                )
            peer_message = msg.pake_code
        if host:
            assert msg.via is not None
            self._via = msg.via
        pake_key = pake.finish(peer_message)
        if host:
            h0 = channel.handshake_hash(self._hello, payload)
        else:
            h0 = channel.handshake_hash(payload, self._hello)
        shared = channel.shared_secret(self._eph, msg.eph)
        k_h2j, k_j2h = channel.derive_keys(pake_key, shared, h0)
        self._outbox.set_keys(
            channel.Channel(k_h2j if host else k_j2h), channel.Channel(k_j2h if host else k_h2j)
        )
        self._connection_id = h0
        if self._resume_id is not None:
            self._phase.go(State.RESUME)
            self._on_resume_keys(h0)  # the joiner proves the secret first; the host answers
            return
        self._session_id = h0
        self._resume_secret = channel.derive_resume_secret(pake_key, shared, h0)
        self._phase.go(State.AUTH)
        if not host:  # the joiner's auth is the key confirmation the host waits for
            self.send_auth()

    # ------------------------------------------------------------------ identities
    def send_auth(self) -> None:
        assert self._session_id is not None
        me = self._me
        sig = me.sign(
            crypto.auth_message(
                self._session_id,
                me.role.value,
                me.name,
                me.pub,
                self._rules_bytes,
                self._turn_limit,
            )
        )
        self._auth_sigs[me.role] = sig
        if me.is_host:
            assert self._rules is not None
            auth = wire.AuthMsg(
                name=me.name,
                key=me.pub,
                sig=sig,
                rules=self._rules_bytes,
                fp=self._rules.fingerprint(),
                rounds=self._rules.rounds,
                turn_limit=self._turn_limit,
            )
        else:
            auth = wire.AuthMsg(name=me.name, key=me.pub, sig=sig)
        self._queue(auth)
        self._outbox.first_sent()

    def on_auth(self, msg: wire.AuthMsg) -> None:
        if self._phase.state is not State.AUTH:
            raise self._phase.unexpected("auth")
        assert self._session_id is not None
        me = self._me
        peer = me.role.other
        check_name(msg.name, RemoteProtocolError)
        if peer is Role.HOST:
            if msg.rules is None or msg.fp is None or msg.rounds is None or msg.turn_limit is None:
                raise RemoteProtocolError("bad auth message from host: it lacks the rules")
            rules = self.decode_rules(msg.rules, "host")
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
            self._session_id, peer.value, msg.name, msg.key, peer_rules, peer_limit
        )
        if not crypto.verify_sig(msg.key, msg.sig, signed):
            raise RemoteProtocolError(
                "the other player's identity signature is invalid: the connection may be under "
                "attack"
            )
        self._peer_name, self._peer_key = msg.name, msg.key
        self._auth_sigs[peer] = msg.sig
        if peer is Role.HOST:
            self._rules = rules
            self._rules_bytes = peer_rules
            self._turn_limit = peer_limit
        else:  # the joiner proved the password and its identity: now the host speaks
            self.send_auth()
        host = me.is_host
        host_name = me.name if host else msg.name
        host_key = me.pub if host else msg.key
        join_name = msg.name if host else me.name
        join_key = msg.key if host else me.pub
        t = crypto.transcript_start(self._session_id)
        t = crypto.absorb(
            t, "auth", "host", host_name, host_key, self._rules_bytes, self._turn_limit
        )
        self._transcript = crypto.absorb(t, "auth", "joiner", join_name, join_key, b"", 0)
        self._phase.go(State.RULES)
        if me.role is Role.JOINER and 0 < self._turn_limit < self._min_turn_limit:
            # accepted only when asked for explicitly (a bot that thinks like a
            # person loses every match by time to a host with --turn-limit 1)
            limit, floor = self._turn_limit, self._min_turn_limit
            self._queue(
                wire.DeclineMsg(
                    reason=f"the turn limit {limit} s per decision is below the {floor} s"
                    " this player accepts"
                )
            )
            raise RulesMismatchError(
                f"the host's turn limit is {limit} s per decision, below the {floor} s accepted"
                f" without asking: join with --min-turn-limit {limit} to play it anyway"
            )
        if me.role is Role.JOINER:
            assert self._rules is not None
            if self._expected is None:
                self._emit(
                    RulesProposed(
                        rules=self._rules,
                        fingerprint=self._rules.fingerprint(),
                        rounds=self._rules.rounds,
                        peer_name=msg.name,
                        peer_key=msg.key,
                        peer_fingerprint=crypto.fingerprint(msg.key),
                        turn_limit=self._turn_limit,
                    )
                )
            else:
                diff = self._expected.diff(self._rules)
                if diff:
                    text = describe_diff(
                        self._expected, self._rules, "you expect", "the host proposes"
                    )
                    one_line = "; ".join(line.strip() for line in text.splitlines())
                    self._queue(
                        wire.DeclineMsg(
                            reason=f"rules differ: {one_line}"[: wire.MAX_REASON],
                            expected=self._expected.encode(),
                        )
                    )
                    raise RulesMismatchError(f"the host's rules differ from yours:\n{text}")
                self.accept()

    def decode_rules(self, data: bytes, who: str) -> RuleSet:
        try:
            rules = RuleSet.decode(data)
        except InputError as exc:
            raise RulesMismatchError(
                f"cannot read the {who}'s rules ({exc}); both players need the same release"
            ) from None
        if rules.encode() != data:
            raise RemoteProtocolError(f"bad rules from the {who}: not in canonical form")
        return rules

    # ------------------------------------------------------------------ the rules
    def handshake_event(self) -> HandshakeComplete:
        assert self._peer_name is not None and self._peer_key is not None and self._rules
        return HandshakeComplete(
            peer_name=self._peer_name,
            peer_key=self._peer_key,
            peer_fingerprint=crypto.fingerprint(self._peer_key),
            rules=self._rules,
        )

    def _agreed(self, fp: str) -> None:
        self._transcript = crypto.absorb(self._transcript, "accept", fp)
        self._accepted = True
        self._phase.go(State.SEED)
        self._emit(self.handshake_event())
        self._on_agreed(self._transcript)

    def accept(self) -> None:
        assert self._rules is not None
        fp = self._rules.fingerprint()
        self._queue(wire.AcceptMsg(fp=fp))
        self._agreed(fp)

    def on_accept(self, msg: wire.AcceptMsg) -> None:
        if self._phase.state is not State.RULES or not self._me.is_host:
            raise self._phase.unexpected("accept")
        assert self._rules is not None
        if msg.fp != self._rules.fingerprint():
            raise RemoteProtocolError("the joiner accepted rules other than the ones proposed")
        self._agreed(msg.fp)

    def on_decline(self, msg: wire.DeclineMsg) -> None:
        if self._phase.state is not State.RULES or not self._me.is_host:
            raise self._phase.unexpected("decline")
        assert self._rules is not None
        if msg.expected is not None:
            try:
                expected = RuleSet.decode(msg.expected)
            except InputError:
                expected = None
            if expected is not None and self._rules.diff(expected):
                text = describe_diff(self._rules, expected, "you propose", "the joiner expects")
                raise RulesMismatchError(f"the joiner expects other rules:\n{text}")
        reason = sanitize(msg.reason) or "no reason given"
        raise RulesDeclinedError(f"the joiner declined the rules: {reason}")

    def send_rules_decision(self, event: AcceptRules | DeclineRules) -> None:
        if (
            self._me.role is not Role.JOINER
            or self._phase.state is not State.RULES
            or self._expected
        ):
            raise LocalProtocolError("there are no proposed rules to accept or decline")
        if isinstance(event, AcceptRules):
            self.accept()
        else:
            reason = sanitize(event.reason)[: wire.MAX_REASON] or "declined"
            self._queue(wire.DeclineMsg(reason=reason))
            self._phase.go(State.CLOSED)
