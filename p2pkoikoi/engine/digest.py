"""SHA-256 from CPython's own module, so that checking a record loads no OpenSSL.

``hashlib.sha256`` is OpenSSL's: importing :mod:`hashlib` loads OpenSSL's
libcrypto (about 5 ms, a twentieth of ``verify``'s start-up, for hashing a few
hundred short strings).  CPython ships its own SHA-256 too, the module that
:mod:`hashlib` itself falls back to when it is built without OpenSSL
(``_sha256`` in 3.11, ``_sha2`` from 3.12): the same function, so the same
bytes.  For the inputs here (a deck seed, a state, a transcript entry: under
2 KB, mostly under 200 bytes) it takes the same time as OpenSSL's (under a
microsecond for 100 bytes); OpenSSL's is faster on long inputs, which is why
the rest of the package (the hidden deal's SHA-512, the network's keys) keeps
:mod:`hashlib`.  A Python without the module gets :func:`hashlib.sha256`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (see cli/__init__.py)
if TYPE_CHECKING:
    from _hashlib import HASH
    from collections.abc import Callable
    from typing import Final


def _builtin_sha256() -> Callable[..., HASH]:
    """CPython's own ``sha256`` constructor, else OpenSSL's (through :mod:`hashlib`)."""
    for name in ("_sha256", "_sha2"):  # CPython 3.11, 3.12 and later
        try:
            # importlib.import_module (see engine/__init__.py); a top-level name
            made: Callable[..., HASH] = __import__(name).sha256
        except (ImportError, AttributeError):
            continue
        return made
    import hashlib

    return hashlib.sha256


#: ``sha256(data=b"")``: a hash object with ``update``, ``digest``, ``hexdigest``, ``copy``
sha256: Final = _builtin_sha256()
