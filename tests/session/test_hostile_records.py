"""Hostile record files (issue 22, items 7, 8 and 9): whoever hands you a record
chose every byte of it.  ``verify``, ``history`` and ``replay`` run as real
processes on files an attacker wrote, and must answer in one line, exit 2 for
an unreadable file, print nothing the record can use to rewrite the terminal,
and never let unsigned fields (``evidence``, ``missing``) upgrade a record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session import Record, encode_record
from p2pkoikoi.session.events import Resign
from p2pkoikoi.session.records.record import Evidence
from p2pkoikoi.session.session import Session, State, WaitingFor
from p2pkoikoi.session.testing import drain, make_pair, random_chooser, run_pair

SPOOF = "verified: the shuffle was fair, every move legal, both players signed the result"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd or "/nonexistent"), "TERM": "dumb"},
    )


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    host, joiner = make_pair(PRESETS["online"], label="hostile-records")
    run_pair(host, joiner, random_chooser(4))
    obj: dict[str, Any] = json.loads(encode_record(host.record()))
    return obj


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _huge(good: dict[str, Any]) -> str:
    """The record with a 5000-digit turn limit (Python refuses to convert over 4300)."""
    text = json.dumps(dict(good, turn_limit=12345))
    return text.replace('"turn_limit": 12345', '"turn_limit": ' + "9" * 5000, 1)


def _one_line_exit_2(proc: subprocess.CompletedProcess[str], why: str) -> None:
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0], proc.stderr


# ----------------------------------------------------------------- item 7
def test_a_huge_integer_is_one_line_and_exit_2(good: dict[str, Any], tmp_path: Path) -> None:
    text = _huge(good)
    assert "9" * 5000 in text
    path = _write(tmp_path / "huge.koikoi", text)
    for cmd in ("verify", "replay"):
        _one_line_exit_2(cli(cmd, str(path)), "a number is too long")


def test_a_lone_surrogate_in_a_name_is_one_line_and_exit_2(
    good: dict[str, Any], tmp_path: Path
) -> None:
    bad = dict(good, host=dict(good["host"], name="Al\ud800ice"))
    path = _write(tmp_path / "surrogate.koikoi", json.dumps(bad))  # "\ud800" escaped: ASCII
    for cmd in ("verify", "replay"):
        _one_line_exit_2(cli(cmd, str(path)), "lone surrogate")


def test_a_lone_surrogate_anywhere_is_refused(good: dict[str, Any], tmp_path: Path) -> None:
    bad = dict(good, missing="\udc00", final_sigs=dict(good["final_sigs"], joiner=None))
    _one_line_exit_2(cli("verify", str(_write(tmp_path / "m.koikoi", json.dumps(bad)))), "lone")


def test_history_skips_and_names_the_unreadable_files(good: dict[str, Any], tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    _write(records / "2026-01-01-000000-Bob.koikoi", json.dumps(good))
    text = _huge(good)
    _write(records / "2026-01-02-000000-huge.koikoi", text)
    bad = dict(good, joiner=dict(good["joiner"], name="\udfff"))
    _write(records / "2026-01-03-000000-surrogate.koikoi", json.dumps(bad))
    proc = cli("history", "--dir", str(records), "--config-dir", str(tmp_path / "none"))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc
    assert "verified" in proc.stdout  # the good record is still listed
    for name, why in (("huge", "a number is too long"), ("surrogate", "lone surrogate")):
        line = next(x for x in proc.stdout.splitlines() if name + ".koikoi" in x)
        assert "not a readable record: " in line and why in line, proc.stdout
    assert "\\x0a" not in proc.stdout  # every line of the listing is a line of its own
    proc = cli("history", "--dir", str(records), "--config-dir", str(tmp_path / "n"), "--json")
    out = json.loads(proc.stdout)
    assert len(out["matches"]) == 1 and len(out["unreadable"]) == 2


# ----------------------------------------------------------------- item 8
def test_escapes_in_the_unsigned_missing_field_cannot_spoof_verify(
    good: dict[str, Any], tmp_path: Path
) -> None:
    """An incomplete record whose ``missing`` rewrites the terminal to say "verified"."""
    spoof = f"\x1b[2K\r\x1b[1A\x1b[2K\r{SPOOF}\n\x1b[8m"
    bad = dict(good, missing=spoof, final_sigs=dict(good["final_sigs"], joiner=None))
    proc = cli("verify", str(_write(tmp_path / "spoof.koikoi", json.dumps(bad))))
    assert proc.returncode == 3, proc
    assert "\x1b" not in proc.stdout and "\r" not in proc.stdout
    assert "\\x1b[2K\\x0d" in proc.stdout  # what was there can still be read
    assert not any(line.startswith("verified") for line in proc.stdout.splitlines())
    assert proc.stdout.splitlines()[-1].startswith("  - the joiner's final signature: ")


@pytest.mark.parametrize("name", ["\x1b[32mAlice", "Bob\u202e", "Eve\r", " Mallory"])
def test_a_name_that_would_not_pass_the_wire_is_refused_when_loaded(
    good: dict[str, Any], tmp_path: Path, name: str
) -> None:
    bad = dict(good, joiner=dict(good["joiner"], name=name))
    path = _write(tmp_path / "name.koikoi", json.dumps(bad))
    for cmd in ("verify", "replay"):
        _one_line_exit_2(cli(cmd, str(path)), "joiner.name must be 1..32 printable characters")


def test_history_shows_a_file_name_with_escapes_escaped(
    good: dict[str, Any], tmp_path: Path
) -> None:
    records = tmp_path / "records"
    records.mkdir()
    _write(records / "x\x1b[2K\rverified.koikoi", "{}")
    proc = cli("history", "--dir", str(records), "--config-dir", str(tmp_path / "none"))
    assert proc.returncode == 0 and "\x1b" not in proc.stdout and "\r" not in proc.stdout
    assert "x\\x1b[2K\\x0dverified.koikoi" in proc.stdout


# ----------------------------------------------------------------- item 9
def _first_frame(data: bytes) -> tuple[bytes, bytes]:
    """The first length-prefixed frame of ``data`` (protocol/README.md section 3), and the rest."""
    length = int.from_bytes(data[:4], "big")
    return data[: 4 + length], data[4 + length :]


def _hidden_resigned(rounds: int, resign_in: int, label: str) -> tuple[Session, Session]:
    """A hidden-deal match resigned on the first decision of deal ``resign_in`` by a
    program that then leaves without auditing that deal."""
    rules = PRESETS["online"].with_settings(deal="hidden", rounds=rounds)
    host, joiner = make_pair(rules, label=label)
    sides = (host, joiner)
    choose = random_chooser(7)
    pending = [host.data_to_send(), joiner.data_to_send()]
    resigned = False
    for _ in range(1_000_000):
        moved = False
        for s in (0, 1):
            if pending[s]:
                sides[1 - s].receive_data(pending[s])
                pending[s] = b""
                moved = True
        for s in (0, 1):
            sess = sides[s]
            drain(sess)
            pending[s] += sess.data_to_send()
            m = sess.match
            if (
                sess.state is State.PLAY
                and m is not None
                and sess.waiting_for is WaitingFor.LOCAL_ACTION
                and not sess.catching_up
                and not resigned
            ):
                if m.round >= resign_in:
                    # the resigner's program then leaves without its audit of the deal
                    # (an honest one audits after resigning: the record would be whole)
                    out = sess.send(Resign())
                    first, _audits = _first_frame(out)
                    sides[1 - s].receive_data(pending[s] + first)
                    drain(sides[1 - s])
                    return host, joiner
                else:
                    from p2pkoikoi.session.events import SendAction

                    pending[s] += sess.send(SendAction(choose(m)))
                moved = True
        if not moved and not any(pending):
            assert resigned and host.state is State.DONE, host.state
            return host, joiner
    raise AssertionError("did not settle")


def _verify_file(rec: Record, path: Path) -> subprocess.CompletedProcess[str]:
    path.write_bytes(encode_record(rec))
    return cli("verify", str(path))


def test_unsigned_evidence_does_not_upgrade_a_resigned_hidden_record(tmp_path: Path) -> None:
    """The resigner adds its own secrets of the resigned deal as "evidence": the
    unaudited deal then replays, and on the old code the record verified with exit
    0.  Evidence counts only for a record that ends in a proven cheat."""
    import dataclasses

    host, joiner = _hidden_resigned(1, 1, "evidence-upgrade")
    honest = _verify_file(host.record(), tmp_path / "honest.koikoi")
    assert honest.returncode == 3, honest.stdout
    for side in (host, joiner):
        h = side._hidden
        assert h is not None
        secrets = h.table.secrets.encode()
        forged = dataclasses.replace(side.record(), evidence=Evidence(side.our_seat, 1, 0, secrets))
        proc = _verify_file(forged, tmp_path / f"forged{side.our_seat}.koikoi")
        assert proc.returncode == 3, proc.stdout
        assert "skip evidence: " in proc.stdout
        assert "  - the last deal was not audited" in proc.stdout, proc.stdout


def test_the_exit_3_wording_counts_the_audited_deals() -> None:
    """Resigned in deal 2, after deal 1's audit: not "before any deal's audit".  (An
    honest program audits the deal it resigns in, issue 23; a record that both
    players finished without that audit still gets these words.)"""
    from p2pkoikoi.session.verify.hidden import unreplayed_lack as _unreplayed_lack

    assert "before any deal's audit" in _unreplayed_lack(0)
    second = _unreplayed_lack(1)
    assert "before any deal's audit" not in second
    assert "resigned in deal 2, before its audit (1 earlier deal audited)" in second
    assert "(2 earlier deals audited)" in _unreplayed_lack(2)


# ----------------------------------------------------------------- the spec's gaps
def test_a_protocol_1_record_gets_a_one_line_verdict(good: dict[str, Any], tmp_path: Path) -> None:
    for changed in ({"version": 1}, {"protocol": 1}):
        path = _write(tmp_path / "v1.koikoi", json.dumps(dict(good, **changed)))
        _one_line_exit_2(
            cli("verify", str(path)),
            "this record is from protocol version 1 (p2pkoikoi 0.1.x), whose signatures, seed"
            " and moves this release cannot check: verify it with p2pkoikoi 0.1",
        )


@pytest.mark.parametrize("field", ["turn_limit", "forfeit", "missing", "commit_sig"])
def test_the_schema_requires_what_every_writer_writes(good: dict[str, Any], field: str) -> None:
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "protocol" / "record.schema.json").read_text())
    jsonschema.validate(good, schema)
    without = {k: v for k, v in good.items() if k != field}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(without, schema)
