"""Verify a match record: a pure function of the record, replaying through the engine.

Checks, in order (each named in the report; later checks are skipped once the
replay cannot go on):

``rules``                 the rules decode and their fingerprint matches
``identity host|joiner``  each auth signature over the handshake holds (it proves the key
                          took part in that connection, not in this match: see ``start``)
``commitment signature``  the host signed its commitment (after both auths and the rules)
``commitment``            the host's reveal opens its commitment
``seed``                  the match seed derives from both values and the transcript
``start host|joiner``     each player signed the transcript after the reveal: both
                          identities, the rules and both values.  Only this binds a
                          player to the match; a record without it is not confirmed
                          by that player
``deal``                  the engine starts a match from the seed (deals derive from it)
``action N ...``          for the first bad action only (passing actions are summed up
                          in one ``actions`` check):
``action N turn``         the actor is the seat to act (a resignation: either seat,
                          open deal), seq runs 1, 2, 3, ...
``action N legal``        the action is legal in the replayed state
``action N state hash``   the recorded state hash equals the replayed one
``action N signature``    the actor's signature over the transcript holds
``result``                the replay's scores, winner and hashes equal the recorded result
``final signature host|joiner``  each player's signature over the final transcript holds
``resigned``              who resigned, at which action, and whether on the other
                          player's turn (a player leaving the table resigns at once)
``resigned by time``      a player's own program resigned for it when its turn
                          limit ran out (signed by that player, action ``resign:time``)
``forfeit``               a match that ended with a player walking away (or letting
                          the turn limit pass: reason ``time``): signed by the other
                          player, whose claim alone it is

A hidden-deal record (rule ``deal = hidden``) has card moves instead of actions:
``card move N ...`` names the first bad one and the seat that cheated, ``hidden
deal`` sums up the rest (:mod:`p2pkoikoi.session.mental.replay`).

The report's :attr:`VerifyReport.lacks` says what an incomplete record lacks
(``p2pkoikoi verify`` exits 3 for a valid but incomplete record, 0 only for a
complete one: docs/verify.md).
"""

from __future__ import annotations

from typing import Any

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import Action, IllegalActionError, InputError, KoiKoiError, MatchState
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.engine.values import value
from p2pkoikoi.session.record import (
    LEFT_FORFEIT,
    TIME_FORFEIT,
    Record,
    ResultRecord,
    resign_reason,
)
from p2pkoikoi.session.transcript import transcript_to_accept


@value
class Check:
    """One check of a record: its name, ``pass``/``fail``/``skip`` and why."""

    name: str
    status: str  # "pass", "fail" or "skip"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "fail"


@value
class VerifyReport:
    """Every check of one record, in order, and what keeps it from being complete."""

    checks: tuple[Check, ...]
    #: what keeps a valid record from being complete, one phrase each (empty: complete)
    lacks: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def complete(self) -> bool:
        """A finished match whose result both players signed (and every check holds)."""
        return self.ok and not self.lacks

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if c.status == "fail"), None)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        return {
            "ok": self.ok,
            "complete": self.complete,
            "lacks": list(self.lacks),
            "first_failure": first.name if first else None,
            "checks": [
                {"name": c.name, "status": c.status, "detail": c.detail} for c in self.checks
            ],
        }


class _Report:
    def __init__(self) -> None:
        self.checks: list[Check] = []
        #: what an otherwise valid record lacks, found by a check (a hidden deal's audit)
        self.lacks: list[str] = []

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, "pass" if ok else "fail", detail))
        return ok

    def skip(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "skip", detail))


def verify_record(record: Record) -> VerifyReport:
    """Every check on ``record``; never raises on a bad record (it reports)."""
    rep = _Report()
    _verify(record, rep)
    return VerifyReport(tuple(rep.checks), tuple(_lacks(record, rep)))


def _lacks(r: Record, rep: _Report) -> list[str]:
    passed = {c.name for c in rep.checks if c.status == "pass"}
    out: list[str] = []
    if r.forfeit is not None:
        who = ("host", "joiner")[r.forfeit.seat]
        out.append(f"the {who} forfeited ({r.forfeit.reason}): one player's account")
    elif r.result is None:
        out.append("the match did not finish")
    out.extend(rep.lacks)
    for seat, role in enumerate(("host", "joiner")):
        player = (r.host, r.joiner)[seat]
        name = f" ({player.name})" if player is not None else ""
        if r.match_seed is not None and f"start {role}" not in passed:
            out.append(f"the {role}{name} never signed this match (no start signature)")
        if r.result is not None and f"final signature {role}" not in passed:
            why = f": {r.missing}" if r.missing else ""
            out.append(
                f"the {role}'s final signature{why}" if why else f"the {role}'s final signature"
            )
    return out


def _verify(r: Record, rep: _Report) -> None:
    if r.rules is None or r.host is None or r.joiner is None or r.session_id is None:
        _verify_early(r, rep)
        return
    rules = r.rules
    rules_bytes = rules.encode()
    rep.add("rules", True, f"fingerprint {rules.fingerprint()[:16]}...")
    if r.match_number > 1 or r.previous is not None:
        # decode_record refuses one without the other; a Record built in memory may not
        if r.previous is None or r.match_number < 2:
            rep.add("rematch", False, "a rematch's number above 1 and 'previous' go together")
            return
        rep.add(
            "rematch",
            True,
            f"match {r.match_number} of its connection, chained to the previous match "
            f"(final transcript {r.previous.hex()[:16]}...): every signature below covers both",
        )
    h0 = r.session_id
    for role, p, rb, limit in (
        ("host", r.host, rules_bytes, r.turn_limit),
        ("joiner", r.joiner, b"", 0),
    ):
        ok = p.auth_sig is not None and crypto.verify_sig(
            p.key, p.auth_sig, crypto.auth_message(h0, role, p.name, p.key, rb, limit)
        )
        detail = f"{p.name} {crypto.fingerprint(p.key)} (its key took part in the handshake)"
        if not rep.add(f"identity {role}", ok, detail):
            return
    if not r.accepted:
        _stop_early(rep, r, "the joiner did not accept the rules", commit=True)
        return
    t_commit = transcript_to_accept(r)
    if r.commitment is None:
        _stop_early(rep, r, "the record stops before the commitment", commit=True)
        return
    t = crypto.absorb(t_commit, "commit", r.commitment)
    ok = r.commit_sig is not None and crypto.verify_sig(
        r.host.key, r.commit_sig, crypto.commit_sig_message(t)
    )
    if not rep.add("commitment signature", ok, "the host signed its commitment"):
        return
    if r.joiner_value is None or r.host_value is None:
        if r.forfeit is not None and r.forfeit.seat == 0 and r.joiner_value is not None:
            _forfeit(
                r,
                rep,
                crypto.absorb(t, "value", r.joiner_value),
                "the host's signed commitment shows it was in this match",
            )
        else:
            _stop_early(rep, r, "the record stops before the reveal", commit=False)
        return
    if not rep.add(
        "commitment",
        crypto.commitment(t_commit, r.host_value) == r.commitment,
        "the host's reveal opens its commitment",
    ):
        return
    seed = crypto.derive_seed(r.host_value, r.joiner_value, t_commit)
    if not rep.add("seed", seed == r.match_seed, "match seed = SHA-256(tag, values, transcript)"):
        return
    t = crypto.absorb(t, "value", r.joiner_value)
    t = crypto.absorb(t, "reveal", r.host_value)
    for role, p in (("host", r.host), ("joiner", r.joiner)):
        if p.start_sig is None:
            rep.skip(f"start {role}", f"{p.name} never signed this match: not confirmed by them")
            continue
        ok = crypto.verify_sig(p.key, p.start_sig, crypto.start_message(t))
        detail = f"{p.name} signed both identities, the rules and both values"
        if not rep.add(f"start {role}", ok, detail):
            return
    try:
        m, _ = MatchState.start(rules, seed)
    except KoiKoiError as exc:  # pragma: no cover - decoded rules and a 32-byte seed
        rep.add("deal", False, str(exc))
        return
    rep.add("deal", True, f"first dealer: seat {m.dealer}")
    keys = (r.host.key, r.joiner.key)
    if rules.deal is DealMode.HIDDEN:
        _verify_hidden(r, rep, seed, keys, t)
        return
    before = m  # the state before the last action (who was to act when it came)
    for i, a in enumerate(r.actions):
        before = m
        step = _action(rep, i + 1, a.seq, a.seat, a.action, a.state_hash, a.sig, m, keys, t)
        if step is None:
            return
        m, t = step
    rep.add("actions", True, f"{len(r.actions)} actions: turn, legality, state hash, signature")
    _label_resignation(r, rep, before)
    _time_resignations(r, rep)
    if r.forfeit is not None:
        f = r.forfeit
        if f.reason == TIME_FORFEIT and (m.is_over or m.to_act != f.seat):
            who = ("host", "joiner")[f.seat]
            rep.add("forfeit", False, f"a forfeit by time of the {who}, but it was not its turn")
            return
        if _refuted_host_forfeit(r, rep):
            return
        _forfeit(r, rep, t, "")
    if r.result is None:
        rep.skip("result", "the match is not finished")
        return
    res = r.result
    problems = _result_problems(m, m.state_hash(), t, res)
    signed = [
        role
        for role, key, sig in (
            ("host", keys[0], r.final_sigs[0]),
            ("joiner", keys[1], r.final_sigs[1]),
        )
        if sig is not None
        and crypto.verify_sig(key, sig, crypto.final_message(t, res.final_state_hash))
    ]
    confirmed = (
        "confirmed: both players signed it"
        if len(signed) == 2
        else f"NOT confirmed: only the {signed[0]} signed it"
        if signed
        else "NOT confirmed: nobody signed it"
    )
    if not rep.add(
        "result", not problems, "; ".join(problems) or f"scores {m.scores}, {confirmed}"
    ):
        return
    for role, key, sig in (
        ("host", keys[0], r.final_sigs[0]),
        ("joiner", keys[1], r.final_sigs[1]),
    ):
        if sig is None:
            rep.skip(f"final signature {role}", r.missing or "missing")
            continue
        rep.add(
            f"final signature {role}",
            crypto.verify_sig(key, sig, crypto.final_message(t, res.final_state_hash)),
        )


def _time_resignations(r: Record, rep: _Report) -> None:
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


def _verify_hidden(
    r: Record, rep: _Report, seed: bytes, keys: tuple[bytes, bytes], t: bytes
) -> None:
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
        tried = _Report()
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
    _time_resignations(r, rep)
    if r.forfeit is not None:
        if _refuted_host_forfeit(r, rep):
            return
        _forfeit(r, rep, out.transcript, "")
    if r.result is None:
        rep.skip("result", "the match is not finished")
        return
    res = r.result
    h = out.state
    if h is None:
        # a resignation before any deal was audited: a resigned deal is never audited
        # (hidden-deal.md section 6), so nothing can recompute the result; both
        # players' final signatures over it are still checked
        rep.skip("result", _UNREPLAYED)
        rep.lacks.append(_unreplayed_lack(out.audited))
        _final_sigs(r, rep, keys, out.transcript, res.final_state_hash)
        return
    m = h.state
    problems = _result_problems(m, h.state_hash(), out.transcript, res)
    if not rep.add("result", not problems, "; ".join(problems) or f"scores {m.scores}"):
        return
    _final_sigs(r, rep, keys, out.transcript, res.final_state_hash)


def _result_problems(
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


_UNREPLAYED = (
    "the last deal was resigned before its audit, so no replay reaches the result:"
    " it rests on the players' final signatures"
)


def _unreplayed_lack(audited: int) -> str:
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


def _final_sigs(
    r: Record, rep: _Report, keys: tuple[bytes, bytes], transcript: bytes, final_hash: bytes
) -> None:
    for role, key, sig in (
        ("host", keys[0], r.final_sigs[0]),
        ("joiner", keys[1], r.final_sigs[1]),
    ):
        if sig is None:
            rep.skip(f"final signature {role}", r.missing or "missing")
            continue
        rep.add(
            f"final signature {role}",
            crypto.verify_sig(key, sig, crypto.final_message(transcript, final_hash)),
        )


def _stop_early(rep: _Report, r: Record, why: str, *, commit: bool) -> None:
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


def _refuted_host_forfeit(r: Record, rep: _Report) -> bool:
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


def _forfeit(r: Record, rep: _Report, t: bytes, evidence: str) -> None:
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


def _verify_early(r: Record, rep: _Report) -> None:
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


def _label_resignation(r: Record, rep: _Report, before: MatchState) -> None:
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


def _action(
    rep: _Report,
    n: int,
    seq: int,
    seat: int,
    text: str,
    state_hash: bytes,
    sig: bytes,
    m: MatchState,
    keys: tuple[bytes, bytes],
    t: bytes,
) -> tuple[MatchState, bytes] | None:
    """Check one action; the state and transcript after it, or None (the failed
    check is in ``rep``).  The replay is done once, here."""
    name = f"action {n}"
    reason = resign_reason(text)
    # a resignation may come at any time during play, off-turn included (the open
    # deal, protocol/README.md section 9): only the seq binds it
    off_turn_ok = reason is not None and not m.is_over
    if seq != n or (m.to_act != seat and not off_turn_ok):
        why = (
            f"seq {seq}, expected {n}"
            if seq != n
            else f"seat {seat} acted, seat {m.to_act} was to act"
        )
        rep.add(f"{name} turn", False, why)
        return None
    if reason is not None:
        new, _ = m.resign(seat)
    else:
        try:
            action = Action.parse(text)
            if str(action) != text:
                raise InputError(f"not canonical: {text!r}")
            new = m.after(action)  # the same checks as apply, without building events
        except (InputError, IllegalActionError) as exc:
            rep.add(f"{name} legal", False, f"{text}: {exc}")
            return None
    if new.state_hash() != state_hash:
        rep.add(f"{name} state hash", False, f"{text}: the replayed state differs")
        return None
    if reason is not None:
        t_new = crypto.absorb(t, "resign", *crypto.resign_fields(seq, seat, state_hash, reason))
    else:
        t_new = crypto.absorb_action(t, seq, seat, text, state_hash)
    if not crypto.verify_sig(keys[seat], sig, crypto.sig_message(t_new)):
        rep.add(f"{name} signature", False, f"{text}: signature by seat {seat} fails")
        return None
    return new, t_new
