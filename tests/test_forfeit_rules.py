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

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import crypto, encode_record
from p2pkoikoi.session.record import ForfeitRecord, Record
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
