"""selfplay: reproducible from the seed whatever the number of processes; statistics; errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from p2pkoikoi.bots.tournament import elo, match_seed, run_games, summarize, wilson
from p2pkoikoi.cli import main
from p2pkoikoi.engine import get_preset


def test_results_do_not_depend_on_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = get_preset("online").with_settings(rounds=2)
    one = run_games("easy", "medium", rules, 4, seed=3, jobs=1)

    def no_fork() -> int:
        raise AssertionError("a tournament worker was forked from a possibly threaded process")

    # Workers are spawned, not forked: the caller may have threads (trio keeps an idle
    # worker after to_thread), and a forked child of a threaded process can deadlock.
    monkeypatch.setattr(os, "fork", no_fork)
    two = run_games("easy", "medium", rules, 4, seed=3, jobs=2)
    monkeypatch.undo()
    assert [(r.outcome, r.points_a, r.points_b) for r in one] == [
        (r.outcome, r.points_a, r.points_b) for r in two
    ]
    assert [r.a_seat for r in one] == [0, 1, 0, 1]  # seats alternate
    other = run_games("easy", "medium", rules, 4, seed=4, jobs=1)
    assert match_seed(3, 0) != match_seed(4, 0)
    assert len(other) == 4


def test_wilson_and_elo() -> None:
    lo, hi = wilson(0.5, 400)
    assert lo == pytest.approx(0.451, abs=1e-3) and hi == pytest.approx(0.549, abs=1e-3)
    assert wilson(1.0, 10)[1] == pytest.approx(1.0) and wilson(0.0, 10)[0] == pytest.approx(0.0)
    assert elo(0.5) == 0.0
    assert elo(0.64) == pytest.approx(100, abs=1)
    assert elo(1.0) == float("inf")


def test_summary_counts_draws_half() -> None:
    rules = get_preset("online").with_settings(rounds=1)
    res = run_games("random", "random", rules, 6, seed=1)
    s = summarize("random", "random", res)
    assert s.wins + s.draws + s.losses == 6
    assert s.score == pytest.approx((s.wins + s.draws / 2) / 6)


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "selfplay",
            "--bots",
            "easy,random",
            "--games",
            "6",
            "--rounds",
            "1",
            "--seed",
            "9",
            "--json",
            "--set",
            "pool_stake=10",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 6 and out["draws_count_half"] is True
    assert out["wins"] + out["draws"] + out["losses"] == 6
    assert out["score_low"] <= out["score"] <= out["score_high"]


def test_cli_jobs_from_the_command_line() -> None:
    """``--jobs 2`` through the real entry point: spawned workers import the package
    afresh (nothing is inherited from a fork), and the figures match ``--jobs 1``."""
    argv = ["selfplay", "--bots", "easy,random", "--games", "4", "--rounds", "1", "--json"]
    outs = []
    for jobs in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "p2pkoikoi", *argv, "--jobs", jobs],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        outs.append(json.loads(done.stdout))
    keys = ("games", "wins", "draws", "losses", "score")
    assert [outs[0][k] for k in keys] == [outs[1][k] for k in keys]


def test_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfplay", "--bots", "medium,easy", "--games", "2", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "Elo" in out and "draws count half" in out


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--bots", "easy"], "two bots"),
        (["--bots", "easy,wizard"], "unknown bot 'wizard'"),
        (["--bots", "easy,random", "--games", "0"], "--games"),
        (["--bots", "easy,random", "--rules", "martian"], "unknown preset"),
        (["--bots", "easy,random", "--set", "rounds=zero"], "rounds"),
        (["--bots", "easy,random", "--jobs", "0"], "--jobs"),
    ],
)
def test_cli_errors_are_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["selfplay", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1
