"""The engine commands as a user runs them: output, JSON, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from p2pkoikoi.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_score_json_online(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "--rules", "online", "--json", "8b", "9a", "3b", "1b")
    assert code == 0
    data = json.loads(out)
    assert [y["id"] for y in data["yaku"]] == ["sanko", "hanami", "tsukimi"]
    assert data["base"] == 15 and data["score"] == 30


def test_score_with_calls_matches_002(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "score",
        "--json",
        "--calls-self",
        "1",
        "--calls-opponent",
        "1",
        "moon",
        "sake-cup",
        "curtain",
    )
    assert code == 0 and json.loads(out)["score"] == 60


def test_score_vanikar_opponent_called(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "score",
        "--rules",
        "vanikar",
        "--json",
        "--calls-opponent",
        "1",
        *["1b", "3b", "8b", "11b", "12b"],
    )
    assert json.loads(out)["score"] == 40


@pytest.mark.parametrize(
    "argv,message",
    [
        (["score", "zz"], "unknown card: 'zz'"),
        (["score", "1b", "crane"], "duplicate card: 1b"),
        (["score", "--rules", "nope", "1b"], "unknown preset: 'nope'"),
        (["score", "--set", "double_at=x", "1b"], "double_at must be a whole number"),
        (["score", "--set", "garbage", "1b"], "malformed setting"),
        (["deal", "--match-seed", "xyz"], "--match-seed must be 64 hex digits (0-9, a-f)"),
        (["practice", "--seed", "xyz"], "--seed must be 64 hex digits (0-9, a-f)"),
        (["practice", "--rounds", "-1"], "--rounds must be between 1 and 99, not -1"),
        (["deal", "--match-seed", "00"], "32 bytes"),
        (["rules", "--diff", "online", "nope"], "unknown preset"),
        (["score"], "required"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_deal_json_matches_engine(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "deal", "--match-seed", "00" * 32, "--round", "2", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["deck"]) == 48 and len(data["stock"]) == 24
    assert data["deck"][24:] == data["stock"]


def test_rules_diff_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--diff", "online", "nintendo", "--json")
    settings = {d["setting"] for d in json.loads(out)}
    assert code == 0 and {"double_at", "koikoi_multiplier", "sake_cup", "rounds"} <= settings
    code, out, _ = run(capsys, "rules", "online", "--json")
    assert json.loads(out)["rules"]["double_at"] == 8


def test_console_script_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "score", "--json", "1b", "3b", "8b"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["score"] == 5
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "bench", "--seconds", "0.2", "--json",
         "--startup-runs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    assert figures["rounds_per_second"] > 0
    # the protocol's cost per move and start-up times are there for the next engineer
    assert figures["protocol_cpu_ms_per_action_per_side"] > 0
    assert figures["protocol_actions"] > 100
    for name in ("python", "help", "score", "rules", "verify"):
        assert figures[f"startup_{name}_ms"] > 0
    assert figures["startup_bytecode"] in (0, 1)


def test_bench_tells_whether_the_modules_start_from_bytecode(tmp_path: Path) -> None:
    """Start-up figures without bytecode measure the compiler: ``has_bytecode`` says
    whether a module's cached bytecode exists and matches its source."""
    import os
    import py_compile

    from p2pkoikoi.cli.bench_protocol import has_bytecode

    source = tmp_path / "mod.py"
    source.write_text("X = 1\n")
    assert not has_bytecode(str(source))  # never compiled
    py_compile.compile(str(source))
    assert has_bytecode(str(source))
    source.write_text("X = 22\n")  # changed since: the interpreter would compile it again
    os.utime(source, (1, 1))
    assert not has_bytecode(str(source))
    py_compile.compile(str(source))
    assert has_bytecode(str(source))


def test_rules_diff_koikoijapan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--diff", "online", "koikoijapan", "--json")
    diff = {d["setting"]: d for d in json.loads(out)}
    assert code == 0
    assert {"viewing_after_koikoi", "koikoi_bonus", "pool_payment_cap"} <= set(diff)
    assert len(diff) == 18


def test_score_koikoijapan_bonus_and_viewing(capsys: pytest.CaptureFixture[str]) -> None:
    """Hanami is 3 once you have called; two own calls add 2; four calls double instead."""
    code, out, _ = run(
        capsys,
        "score",
        "--rules",
        "koikoijapan",
        "--calls-self",
        "2",
        "--json",
        "curtain",
        "sake-cup",
    )
    data = json.loads(out)
    assert code == 0 and data["yaku"] == [{"id": "hanami", "points": 3}]
    assert (data["base"], data["bonus"], data["multipliers"], data["score"]) == (3, 2, [], 5)
    code, out, _ = run(
        capsys,
        "score",
        "--rules",
        "koikoijapan",
        "--calls-self",
        "4",
        "--json",
        "curtain",
        "sake-cup",
    )
    data = json.loads(out)
    assert (data["bonus"], [m["factor"] for m in data["multipliers"]], data["score"]) == (0, [2], 6)
    code, out, _ = run(capsys, "score", "--rules", "koikoijapan", "curtain", "sake-cup")
    assert "Hanami-zake" in out and "Score: 1" in out
