"""``p2pkoikoi history``: past matches from the records directory, with totals per opponent.

Every record is verified as it is listed (the same checks as ``p2pkoikoi
verify``), so the list says which results are proven.  "You" are whoever holds
the identity key in the config directory; a record signed by other keys is
listed from the host's side.  Practice matches leave records too: their
opponent, the computer, gets a fresh key each match, so practice totals are
kept per computer level (its name) rather than per key.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        help="past matches from the records directory, with totals per opponent",
        description="List the match records in the records directory (or --dir): date, "
        "opponent and fingerprint, rules, result, and whether the record verifies; then "
        "wins, losses and draws per opponent.  Practice matches are listed too.",
    )
    p.add_argument(
        "--dir",
        metavar="DIR",
        help="where the records are (default: ~/.local/share/p2pkoikoi/records/, "
        "or $XDG_DATA_HOME/p2pkoikoi/records/)",
    )
    p.add_argument(
        "--config-dir",
        metavar="DIR",
        help="whose history: the identity in DIR (default: $P2PKOIKOI_CONFIG_DIR or "
        "~/.config/p2pkoikoi)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


@dataclass(frozen=True, slots=True)
class Entry:
    """One record as the history lists it (``result`` from your side: won, lost, draw)."""

    path: str
    date: str
    opponent: str
    fingerprint: str
    rules: str
    result: str  # "won", "lost", "draw", "unfinished", "declined"
    scores: tuple[int, int] | None  # (yours, theirs)
    verified: str  # "verified", "incomplete", or "FAILED: <check>"
    practice: bool


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


def read_entry(path: Path, own_key: bytes | None) -> Entry:
    """One record file as an :class:`Entry`; :class:`RecordError` if it is not a record."""
    from p2pkoikoi.engine.presets import rules_label
    from p2pkoikoi.session.crypto import fingerprint
    from p2pkoikoi.session.errors import RecordError
    from p2pkoikoi.session.journal import decode_record
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
    return Entry(
        path=str(path),
        date=_date(path),
        opponent=them.name,
        fingerprint=fingerprint(them.key),
        rules=rules_label(record.rules) if record.rules is not None else "?",
        result=result,
        scores=scores,
        verified=verified,
        practice=me == 0 and them.name.startswith("Computer") and "practice-" in path.name,
    )


def _date(path: Path) -> str:
    """When the match started: from a default name (``2026-11-30-132912-Bob.koikoi``),
    else the file's last change."""
    try:
        when = datetime.datetime.strptime(path.name[:17], "%Y-%m-%d-%H%M%S")
    except ValueError:
        when = datetime.datetime.fromtimestamp(path.stat().st_mtime)
    return f"{when:%Y-%m-%d %H:%M}"


def _opponent_key(e: Entry) -> str:
    return e.opponent if e.practice else f"{e.opponent} ({e.fingerprint})"


def totals(entries: list[Entry]) -> dict[str, dict[str, int]]:
    """Per opponent: matches, won, lost, draw, unfinished, declined (practice grouped
    by the computer's level)."""
    out: dict[str, dict[str, int]] = {}
    for e in entries:
        t = out.setdefault(
            _opponent_key(e),
            {"matches": 0, "won": 0, "lost": 0, "draw": 0, "unfinished": 0, "declined": 0},
        )
        t["matches"] += 1
        t[e.result] += 1
    return out


def run(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine import KoiKoiError
    from p2pkoikoi.transport.identity import records_dir

    directory = Path(args.dir).expanduser() if args.dir else records_dir()
    own = _own_key(args.config_dir)
    entries: list[Entry] = []
    skipped: list[tuple[str, str]] = []
    files = sorted(directory.glob("*.koikoi"), key=lambda p: (_date(p), p.name))
    for path in files:
        try:
            entries.append(read_entry(path, own))
        except (KoiKoiError, OSError) as exc:
            skipped.append((str(path), str(exc)))
    table = totals(entries)
    if args.json:
        sys.stdout.write(
            json.dumps(
                {
                    "directory": str(directory),
                    "matches": [asdict(e) for e in entries],
                    "totals": table,
                    "unreadable": [{"path": p, "reason": r} for p, r in skipped],
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
    w(f"{'date':<17} {'opponent':<34} {'rules':<22} {'result':<13} record\n")
    for e in entries:
        who = f"{e.opponent[:18]} {e.fingerprint}" if not e.practice else e.opponent[:34]
        score = f" {e.scores[0]}-{e.scores[1]}" if e.scores is not None else ""
        w(f"{e.date:<17} {who:<34} {e.rules[:22]:<22} {e.result + score:<13} {e.verified}\n")
    for name, reason in skipped:
        w(f"(not a readable record: {name}: {reason})\n")
    if table:
        w("\nTotals per opponent:\n")
        for name, t in sorted(table.items(), key=lambda kv: -kv[1]["matches"]):
            parts = [f"{t['matches']} match{'es' if t['matches'] != 1 else ''}"]
            parts += [
                f"{t[k]} {k}" for k in ("won", "lost", "draw", "unfinished", "declined") if t[k]
            ]
            w(f"  {name}: {', '.join(parts)}\n")
    return 0
