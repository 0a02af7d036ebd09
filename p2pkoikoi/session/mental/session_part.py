"""The hidden deal's moves in a session: signed ``card`` messages (``protocol/hidden-deal.md``).

A session whose rules say ``deal = hidden`` drives a
:class:`~p2pkoikoi.session.mental.play.HiddenMatch` through a :class:`HiddenPlay`:
it signs and queues the moves the table makes (:meth:`HiddenPlay.pump`), checks
and records the peer's (:meth:`HiddenPlay.on_card`; a move is recorded *before*
it is checked, so one that proves a cheat stays in the record, with this side's
own deal secrets as evidence), reports what the table did as session events
(:meth:`HiddenPlay.report`), and rebuilds the table from a record and this
side's deal secret when resuming (:meth:`HiddenPlay.rebuild`).  Every step it
records goes through the match's :class:`~p2pkoikoi.session.play.Play`
(``commit_step``, ``finish``), which it is handed; it owns the table, what of
the table was already reported, and the evidence of a cheat.
"""

from __future__ import annotations

from collections.abc import Callable

import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine import Action, InputError
from p2pkoikoi.session.errors import (
    CheatingError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    ResumeError,
)
from p2pkoikoi.session.events import ActionReceived, Checking, HiddenProgress
from p2pkoikoi.session.forfeits import Forfeits
from p2pkoikoi.session.mental.errors import HiddenDealError
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.play import Play
from p2pkoikoi.session.records.record import ActionRecord, Evidence, Record, resign_reason
from p2pkoikoi.session.states import State


class HiddenPlay(Part):
    """One hidden-deal match's table and its card moves, in and out."""

    def __init__(
        self,
        ctx: PartContext,
        *,
        play: Play,
        table: HiddenMatch,
        peer_key: bytes,
        joiner_started: Callable[[], bool],
        forfeits: Forfeits | None = None,
    ) -> None:
        super().__init__(ctx)
        self._play = play
        self._table = table
        self._peer_key = peer_key
        self._joiner_started = joiner_started
        self._forfeits = forfeits  # where a caught cheater's forfeit goes
        self._seen = (len(table.events), 0)  # (engine events, decisions) already reported
        self._evidence: Evidence | None = None

    def __repr__(self) -> str:
        return f"HiddenPlay({self._me.role!r}, seen={self._seen})"

    @property
    def table(self) -> HiddenMatch:
        return self._table

    @property
    def evidence(self) -> Evidence | None:
        """This side's deal secrets, kept when a peer's move proved a cheat."""
        return self._evidence

    def _commit_card(self, t: bytes, rec: ActionRecord) -> None:
        self._play.commit_step(self._table.state, t, rec)

    def pump(self) -> None:
        """Sign and queue the hidden deal's outgoing moves; report what the table did."""
        h = self._table
        play = self._play
        seat = self._me.seat
        while h.outbox:
            move, before = h.outbox.pop(0)
            seq = play.seq + 1
            fields = crypto.card_entry_fields(
                seq,
                seat,
                move.kind,
                move.action or None,
                move.pos if move.pos >= 0 else None,
                move.deck or None,
                move.keys or None,
                before,
            )
            t = crypto.absorb(play.transcript, "card", *fields)
            sig = self._me.sign(crypto.sig_message(t))
            self._queue(
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
            self._commit_card(
                t,
                ActionRecord(
                    seq,
                    seat,
                    move.action,
                    before,
                    sig,
                    move.kind,
                    move.pos if move.pos >= 0 else None,
                    move.deck,
                    move.keys,
                ),
            )
        self.report()

    def report(self) -> None:
        """Events for what the hidden table did since the last report; the end of the match."""
        h = self._table
        play = self._play
        seat = self._me.seat
        play.show(h.state)
        seen_events, seen_applied = self._seen
        new = tuple(h.events[seen_events:])
        self._seen = (len(h.events), h.applied)
        if new or h.applied != seen_applied:
            last = h.last_applied
            if h.applied == seen_applied + 1 and last is not None and last[0] != seat:
                self._emit(ActionReceived(play.seq, last[1], new, last[0]))
            else:
                actor = last[0] if last is not None and h.applied != seen_applied else None
                # every engine event goes out once, here (also those of a decision of ours
                # applied at once: a caller that showed last_local_events too showed it twice)
                play.last_local_events = ()
                self._emit(HiddenProgress(play.seq, actor, new))
        if h.is_over and play.result is None:
            play.finish()

    def on_card(self, msg: wire.CardMsg) -> None:
        """A ``card`` message: the peer's move, or (catching up after a resume) one of ours
        that our record lost and the peer re-sends (protocol/README.md section 12)."""
        if self._phase.state is not State.PLAY:
            raise self._phase.unexpected("card")
        h = self._table
        play = self._play
        me = self._me
        if me.is_host and not self._joiner_started():
            # as for actions (protocol/README.md section 8): the joiner's start signature
            # binds it to the match before any move of its own counts
            raise RemoteProtocolError(
                f"the joiner sent card move {msg.seq} before its start signature"
            )
        if msg.seq != play.seq + 1:
            raise RemoteProtocolError(
                f"wrong sequence number on card move: expected {play.seq + 1}, got {msg.seq}"
            )
        catchup = play.catchup
        catching = catchup is not None and msg.seq <= catchup[0]
        if catching and h.outbox:  # our table made this move again; the peer has it signed
            seat, before = me.seat, h.outbox[0][1]
        elif catching and h.expecting == ("act", me.seat):  # a decision of ours, lost
            seat, before = me.seat, h.state_hash()
        else:
            seat, before = me.role.other.seat, h.state_hash()
        if msg.hash != before:
            raise RemoteProtocolError(
                f"state hash mismatch before card move {msg.seq} ({msg.kind}): the two "
                "programs disagree about the game (different versions, or tampering)"
            )
        fields = crypto.card_entry_fields(
            msg.seq, seat, msg.kind, msg.action, msg.pos, msg.deck, msg.keys, msg.hash
        )
        t = crypto.absorb(play.transcript, "card", *fields)
        key = me.pub if seat == me.seat else self._peer_key
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
        if seat == me.seat:
            self._take_back(move, t, rec)
            return
        # recorded before it is checked: a move that proves a cheat stays in the record
        self._commit_card(t, rec)
        try:
            h.receive(move)
        except HiddenDealError as exc:
            self._caught(exc)
            raise
        if play.catchup is None:
            self.pump()
        else:  # still catching up: the moves our table makes now, the peer re-sends to us
            self.report()
        if h.unsettled:  # our answer goes out first; the session checks the proof next
            self._emit(Checking(play.seq))

    def settle(self) -> None:
        """Check the proof the table left for later (:class:`Checking`), as on receipt."""
        try:
            self._table.settle()
        except HiddenDealError as exc:
            self._caught(exc)
            raise

    def _caught(self, exc: HiddenDealError) -> None:
        """A peer's move proved a cheat: keep our deal secrets as evidence, and (if the
        peer is to blame) record its forfeit, our signed claim resting on that evidence."""
        h = self._table
        round_no, attempt = h.deal_id  # the deal the check was about (the engine may be past it)
        self._evidence = Evidence(self._me.seat, round_no, attempt, h.deal_table.secrets.encode())
        f = self._forfeits
        if exc.seat == h.peer and f is not None and f.forfeit is None:
            f.record(h.peer, f"cheated: {exc}"[:200])

    def _take_back(self, move: CardMove, t: bytes, rec: ActionRecord) -> None:
        """One of our own moves, lost from our record, re-sent by the peer: our table must
        make exactly that move (signed by us, so it is ours)."""
        h = self._table
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
        self._commit_card(t, rec)
        if self._play.catchup is None:  # caught up: what our table made after it goes out now
            self.pump()
        else:
            self.report()

    def rebuild(self, r: Record) -> None:
        """Rebuild the hidden table from the record and this side's secret: our own moves
        are made again (they must come out identical), the peer's are received again."""
        h = self._table
        play = self._play
        seat = self._me.seat
        for a in r.actions:
            if a.kind == "":  # a resignation
                h.resign(a.seat)
                reason = resign_reason(a.action) or ""
                fields = crypto.resign_fields(a.seq, a.seat, a.state_hash, reason)
                t = crypto.absorb(play.transcript, "resign", *fields)
                play.commit_step(h.state, t, a)
                continue
            move = CardMove(
                a.kind, a.seat, a.action, -1 if a.pos is None else a.pos, a.deck, a.keys
            )
            try:
                if a.seat == seat:
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
            self._commit_card(crypto.absorb(play.transcript, "card", *fields), a)
        self._seen = (len(h.events), h.applied)
