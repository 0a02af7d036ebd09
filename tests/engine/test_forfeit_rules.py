"""Who forfeits at each step (issue 22, items 2 and 3), as ``verify`` reads a record.

The attack of item 2: the joiner receives the host's reveal (under the open deal:
every card), withholds its ``start`` and leaves, then writes its own record
claiming the *host* forfeited, signed by itself.  A record that holds the host's
reveal refutes that claim: the host did its part, and the one who owes the next
step, having seen the seed, is the joiner."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_peer import HostilePeer, start_host

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import crypto, encode_record, wire
from p2pkoikoi.session.events import AcceptRules, RulesProposed
from p2pkoikoi.session.records.record import ForfeitRecord, Record
from p2pkoikoi.session.session import Session
from p2pkoikoi.session.testing import det_key, drain, make_pair


def _joiner_after_the_reveal() -> tuple[Session, Session]:
    """Deliver frames until the joiner holds the host's reveal; its start never leaves."""
    host, joiner = make_pair(get_preset("online"), label="withheld-start")
    for _ in range(20):
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        if joiner.record().host_value is not None:
            return host, joiner
        host.receive_data(joiner.data_to_send())
        drain(host)
    raise AssertionError("no reveal")


def _forged(joiner: Session) -> Record:
    """The joiner's record without its own start signature, claiming the host's forfeit."""
    rec = joiner.record()
    assert rec.joiner is not None
    reason = "the host stopped after the joiner's value, before revealing its own"
    msg = crypto.forfeit_message(joiner.transcript_hash, 0, reason)
    sig = crypto.sign(det_key("joinerwithheld-start"), msg)
    return dataclasses.replace(
        rec,
        joiner=dataclasses.replace(rec.joiner, start_sig=None),
        forfeit=ForfeitRecord(0, reason, sig),
    )


def _verify(rec: Record, path: Path) -> subprocess.CompletedProcess[str]:
    path.write_bytes(encode_record(rec))
    return subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "verify", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_claimed_host_forfeit_is_refuted_by_the_hosts_reveal(tmp_path: Path) -> None:
    _, joiner = _joiner_after_the_reveal()
    proc = _verify(_forged(joiner), tmp_path / "forged.koikoi")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1, out  # on the old code: exit 3, "the host forfeits"
    assert out["first_failure"] == "forfeit"
    fail = next(c for c in out["checks"] if c["name"] == "forfeit")
    assert "it holds the host's reveal" in fail["detail"]


# ---------------------------------------------------------------------- real processes
WINDOW = "2"  # the host's --reconnect-window in these tests (seconds)
RULES_ARGS = ("--rounds", "12", "--timeout", "2")


def _verify_json(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "verify", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    out: dict[str, Any] = json.loads(proc.stdout)
    out["exit_code"] = proc.returncode
    return out


def test_a_joiner_that_sees_the_reveal_and_leaves_forfeits(tmp_path: Path) -> None:
    """Item 2: the joiner takes the reveal (under the open deal: every card), never
    sends its ``start`` and leaves.  On the old code the host's record said only
    "the joiner never signed this match"; now it holds the joiner's forfeit."""
    record = tmp_path / "host.koikoi"
    proc, invite, _ = start_host(tmp_path, record, *RULES_ARGS, "--reconnect-window", WINDOW)
    peer = HostilePeer.join(invite)
    try:
        peer.flush()
        while peer.session.record().host_value is None:
            data = peer.sock.recv(65536)
            assert data, "the host closed before its reveal"
            peer.session.receive_data(data)
            for ev in drain(peer.session):
                if isinstance(ev, RulesProposed):
                    peer.send_raw(peer.session.send(AcceptRules()))
            if peer.session.record().host_value is None:
                peer.flush()
        peer.sock.close()  # the start signature queued by the session never leaves
        out = proc.wait_exit()
        assert out.code == 1, out.stderr
        saved = json.loads(record.read_text())
        assert saved["forfeit"]["seat"] == 1, saved["forfeit"]
        assert saved["forfeit"]["reason"].startswith("the joiner stopped after the host's reveal")
        report = _verify_json(record)
        assert report["exit_code"] == 3 and report["ok"], report
        assert any(lack.startswith("the joiner forfeited") for lack in report["lacks"]), report
    finally:
        proc.kill()


@pytest.mark.parametrize("how", ["bye", "close"])
def test_leaving_mid_match_is_a_forfeit_after_the_reconnect_window(
    tmp_path: Path, how: str
) -> None:
    """Item 3: a joiner that says ``bye`` (or closes its socket) during play and does
    not come back within the reconnect window forfeits; on the old code the host's
    record said "the match did not finish"."""
    record = tmp_path / "host.koikoi"
    proc, invite, _ = start_host(tmp_path, record, *RULES_ARGS, "--reconnect-window", WINDOW)
    peer = HostilePeer.join(invite)
    try:
        peer.play_honestly_until(lambda p: p.session.seq >= 4)
        if how == "bye":
            peer.send_raw(peer.seal(wire.ByeMsg()))
        peer.sock.close()
        out = proc.wait_exit()
        assert out.code == 1, out.stderr
        assert "Mallory forfeits the match (left)" in out.error_line, out.error_line
        saved = json.loads(record.read_text())
        assert saved["forfeit"]["seat"] == 1 and saved["forfeit"]["reason"] == "left"
        report = _verify_json(record)
        assert report["exit_code"] == 3 and report["ok"], report
        check = next(c for c in report["checks"] if c["name"] == "forfeit")
        assert "by abandoning the match" in check["detail"], check
    finally:
        proc.kill()


def test_the_clock_of_the_player_to_act_runs_while_it_is_away(tmp_path: Path) -> None:
    """Item 3: the joiner leaves on its own turn.  The reconnect window (600 s) is
    far longer than the turn limit (3 s): the host ends the match as the joiner's
    forfeit by time once the limit and the grace pass, not after the window."""
    record = tmp_path / "host.koikoi"
    proc, invite, _ = start_host(
        tmp_path, record, *RULES_ARGS, "--turn-limit", "3", "--reconnect-window", "600"
    )
    peer = HostilePeer.join(invite, name="Mallory")
    try:
        peer.play_honestly_until(lambda p: p.session.seq >= 3)  # stops at our turn
        peer.sock.close()
        out = proc.wait_exit(60)  # the old code waited the whole window
        assert out.code == 1, out.stderr
        assert "forfeits by time" in out.error_line, out.error_line
        saved = json.loads(record.read_text())
        assert saved["forfeit"]["seat"] == 1 and saved["forfeit"]["reason"] == "time"
        assert _verify_json(record)["ok"]
    finally:
        proc.kill()
