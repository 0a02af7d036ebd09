"""The headless JSON lines against docs/headless-events.schema.json (issue 25):
whole matches between real ``p2pkoikoi`` processes (host and joiner over loopback),
every line of both checked; and docs/network.md's list of events is the one the
schema generates.  (``practice`` has no headless mode: its table needs a terminal.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from procs import finish, lines, run_join, start_host

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "headless-events.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
KINDS = {ref["$ref"].rsplit("/", 1)[-1] for ref in SCHEMA["oneOf"]}


def check(events: list[dict[str, Any]]) -> set[str]:
    """Every line valid; the kinds seen."""
    for e in events:
        if VALIDATOR.is_valid(e):
            continue
        kind = e.get("event")
        assert kind in SCHEMA["$defs"] and kind in KINDS, f"an event the schema lacks: {e}"
        one = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{kind}", "$defs": SCHEMA["$defs"]})
        raise AssertionError(f"{e}: {[err.message for err in one.iter_errors(e)][:3]}")
    return {e["event"] for e in events}


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    names = [ref["$ref"].rsplit("/", 1)[-1] for ref in SCHEMA["oneOf"]]
    assert len(names) == len(set(names))
    for name in names:  # each kind's `event` is its own name
        assert SCHEMA["$defs"][name]["properties"]["event"] == {"const": name}


def test_network_md_lists_the_events_the_schema_generates() -> None:
    spec = importlib.util.spec_from_file_location(
        "headless_events_doc", ROOT / "scripts" / "headless_events_doc.py"
    )
    assert spec is not None and spec.loader is not None
    doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc)
    text = (ROOT / "docs" / "network.md").read_text()
    assert doc.section(text) == doc.generate(), (
        "docs/network.md's event list is stale: python scripts/headless_events_doc.py --write"
    )
    # the program says round_over: the old name is left only in the note of the change
    assert text.count("`round_ended`") == 1 and "called it `round_ended`" in text


def test_whole_headless_matches_with_a_rematch_validate(tmp_path: Path) -> None:
    host, first = start_host(
        tmp_path, "--bind", "127.0.0.1", "--rounds", "2", "--rematch", "1",
        "--record", str(tmp_path / "h.koikoi"), "--turn-limit", "60",
    )  # fmt: skip
    joined = run_join(
        tmp_path, first["invite"], "--rematch", "1", "--record", str(tmp_path / "j.koikoi")
    )
    code, out, err = finish(host)
    assert code == 0 and joined.returncode == 0, err + joined.stderr
    h = [first, first["reachability"], *lines(out)]
    del h[0]["reachability"]
    j = lines(joined.stdout)
    seen = check(h) | check(j)
    assert {
        "listening", "reachability", "connected", "handshake", "connecting", "rules_proposed",
        "dealer_chosen", "round_started", "played", "drew", "round_over", "match_ended",
        "rematch", "match_over",
    } <= seen  # fmt: skip
    # one shape everywhere: the same match's end agrees across its events
    for events in (h, j):
        overs = [e for e in events if e["event"] == "match_over"]
        ended = [e for e in events if e["event"] == "match_ended"]
        assert len(overs) == len(ended) == 2
        for over, end in zip(overs, ended, strict=True):
            assert over["scores"] == end["scores"] and over["winner"] == end["winner"]
        last_round = [e for e in events if e["event"] == "round_over"][-1]
        assert last_round["scores"] == overs[-1]["scores"]


def test_a_failing_engine_forfeits_in_lines_that_validate(tmp_path: Path) -> None:
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1")
    joined = run_join(tmp_path, first["invite"], "--bot", "cmd:false")
    code, out, err = finish(host)
    j = lines(joined.stdout)
    seen = check(j) | check(lines(out))
    assert "forfeit" in seen and "resigned" in seen, joined.stdout[-2000:] + joined.stderr
