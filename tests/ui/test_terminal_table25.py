"""Issue 25's table, as a newcomer meets it: real ``p2pkoikoi`` processes on
pseudo-terminals (see pty_terminal), at the documented 80x24 and at 200x50."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from pty_terminal import (
    DEADLINE,
    ENTER,
    Terminal,
    answer,
    command_from_screen,
    continue_line,
    decision_line,
    spawn,
)

from p2pkoikoi.engine.errors import KoiKoiError

SIZES = [(80, 24), (200, 50)]
CHAT = (
    "this is a rather long chat message to see whether it folds onto a second row"
    " of the event log instead of being cut at the side panel"
)


def _invite(t: Terminal) -> str:
    from p2pkoikoi.session import decode_invite

    def drawn(screen: str) -> bool:
        if "p2pkoikoi join " not in screen:
            return False
        try:
            decode_invite(command_from_screen(screen, "p2pkoikoi join ").split(" ", 2)[2])
        except (KoiKoiError, IndexError):
            return False
        return True

    return command_from_screen(t.wait_for(drawn), "p2pkoikoi join ").split(" ", 2)[2]


def board(screen: str) -> list[str]:
    """The rows of the cards' part of the table (left of the side panel's rule)."""
    return [line.split("│")[0] for line in screen.splitlines() if "│" in line]


#: a name on the table that could be either player: "root" without its fingerprint
AMBIGUOUS = re.compile(r"\broot\b(?! \([0-9a-z]{4}[)-])")


def _log_rows_are_whole(screen: str) -> None:
    """Every log sentence on the board ends on its row or goes on, indented, below."""
    rows = board(screen)
    rows = rows[next(i for i, r in enumerate(rows) if "Your hand" in r) + 4 :]  # the log
    starts = ("You ", "root (", "<You>", "<root (")
    for i, row in enumerate(rows):
        body = row.rstrip()
        if not body.startswith(tuple(" " + s for s in starts)):
            continue
        if body.endswith((".", "!", ")")) or body.endswith(CHAT.split()[-1]):
            continue
        nxt = rows[i + 1] if i + 1 < len(rows) else ""
        assert nxt.startswith("   ") and nxt.strip(), f"cut log row {body!r}:\n{screen}"


#: rules without the dealt hand yaku (Teshi, Kuttsuki): every round reaches a first turn
NO_HAND_YAKU = ("--set", "teshi=0", "--set", "kuttsuki=0")


@pytest.mark.parametrize(("columns", "rows"), SIZES)
def test_two_roots_see_you_and_long_lines_fold(
    tmp_path: Path, terms, columns: int, rows: int
) -> None:
    kw = {"columns": columns, "rows": rows}
    host = spawn(
        terms, tmp_path / "a", "host", "--bind", "127.0.0.1", "--port", "0", "--rounds", "1",
        *NO_HAND_YAKU,  # a dealt hand yaku would end the round before anyone plays
        "--name", "root", "--record", str(tmp_path / "a.koikoi"), "--quiet", **kw,
    )  # fmt: skip
    invite = _invite(host)
    join = spawn(
        terms, tmp_path / "b", "join", *invite.split(), "--name", "root", "--record", str(tmp_path / "b.koikoi"),
        "--quiet", **kw,
    )  # fmt: skip
    join.wait_for("Play by these rules?")
    join.send("a")
    for t in (host, join):
        t.wait_for(lambda s: "Your hand" in s or "Round 1 of 1:" in s)
    # a long chat line folds on both tables, under the first row's words
    count = 3 if rows < 30 else 15  # more than the log shows at once
    for n in range(count):
        host.send("c")
        host.wait_for(" say:")
        host.send(f"{n}: {CHAT}{ENTER}")
        host.wait_for(lambda s: " say:" not in s)
    last = f"{count - 1}: {CHAT}"
    for t, who in ((host, "<You>"), (join, "<root (")):
        screen = t.wait_for(lambda s, w=who: w in s and f"{count - 1}: this" in s)
        left = " ".join(" ".join(board(screen)).split())
        assert last in left, screen  # every word, in order, on the cards' side
    # PgUp reads the log back; PgDn returns
    join.send("\x1b[5~")
    join.wait_for("newer line")
    join.send("\x1b[6~")
    join.wait_for(lambda s: "newer line" not in s)
    seen: list[str] = []
    over = {id(host): False, id(join): False}
    end = time.monotonic() + DEADLINE
    while not all(over.values()):
        assert time.monotonic() < end, f"host:\n{host.text()}\n\njoiner:\n{join.text()}"
        for t in (host, join):
            if over[id(t)]:
                continue
            assert t.pump(0.05), t.text()
            screen = t.text()
            seen.append(screen)
            if "The match is over" in screen and "how it ended" in screen:
                over[id(t)] = True
            elif ("Round 1 of 1:" in screen and continue_line(screen)) or decision_line(screen):
                answer(t, screen)
    for screen in seen:
        bad = [
            line
            for line in screen.splitlines()
            if AMBIGUOUS.search(line.replace("pytest-of-root", "pytest"))
        ]
        assert not bad, "\n".join(bad) + "\n\n" + screen
        if "Your hand" in screen:
            _log_rows_are_whole(screen)
    for t in (host, join):
        screen = t.text()
        assert "You" in screen and "root (" in screen, screen  # the end page: both named
        assert "connected to" not in screen  # news of the start is not news at the end
        t.send("q")
        assert t.finish() == 0
    everything = "\n".join(seen)
    assert "Dealer: You" in everything  # the side panel of one of the two tables
    if columns == 200:  # the space is used: the side panel near the cards, more log rows
        table = next(s for s in seen if "Your hand" in s)
        assert all(line.find("│") < 80 for line in table.splitlines() if "│" in line)
        assert len(board(table)) > 40


def test_the_hosts_status_after_a_wrong_code_is_shown_whole(tmp_path: Path, terms) -> None:
    from hostile_peer import HostilePeer

    host = spawn(terms, tmp_path, "host", "--bind", "127.0.0.1", "--port", "0")
    invite = _invite(host)
    screen = host.wait_for(lambda s: re.search(r"join \d+-[a-z]+-[a-z]+", s) is not None)
    code = re.search(r"join (\d+-[a-z]+-[a-z]+)", screen)
    assert code is not None
    number, first, second = code.group(1).split("-")
    wrong = f"{number}-{first}-{'zulu' if second != 'zulu' else 'aardvark'}"
    peer = HostilePeer.join(invite, code=wrong)
    peer.flush()
    with pytest.raises(KoiKoiError, match="the code does not match"):
        while peer.pump_once():
            pass
    peer.close()
    screen = host.wait_for("the code does not match")
    said = " ".join(screen.split())
    # the whole advice, folded, in view (it was cut at the 80th column, or below the page)
    assert re.search(r"the code does not match: check it with the host \(each wrong code", said), (
        screen
    )
    assert all(len(line) <= 80 for line in screen.splitlines())
    # the docs address on one row, whole (it wrapped inside a word at 80 columns)
    assert "https://github.com/p2pkoikoi/p2pkoikoi/blob/main/docs/network.md" in screen
    host.send("q")
    host.finish()


def test_failed_practice_starts_leave_no_record(tmp_path: Path, terms) -> None:
    import os
    import subprocess
    import sys

    from pty_terminal import ROOT

    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        HOME=str(tmp_path),
        P2PKOIKOI_CONFIG_DIR=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    for argv in (["--opponent", "godlike"], ["--opponent", "cmd:/no/such"], []):
        done = subprocess.run(
            [sys.executable, "-m", "p2pkoikoi", "practice", *argv],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    for argv in (["--opponent", "godlike"], ["--opponent", "cmd:/no/such"]):  # on a terminal
        t = spawn(terms, tmp_path, "practice", *argv)
        assert t.finish() != 0
    records = tmp_path / "data" / "p2pkoikoi" / "records"
    assert not records.exists() or not list(records.iterdir())
    history = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "history"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "unfinished" not in history.stdout + history.stderr


# ---------------------------------------------------------------------- the start screen
def _netns_reason() -> str | None:
    import os
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs root, unshare and ip (a network namespace of its own)"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=30)
    return None if probe.returncode == 0 else "unshare -n is not allowed here"


class NetlessTerminal(Terminal):
    """The start screen in a network namespace of its own: it browses mDNS, and its
    queries must not reach this machine's networks."""

    def __init__(self, home: Path, *, columns: int = 80, rows: int = 24) -> None:
        import os
        import sys

        from pty_terminal import ROOT

        env = dict(os.environ)
        env.update(
            PYTHONPATH=str(ROOT),
            HOME=str(home),
            P2PKOIKOI_CONFIG_DIR=str(home / "config"),
            XDG_DATA_HOME=str(home / "data"),
            TERM="xterm",
            LANG="C.UTF-8",
            LC_ALL="C.UTF-8",
        )
        self.screen = pyte.Screen(columns, rows)
        self.screen.write_process_input = self._answer
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        self._held = b""
        self.argv = ["start screen"]
        self.child = pexpect.spawn(
            "unshare",
            ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", sys.executable,
             "-m", "p2pkoikoi"],
            env=env,
            dimensions=(rows, columns),
            cwd=str(home),
        )  # fmt: skip


pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")


def _start(terms: list[Terminal], home: Path, columns: int = 80) -> Terminal:
    reason = _netns_reason()
    if reason:
        pytest.skip(reason)
    home.mkdir(parents=True, exist_ok=True)
    t = NetlessTerminal(home, columns=columns)
    terms.append(t)
    t.wait_for("Quit")
    return t


@pytest.mark.parametrize(("key", "typed"), [("3", "7-crosso"), ("5", "some/record.koikoi")])
def test_the_start_screens_field_echoes_under_its_prompt(
    tmp_path: Path, terms, key: str, typed: str
) -> None:
    t = _start(terms, tmp_path)
    t.send(key)
    prompt = "The code or invite" if key == "3" else "Path of the record"
    t.wait_for(prompt)
    t.send(typed)
    screen = t.wait_for(typed)
    rows = screen.splitlines()
    at = next(i for i, r in enumerate(rows) if prompt in r)
    assert typed in rows[at + 1], screen  # on the row under the prompt, not at the foot
    if key == "3":  # Tab completes the code's words: the first from the odd list...
        t.send("\t")
        screen = t.wait_for("7-crossover-")
        assert "7-crossover-" in screen.splitlines()[at + 1]
        t.send("clo\t")  # ...the second from the even list
        t.wait_for("7-crossover-clockwork")
        t.send("\x158-a\t")  # ^U: a fresh line; "a" has many: they are listed below
        screen = t.wait_for(lambda s: "words)" in s or "aardvark" in s)
    t.send("\x1b")
    t.wait_for("Quit")
    t.send("q")
    assert t.finish() == 0


def test_the_menu_folds_between_words_at_60_columns(tmp_path: Path, terms) -> None:
    from p2pkoikoi.ui.start import MENU

    t = _start(terms, tmp_path, columns=60)
    screen = t.text()
    said = " ".join(screen.split())
    for _, label in MENU:
        assert label in said, screen  # whole: a word cut across two rows would not match
    t.send("2")  # the host form: name, rules, rounds, deal
    screen = t.wait_for("[ Start ]")
    for row in ("Your name", "Rules", "Rounds", "Deal"):
        assert row in screen
    t.send("q")
    t.send("q")
    assert t.finish() == 0


def test_the_table_exits_130_after_ctrl_c_and_0_after_q(tmp_path: Path, terms) -> None:
    seed = "ab" * 32
    t = spawn(terms, tmp_path / "c", "practice", "--seed", seed)
    t.wait_for("Your hand")
    t.send("\x03")
    t.wait_for("Leave now?")
    t.send("y")
    assert t.finish() == 130
    t = spawn(terms, tmp_path / "q", "practice", "--seed", seed)
    t.wait_for("Your hand")
    t.send("q")
    t.wait_for("Leave now?")
    t.send("y")
    assert t.finish() == 0


def test_your_own_turn_counts_down_when_a_limit_is_set(tmp_path: Path, terms) -> None:
    host = spawn(
        terms, tmp_path / "a", "host", "--bind", "127.0.0.1", "--port", "0", "--rounds", "1",
        *NO_HAND_YAKU,  # a dealt hand yaku would end the round before anyone plays
        "--turn-limit", "90", "--record", str(tmp_path / "a.koikoi"), "--quiet",
    )  # fmt: skip
    invite = _invite(host)
    join = spawn(
        terms, tmp_path / "b", "join", *invite.split(), "--record", str(tmp_path / "b.koikoi"),
        "--quiet",
    )  # fmt: skip
    join.wait_for("Play by these rules?")
    join.send("a")
    end = time.monotonic() + DEADLINE
    shown: list[str] = []
    while not shown:
        assert time.monotonic() < end, f"host:\n{host.text()}\n\njoiner:\n{join.text()}"
        for t in (host, join):
            t.pump(0.05)
            line = decision_line(t.text())
            if line is not None:
                shown.append(line)
    assert re.search(r" 1:[23]\d left$", shown[0]), shown  # 90 s: 1:30 and counting down


# ---------------------------------------------------------------------- practice
def test_practice_hint_undo_and_resume(tmp_path: Path, terms) -> None:
    import subprocess
    import sys

    from pty_terminal import play_until

    # no yaku of two cards (nor a dealt one): nothing can end the round in one turn
    argv = ("practice", "--opponent", "random", "--rounds", "1", "--set", "teshi=0",
            "--set", "kuttsuki=0", "--set", "hanami=0", "--set", "tsukimi=0")  # fmt: skip
    t = spawn(terms, tmp_path, *argv)
    t.wait_for("(←→ or 1-8)")
    t.send("h")  # what medium would play, and why, in one line
    screen = t.wait_for("Hint (medium): ")
    said = " ".join(screen.split()).split("Hint (medium): ")[1]
    assert said.startswith(("Play ", "Take ")) and ": " in said, said
    t.send(ENTER)  # play the card the hint selected (and the draw's choice, if any)
    play_until(t, lambda s: "(←→ or 1-7)" in s)  # our next turn: one card fewer
    t.send("z")
    screen = t.wait_for("Undo: your last turn")
    t.wait_for("(←→ or 1-8)")  # back to eight cards: the turn is taken back
    t.send("q")
    t.wait_for("The match is kept")
    t.send("y")
    assert t.finish() == 0
    out = t.raw.decode("utf-8", "replace")
    path = out.split("Play on with: p2pkoikoi practice --resume ")[1].split()[0]
    # the same match, later: where it was left, then to its end
    t = spawn(terms, tmp_path, "practice", "--resume", path)
    t.wait_for("Resumed: round 1")
    t.wait_for("(←→ or 1-8)")
    play_until(t, lambda s: "Round 1 of 1:" in s)
    t.send(ENTER)
    t.wait_for("p2pkoikoi verify ")
    t.send("q")
    assert t.finish() == 0
    ok = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "verify", path],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "HOME": str(tmp_path)},
    )
    assert ok.returncode == 0 and "verified" in ok.stdout, ok.stdout + ok.stderr
    assert not Path(path + ".resume").exists()  # a finished match leaves no resume file


def test_replay_folds_the_other_players_hand_at_80x24(tmp_path: Path, terms) -> None:
    from pty_terminal import play_until

    record = tmp_path / "m.koikoi"
    t = spawn(terms, tmp_path, "practice", "--opponent", "random", "--rounds", "1",
              "--record", str(record))  # fmt: skip
    play_until(t, lambda s: "Round 1 of 1:" in s)
    t.send(ENTER)
    t.wait_for("p2pkoikoi verify ")
    t.send("q")
    assert t.finish() == 0
    r = spawn(terms, tmp_path, "replay", str(record))
    screen = r.wait_for("'s hand:")  # the deal: the other player's eight cards
    rows = board(screen)
    at = next(i for i, row in enumerate(rows) if "'s hand:" in row)
    shown = " ".join(rows[at : at + 2])
    tiles = re.findall(r"\d{1,2}[A-Z][a-z]{2}\S", shown.split("'s hand:")[1])
    assert len(tiles) == 8, screen  # all of them: the row folds instead of stopping at 57
    r.send("q")
    assert r.finish() == 0
