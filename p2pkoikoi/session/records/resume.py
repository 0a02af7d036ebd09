"""Where a broken match stands: a record verified and replayed once, ready to resume.

Why a separate step: a host waiting for its opponent to come back may see many
connections (the real one, retries, strangers).  Verifying a record replays
every action through the engine and checks every signature (tens of
milliseconds for a long match), so it is done once per break
(:meth:`ResumePoint.from_record`), and each connection's session starts from
the result (``Session.resume``) at the cost of copying a few lists.

A hidden-deal record (``deal = hidden``) is verified here too, but not
replayed: its moves are card moves that only this side's deal secret can make
again, so ``Session.resume`` rebuilds the table from the record and that
secret for each connection (:func:`p2pkoikoi.session.mental.session_part.rebuild`).
"""

from __future__ import annotations

import dataclasses

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import Action, MatchState
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session.errors import LocalProtocolError
from p2pkoikoi.session.records.record import Record, resign_reason
from p2pkoikoi.session.records.transcript import transcript_to_accept
from p2pkoikoi.session.verify.check import verify_record


@dataclasses.dataclass(frozen=True, slots=True)
class ResumePoint:
    """A verified record and its replay: the state, the transcript after each seq."""

    record: Record
    match: MatchState  # after the last recorded action (a hidden deal: as dealt, see below)
    t_commit: bytes  # the transcript the commitment binds (after accept)
    t_reveal: bytes  # the transcript after the reveal (what start signatures cover)
    tx_at: tuple[bytes, ...]  # transcript after seq 0, 1, 2, ...
    hash_at: tuple[bytes, ...]  # state hash after seq 0, 1, 2, ...

    @classmethod
    def from_record(cls, record: Record) -> ResumePoint:
        """Verify ``record`` and replay it; :class:`LocalProtocolError` if it cannot resume."""
        r = record
        if (
            r.session_id is None
            or r.rules is None
            or r.host is None
            or r.joiner is None
            or r.match_seed is None
            or r.host_value is None
            or r.joiner_value is None
            or r.commitment is None
        ):
            raise LocalProtocolError("the record stops before the match started: nothing to resume")
        if r.forfeit is not None:
            raise LocalProtocolError("the match ended with a forfeit: nothing to resume")
        report = verify_record(r, every_signature=True)  # it may re-send them
        if not report.ok:
            bad = report.first_failure
            assert bad is not None
            raise LocalProtocolError(f"the record does not verify ({bad.name}: {bad.detail})")
        t_commit = transcript_to_accept(r)
        t = crypto.absorb(t_commit, "commit", r.commitment)
        t = crypto.absorb(t, "value", r.joiner_value)
        t_reveal = crypto.absorb(t, "reveal", r.host_value)
        m, _ = MatchState.start(r.rules, r.match_seed)
        if r.rules.deal is DealMode.HIDDEN:
            # the hidden table is rebuilt per session from this side's deal secret
            # (hidden_session.rebuild): its moves are card moves, not engine actions
            return cls(r, m, t_commit, t_reveal, (t_reveal,), ())
        tx_at, hash_at = [t_reveal], [m.state_hash()]
        t = t_reveal
        for a in r.actions:
            reason = resign_reason(a.action)
            if reason is not None:
                m = m.resign(a.seat)[0]
                t = crypto.absorb(
                    t, "resign", *crypto.resign_fields(a.seq, a.seat, a.state_hash, reason)
                )
            else:
                m = m.apply(Action.parse(a.action))[0]
                t = crypto.absorb_action(t, a.seq, a.seat, a.action, a.state_hash)
            tx_at.append(t)
            hash_at.append(a.state_hash)
        return cls(r, m, t_commit, t_reveal, tuple(tx_at), tuple(hash_at))
