"""Writing record files: the compact record (:func:`encode_record`) and the journal
(:class:`JournalWriter`), the two forms :mod:`p2pkoikoi.session.records.record` and
:mod:`p2pkoikoi.session.records.journal` define and read back (``protocol/records.md``).

The writing lives apart from the reading so that ``p2pkoikoi verify``, which only
reads, does not load it.  Nothing here does I/O: the transport writes the bytes
(``transport/store/journal.py``).
"""

from __future__ import annotations

import binascii  # crc32, the same as zlib.crc32 (binascii is loaded already, zlib is not)
import functools
import json
from collections.abc import Sequence
from typing import Any, Final

import p2pkoikoi.engine.values as values
from p2pkoikoi.session.crypto import fingerprint
from p2pkoikoi.session.records.journal import JOURNAL_FORMAT, JOURNAL_VERSION, ROLES
from p2pkoikoi.session.records.record import (
    RECORD_FORMAT,
    RECORD_VERSION,
    ActionRecord,
    PlayerRecord,
    Record,
    ResultRecord,
)


# --------------------------------------------------------------------------- the record
def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def _player(p: PlayerRecord | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "name": p.name,
        "identity_key": p.key.hex(),
        "fingerprint": fingerprint(p.key),
        "auth_sig": _hex(p.auth_sig),
        "start_sig": _hex(p.start_sig),
    }


def record_to_dict(record: Record) -> dict[str, Any]:
    r = record.result
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "protocol": record.protocol,
        "session_id": _hex(record.session_id),
        "rules": record.rules.to_dict() if record.rules is not None else None,
        "rules_fingerprint": record.rules.fingerprint() if record.rules is not None else None,
        "turn_limit": record.turn_limit,
        "host": _player(record.host),
        "joiner": _player(record.joiner),
        "accepted": record.accepted,
        "commitment": _hex(record.commitment),
        "commit_sig": _hex(record.commit_sig),
        "joiner_value": _hex(record.joiner_value),
        "host_value": _hex(record.host_value),
        "match_seed": _hex(record.match_seed),
        "actions": [action_to_dict(a) for a in record.actions],
        "result": None
        if r is None
        else {
            "scores": list(r.scores),
            "winner": r.winner,
            "final_state_hash": r.final_state_hash.hex(),
            "transcript_hash": r.transcript_hash.hex(),
        },
        "final_sigs": {"host": _hex(record.final_sigs[0]), "joiner": _hex(record.final_sigs[1])},
        "forfeit": None
        if record.forfeit is None
        else {
            "seat": record.forfeit.seat,
            "reason": record.forfeit.reason,
            "sig": record.forfeit.sig.hex(),
        },
        "missing": record.missing,
        # a rematch only: a first match's record is as before
        **(
            {"match": record.match_number, "previous": _hex(record.previous)}
            if record.match_number > 1
            else {}
        ),
    } | (
        {}
        if record.evidence is None
        else {
            "evidence": {
                "seat": record.evidence.seat,
                "round": record.evidence.round,
                "attempt": record.evidence.attempt,
                "secrets": record.evidence.secrets.hex(),
            }
        }
    )


def action_to_dict(a: ActionRecord) -> dict[str, Any]:
    """One action as JSON values (hex bytes), the same in a record and a journal."""
    out: dict[str, Any] = {
        "seq": a.seq,
        "seat": a.seat,
        "action": a.action,
        "state_hash": a.state_hash.hex(),
        "sig": a.sig.hex(),
    }
    if a.kind:  # a move of the hidden deal
        out["kind"] = a.kind
        if a.pos is not None:
            out["pos"] = a.pos
        if a.deck:
            out["deck"] = a.deck.hex()
        if a.keys:
            out["keys"] = a.keys.hex()
    return out


@functools.lru_cache(maxsize=4096)
def _action_line(a: ActionRecord) -> str:
    """One action's JSON line; cached, since the record is rewritten after every move and
    a hidden deal's moves carry whole decks (the file then grows to hundreds of kB).
    An open deal's action is written without the JSON encoder's generic walk
    (the same bytes: a test compares them), as the record is compacted at the
    match's end, between its last move and the result line."""
    if a.kind or type(a.seq) is not int or type(a.seat) is not int:
        return json.dumps(action_to_dict(a), separators=(", ", ": "))
    return (
        f'{{"seq": {a.seq!r}, "seat": {a.seat!r}, '
        f'"action": {_ascii_str(a.action)}, "state_hash": "{a.state_hash.hex()}", '
        f'"sig": "{a.sig.hex()}"}}'
    )


#: a JSON string literal as ``json.dumps`` writes it (ensure_ascii)
_ascii_str: Final = json.encoder.encode_basestring_ascii


def encode_record(record: Record) -> bytes:
    """UTF-8 JSON, one action per line, ending in a newline."""
    d = record_to_dict(values.replace(record, actions=()))
    d.pop("actions")
    head = json.dumps(d, indent=1, ensure_ascii=False)
    actions = record.actions
    lines = ",\n  ".join(_action_line(a) for a in actions)
    body = f'"actions": [\n  {lines}\n ]' if actions else '"actions": []'
    text = head[:-2] + ",\n " + body + "\n}\n"
    return text.encode("utf-8")


# --------------------------------------------------------------------------- the journal
#: one encoder for every entry (json.dumps with options builds a new one each call)
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


#: a JSON string literal as that encoder writes it (ensure_ascii=False)
_json_str: Final = _ENCODER.encode


def encode_entry(obj: dict[str, Any]) -> bytes:
    """One journal line: CRC-32 of the compact JSON, a space, the JSON, a newline."""
    text = _ENCODER.encode(obj).encode("utf-8")
    return b"%08x %s\n" % (binascii.crc32(text), text)


def _action(a: ActionRecord) -> dict[str, Any]:
    return action_to_dict(a)  # a hidden deal's card move keeps its kind, pos, deck and keys


def encode_action_entry(a: ActionRecord) -> bytes:
    """``encode_entry({"action": _action(a)})``, byte for byte, without the JSON
    encoder's generic walk: one of these is written for every action."""
    if a.kind:  # a card move of the hidden deal: its kind, pos, deck and keys too
        return encode_entry({"action": _action(a)})
    text = (
        f'{{"action":{{"seq":{a.seq:d},"seat":{a.seat:d},"action":{_json_str(a.action)},'
        f'"state_hash":"{a.state_hash.hex()}","sig":"{a.sig.hex()}"}}}}'
    ).encode()
    return b"%08x %s\n" % (binascii.crc32(text), text)


def encode_head(record: Record) -> bytes:
    """The first entry: ``record`` (a started match) without its actions and result."""
    if record.match_seed is None:
        raise ValueError("a journal starts when the match has started (the record has a seed)")
    head = values.replace(record, actions=(), result=None, final_sigs=(None, None))
    return encode_entry(
        {"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION, "record": record_to_dict(head)}
    )


class JournalWriter:
    """Sans-I/O: each :meth:`feed` returns the bytes that bring the journal up to a record.

    The first call returns the whole journal (head and every entry so far): a
    transport writes it as a new file.  Later calls return only the entries
    for what the record gained (actions, the result, final signatures), or
    ``b""``; a record that is not a continuation of the last one raises
    ``ValueError`` (a bug, never the peer's doing: records only grow).
    """

    __slots__ = ("actions", "result", "final_sigs", "start_sigs")

    def __init__(self) -> None:
        self.actions = -1  #: actions written so far (-1: nothing, not even the head)
        self.result = False
        self.final_sigs = [False, False]
        #: start signatures written (in the head, or later: the joiner's reaches the host
        #: after the match started)
        self.start_sigs = [False, False]

    def __repr__(self) -> str:
        return (
            f"<JournalWriter actions={self.actions} result={self.result} "
            f"final_sigs={self.final_sigs} start_sigs={self.start_sigs}>"
        )

    @property
    def started(self) -> bool:
        return self.actions >= 0

    def feed(self, record: Record) -> bytes:
        head = b""
        if self.actions < 0:
            head = encode_head(record)
            self.actions = 0
            self.start_sigs = [
                p is not None and p.start_sig is not None for p in (record.host, record.joiner)
            ]
        host, joiner = record.host, record.joiner
        starts = (
            host.start_sig if host is not None else None,
            joiner.start_sig if joiner is not None else None,
        )
        return head + self.extend(record.actions, record.result, record.final_sigs, starts)

    def extend(
        self,
        actions: Sequence[ActionRecord],
        result: ResultRecord | None,
        final_sigs: tuple[bytes | None, bytes | None],
        start_sigs: tuple[bytes | None, bytes | None] = (None, None),
    ) -> bytes:
        """:meth:`feed` after the first call, from a record's parts (a session's,
        without building a :class:`Record`: this runs after every step)."""
        if self.actions < 0:
            raise ValueError("a journal starts with feed(record): the head")
        out = []
        for seat, sig in enumerate(start_sigs):
            if sig is not None and not self.start_sigs[seat]:
                out.append(encode_entry({"start_sig": {"role": ROLES[seat], "sig": sig.hex()}}))
                self.start_sigs[seat] = True
        n = len(actions)
        if n < self.actions:
            raise ValueError("the record lost actions since the last journal entry")
        for i in range(self.actions, n):
            out.append(encode_action_entry(actions[i]))
        self.actions = n
        if result is not None and not self.result:
            entry = {
                "scores": list(result.scores),
                "winner": result.winner,
                "final_state_hash": result.final_state_hash.hex(),
                "transcript_hash": result.transcript_hash.hex(),
            }
            out.append(encode_entry({"result": entry}))
            self.result = True
        for seat, sig in enumerate(final_sigs):
            if sig is not None and not self.final_sigs[seat]:
                out.append(encode_entry({"final_sig": {"role": ROLES[seat], "sig": sig.hex()}}))
                self.final_sigs[seat] = True
        return b"".join(out)
