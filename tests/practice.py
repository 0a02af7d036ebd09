"""A practice match recorded by a random "person": the same match for the same seed."""

from __future__ import annotations

import random
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from p2pkoikoi.bots import make_bot
from p2pkoikoi.engine import get_preset
from p2pkoikoi.transport.link.contract import LocalLink
from p2pkoikoi.transport.store.identity import IDENTITY_FILE, load_or_create_identity
from p2pkoikoi.transport.store.practice import PracticeRecorder


def play_practice(
    path: Path, config: Path, seed: int, rounds: int = 1, deal: str = "open"
) -> str | None:
    """A practice match played by a random "person", recorded at ``path``: the same
    match for the same ``seed`` (a fixed identity in ``config`` and seeded entropy, so
    that no test meets a round decided by a dealt hand yaku by chance)."""
    rules = get_preset("online").with_settings(rounds=rounds, deal=deal)
    key = config / IDENTITY_FILE
    if not key.exists():
        config.mkdir(parents=True, exist_ok=True)
        fixed = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
        pem = fixed.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        key.write_bytes(pem)
        key.chmod(0o600)
    rng = random.Random(seed)
    rec = PracticeRecorder(
        rules,
        load_or_create_identity(config),
        ("me", "Computer (random)"),
        path,
        random_bytes=rng.randbytes,
    )
    bot = make_bot("random", seed)
    got: list[str | None] = []

    async def main() -> None:
        link = LocalLink(rules, rec.match_seed, bot.choose, recorder=rec)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(link.run)
            async for upd in link.updates:
                if upd.kind == "over":
                    got.append(upd.record)
                    break
                m = link.state
                if upd.kind == "state" and not m.is_over and m.to_act == 0:
                    await link.act(rng.choice(m.legal_actions()))

    trio.run(main)
    return got[0]
