"""The table as a newcomer meets it: real processes on pseudo-terminals (see pty_terminal)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pty_terminal import (
    CTRL_C,
    DEADLINE,
    ENTER,
    ESC,
    PGDN,
    answer,
    command_from_screen,
    continue_line,
    decision_line,
    host_invite,
    play_until,
    spawn,
)

SEED = "ab" * 32


def test_practice_to_the_end_of_a_round(tmp_path: Path, terms) -> None:
    t = spawn(terms, tmp_path, "practice", "--rounds", "1", "--seed", SEED, "--opponent", "random")
    t.wait_for("Your hand")
    screen = play_until(t, lambda s: "Round 1 of 1:" in s)
    assert "Totals now:" in screen or "Pools now:" in screen
    t.send(ENTER)
    screen = t.wait_for("The match is over")
    assert "how it ended" in screen
    assert "No record" in screen  # a chosen --seed proves nothing: no record
    t.send("q")
    assert t.finish() == 0


def test_practice_leaves_a_record_that_verifies(tmp_path: Path, terms) -> None:
    t = spawn(terms, tmp_path, "practice", "--rounds", "1", "--opponent", "random")
    play_until(t, lambda s: "Round 1 of 1:" in s)
    t.send(ENTER)
    t.wait_for("p2pkoikoi verify ")
    t.send("q")
    assert t.finish() == 0
    out = t.raw.decode("utf-8", "replace")
    path = out.split("Verify it with: p2pkoikoi verify ")[1].split()[0]
    assert "/p2pkoikoi/records/" in path and path.endswith("-practice-random.koikoi")
    ok = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "verify", path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0 and "verified: the shuffle was fair" in ok.stdout, ok.stdout


def test_the_prompt_counts_the_cards_in_hand(tmp_path: Path, terms) -> None:
    t = spawn(terms, tmp_path, "practice", "--seed", SEED, "--opponent", "random")
    screen = t.wait_for("Your turn: choose a card")
    assert "(←→ or 1-8)" in screen  # eight cards dealt


def test_60x20_says_too_small_until_resized(tmp_path: Path, terms) -> None:
    t = spawn(terms, tmp_path, "practice", "--seed", SEED, columns=60, rows=20)
    screen = t.wait_for("The terminal is too small: 80x24 needed.")
    assert "Your hand" not in screen  # no table with cards silently missing
    t.send("8" + ENTER + "?")  # keys for cards nobody can see do nothing
    t.wait_for("Yaku in these rules")  # the help page works at any size
    t.send(PGDN * 12)
    screen = t.wait_for("Card tiles")  # folded to 60 columns...
    assert "chaff" in screen.split("Card tiles")[1]  # ...so the legend ends with the chaff mark
    t.resize(80, 24)
    t.send(ESC)
    screen = t.wait_for("Your hand")
    assert "too small" not in screen
    assert "[1]" in screen  # still the first card selected: the 8 was not taken


def _ascii_only(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if any(ord(ch) >= 128 for ch in line)]


def test_ascii_draws_only_ascii(tmp_path: Path, terms) -> None:
    t = spawn(terms, tmp_path, "practice", "--ascii", "--seed", SEED, "--opponent", "random")
    screens = [t.wait_for("Your turn: choose a card")]
    assert "(Left/Right or 1-8)" in screens[0]
    t.send("?")
    screens.append(t.wait_for("Yaku in these rules"))
    t.send(PGDN * 12)
    screens.append(t.wait_for("Card tiles"))
    t.send(ENTER)
    t.send("u")
    screens.append(t.wait_for("Cards you have not seen yet"))
    t.send(ENTER)
    t.send("r")
    screens.append(t.wait_for("Resign the match?"))
    t.send("n")
    t.wait_for(lambda s: "Resign the match?" not in s)
    t.send("q")
    screens.append(t.wait_for("Leave now?"))
    t.send("n")
    screens.append(t.wait_for(lambda s: "Leave now?" not in s))
    for screen in screens:
        assert not _ascii_only(screen), screen


def test_host_and_join_a_one_round_match(tmp_path: Path, terms) -> None:
    host = spawn(
        terms, tmp_path / "a", "host", "--bind", "127.0.0.1", "--port", "0", "--rounds", "1",
        "--name", "Alice", "--record", str(tmp_path / "alice.koikoi"),
    )  # fmt: skip
    invite = host_invite(host)
    join = spawn(
        terms, tmp_path / "b", "join", *invite.split(), "--name", "Bob",
        "--record", str(tmp_path / "bob.koikoi"), "--quiet",
    )  # fmt: skip
    join.wait_for("Play by these rules?")
    join.send("a")
    for t in (host, join):
        t.wait_for(lambda s: "Your hand" in s or "Round 1 of 1:" in s)
    over = {id(host): False, id(join): False}
    decided = {id(host): 0, id(join): 0}
    # both play: Enter at each decision, Enter on the round page, until the match is over
    end = time.monotonic() + DEADLINE
    while not all(over.values()):
        if time.monotonic() > end:
            raise AssertionError(
                f"the match did not end; host:\n{host.text()}\n\njoiner:\n{join.text()}"
            )
        for t in (host, join):
            if over[id(t)]:
                continue
            if not t.pump(0.05):
                raise AssertionError(f"{t.argv[0]} exited mid-match; screen:\n{t.text()}")
            screen = t.text()
            if "The match is over" in screen and "how it ended" in screen:
                over[id(t)] = True
            elif ("Round 1 of 1:" in screen and continue_line(screen)) or decision_line(screen):
                decided[id(t)] += decision_line(screen) is not None
                answer(t, screen)
    # the bell: your turn, noticed (a round won by a dealt hand yaku gives the host no turn)
    assert (b"\x07" in host.raw) == (decided[id(host)] > 0), host.text()
    assert b"\x07" not in join.raw  # --quiet
    for t, path in ((host, "alice.koikoi"), (join, "bob.koikoi")):
        screen = t.wait_for("p2pkoikoi verify")
        assert command_from_screen(screen, "p2pkoikoi verify ").endswith(path)
        t.send("q")
        assert t.finish() == 0
        out = t.raw.decode("utf-8", "replace")
        assert f"Verify it with: p2pkoikoi verify {tmp_path / path}" in out  # left in the shell
        ok = subprocess.run(
            [sys.executable, "-m", "p2pkoikoi", "verify", str(tmp_path / path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ok.returncode == 0, ok.stdout + ok.stderr


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("columns", [80, 60])
def test_an_ipv6_invite_is_wrapped_never_cut(tmp_path: Path, terms, columns: int) -> None:
    if not _has_ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback (::1)")
    from p2pkoikoi.session import decode_invite

    # a full-length address, as a real IPv6 invite carries (::1 alone would fit)
    long_address = "2001:db8:1234:5678:9abc:def0:1234:5678"
    host = spawn(
        terms, tmp_path, "host", "--bind", "::1", "--port", "0", "--advertise", long_address,
        columns=columns,
    )  # fmt: skip
    invite = host_invite(host)
    decoded = decode_invite(invite)  # the checksum holds: nothing of it was cut
    assert long_address in str(decoded)
    screen = host.text()
    assert "\\" in screen  # it did need folding
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if "read it aloud" in line)
    end = next(i for i in range(start + 2, len(lines)) if not lines[i].strip())
    spoken = " ".join(line.strip() for line in lines[start + 2 : end])  # up to a blank line
    assert decode_invite(spoken) == decode_invite(invite)
    host.send("q")
    host.finish()


def test_a_second_ctrl_c_leaves(tmp_path: Path, terms) -> None:
    t = spawn(terms, tmp_path, "practice", "--seed", SEED)
    t.wait_for("Your hand")
    t.send(CTRL_C)
    t.wait_for("Leave now? That resigns the match.")
    t.send(CTRL_C)
    assert t.finish() == 130  # an interrupt, as headless reports it
