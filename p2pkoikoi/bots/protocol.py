"""The engine protocol's messages as pure functions: no pipes, no processes, no clock.

``docs/engine-protocol.md`` is the specification.  One JSON object per line;
the host sends ``hello``, ``decide``, ``event`` and ``quit``; the engine
answers ``ready`` to ``hello`` and ``action`` to ``decide``.  Keeping the
parsing here, apart from the subprocess handling in
:mod:`p2pkoikoi.bots.external`, lets both sides (the host and an engine
written in Python) share it and lets the tests check it without processes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from p2pkoikoi.engine import Action, KoiKoiError, PlayerView, RuleSet

PROTOCOL = "p2pkoikoi-engine/1"
#: longest engine output quoted back in an error message
QUOTE_MAX = 80
#: longest line read from an engine (a sane message is a few hundred bytes)
LINE_MAX = 64 * 1024


class ProtocolError(KoiKoiError):
    """A line that is not a valid protocol message; the message quotes it (truncated)."""


def quote(text: str, limit: int = QUOTE_MAX) -> str:
    """``text`` shortened for an error message, as a Python-style repr."""
    text = text.rstrip("\n")
    if len(text) > limit:
        return repr(text[:limit]) + "..."
    return repr(text)


@dataclass(frozen=True)
class Message:
    """A parsed message: its ``type`` and the whole JSON object."""

    type: str
    data: dict[str, Any]


def parse_engine_message(line: str) -> Message:
    """One line from either side, checked for JSON, an object and a known ``type``.

    Raises :class:`ProtocolError` naming what was sent.
    """
    if len(line) > LINE_MAX:
        raise ProtocolError(f"message too long ({len(line)} characters): {quote(line)}")
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        raise ProtocolError(f"not JSON: {quote(line)}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"not a JSON object: {quote(line)}")
    kind = obj.get("type")
    if kind not in _FIELDS:
        raise ProtocolError(f"unknown message type {kind!r}: {quote(line)}")
    for name, typ in _FIELDS[kind]:
        if not isinstance(obj.get(name), typ):
            raise ProtocolError(f"{kind} message lacks a valid {name!r}: {quote(line)}")
    return Message(kind, obj)


_FIELDS: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    "hello": (("protocol", str), ("seat", int), ("rules", dict)),
    "ready": (("name", str),),
    "decide": (("view", dict), ("legal", list)),
    "action": (("action", str),),
    "event": (("event", dict),),
    "quit": (),
}


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n"


def encode_hello(seat: int, rules: RuleSet) -> str:
    return _line({"type": "hello", "protocol": PROTOCOL, "seat": seat, "rules": rules.to_dict()})


def encode_ready(name: str) -> str:
    return _line({"type": "ready", "name": name})


def encode_decide(view: PlayerView) -> str:
    return _line(
        {"type": "decide", "view": view.to_dict(), "legal": [str(a) for a in view.legal_actions]}
    )


def encode_action(action: Action | str) -> str:
    return _line({"type": "action", "action": str(action)})


def encode_event(event: dict[str, Any]) -> str:
    return _line({"type": "event", "event": event})


def encode_quit() -> str:
    return _line({"type": "quit"})


def action_from_message(msg: Message, view: PlayerView) -> Action:
    """The legal action an ``action`` message names, or :class:`ProtocolError` saying why not."""
    if msg.type != "action":
        raise ProtocolError(f"expected an action message, got {msg.type!r}")
    text = msg.data["action"]
    try:
        action = Action.parse(text)
    except KoiKoiError as exc:
        raise ProtocolError(f"unreadable action {quote(text)}: {exc}") from None
    if action not in view.legal_actions:
        legal = ", ".join(str(a) for a in view.legal_actions)
        raise ProtocolError(f"illegal action {quote(text)} (legal: {legal})")
    return action
