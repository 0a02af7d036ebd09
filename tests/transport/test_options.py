"""The openers' options are values: frozen, equal by value, and their repr is Python
that makes them again (so a log line or a bug report can be pasted back; the
rules' own repr shows its enums as ``<Enum.X: 'x'>``, the engine's, so the host's
options are compared without them); the player's repr leaves its private key out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine.presets import get_preset
from p2pkoikoi.session.codes.invite import Address
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.lookup.dht import DhtConfig
from p2pkoikoi.transport.open.gate import GateLimits
from p2pkoikoi.transport.open.options import HostOptions, JoinOptions
from p2pkoikoi.transport.player import Player


def test_host_and_join_options_repr_as_python_that_makes_them_again() -> None:
    rules = get_preset("online").with_settings(rounds=2)
    host = HostOptions(
        rules,
        port=0,
        bind="127.0.0.1",
        code=False,
        gate_limits=GateLimits(total=3),
        stun=(("stun.example", 3478),),
        dht=DhtConfig(bootstrap=(("127.0.0.1", 6881),)),
    )
    join = JoinOptions(address=Address("127.0.0.1", 7), screen=True, stun=(("s.example", 1),))
    names = {
        "HostOptions": HostOptions,
        "JoinOptions": JoinOptions,
        "GateLimits": GateLimits,
        "DhtConfig": DhtConfig,
        "Address": Address,
    }
    assert eval(repr(join), names) == join
    shown = repr(host).replace(repr(rules), "RULES")
    assert eval(shown, {**names, "RULES": rules}) == host
    for value in (host, join):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.udp = False  # type: ignore[misc]


def test_the_players_repr_leaves_the_private_key_out(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    player = Player(key, "Alice", record_path=tmp_path / "r.koikoi", timeouts=Timeouts(linger=1))
    shown = repr(player)
    assert "Alice" in shown and "linger=1" in shown and "r.koikoi" in shown
    assert "identity" not in shown and "Ed25519" not in shown
