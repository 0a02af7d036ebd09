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
``action N signature``    the actor's signature over the transcript holds (each
                          seat's last is checked, or its final signature where that
                          holds: either covers its earlier ones; all in order when
                          one fails: see :func:`_covering`)
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

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import (
    Action,
    IllegalActionError,
    InputError,
    KoiKoiError,
    MatchState,
    new_match,
)
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session.records.record import TIME_FORFEIT, Record, resign_reason
from p2pkoikoi.session.records.transcript import transcript_to_accept
from p2pkoikoi.session.verify.ends import (
    final_held,
    final_sigs,
    forfeit,
    label_resignation,
    refuted_host_forfeit,
    result_problems,
    stop_early,
    time_resignations,
    verify_early,
)
from p2pkoikoi.session.verify.report import Check, Report, VerifyReport, lacks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["Check", "VerifyReport", "verify_record"]


def verify_record(record: Record, *, every_signature: bool = False) -> VerifyReport:
    """Every check on ``record``; never raises on a bad record (it reports).

    The actions' signatures that a later one of the same player covers are checked
    only with ``every_signature`` (see :func:`_covering`): a program resuming from
    its journal does, since it re-sends signed actions that the other side checks
    one by one."""
    rep = Report()
    _verify(record, rep, every_signature)
    return VerifyReport(tuple(rep.checks), tuple(lacks(record, rep)))


def _verify(r: Record, rep: Report, every_signature: bool) -> None:
    if r.rules is None or r.host is None or r.joiner is None or r.session_id is None:
        verify_early(r, rep)
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
        stop_early(rep, r, "the joiner did not accept the rules", commit=True)
        return
    t_commit = transcript_to_accept(r)
    if r.commitment is None:
        stop_early(rep, r, "the record stops before the commitment", commit=True)
        return
    t = crypto.absorb(t_commit, "commit", r.commitment)
    ok = r.commit_sig is not None and crypto.verify_sig(
        r.host.key, r.commit_sig, crypto.commit_sig_message(t)
    )
    if not rep.add("commitment signature", ok, "the host signed its commitment"):
        return
    if r.joiner_value is None or r.host_value is None:
        if r.forfeit is not None and r.forfeit.seat == 0 and r.joiner_value is not None:
            forfeit(
                r,
                rep,
                crypto.absorb(t, "value", r.joiner_value),
                "the host's signed commitment shows it was in this match",
            )
        else:
            stop_early(rep, r, "the record stops before the reveal", commit=False)
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
        m = new_match(rules, seed)  # no events: the replay makes none (``after``)
    except KoiKoiError as exc:  # pragma: no cover - decoded rules and a 32-byte seed
        rep.add("deal", False, str(exc))
        return
    rep.add("deal", True, f"first dealer: seat {m.dealer}")
    keys = (r.host.key, r.joiner.key)
    if rules.deal is DealMode.HIDDEN:
        # imported here: checking an open deal's record (most are) compiles none of these
        from p2pkoikoi.session.verify.hidden import verify_hidden

        verify_hidden(r, rep, seed, keys, t)
        return
    before = m  # the state before the last action (who was to act when it came)
    chain: list[bytes] = []  # the transcript that each action's signature covers
    for i, a in enumerate(r.actions):
        before = m
        step = _action(i + 1, a.seq, a.seat, a.action, a.state_hash, m, t)
        if isinstance(step, Check):
            # a failing signature before the bad action is the first failure
            _fail(rep, _bad_signature(r, keys, chain, range(i)) or step)
            return
        m, t = step
        chain.append(t)
    # a player's final signature, where it holds, is over the transcript after every
    # action: it covers that player's moves as their last action signature does
    held = (None, None) if r.result is None else final_held(r, keys, t, r.result.final_state_hash)
    covering = range(len(chain)) if every_signature else _covering(r, held)
    if _bad_signature(r, keys, chain, covering) is not None:
        # name the first that fails, in order, as a check of every signature would
        _fail(rep, _bad_signature(r, keys, chain, range(len(chain))))
        return
    rep.add(
        "actions",
        True,
        f"{len(r.actions)} actions: turn, legality, state hash, every signature"
        if every_signature
        else f"{len(r.actions)} actions: turn, legality, state hash; each player's last"
        " signature covers all of their moves",
    )
    label_resignation(r, rep, before)
    time_resignations(r, rep)
    if r.forfeit is not None:
        f = r.forfeit
        if f.reason == TIME_FORFEIT and (m.is_over or m.to_act != f.seat):
            who = ("host", "joiner")[f.seat]
            rep.add("forfeit", False, f"a forfeit by time of the {who}, but it was not its turn")
            return
        if refuted_host_forfeit(r, rep):
            return
        forfeit(r, rep, t, "")
    if r.result is None:
        rep.skip("result", "the match is not finished")
        return
    res = r.result
    problems = result_problems(m, m.state_hash(), t, res)
    signed = [role for role, ok in zip(("host", "joiner"), held, strict=True) if ok]
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
    final_sigs(r, rep, held)


def _covering(r: Record, held: tuple[bool | None, bool | None]) -> list[int]:
    """The actions whose signatures cover every action: each seat's last, unless that
    seat's final signature holds (``held``), which covers them all the same.

    An action's signature is over the transcript after it (protocol/record-format.md),
    a hash chain through every earlier action with its seat, text and state hash, so a
    player's last signature binds that player to all of their earlier moves as well:
    changing any of them changes the transcript it signs.  A final signature is over
    the transcript after the last action, so it binds its player to every move.
    Checking those is as strong as checking them all (SHA-256 and Ed25519 as the
    protocol assumes them) and saves the rest, which were most of ``verify``'s own
    time.  A record where one fails is checked in order, so that the report names its
    first failing signature.
    """
    last = {a.seat: i for i, a in enumerate(r.actions)}
    return sorted(i for seat, i in last.items() if not held[seat])


def _bad_signature(
    r: Record, keys: tuple[bytes, bytes], signed: list[bytes], which: Iterable[int]
) -> Check | None:
    """The first of the actions ``which`` (indexes) whose signature fails, as a check."""
    for i in which:
        a = r.actions[i]
        if not crypto.verify_sig(keys[a.seat], a.sig, crypto.sig_message(signed[i])):
            return Check(
                f"action {i + 1} signature", "fail", f"{a.action}: signature by seat {a.seat} fails"
            )
    return None


def _fail(rep: Report, check: Check | None) -> None:
    assert check is not None  # a covering signature failed, so one in order does
    rep.add(check.name, False, check.detail)


#: canonical action texts met so far, and their actions (a record repeats most of
#: its texts: ``play 3b`` comes back every few rounds); bounded by the game itself
_CANONICAL: dict[str, Action] = {}


def _action(
    n: int, seq: int, seat: int, text: str, state_hash: bytes, m: MatchState, t: bytes
) -> tuple[MatchState, bytes] | Check:
    """Check one action but its signature; the state and transcript after it, or the
    failed check.  The replay is done once, here."""
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
        return Check(f"{name} turn", "fail", why)
    if reason is not None:
        new, _ = m.resign(seat)
    else:
        try:
            action = _CANONICAL.get(text)
            if action is None:
                action = Action.parse(text)
                if str(action) != text:
                    raise InputError(f"not canonical: {text!r}")
                _CANONICAL[text] = action
            new = m.after(action)  # the same checks as apply, without building events
        except (InputError, IllegalActionError) as exc:
            return Check(f"{name} legal", "fail", f"{text}: {exc}")
    if new.state_hash() != state_hash:
        return Check(f"{name} state hash", "fail", f"{text}: the replayed state differs")
    if reason is not None:
        return new, crypto.absorb(t, "resign", *crypto.resign_fields(seq, seat, state_hash, reason))
    return new, crypto.absorb_action(t, seq, seat, text, state_hash)
