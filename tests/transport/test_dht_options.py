"""``--dht-bootstrap``, ``--no-dht``, $P2PKOIKOI_DHT and network.toml's keys:
which DHT a host or joiner uses, and one line for each mistake."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from p2pkoikoi.cli.net_run import _dht
from p2pkoikoi.engine import InputError
from p2pkoikoi.transport.lookup.dht import DEFAULT_BOOTSTRAP, DhtConfig


def _args(tmp_path: Path, **kw: object) -> argparse.Namespace:
    base: dict[str, object] = {"dht": None, "dht_bootstrap": None, "config_dir": str(tmp_path)}
    base.update(kw)
    return argparse.Namespace(**base)


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("P2PKOIKOI_DHT", raising=False)


def test_defaults_are_the_public_bootstrap_nodes(tmp_path: Path, no_env: None) -> None:
    cfg = _dht(_args(tmp_path))
    assert cfg == DhtConfig() and cfg.bootstrap == DEFAULT_BOOTSTRAP


def test_flags_env_and_config_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env: None
) -> None:
    (tmp_path / "network.toml").write_text('dht_bootstrap = ["10.9.9.9:7000"]\n', encoding="utf-8")
    cfg = _dht(_args(tmp_path))
    assert cfg is not None and cfg.bootstrap == (("10.9.9.9", 7000),)
    monkeypatch.setenv("P2PKOIKOI_DHT", "10.1.1.1:6881,[2001:db8::1]:6881")
    cfg = _dht(_args(tmp_path))
    assert cfg is not None and cfg.bootstrap == (("10.1.1.1", 6881), ("2001:db8::1", 6881))
    cfg = _dht(_args(tmp_path, dht_bootstrap=["192.0.2.7:1", "node.example:2"]))
    assert cfg is not None and cfg.bootstrap == (("192.0.2.7", 1), ("node.example", 2))
    assert _dht(_args(tmp_path, dht=False, dht_bootstrap=["192.0.2.7:1"])) is None
    monkeypatch.setenv("P2PKOIKOI_DHT", "off")
    assert _dht(_args(tmp_path)) is None


def test_config_can_turn_it_off(tmp_path: Path, no_env: None) -> None:
    (tmp_path / "network.toml").write_text("dht = false\n", encoding="utf-8")
    assert _dht(_args(tmp_path)) is None


@pytest.mark.parametrize(
    ("given", "config", "message"),
    [
        (["nonsense"], "", "--dht-bootstrap 'nonsense': expected HOST:PORT"),
        (["h:0"], "", "--dht-bootstrap 'h:0': expected HOST:PORT"),
        (None, "dht_bootstrap = 5\n", 'dht_bootstrap must be a list of "HOST:PORT"'),
        (None, "dht = [\n", "not TOML"),
        (None, 'dht_bootstrap = ["x"]\n', "network.toml dht_bootstrap 'x'"),
    ],
)
def test_mistakes_are_one_line(
    tmp_path: Path, no_env: None, given: list[str] | None, config: str, message: str
) -> None:
    if config:
        (tmp_path / "network.toml").write_text(config, encoding="utf-8")
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        _dht(_args(tmp_path, dht_bootstrap=given))


def test_a_bad_bootstrap_fails_before_any_network_use(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "join", "7-crossover-clockwork", "--headless",
         "--dht-bootstrap", "nowhere", "--config-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert r.returncode != 0
    assert r.stderr.strip().count("\n") == 0 and "expected HOST:PORT" in r.stderr, r.stderr
