"""The independent implementation (tests/indie, written from protocol/ alone) against ours.

Both directions as real processes over loopback TCP: a whole `rulebook` match
with `deal = hidden` (so the hand swap; and the open deal beside it) and
random legal moves; both sides must finish with the same result and our
side's record must verify (exit 0). Also a resignation each way and a join
with the short code.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
INDIE = ROOT / "tests" / "indie"
ROUNDS = 2
DEADLINE = 240


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "tests")
    return env


def _ours(*args: str) -> list[str]:
    return [sys.executable, "-m", "p2pkoikoi", *args]


def _indie(*args: str) -> list[str]:
    return [sys.executable, "-m", "indie", *args]


def _first_json(proc: subprocess.Popen[str], key: str) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.strip()
        if line.startswith("{"):
            ev: dict[str, Any] = json.loads(line)
            if key in ev:
                return ev
    raise AssertionError(f"the process ended without printing {key!r}")


def _last_json(out: str, event: str) -> dict[str, Any]:
    evs: list[dict[str, Any]] = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    found = [e for e in evs if e.get("event") == event]
    assert found, f"no {event!r} event in:\n{out[-2000:]}"
    return found[-1]


def _verify(record: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _ours("verify", str(record)), capture_output=True, text=True, timeout=DEADLINE
    )


def _common(tmp: Path) -> list[str]:
    return [
        "--no-dht",
        "--no-stun",
        "--config-dir",
        str(tmp / "cfg"),
        "--record",
        str(tmp / "rec.json"),
    ]


@pytest.mark.parametrize("deal", ["hidden", "open"])
def test_indie_joins_our_host(tmp_path: Path, deal: str) -> None:
    _indie_joins(tmp_path, [], deal=deal)


def test_indie_resigns_against_our_host(tmp_path: Path) -> None:
    """A resignation under the hidden deal: then the audits and `over`; our record still verifies."""
    theirs = _indie_joins(tmp_path, ["--resign-at", "3"])
    assert theirs["winner"] == "host", theirs


def test_our_resignation_reaches_indie(tmp_path: Path) -> None:
    """Our host's engine quits after 3 decisions, so our program resigns for it; indie takes it."""
    bot = f"cmd:{sys.executable} -m indie.quitting_engine 3"
    theirs = _indie_joins(tmp_path, [], bot=bot)
    assert theirs["winner"] == "joiner", theirs


def test_indie_joins_with_the_short_code(tmp_path: Path) -> None:
    """The code's own SPAKE2 exchange (`pake_code`): a wrong guess gets the plaintext abort, the right code plays."""
    theirs = _indie_joins(tmp_path, [], code=True)
    assert theirs["event"] == "match_over"


def test_indie_rematch_on_one_connection(tmp_path: Path) -> None:
    """Two hidden matches on one connection (README.md section 13); both of our records verify."""
    _indie_joins(tmp_path, ["--rematch", "1"], ref_extra=["--rematch", "1"])
    v = _verify(tmp_path / "rec-match2.json")
    assert v.returncode == 0, v.stdout + v.stderr


def _indie_joins(
    tmp_path: Path,
    extra: list[str],
    bot: str = "random",
    code: bool = False,
    deal: str = "hidden",
    ref_extra: tuple[str, ...] | list[str] = (),
) -> dict[str, Any]:
    host = subprocess.Popen(
        _ours(
            "host",
            "--headless",
            "--bot",
            bot,
            "--bot-seed",
            "7",
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--rules",
            "rulebook",
            "--set",
            f"deal={deal}",
            "--rounds",
            str(ROUNDS),
            "--no-port-mapping",
            "--no-announce",
            *ref_extra,
            *_common(tmp_path),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        listening = _first_json(host, "invite")
        invite = listening["invite"]
        if code:
            addr = f"127.0.0.1:{listening['port']}"
            number = listening["code"].split("-")[0]
            wrong = subprocess.run(
                _indie("join", "--code", f"{number}-aardvark-adroitness", "--addr", addr),
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                env=_env(),
            )
            assert wrong.returncode != 0
            assert "the code does not match" in wrong.stderr
            extra = [*extra, "--code", listening["code"], "--addr", addr]
            invite = ""
        indie = subprocess.run(
            _indie("join", *([invite] if invite else []), "--seed", "7", *extra),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            env=_env(),
        )
        rest, err = host.communicate(timeout=DEADLINE)
    finally:
        host.kill()
    assert indie.returncode == 0, indie.stderr[-3000:]
    assert host.returncode == 0, err[-3000:]
    mine = _last_json(indie.stdout, "over")
    theirs = _last_json(rest, "match_over")
    assert [theirs["scores"]["host"], theirs["scores"]["joiner"]] == mine["scores"]
    v = _verify(tmp_path / "rec.json")
    assert v.returncode == 0, v.stdout + v.stderr
    assert ("hidden deal" in v.stdout) == (deal == "hidden")
    return theirs


@pytest.mark.parametrize("deal", ["hidden", "open"])
def test_our_joiner_joins_indie_host(tmp_path: Path, deal: str) -> None:
    indie = subprocess.Popen(
        _indie(
            "host",
            "--rules",
            "rulebook",
            "--set",
            f"deal={deal}",
            "--rounds",
            str(ROUNDS),
            "--seed",
            "8",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        invite = _first_json(indie, "invite")["invite"]
        joiner = subprocess.run(
            _ours(
                "join",
                invite,
                "--headless",
                "--bot",
                "random",
                "--bot-seed",
                "8",
                "--expect-rules",
                "rulebook",
                "--set",
                f"deal={deal}",
                "--set",
                f"rounds={ROUNDS}",
                *_common(tmp_path),
            ),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        rest, err = indie.communicate(timeout=DEADLINE)
    finally:
        indie.kill()
    assert joiner.returncode == 0, joiner.stderr[-3000:]
    assert indie.returncode == 0, err[-3000:]
    mine = _last_json(rest, "over")
    theirs = _last_json(joiner.stdout, "match_over")
    assert [theirs["scores"]["host"], theirs["scores"]["joiner"]] == mine["scores"]
    v = _verify(tmp_path / "rec.json")
    assert v.returncode == 0, v.stdout + v.stderr


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            names |= {
                a.value.split(".")[0]
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            }
    return names


def test_indie_never_imports_the_reference() -> None:
    files = sorted(INDIE.glob("*.py"))
    assert files
    for f in files:
        assert "p2pkoikoi" not in _imports(f), f"{f.name} imports p2pkoikoi"
    # and at run time: loading every module pulls in nothing of ours
    probe = (
        "import importlib, pkgutil, sys, indie\n"
        "for m in pkgutil.iter_modules(indie.__path__):\n"
        "    importlib.import_module('indie.' + m.name)\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] == 'p2pkoikoi'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=_env(), timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_indie_reproduces_the_vectors() -> None:
    """Its proofs, deal and engine against protocol/vectors (hidden.json, crypto.json, ...)."""
    out = subprocess.run(
        [sys.executable, "-m", "indie.selftest"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
