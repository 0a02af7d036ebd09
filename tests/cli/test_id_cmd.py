"""``p2pkoikoi id``: the user's own fingerprint, as the other table shows it."""

from __future__ import annotations

import json
from pathlib import Path

from procs import run_cli

from p2pkoikoi.session.crypto import fingerprint, public_bytes
from p2pkoikoi.transport.store.identity import load_or_create_identity, spoken_fingerprint

run = run_cli


def test_id_shows_the_fingerprint_peers_see(tmp_path: Path) -> None:
    r = run("id", "--config-dir", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    key = load_or_create_identity(tmp_path)  # created by the command, 0600
    assert out["fingerprint"] == fingerprint(public_bytes(key))
    assert out["spoken"] == spoken_fingerprint(out["fingerprint"])
    text = run("id", "--config-dir", str(tmp_path))
    assert text.returncode == 0
    assert f"fingerprint  {out['fingerprint']}" in text.stdout.splitlines()


def test_spoken_fingerprint_reads_every_character() -> None:
    assert spoken_fingerprint("ab27-zz34") == "alfa bravo two seven / zulu zulu three four"


def test_id_with_a_readable_key_is_one_line_exit_2(tmp_path: Path) -> None:
    load_or_create_identity(tmp_path)
    (tmp_path / "identity.key").chmod(0o644)
    r = run("id", "--config-dir", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "chmod 600" in r.stderr
    assert "Traceback" not in r.stderr
