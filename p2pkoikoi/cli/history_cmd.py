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
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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


def run(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict
    from pathlib import Path  # not at the top: --help builds this module's parser (play_cmds)

    from p2pkoikoi.cli.history_list import COUNTS, Entry, _own_key, read_entry, result_text, totals
    from p2pkoikoi.cli.record_list import record_files
    from p2pkoikoi.engine import KoiKoiError
    from p2pkoikoi.transport.store.identity import records_dir

    from .visible import line_writer

    directory = Path(args.dir).expanduser() if args.dir else records_dir()
    own = _own_key(args.config_dir)
    entries: list[Entry] = []
    skipped: list[tuple[int, str, str]] = []
    for number, path in enumerate(record_files(directory), 1):
        try:
            entries.append(read_entry(path, own, number))
        except (KoiKoiError, OSError, ValueError, RecursionError) as exc:
            # a hostile or damaged file is named and skipped; the rest are still listed
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
                # escaped: a file name may hold undecodable bytes (lone surrogates)
            )
            + "\n"
        )
        return 0
    w = line_writer(sys.stdout)  # names, file names and reasons from records, made visible
    if not entries and not skipped:
        w(f"No match records in {directory} yet: play one (p2pkoikoi practice).\n")
        return 0
    w(f"Matches recorded in {directory}:\n")
    w(f"{'#':>3}  {'date':<16}  {'opponent':<30}  rules\n")
    w(f"{'':5}result, record check: file\n")
    # each line written alone: the writer escapes any newline a record or a file
    # name holds, so a row cannot add lines of its own
    rows: list[tuple[int, tuple[str, ...]]] = []
    for e in entries:
        who = f"{e.opponent[:10]} {e.fingerprint}" if not e.practice else e.opponent[:30]
        check = e.verified + (" (not counted)" if e.verified.startswith("FAILED") else "")
        rows.append(
            (
                e.number,
                (
                    f"{e.number:>3}  {e.date:<16}  {who:<30}  {e.rules}\n",
                    f"{'':5}{result_text(e)}, {check}: {Path(e.path).name}\n",
                ),
            )
        )
    for number, name, reason in skipped:
        line = f"{number:>3}  not a readable record: {reason}: {Path(name).name}\n"
        rows.append((number, (line,)))
    for _, lines in sorted(rows):
        for line in lines:
            w(line)
    if table:
        w("\n")
        w("Totals per opponent (verified records only):\n")
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
    w("\n")
    w(
        "Replay one with 'p2pkoikoi replay N', check it with 'p2pkoikoi verify N' (N: its number, or last).\n"
    )
    return 0
