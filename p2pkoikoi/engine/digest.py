"""SHA-256 for the engine's hashes (deck seeds, states, transcript entries).

One name for the function every engine module hashes with, so that they all agree
on it: :func:`hashlib.sha256`.
"""

from __future__ import annotations

import hashlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

#: ``sha256(data=b"")``: a hash object with ``update``, ``digest``, ``hexdigest``, ``copy``
sha256: Final = hashlib.sha256
