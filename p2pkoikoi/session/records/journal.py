"""The match journal: a record that grows by appending, one line per step.

Theory of operation
-------------------
While a match is played the record file is a *journal*; when the match ends
the transport replaces it (atomically) by the compact record of
:mod:`p2pkoikoi.session.records.record`.  Rewriting the whole record after every
action costs a JSON encoding of everything so far and an fsync; appending one
line costs a few microseconds, and the fsync can wait (the transport does it
off the hot path).  The format is specified in ``protocol/records.md``.

Each entry is one line: the CRC-32 of the JSON text (8 lowercase hex digits),
one space, the JSON text (no newline inside), a newline::

    1b2c3d4e {"format":"p2pkoikoi-journal","version":1,"record":{...}}
    9f8e7d6c {"action":{"seq":1,"seat":0,"action":"play 1b","state_hash":"..","sig":".."}}
    ...
    0a1b2c3d {"result":{"scores":[5,0],"winner":0,...}}
    4d5e6f70 {"final_sig":{"role":"host","sig":".."}}

The first entry (the *head*) is the record as it stood when the match started
(rules, players, commitment, values, seed; no actions).  An entry counts only
if its newline is there and its checksum holds, so a journal cut at any byte
(a crash in the middle of a write, a disk that lost unsynced blocks) decodes
to the record of its complete entries; everything from the first incomplete
or damaged entry on is reported as ``discarded`` bytes.  Nothing here does
I/O: :class:`~p2pkoikoi.session.records.writer.JournalWriter` turns successive
records into the bytes to append (writing lives in
:mod:`p2pkoikoi.session.records.writer`, which ``verify`` does not load),
:func:`decode_journal` turns a file's bytes back into a record.
"""

from __future__ import annotations

import binascii  # crc32, the same as zlib.crc32 (binascii is loaded already, zlib is not)

from p2pkoikoi.engine.jsontext import loads
from p2pkoikoi.engine.values import value
from p2pkoikoi.session.errors import RecordError
from p2pkoikoi.session.records.record import (
    MAX_RECORD_BYTES,
    Record,
    decode_compact_record,
    record_from_dict,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

JOURNAL_FORMAT: Final = "p2pkoikoi-journal"
JOURNAL_VERSION: Final = 1
#: how every journal starts: the checksum, a space and the head's first bytes are
#: fixed by the format (checked by :func:`is_journal` without decoding)
JOURNAL_PREFIX: Final = b'{"format":"p2pkoikoi-journal"'
#: the seats by name, as entries write them (seat 0, seat 1)
ROLES: Final = ("host", "joiner")


def decode_entry(line: bytes) -> dict[str, Any] | None:
    """A line's JSON object (without its newline), or None if it is damaged."""
    if len(line) < 10 or line[8:9] != b" ":
        return None
    try:
        crc = int(line[:8], 16)
    except ValueError:
        return None
    text = line[9:]
    if binascii.crc32(text) != crc:
        return None
    try:
        obj = loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) and len(obj) >= 1 else None


@value
class JournalRead:
    """A decoded journal: the record of its complete entries, and what was left over."""

    record: Record
    entries: int  #: complete entries, the head included
    discarded: int  #: bytes after the last complete entry (an unfinished or damaged write)


def is_journal(data: bytes) -> bool:
    """Whether a record file's bytes are a journal (rather than a compact record)."""
    return data[9 : 9 + len(JOURNAL_PREFIX)] == JOURNAL_PREFIX and data[8:9] == b" "


def _fail(msg: str) -> RecordError:
    return RecordError(f"malformed journal: {msg}")


def decode_journal(data: bytes) -> JournalRead:
    """The record of a journal's complete entries; :class:`RecordError` if the head is bad.

    A cut or damaged tail is not an error (it is what a crash leaves): it ends
    the journal and is counted in :attr:`JournalRead.discarded`.  Entries that
    decode but do not fit (an action after the result, an unknown kind, a bad
    field) are errors, as in a record.
    """
    if len(data) > MAX_RECORD_BYTES:
        raise _fail(f"larger than {MAX_RECORD_BYTES} bytes")
    end = data.find(b"\n")
    head = decode_entry(data[:end]) if end >= 0 else None
    if head is None:
        raise _fail("its first entry (the match's start) is incomplete or damaged")
    if head.get("format") != JOURNAL_FORMAT:
        raise _fail(f"'format' must be {JOURNAL_FORMAT!r}")
    if head.get("version") != JOURNAL_VERSION:
        raise _fail(f"unsupported journal version {head.get('version')!r} (this program reads 1)")
    body = head.get("record")
    if not isinstance(body, dict) or set(head) != {"format", "version", "record"}:
        raise _fail("the first entry must hold format, version and record")
    body = dict(body)
    actions: list[Any] = []
    final_sigs: dict[str, Any] = {"host": None, "joiner": None}
    result: Any = None
    entries, pos = 1, end + 1
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        obj = decode_entry(data[pos:end])
        if obj is None:
            break
        where = f"entry {entries + 1}"
        if len(obj) != 1:
            raise _fail(f"{where} must be an object with one key")
        ((kind, value),) = obj.items()
        if kind == "action":
            if result is not None:
                raise _fail(f"{where} is an action after the result")
            actions.append(value)
        elif kind == "result":
            if result is not None:
                raise _fail(f"{where} repeats the result")
            result = value
        elif kind == "start_sig":
            role = value.get("role") if isinstance(value, dict) else None
            player = body.get(role) if role in ROLES else None
            if not isinstance(player, dict):
                raise _fail(
                    f"{where}: start_sig needs a role (host or joiner) whose player is known"
                )
            body[role] = dict(player, start_sig=value.get("sig"))
        elif kind == "final_sig":
            if not isinstance(value, dict) or value.get("role") not in ROLES:
                raise _fail(f"{where}: final_sig needs a role (host or joiner) and a sig")
            if result is None:
                raise _fail(f"{where} is a final signature before the result")
            final_sigs[value["role"]] = value.get("sig")
        else:
            raise _fail(f"{where} has an unknown kind {kind!r}")
        entries += 1
        pos = end + 1
    body["actions"] = actions
    body["result"] = result
    body["final_sigs"] = final_sigs
    try:
        record = record_from_dict(body, raw=data)
    except RecordError as exc:
        raise RecordError(str(exc).replace("malformed record", "malformed journal")) from None
    return JournalRead(record, entries, len(data) - pos)


def decode_record_file(data: bytes) -> tuple[Record, JournalRead | None]:
    """A record file's record, whether compact or a journal (with what was read from it)."""
    if is_journal(data):
        read = decode_journal(data)
        return read.record, read
    return decode_compact_record(data), None


def decode_record(data: bytes) -> Record:
    """Parse and validate a record file's bytes.

    A journal (the file of a match still being played, or of one whose
    program crashed) decodes to the record of its complete entries; a compact
    record is checked as :func:`~p2pkoikoi.session.records.record.decode_compact_record`
    does.
    """
    if is_journal(data):
        return decode_journal(data).record
    return decode_compact_record(data)
