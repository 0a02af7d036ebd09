"""A `cmd:` engine (docs/engine-protocol.md) that plays N decisions, then exits.

Our program then resigns on its behalf: the only way to make it send a
`resign` from outside, so that tests/indie receives one.
    python -m indie.quitting_engine N
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    left = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            print(json.dumps({"type": "ready", "name": "quitter"}), flush=True)
        elif msg["type"] == "decide":
            if left == 0:
                return 0
            left -= 1
            print(json.dumps({"type": "action", "action": msg["legal"][0]}), flush=True)
        elif msg["type"] == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
