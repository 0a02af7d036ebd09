"""Issue 14's rematch through real processes: a joiner's table in a pseudo-terminal
(read with pyte) against a headless host with ``--rematch 1`` on loopback.  The
table plays the match, sees the host's offer on its end page, accepts with ``r``,
plays the second match on the same connection, and all four records verify."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pexpect", reason="pexpect is in the test extra")
pytest.importorskip("pyte", reason="pyte is in the test extra")

from procs import finish, lines, start_host, verify  # noqa: E402
from pty_terminal import DEADLINE, Terminal, answer, continue_line, decision_line  # noqa: E402


def play_to_end_page(term: Terminal, done: Callable[[str], bool]) -> str:
    """Enter at every decision and round page (never on the end page) until ``done``."""
    end = time.monotonic() + DEADLINE
    while True:
        screen = term.wait_for(
            lambda s: done(s) or decision_line(s) is not None or continue_line(s) is not None,
            end - time.monotonic(),
        )
        if done(screen):
            return screen
        answer(term, screen, max(1.0, end - time.monotonic()))


@pytest.mark.parametrize("deal", ["open", "hidden"])
def test_table_accepts_a_rematch_and_both_matches_verify(tmp_path: Path, deal: str) -> None:
    hrec, jrec = tmp_path / "host.koikoi", tmp_path / "joiner.koikoi"
    host, first = start_host(
        tmp_path, "--bind", "127.0.0.1", "--rounds", "1", "--record", str(hrec), "--rematch", "1",
        "--set", f"deal={deal}",
    )  # fmt: skip
    home = tmp_path / "joiner-home"
    home.mkdir()
    term = Terminal(["join", first["invite"], "--name", "Bob", "--record", str(jrec)], home)
    try:
        term.wait_for("invites you to a match")
        term.send("a")
        screen = play_to_end_page(term, lambda s: "wants to play again: press r" in s)
        assert "The match is over" in screen
        term.send("r")
        # the end page gives way to match 2's table (its log still says the match was over)
        term.wait_for(lambda s: "q or Enter: leave" not in s)
        screen = play_to_end_page(
            term, lambda s: "q or Enter: leave" in s and "The other player has left." in s
        )
        term.send("q")
        assert term.finish() == 0
    finally:
        term.close()
    code, out, err = finish(host)
    assert code == 0, err
    overs = [e for e in lines(out) if e["event"] == "match_over"]
    assert [e["match"] for e in overs] == [1, 2]
    j2 = tmp_path / "joiner-match2.koikoi"
    for path in (hrec, Path(overs[1]["record"]), jrec, j2):
        result = verify(path)
        assert result.returncode == 0, (path, result.stdout)
