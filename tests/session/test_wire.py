"""Frames and messages: round trips, limits, and every kind of bad input."""

from __future__ import annotations

import contextlib
import struct

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pkoikoi.session import wire
from p2pkoikoi.session.errors import RemoteProtocolError, VersionMismatchError

B32 = bytes(range(32))
B64 = bytes(range(64))

SAMPLES: list[wire.Message] = [
    wire.HelloMsg(role="host", program="0.2.0", eph=B32, pake=b"B" + B32),
    wire.HelloMsg(role="host", program="0.2.0", eph=B32, pake=b"B" + B32, pake_code=b"B" + B32),
    wire.HelloMsg(role="joiner", program="0.2.0", eph=B32, pake=b"A" + B32, via="code"),
    wire.AuthMsg(
        name="Alice", key=B32, sig=B64, rules=b"{}", fp="a" * 64, rounds=6, turn_limit=600
    ),
    wire.AuthMsg(name="Bob", key=B32, sig=B64),
    wire.AcceptMsg(fp="0" * 64),
    wire.DeclineMsg(reason="no thanks"),
    wire.DeclineMsg(reason="rules differ", expected=b'{"a":1}'),
    wire.CommitMsg(c=B32, sig=B64),
    wire.ValueMsg(r=B32),
    wire.RevealMsg(r=B32, sig=B64),
    wire.ActionMsg(seq=1, action="play 3b 3c1", hash=B32, sig=B64),
    wire.CardMsg(seq=2, kind="deck1", hash=B32, sig=B64, deck=bytes(1536)),
    wire.CardMsg(seq=3, kind="act", hash=B32, sig=B64, action="play 3b", pos=4, keys=B64),
    wire.ResignMsg(seq=7, sig=B64),
    wire.OverMsg(hash=B32, tx=B32, scores=(30, 20), winner=0, sig=B64),
    wire.OverMsg(hash=B32, tx=B32, scores=(25, 25), winner=None, sig=B64),
    wire.PingMsg(nonce=b"abc"),
    wire.PongMsg(nonce=b""),
    wire.ChatMsg(text="よろしく"),
    wire.AbortMsg(reason="bye"),
    wire.ByeMsg(),
    wire.HelloMsg(
        role="joiner", program="0.2.0", eph=B32, pake=b"A" + B32, via="resume", resume=B32
    ),
    wire.StartMsg(sig=B64),
    wire.ResumeMsg(seq=0, tx=B32, hash=B32, sig=B64),
    wire.RefuseMsg(reason="a match is in progress"),
    wire.AgainMsg(n=2, tx=B32),
    wire.NoAgainMsg(reason="later"),
]


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: type(m).__name__)
def test_message_round_trip(msg: wire.Message) -> None:
    data = wire.encode_message(msg)
    assert wire.decode_message(data) == msg
    assert len(data) < wire.MAX_FRAME


def test_every_type_sampled() -> None:
    assert {type(m) for m in SAMPLES} == set(wire.TYPE_NAMES)


def test_frame_round_trip() -> None:
    frame = wire.encode_frame(b"hello")
    assert frame == b"\x00\x00\x00\x05hello"
    assert wire.decode_frame(frame + b"\x00\x00") == (b"hello", b"\x00\x00")


def test_frame_incomplete() -> None:
    frame = wire.encode_frame(b"hello")
    for cut in range(len(frame)):
        assert wire.decode_frame(frame[:cut]) == (None, frame[:cut])


def test_oversized_length_rejected_from_header_alone() -> None:
    header = struct.pack(">I", wire.MAX_FRAME + 1)
    with pytest.raises(RemoteProtocolError, match="exceeds the maximum of 65536"):
        wire.decode_frame(header)
    with pytest.raises(ValueError):
        wire.encode_frame(bytes(wire.MAX_FRAME + 1))


def test_empty_frame_rejected() -> None:
    with pytest.raises(RemoteProtocolError, match="empty frame"):
        wire.decode_frame(b"\x00\x00\x00\x00")


def pack(obj: object) -> bytes:
    data = msgpack.packb(obj, use_bin_type=True)
    assert isinstance(data, bytes)
    return data


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\xc1", "not valid msgpack"),
        (b"", "not valid msgpack"),
        (pack([1, 2]), "not a map"),
        (
            pack({"type": "ping", "v": wire.PROTOCOL_VERSION, "nonce": b""}) + b"\x00",
            "trailing bytes",
        ),
        (pack({1: 2}), "map key is not a string|not valid msgpack"),
        (pack({b"type": "ping"}), "map key is not a string"),
        (pack({"v": wire.PROTOCOL_VERSION}), "missing or non-string 'type'"),
        (pack({"type": 3, "v": wire.PROTOCOL_VERSION}), "missing or non-string 'type'"),
        (pack({"type": "nope", "v": wire.PROTOCOL_VERSION}), "unknown type 'nope'"),
        (pack({"type": "ping", "nonce": b""}), "missing or bad field 'v'"),
        (pack({"type": "ping", "v": True, "nonce": b""}), "missing or bad field 'v'"),
        (pack({"type": "ping", "v": 4, "nonce": b""}), "protocol version 4"),
        (pack({"type": "ping", "v": wire.PROTOCOL_VERSION}), "missing field 'nonce'"),
        (
            pack({"type": "ping", "v": wire.PROTOCOL_VERSION, "nonce": "text"}),
            "field 'nonce' must be",
        ),
        (
            pack({"type": "ping", "v": wire.PROTOCOL_VERSION, "nonce": b"x" * 33}),
            "field 'nonce' must be",
        ),
        (
            pack({"type": "ping", "v": wire.PROTOCOL_VERSION, "nonce": b"", "x": 1}),
            "unknown field 'x'",
        ),
        (
            pack(
                {
                    "type": "action",
                    "v": wire.PROTOCOL_VERSION,
                    "seq": 0,
                    "action": "stop",
                    "hash": B32,
                    "sig": B64,
                }
            ),
            "field 'seq'",
        ),
        (
            pack(
                {
                    "type": "action",
                    "v": wire.PROTOCOL_VERSION,
                    "seq": True,
                    "action": "stop",
                    "hash": B32,
                    "sig": B64,
                }
            ),
            "field 'seq'",
        ),
        (
            pack(
                {
                    "type": "action",
                    "v": wire.PROTOCOL_VERSION,
                    "seq": 1.0,
                    "action": "stop",
                    "hash": B32,
                    "sig": B64,
                }
            ),
            "field 'seq'",
        ),
        (
            pack(
                {
                    "type": "action",
                    "v": wire.PROTOCOL_VERSION,
                    "seq": 1,
                    "action": "stop",
                    "hash": B64,
                    "sig": B64,
                }
            ),
            "field 'hash' must be 32 bytes",
        ),
        (pack({"type": "chat", "v": wire.PROTOCOL_VERSION, "text": "x" * 201}), "field 'text'"),
        (
            pack(
                {
                    "type": "hello",
                    "v": wire.PROTOCOL_VERSION,
                    "role": "boss",
                    "program": "x",
                    "eph": B32,
                }
            ),
            "field 'role'",
        ),
        (
            pack(
                {
                    "type": "over",
                    "v": wire.PROTOCOL_VERSION,
                    "hash": B32,
                    "tx": B32,
                    "scores": [1],
                    "winner": 0,
                    "sig": B64,
                }
            ),
            "field 'scores'",
        ),
        (
            pack(
                {
                    "type": "over",
                    "v": wire.PROTOCOL_VERSION,
                    "hash": B32,
                    "tx": B32,
                    "scores": [1, 2],
                    "winner": 2,
                    "sig": B64,
                }
            ),
            "field 'winner'",
        ),
        (b"\x81\xa4type\xd4\x05\x00", "extension type|not valid msgpack"),
        (b"\x81\xa4type\xd6\xff\x00\x00\x00\x00", "extension type|not valid msgpack"),
        (b"\xdb" + struct.pack(">I", 100000) + b"x" * 100000, "not valid msgpack"),
    ],
)
def test_bad_messages(payload: bytes, message: str) -> None:
    with pytest.raises(RemoteProtocolError, match=message):
        wire.decode_message(payload)


def test_hello_version_mismatch_is_specific() -> None:
    v = wire.PROTOCOL_VERSION
    payload = pack({"type": "hello", "v": v + 1, "role": "host", "future": True})
    with pytest.raises(VersionMismatchError, match=f"version {v + 1}, this one speaks version {v}"):
        wire.decode_message(payload)
    # a release that speaks version 1 (p2pkoikoi 0.1): one line naming both versions
    old = pack({"type": "hello", "v": 1, "role": "joiner", "program": "0.1.0", "eph": B32})
    with pytest.raises(VersionMismatchError) as info:
        wire.decode_message(old)
    assert "version 1" in str(info.value) and f"version {v}" in str(info.value)
    assert "\n" not in str(info.value)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_raise_only_protocol_errors(data: bytes) -> None:
    with contextlib.suppress(RemoteProtocolError):
        wire.decode_message(data)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SAMPLES), st.data())
def test_mutated_messages_raise_only_protocol_errors(
    msg: wire.Message, data: st.DataObject
) -> None:
    raw = bytearray(wire.encode_message(msg))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    with contextlib.suppress(RemoteProtocolError):
        wire.decode_message(bytes(raw))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=10)
    | st.binary(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(wire.TYPE_NAMES.values())),
    st.dictionaries(
        st.sampled_from(
            [
                "v",
                "seq",
                "action",
                "hash",
                "sig",
                "nonce",
                "text",
                "role",
                "eph",
                "scores",
                "winner",
                "name",
                "key",
                "pake",
                "pake_code",
                "via",
                "turn_limit",
            ]
        ),
        json_values,
        max_size=6,
    ),
)
def test_wrong_typed_fields_raise_only_protocol_errors(
    mtype: str, fields: dict[str, object]
) -> None:
    with contextlib.suppress(RemoteProtocolError):
        wire.decode_message(pack({"type": mtype, **fields}))


def test_again_needs_a_match_number_of_two_or_more() -> None:
    bad = wire.encode_message(wire.AgainMsg(n=1, tx=B32))
    with pytest.raises(RemoteProtocolError, match="bad again message"):
        wire.decode_message(bad)
