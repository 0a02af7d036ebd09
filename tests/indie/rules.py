"""Rule sets: the presets' encodings come from protocol/vectors/rules.json (rules-encoding.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def preset(name: str) -> dict[str, Any]:
    for p in json.loads((VECTORS / "rules.json").read_text())["presets"]:
        if p["name"] == name:
            return dict(json.loads(p["encoding"]))
    raise KeyError(name)


def encode(r: dict[str, Any]) -> bytes:
    d = dict(r)
    d["plus_yaku"] = sorted(set(d["plus_yaku"]))
    return json.dumps(d, sort_keys=True, separators=(",", ":")).encode()


def fingerprint(enc: bytes) -> bytes:
    return hashlib.sha256(b"p2pkoikoi/rules/v1\0" + enc).digest()


def decode(enc: bytes) -> dict[str, Any]:
    r = json.loads(enc)
    if not isinstance(r, dict) or set(r) != set(preset("online")):
        raise ValueError("unknown rule settings")
    if encode(r) != enc:
        raise ValueError("rules not in canonical form")
    return r
