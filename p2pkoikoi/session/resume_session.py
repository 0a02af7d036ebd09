"""Resuming a match on a new connection, and catching up (protocol/README.md section 12).

Theory of operation
-------------------
A broken connection does not end a match.  ``Session.resume`` builds a session
from our record (a :class:`~p2pkoikoi.session.records.resume.ResumePoint`: verified and
replayed once per break, and checked here first: :func:`check_point`) for the
new connection: its hello carries the match's session id, the keys are fresh,
and the handshake, the commit-reveal and the play are restored from the record.
After the hellos each side sends a signed ``resume`` (its last seq, transcript
and state hash: :meth:`ResumeExchange.send_resume`), checked against the
identity key recorded for the peer's seat (:meth:`ResumeExchange.on_resume`);
the side that is ahead re-sends the signed actions (or card moves) the peer
lacks, and its final signature; the side behind catches up (``Play.catchup``)
until :meth:`p2pkoikoi.session.play.Play.commit_step` reaches the peer's seq
with the same transcript.  The transcript is untouched, so the record verifies
as if nothing happened.  It is separate because it is a second way into every
phase after the seed, with checks of its own; :class:`ResumeExchange` owns the
phase the resumed match continues in, and is handed the restored parts.
"""

from __future__ import annotations

from collections.abc import Callable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session.commit_reveal import CommitReveal
from p2pkoikoi.session.errors import LocalProtocolError, ResumeError
from p2pkoikoi.session.events import Resumed
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.play import Play
from p2pkoikoi.session.records.record import PlayerRecord, Record, resign_reason
from p2pkoikoi.session.records.resume import ResumePoint
from p2pkoikoi.session.states import Role, State


def check_point(
    point: ResumePoint | Record,
    role: Role,
    identity_key: Ed25519PrivateKey,
    hidden_secret: bytes | None,
) -> tuple[ResumePoint, PlayerRecord, PlayerRecord]:
    """The point to resume from (a plain record is verified here), our player and the
    peer's; raises :class:`LocalProtocolError` when it cannot be resumed by us."""
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
    return point, me, peer


class ResumeExchange(Part):
    """The two ``resume`` messages of a resumed connection, and the catch-up they start."""

    def __init__(
        self,
        ctx: PartContext,
        *,
        session_id: bytes,
        peer_key: bytes,
        seed: CommitReveal,
        play: Play,
        continue_in: State,
        pump: Callable[[], None] | None,
    ) -> None:
        super().__init__(ctx)
        self._session_id = session_id
        self._peer_key = peer_key
        self._seed = seed
        self._play = play
        self._continue_in = continue_in  # where the resumed match continues
        self._pump = pump  # the hidden deal: our table's moves out
        self._connection_id: bytes | None = None

    def __repr__(self) -> str:
        return f"ResumeExchange({self._me.role!r}, continue_in={self._continue_in!r})"

    def keys_ready(self, h_resume: bytes) -> None:
        """The hellos gave this connection's keys: the joiner proves the secret first."""
        self._connection_id = h_resume
        if self._me.role is Role.JOINER:
            self.send_resume()

    def send_resume(self) -> None:
        assert self._connection_id is not None
        me, play = self._me, self._play
        seq, tx, h = play.seq, play.transcript, play.hash_at[play.seq]
        msg = crypto.resume_message(
            self._connection_id, me.role.value, self._session_id, seq, tx, h
        )
        self._queue(wire.ResumeMsg(seq=seq, tx=tx, hash=h, sig=me.sign(msg)))
        self._outbox.first_sent()
        mine = self._seed.start_sig(me.role)
        if me.role is Role.JOINER and mine is not None:
            self._queue(wire.StartMsg(sig=mine))  # the host may lack it: sent again

    def on_resume(self, msg: wire.ResumeMsg) -> None:
        if self._phase.state is not State.RESUME:
            raise self._phase.unexpected("resume")
        assert self._connection_id
        me, play = self._me, self._play
        signed = crypto.resume_message(
            self._connection_id, me.role.other.value, self._session_id, msg.seq, msg.tx, msg.hash
        )
        if not crypto.verify_sig(self._peer_key, msg.sig, signed):
            raise ResumeError(
                "the reconnecting player is not the one this match was played with "
                "(its identity signature fails): refused"
            )
        if msg.seq <= play.seq:
            if play.tx_at[msg.seq] != msg.tx or play.hash_at[msg.seq] != msg.hash:
                raise ResumeError(
                    f"the two records disagree at action {msg.seq}: the match cannot resume"
                )
        elif play.result is not None:
            raise ResumeError("the other player claims actions after the end of the match")
        else:
            play.catch_up(msg.seq, msg.tx)
        if not self._outbox.sent_first:  # the host answers once the joiner proved the secret
            self.send_resume()
        self._phase.go(self._continue_in)
        self._emit(Resumed(play.seq, msg.seq))
        for a in play.actions[msg.seq :]:  # we are ahead: re-send what the peer lacks
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
        if self._pump is not None and play.result is None and play.catchup is None:
            self._pump()  # moves our table made after the last one in the record
        mine = play.final_sig(me.role)
        r = play.result
        if r is not None and mine is not None:
            self._queue(
                wire.OverMsg(
                    hash=r.final_state_hash,
                    tx=r.transcript_hash,
                    scores=r.scores,
                    winner=r.winner,
                    sig=mine,
                )
            )
            if play.final_sig(me.role.other) is not None:
                self._phase.go(State.DONE)
