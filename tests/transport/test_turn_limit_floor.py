"""``--expect-rules`` covers the turn limit (issue 22, item 4).

A host with ``--turn-limit 1`` was accepted automatically by a joiner with
``--expect-rules online``; the joiner's engine, thinking 3 s a decision as a
person would, lost by time, and the host's win verified.  A headless joiner now
accepts a limit under 10 s only when asked for explicitly (``--min-turn-limit``).
Real headless processes on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from procs import finish, lines, run_join, start_host


@pytest.mark.parametrize("expect", [["--expect-rules", "online"], []])
def test_a_one_second_turn_limit_is_refused_by_a_headless_joiner(
    tmp_path: Path, expect: list[str]
) -> None:
    host, first = start_host(
        tmp_path, "--bind", "127.0.0.1", "--turn-limit", "1", "--rules", "online"
    )
    joined = run_join(tmp_path, first["invite"], *expect)
    code, out, err = finish(host)
    assert joined.returncode == 1, joined.stdout
    assert not [e for e in lines(joined.stdout) if e["event"] == "match_over"]
    assert joined.stderr.strip() == (
        "p2pkoikoi: the host's turn limit is 1 s per decision, below the 10 s accepted"
        " without asking: join with --min-turn-limit 1 to play it anyway"
    ), joined.stderr
    assert code != 0 and "turn limit" in err, err


def test_a_short_turn_limit_asked_for_explicitly_is_played(tmp_path: Path) -> None:
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--turn-limit", "5", "--rounds", "1")
    joined = run_join(
        tmp_path, first["invite"], "--expect-rules", "online", "--set", "rounds=1",
        "--min-turn-limit", "5",
    )  # fmt: skip
    code, _, err = finish(host)
    assert joined.returncode == 0, joined.stderr
    assert code == 0, err
