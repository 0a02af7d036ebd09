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

Where the code lives: this module holds the :class:`Session` object (its
state, its properties, byte output, the dispatch of local events and the
record); each part of the protocol is a module of functions that take the
session as ``s`` (its own methods, kept apart):
:mod:`~p2pkoikoi.session.frames` (bytes in, frames to handlers, the error
path), :mod:`~p2pkoikoi.session.handshake` (steps 1-3),
:mod:`~p2pkoikoi.session.commit_reveal` (step 4),
:mod:`~p2pkoikoi.session.play` (step 5),
:mod:`~p2pkoikoi.session.rematch_session` (step 6),
:mod:`~p2pkoikoi.session.resume_session` (resuming and catching up),
:mod:`~p2pkoikoi.session.hidden_session` (the hidden deal's card moves),
:mod:`~p2pkoikoi.session.forfeits`, :mod:`~p2pkoikoi.session.side_channel`
(ping, chat, abort, bye) and :mod:`~p2pkoikoi.session.states` (the roles,
phases and name rules they all share).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi import __version__
from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.engine import MatchState, RuleSet
from p2pkoikoi.session import (
    commit_reveal,
    crypto,
    forfeits,
    frames,
    handshake,
    hidden_session,
    play,
    rematch_session,
    resume_session,
    side_channel,
    wire,
)
from p2pkoikoi.session.code import ShortCode
from p2pkoikoi.session.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)
from p2pkoikoi.session.events import (
    AcceptRules,
    DeclineRematch,
    DeclineRules,
    Event,
    Goodbye,
    NeedData,
    OfferRematch,
    Ping,
    Pong,
    Resign,
    SendAction,
    SendChat,
    SendEvent,
)
from p2pkoikoi.session.forfeits import Forfeit
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.pake import Pake
from p2pkoikoi.session.record import (
    RESIGN_TEXTS,
    ActionRecord,
    Evidence,
    ForfeitRecord,
    PlayerRecord,
    Record,
    ResultRecord,
)
from p2pkoikoi.session.resume import ResumePoint
from p2pkoikoi.session.states import (
    MAX_BUFFER,
    MIN_ENTROPY,
    SECRET_MIN,
    TAG_HIDDEN_SECRET,
    Role,
    State,
    WaitingFor,
    check_name,
    sanitize,
)

__all__ = [
    "MAX_BUFFER",
    "MIN_ENTROPY",
    "SECRET_MIN",
    "TAG_HIDDEN_SECRET",
    "Forfeit",
    "Role",
    "Session",
    "State",
    "WaitingFor",
    "check_name",
    "sanitize",
]


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
        self._hello_payload = handshake.make_hello(self, None)
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
        frames.receive(self, data)

    def next_event(self) -> Event | NeedData:
        """The next event, or :data:`NEED_DATA`; raises the protocol's errors."""
        if self._error is not None:
            raise self._error
        try:
            return frames.next_event(self)
        except ProtocolError as exc:
            frames.fail(self, exc)
            raise

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
        host forfeits; if the peer's program owed a move of the hidden deal, the
        peer forfeits (:attr:`forfeit`, and in the record)."""
        forfeits.note_forfeit(self)
        forfeits.peer_left(self)

    def peer_withheld(self, reason: str) -> None:
        """The transport's deadline for a move of the hidden deal that the peer's
        program owes passed: the peer forfeits (:func:`forfeits.peer_withheld`)."""
        forfeits.peer_withheld(self, reason)

    def claim_time_forfeit(self) -> None:
        """The peer let its turn limit pass: the match ends as the peer's forfeit by
        time (:func:`forfeits.claim_time_forfeit`)."""
        forfeits.claim_time_forfeit(self)

    def _unexpected(self, what: str) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"unexpected {what} message from peer during {self._state.value}"
        )

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
        return resume_session.resume(
            cls,
            point,
            role,
            identity_key=identity_key,
            resume_secret=resume_secret,
            entropy=entropy,
            program=program,
            hidden_secret=hidden_secret,
        )

    # ------------------------------------------------------------------ shared steps
    # The parts' steps that other parts (and the tests' hooks) reach through the
    # session: kept as methods, so a hook set on one session object sees every call.
    _start_match = commit_reveal.start_match
    _commit_step = play.commit_step
    _finish = play.finish

    # (the hidden deal's moves, signed card messages, live in hidden_session.py)
    def _pump_hidden(self) -> None:
        hidden_session.pump(self)

    def _commit_card(self, t: bytes, rec: ActionRecord) -> None:
        hidden = self._hidden
        assert hidden is not None
        self._commit_step(hidden.state, t, rec)

    # ------------------------------------------------------------------ sending
    def send(self, event: SendEvent) -> bytes:
        """Turn a local event into bytes; returns everything queued, in order."""
        if self._error is not None:
            raise LocalProtocolError(f"the session has failed: {self._error}")
        if self._state is State.CLOSED:
            raise LocalProtocolError("the session is closed")
        if isinstance(event, AcceptRules | DeclineRules):
            handshake.send_rules_decision(self, event)
        elif isinstance(event, SendAction):
            play.send_action(self, event.action)
        elif isinstance(event, Resign):
            if event.reason not in RESIGN_TEXTS:
                raise LocalProtocolError(f"unknown resignation reason {event.reason!r}")
            play.send_resign(self, event.reason)
        elif isinstance(event, SendChat):
            side_channel.send_chat(self, event.text)
        elif isinstance(event, Ping | Pong):
            side_channel.send_ping(self, event)
        elif isinstance(event, OfferRematch):
            rematch_session.send_again(self, event)
        elif isinstance(event, DeclineRematch):
            rematch_session.send_no_again(self, event)
        elif isinstance(event, Goodbye):
            if self._sent_first:
                self._queue(wire.ByeMsg())
            self._state = State.CLOSED
        else:
            raise LocalProtocolError(f"cannot send {type(event).__name__}")
        return self.data_to_send()

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
