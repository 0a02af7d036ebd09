"""The entries and totals of ``p2pkoikoi history`` (see :mod:`p2pkoikoi.cli.history_cmd`):
apart, so that building the parser for ``--help`` imports none of it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the counts of one opponent's totals, in the order the text shows them
COUNTS = ("won", "lost", "draw", "unconfirmed", "unfinished", "declined")


@dataclass(frozen=True, slots=True)
class Entry:
    """One record as the history lists it (``result`` from your side)."""

    number: int  # the row: replay N, verify N
    path: str
    date: str
    started: str  # ISO 8601 to the second, for sorting and scripts
    opponent: str
    fingerprint: str
    rules: str
    result: str  # "won", "lost", "draw", "unfinished", "declined"
    scores: tuple[int, int] | None  # (yours, theirs)
    #: how a finished match ended when not by its rounds: "you resigned", "they
    #: resigned", "you ran out of time", "they ran out of time", "you forfeited",
    #: "they forfeited"; "" when every round was played
    ending: str
    verified: str  # "verified", "incomplete", or "FAILED: <check>"
    practice: bool
    match_number: int  # on its connection: 1, then 2, 3... for rematches


def _own_key(config: str | None) -> bytes | None:
    """Your public key, if an identity exists (history never creates one)."""
    from cryptography.hazmat.primitives import serialization

    from p2pkoikoi.transport.store.identity import IDENTITY_FILE, config_dir

    path = config_dir(config) / IDENTITY_FILE
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    pub = key.public_key()
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _ending(record: Any, me: int) -> str:
    """How a finished match ended early, from ``me``'s side (see :attr:`Entry.ending`)."""
    from p2pkoikoi.session.records.record import TIME_FORFEIT, resign_reason

    if record.result is None:
        return ""
    if record.forfeit is not None:
        who = "you" if record.forfeit.seat == me else "they"
        ran_out = record.forfeit.reason == TIME_FORFEIT
        return f"{who} ran out of time" if ran_out else f"{who} forfeited"
    for action in reversed(record.actions):
        reason = resign_reason(action.action)
        if reason is not None:
            who = "you" if action.seat == me else "they"
            return f"{who} ran out of time" if reason == TIME_FORFEIT else f"{who} resigned"
    return ""


def read_entry(path: Path, own_key: bytes | None, number: int = 0) -> Entry:
    """One record file as an :class:`Entry`; :class:`RecordError` if it is not a record."""
    from p2pkoikoi.cli.record_list import started
    from p2pkoikoi.cli.verify_cmd import read_record_bytes
    from p2pkoikoi.engine.presets import rules_label
    from p2pkoikoi.session.crypto import fingerprint
    from p2pkoikoi.session.errors import RecordError
    from p2pkoikoi.session.records.journal import decode_record
    from p2pkoikoi.session.verify.check import verify_record

    record = decode_record(read_record_bytes(str(path)))
    if record.host is None or record.joiner is None:
        raise RecordError("the record stops before both players identified themselves")
    me = 1 if own_key is not None and record.joiner.key == own_key else 0
    them = record.joiner if me == 0 else record.host
    report = verify_record(record)
    failure = report.first_failure
    if failure is not None:
        verified = f"FAILED: {failure.name}"
    elif report.complete:
        verified = "verified"
    else:
        verified = "incomplete"
    res = record.result
    scores: tuple[int, int] | None = None
    if not record.accepted:
        result = "declined"  # the rules were not agreed: no match was played
    elif res is None:
        result = "unfinished"
    else:
        scores = (res.scores[me], res.scores[1 - me])
        result = "draw" if res.winner is None else ("won" if res.winner == me else "lost")
    when = started(path)
    return Entry(
        number=number,
        path=str(path),
        date=f"{when:%Y-%m-%d %H:%M}",
        started=f"{when:%Y-%m-%dT%H:%M:%S}",
        opponent=them.name,
        fingerprint=fingerprint(them.key),
        rules=rules_label(record.rules) if record.rules is not None else "?",
        result=result,
        scores=scores,
        ending=_ending(record, me),
        verified=verified,
        practice=me == 0 and them.name.startswith("Computer") and "practice-" in path.name,
        match_number=record.match_number,
    )


def _opponent_id(e: Entry) -> str:
    """Whom a total is about: the computer's level in practice, else the identity."""
    return e.opponent if e.practice else e.fingerprint


def totals(entries: list[Entry]) -> dict[str, dict[str, Any]]:
    """Per opponent (fingerprint; practice: the computer's level), under the name it
    used last: matches counted, then won, lost and draw from verified records only,
    ``unconfirmed`` (a result in a record that does not verify completely),
    ``unfinished``, ``declined``.  A record that fails a check is not counted at
    all: its ``failed`` count says how many were left out."""
    out: dict[str, dict[str, Any]] = {}
    for e in entries:  # oldest first: the last name seen is the latest
        t = out.setdefault(
            _opponent_id(e),
            {
                "opponent": e.opponent,
                "fingerprint": None if e.practice else e.fingerprint,
                "matches": 0,
                **dict.fromkeys(COUNTS, 0),
                "failed": 0,
            },
        )
        t["opponent"] = e.opponent
        if e.verified.startswith("FAILED"):
            t["failed"] += 1
            continue
        t["matches"] += 1
        if e.result in ("won", "lost", "draw") and e.verified != "verified":
            t["unconfirmed"] += 1
        else:
            t[e.result] += 1
    return out


def result_text(e: Entry) -> str:
    score = f" {e.scores[0]}-{e.scores[1]}" if e.scores is not None else ""
    return f"{e.result}{score}" + (f" ({e.ending})" if e.ending else "")
