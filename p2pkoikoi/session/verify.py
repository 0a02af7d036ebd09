"""Verify a match record: a pure function of the record, replaying through the engine.

Checks, in order (each named in the report; later checks are skipped once the
replay cannot go on):

``rules``                 the rules decode and their fingerprint matches
``identity host|joiner``  each auth signature over the handshake holds
``commitment``            the host's reveal opens its commitment
``seed``                  the match seed derives from both values and the transcript
``deal``                  the engine starts a match from the seed (deals derive from it)
``action N ...``          for the first bad action only (passing actions are summed up
                          in one ``actions`` check):
``action N turn``         the actor is the seat to act, seq runs 1, 2, 3, ...
``action N legal``        the action is legal in the replayed state
``action N state hash``   the recorded state hash equals the replayed one
``action N signature``    the actor's signature over the transcript holds
``result``                the replay's scores, winner and hashes equal the recorded result
``final signature host|joiner``  each player's signature over the final transcript holds
"""

from __future__ import annotations

import dataclasses
from typing import Any

from p2pkoikoi.engine import Action, IllegalActionError, InputError, KoiKoiError, MatchState
from p2pkoikoi.session import crypto
from p2pkoikoi.session.record import Record


@dataclasses.dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str  # "pass", "fail" or "skip"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "fail"


@dataclasses.dataclass(frozen=True, slots=True)
class VerifyReport:
    checks: tuple[Check, ...]
    complete: bool  # the record covers a finished match with both final signatures

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if c.status == "fail"), None)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        return {
            "ok": self.ok,
            "complete": self.complete,
            "first_failure": first.name if first else None,
            "checks": [dataclasses.asdict(c) for c in self.checks],
        }


class _Report:
    def __init__(self) -> None:
        self.checks: list[Check] = []

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, "pass" if ok else "fail", detail))
        return ok

    def skip(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "skip", detail))


def verify_record(record: Record) -> VerifyReport:
    """Every check on ``record``; never raises on a bad record (it reports)."""
    rep = _Report()
    _verify(record, rep)
    return VerifyReport(tuple(rep.checks), record.is_complete)


def _verify(r: Record, rep: _Report) -> None:
    if r.rules is None or r.host is None or r.joiner is None or r.session_id is None:
        _verify_early(r, rep)
        return
    rules = r.rules
    rules_bytes = rules.encode()
    rep.add("rules", True, f"fingerprint {rules.fingerprint()[:16]}...")
    h0 = r.session_id
    for role, p, rb in (("host", r.host, rules_bytes), ("joiner", r.joiner, b"")):
        ok = p.auth_sig is not None and crypto.verify_sig(
            p.key, p.auth_sig, crypto.auth_message(h0, role, p.name, p.key, rb)
        )
        if not rep.add(f"identity {role}", ok, f"{p.name} {crypto.fingerprint(p.key)}"):
            return
    t = crypto.transcript_start(h0)
    t = crypto.absorb(t, "auth", "host", r.host.name, r.host.key, rules_bytes)
    t = crypto.absorb(t, "auth", "joiner", r.joiner.name, r.joiner.key, b"")
    if not r.accepted:
        _stop_early(rep, r, "the joiner did not accept the rules", commit=True)
        return
    t = crypto.absorb(t, "accept", rules.fingerprint())
    t_commit = t
    if r.commitment is None or r.joiner_value is None or r.host_value is None:
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
    t = crypto.absorb(t, "commit", r.commitment)
    t = crypto.absorb(t, "value", r.joiner_value)
    t = crypto.absorb(t, "reveal", r.host_value)
    try:
        m, _ = MatchState.start(rules, seed)
    except KoiKoiError as exc:  # pragma: no cover - decoded rules and a 32-byte seed
        rep.add("deal", False, str(exc))
        return
    rep.add("deal", True, f"first dealer: seat {m.dealer}")
    keys = (r.host.key, r.joiner.key)
    for i, a in enumerate(r.actions):
        n = i + 1
        if not _action(rep, n, a.seq, a.seat, a.action, a.state_hash, a.sig, m, keys, t):
            return
        t_new, m = _step(m, a.seq, a.seat, a.action, a.state_hash, t)
        t = t_new
    rep.add("actions", True, f"{len(r.actions)} actions: turn, legality, state hash, signature")
    if r.result is None:
        rep.skip("result", "the match is not finished")
        return
    res = r.result
    problems = []
    if not m.is_over:
        problems.append("the replayed match is not over")
    if m.scores != res.scores:
        problems.append(f"scores are {m.scores}, record says {res.scores}")
    if m.winner != res.winner:
        problems.append(f"winner is {m.winner}, record says {res.winner}")
    if m.state_hash() != res.final_state_hash:
        problems.append("final state hash differs")
    if t != res.transcript_hash:
        problems.append("final transcript hash differs")
    if not rep.add("result", not problems, "; ".join(problems) or f"scores {m.scores}"):
        return
    for role, key, sig in (
        ("host", keys[0], r.final_sigs[0]),
        ("joiner", keys[1], r.final_sigs[1]),
    ):
        if sig is None:
            rep.skip(f"final signature {role}", "missing")
            continue
        rep.add(
            f"final signature {role}",
            crypto.verify_sig(key, sig, crypto.final_message(t, res.final_state_hash)),
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
    for role, p, rb in (("host", r.host, rules_bytes), ("joiner", r.joiner, b"")):
        if p is None or p.auth_sig is None:
            continue
        ok = crypto.verify_sig(
            p.key, p.auth_sig, crypto.auth_message(r.session_id, role, p.name, p.key, rb)
        )
        if not rep.add(f"identity {role}", ok, f"{p.name} {crypto.fingerprint(p.key)}"):
            return
    rep.skip("handshake", "the record stops before both players identified themselves")


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
) -> bool:
    name = f"action {n}"
    if seq != n or m.to_act != seat:
        why = (
            f"seq {seq}, expected {n}"
            if seq != n
            else f"seat {seat} acted, seat {m.to_act} was to act"
        )
        return rep.add(f"{name} turn", False, why)
    if text == "resign":
        new, _ = m.resign(seat)
    else:
        try:
            action = Action.parse(text)
            if str(action) != text:
                raise InputError(f"not canonical: {text!r}")
            new, _ = m.apply(action)
        except (InputError, IllegalActionError) as exc:
            return rep.add(f"{name} legal", False, f"{text}: {exc}")
    if new.state_hash() != state_hash:
        return rep.add(f"{name} state hash", False, f"{text}: the replayed state differs")
    kind = "resign" if text == "resign" else "action"
    fields: tuple[crypto.Field, ...] = (
        (seq, seat, state_hash) if kind == "resign" else (seq, seat, text, state_hash)
    )
    t_new = crypto.absorb(t, kind, *fields)
    if not crypto.verify_sig(keys[seat], sig, crypto.sig_message(t_new)):
        return rep.add(f"{name} signature", False, f"{text}: signature by seat {seat} fails")
    return True


def _step(
    m: MatchState, seq: int, seat: int, text: str, state_hash: bytes, t: bytes
) -> tuple[bytes, MatchState]:
    if text == "resign":
        return crypto.absorb(t, "resign", seq, seat, state_hash), m.resign(seat)[0]
    new = m.apply(Action.parse(text))[0]
    return crypto.absorb(t, "action", seq, seat, text, state_hash), new
