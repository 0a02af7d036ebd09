"""Practice records, ``p2pkoikoi history`` and ``p2pkoikoi replay``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from practice import play_practice

from p2pkoikoi.bots import make_bot
from p2pkoikoi.engine import MatchState, Phase, get_preset
from p2pkoikoi.session import decode_record
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.link.contract import LocalLink
from p2pkoikoi.ui.replay import Replay, positions, turn_ends

ROOT = Path(__file__).resolve().parents[2]


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )


def test_a_practice_record_verifies(tmp_path: Path) -> None:
    path = tmp_path / "p.koikoi"
    assert play_practice(path, tmp_path / "cfg", 1, rounds=2) == str(path)
    report = verify_record(decode_record(path.read_bytes()))
    assert report.ok and report.complete, report.to_dict()


def test_practice_with_the_hidden_deal_records_the_open_deal_it_plays(tmp_path: Path) -> None:
    """One program deals both hands in practice, so the table plays the open deal
    (RuleSet.with_open_deal) and its record must say so, and verify."""
    path = tmp_path / "p.koikoi"
    assert play_practice(path, tmp_path / "cfg", 2, deal="hidden") == str(path)
    rec = decode_record(path.read_bytes())
    assert rec.rules is not None and rec.rules.deal.value == "open"
    report = verify_record(rec)
    assert report.ok and report.complete, report.to_dict()


@pytest.mark.parametrize("preset", ["online", "rulebook"])  # rulebook: the hand swap
def test_replay_plays_a_hidden_deal_record_from_its_audits(preset: str) -> None:
    """Each deal dealt from its audited deck: the recorded decisions replay to the
    recorded result, and once the match is over both hands show, as they were."""
    from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair

    h, j = make_pair(get_preset(preset).with_settings(deal="hidden", rounds=3), label=preset)
    run_pair(h, j, random_chooser(2))
    record = h.record()
    moves = positions(record)
    acts = [a for a in record.actions if a.kind == "act"]
    assert len(moves) >= len(acts) + 1
    assert moves[-1].state.is_over
    assert moves[-1].state.scores == record.result.scores  # type: ignore[union-attr]
    rp = Replay(record, 0, moves)
    rp.index = next(i for i, p in enumerate(moves) if p.state.phase is Phase.PLAY)
    text = "".join(t for _, t in rp.other_hand())  # the joiner's hand, as it was dealt
    assert "hand:" in text and "hidden" not in text
    assert len(moves[rp.index].state.view(1).hand) >= 7


def test_history_lists_results_verification_and_totals(tmp_path: Path) -> None:
    records, config = tmp_path / "records", tmp_path / "cfg"
    records.mkdir()
    for n in range(3):
        play_practice(records / f"2026-11-30-12000{n}-practice-random.koikoi", config, n)
    # a tampered record: its result no longer matches the moves
    bad = records / "2026-11-30-120009-practice-random.koikoi"
    doc = json.loads((records / "2026-11-30-120000-practice-random.koikoi").read_text())
    doc["result"]["scores"] = [99, 1]
    bad.write_text(json.dumps(doc))
    (records / "2026-11-30-120010-junk.koikoi").write_text("not a record")
    out = cli("history", "--dir", str(records), "--config-dir", str(config))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # each match is two lines: number, date, opponent, rules; then result, check, file
    heads = [i for i, line in enumerate(lines) if "2026-11-30 12:00" in line]
    rows = [lines[i] + lines[i + 1] for i in heads]
    assert len(rows) == 4
    assert sum("verified" in r for r in rows) == 3
    assert "FAILED: result" in rows[3]
    assert all("Computer (random)" in r and "online" in r for r in rows)
    assert "not a readable record" in out.stdout
    total = next(line for line in lines if line.startswith("  Computer (random):"))
    # the tampered record is listed but not counted
    assert total.startswith("  Computer (random): 3 matches") and "1 not counted" in total
    data = json.loads(
        cli("history", "--dir", str(records), "--config-dir", str(config), "--json").stdout
    )
    results = [m["result"] for m in data["matches"]]
    assert data["totals"]["Computer (random)"]["matches"] == 3
    assert sum(data["totals"]["Computer (random)"][k] for k in ("won", "lost", "draw")) == 3
    assert set(results) <= {"won", "lost", "draw"}


def test_replay_steps_forwards_and_backwards(tmp_path: Path) -> None:
    path = tmp_path / "p.koikoi"
    play_practice(path, tmp_path / "cfg", 7, rounds=2)
    record = decode_record(path.read_bytes())
    moves = positions(record)
    assert len(moves) == len(record.actions) + 1
    assert moves[-1].state.is_over
    assert moves[-1].state.scores == record.result.scores  # type: ignore[union-attr]
    rp = Replay(record, 0, moves)
    ends = turn_ends(moves)
    rp.turn(1)
    assert rp.index == ends[1] > 0
    rp.turn(1)
    rp.turn(-1)
    assert rp.index == ends[1]
    rp.step(len(moves))
    assert rp.index == len(moves) - 1
    text = "".join(t for _, t in rp.other_hand())
    assert "hand:" in text and "hidden" not in text  # both hands once the match is over
    st = rp.table()
    assert st.view is not None and st.view.hand == moves[-1].state.view(0).hand
    rp.round(-1)
    assert moves[rp.index].state.round <= moves[-1].state.round


def test_replay_and_history_through_a_terminal(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("pexpect")
    from pty_terminal import Terminal

    path = tmp_path / "p.koikoi"
    play_practice(path, tmp_path / "cfg", 3)
    t = Terminal(["replay", str(path)], tmp_path)
    try:
        t.wait_for("The deal (0 of")
        t.send("\x1b[C")  # Right: one turn
        t.wait_for(lambda s: "The deal" not in s and " Move " in s)  # a turn: 1 or 2 moves
        t.send("\x1b[F")  # End
        screen = t.wait_for("(the match is over)")
        assert "Computer (random)'s hand" in screen
        t.send("\x1b[D")  # Left: back one turn
        t.wait_for(lambda s: "(the match is over)" not in s)
        t.send("q")
        assert t.finish() == 0
    finally:
        t.close()


def test_a_match_decided_by_the_deal_still_ends_and_records(tmp_path: Path) -> None:
    """A dealt hand yaku in a one-round match ends it before any move."""
    rules = get_preset("online").with_settings(rounds=1)
    seed = (7).to_bytes(32, "big")  # round 1 is decided by a dealt hand yaku
    assert MatchState.start(rules, seed)[0].is_over
    link = LocalLink(rules, seed, make_bot("random", 1).choose)

    async def main() -> list[str]:
        kinds = []
        with trio.fail_after(30):  # without the "over" update the table would wait forever
            await _collect(kinds)
        return kinds

    async def _collect(kinds: list[str]) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(link.run)
            async for upd in link.updates:
                kinds.append(upd.kind)
                if upd.kind == "over":
                    break

    assert trio.run(main) == ["state", "over"]
