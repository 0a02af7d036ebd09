"""The connection's cryptography: handshake hash, key exchange, key schedule, channel.

The primitives come from ``cryptography`` (X25519, HKDF-SHA256,
ChaCha20-Poly1305), imported by the functions that use them, once per connection.
The PAKE passwords of a code, an invite and a resumption are here too.  A
record's checks need none of this (:mod:`p2pkoikoi.session.crypto` holds the
transcript and the signatures), so ``verify`` does not load it.  Every function
is pure (callers pass keys and values in), each covered by a test vector in
``protocol/vectors``.
"""

from __future__ import annotations

import struct

from p2pkoikoi.session.crypto import lp, sha256
from p2pkoikoi.session.errors import RemoteProtocolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    from p2pkoikoi.session.codes.code import ShortCode

TAG_HANDSHAKE: Final = b"p2pkoikoi/v2/handshake\x00"
TAG_KEY_H2J: Final = b"p2pkoikoi/v2/key/host-to-joiner\x00"
TAG_KEY_J2H: Final = b"p2pkoikoi/v2/key/joiner-to-host\x00"
TAG_RESUME_SECRET: Final = b"p2pkoikoi/v2/resume-secret\x00"
TAG_RESUME_PASSWORD: Final = b"p2pkoikoi/v2/resume\x00"
TAG_CODE_PASSWORD: Final = b"p2pkoikoi/v2/code\x00"
TAG_INVITE_PASSWORD: Final = b"p2pkoikoi/v2/invite-secret\x00"

MAX_COUNTER: Final = 2**64 - 1
TAG_LEN: Final = 16


# --------------------------------------------------------------------------- passwords
def code_password(code: ShortCode) -> bytes:
    """The PAKE password of a short code: its canonical text (number included), tagged."""
    return TAG_CODE_PASSWORD + str(code).encode("ascii")


def invite_password(secret: bytes) -> bytes:
    """The PAKE password of a long invite: its 128-bit secret, tagged."""
    return TAG_INVITE_PASSWORD + secret


def resume_password(resume_secret: bytes) -> bytes:
    """The PAKE password of a resumed connection: the match's resume secret, tagged."""
    return TAG_RESUME_PASSWORD + resume_secret


# --------------------------------------------------------------------------- handshake
def handshake_hash(host_hello: bytes, joiner_hello: bytes) -> bytes:
    """H0: binds both plaintext hello payloads (as sent on the wire), host's first."""
    return sha256(TAG_HANDSHAKE, lp(host_hello), lp(joiner_hello))


def x25519_private(seed: bytes) -> X25519PrivateKey:
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    if len(seed) != 32:
        raise ValueError("an X25519 private key seed is 32 bytes")
    return X25519PrivateKey.from_private_bytes(seed)


def x25519_public(private: X25519PrivateKey) -> bytes:
    return private.public_key().public_bytes_raw()


def shared_secret(private: X25519PrivateKey, peer_public: bytes) -> bytes:
    """X25519; a low-order peer key (all-zero result) is a protocol error."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey

    try:
        shared = private.exchange(X25519PublicKey.from_public_bytes(peer_public))
    except ValueError:
        raise RemoteProtocolError("bad hello from peer: unusable ephemeral key") from None
    if shared == bytes(32):
        raise RemoteProtocolError("bad hello from peer: unusable ephemeral key")
    return shared


def hkdf(pake_key: bytes, shared: bytes, label: bytes, h0: bytes) -> bytes:
    """HKDF-SHA256(salt=pake_key, ikm=shared, info=label || h0), 32 bytes."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=pake_key, info=label + h0).derive(shared)


def derive_keys(pake_key: bytes, shared: bytes, h0: bytes) -> tuple[bytes, bytes]:
    """(host-to-joiner key, joiner-to-host key): the PAKE key, the X25519 secret and
    both hellos (through H0) all go in, so each binds the others."""
    return hkdf(pake_key, shared, TAG_KEY_H2J, h0), hkdf(pake_key, shared, TAG_KEY_J2H, h0)


def derive_resume_secret(pake_key: bytes, shared: bytes, h0: bytes) -> bytes:
    """The secret a broken connection resumes with (both sides hold it, whichever
    password the match began with; it never travels)."""
    return hkdf(pake_key, shared, TAG_RESUME_SECRET, h0)


def nonce(counter: int) -> bytes:
    """96-bit nonce: 4 zero bytes then the 64-bit big-endian frame counter."""
    return b"\x00\x00\x00\x00" + struct.pack(">Q", counter)


class Channel:
    """One direction of the encrypted channel: a key and a counter that only goes up."""

    __slots__ = ("_aead", "_invalid_tag", "counter")

    def __init__(self, key: bytes) -> None:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        self._aead = ChaCha20Poly1305(key)
        self._invalid_tag = InvalidTag  # (imported once here, not at every frame)
        self.counter = 0

    def seal(self, plaintext: bytes) -> bytes:
        if self.counter > MAX_COUNTER:
            raise RemoteProtocolError("encrypted channel exhausted: too many frames")
        ct = self._aead.encrypt(nonce(self.counter), plaintext, None)
        self.counter += 1
        return ct

    def open(self, ciphertext: bytes) -> bytes:
        if self.counter > MAX_COUNTER:
            raise RemoteProtocolError("encrypted channel exhausted: too many frames")
        if len(ciphertext) < TAG_LEN:
            raise RemoteProtocolError("bad frame from peer: too short to be encrypted")
        try:
            pt = self._aead.decrypt(nonce(self.counter), ciphertext, None)
        except self._invalid_tag:
            raise RemoteProtocolError(
                "frame failed authentication: it was modified, replayed or reordered, "
                "or the peer does not hold this invite's secret"
            ) from None
        self.counter += 1
        return pt
