"""A headless player's event lines: the lines kept for repeated moves
(``headless._LINES``) are byte for byte the lines encoded afresh."""

from __future__ import annotations

import io
import json
import random
from typing import Any

from p2pkoikoi.cli import headless
from p2pkoikoi.engine import MatchState
from p2pkoikoi.engine.presets import get_preset


def _reference(ev: Any, actor: int | None) -> str:
    """The line as the driver wrote it before lines were kept (an independent copy)."""
    out = ev.to_dict()
    roles = ("host", "joiner")
    for key in ("seat", "dealer", "winner"):
        if isinstance(out.get(key), int):
            out[key] = roles[out[key]]
    for key in ("scores", "gained"):
        if isinstance(out.get(key), list):
            out[key] = dict(zip(roles, out[key], strict=True))
    if out["event"] == "dealer_chosen":
        out["draws"] = [dict(zip(roles, d, strict=True)) for d in out["draws"]]
    if actor is not None:
        out.setdefault("by", ("host", "joiner")[actor])
    return json.dumps(out, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def test_kept_lines_are_the_lines_encoded_afresh(monkeypatch: Any) -> None:
    monkeypatch.setattr(headless, "_LINES", {})
    steps: list[tuple[tuple[Any, ...], int | None]] = []
    rules = get_preset("online").with_settings(rounds=3)
    for n in range(6):
        state, events = MatchState.start(rules, bytes([n]) * 32)
        steps.append((events, None))
        pick = random.Random(n)
        while not state.is_over:
            actor = state.to_act
            state, events = state.apply(pick.choice(state.legal_actions()))
            steps.append((events, actor))
    expected = "".join(_reference(ev, actor) for events, actor in steps for ev in events)
    for _ in range(2):  # cold, then every move's line kept
        out = io.StringIO()
        lines = headless.JsonLines(out)
        for events, actor in steps:
            headless.emit_events(events, actor, lines)
        assert out.getvalue() == expected
    kinds = {type(key[1]).__name__ for key in headless._LINES}
    assert {"Played", "Drew"} <= kinds  # the cache was used, and only for moves
    assert kinds <= {"Played", "Drew", "Took", "KoiKoiCalled"}
