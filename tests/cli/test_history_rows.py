"""``history`` leads somewhere (issue 25, point 5), through real ``p2pkoikoi`` processes:
numbered rows in the order the matches started, the record's file, how a match
ended, totals per identity counting verified records only, and ``replay N``,
``replay last``, ``verify N``, ``verify last``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Resign, SendAction, Session, encode_record, fingerprint
from p2pkoikoi.session.crypto import public_bytes
from p2pkoikoi.session.testing import SECRET, det_bytes, det_key, random_chooser, run_pair

ROOT = Path(__file__).resolve().parents[2]
RULES = get_preset("online").with_settings(rounds=1)


def network_record(label: str, joiner_name: str, *, resign: bool = False) -> bytes:
    """A finished network match: you ("me", the host) against the same joiner key
    under ``joiner_name``; with ``resign`` the joiner resigns at its first turn."""
    host = Session(
        "host",
        identity_key=det_key("history/host"),
        invite_secret=SECRET,
        name="me",
        entropy=det_bytes("entropy/host" + label),
        rules=RULES,
    )
    joiner = Session(
        "joiner",
        identity_key=det_key("history/joiner"),
        invite_secret=SECRET,
        name=joiner_name,
        entropy=det_bytes("entropy/joiner" + label),
        expected_rules=RULES,
    )
    if resign:
        run_pair(host, joiner)  # to the first move
        while host.match is not None and host.match.to_act != 1:
            joiner.receive_data(host.send(SendAction(random_chooser(1)(host.match))))
            run_pair(host, joiner)
        host.receive_data(joiner.send(Resign()))
    run_pair(host, joiner, random_chooser(len(label)))
    return encode_record(host.record())


def cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(home),
        P2PKOIKOI_CONFIG_DIR=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
    )
    return subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    config.mkdir()
    pem = det_key("history/host").private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    (config / "identity.key").write_bytes(pem)
    records = tmp_path / "data" / "p2pkoikoi" / "records"
    records.mkdir(parents=True)
    # written out of order on purpose: the listing orders them by when they started
    (records / "2026-11-30-120040-Robert.koikoi").write_bytes(b"")  # filled below
    (records / "2026-11-30-120000-Bob-match2.koikoi").write_bytes(network_record("m2", "Bob"))
    (records / "2026-11-30-120000-Bob.koikoi").write_bytes(network_record("m1", "Bob"))
    resigned = network_record("m3", "Robert", resign=True)
    (records / "2026-11-30-120030-Robert.koikoi").write_bytes(resigned)
    doc = json.loads(resigned)
    doc["result"]["scores"] = [99, 1]  # no longer what the moves give: FAILED
    (records / "2026-11-30-120040-Robert.koikoi").write_text(json.dumps(doc))
    return tmp_path


def joiner_fingerprint() -> str:
    return fingerprint(public_bytes(det_key("history/joiner")))


def test_history_numbers_rows_in_start_order_with_files_and_endings(home: Path) -> None:
    out = cli(home, "history")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rows = [i for i, line in enumerate(lines) if line[:3].strip().isdigit()]
    assert [lines[i].split()[0] for i in rows] == ["1", "2", "3", "4"]
    assert [lines[i + 1].split()[-1] for i in rows] == [
        "2026-11-30-120000-Bob.koikoi",
        "2026-11-30-120000-Bob-match2.koikoi",  # the rematch after its first match
        "2026-11-30-120030-Robert.koikoi",
        "2026-11-30-120040-Robert.koikoi",
    ]
    assert "won" in lines[rows[2] + 1] and "(they resigned), verified" in lines[rows[2] + 1]
    assert "FAILED: result (not counted)" in lines[rows[3] + 1]
    # one identity under its latest name; the FAILED record is not counted
    totals = [x for x in out.stdout.splitlines() if x.startswith("  Robert (")]
    assert len(totals) == 1 and joiner_fingerprint() in totals[0]
    assert totals[0].startswith("  Robert (") and "3 matches" in totals[0]
    assert "1 not counted" in totals[0]
    assert not any(x.startswith("  Bob (") for x in out.stdout.splitlines())
    assert "p2pkoikoi replay N" in out.stdout


def test_history_json_totals_by_identity_verified_only(home: Path) -> None:
    data = json.loads(cli(home, "history", "--json").stdout)
    assert [m["number"] for m in data["matches"]] == [1, 2, 3, 4]
    assert data["matches"][2]["ending"] == "they resigned"
    (total,) = data["totals"].values()
    assert total["opponent"] == "Robert" and total["fingerprint"] == joiner_fingerprint()
    assert total["matches"] == 3 and total["failed"] == 1
    assert total["won"] + total["lost"] + total["draw"] == 3


def test_verify_and_replay_take_a_row_number_or_last(home: Path) -> None:
    out = cli(home, "verify", "2", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["record"].endswith("Bob-match2.koikoi")
    out = cli(home, "verify", "last")
    assert out.returncode == 1 and "verification FAILED" in out.stdout
    out = cli(home, "verify", "5")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "no record number 5" in out.stderr and "1 to 4" in out.stderr
    out = cli(home, "verify", "1", "--dir", str(home / "nowhere"))
    assert out.returncode == 2 and "no match records in" in out.stderr


@pytest.mark.parametrize("which", ["1", "last"])
def test_replay_n_opens_that_record_on_the_table(home: Path, which: str) -> None:
    pytest.importorskip("pexpect")
    from pty_terminal import Terminal

    t = Terminal(["replay", which], home)
    try:
        screen = t.wait_for("The deal (0 of")
        assert ("does not verify" in screen) == (which == "last")
        t.send("q")
        assert t.finish() == 0
    finally:
        t.close()
