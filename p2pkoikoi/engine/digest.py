"""SHA-256 for the engine's hashes (deck seeds, states, transcript entries).

One name for the function every engine module hashes with, so that they all agree
on it: :func:`hashlib.sha256`.  :mod:`hashlib` loads OpenSSL's libcrypto, which the
commands that read rules or score cards (``score``, ``rules``) never hash with, so it
is imported on the first hash rather than with the engine.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Hash(Protocol):
        """What the engine uses of a hash object."""

        def update(self, data: bytes, /) -> None: ...
        def digest(self) -> bytes: ...
        def hexdigest(self) -> str: ...
        def copy(self) -> Hash: ...


def sha256(data: bytes = b"", /) -> Hash:
    """``hashlib.sha256(data)``: a hash object with ``update``, ``digest``,
    ``hexdigest`` and ``copy``."""
    import hashlib

    return hashlib.sha256(data)
