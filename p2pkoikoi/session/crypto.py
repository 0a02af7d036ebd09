"""The protocol's cryptography of a match: transcript, commitments, seed, signatures.

What a record holds and ``verify`` checks: the transcript's hash chain, the
commit-reveal of the seed, and Ed25519 signatures (libsodium through PyNaCl);
hashing is SHA-256 with a domain tag per use.  The connection's own
cryptography (handshake hash, key exchange and schedule, the encrypted channel)
is :mod:`p2pkoikoi.session.channel`'s.  Every function here is pure (no
randomness: callers pass keys and values in), so each is covered by a test
vector in ``protocol/vectors``.
"""

from __future__ import annotations

import importlib
import struct

from p2pkoikoi.engine.digest import sha256 as _sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

# Signatures are made and checked by libsodium (PyNaCl): an Ed25519 check takes
# half the time of OpenSSL's here, and one is made or checked for every action
# (Ed25519 is deterministic: the same key and message give the same bytes with
# either library).  Keys stay ``cryptography`` objects (the identity file, the
# key exchange, the key derivation and the channel's cipher); those modules are
# imported by the functions that use them, once per connection, so ``verify``
# loads none of them.
#
# libsodium is called through PyNaCl's compiled module (``nacl._sodium``) rather
# than ``nacl.bindings``: the bindings package imports every libsodium wrapper
# (about 4 ms of ``verify``'s start-up, more than the 160 checks of a record), and
# its wrappers check and copy more than a signature needs (a zeroed buffer, the
# message copied back out).  The calls are the same libsodium functions
# (``crypto_sign``, ``crypto_sign_open``); ``sodium_init`` is what ``nacl.bindings``
# runs on import (it may run any number of times).  ``nacl._sodium`` is PyNaCl's
# private module: should a release rename it, the public ``nacl.bindings`` do the
# same job (the same bytes, a little slower), see :func:`_load_sodium`.


class Sodium:
    """The three libsodium calls a signature needs, and where they come from.

    A plain slotted class: ``source`` names the module the calls come from, for the
    tests that swap one set for the other."""

    __slots__ = ("open", "secret_key", "sign", "source")

    def __init__(
        self,
        source: str,  # "nacl._sodium" (direct) or "nacl.bindings" (PyNaCl's public wrappers)
        secret_key: Callable[[bytes], bytes],  # 32-byte seed -> libsodium's 64-byte secret key
        sign: Callable[[bytes, bytes], bytes],  # (message, secret key) -> 64-byte signature
        open: Callable[[bytes, bytes, bytes], bool],  # (public key, signature, message) -> holds
    ) -> None:
        self.source = source
        self.secret_key = secret_key
        self.sign = sign
        self.open = open

    def __repr__(self) -> str:
        return f"<Sodium from {self.source}>"


def _direct_sodium(ffi: Any, lib: Any) -> Sodium:
    """libsodium through PyNaCl's compiled module (``ffi``, ``lib``)."""
    if lib.sodium_init() < 0:  # pragma: no cover (libsodium could not start)
        raise ImportError("libsodium failed to initialise")
    new_buffer = ffi.new_allocator(should_clear_after_alloc=False)  # filled whole by libsodium
    null = ffi.NULL
    crypto_sign, crypto_sign_open = lib.crypto_sign, lib.crypto_sign_open

    def secret_key(seed: bytes) -> bytes:
        pk, sk = new_buffer("unsigned char[32]"), new_buffer("unsigned char[64]")
        if lib.crypto_sign_seed_keypair(pk, sk, seed) != 0:
            raise RuntimeError("libsodium could not derive a signing key")  # pragma: no cover
        return bytes(ffi.buffer(sk, 64))

    def sign(message: bytes, secret: bytes) -> bytes:
        signed = new_buffer("unsigned char[]", len(message) + 64)
        if crypto_sign(signed, null, message, len(message), secret) != 0:
            raise RuntimeError("libsodium could not sign")  # pragma: no cover
        return bytes(ffi.buffer(signed, 64))

    def open_(public_key: bytes, signature: bytes, message: bytes) -> bool:
        signed = signature + message
        out = new_buffer("unsigned char[]", len(signed))
        ok: int = crypto_sign_open(out, null, signed, len(signed), public_key)
        return ok == 0

    return Sodium("nacl._sodium", secret_key, sign, open_)


def _public_sodium() -> Sodium:
    """libsodium through PyNaCl's public, documented wrappers (``nacl.bindings``)."""
    from nacl import bindings
    from nacl.exceptions import BadSignatureError

    def secret_key(seed: bytes) -> bytes:
        return bindings.crypto_sign_seed_keypair(seed)[1]

    def sign(message: bytes, secret: bytes) -> bytes:
        return bindings.crypto_sign(message, secret)[:64]

    def open_(public_key: bytes, signature: bytes, message: bytes) -> bool:
        try:
            bindings.crypto_sign_open(signature + message, public_key)
        except (BadSignatureError, ValueError):
            return False
        return True

    return Sodium("nacl.bindings", secret_key, sign, open_)


def _load_sodium() -> Sodium:
    """PyNaCl's compiled module when it is there (the faster path), else its public bindings."""
    try:
        compiled = importlib.import_module("nacl._sodium")
        return _direct_sodium(compiled.ffi, compiled.lib)
    except (ImportError, AttributeError):
        return _public_sodium()


#: the libsodium calls in use (tests swap in :func:`_public_sodium`'s)
SODIUM: Sodium = _load_sodium()

TAG_TRANSCRIPT: Final = b"p2pkoikoi/v2/transcript\x00"
TAG_AUTH: Final = b"p2pkoikoi/v2/auth\x00"
TAG_SIG: Final = b"p2pkoikoi/v2/sig\x00"
TAG_FINAL: Final = b"p2pkoikoi/v2/final\x00"
TAG_COMMIT: Final = b"p2pkoikoi/v2/commit\x00"
TAG_SEED: Final = b"p2pkoikoi/v2/seed\x00"
TAG_IDENTITY: Final = b"p2pkoikoi/v2/identity\x00"
TAG_RESUME: Final = b"p2pkoikoi/v2/resume\x00"
TAG_COMMIT_SIG: Final = b"p2pkoikoi/v2/commit-sig\x00"
TAG_START: Final = b"p2pkoikoi/v2/start\x00"
TAG_REMATCH: Final = b"p2pkoikoi/v2/rematch\x00"
TAG_FORFEIT: Final = b"p2pkoikoi/v2/forfeit\x00"


Field = bytes | str | int


def sha256(*parts: bytes) -> bytes:
    h = _sha256()
    for p in parts:
        h.update(p)
    return h.digest()


_U32: Final = struct.Struct(">I").pack
_U64: Final = struct.Struct(">Q").pack


def lp(field: Field) -> bytes:
    """Length-prefixed field: u32 big-endian length then the bytes.

    ``str`` is UTF-8; ``int`` is 8 bytes big-endian unsigned (so its length is 8).
    """
    # the common kinds first: this runs for every field of every action
    if isinstance(field, bytes):
        data = field
    elif isinstance(field, str):
        data = field.encode("utf-8")
    elif isinstance(field, bool):
        raise TypeError("booleans are not transcript fields")
    elif isinstance(field, int):
        data = _U64(field)
    else:
        data = bytes(field)
    return _U32(len(data)) + data


def entry(kind: str, *fields: Field) -> bytes:
    """Canonical bytes of one transcript entry: ``lp(kind) || lp(field) ...``."""
    return lp(kind) + b"".join(map(lp, fields))


# --------------------------------------------------------------------------- transcript
def transcript_start(h0: bytes) -> bytes:
    """T0 = SHA-256(tag || H0)."""
    return sha256(TAG_TRANSCRIPT, h0)


def rematch_start(h0: bytes, number: int, previous: bytes) -> bytes:
    """T0 of match ``number`` (2, 3, ...) of one connection:
    SHA-256(tag || H0 || entry("rematch", u64 number, previous final transcript)).

    Chaining each match to the final transcript of the one before makes every
    signature of the new match cover which match of the connection it is and what
    came before, so records cannot be renumbered, reordered or spliced."""
    return sha256(TAG_REMATCH, h0, entry("rematch", number, previous))


def absorb(transcript: bytes, kind: str, *fields: Field) -> bytes:
    """T' = SHA-256(T || entry(kind, fields...))."""
    return sha256(transcript, entry(kind, *fields))


_ACTION_KIND: Final = b"\x00\x00\x00\x06action"  # lp("action")
_SEQ_SEAT: Final = struct.Struct(">IQIQ").pack  # lp(u64 seq) || lp(u64 seat)


def absorb_action(transcript: bytes, seq: int, seat: int, text: str, state_hash: bytes) -> bytes:
    """``absorb(transcript, "action", seq, seat, text, state_hash)``, byte for byte,
    in one hash update: every action of a match is absorbed by both sides and by
    ``verify``."""
    data = text.encode("utf-8")
    h = _sha256(transcript)
    h.update(
        b"".join(
            (
                _ACTION_KIND,
                _SEQ_SEAT(8, seq, 8, seat),
                _U32(len(data)),
                data,
                _U32(len(state_hash)),
                state_hash,
            )
        )
    )
    return h.digest()


def auth_entry(role: str, name: str, key: bytes, rules: bytes, turn_limit: int) -> bytes:
    """A player's auth as a transcript entry (the joiner's rules are b"" and limit 0)."""
    return entry("auth", role, name, key, rules, turn_limit)


def auth_message(
    h0: bytes, role: str, name: str, key: bytes, rules: bytes, turn_limit: int
) -> bytes:
    """What a player's auth signature covers."""
    return TAG_AUTH + h0 + auth_entry(role, name, key, rules, turn_limit)


def card_entry_fields(
    seq: int,
    seat: int,
    kind: str,
    action: str | None,
    pos: int | None,
    deck: bytes | None,
    keys: bytes | None,
    state_hash: bytes,
) -> tuple[Field, ...]:
    """The transcript fields of a hidden-deal move (``protocol/hidden-deal.md``):
    absent text and bytes are empty, an absent position is 255."""
    return (
        seq,
        seat,
        kind,
        action or "",
        255 if pos is None else pos,
        deck or b"",
        keys or b"",
        state_hash,
    )


def sig_message(transcript: bytes) -> bytes:
    """What an action / resign signature covers: the transcript hash after that entry."""
    return TAG_SIG + transcript


def commit_sig_message(transcript: bytes) -> bytes:
    """What the host's commitment signature covers: the transcript after the commit entry."""
    return TAG_COMMIT_SIG + transcript


def start_message(transcript: bytes) -> bytes:
    """What each side's start signature covers: the transcript after the reveal, which
    holds both identities, the rules, the commitment and both values."""
    return TAG_START + transcript


def resign_fields(seq: int, seat: int, state_hash: bytes, reason: str) -> tuple[Field, ...]:
    """A resignation's transcript entry fields: the reason only when there is one
    (``"time"``), so a plain resignation's bytes are unchanged."""
    return (seq, seat, state_hash, reason) if reason else (seq, seat, state_hash)


def forfeit_message(transcript: bytes, seat: int, reason: str) -> bytes:
    """What the recording player signs when it records the other's forfeit: the
    transcript as far as its record goes, who forfeits and why."""
    return TAG_FORFEIT + transcript + entry("forfeit", seat, reason)


def final_message(transcript: bytes, state_hash: bytes) -> bytes:
    return TAG_FINAL + transcript + state_hash


def resume_message(
    h_resume: bytes, role: str, match_id: bytes, seq: int, transcript: bytes, state_hash: bytes
) -> bytes:
    """What a resume signature covers: this connection's handshake hash and where we stand."""
    return TAG_RESUME + h_resume + entry("resume", role, match_id, seq, transcript, state_hash)


def commitment(transcript: bytes, host_value: bytes) -> bytes:
    return sha256(TAG_COMMIT, transcript, host_value)


def derive_seed(host_value: bytes, joiner_value: bytes, transcript: bytes) -> bytes:
    return sha256(TAG_SEED, host_value, joiner_value, transcript)


# --------------------------------------------------------------------------- identities
def public_bytes(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    # public_bytes_raw, not public_bytes(Encoding.Raw, ...): the serialization module
    # imports the SSH and cipher code, a third of verify's import time
    return pub.public_bytes_raw()


#: libsodium's 64-byte secret key for each recent signing key (an identity signs
#: every action of a match: deriving it each time would cost a third of a signature)
_SECRET: dict[int, tuple[Ed25519PrivateKey, bytes]] = {}


def _secret(key: Ed25519PrivateKey) -> bytes:
    got = _SECRET.get(id(key))
    if got is None or got[0] is not key:
        secret = SODIUM.secret_key(key.private_bytes_raw())
        if len(_SECRET) >= 16:
            del _SECRET[next(iter(_SECRET))]
        got = _SECRET[id(key)] = (key, secret)
    return got[1]


def sign(key: Ed25519PrivateKey, message: bytes) -> bytes:
    """The Ed25519 signature (RFC 8032) by ``key`` over ``message``."""
    return SODIUM.sign(message, _secret(key))


def verify_sig(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """True when ``signature`` by ``public_key`` over ``message`` holds."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    try:
        return SODIUM.open(bytes(public_key), bytes(signature), message)
    except TypeError:  # not bytes
        return False


#: RFC 4648's base32 alphabet, lower case
_BASE32: Final = "abcdefghijklmnopqrstuvwxyz234567"


def fingerprint(public_key_bytes: bytes) -> str:
    """Short human-readable identity: 80 bits of SHA-256 in four groups of base32.

    >>> len(fingerprint(bytes(32)))
    19
    """
    if len(public_key_bytes) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    # RFC 4648 base32 (lower case) of the 80 bits, written out: ``base64.b32encode``
    # gives the same 16 letters (tests/session/test_signatures.py compares the two)
    bits = int.from_bytes(sha256(TAG_IDENTITY, public_key_bytes)[:10], "big")
    text = "".join(_BASE32[(bits >> shift) & 31] for shift in range(75, -1, -5))
    return "-".join(text[i : i + 4] for i in range(0, 16, 4))
