"""Every bad input to a session: each gets its specific error class and message."""

from __future__ import annotations

import contextlib
import struct

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pkoikoi.engine import Action, get_preset
from p2pkoikoi.session import (
    CheatingError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    Resign,
    SendAction,
    Session,
    State,
    VersionMismatchError,
    WaitingFor,
    crypto,
    wire,
)
from p2pkoikoi.session.testing import det_bytes, drain, forge, make_pair, run_pair

RULES = get_preset("online")


def forge_action(sender: Session, seq: int, text: str, h: bytes | None = None) -> bytes:
    m = sender.match
    assert m is not None
    if h is None:
        h = m.apply(Action.parse(text))[0].state_hash()
    t = crypto.absorb(sender._transcript, "action", seq, sender.our_seat, text, h)
    sig = crypto.sign(sender._key, crypto.sig_message(t))
    return forge(sender, wire.ActionMsg(seq=seq, action=text, hash=h, sig=sig))


def playing() -> tuple[Session, Session, Session, Session]:
    """(host, joiner, actor, other) at the first decision of the match."""
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    assert host.state is State.PLAY
    actor, other = (host, joiner) if host.match and host.match.to_act == 0 else (joiner, host)
    return host, joiner, actor, other


def expect(session: Session, data: bytes, exc: type[Exception], match: str) -> None:
    session.receive_data(data)
    with pytest.raises(exc, match=match):
        drain(session)
    assert session.state is State.ERROR
    # the error stays set
    with pytest.raises(exc, match=match):
        session.next_event()
    with pytest.raises(LocalProtocolError, match="has failed"):
        session.send(SendAction("stop"))


# --------------------------------------------------------------------------- frames
def test_truncated_frame_at_eof() -> None:
    host, joiner = make_pair(RULES)
    hello = host.data_to_send()
    joiner.receive_data(hello[:-3])
    assert drain(joiner) == []
    joiner.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="in the middle of a frame"):
        drain(joiner)


def test_oversized_frame_rejected_before_buffering() -> None:
    _, joiner = make_pair(RULES)
    expect(joiner, struct.pack(">I", 10**9), RemoteProtocolError, "exceeds the maximum")


def test_garbage_hello() -> None:
    _, joiner = make_pair(RULES)
    expect(joiner, wire.encode_frame(b"\xc1garbage"), RemoteProtocolError, "not valid msgpack")


def test_wrong_type_before_hello() -> None:
    _, joiner = make_pair(RULES)
    frame = wire.encode_frame(wire.encode_message(wire.PingMsg(nonce=b"")))
    expect(joiner, frame, RemoteProtocolError, "expected hello, got ping")


def test_wrong_field_type_in_hello() -> None:
    _, joiner = make_pair(RULES)
    payload = msgpack.packb(
        {"type": "hello", "v": wire.PROTOCOL_VERSION, "role": "host", "program": 5, "eph": b""}
    )
    expect(joiner, wire.encode_frame(payload), RemoteProtocolError, "field 'program'")


def test_version_mismatch() -> None:
    _, joiner = make_pair(RULES)
    payload = msgpack.packb(
        {"type": "hello", "v": wire.PROTOCOL_VERSION + 1, "role": "host", "anything": "new"}
    )
    expect(joiner, wire.encode_frame(payload), VersionMismatchError, "protocol version mismatch")


def test_older_peer_is_refused_naming_both_versions() -> None:
    host, _ = make_pair(RULES)
    old = msgpack.packb(
        {"type": "hello", "v": 1, "role": "joiner", "program": "0.1.0", "eph": bytes(32)}
    )
    expect(host, wire.encode_frame(old), VersionMismatchError, "speaks version 1, this one")
    # said to the peer in plaintext: it has no keys
    out = host.data_to_send()
    payload, rest = wire.decode_frame(out[len(wire.encode_frame(host._hello_payload)) :])
    assert payload is not None and rest == b""
    abort = wire.decode_message(payload)
    assert isinstance(abort, wire.AbortMsg) and f"version {wire.PROTOCOL_VERSION}" in abort.reason


def test_both_claim_host() -> None:
    host, _ = make_pair(RULES)
    other, _ = make_pair(RULES, label="x")
    expect(host, other.data_to_send(), RemoteProtocolError, "both players claim to be the host")


def test_wrong_invite_secret() -> None:
    host, joiner = make_pair(RULES, joiner_secret=det_bytes("wrong", 16))
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    expect(host, joiner.data_to_send(), RemoteProtocolError, "does not hold this invite's secret")


def _handshaken() -> tuple[Session, Session, bytes, bytes]:
    host, joiner = make_pair(RULES)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    host.receive_data(joiner.data_to_send())
    drain(host)
    return host, joiner, host.data_to_send(), joiner.data_to_send()


def test_modified_frame_fails_mac() -> None:
    host, joiner, h_out, _ = _handshaken()
    bad = bytearray(h_out)
    bad[-1] ^= 1
    # the first encrypted frame: failing it means the wrong secret (or tampering)
    expect(joiner, bytes(bad), RemoteProtocolError, "first message does not decrypt")


def test_replayed_frame() -> None:
    host, joiner, _, _ = playing()
    ping = forge(host, wire.PingMsg(nonce=b"1"))
    joiner.receive_data(ping)
    drain(joiner)
    expect(joiner, ping, RemoteProtocolError, "modified, replayed or reordered")


def test_reordered_frames() -> None:
    host, joiner, _, _ = playing()
    a = forge(host, wire.PingMsg(nonce=b"1"))
    b = forge(host, wire.PingMsg(nonce=b"2"))
    expect(joiner, b + a, RemoteProtocolError, "modified, replayed or reordered")


def test_abort_sent_to_peer_after_error() -> None:
    host, joiner, _, _ = playing()
    joiner.receive_data(forge(host, wire.PingMsg(nonce=b"1"))[:-1] + b"\x00")
    with pytest.raises(RemoteProtocolError):
        drain(joiner)
    host.receive_data(joiner.data_to_send())
    with pytest.raises(RemoteProtocolError, match="other player's program stopped: frame failed"):
        drain(host)


# --------------------------------------------------------------------------- seeding
def test_wrong_reveal_is_cheating() -> None:
    host, joiner, h_out, _ = _handshaken()
    joiner.receive_data(h_out)  # the host's auth
    drain(joiner)
    host.receive_data(joiner.data_to_send())  # the accept
    drain(host)
    assert host.waiting_for is WaitingFor.JOINER_VALUE
    host._host_value = bytes(32)  # the host changes its value after committing
    joiner.receive_data(host.data_to_send())  # the commitment
    drain(joiner)
    assert joiner.waiting_for is WaitingFor.REVEAL
    host.receive_data(joiner.data_to_send())  # the joiner's value
    drain(host)
    expect(joiner, host.data_to_send(), CheatingError, "reveal does not open its commitment")


def test_unexpected_phase_message() -> None:
    host, joiner, _, _ = playing()
    expect(
        joiner,
        forge(host, wire.CommitMsg(c=bytes(32), sig=bytes(64))),
        RemoteProtocolError,
        "unexpected commit message from peer during play",
    )


# --------------------------------------------------------------------------- play
def test_illegal_action() -> None:
    _, _, actor, other = playing()
    expect(
        other, forge_action(actor, 1, "koikoi", bytes(32)), RemoteProtocolError, "illegal action 1"
    )


def test_malformed_action_text() -> None:
    _, _, actor, other = playing()
    expect(
        other, forge_action(actor, 1, "dance", bytes(32)), RemoteProtocolError, "malformed action 1"
    )


def test_non_canonical_action_text() -> None:
    _, _, actor, other = playing()
    assert actor.match is not None
    text = "  " + str(actor.match.legal_actions()[0]).upper()
    expect(
        other, forge_action(actor, 1, text, bytes(32)), RemoteProtocolError, "not in canonical form"
    )


def test_wrong_state_hash() -> None:
    _, _, actor, other = playing()
    assert actor.match is not None
    text = str(actor.match.legal_actions()[0])
    expect(
        other,
        forge_action(actor, 1, text, bytes(32)),
        RemoteProtocolError,
        "state hash mismatch after action 1",
    )


def test_wrong_seq() -> None:
    _, _, actor, other = playing()
    assert actor.match is not None
    text = str(actor.match.legal_actions()[0])
    expect(
        other,
        forge_action(actor, 3, text),
        RemoteProtocolError,
        "wrong sequence number on action: expected 1, got 3",
    )


def test_out_of_turn() -> None:
    _, _, actor, other = playing()
    assert actor.match is not None
    text = str(actor.match.legal_actions()[0])
    expect(
        actor,
        forge_action(other, 1, text, bytes(32)),
        RemoteProtocolError,
        "sent action 1 out of turn",
    )


def test_forged_action_signature() -> None:
    _, _, actor, other = playing()
    assert actor.match is not None
    action = actor.match.legal_actions()[0]
    h = actor.match.apply(action)[0].state_hash()
    frame = forge(actor, wire.ActionMsg(seq=1, action=str(action), hash=h, sig=bytes(64)))
    expect(other, frame, CheatingError, "signature on action 1 is invalid")


def test_forged_resign_signature() -> None:
    _, _, actor, other = playing()
    expect(
        other,
        forge(actor, wire.ResignMsg(seq=1, sig=bytes(64))),
        CheatingError,
        "signature on resignation 1",
    )


def test_lying_over_message() -> None:
    _, _, actor, other = playing()
    # play one legal action so both have a transcript, then actor claims the match is over
    frame = forge(
        actor, wire.OverMsg(hash=bytes(32), tx=bytes(32), scores=(1, 2), winner=0, sig=bytes(64))
    )
    expect(other, frame, RemoteProtocolError, "unexpected over message")


# --------------------------------------------------------------------------- fuzzing
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_plaintext_frames_before_hello(data: bytes) -> None:
    _, joiner = make_pair(RULES)
    joiner.receive_data(data)
    with contextlib.suppress(ProtocolError):
        drain(joiner)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=1, max_size=300))
def test_random_encrypted_payloads_in_play(payload: bytes) -> None:
    """A peer holding the keys sends random plaintext: only protocol errors, or events."""
    _, _, actor, other = playing()
    assert actor._send is not None
    other.receive_data(wire.encode_frame(actor._send.seal(payload)))
    with contextlib.suppress(RemoteProtocolError):
        drain(other)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_stream(data: st.DataObject) -> None:
    """Flip, cut or duplicate bytes of a real handshake stream."""
    host, joiner = make_pair(RULES)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    stream = bytearray(joiner.data_to_send())
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.sampled_from(["flip", "cut", "dup"]))
        i = data.draw(st.integers(0, len(stream) - 1))
        if op == "flip":
            stream[i] ^= data.draw(st.integers(1, 255))
        elif op == "cut":
            del stream[i : i + data.draw(st.integers(1, 40))]
        else:
            stream[i:i] = stream[i : i + data.draw(st.integers(1, 40))]
        if not stream:
            break
    host.receive_data(bytes(stream))
    host.receive_data(b"")
    with contextlib.suppress(ProtocolError):
        drain(host)


def test_oversized_frame_payload_is_not_buffered() -> None:
    _, joiner = make_pair(RULES)
    joiner.receive_data(struct.pack(">I", wire.MAX_FRAME + 1) + bytes(50_000))
    assert len(joiner._in) == 4
    with pytest.raises(RemoteProtocolError, match="exceeds the maximum"):
        drain(joiner)


def test_flood_without_reading_events() -> None:
    _, joiner = make_pair(RULES)
    frame = wire.encode_frame(bytes(wire.MAX_FRAME))
    for _ in range(6):
        joiner.receive_data(frame)
    assert len(joiner._in) == 0  # a flood is dropped, not buffered
    # refused as a flood, not as the corrupt frames it happens to hold
    with pytest.raises(RemoteProtocolError, match="peer sent too much data"):
        drain(joiner)


def _resign_with_lying_over(**lie: object) -> tuple[Session, bytes]:
    """The actor resigns; its final ``over`` message is replaced by one with ``lie``."""
    _, _, actor, other = playing()
    assert actor._send is not None
    start = actor._send.counter
    data = actor.send(wire_resign())
    first, rest = wire.decode_frame(data)
    assert first is not None and rest
    assert actor._result is not None
    r = actor._result
    fields: dict[str, object] = {
        "hash": r.final_state_hash,
        "tx": r.transcript_hash,
        "scores": r.scores,
        "winner": r.winner,
    }
    fields.update(lie)
    sig = crypto.sign(actor._key, crypto.final_message(fields["tx"], fields["hash"]))  # type: ignore[arg-type]
    actor._send.counter = start + 1
    forged = forge(actor, wire.OverMsg(sig=sig, **fields))  # type: ignore[arg-type]
    return other, wire.encode_frame(first) + forged


def wire_resign() -> Resign:
    return Resign()


def test_over_with_other_scores() -> None:
    other, data = _resign_with_lying_over(scores=(999, 0))
    expect(other, data, RemoteProtocolError, "reports a different result")


def test_over_with_other_transcript() -> None:
    other, data = _resign_with_lying_over(tx=bytes(32))
    expect(other, data, RemoteProtocolError, "final transcripts differ")


def test_over_with_other_state_hash() -> None:
    other, data = _resign_with_lying_over(hash=bytes(32))
    expect(other, data, RemoteProtocolError, "final state hashes differ")


def test_over_with_forged_signature() -> None:
    _, _, actor, other = playing()
    assert actor._send is not None
    start = actor._send.counter
    first, _ = wire.decode_frame(actor.send(wire_resign()))
    assert first is not None and actor._result is not None
    r = actor._result
    actor._send.counter = start + 1
    forged = forge(
        actor,
        wire.OverMsg(
            hash=r.final_state_hash,
            tx=r.transcript_hash,
            scores=r.scores,
            winner=r.winner,
            sig=bytes(64),
        ),
    )
    expect(other, wire.encode_frame(first) + forged, CheatingError, "final signature is invalid")


def test_ping_before_handshake_is_local_error() -> None:
    from p2pkoikoi.session import Ping

    host, _ = make_pair(RULES)
    with pytest.raises(LocalProtocolError, match="before the handshake"):
        host.send(Ping(b"x"))
