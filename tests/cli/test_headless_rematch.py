"""Two real headless ``p2pkoikoi`` processes on loopback: a match, then a rematch on the
same connection (``--rematch 1``); each match has its own record, and all verify."""

from __future__ import annotations

import json
from pathlib import Path

from procs import finish, lines, run_join, start_host, verify


def test_headless_match_and_rematch_records_verify(tmp_path: Path) -> None:
    hrec, jrec = tmp_path / "host.koikoi", tmp_path / "joiner.koikoi"
    host, first = start_host(
        tmp_path, "--bind", "127.0.0.1", "--rounds", "1", "--record", str(hrec), "--rematch", "1"
    )
    joined = run_join(tmp_path, first["invite"], "--record", str(jrec), "--rematch", "1")
    code, out, err = finish(host)
    assert joined.returncode == 0, joined.stderr
    assert code == 0, err
    h, j = lines(out), lines(joined.stdout)
    for events in (h, j):
        overs = [e for e in events if e["event"] == "match_over"]
        assert len(overs) == 2
        assert [e["match"] for e in events if e["event"] == "rematch"] == [2]
        assert sum(e["event"] == "handshake" for e in events) == 1  # one connection
    h_over = [e for e in h if e["event"] == "match_over"]
    j_over = [e for e in j if e["event"] == "match_over"]
    assert h_over[0]["record"] == str(hrec) and j_over[0]["record"] == str(jrec)
    h2, j2 = Path(h_over[1]["record"]), Path(j_over[1]["record"])
    assert h2 == tmp_path / "host-match2.koikoi" and j2 == tmp_path / "joiner-match2.koikoi"
    for a, b in ((h_over[0], j_over[0]), (h_over[1], j_over[1])):
        assert a["final_hash"] == b["final_hash"] and a["scores"] == b["scores"]
    assert h_over[0]["transcript_hash"] != h_over[1]["transcript_hash"]
    for path in (hrec, jrec, h2, j2):
        result = verify(path)
        assert result.returncode == 0, (path, result.stdout)
        assert "verified" in result.stdout
    second = json.loads(h2.read_text())
    assert second["match"] == 2 and second["previous"] == h_over[0]["transcript_hash"]
    assert second["session_id"] == json.loads(hrec.read_text())["session_id"]
    assert not list(tmp_path.glob("*.resume"))  # both matches ended: no resume secrets left
