"""Build the protocol test vectors in ``protocol/vectors/`` (session layer).

``python -m p2pkoikoi.session.vectors [DIR]`` writes them; the tests rebuild
them and compare with the files, so the files and the code cannot drift apart.
Every value is deterministic: keys and random values derive from labels.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path
from typing import Any

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import crypto, wire
from p2pkoikoi.session.errors import InviteError
from p2pkoikoi.session.events import Resign, SendAction
from p2pkoikoi.session.invite import decode_invite, encode_invite
from p2pkoikoi.session.journal import JournalWriter, decode_journal, encode_entry
from p2pkoikoi.session.record import encode_record, record_from_dict, record_to_dict
from p2pkoikoi.session.testing import (
    SECRET,
    det_bytes,
    det_key,
    drain,
    make_pair,
    random_chooser,
)

FILES = ("framing", "messages", "invite", "crypto", "transcript", "records")


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return value


def framing() -> dict[str, Any]:
    cases = [b"\x80", b"hello", bytes(300)]
    return {
        "description": "frame = u32 big-endian payload length || payload; 1 <= length <= max",
        "max_frame": wire.MAX_FRAME,
        "valid": [{"payload": p.hex(), "frame": wire.encode_frame(p).hex()} for p in cases],
        "invalid_headers": [
            {"header": struct.pack(">I", 0).hex(), "why": "empty frame"},
            {"header": struct.pack(">I", wire.MAX_FRAME + 1).hex(), "why": "exceeds the maximum"},
            {"header": "ffffffff", "why": "exceeds the maximum"},
        ],
    }


def _samples() -> list[wire.Message]:
    b32, b64 = bytes(range(32)), bytes(range(64))
    return [
        wire.HelloMsg(role="host", program="0.1.0", eph=b32),
        wire.HelloMsg(role="joiner", program="0.1.0", eph=b32, resume=b32),
        wire.AuthMsg(name="Alice", key=b32, sig=b64, rules=b"{}", fp="ab" * 32, rounds=6),
        wire.AuthMsg(name="Bob", key=b32, sig=b64),
        wire.AcceptMsg(fp="ab" * 32),
        wire.DeclineMsg(reason="rules differ", expected=b"{}"),
        wire.CommitMsg(c=b32),
        wire.ValueMsg(r=b32),
        wire.RevealMsg(r=b32),
        wire.ActionMsg(seq=1, action="play 3b 3c1", hash=b32, sig=b64),
        wire.ResignMsg(seq=9, sig=b64),
        wire.OverMsg(hash=b32, tx=b32, scores=(31, 19), winner=0, sig=b64),
        wire.PingMsg(nonce=b"\x01\x02"),
        wire.PongMsg(nonce=b"\x01\x02"),
        wire.ChatMsg(text="よろしく"),
        wire.AbortMsg(reason="state hash mismatch"),
        wire.ByeMsg(),
        wire.ResumeMsg(seq=7, tx=b32, hash=b32, sig=b64),
        wire.RefuseMsg(reason="this match already has its two players"),
    ]


def messages() -> dict[str, Any]:
    out = []
    for msg in _samples():
        fields = {"type": wire.TYPE_NAMES[type(msg)]}
        for name in msg.__dataclass_fields__:
            value = getattr(msg, name)
            if value is not None or name == "winner":
                fields[name] = _jsonable(value)
        out.append({"fields": fields, "msgpack": wire.encode_message(msg).hex()})
    return {
        "description": "each message type: its fields (bytes as {'hex': ...}) and the msgpack "
        "map an encoder writes (keys sorted, absent optional fields omitted, bytes as bin)",
        "messages": out,
    }


def invite() -> dict[str, Any]:
    secret = bytes(range(16))
    valid: list[dict[str, Any]] = []
    for host, port in (("192.0.2.7", 7777), ("2001:db8::42", 443), ("koi-host.example", 1)):
        text = encode_invite(host, port, secret)
        valid.append({"host": host, "port": port, "secret": secret.hex(), "invite": text})
    good = valid[0]["invite"]
    invalid = []
    for text in (
        good[:-1] + ("a" if good[-1] != "a" else "b"),
        good.replace("7777", "7778"),
        "koi2-" + good[5:],
        good[:20],
    ):
        try:
            decode_invite(text)
        except InviteError as exc:
            invalid.append({"invite": text, "error": str(exc)})
    return {
        "description": "koi1-HOST-PORT-SECRET(base32)-CHECK; check = first 4 base32 chars of "
        "SHA-256('p2pkoikoi/v1/invite\\0' || text before the last hyphen)",
        "valid": valid,
        "invalid": invalid,
    }


def crypto_vectors() -> dict[str, Any]:
    host_eph = crypto.x25519_private(det_bytes("vec/eph/host", 32))
    join_eph = crypto.x25519_private(det_bytes("vec/eph/joiner", 32))
    host_hello = wire.encode_message(
        wire.HelloMsg(role="host", program="0.1.0", eph=crypto.x25519_public(host_eph))
    )
    join_hello = wire.encode_message(
        wire.HelloMsg(role="joiner", program="0.1.0", eph=crypto.x25519_public(join_eph))
    )
    h0 = crypto.handshake_hash(host_hello, join_hello)
    shared = crypto.shared_secret(host_eph, crypto.x25519_public(join_eph))
    psk = bytes(range(16))
    k_h2j, k_j2h = crypto.derive_keys(psk, shared, h0)
    ch = crypto.Channel(k_h2j)
    sealed = [ch.seal(b"first"), ch.seal(b"second")]
    t0 = crypto.transcript_start(h0)
    t1 = crypto.absorb(t0, "accept", "ab" * 32)
    hv, jv = det_bytes("vec/host-value", 32), det_bytes("vec/joiner-value", 32)
    ident = det_key("vec/identity")
    pub = crypto.public_bytes(ident)
    return {
        "description": "key schedule, AEAD, transcript, commitment, seed, identity fingerprint",
        "key_schedule": {
            "host_eph_private": det_bytes("vec/eph/host", 32).hex(),
            "joiner_eph_private": det_bytes("vec/eph/joiner", 32).hex(),
            "host_hello_payload": host_hello.hex(),
            "joiner_hello_payload": join_hello.hex(),
            "h0": h0.hex(),
            "x25519_shared": shared.hex(),
            "psk": psk.hex(),
            "key_host_to_joiner": k_h2j.hex(),
            "key_joiner_to_host": k_j2h.hex(),
        },
        "aead": {
            "key": k_h2j.hex(),
            "frames": [
                {
                    "counter": 0,
                    "nonce": crypto.nonce(0).hex(),
                    "plaintext": b"first".hex(),
                    "ciphertext": sealed[0].hex(),
                },
                {
                    "counter": 1,
                    "nonce": crypto.nonce(1).hex(),
                    "plaintext": b"second".hex(),
                    "ciphertext": sealed[1].hex(),
                },
            ],
        },
        "transcript": {
            "h0": h0.hex(),
            "t0": t0.hex(),
            "entry": {
                "kind": "accept",
                "fields": ["ab" * 32],
                "bytes": crypto.entry("accept", "ab" * 32).hex(),
            },
            "t1": t1.hex(),
            "int_field_example": {"value": 5, "lp": crypto.lp(5).hex()},
        },
        "commit_reveal": {
            "transcript": t1.hex(),
            "host_value": hv.hex(),
            "commitment": crypto.commitment(t1, hv).hex(),
            "joiner_value": jv.hex(),
            "match_seed": crypto.derive_seed(hv, jv, t1).hex(),
        },
        "identity": {
            "ed25519_private": det_bytes("key/vec/identity", 32).hex(),
            "public": pub.hex(),
            "fingerprint": crypto.fingerprint(pub),
            "sig_over_t1": crypto.sign(ident, crypto.sig_message(t1)).hex(),
        },
    }


def transcript(n_actions: int = 10) -> dict[str, Any]:
    """A whole short match: handshake, commit-reveal, actions, a resignation, the end."""
    rules = get_preset("online")
    host, joiner = make_pair(rules, label="vectors")
    sides = (host, joiner)
    frames: list[dict[str, Any]] = []
    counters = [0, 0]

    def deliver(sender: int, data: bytes) -> None:
        rest = data
        while rest:
            payload, rest = wire.decode_frame(rest)
            assert payload is not None
            entry: dict[str, Any] = {"from": ("host", "joiner")[sender], "frame": None}
            if not any(f["from"] == entry["from"] for f in frames):
                entry["plaintext"] = payload.hex()
            else:
                entry["counter"] = counters[sender]
                counters[sender] += 1
            entry["frame"] = wire.encode_frame(payload).hex()
            frames.append(entry)
        sides[1 - sender].receive_data(data)
        drain(sides[1 - sender])

    deliver(0, host.data_to_send())
    deliver(1, joiner.data_to_send())
    for _ in range(6):
        for s in (0, 1):
            data = sides[s].data_to_send()
            if data:
                deliver(s, data)
    choose = random_chooser(7)
    for _ in range(n_actions):
        m = host.match
        assert m is not None and m.to_act is not None
        deliver(m.to_act, sides[m.to_act].send(SendAction(choose(m))))
    m = host.match
    assert m is not None and m.to_act is not None
    deliver(m.to_act, sides[m.to_act].send(Resign()))
    for s in (0, 1):
        data = sides[s].data_to_send()
        if data:
            deliver(s, data)
    rec = host.record()
    assert rec == joiner.record() and rec.is_complete
    chain = []
    t = crypto.transcript_start(rec.session_id or b"")
    assert rec.host and rec.joiner and rec.rules and rec.commitment
    assert rec.joiner_value and rec.host_value
    steps: list[tuple[str, tuple[crypto.Field, ...]]] = [
        ("auth", ("host", rec.host.name, rec.host.key, rules.encode())),
        ("auth", ("joiner", rec.joiner.name, rec.joiner.key, b"")),
        ("accept", (rules.fingerprint(),)),
        ("commit", (rec.commitment,)),
        ("value", (rec.joiner_value,)),
        ("reveal", (rec.host_value,)),
    ]
    for a in rec.actions:
        if a.action == "resign":
            steps.append(("resign", (a.seq, a.seat, a.state_hash)))
        else:
            steps.append(("action", (a.seq, a.seat, a.action, a.state_hash)))
    for kind, fields in steps:
        t = crypto.absorb(t, kind, *fields)
        chain.append({"kind": kind, "entry": crypto.entry(kind, *fields).hex(), "t": t.hex()})
    return {
        "description": "a short match between two deterministic sessions: the secrets, every "
        "frame each side wrote in order (the hello in plaintext, the rest with its AEAD "
        "counter), the transcript chain, and the resulting record",
        "inputs": {
            "rules": "online preset",
            "invite_secret": SECRET.hex(),
            "host": {
                "name": "Alice",
                "identity_private": det_bytes("key/hostvectors", 32).hex(),
                "entropy": det_bytes("entropy/hostvectors").hex(),
            },
            "joiner": {
                "name": "Bob",
                "identity_private": det_bytes("key/joinervectors", 32).hex(),
                "entropy": det_bytes("entropy/joinervectors").hex(),
            },
            "entropy_layout": "bytes 0..31: X25519 private key; 32..63: commit/joiner value",
        },
        "frames": frames,
        "transcript_chain": chain,
        "record": record_to_dict(rec),
    }


def records() -> dict[str, Any]:
    """The journal of transcript.json's match: whole, cut inside an entry, and damaged."""
    record = record_from_dict(transcript()["record"])
    journal = JournalWriter().feed(record)
    ends = [i + 1 for i, b in enumerate(journal) if b == ord("\n")]
    cases = [
        ("the whole journal: the finished match", journal),
        ("cut in the middle of the fourth entry (a crash while writing it)",
         journal[: (ends[2] + ends[3]) // 2]),
        ("cut right after the third entry", journal[: ends[2]]),
        ("one byte of the third entry changed (its checksum fails: the journal ends before it)",
         journal[: ends[1] + 20] + b"f" + journal[ends[1] + 21 :]
         if journal[ends[1] + 20 : ends[1] + 21] != b"f"
         else journal[: ends[1] + 20] + b"e" + journal[ends[1] + 21 :]),
    ]  # fmt: skip
    out = []
    for description, data in cases:
        read = decode_journal(data)
        out.append(
            {
                "description": description,
                "journal": data.decode("utf-8"),
                "entries": read.entries,
                "discarded": read.discarded,
                "record": encode_record(read.record).decode("utf-8"),
            }
        )
    sample = {"final_sig": {"role": "host", "sig": "00" * 64}}
    return {
        "description": "Match journals (protocol/records.md): each line is the CRC-32 of the "
        "JSON (8 lowercase hex digits), a space, compact JSON, a newline.  'record' is the "
        "compact record a journal decodes to: what verify checks and resume continues from.",
        "entry": {"object": sample, "line": encode_entry(sample).decode("utf-8")},
        "journals": out,
    }


def build(name: str) -> dict[str, Any]:
    return {
        "records": records,
        "framing": framing,
        "messages": messages,
        "invite": invite,
        "crypto": crypto_vectors,
        "transcript": transcript,
    }[name]()


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m p2pkoikoi.session.vectors",
        description="Regenerate the protocol test vectors (framing, messages, invite, "
        "crypto, transcript, records).",
    )
    parser.add_argument(
        "out", nargs="?", default="protocol/vectors", help="directory (default protocol/vectors)"
    )
    out = Path(parser.parse_args(argv).out)
    if not out.is_dir():
        parser.error(f"{out} is not a directory")
    for name in FILES:
        (out / f"{name}.json").write_text(dumps(build(name)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
