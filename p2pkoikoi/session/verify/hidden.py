"""A hidden-deal record, checked: every card move replayed by both sides' reference
code (:mod:`p2pkoikoi.session.mental.replay`), then the record's end."""

from __future__ import annotations

from p2pkoikoi.session.records.record import Record
from p2pkoikoi.session.verify.ends import (
    final_held,
    final_sigs,
    forfeit,
    refuted_host_forfeit,
    result_problems,
    time_resignations,
)
from p2pkoikoi.session.verify.report import Report

UNREPLAYED = (
    "the last deal was resigned before its audit, so no replay reaches the result:"
    " it rests on the players' final signatures"
)


def unreplayed_lack(audited: int) -> str:
    """What a resigned hidden-deal record lacks: the replay of its result."""
    when = (
        "before any deal's audit"
        if audited == 0
        else f"in deal {audited + 1}, before its audit ({audited} earlier"
        f" deal{'s' if audited != 1 else ''} audited)"
    )
    return (
        f"a replay of the result: the hidden-deal match was resigned {when}, so the last"
        " deal's cards never opened (both players' final signatures are checked)"
    )


def verify_hidden(r: Record, rep: Report, seed: bytes, keys: tuple[bytes, bytes], t: bytes) -> None:
    """A hidden-deal record: every card move replayed by both sides' reference code."""
    from p2pkoikoi.session.mental.replay import replay_hidden

    assert r.rules is not None
    if r.protocol < 3:
        rep.add(
            "hidden deal",
            False,
            f"a hidden deal of protocol version {r.protocol} (no shuffle proofs, another group)"
            " cannot be replayed by this release: verify it with the release that played it",
        )
        return
    out = None
    if r.evidence is not None:
        # evidence is unsigned: it counts only if it proves a cheat (the replay with
        # it fails at a move the cheater signed); otherwise the record is replayed as
        # if it were not there, so it cannot open a deal its players never audited
        tried = Report()
        with_evidence = replay_hidden(r.rules, seed, r.actions, r.evidence, keys, t, tried.add)
        if with_evidence.failed:
            rep.checks.extend(tried.checks)
            return
        rep.skip(
            "evidence",
            f"seat {r.evidence.seat}'s deck secrets in the record prove no cheat: unsigned,"
            " they are not used",
        )
    out = replay_hidden(r.rules, seed, r.actions, None, keys, t, rep.add)
    if out.failed:
        return
    detail = (
        f"{len(r.actions)} card moves; {out.audited} deals audited: every masking step, key,"
        " declared and undeclared hand, and play checked"
    )
    if out.blind and r.actions:
        last = r.actions[-1]
        detail += (
            "; the last deal was not audited: the record stops in it, after card move"
            f" {last.seq} ({last.kind or last.action} by seat {last.seat})"
        )
        rep.lacks.append(
            "the last deal was not audited: its cards never opened, so its moves rest on"
            " their signatures and on what one side's secrets could check"
        )
    rep.add("hidden deal", True, detail)
    time_resignations(r, rep)
    if r.forfeit is not None:
        if refuted_host_forfeit(r, rep):
            return
        forfeit(r, rep, out.transcript, "")
    if r.result is None:
        rep.skip("result", "the match is not finished")
        return
    res = r.result
    h = out.state
    if h is None:
        # a resignation before any deal was audited: a resigned deal is never audited
        # (hidden-deal.md section 6), so nothing can recompute the result; both
        # players' final signatures over it are still checked
        rep.skip("result", UNREPLAYED)
        rep.lacks.append(unreplayed_lack(out.audited))
        final_sigs(r, rep, final_held(r, keys, out.transcript, res.final_state_hash))
        return
    m = h.state
    problems = result_problems(m, h.state_hash(), out.transcript, res)
    if not rep.add("result", not problems, "; ".join(problems) or f"scores {m.scores}"):
        return
    final_sigs(r, rep, final_held(r, keys, out.transcript, res.final_state_hash))
