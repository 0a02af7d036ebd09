"""``config.toml`` beside the identity (issue 25): defaults for name, rules, rounds and
deal, overridden by options; a mistake in it is one line naming the file and the key.
Real ``p2pkoikoi`` processes (headless host and joiner over loopback)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from procs import LIMIT, cli, env_for, finish, lines

from p2pkoikoi.cli.config_file import MAX_NAME, load_config
from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import wire


def write_config(tmp_path: Path, who: str, text: str) -> Path:
    directory = tmp_path / f"cfg-{who}"
    directory.mkdir(exist_ok=True)
    path = directory / "config.toml"
    path.write_text(text)
    return path


def host_and_join(
    tmp_path: Path, *host_args: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    host = subprocess.Popen(
        cli("host", "--headless", "--bind", "127.0.0.1", "--port", "0", *host_args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env_for(tmp_path, "host"),
    )
    assert host.stdout is not None
    first = host.stdout.readline()
    assert first, host.communicate(timeout=LIMIT)[1]
    invite = json.loads(first)["invite"]
    joined = subprocess.run(
        cli("join", invite, "--headless"),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "joiner"),
    )
    code, out, err = finish(host)
    assert code == 0 and joined.returncode == 0, err + joined.stderr
    return lines(first + out), lines(joined.stdout)


def test_the_config_gives_name_rules_rounds_and_deal(tmp_path: Path) -> None:
    write_config(
        tmp_path, "host", 'name = "Alice"\nrules = "nintendo"\nrounds = 1\ndeal = "hidden"\n'
    )
    write_config(tmp_path, "joiner", 'name = "Bob"\n')
    h, j = host_and_join(tmp_path)
    (proposed,) = [e for e in j if e["event"] == "rules_proposed"]
    assert proposed["peer_name"] == "Alice"
    assert proposed["rules"]["rounds"] == 1 and proposed["rules"]["deal"] == "hidden"
    assert proposed["rules"]["scoring"] == get_preset("nintendo").to_dict()["scoring"]
    assert [e["peer_name"] for e in h if e["event"] == "handshake"] == ["Bob"]


def test_options_win_over_the_config(tmp_path: Path) -> None:
    write_config(tmp_path, "host", 'name = "Alice"\nrules = "nintendo"\nrounds = 3\n')
    h, j = host_and_join(tmp_path, "--name", "Carol", "--rounds", "1", "--rules", "online")
    (proposed,) = [e for e in j if e["event"] == "rules_proposed"]
    assert proposed["peer_name"] == "Carol" and proposed["rules"]["rounds"] == 1


@pytest.mark.parametrize(
    "text,message",
    [
        ("rounds = 100\n", "rounds must be a whole number from 1 to 99, not 100"),
        ('rounds = "6"\n', "rounds must be a whole number from 1 to 99, not '6'"),
        ('nmae = "Alice"\n', "unknown key 'nmae'"),
        ('rules = "nope"\n', "rules must be one of the presets"),
        ('deal = "secret"\n', 'deal must be "open" or "hidden", not \'secret\''),
        (f'name = "{"x" * 40}"\n', "name must be a string of 1..32 printable characters"),
        ("name = \n", "not valid TOML: Invalid value (at line 1, column 8)"),
        ("[network]\nstunn = 1\n", "unknown key 'network.stunn'"),
    ],
)
@pytest.mark.parametrize("command", ["host", "join", "practice"])
def test_a_bad_config_is_one_line_naming_file_and_key(
    tmp_path: Path, text: str, message: str, command: str
) -> None:
    path = write_config(tmp_path, "host", text)
    argv = {
        "host": ["host", "--headless", "--bind", "127.0.0.1", "--port", "0"],
        "join": ["join", "7-crossover-clockwork", "--headless"],
        "practice": ["practice"],
    }[command]
    proc = subprocess.run(
        cli(*argv),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "host"),
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"p2pkoikoi: {path}: {message}" + proc.stderr.split(message, 1)[1]
    assert proc.stderr.count("\n") == 1


def test_no_config_file_is_no_defaults(tmp_path: Path) -> None:
    config = load_config(str(tmp_path))
    assert config.path is None and config.name is None and config.rounds is None
    assert MAX_NAME == wire.MAX_NAME
