"""The protocol vectors in protocol/vectors: recomputed from the code and checked independently."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from p2pkoikoi.session import InviteError, channel, crypto, decode_code, decode_invite, wire
from p2pkoikoi.session.codes.pake import Pake
from p2pkoikoi.session.errors import RemoteProtocolError
from p2pkoikoi.session.records.record import record_from_dict
from p2pkoikoi.session.verify.check import verify_record

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
sys.path.insert(0, str(VECTORS))  # the makers live beside the vectors, outside the package
from make import FILES, build  # noqa: E402


def load(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / f"{name}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", FILES)
def test_vectors_match_the_code(name: str) -> None:
    assert load(name) == json.loads(json.dumps(build(name))), (
        f"protocol/vectors/{name}.json is stale: run python protocol/vectors/make.py"
    )


def test_framing() -> None:
    v = load("framing")
    for case in v["valid"]:
        payload, frame = bytes.fromhex(case["payload"]), bytes.fromhex(case["frame"])
        assert wire.decode_frame(frame) == (payload, b"")
    for case in v["invalid_headers"]:
        with pytest.raises(RemoteProtocolError, match=case["why"]):
            wire.decode_frame(bytes.fromhex(case["header"]))


def test_messages_decode() -> None:
    for case in load("messages")["messages"]:
        msg = wire.decode_message(bytes.fromhex(case["msgpack"]))
        assert wire.TYPE_NAMES[type(msg)] == case["fields"]["type"]
        assert wire.encode_message(msg).hex() == case["msgpack"]


def test_invites() -> None:
    v = load("invite")
    for case in v["valid"]:
        inv = decode_invite(case["invite"])
        assert [(a.host, a.port) for a in inv.addresses] == [
            (a["host"], a["port"]) for a in case["addresses"]
        ]
        assert inv.secret.hex() == case["secret"]
        assert decode_invite(case["read_aloud"]) == inv
    for case in v["typed"]:
        assert str(decode_invite(case["typed"])) == case["invite"]
    for case in v["invalid"]:
        with pytest.raises(InviteError) as info:
            decode_invite(case["invite"])
        assert str(info.value) == case["error"]


def test_codes() -> None:
    v = load("code")
    words = load("wordlist")
    for case in v["valid"]:
        code = decode_code(case["code"])
        secret = bytes.fromhex(case["secret"])
        assert (code.number, code.secret) == (case["number"], secret)
        # independently of the code module: word 1 from the odd list, word 2 from the even one
        assert (
            case["code"] == f"{case['number']}-{words['odd'][secret[0]]}-{words['even'][secret[1]]}"
        )
        password = b"p2pkoikoi/v2/code\x00" + case["code"].encode()
        assert case["pake_password"]["hex"] == password.hex()
    for case in v["typed"]:
        assert str(decode_code(case["typed"])) == case["code"]
    for case in v["invalid"]:
        with pytest.raises(InviteError) as info:
            decode_code(case["code"])
        assert str(info.value) == case["error"]


def test_key_schedule_independently() -> None:
    v = load("crypto")
    ks = v["key_schedule"]
    host = channel.x25519_private(bytes.fromhex(ks["host_eph_private"]))
    joiner = channel.x25519_private(bytes.fromhex(ks["joiner_eph_private"]))
    h0 = channel.handshake_hash(
        bytes.fromhex(ks["host_hello_payload"]), bytes.fromhex(ks["joiner_hello_payload"])
    )
    assert h0.hex() == ks["h0"]
    s1 = channel.shared_secret(host, channel.x25519_public(joiner))
    s2 = channel.shared_secret(joiner, channel.x25519_public(host))
    assert s1 == s2 and s1.hex() == ks["x25519_shared"]
    px = ks["pake"]
    host_pake = Pake("host", bytes.fromhex(px["password"]), bytes.fromhex(px["host_entropy_seed"]))
    joiner_pake = Pake(
        "joiner", bytes.fromhex(px["password"]), bytes.fromhex(px["joiner_entropy_seed"])
    )
    assert (host_pake.message.hex(), joiner_pake.message.hex()) == (
        px["host_message"],
        px["joiner_message"],
    )
    pake_key = host_pake.finish(joiner_pake.message)
    assert pake_key == joiner_pake.finish(host_pake.message)
    assert pake_key.hex() == ks["pake_key"] == px["key"]
    keys = channel.derive_keys(pake_key, s1, h0)
    assert [k.hex() for k in keys] == [ks["key_host_to_joiner"], ks["key_joiner_to_host"]]
    assert channel.derive_resume_secret(pake_key, s1, h0).hex() == ks["resume_secret"]
    ch = channel.Channel(bytes.fromhex(v["aead"]["key"]))
    for f in v["aead"]["frames"]:
        assert ch.open(bytes.fromhex(f["ciphertext"])).hex() == f["plaintext"]
    cr = v["commit_reveal"]
    t = bytes.fromhex(cr["transcript"])
    hv, jv = bytes.fromhex(cr["host_value"]), bytes.fromhex(cr["joiner_value"])
    assert crypto.commitment(t, hv).hex() == cr["commitment"]
    assert crypto.derive_seed(hv, jv, t).hex() == cr["match_seed"]
    ident = v["identity"]
    pub = bytes.fromhex(ident["public"])
    assert crypto.fingerprint(pub) == ident["fingerprint"]
    t1 = bytes.fromhex(v["transcript"]["t1"])
    action = ident["action_sig"]
    assert action["signed"] == (b"p2pkoikoi/v2/sig\x00" + t1).hex()
    assert crypto.verify_sig(pub, bytes.fromhex(action["sig"]), bytes.fromhex(action["signed"]))
    for name, tag in (
        ("commit_sig", b"p2pkoikoi/v2/commit-sig\x00"),
        ("start_sig", b"p2pkoikoi/v2/start\x00"),
    ):
        case = ident[name]
        transcript = next(value for key, value in case.items() if key.startswith("transcript"))
        assert case["signed"] == (tag + bytes.fromhex(transcript)).hex()
        assert crypto.verify_sig(pub, bytes.fromhex(case["sig"]), bytes.fromhex(case["signed"]))

    # the forfeit signature and the resign entries, rebuilt from the spec's bytes
    def lp(b: bytes) -> bytes:
        return len(b).to_bytes(4, "big") + b

    ff = ident["forfeit_sig"]
    body = lp(b"forfeit") + lp(ff["seat"].to_bytes(8, "big")) + lp(ff["reason"].encode())
    tx = bytes.fromhex(ff["transcript"])
    assert ff["signed"] == (b"p2pkoikoi/v2/forfeit\x00" + tx + body).hex()
    assert crypto.verify_sig(pub, bytes.fromhex(ff["sig"]), bytes.fromhex(ff["signed"]))
    plain = lp(b"resign") + lp((9).to_bytes(8, "big")) + lp((1).to_bytes(8, "big")) + lp(bytes(32))
    assert v["resign_entries"]["plain"] == plain.hex()
    assert v["resign_entries"]["time"] == (plain + lp(b"time")).hex()


def test_pake_vectors() -> None:
    v = load("pake")
    for name in ("code", "invite"):
        case = v[name]
        password = bytes.fromhex(case["password"])
        host = Pake("host", password, bytes.fromhex(case["host_entropy_seed"]))
        joiner = Pake("joiner", password, bytes.fromhex(case["joiner_entropy_seed"]))
        assert (host.scalar, joiner.scalar) == (
            int(case["host_scalar_y"]),
            int(case["joiner_scalar_x"]),
        )
        assert host.message.hex() == case["host_message"] and host.message[:1] == b"B"
        assert joiner.message.hex() == case["joiner_message"] and joiner.message[:1] == b"A"
        assert host.finish(joiner.message).hex() == case["key"]
    wrong = v["wrong_code"]
    assert wrong["host_key"] != wrong["joiner_key"]


def test_transcript_frames_decrypt_and_record_verifies() -> None:
    v = load("transcript")
    frames = v["frames"]
    hellos = {f["from"]: bytes.fromhex(f["plaintext"]) for f in frames if "plaintext" in f}
    h0 = channel.handshake_hash(hellos["host"], hellos["joiner"])
    entropy = {r: bytes.fromhex(v["inputs"][r]["entropy"]) for r in ("host", "joiner")}
    eph = channel.x25519_private(entropy["host"][:32])
    peer = wire.decode_message(hellos["joiner"])
    assert isinstance(peer, wire.HelloMsg)
    shared = channel.shared_secret(eph, peer.eph)
    # the reference implementation's PAKE randomness (inputs.entropy_layout)
    seed = crypto.sha256(b"p2pkoikoi/v2/pake-seed\x00", entropy["host"]) + b"main"
    password = channel.invite_password(bytes.fromhex(v["inputs"]["invite_secret"]))
    pake_key = Pake("host", password, seed).finish(peer.pake)
    k_h2j, k_j2h = channel.derive_keys(pake_key, shared, h0)
    channels = {"host": channel.Channel(k_h2j), "joiner": channel.Channel(k_j2h)}
    types = []
    for f in frames:
        if "plaintext" in f:
            continue
        payload, rest = wire.decode_frame(bytes.fromhex(f["frame"]))
        assert payload is not None and rest == b""
        assert channels[f["from"]].counter == f["counter"]
        types.append(wire.TYPE_NAMES[type(wire.decode_message(channels[f["from"]].open(payload)))])
    assert types[:7] == ["auth", "auth", "accept", "commit", "value", "reveal", "start"]
    assert "action" in types and "resign" in types and types.count("over") == 2
    rec = record_from_dict(v["record"])
    assert rec.session_id == h0
    assert verify_record(rec).ok
    t = crypto.transcript_start(h0)
    for step in v["transcript_chain"]:
        t = crypto.sha256(t, bytes.fromhex(step["entry"]))
        assert t.hex() == step["t"]
    assert rec.result is not None and rec.result.transcript_hash == t


def test_plaintext_abort_frame() -> None:
    case = load("messages")["plaintext_abort_frame"]
    payload, rest = wire.decode_frame(bytes.fromhex(case["frame"]))
    assert payload is not None and rest == b""
    msg = wire.decode_message(payload)
    assert isinstance(msg, wire.AbortMsg) and "code does not match" in msg.reason


def test_rematch_vector_records_verify_and_chain() -> None:
    v = load("rematch")
    first, second = (record_from_dict(r) for r in v["records"])
    assert verify_record(first).complete and verify_record(second).complete
    assert first.session_id == second.session_id is not None
    assert first.result is not None and second.previous == first.result.transcript_hash
    assert second.match_number == 2
    # T0 of the second match, recomputed from its definition (README section 13)
    entry = b"".join(
        len(b).to_bytes(4, "big") + b
        for b in (b"rematch", (2).to_bytes(8, "big"), first.result.transcript_hash)
    )
    assert entry.hex() == v["second_match_t0"]["entry"]
    t0 = crypto.sha256(b"p2pkoikoi/v2/rematch\x00", second.session_id or b"", entry)
    assert t0.hex() == v["second_match_t0"]["t0"]
    parts = [f["part"] for f in v["frames"]]
    assert parts.index("rematch agreement") < parts.index("second match")
