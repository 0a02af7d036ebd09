"""Two real ``p2pkoikoi`` processes over TCP on loopback, headless, to the end.

Each process is bounded by a timeout; the host's first line (the invite) is
awaited with ``select``, never with a sleep.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from procs import finish, lines, run_join, start_host, verify


def play(tmp_path: Path, bind: str) -> tuple[Path, Path, dict[str, Any], dict[str, Any]]:
    hrec, jrec = tmp_path / "host.koikoi", tmp_path / "joiner.koikoi"
    host, first = start_host(
        tmp_path, "--bind", bind, "--rounds", "2", "--record", str(hrec), "--turn-limit", "45"
    )
    joined = run_join(tmp_path, first["invite"], "--record", str(jrec))
    code, out, err = finish(host)
    assert joined.returncode == 0, joined.stderr
    assert code == 0, err
    h, j = lines(out), lines(joined.stdout)
    reach = first["reachability"]
    assert reach["internet"] is False  # bound to loopback: no port mapping tried
    assert reach["text"] == f"reachable from this machine only: it listens on {bind} (--bind)"
    assert h[0]["event"] == "connected" and h[-1]["event"] == "match_over"
    assert j[-1]["event"] == "match_over"
    # accepted without --expect-rules; the host's --turn-limit is part of the proposal
    assert [e["turn_limit"] for e in j if e["event"] == "rules_proposed"] == [45]
    assert any(e["event"] == "handshake" for e in h)
    assert h[-1]["final_hash"] == j[-1]["final_hash"]
    assert h[-1]["scores"] == j[-1]["scores"]
    assert h[-1]["record"] == str(hrec) and j[-1]["record"] == str(jrec)
    # the identities were created on first use, private
    key = tmp_path / "cfg-host" / "identity.key"
    assert key.exists() and (key.stat().st_mode & 0o777) == 0o600
    return hrec, jrec, h[-1], j[-1]


def test_headless_match_over_ipv4_and_records_verify(tmp_path: Path) -> None:
    hrec, jrec, _, _ = play(tmp_path, "127.0.0.1")
    for path in (hrec, jrec):
        result = verify(path)
        assert result.returncode == 0, result.stdout
        assert "verified" in result.stdout

    # one changed byte in an action, the reveal, a signature: verify says no (exit 1)
    original = json.loads(hrec.read_text())

    def flip(hex_text: str) -> str:
        return ("1" if hex_text[0] != "1" else "2") + hex_text[1:]

    tampers: dict[str, Callable[[dict[str, Any]], None]] = {
        "action": lambda r: r["actions"][3].update(state_hash=flip(r["actions"][3]["state_hash"])),
        "reveal": lambda r: r.update(host_value=flip(r["host_value"])),
        "signature": lambda r: r["actions"][2].update(sig=flip(r["actions"][2]["sig"])),
    }
    for name, tamper in tampers.items():
        record = json.loads(json.dumps(original))
        tamper(record)
        bad = tmp_path / f"tampered-{name}.koikoi"
        bad.write_text(json.dumps(record))
        result = verify(bad)
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        assert "FAILED" in result.stdout


def ipv6_loopback() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_headless_match_over_ipv6(tmp_path: Path) -> None:
    hrec, jrec, h, _ = play(tmp_path, "::1")
    assert verify(hrec).returncode == 0 and verify(jrec).returncode == 0


def test_rules_mismatch_fails_on_both_sides(tmp_path: Path) -> None:
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rules", "online")
    joined = run_join(tmp_path, first["invite"], "--expect-rules", "nintendo")
    code, _, err = finish(host)
    assert joined.returncode != 0 and code != 0
    for text, head in (
        # (both with the hidden deal, which people's matches play unless told otherwise)
        (joined.stderr, "the host plays online with 1 change, you expect nintendo with 1 change"),
        (err, "the joiner plays nintendo with 1 change, you propose online with 1 change"),
    ):
        msg = text.strip().splitlines()
        assert "Traceback" not in text and "'" not in "".join(msg[1:]), text  # no reprs
        assert "rules" in msg[0], msg
        assert msg[1].strip() == head, msg  # the presets first...
        assert "  koikoi_multiplier: " in text and "  scoring: " in text, msg  # ...one per line
        assert "all calls plus one" in text, msg


def test_bad_invite_and_refused_connection(tmp_path: Path) -> None:
    bad = run_join(tmp_path, "koi2-127.0.0.1_1-aaaaaaaaaaaaaaaaaaaaaaaaaa-zzzz")
    assert bad.returncode == 2 and "checksum" in bad.stderr
    # a port nobody listens on: bind one, learn its number, close it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from p2pkoikoi.session import encode_invite

    invite = encode_invite([("127.0.0.1", port)], bytes(16))
    refused = run_join(tmp_path, invite)
    assert refused.returncode == 1
    assert "cannot connect" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_default_record_files_are_named_after_the_peer(tmp_path: Path) -> None:
    """Without --record each side's file is DATE-TIME-PEER.koikoi (the peer's name is
    known only after the handshake: it used to be ``...-unknown.koikoi``)."""
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1")
    joined = run_join(tmp_path, first["invite"])
    code, out, err = finish(host)
    assert joined.returncode == 0 and code == 0, (joined.stderr, err)
    for who, peer, text in (("host", "Bob", out), ("joiner", "Alice", joined.stdout)):
        records = tmp_path / f"data-{who}" / "p2pkoikoi" / "records"
        names = [p.name for p in records.iterdir()]
        assert len(names) == 1 and names[0].endswith(f"-{peer}.koikoi"), names
        assert lines(text)[-1]["record"] == str(records / names[0])
