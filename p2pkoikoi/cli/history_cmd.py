"""``p2pkoikoi history``: past matches from the records directory, numbered, with
totals per opponent.

Every record is verified as it is listed (the same checks as ``p2pkoikoi
verify``), so the list says which results are proven; the totals count only
those (a record that fails a check is listed, marked, and left out of them).
"You" are whoever holds the identity key in the config directory; a record
signed by other keys is listed from the host's side.  Rows are numbered in the
order of :mod:`p2pkoikoi.cli.record_list`, the numbers that ``replay N`` and
``verify N`` take (``last``: the newest).  Totals are per opponent's identity
(its fingerprint), under the name it used last.  Practice matches leave records
too: their opponent, the computer, gets a fresh key each match, so practice
totals are kept per computer level (its name) rather than per key.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from p2pkoikoi.cli.record_list import record_files, started

#: the counts of one opponent's totals, in the order the text shows them
COUNTS = ("won", "lost", "draw", "unconfirmed", "unfinished", "declined")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        help="past matches, numbered (for replay N, verify N), with totals per opponent",
        description="List the match records in the records directory (or --dir), numbered "
        "from the oldest: date, opponent and fingerprint, rules, result (and how the match "
        "ended: a resignation, running out of time, a forfeit), whether the record verifies, "
        "and its file; then wins, losses and draws per opponent, counting verified records "
        "only.  'p2pkoikoi replay N' and 'p2pkoikoi verify N' take a row's number, or last. "
        "Practice matches are listed too.",
    )
    add_dir_option(p)
    p.add_argument(
        "--config-dir",
        metavar="DIR",
        help="whose history: the identity in DIR (default: $P2PKOIKOI_CONFIG_DIR or "
        "~/.config/p2pkoikoi)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


def add_dir_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dir",
        metavar="DIR",
        help="where the records are (default: ~/.local/share/p2pkoikoi/records/, or $XDG_DATA_HOME/p2pkoikoi/records/)",
    )


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

    from p2pkoikoi.transport.identity import IDENTITY_FILE, config_dir

    path = config_dir(config) / IDENTITY_FILE
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    pub = key.public_key()
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _ending(record: Any, me: int) -> str:
    """How a finished match ended early, from ``me``'s side (see :attr:`Entry.ending`)."""
    from p2pkoikoi.session.record import TIME_FORFEIT, resign_reason

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
    from p2pkoikoi.engine.presets import rules_label
    from p2pkoikoi.session.crypto import fingerprint
    from p2pkoikoi.session.errors import RecordError
    from p2pkoikoi.session.record import decode_record
    from p2pkoikoi.session.verify import verify_record

    from .verify_cmd import read_record_bytes

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


def _result_text(e: Entry) -> str:
    score = f" {e.scores[0]}-{e.scores[1]}" if e.scores is not None else ""
    return f"{e.result}{score}" + (f" ({e.ending})" if e.ending else "")


def run(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine import KoiKoiError
    from p2pkoikoi.transport.identity import records_dir

    directory = Path(args.dir).expanduser() if args.dir else records_dir()
    own = _own_key(args.config_dir)
    entries: list[Entry] = []
    skipped: list[tuple[int, str, str]] = []
    for number, path in enumerate(record_files(directory), 1):
        try:
            entries.append(read_entry(path, own, number))
        except (KoiKoiError, OSError) as exc:
            skipped.append((number, str(path), str(exc)))
    table = totals(entries)
    if args.json:
        sys.stdout.write(
            json.dumps(
                {
                    "directory": str(directory),
                    "matches": [asdict(e) for e in entries],
                    "totals": table,
                    "unreadable": [{"number": n, "path": p, "reason": r} for n, p, r in skipped],
                },
                ensure_ascii=False,
            )
            + "\n"
        )
        return 0
    w = sys.stdout.write
    if not entries and not skipped:
        w(f"No match records in {directory} yet: play one (p2pkoikoi practice).\n")
        return 0
    w(f"Matches recorded in {directory}:\n")
    w(f"{'#':>3}  {'date':<16}  {'opponent':<30}  rules\n")
    w(f"{'':5}result, record check: file\n")
    rows: list[tuple[int, str]] = []
    for e in entries:
        who = f"{e.opponent[:10]} {e.fingerprint}" if not e.practice else e.opponent[:30]
        check = e.verified + (" (not counted)" if e.verified.startswith("FAILED") else "")
        rows.append(
            (
                e.number,
                f"{e.number:>3}  {e.date:<16}  {who:<30}  {e.rules}\n"
                f"{'':5}{_result_text(e)}, {check}: {Path(e.path).name}\n",
            )
        )
    for number, name, reason in skipped:
        rows.append((number, f"{number:>3}  not a readable record: {reason}: {Path(name).name}\n"))
    for _, line in sorted(rows):
        w(line)
    if table:
        w("\nTotals per opponent (verified records only):\n")
        for t in sorted(table.values(), key=lambda t: -int(t["matches"])):
            name = (
                t["opponent"]
                if t["fingerprint"] is None
                else f"{t['opponent']} ({t['fingerprint']})"
            )
            parts = [f"{t['matches']} match{'es' if t['matches'] != 1 else ''}"]
            parts += [f"{t[k]} {k}" for k in COUNTS if t[k]]
            if t["failed"]:
                parts.append(f"{t['failed']} not counted (the record fails a check)")
            w(f"  {name}: {', '.join(parts)}\n")
    w(
        "\nReplay one with 'p2pkoikoi replay N', check it with 'p2pkoikoi verify N' "
        "(N: its number, or last).\n"
    )
    return 0
