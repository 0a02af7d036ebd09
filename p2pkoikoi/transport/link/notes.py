"""Notes: the network transport's non-game notices (listening, handshake, warning, ...).

A link reports what people or scripts may want to know through one
``notify(note)`` callback; the CLI prints them as lines or JSON, a table shows
them in its status line (:func:`describe_note`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Note = dict[str, Any]
"""A non-game notice (``{"event": ..., ...}``): listening, handshake, warning, status, chat."""
Notify = Callable[[Note], None]


def nop(note: Note) -> None:
    """The notify of a caller that wants no notes."""


def describe_note(note: Note) -> str:
    """One line for people from a :data:`Note` (the table's status line)."""
    kind = note.get("event")
    if "text" in note:
        return str(note["text"])
    if kind == "listening":
        code = f"; code: {note['code']}" if note.get("code") else ""
        return (
            f"waiting for the other player on port {note['port']}; invite: {note['invite']}{code}"
        )
    if kind == "handshake":
        return f"connected to {note['peer_name']} ({note['peer_fingerprint']})"
    if kind == "found":
        n = len(note.get("hosts", ()))
        return f"found {n} match{'es' if n != 1 else ''} waiting on this network with that number"
    if kind == "dht_announced":
        where = f"at {note['nodes']} DHT nodes" if note.get("nodes") else "nowhere yet"
        return f"code {note['number']} announced on the BitTorrent DHT ({where})"
    if kind == "dht_answered":
        return "a friend with the code found us through the DHT; connecting"
    if kind == "dht_found":
        return f"found the host of code {note['number']} through the DHT; connecting"
    if kind == "dht_answer":
        return "the friend's answer came through the DHT"
    return str(kind)
