"""The p2pkoikoi protocol as a sans-I/O state machine.

Theory of operation
-------------------
A :class:`Session` never touches a socket, a clock or a random source.  The
transport feeds it the bytes it read (:meth:`Session.receive_data`, ``b""`` at
end of stream), pulls events out of it (:meth:`Session.next_event` until it
returns :data:`NEED_DATA`), hands it what the local player does
(:meth:`Session.send`), and writes every byte the session produces, in the
order produced: :meth:`Session.send` returns all bytes queued so far plus the
new ones, and :meth:`Session.data_to_send` returns (and clears) what the session
queued on its own - the opening hello right after construction, the automatic
protocol replies (auth, accept, commit, value, reveal, the final signature)
after received data, and a last ``abort`` or ``decline`` after an error.

The protocol runs in lock-step phases (``session.state``)::

    HELLO -> AUTH -> RULES -> SEED -> PLAY -> FINISH -> DONE -> CLOSED
                             ^                        |   (any) -> ERROR
                             +--- again / again ------+   (a rematch)

1. Both sides send a plaintext ``hello`` at once (version, role, ephemeral
   X25519 key, a SPAKE2 message; the host adds a second SPAKE2 message when it
   accepts a short code, the joiner says which password it uses: ``via``).
2. Keys are derived with HKDF from the X25519 secret (input), the SPAKE2 key
   (salt) and the hash of both hellos (info); one ChaCha20-Poly1305 key per
   direction, nonces are frame counters.
3. The joiner sends ``auth`` first (name, Ed25519 identity key, signature over
   the handshake hash and that auth): its decrypting is the host's proof that
   the joiner holds the password.  Until then the host sends nothing that
   depends on the keys, so a wrong guess learns nothing (WrongSecretError: a
   host counts these per code).  Then the host sends its ``auth`` with its rules
   and the turn limit; the joiner accepts (by its user, or automatically when
   the rules equal its expected ones).
4. Commit-reveal: the host commits (signed), the joiner sends its value, the
   host reveals (with its start signature over the transcript, which now holds
   both identities, the rules and both values); the joiner checks it and sends
   its own start signature; both derive the match seed and start the engine.
   An end between the joiner's value and the reveal is the host's forfeit.
5. The player to act sends ``action`` (seq, text, state hash, signature over
   the transcript); the other side checks turn, seq, legality, hash and
   signature.  At the end both sign the final transcript (``over``).

6. A rematch (protocol/README.md section 13): in DONE either side sends
   ``again`` (:class:`OfferRematch`), the other answers ``again`` or
   ``no_again``; once a side has sent and received ``again`` the per-match
   state is reset and step 4 runs again on the same keys, with a transcript
   that starts from H0, the match number and the previous final transcript.

Before a side has received an authenticated frame, its errors go out as a
plaintext ``abort`` (the peer may not share its keys); after, encrypted.

A broken connection does not end a match: :meth:`Session.resume` builds a
session from our record (verified and replayed) for a new connection.  Its
hello carries the match's session id; keys are fresh; each side sends a signed
``resume`` (its last seq, transcript and state hash), checked against the
identity key recorded for the peer's seat; the side that is ahead re-sends the
signed actions the peer lacks (and its final signature), emitted on the other
side as ordinary :class:`ActionReceived` events after :class:`Resumed` -- the
peer's own actions too, when the end of its record was lost in a crash.  The
transcript is untouched, so the record verifies as if nothing happened.

With the rule ``deal = hidden`` play goes through a mental-poker deal
(``protocol/hidden-deal.md``): every move of it is a signed ``card`` message
(:mod:`p2pkoikoi.session.hidden_session`), the table is a
:class:`~p2pkoikoi.session.mental.play.HiddenMatch`, and ``session.match`` is
its engine state (the cards this side has not seen are stand-ins there; a
view shows none of them).

Everything a user could observe (errors, events) is checked before it is
emitted.  A remote fault raises :class:`RemoteProtocolError` (or a subclass)
and leaves the session in ``ERROR`` for good: each later ``next_event`` raises
the same error again.  A local misuse raises :class:`LocalProtocolError` and
changes nothing.  ``session.waiting_for`` tells the transport which timeout
applies.  ``session.record()`` is the verifiable record so far.
"""

from __future__ import annotations

import dataclasses
import enum
import unicodedata
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi import __version__
from p2pkoikoi.engine import (
    Action,
    IllegalActionError,
    InputError,
    MatchState,
    RuleSet,
)
from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session import crypto, hidden_session, wire
from p2pkoikoi.session.code import ShortCode
from p2pkoikoi.session.errors import (
    CheatingError,
    LocalProtocolError,
    ProtocolError,
    RefusedError,
    RemoteProtocolError,
    ResumeError,
    RulesMismatchError,
    WrongSecretError,
)
from p2pkoikoi.session.events import (
    NEED_DATA,
    AcceptRules,
    ActionReceived,
    ChatReceived,
    ConnectionClosed,
    DeclineRematch,
    DeclineRules,
    Event,
    Goodbye,
    HandshakeComplete,
    MatchOver,
    MatchStarted,
    NeedData,
    OfferRematch,
    PeerResigned,
    Ping,
    Pong,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    Resign,
    Resumed,
    RulesProposed,
    SendAction,
    SendChat,
    SendEvent,
)
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.pake import Pake
from p2pkoikoi.session.record import (
    RESIGN_TEXTS,
    TIME_FORFEIT,
    ActionRecord,
    Evidence,
    ForfeitRecord,
    PlayerRecord,
    Record,
    ResultRecord,
    resign_reason,
)
from p2pkoikoi.session.resume import ResumePoint

MIN_ENTROPY: Final = 64
#: unread bytes we hold at most; a well-behaved peer never comes close
MAX_BUFFER: Final = 4 * (wire.MAX_FRAME + wire.HEADER)
SECRET_MIN: Final = 16


class Role(enum.Enum):
    HOST = "host"
    JOINER = "joiner"

    # Members are equal only to themselves, so they may hash by identity too: Enum's
    # own hash is a Python call (the name's hash), and roles key the signature maps
    # that the record journal reads after every step.
    __hash__ = object.__hash__

    @property
    def seat(self) -> int:
        return 0 if self is Role.HOST else 1

    @property
    def other(self) -> Role:
        return Role.JOINER if self is Role.HOST else Role.HOST


class State(enum.Enum):
    HELLO = "hello"  # waiting for the peer's hello
    AUTH = "auth"  # waiting for the peer's auth
    RULES = "rules"  # waiting for the joiner's decision on the rules
    SEED = "seed"  # commit-reveal in progress
    RESUME = "resume"  # a resumed connection: waiting for the peer's resume message
    PLAY = "play"
    FINISH = "finish"  # the match is over; waiting for the peer's final signature
    DONE = "done"  # both final signatures exchanged
    CLOSED = "closed"
    ERROR = "error"


class WaitingFor(enum.Enum):
    """What the session waits for: the transport applies the matching deadline."""

    PEER_HELLO = "peer_hello"
    PEER_AUTH = "peer_auth"
    LOCAL_RULES_DECISION = "local_rules_decision"  # our user must accept or decline
    PEER_RULES_DECISION = "peer_rules_decision"
    COMMIT = "commit"  # the host's commitment
    JOINER_VALUE = "joiner_value"
    REVEAL = "reveal"  # the host's reveal: a missing reveal is suspicious
    PEER_RESUME = "peer_resume"  # a resumed connection's first encrypted message
    PEER_ACTION = "peer_action"
    PEER_CARDS = "peer_cards"  # the hidden deal: a move the peer's program owes, no person's
    LOCAL_ACTION = "local_action"
    PEER_FINAL = "peer_final"  # the peer's signature over the final transcript
    NOTHING = "nothing"


def sanitize(text: str) -> str:
    """Drop control, format and separator characters other than plain spaces."""
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            continue
        out.append(" " if cat == "Zs" else ch)
    return "".join(out)


def check_name(name: str, error: type[ProtocolError]) -> None:
    """The rule for a player name (protocol/README.md section 4): 1..32 characters,
    none of Unicode categories Cc, Cf, Cs, Co, Cn, Zl, Zp, no space other than
    U+0020, no leading or trailing space."""
    clean = sanitize(name).strip()
    if not clean or clean != name or len(name) > wire.MAX_NAME:
        raise error(
            f"player name must be 1..{wire.MAX_NAME} printable characters without "
            "leading or trailing spaces"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Forfeit:
    """A match that ended because one player walked away (no engine result)."""

    seat: int  # who forfeits
    reason: str  # TIME_FORFEIT when the turn limit ran out
    sig: bytes  # the recording player's signature (crypto.forfeit_message)


def describe_diff(mine_rules: RuleSet, theirs_rules: RuleSet, mine: str, theirs: str) -> str:
    """Which presets the two sides play, then one differing setting per line."""
    from p2pkoikoi.engine.presets import describe_mismatch

    return describe_mismatch(mine_rules, theirs_rules, mine, theirs)


TAG_HIDDEN_SECRET: Final = b"p2pkoikoi/v2/hidden/secret\x00"


class Session:
    """One side of one connection.  See the module docstring."""

    def __init__(
        self,
        role: Role | str,
        *,
        identity_key: Ed25519PrivateKey,
        invite_secret: bytes | None = None,
        name: str,
        entropy: bytes,
        rules: RuleSet | None = None,
        expected_rules: RuleSet | None = None,
        code: ShortCode | None = None,
        turn_limit: int = wire.DEFAULT_TURN_LIMIT,
        program: str = __version__,
        _resume_secret: bytes | None = None,
    ) -> None:
        """One side of a new match.

        The host passes the invite's ``invite_secret`` and, when it also gave a
        short ``code``, that code: a joiner may use either.  A joiner passes the
        one it was given (``invite_secret`` or ``code``).  ``turn_limit`` (host):
        the seconds each player may take per decision, agreed in the handshake
        (0: none).  ``entropy``: at least 64 random bytes (bytes 0..31 the
        X25519 key, 32..63 the commit/joiner value; the PAKE's randomness is
        derived from all of it).
        """
        self.role = Role(role)
        if not isinstance(identity_key, Ed25519PrivateKey):
            raise LocalProtocolError("identity_key must be an Ed25519 private key")
        if invite_secret is not None and len(invite_secret) < SECRET_MIN:
            raise LocalProtocolError(f"the invite secret must be at least {SECRET_MIN} bytes")
        if _resume_secret is None:
            if self.role is Role.HOST and invite_secret is None:
                raise LocalProtocolError("the host needs its invite secret")
            if self.role is Role.JOINER and (invite_secret is None) == (code is None):
                raise LocalProtocolError("the joiner uses either an invite secret or a code")
        if len(entropy) < MIN_ENTROPY:
            raise LocalProtocolError(f"entropy must be at least {MIN_ENTROPY} bytes")
        if self.role is Role.HOST and rules is None:
            raise LocalProtocolError("the host must propose rules")
        if self.role is Role.HOST and expected_rules is not None:
            raise LocalProtocolError("expected_rules is for the joiner")
        if self.role is Role.JOINER and rules is not None:
            raise LocalProtocolError("the joiner does not propose rules (use expected_rules)")
        if isinstance(turn_limit, bool) or not 0 <= turn_limit <= wire.MAX_TURN_LIMIT:
            raise LocalProtocolError(f"the turn limit must be 0..{wire.MAX_TURN_LIMIT} seconds")
        check_name(name, LocalProtocolError)
        self.name = name
        self.program = program[: wire.MAX_PROGRAM]
        self._key = identity_key
        self._pub = crypto.public_bytes(identity_key)
        self._eph = crypto.x25519_private(bytes(entropy[:32]))
        self._my_value = bytes(entropy[32:64])
        # the hidden deal's match secret: never sent, never in the record (the .resume file)
        self.hidden_secret = crypto.sha256(TAG_HIDDEN_SECRET, bytes(entropy))
        self._hidden: HiddenMatch | None = None
        self._hidden_seen = (0, 0)  # (engine events, decisions) already reported
        self._evidence: Evidence | None = None
        self._expected = expected_rules
        self.rules: RuleSet | None = rules
        self._rules_bytes = rules.encode() if rules is not None else b""
        self.turn_limit = turn_limit if self.role is Role.HOST else 0
        self.code = code

        # the PAKE: which password(s) this side uses
        seed = crypto.sha256(b"p2pkoikoi/v2/pake-seed\x00", bytes(entropy))
        self.via: str
        if _resume_secret is not None:
            self.via, password = "resume", crypto.resume_password(_resume_secret)
        elif self.role is Role.JOINER and code is not None:
            self.via, password = "code", crypto.code_password(code)
        else:
            assert invite_secret is not None
            self.via, password = "invite", crypto.invite_password(bytes(invite_secret))
        self._pake = Pake(self.role.value, password, seed + b"main")
        self._pake_code: Pake | None = None
        if self.role is Role.HOST and code is not None and _resume_secret is None:
            self._pake_code = Pake("host", crypto.code_password(code), seed + b"code")

        self._state = State.HELLO
        self._error: ProtocolError | None = None
        self._in = bytearray()
        self._eof = False
        self._flooded = False  # the peer sent more than MAX_BUFFER unread bytes
        self._out = bytearray()
        self._events: deque[Event] = deque()
        self._send: crypto.Channel | None = None
        self._recv: crypto.Channel | None = None
        self._confirmed = False  # an authenticated frame from the peer has arrived
        self._sent_first = False  # our first encrypted frame (auth / resume) is queued
        self._hello_payload = self._make_hello(None)
        self._out += wire.encode_frame(self._hello_payload)

        self.session_id: bytes | None = None  # H0
        self.resume_secret: bytes | None = None  # what a reconnection proves it holds
        self._transcript = b""
        self._t_commit = b""
        self._t_reveal = b""
        self.peer_name: str | None = None
        self.peer_key: bytes | None = None
        self._auth_sigs: dict[Role, bytes] = {}
        self._start_sigs: dict[Role, bytes] = {}
        self._commit_sig: bytes | None = None
        self._accepted = False
        self._commitment: bytes | None = None
        self._host_value: bytes | None = None
        self._joiner_value: bytes | None = None
        self.seed: bytes | None = None
        self._match: MatchState | None = None
        self._seq = 0
        self._actions: list[ActionRecord] = []
        self._final_sigs: dict[Role, bytes] = {}
        self._result: ResultRecord | None = None
        self.forfeit: Forfeit | None = None
        #: why the peer's final signature is missing (set by the transport when it gives up)
        self.missing: str | None = None
        self.last_local_events: tuple[EngineEvent, ...] = ()
        # resuming (see Session.resume): transcript and state hash after each seq
        self._tx_at: list[bytes] = []
        self._hash_at: list[bytes] = []
        self._resume_id: bytes | None = None  # the match's session id when resuming
        self._resume_state = State.PLAY  # where a resumed session continues
        self._catchup: tuple[int, bytes] | None = None  # the peer's (seq, transcript)
        self.connection_id: bytes | None = None  # this connection's handshake hash
        # rematches (protocol/README.md section 13): which match of this connection
        self.match_number = 1
        self._previous: bytes | None = None  # the previous match's final transcript
        self._again_value: bytes | None = None  # our value once we offered/accepted
        self._again_peer = False  # the peer offered (or accepted) the next match

    def _make_hello(self, resume: bytes | None) -> bytes:
        host = self.role is Role.HOST
        return wire.encode_message(
            wire.HelloMsg(
                role=self.role.value,
                program=self.program,
                eph=crypto.x25519_public(self._eph),
                pake=self._pake.message,
                pake_code=self._pake_code.message if self._pake_code is not None else None,
                via=None if host else self.via,
                resume=resume,
            )
        )

    # ------------------------------------------------------------------ properties
    @property
    def state(self) -> State:
        return self._state

    @property
    def is_hidden(self) -> bool:
        """A hidden-deal match has started (its deal secret must go to the .resume file)."""
        return self._hidden is not None

    @property
    def our_seat(self) -> int:
        return self.role.seat

    @property
    def match(self) -> MatchState | None:
        """The current engine state once the match has started."""
        return self._match

    @property
    def seq(self) -> int:
        """The sequence number of the last action applied (0 before the first)."""
        return self._seq

    @property
    def transcript_hash(self) -> bytes:
        return self._transcript

    @property
    def catching_up(self) -> bool:
        """After a resume, the peer is ahead and is re-sending the actions we lack:
        local actions wait (the state is not the live one yet)."""
        return self._catchup is not None

    @property
    def error(self) -> ProtocolError | None:
        return self._error

    @property
    def waiting_for(self) -> WaitingFor:
        st, host = self._state, self.role is Role.HOST
        if st is State.HELLO:
            return WaitingFor.PEER_HELLO
        if st is State.AUTH:
            return WaitingFor.PEER_AUTH
        if st is State.RESUME:
            return WaitingFor.PEER_RESUME
        if st is State.RULES:
            return WaitingFor.PEER_RULES_DECISION if host else WaitingFor.LOCAL_RULES_DECISION
        if st is State.SEED:
            if host:
                return WaitingFor.JOINER_VALUE
            return WaitingFor.COMMIT if self._commitment is None else WaitingFor.REVEAL
        if st is State.PLAY:
            assert self._match is not None
            if self._hidden is not None:
                due = self._hidden.expecting
                if due == ("act", self.our_seat):
                    return WaitingFor.LOCAL_ACTION
                if due is not None and due[1] != self.our_seat and due[0] != "act":
                    return WaitingFor.PEER_CARDS
                return WaitingFor.PEER_ACTION
            if self._match.to_act == self.our_seat:
                return WaitingFor.LOCAL_ACTION
            return WaitingFor.PEER_ACTION
        if st is State.FINISH:
            return WaitingFor.PEER_FINAL
        return WaitingFor.NOTHING

    # ------------------------------------------------------------------ output
    def data_to_send(self) -> bytes:
        """All bytes queued by the session itself; write them to the peer in order."""
        out = bytes(self._out)
        self._out.clear()
        return out

    def _queue(self, msg: wire.Message) -> None:
        assert self._send is not None
        self._out += wire.encode_frame(self._send.seal(wire.encode_message(msg)))

    # ------------------------------------------------------------------ input
    def receive_data(self, data: bytes) -> None:
        """Bytes read from the peer; ``b""`` means the stream ended."""
        if self._eof:
            if data:
                raise LocalProtocolError("receive_data after end of stream")
            return
        if not data:
            self._eof = True
            return
        if self._state in (State.ERROR, State.CLOSED) or self._flooded:
            return  # nothing more is read
        self._in += data
        if len(self._in) >= wire.HEADER:
            try:
                wire.frame_length(bytes(self._in[: wire.HEADER]))
            except RemoteProtocolError:
                del self._in[wire.HEADER :]  # never buffer a frame we will reject
        if len(self._in) > MAX_BUFFER:
            # More unread bytes than a transport that drains events after each read
            # ever holds: a flood, however it is framed.  Keep none of it, and let
            # next_event refuse the peer (after the events already decoded).
            self._in.clear()
            self._flooded = True

    def next_event(self) -> Event | NeedData:
        """The next event, or :data:`NEED_DATA`; raises the protocol's errors."""
        if self._error is not None:
            raise self._error
        try:
            return self._next_event()
        except ProtocolError as exc:
            self._fail(exc)
            raise

    def _fail(self, exc: ProtocolError) -> None:
        if self._error is not None:
            return
        self._error = exc
        if (
            isinstance(exc, RemoteProtocolError)
            and not isinstance(exc, RulesMismatchError)
            and self._state is not State.CLOSED
        ):
            abort = wire.AbortMsg(reason=str(exc)[: wire.MAX_REASON])
            if self._send is not None and self._confirmed:
                self._queue(abort)
            else:  # the peer may not share our keys yet: say it in plaintext
                self._out += wire.encode_frame(wire.encode_message(abort))
        if self.forfeit is None:
            self._note_forfeit()
        self._state = State.ERROR
        self._in.clear()

    @property
    def lacks_peer_final(self) -> bool:
        """We signed the result; the peer's final signature has not arrived."""
        return self._result is not None and self.role.other not in self._final_sigs

    @property
    def joiner_started(self) -> bool:
        """The joiner's start signature has arrived (so it has the reveal)."""
        return Role.JOINER in self._start_sigs

    def peer_gone(self) -> None:
        """The transport gave up on the peer (a deadline passed, the connection broke):
        if that happened between the joiner's value and the host's reveal, the
        host forfeits (:attr:`forfeit`, and in the record)."""
        self._note_forfeit()

    def peer_withheld(self, reason: str) -> None:
        """The transport's deadline for a move of the hidden deal that the peer's
        program owes (a deck step, keys, a declaration, a draw key, an audit:
        :attr:`WaitingFor.PEER_CARDS`) passed: the peer forfeits (protocol/hidden-deal.md
        section 7), in :attr:`forfeit` and in the record."""
        if self.forfeit is None and self.waiting_for is WaitingFor.PEER_CARDS:
            self._record_forfeit(self.role.other.seat, reason[:200])

    def _note_forfeit(self) -> None:
        """An end between the joiner's value and the host's reveal is the host's forfeit."""
        if (
            self.forfeit is None
            and self._state is State.SEED
            and self._joiner_value is not None
            and self.seed is None
        ):
            self._record_forfeit(
                0, "the host stopped after the joiner's value, before revealing its own"
            )

    def _record_forfeit(self, seat: int, reason: str) -> None:
        """We record the other player's forfeit, signed by us over the transcript so far."""
        sig = crypto.sign(self._key, crypto.forfeit_message(self._transcript, seat, reason))
        self.forfeit = Forfeit(seat, reason, sig)

    def claim_time_forfeit(self) -> None:
        """The peer let its turn limit pass (the transport measured it, with a grace
        for latency): the match ends as the peer's forfeit by time.

        Records ``forfeit {seat: peer, reason: "time"}`` signed by us, queues an
        ``abort`` saying so (the peer's last chance to learn why) and closes the
        session: nothing it sends afterwards counts.
        """
        m = self._match
        if (
            self._state is not State.PLAY
            or m is None
            or m.to_act == self.our_seat
            or self._catchup is not None
        ):
            raise LocalProtocolError("a forfeit by time needs the peer's turn during play")
        self._record_forfeit(self.role.other.seat, TIME_FORFEIT)
        limit = self.turn_limit
        self._queue(wire.AbortMsg(reason=f"your time ran out ({limit}s per decision): you forfeit"))
        self._state = State.CLOSED
        self._in.clear()

    def _next_event(self) -> Event | NeedData:
        while True:
            if self._events:
                return self._events.popleft()
            if self._state is State.CLOSED:
                return NEED_DATA
            if self._flooded:
                raise RemoteProtocolError("the peer sent too much data at once")
            if len(self._in) >= wire.HEADER:
                length = wire.frame_length(bytes(self._in[: wire.HEADER]))
                if len(self._in) >= wire.HEADER + length:
                    payload = bytes(self._in[wire.HEADER : wire.HEADER + length])
                    del self._in[: wire.HEADER + length]
                    self._handle_frame(payload)
                    continue
            if self._eof:
                if self._in:
                    raise RemoteProtocolError("connection closed in the middle of a frame")
                clean = self._state is State.DONE
                self._note_forfeit()
                self._state = State.CLOSED
                reason = "the connection ended" if clean else "the connection ended early"
                return ConnectionClosed(clean=clean, reason=reason)
            return NEED_DATA

    # ------------------------------------------------------------------ frames
    def _handle_frame(self, payload: bytes) -> None:
        if self._state is State.HELLO:
            msg = wire.decode_message(payload)
            if isinstance(msg, wire.RefuseMsg):
                reason = sanitize(msg.reason) or "no reason given"
                self._state = State.CLOSED
                raise RefusedError(f"the other side refused the connection: {reason}")
            if isinstance(msg, wire.AbortMsg):
                self._on_abort(msg)
            if not isinstance(msg, wire.HelloMsg):
                raise RemoteProtocolError(
                    f"bad message from peer: expected hello, got {wire.TYPE_NAMES[type(msg)]}"
                )
            self._on_hello(msg, payload)
            return
        if self._recv is None:  # we have not sent... (cannot happen: keys come with the hello)
            raise RemoteProtocolError("bad message from peer: nothing may follow the hello yet")
        if not self._confirmed:
            msg = self._first_frame(payload)
        else:
            msg = wire.decode_message(self._recv.open(payload))
        handler = _HANDLERS.get(type(msg))
        if handler is None:  # a second hello, a refuse
            raise RemoteProtocolError(
                f"bad message from peer: unexpected {wire.TYPE_NAMES[type(msg)]}"
            )
        handler(self, msg)

    def _first_frame(self, payload: bytes) -> wire.Message:
        """The peer's first frame after the hellos: its decrypting proves the password.

        It must be ``auth`` (``resume`` on a resumed connection): nothing else,
        so its AEAD counter is always 0.  A frame that does not decrypt is a
        wrong password, unless it is a plaintext ``abort`` (an error the peer
        met before it had keys: reported, not counted as a guess).
        """
        assert self._recv is not None
        try:
            plain = self._recv.open(payload)
        except RemoteProtocolError:
            try:
                early = wire.decode_message(payload)
            except RemoteProtocolError:
                early = None
            if isinstance(early, wire.AbortMsg):
                self._on_abort(early)
            raise self._wrong_secret() from None
        self._confirmed = True
        msg = wire.decode_message(plain)
        first = wire.ResumeMsg if self._resume_id is not None else wire.AuthMsg
        if not isinstance(msg, first | wire.AbortMsg):
            raise RemoteProtocolError(
                f"bad message from peer: expected {wire.TYPE_NAMES[first]} first, "
                f"got {wire.TYPE_NAMES[type(msg)]}"
            )
        return msg

    def _wrong_secret(self) -> WrongSecretError:
        if self.role is Role.JOINER:
            what = {"code": "code", "invite": "invite", "resume": "match"}[self.via]
            return WrongSecretError(
                f"the host's first message does not decrypt: it does not hold this {what}'s "
                "secret (a wrong code or invite, or not the host you meant)",
                self.via,
            )
        text = {
            "code": "the code does not match: check it with the host (each wrong code is "
            "counted, and after a few the host needs a new one)",
            "invite": "the joiner does not hold this invite's secret (its first message does "
            "not decrypt)",
            "resume": "the reconnecting side does not hold this match's resume secret",
        }[self.via]
        return WrongSecretError(text, self.via)

    def _unexpected(self, what: str) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"unexpected {what} message from peer during {self._state.value}"
        )

    def _on_hello(self, msg: wire.HelloMsg, payload: bytes) -> None:
        if msg.role == self.role.value:
            raise RemoteProtocolError(f"both players claim to be the {msg.role}")
        host = self.role is Role.HOST
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
        elif not host and self.via == "code":
            if msg.pake_code is None:
                raise RemoteProtocolError(
                    "the host does not accept a code now: ask it for a new code, or for the invite"
                )
            peer_message = msg.pake_code
        if host:
            assert msg.via is not None
            self.via = msg.via
        pake_key = pake.finish(peer_message)
        if host:
            h0 = crypto.handshake_hash(self._hello_payload, payload)
        else:
            h0 = crypto.handshake_hash(payload, self._hello_payload)
        shared = crypto.shared_secret(self._eph, msg.eph)
        k_h2j, k_j2h = crypto.derive_keys(pake_key, shared, h0)
        self._send = crypto.Channel(k_h2j if host else k_j2h)
        self._recv = crypto.Channel(k_j2h if host else k_h2j)
        self.connection_id = h0
        if self._resume_id is not None:
            self._state = State.RESUME
            if not host:  # the joiner proves the secret first; the host answers after
                self._send_resume(h0)
            return
        self.session_id = h0
        self.resume_secret = crypto.derive_resume_secret(pake_key, shared, h0)
        self._state = State.AUTH
        if not host:  # the joiner's auth is the key confirmation the host waits for
            self._send_auth()

    def _send_auth(self) -> None:
        assert self.session_id is not None
        sig = crypto.sign(
            self._key,
            crypto.auth_message(
                self.session_id,
                self.role.value,
                self.name,
                self._pub,
                self._rules_bytes,
                self.turn_limit,
            ),
        )
        self._auth_sigs[self.role] = sig
        if self.role is Role.HOST:
            assert self.rules is not None
            auth = wire.AuthMsg(
                name=self.name,
                key=self._pub,
                sig=sig,
                rules=self._rules_bytes,
                fp=self.rules.fingerprint(),
                rounds=self.rules.rounds,
                turn_limit=self.turn_limit,
            )
        else:
            auth = wire.AuthMsg(name=self.name, key=self._pub, sig=sig)
        self._queue(auth)
        self._sent_first = True

    # ------------------------------------------------------------------ resume
    @classmethod
    def resume(
        cls,
        point: ResumePoint | Record,
        role: Role | str,
        *,
        identity_key: Ed25519PrivateKey,
        resume_secret: bytes,
        entropy: bytes,
        program: str = __version__,
        hidden_secret: bytes | None = None,
    ) -> Session:
        """A session that continues the match of ``point`` on a new connection.

        ``point`` is our own record of a started match (``session.record()``, or
        the file after a crash), verified and replayed once
        (:meth:`ResumePoint.from_record`; a plain record is verified here).  The
        new connection runs the resume handshake (a hello carrying the match's
        session id, fresh ephemeral keys, SPAKE2 with the match's
        ``resume_secret``, then a signed ``resume`` message each) and play
        continues where both records agree.  A finished record resumes too (in
        ``DONE``): it re-sends our final signature to a peer that lacks it.
        Raises :class:`LocalProtocolError` when the record cannot be resumed.

        A hidden-deal match also needs ``hidden_secret``, this side's secret for
        the deal (``session.hidden_secret``, kept in the .resume file, never in
        the record): the table is rebuilt from the record by making our own
        moves again with it (:func:`hidden_session.rebuild`).
        """
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
        self = cls(
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
        self._resume_id = r.session_id
        self._hello_payload = self._make_hello(r.session_id)
        self._out = bytearray(wire.encode_frame(self._hello_payload))
        self.session_id = r.session_id
        self.resume_secret = resume_secret
        self.rules = r.rules
        self._rules_bytes = r.rules.encode()
        self.turn_limit = r.turn_limit
        self.peer_name, self.peer_key = peer.name, peer.key
        for rl, p in ((Role.HOST, r.host), (Role.JOINER, r.joiner)):
            if p.auth_sig is not None:
                self._auth_sigs[rl] = p.auth_sig
            if p.start_sig is not None:
                self._start_sigs[rl] = p.start_sig
        self._accepted = True
        self._commitment, self._commit_sig = r.commitment, r.commit_sig
        self._host_value, self._joiner_value = r.host_value, r.joiner_value
        self._t_commit = point.t_commit
        self._t_reveal = point.t_reveal
        self.match_number, self._previous = r.match_number, r.previous
        self.seed = r.match_seed
        if r.rules.deal is DealMode.HIDDEN:
            assert hidden_secret is not None
            self.hidden_secret = bytes(hidden_secret)
            self._transcript = point.t_reveal
            hidden_session.rebuild(self, r)  # every card move again, committed one by one
        else:
            self._match = point.match
            self._actions = list(r.actions)
            self._seq = r.actions[-1].seq if r.actions else 0
            self._transcript = point.tx_at[-1]
            self._tx_at, self._hash_at = list(point.tx_at), list(point.hash_at)
        if r.result is not None:
            self._result = r.result
            for rl in Role:
                sig = r.final_sigs[rl.seat]
                if sig is not None:
                    self._final_sigs[rl] = sig
            self._resume_state = State.DONE if r.is_complete else State.FINISH
        elif self._hidden.is_over if self._hidden is not None else point.match.is_over:
            # we crashed between the last action and our final signature
            self._finish(queue=False)  # the over message goes out after the resume handshake
            self._resume_state = State.FINISH
        self._state = State.HELLO
        return self

    def _send_resume(self, h_resume: bytes) -> None:
        assert self.session_id is not None
        seq, tx, h = self._seq, self._transcript, self._hash_at[self._seq]
        msg = crypto.resume_message(h_resume, self.role.value, self.session_id, seq, tx, h)
        self._queue(wire.ResumeMsg(seq=seq, tx=tx, hash=h, sig=crypto.sign(self._key, msg)))
        self._sent_first = True
        mine = self._start_sigs.get(self.role)
        if self.role is Role.JOINER and mine is not None:
            self._queue(wire.StartMsg(sig=mine))  # the host may lack it: sent again

    def _on_resume(self, msg: wire.ResumeMsg) -> None:
        if self._state is not State.RESUME:
            raise self._unexpected("resume")
        assert self.connection_id and self.session_id and self.peer_key
        signed = crypto.resume_message(
            self.connection_id, self.role.other.value, self.session_id, msg.seq, msg.tx, msg.hash
        )
        if not crypto.verify_sig(self.peer_key, msg.sig, signed):
            raise ResumeError(
                "the reconnecting player is not the one this match was played with "
                "(its identity signature fails): refused"
            )
        if msg.seq <= self._seq:
            if self._tx_at[msg.seq] != msg.tx or self._hash_at[msg.seq] != msg.hash:
                raise ResumeError(
                    f"the two records disagree at action {msg.seq}: the match cannot resume"
                )
        elif self._result is not None:
            raise ResumeError("the other player claims actions after the end of the match")
        else:
            self._catchup = (msg.seq, msg.tx)
        if not self._sent_first:  # the host answers once the joiner proved the secret
            self._send_resume(self.connection_id)
        self._state = self._resume_state
        self._events.append(Resumed(self._seq, msg.seq))
        for a in self._actions[msg.seq :]:  # we are ahead: re-send what the peer lacks
            reason = resign_reason(a.action)
            if a.kind:
                self._queue(
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
                self._queue(wire.ResignMsg(seq=a.seq, sig=a.sig, reason=reason or None))
            else:
                self._queue(
                    wire.ActionMsg(seq=a.seq, action=a.action, hash=a.state_hash, sig=a.sig)
                )
        if self._hidden is not None and self._result is None and self._catchup is None:
            self._pump_hidden()  # moves our table made after the last one in the record
        mine = self._final_sigs.get(self.role)
        if self._result is not None and mine is not None:
            r = self._result
            self._queue(
                wire.OverMsg(
                    hash=r.final_state_hash,
                    tx=r.transcript_hash,
                    scores=r.scores,
                    winner=r.winner,
                    sig=mine,
                )
            )
            if self.role.other in self._final_sigs:
                self._state = State.DONE

    def _on_auth(self, msg: wire.AuthMsg) -> None:
        if self._state is not State.AUTH:
            raise self._unexpected("auth")
        assert self.session_id is not None
        peer = self.role.other
        check_name(msg.name, RemoteProtocolError)
        if peer is Role.HOST:
            if msg.rules is None or msg.fp is None or msg.rounds is None or msg.turn_limit is None:
                raise RemoteProtocolError("bad auth message from host: it lacks the rules")
            rules = self._decode_rules(msg.rules, "host")
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
            self.session_id, peer.value, msg.name, msg.key, peer_rules, peer_limit
        )
        if not crypto.verify_sig(msg.key, msg.sig, signed):
            raise RemoteProtocolError(
                "the other player's identity signature is invalid: "
                "the connection may be under attack"
            )
        self.peer_name, self.peer_key = msg.name, msg.key
        self._auth_sigs[peer] = msg.sig
        if peer is Role.HOST:
            self.rules = rules
            self._rules_bytes = peer_rules
            self.turn_limit = peer_limit
        else:  # the joiner proved the password and its identity: now the host speaks
            self._send_auth()
        host_name = self.name if self.role is Role.HOST else msg.name
        host_key = self._pub if self.role is Role.HOST else msg.key
        join_name = msg.name if self.role is Role.HOST else self.name
        join_key = msg.key if self.role is Role.HOST else self._pub
        t = crypto.transcript_start(self.session_id)
        t = crypto.absorb(
            t, "auth", "host", host_name, host_key, self._rules_bytes, self.turn_limit
        )
        self._transcript = crypto.absorb(t, "auth", "joiner", join_name, join_key, b"", 0)
        self._state = State.RULES
        if self.role is Role.JOINER:
            assert self.rules is not None
            if self._expected is None:
                self._events.append(
                    RulesProposed(
                        rules=self.rules,
                        fingerprint=self.rules.fingerprint(),
                        rounds=self.rules.rounds,
                        peer_name=msg.name,
                        peer_key=msg.key,
                        peer_fingerprint=crypto.fingerprint(msg.key),
                        turn_limit=self.turn_limit,
                    )
                )
            else:
                diff = self._expected.diff(self.rules)
                if diff:
                    text = describe_diff(
                        self._expected, self.rules, "you expect", "the host proposes"
                    )
                    self._queue(
                        wire.DeclineMsg(
                            reason=f"rules differ: {text}"[: wire.MAX_REASON],
                            expected=self._expected.encode(),
                        )
                    )
                    raise RulesMismatchError(f"the host's rules differ from yours:\n{text}")
                self._accept()

    def _decode_rules(self, data: bytes, who: str) -> RuleSet:
        try:
            rules = RuleSet.decode(data)
        except InputError as exc:
            raise RulesMismatchError(
                f"cannot read the {who}'s rules ({exc}); both players need the same release"
            ) from None
        if rules.encode() != data:
            raise RemoteProtocolError(f"bad rules from the {who}: not in canonical form")
        return rules

    def _handshake_event(self) -> HandshakeComplete:
        assert self.peer_name is not None and self.peer_key is not None and self.rules
        return HandshakeComplete(
            peer_name=self.peer_name,
            peer_key=self.peer_key,
            peer_fingerprint=crypto.fingerprint(self.peer_key),
            rules=self.rules,
        )

    def _accept(self) -> None:
        assert self.rules is not None
        fp = self.rules.fingerprint()
        self._queue(wire.AcceptMsg(fp=fp))
        self._transcript = crypto.absorb(self._transcript, "accept", fp)
        self._t_commit = self._transcript
        self._accepted = True
        self._state = State.SEED
        self._events.append(self._handshake_event())

    def _on_accept(self, msg: wire.AcceptMsg) -> None:
        if self._state is not State.RULES or self.role is not Role.HOST:
            raise self._unexpected("accept")
        assert self.rules is not None
        if msg.fp != self.rules.fingerprint():
            raise RemoteProtocolError("the joiner accepted rules other than the ones proposed")
        self._transcript = crypto.absorb(self._transcript, "accept", msg.fp)
        self._t_commit = self._transcript
        self._accepted = True
        self._state = State.SEED
        self._events.append(self._handshake_event())
        self._send_commit()

    def _send_commit(self) -> None:
        self._host_value = self._my_value
        self._commitment = crypto.commitment(self._t_commit, self._host_value)
        self._transcript = crypto.absorb(self._transcript, "commit", self._commitment)
        # signed, so the joiner holds evidence of it if the host walks away before revealing
        self._commit_sig = crypto.sign(self._key, crypto.commit_sig_message(self._transcript))
        self._queue(wire.CommitMsg(c=self._commitment, sig=self._commit_sig))

    def _on_decline(self, msg: wire.DeclineMsg) -> None:
        if self._state is not State.RULES or self.role is not Role.HOST:
            raise self._unexpected("decline")
        assert self.rules is not None
        if msg.expected is not None:
            try:
                expected = RuleSet.decode(msg.expected)
            except InputError:
                expected = None
            if expected is not None and self.rules.diff(expected):
                text = describe_diff(self.rules, expected, "you propose", "the joiner expects")
                raise RulesMismatchError(f"the joiner expects other rules:\n{text}")
        reason = sanitize(msg.reason) or "no reason given"
        raise RulesMismatchError(f"the joiner declined the rules: {reason}")

    def _on_commit(self, msg: wire.CommitMsg) -> None:
        if self._state is not State.SEED or self.role is not Role.JOINER or self._commitment:
            raise self._unexpected("commit")
        assert self.peer_key is not None
        t = crypto.absorb(self._transcript, "commit", msg.c)
        if not crypto.verify_sig(self.peer_key, msg.sig, crypto.commit_sig_message(t)):
            raise CheatingError("the host's signature on its commitment is invalid (forged)")
        self._commitment, self._commit_sig, self._transcript = msg.c, msg.sig, t
        self._joiner_value = self._my_value
        self._queue(wire.ValueMsg(r=self._joiner_value))
        self._transcript = crypto.absorb(self._transcript, "value", self._joiner_value)

    def _on_value(self, msg: wire.ValueMsg) -> None:
        if self._state is not State.SEED or self.role is not Role.HOST or self._joiner_value:
            raise self._unexpected("value")
        assert self._host_value is not None
        self._joiner_value = msg.r
        self._transcript = crypto.absorb(self._transcript, "value", msg.r)
        self._transcript = crypto.absorb(self._transcript, "reveal", self._host_value)
        self._t_reveal = self._transcript
        sig = crypto.sign(self._key, crypto.start_message(self._transcript))
        self._start_sigs[Role.HOST] = sig
        self._queue(wire.RevealMsg(r=self._host_value, sig=sig))
        self._start_match()

    def _on_reveal(self, msg: wire.RevealMsg) -> None:
        if self._state is not State.SEED or self.role is not Role.JOINER or not self._joiner_value:
            raise self._unexpected("reveal")
        if crypto.commitment(self._t_commit, msg.r) != self._commitment:
            raise CheatingError(
                "the host's reveal does not open its commitment: the host tried to "
                "change its random value (cheating) - the match is void"
            )
        assert self.peer_key is not None
        t = crypto.absorb(self._transcript, "reveal", msg.r)
        if not crypto.verify_sig(self.peer_key, msg.sig, crypto.start_message(t)):
            raise CheatingError("the host's start signature is invalid (forged)")
        self._host_value, self._transcript, self._t_reveal = msg.r, t, t
        self._start_sigs[Role.HOST] = msg.sig
        mine = crypto.sign(self._key, crypto.start_message(t))
        self._start_sigs[Role.JOINER] = mine
        self._queue(wire.StartMsg(sig=mine))  # before any action of ours
        self._start_match()

    def _on_start(self, msg: wire.StartMsg) -> None:
        """The joiner's signature over the transcript after the reveal (host side)."""
        if self.role is not Role.HOST or self._state not in (State.PLAY, State.FINISH, State.DONE):
            raise self._unexpected("start")
        have = self._start_sigs.get(Role.JOINER)
        if have is not None:
            if have != msg.sig:
                raise RemoteProtocolError("the joiner sent a different start signature")
            return  # sent again after a resume
        assert self.peer_key is not None
        if not crypto.verify_sig(self.peer_key, msg.sig, crypto.start_message(self._t_reveal)):
            raise CheatingError("the joiner's start signature is invalid (forged)")
        self._start_sigs[Role.JOINER] = msg.sig

    def _start_match(self) -> None:
        assert self.rules and self._host_value and self._joiner_value
        self.seed = crypto.derive_seed(self._host_value, self._joiner_value, self._t_commit)
        if self.rules.deal is DealMode.HIDDEN:
            self._hidden = HiddenMatch(self.rules, self.seed, self.our_seat, self.hidden_secret)
            self._match = self._hidden.state
            self._hidden_seen = (len(self._hidden.events), 0)
            self._tx_at, self._hash_at = [self._transcript], [self._hidden.initial_hash]
            self._state = State.PLAY
            self._events.append(
                MatchStarted(self.seed, self._match.dealer, tuple(self._hidden.events))
            )
            self._pump_hidden()
            return
        self._match, events = MatchState.start(self.rules, self.seed)
        self._tx_at, self._hash_at = [self._transcript], [self._match.state_hash()]
        self._state = State.PLAY
        self._events.append(MatchStarted(self.seed, self._match.dealer, events))
        if self._match.is_over:  # a one-round match whose deal gives a hand yaku
            self._finish()

    # ------------------------------------------------------------------ the hidden deal
    # (its moves, signed card messages, live in p2pkoikoi/session/hidden_session.py)
    def _pump_hidden(self) -> None:
        hidden_session.pump(self)

    def _commit_card(self, t: bytes, rec: ActionRecord) -> None:
        hidden = self._hidden
        assert hidden is not None
        self._commit_step(hidden.state, t, rec)

    def _on_card(self, msg: wire.CardMsg) -> None:
        hidden_session.on_card(self, msg)

    # ------------------------------------------------------------------ play
    def _check_turn(self, seq: int, what: str) -> tuple[MatchState, int, bytes]:
        """The state, the acting seat and its identity key for a received action.

        Normally the peer's turn; while catching up after a resume, also our own
        actions that the peer re-sends: we lost them from the end of our record
        (a crash before the journal reached the disk) but signed them, and the
        peer holds them (protocol/README.md section 12).
        """
        if self._state is not State.PLAY:
            raise self._unexpected(what)
        if self.role is Role.HOST and Role.JOINER not in self._start_sigs:
            raise RemoteProtocolError(f"the joiner sent {what} {seq} before its start signature")
        m = self._match
        assert m is not None and self.peer_key is not None
        if self._hidden is not None:  # the hidden deal: whose decision the table waits for
            due = self._hidden.expecting
            seat = due[1] if due is not None and due[0] == "act" else None
        else:
            seat = m.to_act
        if seat == self.role.other.seat:
            key = self.peer_key
        elif seat is not None and self._catchup is not None and seq <= self._catchup[0]:
            key = self._pub
        else:
            raise RemoteProtocolError(f"the other player sent {what} {seq} out of turn")
        if seq != self._seq + 1:
            raise RemoteProtocolError(
                f"wrong sequence number on {what}: expected {self._seq + 1}, got {seq}"
            )
        return m, seat, key

    def _on_action(self, msg: wire.ActionMsg) -> None:
        if self._hidden is not None:  # with the hidden deal, decisions are card moves
            raise RemoteProtocolError(
                "bad message from peer: an action message in a hidden-deal match"
            )
        m, seat, key = self._check_turn(msg.seq, "action")
        action = _parse_canonical(msg.seq, msg.action)
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
        t = crypto.absorb_action(self._transcript, msg.seq, seat, msg.action, msg.hash)
        if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
            raise CheatingError(f"the signature on action {msg.seq} is invalid (forged)")
        self._commit_step(new, t, ActionRecord(msg.seq, seat, msg.action, msg.hash, msg.sig))
        self._events.append(ActionReceived(msg.seq, action, events, seat))
        if new.is_over:
            self._finish()

    def _on_resign(self, msg: wire.ResignMsg) -> None:
        m, seat, key = self._check_turn(msg.seq, "resign")
        reason = msg.reason or ""
        if self._hidden is not None:
            # (its events go out in PeerResigned; no hidden report follows the end)
            events = self._hidden.resign(seat)
            new = self._hidden.state
            h = self._hidden.state_hash()
        else:
            new, events = m.resign(seat)
            h = new.state_hash()
        t = crypto.absorb(
            self._transcript, "resign", *crypto.resign_fields(msg.seq, seat, h, reason)
        )
        if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
            raise CheatingError(f"the signature on resignation {msg.seq} is invalid (forged)")
        text = RESIGN_TEXTS[reason]
        self._commit_step(new, t, ActionRecord(msg.seq, seat, text, h, msg.sig))
        self._events.append(PeerResigned(msg.seq, seat, events, reason))
        self._finish()

    def _commit_step(self, new: MatchState, t: bytes, rec: ActionRecord) -> None:
        self._match = new
        self._transcript = t
        self._seq = rec.seq
        self._actions.append(rec)
        self._tx_at.append(t)
        self._hash_at.append(rec.state_hash)
        if self._catchup is not None and rec.seq >= self._catchup[0]:
            target, tx = self._catchup
            self._catchup = None
            if rec.seq == target and t != tx:
                raise ResumeError(
                    f"after catching up to action {target} the transcripts differ: "
                    "the match cannot resume"
                )

    def _finish(self, *, queue: bool = True) -> None:
        m = self._match
        assert m is not None and m.is_over
        h = m.state_hash() if self._hidden is None else self._hidden.state_hash()
        self._result = ResultRecord(m.scores, m.winner, h, self._transcript)
        sig = crypto.sign(self._key, crypto.final_message(self._transcript, h))
        self._final_sigs[self.role] = sig
        self._state = State.FINISH
        if not queue:
            return
        self._queue(
            wire.OverMsg(hash=h, tx=self._transcript, scores=m.scores, winner=m.winner, sig=sig)
        )

    def _on_over(self, msg: wire.OverMsg) -> None:
        if self._state is State.DONE and msg.sig == self._final_sigs.get(self.role.other):
            return  # re-sent after a resume: we have it already
        if self._state is not State.FINISH:
            raise self._unexpected("over")
        assert self._result is not None and self.peer_key is not None
        r = self._result
        if msg.tx != r.transcript_hash:
            raise RemoteProtocolError("the final transcripts differ: the match records disagree")
        if msg.hash != r.final_state_hash:
            raise RemoteProtocolError("the final state hashes differ")
        if tuple(msg.scores) != r.scores or msg.winner != r.winner:
            raise RemoteProtocolError("the other player reports a different result")
        if not crypto.verify_sig(self.peer_key, msg.sig, crypto.final_message(msg.tx, msg.hash)):
            raise CheatingError("the other player's final signature is invalid (forged)")
        self._final_sigs[self.role.other] = msg.sig
        self._state = State.DONE
        self._events.append(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))

    # ------------------------------------------------------------------ rematch
    def _on_again(self, msg: wire.AgainMsg) -> None:
        if self._state is not State.DONE or self._again_peer:
            raise self._unexpected("again")
        assert self._result is not None
        if msg.n != self.match_number + 1:
            raise RemoteProtocolError(
                f"the other player offers match {msg.n} of this connection; the next is "
                f"{self.match_number + 1}"
            )
        if msg.tx != self._result.transcript_hash:
            raise RemoteProtocolError(
                "the other player's rematch offer follows another match (final transcripts differ)"
            )
        self._again_peer = True
        if self._again_value is not None:  # our offer, answered (or crossed): play
            self._begin_rematch()
        else:
            self._events.append(RematchOffered(msg.n))

    def _on_no_again(self, msg: wire.NoAgainMsg) -> None:
        if self._state is not State.DONE or self._again_value is None:
            raise self._unexpected("no_again")
        self._again_value = None
        reason = sanitize(msg.reason).strip() or "no reason given"
        self._events.append(RematchDeclined(reason))

    def _send_again(self, event: OfferRematch) -> None:
        if self._state is not State.DONE:
            raise LocalProtocolError("a rematch can be offered once both players signed the result")
        if self._again_value is not None:
            raise LocalProtocolError("the rematch is offered already: waiting for the answer")
        if len(event.entropy) < 32:
            raise LocalProtocolError("a rematch needs 32 random bytes")
        assert self._result is not None
        self._again_value = bytes(event.entropy[:32])
        self._queue(wire.AgainMsg(n=self.match_number + 1, tx=self._result.transcript_hash))
        if self._again_peer:
            self._begin_rematch()

    def _send_no_again(self, event: DeclineRematch) -> None:
        if self._state is not State.DONE or not self._again_peer:
            raise LocalProtocolError("there is no rematch offer to decline")
        self._again_peer = False
        reason = sanitize(event.reason)[: wire.MAX_REASON] or "declined"
        self._queue(wire.NoAgainMsg(reason=reason))

    def _begin_rematch(self) -> None:
        """Both want the next match: a fresh commit-reveal on the same keys, the same
        players in the same roles, the same rules; a new transcript chained to the
        last one (so each match has its own record, unspliceable)."""
        assert self._result is not None and self._again_value is not None
        assert self.session_id is not None and self.peer_name is not None
        previous = self._result.transcript_hash
        self.match_number += 1
        self._previous = previous
        self._my_value, self._again_value, self._again_peer = self._again_value, None, False
        self._start_sigs = {}
        self._commitment = self._commit_sig = None
        self._host_value = self._joiner_value = self.seed = None
        self._match = None
        self._seq = 0
        self._actions = []
        self._final_sigs = {}
        self._result = None
        self.forfeit = None
        self.missing = None
        self.last_local_events = ()
        self._tx_at, self._hash_at = [], []
        host = self.role is Role.HOST
        names = (self.name, self.peer_name) if host else (self.peer_name, self.name)
        assert self.peer_key is not None
        keys = (self._pub, self.peer_key) if host else (self.peer_key, self._pub)
        assert self.rules is not None
        t = crypto.rematch_start(self.session_id, self.match_number, previous)
        t = crypto.absorb(t, "auth", "host", names[0], keys[0], self._rules_bytes, self.turn_limit)
        t = crypto.absorb(t, "auth", "joiner", names[1], keys[1], b"", 0)
        self._transcript = crypto.absorb(t, "accept", self.rules.fingerprint())
        self._t_commit = self._transcript
        self._t_reveal = b""
        self._state = State.SEED
        self._events.append(RematchStarted(self.match_number, previous))
        if host:
            self._send_commit()

    # ------------------------------------------------------------------ side channel
    # No state check here: these arrive only through the keyed channel (after the
    # hello), and nothing is decoded after an error or a close (_next_event stops first).
    def _on_ping(self, msg: wire.PingMsg) -> None:
        self._events.append(Ping(msg.nonce))

    def _on_pong(self, msg: wire.PongMsg) -> None:
        self._events.append(Pong(msg.nonce))

    def _on_chat(self, msg: wire.ChatMsg) -> None:
        text = sanitize(msg.text).strip()
        if text:
            self._events.append(ChatReceived(text))

    def _on_abort(self, msg: wire.AbortMsg) -> None:
        reason = sanitize(msg.reason) or "no reason given"
        self._note_forfeit()
        self._state = State.CLOSED  # no abort back
        raise RemoteProtocolError(f"the other player's program stopped: {reason}")

    def _on_bye(self, msg: wire.ByeMsg) -> None:
        self._note_forfeit()
        clean = self._state is State.DONE
        self._state = State.CLOSED
        reason = "the other player left" + ("" if clean else " before the match ended")
        self._events.append(ConnectionClosed(clean=clean, reason=reason))

    # ------------------------------------------------------------------ sending
    def send(self, event: SendEvent) -> bytes:
        """Turn a local event into bytes; returns everything queued, in order."""
        if self._error is not None:
            raise LocalProtocolError(f"the session has failed: {self._error}")
        if self._state is State.CLOSED:
            raise LocalProtocolError("the session is closed")
        if isinstance(event, AcceptRules | DeclineRules):
            self._send_rules_decision(event)
        elif isinstance(event, SendAction):
            self._send_action(event.action)
        elif isinstance(event, Resign):
            if event.reason not in RESIGN_TEXTS:
                raise LocalProtocolError(f"unknown resignation reason {event.reason!r}")
            self._send_resign(event.reason)
        elif isinstance(event, SendChat):
            self._send_chat(event.text)
        elif isinstance(event, Ping | Pong):
            if not self._sent_first:
                raise LocalProtocolError("cannot ping before the handshake")
            if len(event.nonce) > wire.MAX_NONCE:
                raise LocalProtocolError(f"a ping nonce is at most {wire.MAX_NONCE} bytes")
            cls = wire.PingMsg if isinstance(event, Ping) else wire.PongMsg
            self._queue(cls(nonce=event.nonce))
        elif isinstance(event, OfferRematch):
            self._send_again(event)
        elif isinstance(event, DeclineRematch):
            self._send_no_again(event)
        elif isinstance(event, Goodbye):
            if self._sent_first:
                self._queue(wire.ByeMsg())
            self._state = State.CLOSED
        else:
            raise LocalProtocolError(f"cannot send {type(event).__name__}")
        return self.data_to_send()

    def _send_rules_decision(self, event: AcceptRules | DeclineRules) -> None:
        if self.role is not Role.JOINER or self._state is not State.RULES or self._expected:
            raise LocalProtocolError("there are no proposed rules to accept or decline")
        if isinstance(event, AcceptRules):
            self._accept()
        else:
            reason = sanitize(event.reason)[: wire.MAX_REASON] or "declined"
            self._queue(wire.DeclineMsg(reason=reason))
            self._state = State.CLOSED

    def _my_turn(self, what: str) -> MatchState:
        if self._state is not State.PLAY:
            raise LocalProtocolError(f"cannot {what}: the match is not in play")
        if self._catchup is not None:
            raise LocalProtocolError(
                f"cannot {what} yet: the other player is re-sending the actions we lack"
            )
        m = self._match
        assert m is not None
        if self._hidden is not None:
            if not self._hidden.my_turn():
                raise LocalProtocolError(f"cannot {what}: it is not your turn")
        elif m.to_act != self.our_seat:
            raise LocalProtocolError(f"cannot {what}: it is not your turn")
        return m

    def _send_action(self, action: Action | str) -> None:
        m = self._my_turn("act")
        if isinstance(action, str):
            try:
                action = Action.parse(action)
            except InputError as exc:
                raise LocalProtocolError(str(exc)) from None
        if self._hidden is not None:
            self.last_local_events = ()
            self._hidden.act(action)  # the table checks legality; a play waits for the draw key
            self._pump_hidden()
            return
        try:
            new, events = m.apply(action)
        except IllegalActionError as exc:
            raise LocalProtocolError(str(exc)) from None
        seq, text, h = self._seq + 1, str(action), new.state_hash()
        t = crypto.absorb_action(self._transcript, seq, self.our_seat, text, h)
        sig = crypto.sign(self._key, crypto.sig_message(t))
        self._queue(wire.ActionMsg(seq=seq, action=text, hash=h, sig=sig))
        self._commit_step(new, t, ActionRecord(seq, self.our_seat, text, h, sig))
        self.last_local_events = events
        if new.is_over:
            self._finish()

    def _send_resign(self, reason: str) -> None:
        m = self._my_turn("resign")
        if self._hidden is not None:
            events = self._hidden.resign(self.our_seat)  # no hidden report follows the end
            new = self._hidden.state
            seq, h = self._seq + 1, self._hidden.state_hash()
        else:
            new, events = m.resign(self.our_seat)
            seq, h = self._seq + 1, new.state_hash()
        fields = crypto.resign_fields(seq, self.our_seat, h, reason)
        t = crypto.absorb(self._transcript, "resign", *fields)
        sig = crypto.sign(self._key, crypto.sig_message(t))
        self._queue(wire.ResignMsg(seq=seq, sig=sig, reason=reason or None))
        self._commit_step(new, t, ActionRecord(seq, self.our_seat, RESIGN_TEXTS[reason], h, sig))
        self.last_local_events = events
        self._finish()

    def _send_chat(self, text: str) -> None:
        if not self._sent_first:
            raise LocalProtocolError("cannot chat before the handshake")
        clean = sanitize(text).strip()
        if not clean:
            raise LocalProtocolError("empty chat message")
        if len(clean) > wire.MAX_CHAT:
            raise LocalProtocolError(f"chat messages are at most {wire.MAX_CHAT} characters")
        self._queue(wire.ChatMsg(text=clean))

    # ------------------------------------------------------------------ record
    @property
    def recorded_actions(self) -> Sequence[ActionRecord]:
        """The actions so far, as in :meth:`record` but without copying (read only):
        a journal appends the new ones after every step."""
        return self._actions

    @property
    def result_record(self) -> ResultRecord | None:
        return self._result

    @property
    def start_signatures(self) -> tuple[bytes | None, bytes | None]:
        """(host's, joiner's) start signature, as known so far."""
        return (self._start_sigs.get(Role.HOST), self._start_sigs.get(Role.JOINER))

    @property
    def final_signatures(self) -> tuple[bytes | None, bytes | None]:
        """(host's, joiner's) signature over the final transcript, as known so far."""
        return (self._final_sigs.get(Role.HOST), self._final_sigs.get(Role.JOINER))

    def record(self) -> Record:
        """The verifiable record so far (finished or not)."""
        players: list[PlayerRecord | None] = [None, None]
        for role in Role:
            auth, start = self._auth_sigs.get(role), self._start_sigs.get(role)
            if role is self.role:
                players[role.seat] = PlayerRecord(self.name, self._pub, auth, start)
            elif self.peer_key is not None:
                assert self.peer_name is not None  # both come with the peer's auth (or resume)
                players[role.seat] = PlayerRecord(self.peer_name, self.peer_key, auth, start)
        f = self.forfeit
        return Record(
            session_id=self.session_id,
            rules=self.rules if self._rules_bytes else None,
            host=players[0],
            joiner=players[1],
            accepted=self._accepted,
            commitment=self._commitment,
            joiner_value=self._joiner_value,
            host_value=self._host_value if self.seed is not None else None,
            match_seed=self.seed,
            actions=tuple(self._actions),
            result=self._result,
            final_sigs=(self._final_sigs.get(Role.HOST), self._final_sigs.get(Role.JOINER)),
            turn_limit=self.turn_limit if self._rules_bytes else 0,
            commit_sig=self._commit_sig,
            forfeit=None if f is None else ForfeitRecord(f.seat, f.reason, f.sig),
            missing=self.missing,
            evidence=self._evidence,
            match_number=self.match_number,
            previous=self._previous,
        )


#: canonical action texts already parsed (a few hundred exist; each is seen again and again)
_CANONICAL: dict[str, Action] = {}


def _parse_canonical(seq: int, text: str) -> Action:
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


_HANDLERS: Final[dict[type, Callable[[Session, Any], None]]] = {
    wire.AuthMsg: Session._on_auth,
    wire.AcceptMsg: Session._on_accept,
    wire.DeclineMsg: Session._on_decline,
    wire.CommitMsg: Session._on_commit,
    wire.ValueMsg: Session._on_value,
    wire.RevealMsg: Session._on_reveal,
    wire.StartMsg: Session._on_start,
    wire.ActionMsg: Session._on_action,
    wire.CardMsg: Session._on_card,
    wire.ResignMsg: Session._on_resign,
    wire.OverMsg: Session._on_over,
    wire.PingMsg: Session._on_ping,
    wire.PongMsg: Session._on_pong,
    wire.ChatMsg: Session._on_chat,
    wire.AbortMsg: Session._on_abort,
    wire.ByeMsg: Session._on_bye,
    wire.ResumeMsg: Session._on_resume,
    wire.AgainMsg: Session._on_again,
    wire.NoAgainMsg: Session._on_no_again,
}
