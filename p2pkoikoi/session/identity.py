"""Who this side is: its role, its player name and the identity key that signs its messages.

Theory of operation
-------------------
Every part of the session signs with the same key (auth, commitment, start,
actions, card moves, the final signature, a forfeit, resume) and names the
same seat, so they share one :class:`Identity` instead of each holding the key.
It is handed to a part at construction; nothing else of the session comes with
it.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.session.states import Role


class Identity:
    """This side of the connection: ``role``, ``name``, ``key`` (Ed25519) and ``pub``."""

    __slots__ = ("key", "name", "pub", "role")

    def __init__(self, role: Role, name: str, key: Ed25519PrivateKey) -> None:
        self.role = role
        self.name = name
        self.key = key
        self.pub = crypto.public_bytes(key)

    def __repr__(self) -> str:
        return f"Identity({self.role!r}, {self.name!r}, <key {crypto.fingerprint(self.pub)}>)"

    @property
    def seat(self) -> int:
        return self.role.seat

    @property
    def is_host(self) -> bool:
        return self.role is Role.HOST

    def sign(self, message: bytes) -> bytes:
        return crypto.sign(self.key, message)
