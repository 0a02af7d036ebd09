"""Play: actions, resignations and the signed end of a match (protocol/README.md section 9).

Theory of operation
-------------------
The player to act sends ``action`` (:meth:`Play.send_action`) or ``resign``
(:meth:`Play.send_resign`), each with its sequence number, the state hash after
it and a signature over the transcript; the other side checks turn, sequence,
legality, hash and signature (:meth:`Play.check_turn`, :meth:`Play.on_action`,
:meth:`Play.on_resign`) before anything is emitted.  Every accepted step, ours
or the peer's, goes through :meth:`Play.commit_step`, the one place the state,
the transcript and the record advance together (and where a catch-up after a
resume ends); a finished match is signed by both (:meth:`Play.finish`,
:meth:`Play.on_over`).  With the hidden deal, decisions are card moves
(:mod:`p2pkoikoi.session.mental.session_part`, which commits its steps here too),
but a resignation and the end are the same as here.  It is separate because it
is the hot path of a match and the part whose every check guards the record:
one :class:`Play` owns the match state, its transcript from the reveal on, the
recorded actions and the result, from the seed to the last signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine import Action, IllegalActionError, InputError, MatchState
from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.session.errors import (
    CheatingError,
    LocalProtocolError,
    RemoteProtocolError,
    ResumeError,
)
from p2pkoikoi.session.events import ActionReceived, MatchOver, PeerResigned
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.records.record import RESIGN_TEXTS, ActionRecord, ResultRecord
from p2pkoikoi.session.states import Role, State, WaitingFor

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


class Play(Part):
    """One match from its start: the state, the transcript, the actions, the result."""

    def __init__(
        self,
        ctx: PartContext,
        *,
        peer_key: bytes,
        match: MatchState,
        transcript: bytes,
        initial_hash: bytes,
        table: HiddenMatch | None,
        joiner_started: Callable[[], bool],
        pump: Callable[[], None],
    ) -> None:
        super().__init__(ctx)
        self._peer_key = peer_key
        self._table = table  # the hidden deal's table (None: the open deal)
        self._joiner_started = joiner_started
        self._pump = pump  # the hidden deal's moves out (hidden_session.HiddenPlay.pump)
        self._match = match
        self._transcript = transcript
        self._seq = 0
        self._actions: list[ActionRecord] = []
        # transcript and state hash after each seq (what a resume compares)
        self._tx_at = [transcript]
        self._hash_at = [initial_hash]
        self._final_sigs: dict[Role, bytes] = {}
        self._result: ResultRecord | None = None
        self._catchup: tuple[int, bytes] | None = None  # the peer's (seq, transcript)
        # our resignation not yet answered: its reason and the state before it
        # (the crossing rule: a move of the other player for the same seq wins)
        self._resigned: tuple[str, MatchState] | None = None
        self._rewinds = 0  # how often a recorded step was taken back (the journal restarts)
        self._void_overs = 0  # the peer's resignations we voided: each one's over follows
        self.last_local_events: tuple[EngineEvent, ...] = ()

    def __repr__(self) -> str:
        return f"Play({self._me.role!r}, seq={self._seq}, over={self._result is not None})"

    def restore(
        self,
        *,
        actions: Sequence[ActionRecord],
        tx_at: Sequence[bytes],
        hash_at: Sequence[bytes],
    ) -> None:
        """The open deal's play of a resumed match, replayed from its record."""
        self._actions = list(actions)
        self._seq = actions[-1].seq if actions else 0
        self._transcript = tx_at[-1]
        self._tx_at, self._hash_at = list(tx_at), list(hash_at)

    def restore_end(self, result: ResultRecord, final_sigs: tuple[bytes | None, ...]) -> None:
        """The result and final signatures of a resumed match's record."""
        self._result = result
        for rl in Role:
            sig = final_sigs[rl.seat]
            if sig is not None:
                self._final_sigs[rl] = sig

    # ------------------------------------------------------------------ what it holds
    @property
    def match(self) -> MatchState:
        return self._match

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def transcript(self) -> bytes:
        return self._transcript

    @property
    def actions(self) -> Sequence[ActionRecord]:
        return self._actions

    @property
    def tx_at(self) -> list[bytes]:
        return self._tx_at

    @property
    def hash_at(self) -> list[bytes]:
        return self._hash_at

    @property
    def result(self) -> ResultRecord | None:
        return self._result

    @property
    def rewinds(self) -> int:
        """How often our last recorded step (an off-turn resignation) was taken back."""
        return self._rewinds

    def final_sig(self, role: Role) -> bytes | None:
        return self._final_sigs.get(role)

    @property
    def catchup(self) -> tuple[int, bytes] | None:
        """After a resume: the peer's (seq, transcript) we catch up to."""
        return self._catchup

    def catch_up(self, seq: int, tx: bytes) -> None:
        self._catchup = (seq, tx)

    def show(self, state: MatchState) -> None:
        """The hidden table's state after its moves (the engine state a view shows)."""
        self._match = state

    def tamper(self, *, transcript: bytes | None = None, seq: int | None = None) -> None:
        """A modified program's claims (tests): another transcript, another seq."""
        if transcript is not None:
            self._transcript = transcript
        if seq is not None:
            self._seq = seq

    def waiting_for(self) -> WaitingFor:
        seat = self._me.seat
        if self._table is not None:
            due = self._table.expecting
            if due == ("act", seat):
                return WaitingFor.LOCAL_ACTION
            if due is not None and due[1] != seat and due[0] != "act":
                return WaitingFor.PEER_CARDS
            return WaitingFor.PEER_ACTION
        if self._match.to_act == seat:
            return WaitingFor.LOCAL_ACTION
        return WaitingFor.PEER_ACTION

    # ------------------------------------------------------------------ our moves
    def my_turn(self, what: str) -> MatchState:
        if self._phase.state is not State.PLAY:
            raise LocalProtocolError(f"cannot {what}: the match is not in play")
        if self._catchup is not None:
            raise LocalProtocolError(
                f"cannot {what} yet: the other player is re-sending the actions we lack"
            )
        m = self._match
        if self._table is not None:
            if not self._table.my_turn():
                raise LocalProtocolError(f"cannot {what}: it is not your turn")
        elif m.to_act != self._me.seat:
            raise LocalProtocolError(f"cannot {what}: it is not your turn")
        return m

    def send_action(self, action: Action | str) -> None:
        m = self.my_turn("act")
        if isinstance(action, str):
            try:
                action = Action.parse(action)
            except InputError as exc:
                raise LocalProtocolError(str(exc)) from None
        if self._table is not None:
            self.last_local_events = ()
            self._table.act(action)  # the table checks legality; a play waits for the draw key
            self._pump()
            return
        try:
            new, events = m.apply(action)
        except IllegalActionError as exc:
            raise LocalProtocolError(str(exc)) from None
        seat = self._me.seat
        seq, text, h = self._seq + 1, str(action), new.state_hash()
        t = crypto.absorb_action(self._transcript, seq, seat, text, h)
        sig = self._me.sign(crypto.sig_message(t))
        self._queue(wire.ActionMsg(seq=seq, action=text, hash=h, sig=sig))
        self.commit_step(new, t, ActionRecord(seq, seat, text, h, sig))
        self.last_local_events = events
        if new.is_over:
            self.finish()

    def send_resign(self, reason: str) -> None:
        """Resign: on our turn, or (open deal) at any time during play, off-turn
        included: the resignation names the seq after the last step we hold."""
        seat = self._me.seat
        if (
            self._table is None
            and self._phase.state is State.PLAY
            and self._catchup is None
            and self._match.to_act != seat
        ):
            m = self._match  # off-turn (protocol/README.md section 9)
        else:
            m = self.my_turn("resign")
        if self._table is None:
            self._resigned = (reason, m)
        if self._table is not None:
            events = self._table.resign(seat)  # the deal's audits follow (_after_resign)
            new = self._table.state
            seq, h = self._seq + 1, self._table.state_hash()
        else:
            new, events = m.resign(seat)
            seq, h = self._seq + 1, new.state_hash()
        fields = crypto.resign_fields(seq, seat, h, reason)
        t = crypto.absorb(self._transcript, "resign", *fields)
        sig = self._me.sign(crypto.sig_message(t))
        self._queue(wire.ResignMsg(seq=seq, sig=sig, reason=reason or None))
        self.commit_step(new, t, ActionRecord(seq, seat, RESIGN_TEXTS[reason], h, sig))
        self.last_local_events = events
        self._after_resign()

    def _after_resign(self) -> None:
        """The match is over; with the hidden deal, the deal in play is audited first
        (protocol/hidden-deal.md section 7): the match finishes once both audits are in
        (the hidden part's report finishes it)."""
        if self._table is None:
            self.finish()
            return
        self._pump()

    # ------------------------------------------------------------------ the peer's moves
    def check_turn(self, seq: int, what: str) -> tuple[MatchState, int, bytes]:
        """The state, the acting seat and its identity key for a received action.

        Normally the peer's turn; while catching up after a resume, also our own
        actions that the peer re-sends: we lost them from the end of our record
        (a crash before the journal reached the disk) but signed them, and the
        peer holds them (protocol/README.md section 12).
        """
        if self._phase.state is not State.PLAY:
            raise self._phase.unexpected(what)
        if self._me.is_host and not self._joiner_started():
            raise RemoteProtocolError(f"the joiner sent {what} {seq} before its start signature")
        m = self._match
        seat: int | None
        if self._table is not None:  # the hidden deal: whose decision the table waits for
            due = self._table.expecting
            seat = due[1] if due is not None and due[0] == "act" else None
        else:
            seat = m.to_act
        if seat == self._me.role.other.seat:
            key = self._peer_key
        elif seat is not None and self._catchup is not None and seq <= self._catchup[0]:
            key = self._me.pub
        else:
            raise RemoteProtocolError(f"the other player sent {what} {seq} out of turn")
        if seq != self._seq + 1:
            raise RemoteProtocolError(
                f"wrong sequence number on {what}: expected {self._seq + 1}, got {seq}"
            )
        return m, seat, key

    def on_action(self, msg: wire.ActionMsg) -> None:
        if self._table is not None:  # with the hidden deal, decisions are card moves
            raise RemoteProtocolError(
                "bad message from peer: an action message in a hidden-deal match"
            )
        resigned = self._resigned
        if (
            resigned is not None
            and self._phase.state is State.FINISH
            and msg.seq == self._seq
            and resigned[1].to_act == self._me.role.other.seat
        ):
            # the crossing rule: the other player's move for the seq our off-turn
            # resignation named wins; ours is taken back, and sent again after it
            self._take_back_resignation(resigned[1])
            self.on_action(msg)
            if self._result is None:  # (the action did not end the match) in play again
                self.send_resign(resigned[0])
            return
        m, seat, key = self.check_turn(msg.seq, "action")
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
        t = crypto.absorb_action(self._transcript, msg.seq, seat, msg.action, msg.hash)
        if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
            raise CheatingError(f"the signature on action {msg.seq} is invalid (forged)")
        self.commit_step(new, t, ActionRecord(msg.seq, seat, msg.action, msg.hash, msg.sig))
        self._emit(ActionReceived(msg.seq, action, events, seat))
        if new.is_over:
            self.finish()

    def _take_back_resignation(self, before: MatchState) -> None:
        """Undo our last step, an off-turn resignation the other player's move crossed."""
        self._resigned = None
        self._actions.pop()
        self._tx_at.pop()
        self._hash_at.pop()
        self._transcript = self._tx_at[-1]
        self._seq -= 1
        self._match = before
        self._result = None
        self._final_sigs.pop(self._me.role, None)
        self._rewinds += 1
        self._phase.go(State.PLAY)

    def _crossed(self, seq: int) -> bool:
        """A resignation for ``seq`` that crossed our own steps from ``seq`` on: void
        (the resigning side takes it back and resigns again after them)."""
        if self._table is not None or seq < 1 or seq > self._seq:
            return False
        if self._phase.state not in (State.PLAY, State.FINISH):
            return False
        mine = self._me.seat
        later = [a for a in self._actions if a.seq >= seq]
        return bool(later) and all(a.seat == mine for a in later)

    def _check_resign(self, seq: int) -> tuple[MatchState, int, bytes]:
        """The state, seat and key for a received resignation: the open deal lets
        the other player resign at any time during play (the hidden deal, and a
        catch-up after a resume, keep the turn rule of :meth:`check_turn`)."""
        other = self._me.role.other.seat
        if self._table is not None or self._catchup is not None or self._match.to_act == other:
            return self.check_turn(seq, "resign")
        if self._phase.state is not State.PLAY:
            raise self._phase.unexpected("resign")
        if self._me.is_host and not self._joiner_started():
            raise RemoteProtocolError(f"the joiner sent resign {seq} before its start signature")
        if seq != self._seq + 1:
            raise RemoteProtocolError(
                f"wrong sequence number on resign: expected {self._seq + 1}, got {seq}"
            )
        return self._match, other, self._peer_key

    def on_resign(self, msg: wire.ResignMsg) -> None:
        resigned = self._resigned
        if (
            resigned is not None
            and self._phase.state is State.FINISH
            and msg.seq == self._seq
            and resigned[1].to_act == self._me.role.other.seat
        ):
            # two resignations crossed: the one of the player to act wins (the other
            # side voids ours); ours is taken back, theirs ends the match
            self._take_back_resignation(resigned[1])
            self.on_resign(msg)
            return
        if self._crossed(msg.seq):
            self._void_overs += 1  # and the over that follows it is void too
            return  # the crossing rule: our move for that seq came first
        m, seat, key = self._check_resign(msg.seq)
        reason = msg.reason or ""
        if self._table is not None:
            # (its events go out in PeerResigned; the deal's audits follow)
            events = self._table.resign(seat)
            new = self._table.state
            h = self._table.state_hash()
        else:
            new, events = m.resign(seat)
            h = new.state_hash()
        fields = crypto.resign_fields(msg.seq, seat, h, reason)
        t = crypto.absorb(self._transcript, "resign", *fields)
        if not crypto.verify_sig(key, msg.sig, crypto.sig_message(t)):
            raise CheatingError(f"the signature on resignation {msg.seq} is invalid (forged)")
        text = RESIGN_TEXTS[reason]
        self.commit_step(new, t, ActionRecord(msg.seq, seat, text, h, msg.sig))
        self._emit(PeerResigned(msg.seq, seat, events, reason))
        self._after_resign()

    # ------------------------------------------------------------------ every step
    def commit_step(self, new: MatchState, t: bytes, rec: ActionRecord) -> None:
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

    # ------------------------------------------------------------------ the end
    def sign_result(self) -> ResultRecord:
        """The result, and our signature over the final transcript."""
        m = self._match
        assert m.is_over
        h = m.state_hash() if self._table is None else self._table.state_hash()
        r = self._result = ResultRecord(m.scores, m.winner, h, self._transcript)
        self._final_sigs[self._me.role] = self._me.sign(crypto.final_message(self._transcript, h))
        return r

    def finish(self) -> None:
        r = self.sign_result()
        self._phase.go(State.FINISH)
        self._queue(
            wire.OverMsg(
                hash=r.final_state_hash,
                tx=self._transcript,
                scores=r.scores,
                winner=r.winner,
                sig=self._final_sigs[self._me.role],
            )
        )

    def on_over(self, msg: wire.OverMsg) -> None:
        other = self._me.role.other
        if self._void_overs and self._phase.state in (State.PLAY, State.FINISH):
            self._void_overs -= 1
            return  # the end of a resignation the crossing rule voided
        if self._phase.state is State.DONE and msg.sig == self._final_sigs.get(other):
            return  # re-sent after a resume: we have it already
        if self._phase.state is not State.FINISH:
            raise self._phase.unexpected("over")
        assert self._result is not None
        r = self._result
        if msg.tx != r.transcript_hash:
            raise RemoteProtocolError("the final transcripts differ: the match records disagree")
        if msg.hash != r.final_state_hash:
            raise RemoteProtocolError("the final state hashes differ")
        if tuple(msg.scores) != r.scores or msg.winner != r.winner:
            raise RemoteProtocolError("the other player reports a different result")
        if not crypto.verify_sig(self._peer_key, msg.sig, crypto.final_message(msg.tx, msg.hash)):
            raise CheatingError("the other player's final signature is invalid (forged)")
        self._final_sigs[other] = msg.sig
        self._phase.go(State.DONE)
        self._emit(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
