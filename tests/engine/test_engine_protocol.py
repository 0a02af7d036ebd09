"""The engine protocol: pure parsers, and cmd: bots that are slow, crash, lie or work."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from pathlib import Path

import pytest

from p2pkoikoi.bots import EngineBot, EngineFailure, close_bot, make_bot
from p2pkoikoi.bots.protocol import (
    PROTOCOL,
    ProtocolError,
    action_from_message,
    encode_action,
    encode_decide,
    encode_hello,
    encode_quit,
    encode_ready,
    parse_engine_message,
)
from p2pkoikoi.bots.tournament import play_game
from p2pkoikoi.engine import Action, PlayerView, RuleSet, get_preset, new_match

ROOT = Path(__file__).resolve().parents[2]
SIMPLE = (
    f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'simple_engine.py'))}"
)


def first_view() -> PlayerView:
    m = new_match(get_preset("online"), hashlib.sha256(b"proto").digest())
    assert m.to_act is not None
    return m.view(m.to_act)


def test_round_trip_of_every_message() -> None:
    view = first_view()
    hello = parse_engine_message(encode_hello(view.seat, view.rules))
    assert hello.type == "hello" and hello.data["protocol"] == PROTOCOL
    assert RuleSet.from_dict(hello.data["rules"]) == view.rules
    decide = parse_engine_message(encode_decide(view))
    assert decide.data["legal"] == [str(a) for a in view.legal_actions]
    assert decide.data["view"]["hand"] == view.hand.codes()
    assert parse_engine_message(encode_ready("x")).data["name"] == "x"
    assert parse_engine_message(encode_quit()).type == "quit"
    a = view.legal_actions[0]
    assert action_from_message(parse_engine_message(encode_action(a)), view) is a


@pytest.mark.parametrize(
    "line,fragment",
    [
        ("hello there", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"type": "dance"}', "unknown message type"),
        ('{"type": "action"}', "lacks a valid 'action'"),
        ('{"type": "ready", "name": 5}', "lacks a valid 'name'"),
        ("x" * 70000, "too long"),
    ],
)
def test_malformed_lines_are_named(line: str, fragment: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_engine_message(line)
    assert fragment in str(err.value)
    assert len(str(err.value)) < 200


def test_illegal_and_unreadable_actions() -> None:
    view = first_view()
    legal = {str(a) for a in view.legal_actions}
    illegal = next(
        str(Action.parse(f"play {c.code}")) for c in view.field if f"play {c.code}" not in legal
    )
    with pytest.raises(ProtocolError, match="illegal action"):
        action_from_message(parse_engine_message(encode_action(illegal)), view)
    with pytest.raises(ProtocolError, match="unreadable action"):
        action_from_message(parse_engine_message('{"type":"action","action":"fly 99z"}'), view)


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


HANDSHAKE = """import json, sys, time
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
line = sys.stdin.readline()
send({"type": "ready", "name": "test"})
"""


def test_slow_engine_times_out(tmp_path: Path) -> None:
    cmd = _script(tmp_path, "slow.py", HANDSHAKE + "sys.stdin.readline()\ntime.sleep(30)\n")
    bot = EngineBot(cmd, timeout=0.3)
    with pytest.raises(EngineFailure, match=r"sent nothing within 0.3 s"):
        bot.choose(first_view())
    assert bot._proc is None  # killed, not left behind


def test_crashing_engine(tmp_path: Path) -> None:
    cmd = _script(tmp_path, "crash.py", HANDSHAKE + "sys.stdin.readline()\nsys.exit(3)\n")
    with pytest.raises(EngineFailure, match="exited with status 3"):
        EngineBot(cmd, timeout=5).choose(first_view())


def test_garbage_engine_is_quoted(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        "garbage.py",
        HANDSHAKE + "sys.stdin.readline()\nprint('I like turtles ' * 20, flush=True)\n"
        "time.sleep(30)\n",
    )
    with pytest.raises(EngineFailure) as err:
        EngineBot(cmd, timeout=5).choose(first_view())
    msg = str(err.value)
    assert "not JSON" in msg and "I like turtles" in msg and len(msg) <= 300


def test_illegal_action_engine(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        "illegal.py",
        HANDSHAKE + "sys.stdin.readline()\nsend({'type': 'action', 'action': 'koikoi'})"
        "\ntime.sleep(30)\n",
    )
    with pytest.raises(EngineFailure, match="illegal action 'koikoi'"):
        EngineBot(cmd, timeout=5).choose(first_view())


def test_engine_that_does_not_start() -> None:
    with pytest.raises(EngineFailure, match="did not start"):
        EngineBot("/nonexistent/engine-binary", timeout=1).choose(first_view())


def test_failing_engine_forfeits_the_match(tmp_path: Path) -> None:
    cmd = _script(tmp_path, "crash.py", HANDSHAKE + "sys.stdin.readline()\nsys.exit(1)\n")
    r = play_game(
        f"cmd:{cmd}", "easy", get_preset("online").with_settings(rounds=1), 1, 0, engine_timeout=5
    )
    assert r.outcome == "loss" and r.forfeit.startswith("A ")
    r = play_game(
        "random", f"cmd:{cmd}", get_preset("online").with_settings(rounds=1), 1, 1, engine_timeout=5
    )
    assert r.outcome == "win" and r.forfeit.startswith("B ")


def test_simple_engine_plays_full_matches() -> None:
    rules = get_preset("nintendo").with_settings(rounds=2)
    for i in range(2):
        r = play_game(SIMPLE, "easy", rules, 5, i)
        assert not r.forfeit
        assert r.rounds >= 2 and r.decisions[0] > 5
    bot = make_bot(SIMPLE, 0)
    assert bot.choose(first_view()) in first_view().legal_actions
    assert bot.name == "simple-greedy"
    close_bot(bot)


def test_simple_engine_answers_the_documented_example() -> None:
    # The exchange shown in docs/engine-protocol.md, driven by hand.
    import subprocess

    view = first_view()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "simple_engine.py")],
        input=encode_hello(view.seat, view.rules) + encode_decide(view) + encode_quit(),
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert lines[0]["type"] == "ready"
    assert lines[1]["type"] == "action" and lines[1]["action"] in [
        str(a) for a in view.legal_actions
    ]
