"""How a record ends, checked: before the seed, by a forfeit, by a resignation, and
its result and final signatures.  One place for these, whichever deal the match
used (:mod:`~p2pkoikoi.session.verify.check` replays the open deal,
:mod:`~p2pkoikoi.session.verify.hidden` the hidden one)."""

from __future__ import annotations

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import MatchState
from p2pkoikoi.session.records.record import (
    LEFT_FORFEIT,
    TIME_FORFEIT,
    Record,
    ResultRecord,
    resign_reason,
)
from p2pkoikoi.session.verify.report import Report


def verify_early(r: Record, rep: Report) -> None:
    """A record that stops before both players identified themselves.

    Honest when the connection ended during the handshake (a peer that sent
    garbage, or left): the identity signatures present are checked and the
    rest is skipped.  Anything recorded past the handshake without both
    identities cannot be checked and fails.
    """
    later = (
        r.accepted
        or r.commitment is not None
        or r.joiner_value is not None
        or r.host_value is not None
        or r.match_seed is not None
        or r.actions
        or r.result is not None
        or any(sig is not None for sig in r.final_sigs)
    )
    if r.session_id is None or later:
        rep.add("handshake", False, "the record stops before both players identified themselves")
        return
    rules_bytes = r.rules.encode() if r.rules is not None else b""
    for role, p, rb, limit in (
        ("host", r.host, rules_bytes, r.turn_limit),
        ("joiner", r.joiner, b"", 0),
    ):
        if p is None or p.auth_sig is None:
            continue
        ok = crypto.verify_sig(
            p.key, p.auth_sig, crypto.auth_message(r.session_id, role, p.name, p.key, rb, limit)
        )
        if not rep.add(f"identity {role}", ok, f"{p.name} {crypto.fingerprint(p.key)}"):
            return
    rep.skip("handshake", "the record stops before both players identified themselves")


def stop_early(rep: Report, r: Record, why: str, *, commit: bool) -> None:
    """The record ends before the match seed: honest if nothing later is recorded.

    A match (seed, actions, result, final signatures) without the reveal that
    derives its seed cannot be checked, so it fails instead of passing unchecked;
    ``commit`` also counts the seed exchange itself as "later" (no acceptance).
    """
    later = (
        r.match_seed is not None
        or r.actions
        or r.result is not None
        or any(sig is not None for sig in r.final_sigs)
        or (
            commit
            and (r.commitment is not None or r.joiner_value is not None or r.host_value is not None)
        )
    )
    if later:
        rep.add("commitment", False, f"{why}, yet it records more of the match")
    else:
        rep.skip("commitment", why)


def refuted_host_forfeit(r: Record, rep: Report) -> bool:
    """A claim that the host forfeited in the commit-reveal, in a record that holds the
    host's reveal (which opens its signed commitment): the host did its part there,
    and from the reveal on it is the joiner who has seen the seed and owes its
    ``start`` (protocol/README.md section 8).  Such a claim fails (True)."""
    f = r.forfeit
    if (
        f is None
        or f.seat != 0
        or f.reason in (TIME_FORFEIT, LEFT_FORFEIT)
        or r.host_value is None
        or r.actions
        or (r.joiner is not None and r.joiner.start_sig is not None)
    ):
        return False
    rep.add(
        "forfeit",
        False,
        "the record claims the host forfeited before play, but it holds the host's reveal:"
        " the host did its part; after the reveal the joiner, who has seen the seed, owes"
        " its start signature, so an end there is the joiner's forfeit",
    )
    return True


def forfeit(r: Record, rep: Report, t: bytes, evidence: str) -> None:
    """The forfeit check: signed by the player who recorded it (the other seat) over
    the transcript as far as the record goes.  It rests on that one signature."""
    f = r.forfeit
    assert f is not None and r.host is not None and r.joiner is not None
    who, writer = ("host", "joiner")[f.seat], ("host", "joiner")[1 - f.seat]
    key = (r.host.key, r.joiner.key)[1 - f.seat]
    ok = crypto.verify_sig(key, f.sig, crypto.forfeit_message(t, f.seat, f.reason))
    if f.reason == TIME_FORFEIT:
        limit = f"{r.turn_limit}s" if r.turn_limit else "no limit"
        what = f"by time: the turn limit ({limit}) ran out on its turn"
    elif f.reason == LEFT_FORFEIT:
        what = (
            "by abandoning the match: it left during play and did not come back within the"
            " reconnect window"
        )
    else:
        what = f.reason
    extra = f"; {evidence}" if evidence else ""
    rep.add(
        "forfeit",
        ok and (f.reason != TIME_FORFEIT or r.turn_limit > 0),
        f"the {who} forfeits {what} (the {writer}'s claim: it rests on the {writer}'s "
        f"signature alone{extra})"
        if ok
        else f"the {writer}'s signature on the {who}'s forfeit is invalid",
    )


def label_resignation(r: Record, rep: Report, before: MatchState) -> None:
    """Who resigned, and whether on the other player's turn (the replay checked it)."""
    if not r.actions or resign_reason(r.actions[-1].action) != "":
        return
    a = r.actions[-1]
    who = ("host", "joiner")[a.seat]
    player = (r.host, r.joiner)[a.seat]
    name = player.name if player is not None else "?"
    off = before.to_act != a.seat
    rep.add(
        "resigned",
        True,
        f"the {who} ({name}) resigned at action {a.seq}"
        + (" on the other player's turn" if off else "")
        + f" (signed by the {who})",
    )


def time_resignations(r: Record, rep: Report) -> None:
    """A ``resign:time`` (a program resigning for its player at the turn limit) is
    reported, and holds only in a match with a turn limit."""
    for a in r.actions:
        if resign_reason(a.action) == TIME_FORFEIT:
            who = ("host", "joiner")[a.seat]
            player = (r.host, r.joiner)[a.seat]
            name = player.name if player is not None else who
            rep.add(
                "resigned by time",
                r.turn_limit > 0,
                f"the {who} ({name}) ran out of time ({r.turn_limit}s per decision): its "
                f"program resigned for it (signed by the {who})"
                if r.turn_limit
                else f"the {who} resigned 'by time' in a match without a turn limit",
            )


def result_problems(
    m: MatchState, state_hash: bytes, transcript: bytes, res: ResultRecord
) -> list[str]:
    """How the replayed end (``m``, its state hash and the transcript) differs from the
    recorded result; empty when they agree.  One list for the open and hidden deals."""
    problems = []
    if not m.is_over:
        problems.append("the replayed match is not over")
    if m.scores != res.scores:
        problems.append(f"scores are {m.scores}, record says {res.scores}")
    if m.winner != res.winner:
        problems.append(f"winner is {m.winner}, record says {res.winner}")
    if state_hash != res.final_state_hash:
        problems.append("final state hash differs")
    if transcript != res.transcript_hash:
        problems.append("final transcript hash differs")
    return problems


def final_held(
    r: Record, keys: tuple[bytes, bytes], transcript: bytes, final_hash: bytes
) -> tuple[bool | None, bool | None]:
    """Whether each player's final signature holds (None: there is none), checked once
    for the result's line and the final signature checks both."""
    message = crypto.final_message(transcript, final_hash)
    return (
        None if r.final_sigs[0] is None else crypto.verify_sig(keys[0], r.final_sigs[0], message),
        None if r.final_sigs[1] is None else crypto.verify_sig(keys[1], r.final_sigs[1], message),
    )


def final_sigs(r: Record, rep: Report, held: tuple[bool | None, bool | None]) -> None:
    """The final signature checks, from :func:`final_held`."""
    for role, ok in zip(("host", "joiner"), held, strict=True):
        if ok is None:
            rep.skip(f"final signature {role}", r.missing or "missing")
        else:
            rep.add(f"final signature {role}", ok)
