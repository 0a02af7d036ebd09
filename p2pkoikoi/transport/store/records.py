"""The files a match keeps on disk: its record and the resume file beside it.

The record (``session.record()``) is a journal while the match is played
(:mod:`p2pkoikoi.transport.store.journal`: one append per step, written before
our own action is sent) and is compacted when the link stops, so a crash or a
cut connection loses nothing that both sides had agreed on.  The resume file (the "sidecar", 0600) holds what
``p2pkoikoi resume`` needs after a crash -- the resume secret, our role, the
address -- and is deleted once the match is over.
"""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path
from typing import Any, Final

from p2pkoikoi.session import RecordError, Session
from p2pkoikoi.session.records.journal import decode_record_file
from p2pkoikoi.session.records.record import MAX_RECORD_BYTES, Record
from p2pkoikoi.transport.errors import ConfigError, TransportError
from p2pkoikoi.transport.store.identity import atomic_write
from p2pkoikoi.transport.store.journal import RecordJournal

SIDECAR_SUFFIX: Final = ".resume"
SIDECAR_FORMAT: Final = "p2pkoikoi-resume"


def sidecar_path(record: Path) -> Path:
    """Where the secrets to resume ``record`` live (0600, deleted when the match ends)."""
    return record.with_name(record.name + SIDECAR_SUFFIX)


class RecordKeeper:
    """Writes one match's record (a journal during play) and its resume file.

    ``path`` is None until the first write when the caller named no file: the
    default place then depends on the peer's name, known after the handshake.
    """

    def __init__(self, path: Path | None) -> None:
        self._journal = RecordJournal(path)

    @property
    def path(self) -> Path | None:
        return self._journal.path

    def save(self, session: Session, *, lazy: bool = False) -> None:
        """Bring the record up to ``session`` (``lazy``: see
        :meth:`RecordJournal.save`); :class:`TransportError` if it cannot."""
        try:
            self._journal.save(session, lazy=lazy)
        except OSError as exc:
            raise TransportError(f"cannot write the record {self.path}: {exc}") from None

    def close(self, session: Session) -> None:
        """The link stops: an unfinished match's journal becomes its compact record."""
        try:
            self._journal.close(session)
        except OSError as exc:
            raise TransportError(f"cannot write the record {self.path}: {exc}") from None

    def write_sidecar(self, sidecar: dict[str, Any]) -> None:
        """The secrets ``p2pkoikoi resume`` needs, beside the record, private (0600).

        Nothing without a record path; an :class:`OSError` is the caller's to report.
        """
        if self.path is None:
            return
        body = {"format": SIDECAR_FORMAT, "version": 1, **sidecar}
        atomic_write(sidecar_path(self.path), json.dumps(body).encode("utf-8"), mode=0o600)

    def drop_sidecar(self) -> None:
        """The match is over: the secrets to resume it are of no use now."""
        if self.path is not None:
            with suppress(OSError):
                sidecar_path(self.path).unlink()


def next_match_path(previous: Path | None, number: int) -> Path | None:
    """Where match ``number`` of a connection is recorded: beside the previous
    match's record, ``NAME-match2.koikoi`` (never an existing file).  None when the
    previous match had no file yet (the default place is chosen at the first write)."""
    if previous is None:
        return None
    stem = previous.stem
    base = stem.rsplit("-match", 1)[0] if "-match" in stem else stem
    path = previous.with_name(f"{base}-match{number}{previous.suffix}")
    extra = 2
    while path.exists():
        path = previous.with_name(f"{base}-match{number}-{extra}{previous.suffix}")
        extra += 1
    return path


def read_record(path: Path) -> Record:
    """The record a resume continues from: the file's compact record or, after a
    crash, its journal's complete entries (a crash can cut a journal anywhere;
    what the cut took the other player re-sends on resume).  :class:`RecordError`
    if the file cannot be read or is not a record."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)  # a huge file is refused, not read whole
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    record, _ = decode_record_file(data)
    return record


def read_sidecar(record_path: Path) -> dict[str, Any]:
    """The resume file beside ``record_path``; :class:`ConfigError` naming what is wrong."""
    path = sidecar_path(record_path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path} is missing: it holds the secrets to resume, written when the match "
            "started and deleted when it ended"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if (
        not isinstance(obj, dict)
        or obj.get("format") != SIDECAR_FORMAT
        or obj.get("role") not in ("host", "joiner")
        or not isinstance(obj.get("invite", obj.get("address")), str)
        or not isinstance(obj.get("resume_secret"), str)
        or len(obj["resume_secret"]) != 64
    ):
        raise ConfigError(f"{path} is not a p2pkoikoi resume file")
    port = obj.get("port", 0)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"{path}: port must be a whole number 0..65535, not {port!r}")
    hidden = obj.get("hidden_secret", "0" * 64)
    if (
        not isinstance(hidden, str)
        or len(hidden) != 64
        or not all(c in "0123456789abcdef" for c in hidden)
    ):
        raise ConfigError(f"{path}: hidden_secret must be 64 hex digits")
    if not isinstance(obj.get("bind", ""), str | None):
        raise ConfigError(f"{path}: bind must be an address, not {obj['bind']!r}")
    return obj
