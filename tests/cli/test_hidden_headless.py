"""Hidden-deal matches between two real ``p2pkoikoi`` processes over loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from procs import finish, lines, run_join, start_host, verify


@pytest.mark.parametrize("preset", ["online", "rulebook", "vanikar"])
def test_a_hidden_match_over_loopback_and_both_records_verify(tmp_path: Path, preset: str) -> None:
    hrec, jrec = tmp_path / "host.koikoi", tmp_path / "joiner.koikoi"
    host, first = start_host(
        tmp_path,
        "--bind",
        "127.0.0.1",
        "--rules",
        preset,
        "--set",
        "deal=hidden",
        "--rounds",
        "2",
        "--record",
        str(hrec),
    )
    joined = run_join(tmp_path, first["invite"], "--record", str(jrec))
    code, out, err = finish(host)
    assert joined.returncode == 0, joined.stderr
    assert code == 0, err
    h, j = lines(out), lines(joined.stdout)
    assert h[-1]["event"] == "match_over" and j[-1]["event"] == "match_over"
    assert h[-1]["final_hash"] == j[-1]["final_hash"]
    proposed = next(e for e in j if e["event"] == "rules_proposed")
    assert proposed["rules"]["deal"] == "hidden"
    for path in (hrec, jrec):
        result = verify(path)
        assert result.returncode == 0, result.stdout
        assert "hidden deal" in result.stdout and "verified: a hidden deal" in result.stdout
    # the shareable record holds no deck secret before an audit: the hidden secret is not
    # in it at all (it lives in memory and, for resuming, only in the .resume file)
    text = hrec.read_text()
    assert '"kind": "audit"' in text


@pytest.mark.parametrize("resigned", [False, True], ids=["played-out", "resigned"])
def test_a_12_round_hidden_match_verifies_complete_on_both_sides(
    tmp_path: Path, resigned: bool
) -> None:
    """Twelve rounds of the hidden deal between two processes; each record verifies with
    exit status 0 (complete), also when a player resigns mid-deal: the deal in play is
    audited after the resignation.  The joiner's engine for the resigned match is a
    ``cmd:`` engine that exits at once, so its program resigns on its behalf at its first
    decision (``forfeit`` event)."""
    import sys

    hrec, jrec = tmp_path / "host.koikoi", tmp_path / "joiner.koikoi"
    host, first = start_host(
        tmp_path, "--bind", "127.0.0.1", "--set", "deal=hidden", "--rounds", "12",
        "--set", "knockout=false", "--record", str(hrec),
    )  # fmt: skip
    bot = ("--bot", f"cmd:{sys.executable} -c pass") if resigned else ()
    joined = run_join(tmp_path, first["invite"], "--record", str(jrec), *bot)
    code, out, err = finish(host)
    assert joined.returncode == 0, joined.stderr
    assert code == 0, err
    h, j = lines(out), lines(joined.stdout)
    assert h[-1]["event"] == "match_over" and j[-1]["event"] == "match_over"
    assert h[-1]["final_hash"] == j[-1]["final_hash"]
    if resigned:
        assert any(e["event"] == "forfeit" for e in j), j[-5:]
    for path in (hrec, jrec):
        result = verify(path)
        assert result.returncode == 0, result.stdout
        assert "not audited" not in result.stdout


@pytest.mark.parametrize(
    ("extra", "deal"),
    [((), "hidden"), (("--set", "deal=open"), "open"), (("--set", "deal=hidden"), "hidden")],
)
def test_host_deals_what_it_is_told_and_the_handshake_shows_it(
    tmp_path: Path, extra: tuple[str, ...], deal: str
) -> None:
    """Between people the host deals hidden unless told ``--set deal=open`` (issue 23).
    The handshake shows which to both (the joiner's rules_proposed, the host's handshake)."""
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1", *extra)
    joined = run_join(tmp_path, first["invite"])
    code, out, err = finish(host)
    assert joined.returncode == 0 and code == 0, (joined.stderr, err)
    proposed = next(e for e in lines(joined.stdout) if e["event"] == "rules_proposed")
    assert proposed["rules"]["deal"] == deal
    handshake = next(e for e in lines(out) if e["event"] == "handshake")
    assert handshake["rules"]["deal"] == deal
