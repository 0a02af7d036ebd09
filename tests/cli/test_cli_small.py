"""Small command-line defects of issue 25 (point 10), each through real ``p2pkoikoi``
processes: ``verify --json`` on a bad file, ``practice`` without a terminal,
``id --config-dir`` with a typo, and a deliberate decline on the start screen."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def p2p(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    env.pop("P2PKOIKOI_CONFIG_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("content", [b"not json", b'{"format": "p2pkoikoi-record"}', None])
def test_verify_json_on_a_bad_file_prints_a_json_error(
    tmp_path: Path, content: bytes | None
) -> None:
    path = tmp_path / "bad.koikoi"
    if content is not None:
        path.write_bytes(content)
    proc = p2p(tmp_path, "verify", "--json", str(path))
    assert proc.returncode == 2
    out = json.loads(proc.stdout)  # JSON, not a plain line
    assert out["ok"] is False and out["exit_status"] == 2 and out["record"] == str(path)
    assert out["error"] and proc.stderr.count("\n") == 1


def test_practice_without_a_terminal_does_not_advise_headless_it_rejects(
    tmp_path: Path,
) -> None:
    proc = p2p(tmp_path, "practice")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "practice has no --headless" in proc.stderr
    assert "p2pkoikoi selfplay" in proc.stderr
    # and the advice it does not give would indeed be refused
    refused = p2p(tmp_path, "practice", "--headless")
    assert refused.returncode == 2 and "unrecognized arguments: --headless" in refused.stderr


def test_id_refuses_a_config_dir_that_does_not_exist(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    proc = p2p(tmp_path, "id", "--config-dir", str(typo))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert f"no such directory: {typo}" in proc.stderr and "id --new" in proc.stderr
    assert not typo.exists()  # no identity made by a typo
    made = p2p(tmp_path, "id", "--config-dir", str(typo), "--new", "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["created"] is True and (typo / "identity.key").exists()
    again = p2p(tmp_path, "id", "--config-dir", str(typo), "--new")
    assert again.returncode == 2 and "never replaces one" in again.stderr
    shown = p2p(tmp_path, "id", "--config-dir", str(typo), "--json")
    assert json.loads(shown.stdout)["fingerprint"] == json.loads(made.stdout)["fingerprint"]


def test_id_makes_the_default_identity_on_first_use(tmp_path: Path) -> None:
    proc = p2p(tmp_path, "id")
    assert proc.returncode == 0, proc.stderr
    assert "A new identity was created" in proc.stdout
    assert (tmp_path / "xdg-config" / "p2pkoikoi" / "identity.key").exists()
    assert "A new identity" not in p2p(tmp_path, "id").stdout


def _netns_reason() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs root, unshare and ip (a network namespace of its own)"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=30)
    return None if probe.returncode == 0 else "cannot make a network namespace here"


def test_declining_the_rules_from_the_start_screen_is_a_decline_not_a_failure(
    tmp_path: Path,
) -> None:
    """The start screen joins a headless host; its person presses d (Decline).  Both
    run in a network namespace of their own (the start screen looks for matches on
    the LAN by multicast: that must reach no real network)."""
    reason = _netns_reason()
    if reason:
        pytest.skip(reason)
    pytest.importorskip("pexpect")
    from pty_terminal import Terminal

    host_out = tmp_path / "host.jsonl"
    host = (
        f"{sys.executable} -m p2pkoikoi host --headless --bot random --bind 127.0.0.1 "
        f"--port 0 --name Alice --config-dir {tmp_path / 'host-cfg'} "
        f"--record {tmp_path / 'host.koikoi'} "
        f"> {host_out} 2>&1 &"
    )
    script = f'ip link set lo up && {host} exec "$@"'
    t = Terminal([], tmp_path, prefix=["unshare", "-n", "sh", "-c", script, "sh"])
    try:
        t.wait_for("Join a match")
        invite = ""
        while not invite:  # the host's first line: its invite
            for line in host_out.read_text().splitlines():
                event = json.loads(line)
                if event.get("event") == "listening":
                    invite = event["invite"]
            if not t.pump(0.2):
                raise AssertionError(f"the start screen exited: {t.text()}")
        t.send("3")
        t.wait_for(lambda s: "invite" in s.lower())
        t.send(invite + "\r")
        t.wait_for("Play by these rules?")
        t.send("d")
        screen = t.wait_for("No match was played")
        assert "you declined the host's rules" in screen
        assert "That did not work" not in screen
        t.send("\x1b")
        t.wait_for("Join a match")
        t.send("q")
        assert t.finish() == 0
    finally:
        t.close()
