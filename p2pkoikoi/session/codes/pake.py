"""The handshake's PAKE: SPAKE2 over Ed25519, through the ``spake2`` library.

Theory of operation
-------------------
A short code has 16 secret bits, so the handshake must not let anybody test
guesses of it offline.  SPAKE2 (Abdalla and Pointcheval, 2005) gives that: each
side sends one group element blinded by the password; each derives a key that
only a peer with the same password shares; a peer with a wrong guess learns
only that its one guess was wrong.  The protocol then binds this key with the
X25519 exchange and both hellos (``channel.derive_keys``), and the joiner's first
encrypted frame is the key confirmation the host counts failed guesses on.

Library: ``spake2`` (Brian Warner's pure-Python SPAKE2, the one magic-wormhole
has used since 2016).  Its construction is public and fixed (see
protocol/README.md section 5): messages are a side byte (``A``/``B``) and a
32-byte Ed25519 point, ``key = SHA-256(SHA-256(pw) || SHA-256(idA) ||
SHA-256(idB) || X* || Y* || K)``; the Rust crate ``spake2`` (RustCrypto)
implements the same bytes, so other programs can interoperate.  Randomness is a
parameter (``entropy_f``): with our entropy passed in, runs are reproducible
and ``protocol/vectors/pake.json`` holds whole exchanges.

The joiner is side A, the host side B; identities are fixed protocol strings,
so a message for one role never works for the other.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Final

from spake2 import SPAKE2_A, SPAKE2_B  # type: ignore[import-untyped]
from spake2.ed25519_basic import NotOnCurve  # type: ignore[import-untyped]
from spake2.spake2 import SPAKEError  # type: ignore[import-untyped]

from p2pkoikoi.session.errors import RemoteProtocolError

ID_JOINER: Final = b"p2pkoikoi/v2/joiner"
ID_HOST: Final = b"p2pkoikoi/v2/host"
#: the identities of the DHT rendezvous's exchange (protocol/dht.md): a message of one
#: never completes the other
ID_DHT_JOINER: Final = b"p2pkoikoi/v3/dht/joiner"
ID_DHT_HOST: Final = b"p2pkoikoi/v3/dht/host"
MESSAGE_BYTES: Final = 33  # side byte + 32-byte point
KEY_BYTES: Final = 32
_STREAM_TAG: Final = b"p2pkoikoi/v2/pake-entropy\x00"


def entropy_stream(seed: bytes) -> Callable[[int], bytes]:
    """Deterministic randomness for the library: SHA-256(tag || seed || u32 i), i = 0, 1, ..."""
    state = {"buf": b"", "i": 0}

    def take(n: int) -> bytes:
        buf = state["buf"]
        assert isinstance(buf, bytes)
        while len(buf) < n:
            i = state["i"]
            assert isinstance(i, int)
            buf += hashlib.sha256(_STREAM_TAG + seed + struct.pack(">I", i)).digest()
            state["i"] = i + 1
        state["buf"] = buf[n:]
        return buf[:n]

    return take


class Pake:
    """One side of one SPAKE2 exchange: :attr:`message` to send, :meth:`finish` with the peer's."""

    __slots__ = ("_impl", "message")

    def __init__(self, role: str, password: bytes, seed: bytes, *, dht: bool = False) -> None:
        cls = SPAKE2_B if role == "host" else SPAKE2_A
        id_a, id_b = (ID_DHT_JOINER, ID_DHT_HOST) if dht else (ID_JOINER, ID_HOST)
        self._impl = cls(password, idA=id_a, idB=id_b, entropy_f=entropy_stream(seed))
        self.message: bytes = self._impl.start()

    @property
    def scalar(self) -> int:
        """This side's secret scalar (x or y): for test vectors only."""
        value = self._impl.xy_scalar
        assert isinstance(value, int)
        return value

    def finish(self, peer_message: bytes) -> bytes:
        """The shared key; a malformed or reflected peer message is a protocol error."""
        if len(peer_message) != MESSAGE_BYTES:
            raise RemoteProtocolError("bad hello from peer: the PAKE message is not 33 bytes")
        try:
            key = self._impl.finish(peer_message)
        except (SPAKEError, NotOnCurve, ValueError, TypeError, AssertionError) as exc:
            raise RemoteProtocolError(
                f"bad hello from peer: unusable PAKE message ({type(exc).__name__})"
            ) from None
        assert isinstance(key, bytes) and len(key) == KEY_BYTES
        return key
