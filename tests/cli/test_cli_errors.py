"""Bad input at the command line: one line on stderr, prefixed ``p2pkoikoi:``, and
the right exit status; never a traceback, a hang or a wait that ends in a forfeit.

Each case here was found by a QA pass as a new user would meet the program.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from p2pkoikoi.cli import main
from p2pkoikoi.engine import get_preset
from p2pkoikoi.session.codes.invite import encode_invite
from p2pkoikoi.session.records.writer import encode_record
from p2pkoikoi.session.testing import SECRET, det_key, make_pair, run_pair


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """``main(argv)``'s status and stderr, checked to be one ``p2pkoikoi:`` line."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert err.startswith("p2pkoikoi: "), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return code, err


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("P2PKOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def test_unrecognized_argument_points_to_the_commands_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # before: "(see p2pkoikoi --help)", the top-level help, which does not list rules' options
    code, err = run(capsys, "rules", "online", "nintendo")
    assert code == 2
    assert err == "p2pkoikoi: unrecognized arguments: nintendo (see p2pkoikoi rules --help)\n"


# ------------------------------------------------------------ external engines
@pytest.mark.parametrize(
    "spec, what",
    [
        ("cmd:/nonexistent/engine-binary", "not found"),
        ("cmd:no-such-engine-program-anywhere --flag", "not found"),
        ("cmd:/etc/passwd", "is not executable"),
    ],
)
def test_selfplay_engine_program_missing_is_bad_input(
    capsys: pytest.CaptureFixture[str], spec: str, what: str
) -> None:
    # before: every match forfeited and selfplay exited 0
    code, err = run(capsys, "selfplay", "--bots", f"{spec},easy", "--games", "1", "--rounds", "1")
    assert code == 2
    assert what in err and "engine program" in err


def test_headless_host_engine_program_missing_fails_before_listening(
    capsys: pytest.CaptureFixture[str], dirs: Path
) -> None:
    # before: the host listened, waited for a joiner, and only then forfeited
    code, err = run(
        capsys,
        *("host", "--headless", "--port", "0", "--bind", "127.0.0.1"),
        *("--bot", "cmd:/nonexistent/engine-binary"),
    )
    assert code == 2 and "not found" in err
    assert capsys.readouterr().out == ""  # no "listening" line


# ------------------------------------------------------------ record paths
@pytest.mark.parametrize("command", ["host", "join"])
@pytest.mark.parametrize(
    "record, what",
    [("/proc/p2pkoikoi-no-such/x.koikoi", "cannot write the record"), ("DIR", "is a directory")],
)
def test_unwritable_record_fails_before_the_network(
    capsys: pytest.CaptureFixture[str], dirs: Path, command: str, record: str, what: str
) -> None:
    # before: the host listened and dropped every joiner ("cannot write the record"
    # as a warning) forever; the joiner saw "the connection ended early"
    record = str(dirs) if record == "DIR" else record
    where = (
        ["--port", "0", "--bind", "127.0.0.1"]
        if command == "host"
        else [encode_invite([("127.0.0.1", 1)], bytes(16))]
    )
    code, err = run(capsys, command, *where, "--headless", "--record", record)
    assert code == 2 and what in err
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("command", ["host", "join"])
def test_existing_record_is_not_overwritten(
    capsys: pytest.CaptureFixture[str], dirs: Path, command: str
) -> None:
    # before: an earlier match's record (or any file) was replaced by the new match
    record = dirs / "earlier.koikoi"
    record.write_text("an earlier match")
    where = (
        ["--port", "0", "--bind", "127.0.0.1"]
        if command == "host"
        else [encode_invite([("127.0.0.1", 1)], bytes(16))]
    )
    code, err = run(capsys, command, *where, "--headless", "--record", str(record))
    assert code == 2 and "already exists" in err
    assert record.read_text() == "an earlier match"


def test_unwritable_default_records_dir(
    capsys: pytest.CaptureFixture[str], dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "/proc/p2pkoikoi-no-such")
    code, err = run(capsys, "host", "--headless", "--port", "0", "--bind", "127.0.0.1")
    assert code == 2 and "cannot write records in /proc/p2pkoikoi-no-such" in err


@pytest.mark.parametrize("which", ["missing", "dir"])
def test_resume_unreadable_record(
    capsys: pytest.CaptureFixture[str], dirs: Path, which: str
) -> None:
    # before: "p2pkoikoi: No such file or directory: PATH" with status 1
    path = dirs / "nothing.koikoi" if which == "missing" else dirs
    code, err = run(capsys, "resume", str(path), "--headless")
    assert code == 2 and err.startswith(f"p2pkoikoi: cannot read {path}: ")


@pytest.mark.parametrize("command", ["verify", "resume"])
def test_endless_record_file_is_refused_not_read_into_memory(
    capsys: pytest.CaptureFixture[str], dirs: Path, command: str
) -> None:
    # before: f.read() of /dev/zero until MemoryError (a traceback), or swapping
    code, err = run(capsys, command, "/dev/zero")
    assert code == 2 and "larger than" in err


# ------------------------------------------------------------ invites
@pytest.mark.parametrize(
    "invite",
    [
        "koi2-\u00fcn\u00ef_1-5rrduldiaemrz6nb3oxgh3z4ia-xkpv",  # a typed accent
        "koi2-\udcff_1-5rrd-xkpv",  # a byte that is not UTF-8, as Python passes it on
        "koi2-127.0.0.1_\u0661-5rrduldiaemrz6nb3oxgh3z4ia-xkpv",  # an Arabic-Indic digit
    ],
)
def test_non_ascii_invite_is_bad_input(
    capsys: pytest.CaptureFixture[str], dirs: Path, invite: str
) -> None:
    # before: UnicodeEncodeError traceback from the checksum, exit 1
    code, err = run(capsys, "join", invite, "--headless")
    assert code == 2 and "cannot appear in an invite" in err


def _unfinished_host_record(dirs: Path, **sidecar: object) -> Path:
    """A match that has started but has no moves yet, as the host left it, with
    its resume file and the host's identity in ``$P2PKOIKOI_CONFIG_DIR``."""
    host, joiner = make_pair(get_preset("online").with_settings(rounds=1))
    run_pair(host, joiner)
    assert host.match is not None and not host.record().is_complete
    path = dirs / "host.koikoi"
    path.write_bytes(encode_record(host.record()))
    body = {"format": "p2pkoikoi-resume", "version": 1, "role": "host"}
    body.update(invite=encode_invite([("127.0.0.1", 1)], SECRET), port=0, bind="127.0.0.1")
    assert host.resume_secret is not None
    body.update(resume_secret=host.resume_secret.hex())
    body.update(sidecar)
    (dirs / "host.koikoi.resume").write_text(json.dumps(body))
    config = dirs / "config"
    config.mkdir(exist_ok=True)
    pem = det_key("host").private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (config / "identity.key").write_bytes(pem)
    (config / "identity.key").chmod(0o600)
    return path


def test_resumed_host_gives_up_when_the_window_ends(
    capsys: pytest.CaptureFixture[str], dirs: Path
) -> None:
    # before: it waited the window *and* the 30 s handshake timeout for a writer
    # task that never ran, since no connection had come back
    path = _unfinished_host_record(dirs)
    start = time.monotonic()
    code, err = run(capsys, "resume", str(path), "--headless", "--reconnect-window", "0.2")
    assert code == 1 and "did not come back within 0.2s" in err
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("port", ["abc", 99999, -5, [1], 1.5, True])
def test_resume_file_with_a_bad_port(
    capsys: pytest.CaptureFixture[str], dirs: Path, port: object
) -> None:
    # before: a ValueError or TypeError traceback, or listening on a wrapped port
    path = _unfinished_host_record(dirs, port=port)
    code, err = run(capsys, "resume", str(path), "--headless", "--reconnect-window", "0.2")
    assert code == 2 and "port must be a whole number 0..65535" in err


# ------------------------------------------------------------ connecting
def test_join_closed_port_says_connection_refused(
    capsys: pytest.CaptureFixture[str], dirs: Path
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, err = run(capsys, "join", encode_invite([("127.0.0.1", port)], bytes(16)), "--headless")
    assert code == 1
    # before: "... all attempts to connect to 127.0.0.1:PORT failed"
    assert err == f"p2pkoikoi: cannot connect to 127.0.0.1:{port}: Connection refused\n"


@pytest.mark.parametrize("bind", ["10.99.99.99", "no-such-host.invalid"])
def test_bind_to_an_address_not_here_is_bad_input(
    capsys: pytest.CaptureFixture[str], dirs: Path, bind: str
) -> None:
    # before: exit status 1, as for a busy port
    code, err = run(capsys, "host", "--headless", "--port", "0", "--bind", bind)
    assert code == 2 and err.startswith(f"p2pkoikoi: cannot listen on {bind} port 0: ")


def test_port_in_use_is_one_line_status_1(capsys: pytest.CaptureFixture[str], dirs: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, err = run(capsys, "host", "--headless", "--port", str(port), "--bind", "127.0.0.1")
    assert code == 1 and "Address already in use" in err


# ------------------------------------------------------------ output encoding
def test_ascii_only_output_does_not_crash() -> None:
    # before: UnicodeEncodeError traceback on "Gokō (五光, ...)" in an ASCII locale
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "score", "1b", "3b", "8b", "11b", "12b"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Gok\\u014d" in proc.stdout and proc.stderr == ""


# ------------------------------------------------------------ Ctrl-C
def test_sigint_while_host_waits_is_one_line(dirs: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "p2pkoikoi", "host", "--headless", "--port", "0"]
        + ["--bind", "127.0.0.1", "--record", str(dirs / "host.koikoi")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job inherits SIGINT ignored; a person's terminal does not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        assert '"listening"' in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err == "p2pkoikoi: interrupted\n"


@pytest.mark.parametrize("limit", ["-1", "86401"])
def test_turn_limit_out_of_range_is_bad_input(
    capsys: pytest.CaptureFixture[str], dirs: Path, limit: str
) -> None:
    code, err = run(capsys, "host", "--headless", "--port", "0", "--turn-limit", limit)
    assert code == 2 and f"--turn-limit {limit} is outside 0..86400 seconds" in err, err
