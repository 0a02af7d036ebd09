"""The STUN codec against RFC 5769's test vectors (integrity and fingerprint included)."""

from __future__ import annotations

import pytest

from p2pkoikoi.transport.nat import stun

PASSWORD = b"VOkJxbRl1RmTxUk/WvJxBt"
# RFC 5769 section 2.1, 2.2, 2.3 (the padding of USERNAME and SOFTWARE is spaces there)
REQUEST = bytes.fromhex(
    "000100582112a442b7e7a701bc34d686fa87dfae802200105354554e207465737420636c69656e74"
    "002400046e0001ff80290008932ff9b151263b36000600096576746a3a6836765920202000080014"
    "9aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a280280004e57a3bcf"
)
RESPONSE4 = bytes.fromhex(
    "0101003c2112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f7220"
    "002000080001a147e112a643000800142b91f599fd9e90c38c7489f92af9ba53f06be7d7"
    "80280004c07d4c96"
)
RESPONSE6 = bytes.fromhex(
    "010100482112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f7220"
    "002000140002a1470113a9faa5d3f179bc25f4b5bed2b9d900080014a382954e4be67bf1"
    "1784c97c8292c275bfe3ed4180280004c8fb0b4c"
)


def test_rfc5769_request_verifies_and_reencodes() -> None:
    m = stun.decode(REQUEST, key=PASSWORD)
    assert m.type == stun.BINDING_REQUEST
    assert m.get(stun.USERNAME) == b"evtj:h6vY"
    assert m.get(stun.SOFTWARE) == b"STUN test client"
    plain = tuple(a for a in m.attributes if a[0] not in (stun.MESSAGE_INTEGRITY, stun.FINGERPRINT))
    again = stun.encode(stun.Message(m.type, m.transaction, plain), key=PASSWORD, pad=b" ")
    assert again == REQUEST


@pytest.mark.parametrize(
    ("raw", "mapped"),
    [
        (RESPONSE4, ("192.0.2.1", 32853)),
        (RESPONSE6, ("2001:db8:1234:5678:11:2233:4455:6677", 32853)),
    ],
)
def test_rfc5769_responses(raw: bytes, mapped: tuple[str, int]) -> None:
    m = stun.decode(raw, key=PASSWORD)
    assert m.type == stun.BINDING_SUCCESS
    assert m.mapped == mapped
    plain = tuple(a for a in m.attributes if a[0] not in (stun.MESSAGE_INTEGRITY, stun.FINGERPRINT))
    assert stun.encode(stun.Message(m.type, m.transaction, plain), key=PASSWORD, pad=b" ") == raw


def test_wrong_key_and_bit_flips_are_refused() -> None:
    with pytest.raises(stun.StunError, match="INTEGRITY"):
        stun.decode(REQUEST, key=b"wrong")
    for i in range(20, len(REQUEST)):
        flipped = bytearray(REQUEST)
        flipped[i] ^= 0x01
        with pytest.raises(stun.StunError):
            stun.decode(bytes(flipped), key=PASSWORD)


def test_demultiplexing_from_quic() -> None:
    assert stun.looks_like_stun(REQUEST)
    assert not stun.looks_like_stun(b"\xc0" + REQUEST[1:])  # a QUIC long header
    assert not stun.looks_like_stun(b"\x40" + bytes(30))  # a QUIC short header


def test_binding_roundtrip() -> None:
    tid, raw = stun.binding_request()
    req = stun.decode(raw)
    out = stun.decode(stun.binding_success(req, "203.0.113.9", 40001, key=None))
    assert out.transaction == tid and out.mapped == ("203.0.113.9", 40001)


@pytest.mark.parametrize("junk", [b"", b"\x00" * 19, REQUEST[:-1], REQUEST[:30], b"\xff" * 40])
def test_garbage(junk: bytes) -> None:
    with pytest.raises(stun.StunError):
        stun.decode(junk)
