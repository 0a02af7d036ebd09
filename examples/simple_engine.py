#!/usr/bin/env python3
"""A complete p2pkoikoi engine in one standard-library file: copy it and start from here.

It speaks ``p2pkoikoi-engine/1`` (see docs/engine-protocol.md): one JSON
object per line on stdin and stdout.  Run it against the built-in bots with

    p2pkoikoi selfplay --bots "cmd:python examples/simple_engine.py",easy --games 20

Its strategy is greedy: capture the most valuable cards now, discard the
least valuable card otherwise, and stop as soon as it has a yaku.  Card
values come from the card code alone ("3b" = month 3, bright), so the file
needs nothing from p2pkoikoi.  Anything written to stderr is ignored by the
host: print debugging there, never to stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any

NAME = "simple-greedy"

# value of a card by kind letter; a few special cards are worth more
KIND_VALUE = {"b": 5.0, "a": 2.0, "r": 2.0, "c": 0.5}
SPECIAL = {
    "9a": 5.0,
    "11b": 3.0,
    "6a": 3.0,
    "7a": 3.0,
    "10a": 3.0,
    "1r": 3.0,
    "2r": 3.0,
    "3r": 3.0,
    "6r": 3.0,
    "9r": 3.0,
    "10r": 3.0,
}


def month(code: str) -> int:
    digits = ""
    for ch in code:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits)


def value(code: str) -> float:
    if code in SPECIAL:
        return SPECIAL[code]
    kind = code[len(str(month(code)))]
    return KIND_VALUE.get(kind, 0.5)


def choose(view: dict[str, Any], legal: list[str]) -> str:
    """Pick one of ``legal`` (action texts) for ``view`` (the host's view.to_dict())."""
    if "stop" in legal:
        return "stop"
    if "keep" in legal:
        return "keep"
    field: list[str] = view.get("field", [])
    best, best_value = legal[0], float("-inf")
    for action in legal:
        words = action.split()
        if words[0] == "take":
            v = value(words[1])
        elif words[0] == "play":
            card = words[1]
            if len(words) == 3:
                v = value(card) + value(words[2])
            else:
                taken = [f for f in field if month(f) == month(card)]
                v = value(card) + sum(value(f) for f in taken) if taken else -value(card)
        else:
            v = 0.0
        if v > best_value:
            best, best_value = action, v
    return best


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if not isinstance(msg, dict):  # stderr is for logging: say why, exit non-zero
            print(f"simple_engine: not a protocol message: {line[:80]!r}", file=sys.stderr)
            return 2
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "ready", "name": NAME})
        elif kind == "decide":
            send({"type": "action", "action": choose(msg["view"], msg["legal"])})
        elif kind == "quit":
            break
        # "event" and any unknown message types are ignored, as the protocol asks
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
