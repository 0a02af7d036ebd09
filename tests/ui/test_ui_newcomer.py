"""Issue 14's smaller table defects, on the pure state and renderer."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from p2pkoikoi.engine import MatchState, Phase, get_preset
from p2pkoikoi.engine.events import RoundEnded, YakuMade
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.ui import render as R
from p2pkoikoi.ui.state import Page, TableState
from p2pkoikoi.ui.tiles import tile_text

ROOT = Path(__file__).resolve().parents[2]


def text(frags: object) -> str:
    return "".join(f[1] for f in frags)  # type: ignore[attr-defined]


def random_play(seed: int) -> Iterator[tuple[MatchState, tuple[object, ...]]]:
    """Every state of a random match (rules: online), with the events leading to it."""
    rules = get_preset("online")
    m, events = MatchState.start(rules, bytes([seed]) * 32)
    rng = random.Random(seed)
    yield m, events
    while not m.is_over:
        m, events = m.apply(rng.choice(m.legal_actions()))
        yield m, events


def find(pred: Callable[[MatchState, tuple[object, ...]], bool]) -> tuple[TableState, MatchState]:
    """A table (seat 0) fed a random match up to the first state where ``pred`` holds."""
    for seed in range(200):
        st = TableState()
        st.attach(0, ("You", "Computer"), get_preset("online"))
        for m, events in random_play(seed):
            st.apply_update(Update("state", m.view(0), events))  # type: ignore[arg-type]
            if pred(m, events):
                st.pages.clear()
                return st, m
    raise AssertionError("no such position in 200 random matches")


def test_a_pending_drawn_card_is_shown_once() -> None:
    st, m = find(lambda m, ev: m.phase is Phase.DRAW_CHOICE and m.to_act == 0)
    drawn = m.drawn_card
    assert drawn is not None
    shown = text(R.field_fragments(st))
    head, *rows = shown.splitlines()
    assert f"drawn: {tile_text(drawn, False)}" in head
    assert f"({len(m.view(0).field) - 1} cards" in head
    flower = tile_text(drawn, False)[:5].strip()  # month and flower: "1Pin"
    on_field = [c for c in m.view(0).field if c.month == drawn.month and c is not drawn]
    assert "".join(rows).count(flower) == len(on_field) == 2  # the two it may take


def test_no_stop_now_after_a_koikoi_call() -> None:
    st, m = find(lambda m, ev: m.calls[0] > 0 and m.view(0).yaku(0) and m.phase is not Phase.KOIKOI)
    side = text(R.side_fragments(st))
    assert "stop now" not in side and "called; worth" in side


def test_a_round_that_ended_by_itself_is_not_called_stopped() -> None:
    def ended_by_itself(m: MatchState, events: tuple[object, ...]) -> bool:
        kinds = [e for e in events if isinstance(e, YakuMade | RoundEnded)]
        return (
            len(kinds) >= 2
            and isinstance(kinds[-2], YakuMade)
            and not kinds[-2].can_koikoi
            and isinstance(kinds[-1], RoundEnded)
            and kinds[-1].reason == "stop"
        )

    st, m = find(ended_by_itself)
    rnd = m.results[-1]
    how = R.round_how(st, rnd.round, rnd.winner, rnd.reason)
    assert "stopped" not in how and "no koi-koi call was possible" in how


def test_the_prompt_counts_the_hand() -> None:
    st, m = find(lambda m, ev: m.to_act == 0 and m.phase is Phase.PLAY and len(m.view(0).hand) == 2)
    assert "(←→ or 1-2)" in text(R.prompt_fragments(st))


def test_unseen_page_lists_what_is_hidden() -> None:
    st, m = find(lambda m, ev: m.to_act == 0 and m.phase is Phase.PLAY)
    st.toggle_unseen()
    assert st.page is Page.UNSEEN
    lines = [text(line) for line in R.unseen_lines(st)]
    hidden = m.view(0).unseen
    assert f"Cards you have not seen yet: {len(hidden)}" in lines[0]
    body = "\n".join(lines)
    for c in hidden:
        assert tile_text(c, False) in body
    for month in range(1, 13):  # per month: exactly the hidden cards, counted
        row = next(line for line in lines if line.startswith(f" {month:>2} "))
        n = sum(1 for c in hidden if c.month == month)
        assert (f"{n} of 4" in row) if n else ("all seen" in row), row
    st.enter()
    assert st.page is None


@pytest.mark.parametrize("width", [30, 40, 60, 80])
def test_wrap_line_keeps_every_character_and_pastes_as_one_command(width: int) -> None:
    invite = "koi1-[2001:db8:1234:5678:9abc:def0:1234:5678]-41234-" + "abcdefgh" * 4 + "-x7k2"
    path = "/home/a-long-name/.local/share/p2pkoikoi/records/2026-11-30-131500-Bob.koikoi"
    for line in (f"  p2pkoikoi join {invite}", f"   p2pkoikoi verify {path}"):
        rows = [text(r) for r in R.wrap_line([("", line)], width)]
        assert all(len(r) <= width for r in rows), rows
        # as a shell joins backslash-newline: the same words
        pasted = ""
        for r in rows:
            pasted += r[:-1] if r.endswith("\\") else r
        assert pasted.split() == line.split() or "".join(pasted.split()[2:]) == "".join(
            line.split()[2:]
        ), rows
    prose = "Warning: " + "word " * 40
    rows = [text(r) for r in R.wrap_line([("", prose)], width)]
    assert " ".join(" ".join(rows).split()) == " ".join(prose.split())


def test_the_help_legend_is_whole_at_60_columns() -> None:
    st = TableState()
    st.toggle_help()
    lines = [text(line) for line in R.wrapped_page_lines(st, 0, 60)]
    assert all(len(line) <= 60 for line in lines)
    legend = " ".join(lines[next(i for i, x in enumerate(lines) if "Card tiles" in x) :])
    assert "· chaff" in legend


def test_ascii_footer_and_prompt_name_the_arrows() -> None:
    st, _ = find(lambda m, ev: m.to_act == 0 and m.phase is Phase.PLAY)
    st.ascii = True
    assert "Left/Right" in text(R.prompt_fragments(st))
    st.toggle_help()
    assert "Up/Down" in text(R.footer_fragments(st))
    assert all(ord(ch) < 128 for ch in text(R.footer_fragments(st)))


def test_record_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "host", "--headless", "--port", "0",
         "--bind", "127.0.0.1", "--record", str(tmp_path / "no" / "such" / "x.koikoi")],
        capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
             "P2PKOIKOI_CONFIG_DIR": str(tmp_path / "cfg")},
    )  # fmt: skip
    assert proc.returncode != 0
    assert "does not exist" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "no").exists()
