"""``p2pkoikoi verify RECORD``: check a match record (see docs/verify.md).

Exit status (so that ``verify && ...`` means "a whole, valid match"):

* 0: complete and valid: every check holds, the match is over and both players
  signed the match (start) and its result (final);
* 1: a check fails (the first failing check is named);
* 2: not a readable record (a one-line reason);
* 3: valid but incomplete: every check that applies holds, but the record lacks
  something (the match did not finish, a signature is missing, it ended in a
  forfeit that only one player's account supports); the lines say what.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "verify",
        help="check a match record: fair shuffle, legal moves, signatures",
        description="Replay a match record and check the commit-reveal seed, every "
        "action, every state hash, the result and both players' signatures.",
    )
    p.add_argument(
        "record",
        help="the record file, or its number in p2pkoikoi history (N, or last: the newest)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--dir",
        metavar="DIR",
        help="where a number N or last looks (default: the records directory)",
    )
    p.set_defaults(func=run)
    return p


register = add_parser  # the name the CLI dispatcher calls


def quick_args(words: Sequence[str]) -> SimpleNamespace | None:
    """``verify``'s plain command lines parsed without argparse: RECORD, ``--json``
    and ``--dir DIR`` (or ``--dir=DIR``), each at most once, in any order.  Anything
    else (``--help``, an abbreviation, ``--``, a repeated or unknown option, a word
    starting with a hyphen) is None: argparse parses it and says what is wrong.

    The namespace is the one :func:`add_parser`'s parser makes for the same words
    (tests/house/test_startup.py compares them); the common case then skips importing
    argparse and building that parser."""
    record: str | None = None
    as_json = False
    folder: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--json" and not as_json:
            as_json = True
        elif word == "--dir" and folder is None and i + 1 < len(words):
            folder = words[i + 1]
            if folder.startswith("-"):
                return None
            i += 1
        elif word.startswith("--dir=") and folder is None:
            folder = word[len("--dir=") :]
        elif not word.startswith("-") and record is None:
            record = word
        else:
            return None
        i += 1
    if record is None:
        return None
    return SimpleNamespace(record=record, json=as_json, dir=folder, func=run, command="verify")


EXIT_COMPLETE = 0
EXIT_FAILED = 1
EXIT_INCOMPLETE = 3


def read_record_bytes(path: str) -> bytes:
    """A record file's bytes, read no further than a record can be long (so
    ``/dev/zero`` or a huge file is refused by :func:`decode_record`, not read
    until memory runs out); :class:`RecordError` if it cannot be read."""
    from p2pkoikoi.session.errors import RecordError
    from p2pkoikoi.session.records.record import MAX_RECORD_BYTES

    try:
        with open(path, "rb") as f:
            return f.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace | SimpleNamespace) -> int:
    from p2pkoikoi.engine.errors import KoiKoiError
    from p2pkoikoi.session.crypto import fingerprint
    from p2pkoikoi.session.records.journal import decode_record_file
    from p2pkoikoi.session.verify.check import verify_record

    from .visible import line_writer

    path: str = args.record
    try:
        if path == "last" or path.isdigit():  # a history row (record_list says when)
            from .record_list import resolve

            path = resolve(args.record, args.dir)
        record, journal = decode_record_file(read_record_bytes(path))
    except KoiKoiError as exc:
        if not args.json:
            raise
        # a script reads JSON on stdout whatever happens; the line goes to stderr too
        import json

        status = exc.exit_code
        error = {"ok": False, "complete": False, "error": str(exc), "record": path}
        sys.stdout.write(json.dumps({**error, "exit_status": status}) + "\n")
        sys.stderr.write(f"p2pkoikoi: {exc}\n")
        return status
    report = verify_record(record)
    first = report.first_failure
    status = EXIT_FAILED if not report.ok else EXIT_COMPLETE if report.complete else EXIT_INCOMPLETE
    if args.json:
        import json

        out = report.to_dict()
        out["record"] = path
        out["exit_status"] = status
        out["journal"] = (
            None
            if journal is None
            else {"entries": journal.entries, "discarded_bytes": journal.discarded}
        )
        sys.stdout.write(json.dumps(out, indent=1) + "\n")
        return status
    w = line_writer(sys.stdout)  # every string from the record is made visible
    if journal is not None:
        w(
            f"journal: {journal.entries} complete entries (the match was being played, "
            "or its program stopped)\n"
        )
        if journal.discarded:
            w(f"journal: ignored {journal.discarded} bytes after them (an unfinished write)\n")
    if record.host is not None and record.joiner is not None:
        w(f"host:   {record.host.name} ({fingerprint(record.host.key)})\n")
        w(f"joiner: {record.joiner.name} ({fingerprint(record.joiner.key)})\n")
    for c in report.checks:
        mark = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}[c.status]
        w(f"{mark} {c.name}{': ' + c.detail if c.detail else ''}\n")
    if first is not None:
        w(f"verification FAILED at check '{first.name}'\n")
        return EXIT_FAILED
    hidden = record.rules is not None and record.rules.deal.value == "hidden"
    if report.complete and hidden:
        w(
            "verified: a hidden deal, every masking step, key and hidden-card rule audited;"
            " every move legal, both players signed the result\n"
        )
        return EXIT_COMPLETE
    if report.complete:
        w("verified: the shuffle was fair, every move legal, both players signed the result\n")
        return EXIT_COMPLETE
    w("valid but INCOMPLETE (exit status 3): every check that applies holds, but it lacks:\n")
    for lack in report.lacks:
        w(f"  - {lack}\n")
    return EXIT_INCOMPLETE
