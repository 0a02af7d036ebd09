"""Ed25519 signatures (session/crypto.py): made and checked by libsodium, the same
bytes as ``cryptography`` makes (Ed25519 is deterministic), and no forgery passes."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.session import crypto


@pytest.fixture(autouse=True, params=["nacl._sodium", "nacl.bindings"])
def sodium(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every test here runs with libsodium called directly and through PyNaCl's public
    bindings (the fallback should the private module be renamed)."""
    if request.param == "nacl.bindings":
        monkeypatch.setattr(crypto, "SODIUM", crypto._public_sodium())
    monkeypatch.setattr(crypto, "_SECRET", {})  # no secret derived by the other path
    assert crypto.SODIUM.source == request.param
    yield request.param


def test_without_the_private_module_the_public_bindings_sign(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PyNaCl without ``nacl._sodium`` (a future rename): the loader falls back."""
    import nacl.bindings  # noqa: F401  (loaded first, as it would be from its new module)

    assert crypto._load_sodium().source == "nacl._sodium"
    monkeypatch.setitem(sys.modules, "nacl._sodium", None)  # importing it now fails
    fallback = crypto._load_sodium()
    assert fallback.source == "nacl.bindings"
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    secret = fallback.secret_key(bytes(range(32)))
    sig = fallback.sign(b"m", secret)
    assert sig == key.sign(b"m")
    assert fallback.open(crypto.public_bytes(key), sig, b"m")
    assert not fallback.open(crypto.public_bytes(key), sig, b"n")


@pytest.mark.parametrize("message", [b"", b"p2pkoikoi/v1/sig\x00" + bytes(range(32)), b"x" * 5000])
def test_signatures_are_those_of_rfc8032(message: bytes) -> None:
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    sig = crypto.sign(key, message)
    assert sig == key.sign(message)  # the other library, the same bytes
    pub = crypto.public_bytes(key)
    assert crypto.verify_sig(pub, sig, message)
    key.public_key().verify(sig, message)  # and it checks them too


def test_a_changed_message_signature_or_key_fails() -> None:
    key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    other = Ed25519PrivateKey.from_private_bytes(bytes([1]) * 32)
    msg = b"action 7"
    sig = crypto.sign(key, msg)
    pub = crypto.public_bytes(key)
    assert not crypto.verify_sig(pub, sig, msg + b"!")
    assert not crypto.verify_sig(pub, bytes([sig[0] ^ 1]) + sig[1:], msg)
    assert not crypto.verify_sig(crypto.public_bytes(other), sig, msg)
    assert not crypto.verify_sig(pub, sig[:63], msg)  # malformed lengths: False, no error
    assert not crypto.verify_sig(pub[:31], sig, msg)
    assert not crypto.verify_sig(bytes(32), sig, msg)  # not a usable key


def test_many_keys_sign_with_their_own_secret() -> None:
    # the cache of libsodium secrets is bounded and never confuses two keys
    keys = [Ed25519PrivateKey.from_private_bytes(bytes([i]) * 32) for i in range(40)]
    for _ in range(2):
        for k in keys:
            assert crypto.sign(k, b"m") == k.sign(b"m")


def test_absorb_action_is_absorb_of_an_action_entry() -> None:
    """The per-action shortcut hashes the same bytes as the generic transcript entry."""
    from p2pkoikoi.session import crypto

    t = bytes(range(32))
    for seq, seat, text, h in ((1, 0, "play 1b", bytes(32)), (2**40, 1, "koikoi", b"\xff" * 32),
                               (7, 1, "play 12c3 capture 12a", b"x" * 32), (0, 0, "", b"")):  # fmt: skip
        assert crypto.absorb_action(t, seq, seat, text, h) == crypto.absorb(
            t, "action", seq, seat, text, h
        )


def test_a_fingerprint_is_base32_of_the_identity_hash() -> None:
    """crypto.fingerprint writes base32 out (verify need not import base64): the same
    letters as the standard library's, for keys of every kind of bit pattern."""
    import base64
    import random

    rng = random.Random(25)
    keys = [bytes(32), b"\xff" * 32] + [rng.randbytes(32) for _ in range(200)]
    for key in keys:
        digest = crypto.sha256(crypto.TAG_IDENTITY, key)[:10]
        text = base64.b32encode(digest).decode("ascii").lower()
        assert crypto.fingerprint(key) == "-".join(text[i : i + 4] for i in range(0, 16, 4))
