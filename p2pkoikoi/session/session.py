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
(:mod:`p2pkoikoi.session.mental.session_part`), the table is a
:class:`~p2pkoikoi.session.mental.play.HiddenMatch`, and ``session.match`` is
its engine state (the cards this side has not seen are stand-ins there; a
view shows none of them).

Everything a user could observe (errors, events) is checked before it is
emitted.  A remote fault raises :class:`RemoteProtocolError` (or a subclass)
and leaves the session in ``ERROR`` for good: each later ``next_event`` raises
the same error again.  A local misuse raises :class:`LocalProtocolError` and
changes nothing.  ``session.waiting_for`` tells the transport which timeout
applies.  ``session.record()`` is the verifiable record so far.

Where the code lives: this module holds the :class:`Session` object, the
router: it owns the phase (:class:`~p2pkoikoi.session.phases.SessionPhase`, a table of
the moves between phases), the frames in and out
(:mod:`~p2pkoikoi.session.frames`), the event queue and the error, and hands
each frame and each local event to the part for it.  Each part is an object
that owns its own state and is handed what it uses (the phase, a queue
callable, the event queue's ``append``, this side's
:class:`~p2pkoikoi.session.identity.Identity`, values and callbacks), never the
session: :class:`~p2pkoikoi.session.handshake.Handshake` (steps 1-3, and what
the connection agreed), :class:`~p2pkoikoi.session.commit_reveal.CommitReveal`
(step 4), :class:`~p2pkoikoi.session.play.Play` (step 5: the match, its
transcript and record), :class:`~p2pkoikoi.session.mental.session_part.HiddenPlay`
(the hidden deal's card moves), :class:`~p2pkoikoi.session.rematch_session.Rematch`
(step 6), :class:`~p2pkoikoi.session.resume_session.ResumeExchange` (resuming
and catching up), :class:`~p2pkoikoi.session.forfeits.Forfeits` and
:class:`~p2pkoikoi.session.side_channel.SideChannel` (ping, chat, abort, bye).
The parts of one match (its forfeits, commit-reveal, play and rematch offers)
are built together for each match: a rematch is a fresh set of parts, not a
list of resets.  docs/architecture.md draws who owns what.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import p2pkoikoi.session.channel as channel
import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi import __version__
from p2pkoikoi.engine import RuleSet
from p2pkoikoi.session.codes.code import ShortCode
from p2pkoikoi.session.codes.pake import Pake
from p2pkoikoi.session.commit_reveal import CommitReveal
from p2pkoikoi.session.errors import (
    LocalProtocolError,
    ProtocolError,
    RefusedError,
    RemoteProtocolError,
    RulesMismatchError,
)
from p2pkoikoi.session.events import (
    NEED_DATA,
    AcceptRules,
    ConnectionClosed,
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
from p2pkoikoi.session.forfeits import HOST_STOPPED, JOINER_STOPPED, Forfeit
from p2pkoikoi.session.frames import Inbox, Outbox
from p2pkoikoi.session.handshake import Handshake, HelloKeys, Terms
from p2pkoikoi.session.identity import Identity
from p2pkoikoi.session.matches import Matches
from p2pkoikoi.session.mental.session_part import HiddenPlay
from p2pkoikoi.session.part import PartContext
from p2pkoikoi.session.phases import SessionPhase
from p2pkoikoi.session.play import Play
from p2pkoikoi.session.records.record import (
    LEFT_FORFEIT,
    RESIGN_TEXTS,
    TIME_FORFEIT,
    Record,
)
from p2pkoikoi.session.records.resume import ResumePoint
from p2pkoikoi.session.resume_session import ResumeExchange, check_point
from p2pkoikoi.session.side_channel import SideChannel
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
from p2pkoikoi.session.views import SessionViews

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


class Session(SessionViews):
    """One side of one connection.  See the module docstring."""

    def __init__(  # noqa: PLR0913 -- the public keyword constructor, left as it is for now (issue 34)
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
        min_turn_limit: int = 0,
        program: str = __version__,
        _resume_secret: bytes | None = None,
        _resume: tuple[ResumePoint, bytes | None] | None = None,
    ) -> None:
        """One side of a new match.

        The host passes the invite's ``invite_secret`` and, when it also gave a
        short ``code``, that code: a joiner may use either.  A joiner passes the
        one it was given (``invite_secret`` or ``code``).  ``turn_limit`` (host):
        the seconds each player may take per decision, agreed in the handshake
        (0: none).  ``min_turn_limit`` (joiner): a host's limit under it is declined
        (0: any; a program deciding without a person passes a floor).  ``entropy``: at least 64 random bytes (bytes 0..31 the
        X25519 key, 32..63 the commit/joiner value; the PAKE's randomness is
        derived from all of it).
        """
        role = Role(role)
        if not isinstance(identity_key, Ed25519PrivateKey):
            raise LocalProtocolError("identity_key must be an Ed25519 private key")
        if invite_secret is not None and len(invite_secret) < SECRET_MIN:
            raise LocalProtocolError(f"the invite secret must be at least {SECRET_MIN} bytes")
        if _resume_secret is None:
            if role is Role.HOST and invite_secret is None:
                raise LocalProtocolError("the host needs its invite secret")
            if role is Role.JOINER and (invite_secret is None) == (code is None):
                raise LocalProtocolError("the joiner uses either an invite secret or a code")
        if len(entropy) < MIN_ENTROPY:
            raise LocalProtocolError(f"entropy must be at least {MIN_ENTROPY} bytes")
        if role is Role.HOST and rules is None:
            raise LocalProtocolError("the host must propose rules")
        if role is Role.HOST and expected_rules is not None:
            raise LocalProtocolError("expected_rules is for the joiner")
        if role is Role.JOINER and rules is not None:
            raise LocalProtocolError("the joiner does not propose rules (use expected_rules)")
        if isinstance(turn_limit, bool) or not 0 <= turn_limit <= wire.MAX_TURN_LIMIT:
            raise LocalProtocolError(f"the turn limit must be 0..{wire.MAX_TURN_LIMIT} seconds")
        check_name(name, LocalProtocolError)
        self._me = Identity(role, name, identity_key)
        self.program = program[: wire.MAX_PROGRAM]
        self.code = code

        # the PAKE: which password(s) this side uses
        seed = crypto.sha256(b"p2pkoikoi/v2/pake-seed\x00", bytes(entropy))
        if _resume_secret is not None:
            via, password = "resume", channel.resume_password(_resume_secret)
        elif role is Role.JOINER and code is not None:
            via, password = "code", channel.code_password(code)
        else:
            assert invite_secret is not None
            via, password = "invite", channel.invite_password(bytes(invite_secret))
        pake_code = None
        if role is Role.HOST and code is not None and _resume_secret is None:
            pake_code = Pake("host", channel.code_password(code), seed + b"code")

        self._phase = SessionPhase(State.HELLO)
        self._error: ProtocolError | None = None
        self._inbox = Inbox()
        self._outbox = Outbox()
        self._events: deque[Event] = deque()
        emit = self._events.append
        ctx = PartContext(self._me, self._phase, self._outbox, self._q, emit)
        self._side = SideChannel(ctx, self._note_forfeit)
        self._handshake = Handshake(
            ctx,
            program=self.program,
            keys=HelloKeys(
                via,
                channel.x25519_private(bytes(entropy[:32])),
                Pake(role.value, password, seed + b"main"),
                pake_code,
            ),
            terms=Terms(
                rules,
                expected_rules,
                turn_limit if role is Role.HOST else 0,
                min_turn_limit if role is Role.JOINER else 0,
            ),
            resume_id=None if _resume is None else _resume[0].record.session_id,
            on_abort=self._side.on_abort,
            on_agreed=lambda t_commit: self._matches.agreed(t_commit),
            on_resume_keys=self._resume_keys,
        )
        self._matches = Matches(
            ctx,
            handshake=self._handshake,
            my_value=bytes(entropy[32:64]),
            # the hidden deal's match secret: never sent, never in the record (the .resume file)
            hidden_secret=crypto.sha256(TAG_HIDDEN_SECRET, bytes(entropy)),
            on_seed=lambda: self._start_match(),
        )
        self._resuming: ResumeExchange | None = None
        if _resume is not None:
            assert _resume_secret is not None
            self._resuming = self._matches.restore(_resume[0], _resume_secret, _resume[1])
        self._routes: dict[type, Callable[[Any], None]] = self._route_table()

    # ------------------------------------------------------------------ output
    def data_to_send(self) -> bytes:
        """All bytes queued by the session itself; write them to the peer in order."""
        return self._outbox.take()

    def _queue(self, msg: wire.Message) -> None:
        self._outbox.seal(msg)

    def _q(self, msg: wire.Message) -> None:
        # what the parts are handed: looks _queue up at each call (a test may replace it)
        self._queue(msg)

    # ------------------------------------------------------------------ input
    def receive_data(self, data: bytes) -> None:
        """Bytes read from the peer; ``b""`` means the stream ended."""
        self._inbox.feed(data, reading=self._phase.state not in (State.ERROR, State.CLOSED))

    def next_event(self) -> Event | NeedData:
        """The next event, or :data:`NEED_DATA`; raises the protocol's errors."""
        if self._error is not None:
            raise self._error
        try:
            return self._next_event()
        except ProtocolError as exc:
            self._fail(exc)
            raise

    def _next_event(self) -> Event | NeedData:
        inbox = self._inbox
        while True:
            if self._events:
                return self._events.popleft()
            if self._phase.state is State.CLOSED:
                return NEED_DATA
            if inbox.flooded:
                raise RemoteProtocolError("the peer sent too much data at once")
            hidden = self._m.hidden
            if hidden is not None and hidden.table.unsettled:  # after a Checking event
                hidden.settle()
            payload = inbox.take()
            if payload is not None:
                self._handle_frame(payload)
                continue
            if inbox.eof:
                if len(inbox):
                    raise RemoteProtocolError("connection closed in the middle of a frame")
                clean = self._phase.state is State.DONE
                self._note_forfeit()
                self._phase.go(State.CLOSED)
                reason = "the connection ended" if clean else "the connection ended early"
                return ConnectionClosed(clean=clean, reason=reason)
            return NEED_DATA

    def _handle_frame(self, payload: bytes) -> None:
        if self._phase.state is State.HELLO:
            msg = wire.decode_message(payload)
            if isinstance(msg, wire.RefuseMsg):
                reason = sanitize(msg.reason) or "no reason given"
                self._phase.go(State.CLOSED)
                raise RefusedError(f"the other side refused the connection: {reason}")
            if isinstance(msg, wire.AbortMsg):
                self._side.on_abort(msg)
            if not isinstance(msg, wire.HelloMsg):
                raise RemoteProtocolError(
                    f"bad message from peer: expected hello, got {wire.TYPE_NAMES[type(msg)]}"
                )
            self._handshake.on_hello(msg, payload)
            return
        if not self._outbox.keyed:  # (cannot happen: keys come with the hello)
            raise RemoteProtocolError("bad message from peer: nothing may follow the hello yet")
        if not self._handshake.confirmed:
            self._handshake.first_frame(payload, self._route)
            return
        self._route(wire.decode_message(self._outbox.open(payload)))

    def _route(self, msg: wire.Message) -> None:
        handler = self._routes.get(type(msg))
        if handler is None:  # a second hello, a refuse
            raise RemoteProtocolError(
                f"bad message from peer: unexpected {wire.TYPE_NAMES[type(msg)]}"
            )
        handler(msg)

    def _route_table(self) -> dict[type, Callable[[Any], None]]:
        """Each message type to the part that handles it (the current match's, for its parts)."""
        hs, side = self._handshake, self._side
        return {
            wire.AuthMsg: hs.on_auth,
            wire.AcceptMsg: hs.on_accept,
            wire.DeclineMsg: hs.on_decline,
            wire.CommitMsg: lambda msg: self._seed_part("commit").on_commit(msg),
            wire.ValueMsg: lambda msg: self._seed_part("value").on_value(msg),
            wire.RevealMsg: lambda msg: self._seed_part("reveal").on_reveal(msg),
            wire.StartMsg: lambda msg: self._seed_part("start").on_start(msg),
            wire.ActionMsg: lambda msg: self._play_part("action").on_action(msg),
            wire.ResignMsg: lambda msg: self._play_part("resign").on_resign(msg),
            wire.OverMsg: lambda msg: self._play_part("over").on_over(msg),
            wire.CardMsg: lambda msg: self._hidden_part().on_card(msg),
            wire.PingMsg: side.on_ping,
            wire.PongMsg: side.on_pong,
            wire.ChatMsg: side.on_chat,
            wire.AbortMsg: side.on_abort,
            wire.ByeMsg: side.on_bye,
            wire.ResumeMsg: lambda msg: self._resume_part().on_resume(msg),
            wire.AgainMsg: lambda msg: self._m.rematch.on_again(msg),
            wire.NoAgainMsg: lambda msg: self._m.rematch.on_no_again(msg),
        }

    def _seed_part(self, what: str) -> CommitReveal:
        if self._m.seed is None:
            raise self._phase.unexpected(what)
        return self._m.seed

    def _play_part(self, what: str) -> Play:
        if self._m.play is None:
            raise self._phase.unexpected(what)
        return self._m.play

    def _hidden_part(self) -> HiddenPlay:
        if self._m.hidden is None:
            raise self._phase.unexpected("card")
        return self._m.hidden

    def _resume_part(self) -> ResumeExchange:
        if self._resuming is None:
            raise self._phase.unexpected("resume")
        return self._resuming

    def _fail(self, exc: ProtocolError) -> None:
        if self._error is not None:
            return
        self._error = exc
        if (
            isinstance(exc, RemoteProtocolError)
            and not isinstance(exc, RulesMismatchError)
            and self._phase.state is not State.CLOSED
        ):
            abort = wire.AbortMsg(reason=str(exc)[: wire.MAX_REASON])
            if self._outbox.keyed and self._handshake.confirmed:
                self._queue(abort)
            else:  # the peer may not share our keys yet: say it in plaintext
                self._outbox.plain(wire.encode_message(abort))
        if self.forfeit is None:
            self._note_forfeit()
        self._phase.go(State.ERROR)
        self._inbox.clear()

    # ------------------------------------------------------------------ forfeits
    def _note_forfeit(self) -> None:
        """An end between the joiner's value and the host's reveal is the host's forfeit."""
        m = self._m
        if (
            m.forfeits.forfeit is None
            and self._phase.state is State.SEED
            and m.seed is not None
            and m.seed.host_owes_reveal
        ):
            m.forfeits.record(0, HOST_STOPPED)

    def peer_gone(self) -> None:
        """The transport gave up on the peer (a deadline passed, the connection broke):
        if that happened between the joiner's value and the host's reveal, the
        host forfeits; if the peer's program owed a move of the hidden deal (a deck
        step, keys, a declaration, a draw key, an audit), leaving mid-deal is the
        peer's forfeit (protocol/hidden-deal.md section 7), in :attr:`forfeit` and in
        the record.  A decision owed by a person falls under the turn limit instead."""
        self._note_forfeit()
        if self._m.forfeits.forfeit:
            return
        owed = self._owed_deal_move()
        if owed is not None:
            self._m.forfeits.record(self._me.role.other.seat, owed)

    def _owed_deal_move(self) -> str | None:
        """Why the peer forfeits if it is gone now owing a move of the hidden deal that
        its program makes on its own (None when it owes none, or the deal is open)."""
        m = self._m
        hidden, play = m.hidden, m.play
        if hidden is None or play is None or play.result is not None:
            return None
        # (the session may already be closed by the end of the connection: ask the table)
        due = hidden.table.expecting
        if due is not None and due[1] != self._me.seat and due[0] != "act":
            return f"left during the hidden deal after move {play.seq}, owing a move of it"
        return None

    def peer_left(self) -> None:
        """The transport gave the peer up for good once the match had started: it
        left (a ``bye``, a closed connection, a flood) and did not come back within
        the reconnect window.  Who owes the next step forfeits (protocol/README.md
        section 8): between the host's reveal and the joiner's ``start``, the joiner,
        who has seen the seed (:data:`JOINER_STOPPED`); during play, the one who left
        (:data:`LEFT_FORFEIT`).  Recorded in :attr:`forfeit`, signed by us."""
        self._note_forfeit()
        m = self._m
        if self.forfeit is not None or m.seed is None or m.seed.seed is None:
            return
        if self._me.is_host and not m.seed.joiner_started:
            m.forfeits.record(1, JOINER_STOPPED)
            return
        match = self.match
        if (
            match is not None
            and not match.is_over
            and self._phase.state
            in (
                State.PLAY,
                State.CLOSED,
                State.ERROR,
            )
        ):
            # owing a move of the hidden deal says more than "left"
            owed = self._owed_deal_move()
            m.forfeits.record(self._me.role.other.seat, owed or LEFT_FORFEIT)

    def peer_withheld(self, reason: str) -> None:
        """The transport's deadline for a move of the hidden deal that the peer's
        program owes (a deck step, keys, a declaration, a draw key, an audit:
        :attr:`WaitingFor.PEER_CARDS`) passed: the peer forfeits
        (protocol/hidden-deal.md section 7), in :attr:`forfeit` and in the record."""
        if self.forfeit is None and self.waiting_for is WaitingFor.PEER_CARDS:
            self._m.forfeits.record(self._me.role.other.seat, reason[:200])

    def claim_time_forfeit(self) -> None:
        """The peer let its turn limit pass (the transport measured it, with a grace
        for latency): the match ends as the peer's forfeit by time.

        Records ``forfeit {seat: peer, reason: "time"}`` signed by us, queues an
        ``abort`` saying so (the peer's last chance to learn why) and closes the
        session: nothing it sends afterwards counts.
        """
        play = self._m.play
        if (
            # CLOSED: the peer said bye and is awaited (its clock keeps running)
            self._phase.state not in (State.PLAY, State.CLOSED)
            or play is None
            or play.match.is_over
            or play.match.to_act == self._me.seat
            or play.catchup is not None
            or self.forfeit is not None
        ):
            raise LocalProtocolError("a forfeit by time needs the peer's turn during play")
        self._m.forfeits.record(self._me.role.other.seat, TIME_FORFEIT)
        limit = self.turn_limit
        self._queue(wire.AbortMsg(reason=f"your time ran out ({limit}s per decision): you forfeit"))
        self._phase.go(State.CLOSED)
        self._inbox.clear()

    # ------------------------------------------------------------------ hookable steps
    # Called through the session, so a test's hook set on one session sees every call.
    def _start_match(self) -> None:
        """The seed is known: the match starts (:meth:`Matches.start_match`)."""
        self._matches.start_match()

    def _resume_keys(self, h_resume: bytes) -> None:
        assert self._resuming is not None
        self._resuming.keys_ready(h_resume)

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
        moves again with it (:meth:`HiddenPlay.rebuild`).
        """
        role = Role(role)
        point, me, _ = check_point(point, role, identity_key, hidden_secret)
        r = point.record
        return cls(
            role,
            identity_key=identity_key,
            name=me.name,
            entropy=entropy,
            rules=r.rules if role is Role.HOST else None,
            expected_rules=r.rules if role is Role.JOINER else None,
            turn_limit=r.turn_limit,  # range-checked here; the joiner keeps it from the record
            program=program,
            _resume_secret=resume_secret,
            _resume=(point, hidden_secret),
        )

    # ------------------------------------------------------------------ sending
    def send(self, event: SendEvent) -> bytes:
        """Turn a local event into bytes; returns everything queued, in order."""
        if self._error is not None:
            raise LocalProtocolError(f"the session has failed: {self._error}")
        if self._phase.state is State.CLOSED:
            raise LocalProtocolError("the session is closed")
        if isinstance(event, AcceptRules | DeclineRules):
            self._handshake.send_rules_decision(event)
        elif isinstance(event, SendAction | Resign):
            if isinstance(event, Resign) and event.reason not in RESIGN_TEXTS:
                raise LocalProtocolError(f"unknown resignation reason {event.reason!r}")
            play = self._m.play
            if play is None:
                raise LocalProtocolError(
                    f"cannot {'act' if isinstance(event, SendAction) else 'resign'}: "
                    "the match is not in play"
                )
            if isinstance(event, SendAction):
                play.send_action(event.action)
            else:
                play.send_resign(event.reason)
        elif isinstance(event, SendChat):
            self._side.send_chat(event.text)
        elif isinstance(event, Ping | Pong):
            self._side.send_ping(event)
        elif isinstance(event, OfferRematch):
            self._m.rematch.send_again(event)
        elif isinstance(event, DeclineRematch):
            self._m.rematch.send_no_again(event)
        elif isinstance(event, Goodbye):
            if self._outbox.sent_first:
                reason = sanitize(event.reason).strip()[: wire.MAX_REASON]
                self._queue(wire.AbortMsg(reason=reason) if reason else wire.ByeMsg())
            self._phase.go(State.CLOSED)
        else:
            raise LocalProtocolError(f"cannot send {type(event).__name__}")
        return self.data_to_send()

    # ------------------------------------------------------------------ record
    def record(self) -> Record:
        """The verifiable record so far (finished or not)."""
        return self._matches.record()
