"""The records directory as ``history`` numbers it, and ``N`` / ``last`` for
``replay`` and ``verify``.

Row numbers come from the file names alone (no record is read), so that
``verify 3`` finds the third row of ``history`` without verifying the other
records first.  The order is the match's start: the time in a default name
(``2026-11-30-132912-Bob.koikoi``; else the file's last change), then the
match's number on its connection (``-match2``, a rematch, after its first
match), then the ``-2`` that makes a name unique, then the name.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

SUFFIX = ".koikoi"
_NAME = re.compile(
    r"^(?P<when>\d{4}-\d\d-\d\d-\d{6})-(?P<rest>.*?)(?:-match(?P<match>\d+))?(?:-(?P<extra>\d+))?$"
)


def started(path: Path) -> datetime.datetime:
    """When the match started: from a default name, else the file's last change."""
    m = _NAME.match(path.stem)
    if m is not None:
        try:
            return datetime.datetime.strptime(m["when"], "%Y-%m-%d-%H%M%S")
        except ValueError:
            pass
    try:
        return datetime.datetime.fromtimestamp(path.stat().st_mtime)
    except OSError:
        return datetime.datetime.min


def order_key(path: Path) -> tuple[datetime.datetime, int, int, str]:
    m = _NAME.match(path.stem)
    match = int(m["match"]) if m is not None and m["match"] else 1
    extra = int(m["extra"]) if m is not None and m["extra"] else 1
    return (started(path), match, extra, path.name)


def default_dir() -> Path:
    from p2pkoikoi.transport.store.identity import records_dir

    return records_dir()


def record_files(directory: Path) -> list[Path]:
    """The directory's records in history order (row 1 first)."""
    try:
        files = [p for p in directory.glob(f"*{SUFFIX}") if p.is_file()]
    except OSError:
        files = []
    return sorted(files, key=order_key)


def is_row_reference(text: str) -> bool:
    return text == "last" or (text.isdigit() and not text.startswith("0"))


def resolve(text: str, directory: str | None = None) -> str:
    """The record file ``text`` names: a path, or (when no such file exists) a
    history row number ``N`` or ``last`` in ``directory`` (default: the records
    directory).  :class:`InputError` with one line if there is no such row."""
    from p2pkoikoi.engine.errors import InputError

    if not is_row_reference(text) or Path(text).exists():
        return text
    where = Path(directory).expanduser() if directory else default_dir()
    files = record_files(where)
    if not files:
        raise InputError(f"no match records in {where}, so no {text!r} (see p2pkoikoi history)")
    if text == "last":
        return str(files[-1])
    n = int(text)
    if n > len(files):
        raise InputError(
            f"no record number {n}: {where} has {len(files)} "
            f"(1 to {len(files)}, or last; see p2pkoikoi history)"
        )
    return str(files[n - 1])
