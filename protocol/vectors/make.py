"""Build the protocol test vectors in ``protocol/vectors/`` (session layer).

``python protocol/vectors/make.py [DIR]`` writes them; the tests rebuild them and
compare with the files, so the files and the code cannot drift apart.  The makers
(this file and the ``make_*.py`` beside it) live next to the vectors, not in the
installed package: a player's program never runs them.
Every value is deterministic: keys and random values derive from labels.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path
from typing import Any, Final

from make_answer import answer_vectors
from make_rematch import rematch
from spake2.parameters.ed25519 import ParamsEd25519  # type: ignore[import-untyped]

import p2pkoikoi.session.channel as channel
import p2pkoikoi.session.crypto as crypto
import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine import get_preset
from p2pkoikoi.session.codes.code import MAX_FAILED_ATTEMPTS, QUOTES, decode_code, encode_code
from p2pkoikoi.session.codes.invite import (
    MAX_ADDRESSES,
    decode_invite,
    encode_invite,
    spaced_invite,
)
from p2pkoikoi.session.codes.pake import ID_HOST, ID_JOINER, Pake
from p2pkoikoi.session.codes.wordlist import EVEN, ODD
from p2pkoikoi.session.errors import InviteError
from p2pkoikoi.session.events import Resign, SendAction
from p2pkoikoi.session.forfeits import HOST_STOPPED, JOINER_STOPPED
from p2pkoikoi.session.handshake import WRONG_CODE_REASON
from p2pkoikoi.session.records.journal import decode_journal
from p2pkoikoi.session.records.record import (
    LEFT_FORFEIT,
    TIME_FORFEIT,
    record_from_dict,
    resign_reason,
)
from p2pkoikoi.session.records.writer import (
    JournalWriter,
    encode_entry,
    encode_record,
    record_to_dict,
)
from p2pkoikoi.session.testing import (
    SECRET,
    FrameLog,
    det_bytes,
    det_key,
    drain,
    make_pair,
    random_chooser,
    run_pair,
)

#: this folder: the vectors and their makers
HERE = Path(__file__).resolve().parent

FILES = (
    "framing",
    "messages",
    "invite",
    "code",
    "wordlist",
    "pake",
    "crypto",
    "transcript",
    "resume",
    "records",
    "hidden",
    "rematch",
    "dht",
    "answer",
)


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
        wire.HelloMsg(role="host", program="0.2.0", eph=b32, pake=b"B" + b32, pake_code=b"B" + b32),
        wire.HelloMsg(role="joiner", program="0.2.0", eph=b32, pake=b"A" + b32, via="code"),
        wire.HelloMsg(
            role="joiner", program="0.2.0", eph=b32, pake=b"A" + b32, via="resume", resume=b32
        ),
        wire.AuthMsg(
            name="Alice", key=b32, sig=b64, rules=b"{}", fp="ab" * 32, rounds=6, turn_limit=600
        ),
        wire.AuthMsg(name="Bob", key=b32, sig=b64),
        wire.AcceptMsg(fp="ab" * 32),
        wire.DeclineMsg(reason="rules differ", expected=b"{}"),
        wire.CommitMsg(c=b32, sig=b64),
        wire.ValueMsg(r=b32),
        wire.RevealMsg(r=b32, sig=b64),
        wire.StartMsg(sig=b64),
        wire.ActionMsg(seq=1, action="play 3b 3c1", hash=b32, sig=b64),
        wire.CardMsg(seq=3, kind="act", hash=b32, sig=b64, action="play 3b", pos=4, keys=b64),
        wire.ResignMsg(seq=9, sig=b64),
        wire.ResignMsg(seq=9, sig=b64, reason="time"),
        wire.OverMsg(hash=b32, tx=b32, scores=(31, 19), winner=0, sig=b64),
        wire.PingMsg(nonce=b"\x01\x02"),
        wire.PongMsg(nonce=b"\x01\x02"),
        wire.ChatMsg(text="よろしく"),
        wire.AbortMsg(reason="state hash mismatch"),
        wire.ByeMsg(),
        wire.ResumeMsg(seq=7, tx=b32, hash=b32, sig=b64),
        wire.RefuseMsg(reason="this match already has its two players"),
        wire.AgainMsg(n=2, tx=b32),
        wire.NoAgainMsg(reason="not now, thanks"),
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
    abort = wire.AbortMsg(reason=WRONG_CODE_REASON)  # the host's answer to a wrong code
    return {
        "description": "each message type: its fields (bytes as {'hex': ...}) and the msgpack "
        "map an encoder writes (keys sorted, absent optional fields omitted, bytes as bin)",
        "messages": out,
        "plaintext_abort_frame": {
            "note": "an abort sent before the sender has received an authenticated frame "
            "(README.md section 10): the frame's payload is the msgpack message itself",
            "frame": wire.encode_frame(wire.encode_message(abort)).hex(),
        },
    }


def invite() -> dict[str, Any]:
    secret = bytes(range(16))
    valid: list[dict[str, Any]] = []
    for addrs in (
        [("192.0.2.7", 7777)],
        [("2001:db8::42", 443)],
        [("koi-host.example", 1)],
        [("192.168.1.20", 47474), ("2001:db8::7", 47474), ("203.0.113.5", 51000)],
    ):
        text = encode_invite(addrs, secret)
        valid.append(
            {
                "addresses": [{"host": h, "port": p} for h, p in addrs],
                "secret": secret.hex(),
                "invite": text,
                "read_aloud": spaced_invite(text),
            }
        )
    good = valid[0]["invite"]
    three = valid[3]["invite"]
    typed = [  # as people type or paste them: each decodes to the same invite as "invite"
        {"typed": good.upper(), "invite": good},
        {"typed": f"  '{good}'\n", "invite": good},
        {"typed": spaced_invite(three), "invite": three},
        {"typed": "\u201c" + spaced_invite(good).upper() + "\u201d", "invite": good},
    ]
    invalid = []
    nine = "+".join(f"192.0.2.{i}_1" for i in range(1, 10))
    for text in (
        good[:-1] + ("a" if good[-1] != "a" else "b"),
        good.replace("7777", "7778"),
        "koi1-192.0.2.7-7777-aaaqeayeaudaocajbifqydiob4-eybt",
        "koi3-" + good[5:],
        good[:20],
        _with_check("koi2-192.0.2.7-aaaqeayeaudaocajbifqydiob4"),
        _with_check("koi2-192.0.2.7_70000-aaaqeayeaudaocajbifqydiob4"),
        _with_check("koi2-192.0.2.300_1-aaaqeayeaudaocajbifqydiob4"),
        _with_check(f"koi2-{nine}-aaaqeayeaudaocajbifqydiob4"),
        _with_check("koi2-192.0.2.7_1-aaaqeayeaudaocajbifqydiob"),
        _with_check("koi2-192.0.2.7_1-aaaqeayeaudaocajbifqydio18"),
        "koi2-192.0.2.7_1[x]-aaaqeayeaudaocajbifqydiob4-eybt",
        good + "+" * (1001 - len(good)),  # over 1000 characters
        good.replace("koi2-", "koi2-\u00e9", 1),  # not ASCII
        "\u201ckoi2-192.0.2.7_1-aaaqeayeaudaocajbifqydiob4-eyb\u201d\u00a0x",
    ):
        try:
            decode_invite(text)
        except InviteError as exc:
            invalid.append({"invite": text, "error": str(exc)})
        else:  # pragma: no cover - the generator's own check
            raise AssertionError(f"{text} should not decode")
    return {
        "description": "koi2-ADDR[+ADDR...]-SECRET(base32)-CHECK, ADDR = HOST_PORT; check = first 4 "
        "base32 chars of SHA-256('p2pkoikoi/v2/invite\\0' || text before the last hyphen); "
        "decoders remove whitespace and quotes and lowercase first (protocol/README.md section 2)",
        "max_addresses": MAX_ADDRESSES,
        "valid": valid,
        "typed": typed,
        "invalid": invalid,
    }


def _with_check(body: str) -> str:
    """An invite body with a correct check, so that the decoder reaches the field it tests."""
    import base64
    import hashlib

    digest = hashlib.sha256(b"p2pkoikoi/v2/invite\x00" + body.encode("ascii")).digest()
    return f"{body}-{base64.b32encode(digest).decode('ascii')[:4].lower()}"


def code() -> dict[str, Any]:
    valid = []
    for number, secret in ((7, bytes([0x3C, 0x3B])), (1, bytes(2)), (99, bytes([255, 255]))):
        text = encode_code(number, secret)
        valid.append(
            {
                "number": number,
                "secret": secret.hex(),
                "code": text,
                "pake_password": {"hex": channel.code_password(decode_code(text)).hex()},
            }
        )
    typed = [
        {"typed": t, "code": "7-crossover-clockwork"}
        for t in (
            "7-crossover-clockwork",
            "7 crossover clockwork",
            "7 Crossover Clockwork",
            "'7-CROSSOVER-CLOCKWORK'",
            "\u201c7 crossover clockwork\u201d",
            "7crossoverclockwork",
            "07. crossover, clockwork",
            " 7 - crossover - clockwork ",
        )
    ]
    invalid = []
    for text in (
        "",
        "crossover-clockwork",
        "0-crossover-clockwork",
        "10000-crossover-clockwork",
        "7-crossover",
        "7-crossover-clockwork-cobra",
        "7-clockwork-crossover",
        "7-crosover-clockwork",
        "7-crossover-crossover",
        "7-cl0ckwork-crossover",
        "7-cröss-clockwork",
        "7-clockwork-clockwork",  # two words of the second list
        "7-clockwork-crossover-crossover",
        "7--",
        "\u201c\u201d",
        "7-crossovr-cl0ckwork",  # several mistakes: the first check in order names one
    ):
        try:
            decode_code(text)
        except InviteError as exc:
            invalid.append({"code": text, "error": str(exc)})
        else:  # pragma: no cover - the generator's own check
            raise AssertionError(f"{text} should not decode")
    return {
        "description": "NUMBER-WORD1-WORD2: number 1..9999 (public; 1..99 unless the DHT shows those taken), WORD1 = ODD[secret[0]], "
        "WORD2 = EVEN[secret[1]] of the PGP word list (wordlist.json); the SPAKE2 password is "
        "'p2pkoikoi/v2/code\\0' || the canonical code text (protocol/README.md section 2)",
        "max_failed_attempts": MAX_FAILED_ATTEMPTS,
        "quotes": QUOTES,
        "quotes_note": "exactly these characters are removed before a code or an invite is "
        "read (README.md section 2.1)",
        "suggestion": "a word in neither list is followed by \" (did you mean 'X'?)\" when X "
        "is difflib.get_close_matches(word, that position's list, n=1, cutoff=0.7): the highest "
        "Ratcliff/Obershelp ratio, at least 0.7, ties to the greatest word (README.md 2.1)",
        "valid": valid,
        "typed": typed,
        "invalid": invalid,
    }


def wordlist() -> dict[str, Any]:
    return {
        "description": "the PGP word list: even[i] (two syllables) and odd[i] (three syllables) "
        "for byte value i, lowercase",
        "even": list(EVEN),
        "odd": list(ODD),
    }


def _pake_exchange(password: bytes, host_seed: bytes, joiner_seed: bytes) -> dict[str, Any]:
    host, joiner = Pake("host", password, host_seed), Pake("joiner", password, joiner_seed)
    key = host.finish(joiner.message)
    assert key == joiner.finish(host.message)
    return {
        "password": password.hex(),
        "joiner_entropy_seed": joiner_seed.hex(),
        "joiner_scalar_x": str(joiner.scalar),
        "joiner_message": joiner.message.hex(),
        "host_entropy_seed": host_seed.hex(),
        "host_scalar_y": str(host.scalar),
        "host_message": host.message.hex(),
        "key": key.hex(),
    }


#: how the reference implementation spends a session's 64 bytes of entropy (any
#: randomness will do; the layout only makes the vectors reproducible)
ENTROPY_LAYOUT: Final = (
    "bytes 0..31: X25519 private key; 32..63: the commit (host) or joiner value. "
    "seed = SHA-256('p2pkoikoi/v2/pake-seed\\0' || entropy), 32 bytes; the SPAKE2 exchange "
    "of the connection's password (invite, code or resume) draws from seed || 'main', the 4 "
    "ASCII bytes 6d61696e appended after the hash (outside it); a host that also offers "
    "its short code runs the code's exchange from seed || 'code' (636f6465): pake.json's "
    "entropy source takes these 36 bytes as its 'seed' (the reference implementation's "
    "choice: any randomness will do)"
)


def pake() -> dict[str, Any]:
    code = decode_code("7-crossover-clockwork")
    wrong = Pake("host", channel.code_password(code), det_bytes("vec/pake/host", 32))
    guess = Pake(
        "joiner", channel.code_password(decode_code("7-crossover-cobra")), det_bytes("g", 32)
    )
    return {
        "description": "SPAKE2 as python spake2 0.9 computes it (RustCrypto's spake2 crate "
        "is byte-compatible): Ed25519 group (points in the 32-byte Ed25519 encoding), M and N "
        "below; pw = HKDF-SHA256(ikm=password, salt='', info='SPAKE2 pw', 48 bytes) as a "
        "big-endian integer mod L; joiner = side A with idA 'p2pkoikoi/v2/joiner', host = side "
        "B with idB 'p2pkoikoi/v2/host'. A message is the side byte ('A' or 'B') then the point "
        "X* = x*G + pw*M (joiner) or Y* = y*G + pw*N (host); K = x*(Y* - pw*N) = y*(X* - pw*M); "
        "key = SHA-256(SHA-256(password) || SHA-256(idA) || SHA-256(idB) || X* || Y* || K) "
        "(points without the side byte). A receiver refuses a message with its own side byte, "
        "a point not on the curve or not in the prime-order subgroup, or its own message "
        "reflected. Scalars are decimal; the reference implementation draws each as 64 bytes of "
        "its random source, big-endian, mod L, the source being SHA-256('p2pkoikoi/v2/"
        "pake-entropy\\0' || seed || u32 counter) blocks (any randomness will do: the seeds "
        "only make these vectors reproducible)",
        "M": ParamsEd25519.M.to_bytes().hex(),
        "N": ParamsEd25519.N.to_bytes().hex(),
        "id_joiner": ID_JOINER.decode(),
        "id_host": ID_HOST.decode(),
        "code": _pake_exchange(
            channel.code_password(code), det_bytes("vec/pake/host", 32), det_bytes("vec/pake/j", 32)
        ),
        "invite": _pake_exchange(
            channel.invite_password(bytes(range(16))),
            det_bytes("vec/pake/host2", 32),
            det_bytes("vec/pake/j2", 32),
        ),
        "wrong_code": {
            "host_entropy_seed": det_bytes("vec/pake/host", 32).hex(),
            "joiner_entropy_seed": det_bytes("g", 32).hex(),
            "host_password": channel.code_password(code).hex(),
            "joiner_password": channel.code_password(decode_code("7-crossover-cobra")).hex(),
            "host_key": wrong.finish(guess.message).hex(),
            "joiner_key": guess.finish(wrong.message).hex(),
            "note": "the keys differ, so the joiner's first encrypted frame does not decrypt",
        },
    }


def crypto_vectors() -> dict[str, Any]:
    host_eph = channel.x25519_private(det_bytes("vec/eph/host", 32))
    join_eph = channel.x25519_private(det_bytes("vec/eph/joiner", 32))
    exchange = _pake_exchange(
        channel.invite_password(bytes(range(16))),
        det_bytes("vec/pake/host2", 32),
        det_bytes("vec/pake/j2", 32),
    )
    host_hello = wire.encode_message(
        wire.HelloMsg(
            role="host",
            program="0.2.0",
            eph=channel.x25519_public(host_eph),
            pake=bytes.fromhex(exchange["host_message"]),
        )
    )
    join_hello = wire.encode_message(
        wire.HelloMsg(
            role="joiner",
            program="0.2.0",
            eph=channel.x25519_public(join_eph),
            pake=bytes.fromhex(exchange["joiner_message"]),
            via="invite",
        )
    )
    h0 = channel.handshake_hash(host_hello, join_hello)
    shared = channel.shared_secret(host_eph, channel.x25519_public(join_eph))
    pake_key = bytes.fromhex(exchange["key"])
    k_h2j, k_j2h = channel.derive_keys(pake_key, shared, h0)
    ch = channel.Channel(k_h2j)
    sealed = [ch.seal(b"first"), ch.seal(b"second")]
    t0 = crypto.transcript_start(h0)
    t1 = crypto.absorb(t0, "accept", "ab" * 32)
    hv, jv = det_bytes("vec/host-value", 32), det_bytes("vec/joiner-value", 32)
    ident = det_key("vec/identity")
    pub = crypto.public_bytes(ident)
    t_commit = crypto.absorb(t1, "commit", crypto.commitment(t1, hv))
    t_value = crypto.absorb(t_commit, "value", jv)
    t_reveal = crypto.absorb(t_value, "reveal", hv)
    return {
        "description": "key schedule (SPAKE2 key as the HKDF salt, X25519 as its input, H0 "
        "in its info), AEAD, transcript, commitment and its signature, start signature, seed, "
        "identity fingerprint, resume secret",
        "key_schedule": {
            "host_eph_private": det_bytes("vec/eph/host", 32).hex(),
            "joiner_eph_private": det_bytes("vec/eph/joiner", 32).hex(),
            "pake": exchange,
            "host_hello_payload": host_hello.hex(),
            "joiner_hello_payload": join_hello.hex(),
            "h0": h0.hex(),
            "x25519_shared": shared.hex(),
            "pake_key": pake_key.hex(),
            "key_host_to_joiner": k_h2j.hex(),
            "key_joiner_to_host": k_j2h.hex(),
            "resume_secret": channel.derive_resume_secret(pake_key, shared, h0).hex(),
        },
        "aead": {
            "key": k_h2j.hex(),
            "frames": [
                {
                    "counter": 0,
                    "nonce": channel.nonce(0).hex(),
                    "plaintext": b"first".hex(),
                    "ciphertext": sealed[0].hex(),
                },
                {
                    "counter": 1,
                    "nonce": channel.nonce(1).hex(),
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
            "action_sig": {
                "signed": crypto.sig_message(t1).hex(),
                "note": "an action signature's input: 'p2pkoikoi/v2/sig\\0' || t1",
                "sig": crypto.sign(ident, crypto.sig_message(t1)).hex(),
            },
            "commit_sig": {
                "transcript_after_commit": t_commit.hex(),
                "signed": crypto.commit_sig_message(t_commit).hex(),
                "sig": crypto.sign(ident, crypto.commit_sig_message(t_commit)).hex(),
            },
            "start_sig": {
                "transcript_after_reveal": t_reveal.hex(),
                "signed": crypto.start_message(t_reveal).hex(),
                "sig": crypto.sign(ident, crypto.start_message(t_reveal)).hex(),
            },
            "forfeit_sig": {
                "note": "the recording player's signature on the other's forfeit by time: "
                "'p2pkoikoi/v2/forfeit\\0' || transcript || entry('forfeit', u64 seat, reason)",
                "transcript": t_reveal.hex(),
                "seat": 1,
                "reason": "time",
                "signed": crypto.forfeit_message(t_reveal, 1, "time").hex(),
                "sig": crypto.sign(ident, crypto.forfeit_message(t_reveal, 1, "time")).hex(),
            },
            "forfeit_sigs": [  # each step's forfeit (README.md section 8, "who forfeits")
                {
                    "step": step,
                    "transcript": t.hex(),
                    "seat": seat,
                    "reason": reason,
                    "signed": crypto.forfeit_message(t, seat, reason).hex(),
                    "sig": crypto.sign(ident, crypto.forfeit_message(t, seat, reason)).hex(),
                }
                for step, t, seat, reason in (
                    ("after the value, before the reveal", t_value, 0, HOST_STOPPED),
                    ("after the reveal, before the start", t_reveal, 1, JOINER_STOPPED),
                    ("during play: the turn limit", t_reveal, 1, TIME_FORFEIT),
                    ("during play: left, not back within the window", t_reveal, 0, LEFT_FORFEIT),
                )
            ],
        },
        "resign_entries": {
            "note": "a resignation's transcript entry: the reason only when the player's "
            "program resigned because its turn limit ran out",
            "plain": crypto.entry("resign", *crypto.resign_fields(9, 1, bytes(32), "")).hex(),
            "time": crypto.entry("resign", *crypto.resign_fields(9, 1, bytes(32), "time")).hex(),
        },
    }


def transcript(n_actions: int = 10) -> dict[str, Any]:
    """A whole short match: handshake, commit-reveal, actions, a resignation, the end."""
    rules = get_preset("online")
    host, joiner = make_pair(rules, label="vectors")
    log = FrameLog((host, joiner), frame_second=True)
    log.handshake(6)
    log.play(n_actions, 7, rounds=1)
    rec = host.record()
    assert rec == joiner.record() and rec.is_complete
    chain = []
    t = crypto.transcript_start(rec.session_id or b"")
    assert rec.host and rec.joiner and rec.rules and rec.commitment
    assert rec.joiner_value and rec.host_value
    steps: list[tuple[str, tuple[crypto.Field, ...]]] = [
        ("auth", ("host", rec.host.name, rec.host.key, rules.encode(), rec.turn_limit)),
        ("auth", ("joiner", rec.joiner.name, rec.joiner.key, b"", 0)),
        ("accept", (rules.fingerprint(),)),
        ("commit", (rec.commitment,)),
        ("value", (rec.joiner_value,)),
        ("reveal", (rec.host_value,)),
    ]
    for a in rec.actions:
        reason = resign_reason(a.action)
        if reason is not None:
            steps.append(("resign", crypto.resign_fields(a.seq, a.seat, a.state_hash, reason)))
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
            "entropy_layout": ENTROPY_LAYOUT,
        },
        "frames": log.frames,
        "transcript_chain": chain,
        "record": record_to_dict(rec),
    }


def resume() -> dict[str, Any]:
    """A match cut after a few actions and resumed on a new connection."""
    from p2pkoikoi.session.session import Role, Session

    rules = get_preset("online")
    host, joiner = make_pair(rules, label="resume-vectors")
    run_pair(host, joiner)
    choose = random_chooser(3)
    for _ in range(4):  # the joiner's record lags one action behind: it catches up
        m = host.match
        assert m is not None and m.to_act is not None
        sender = (host, joiner)[m.to_act]
        data = sender.send(SendAction(choose(m)))
        (joiner, host)[m.to_act].receive_data(data)
        drain((joiner, host)[m.to_act])
    m = host.match
    assert m is not None and m.to_act is not None
    (host, joiner)[m.to_act].send(SendAction(choose(m)))  # lost with the connection
    records = (host.record(), joiner.record())
    secret = host.resume_secret
    assert secret is not None and secret == joiner.resume_secret
    sides = tuple(
        Session.resume(
            records[i],
            role,
            identity_key=det_key(("host", "joiner")[i] + "resume-vectors"),
            resume_secret=secret,
            entropy=det_bytes(f"entropy/resume-vectors/{i}"),
        )
        for i, role in enumerate((Role.HOST, Role.JOINER))
    )
    log = FrameLog(sides)

    def deliver(sender: int) -> bool:
        data = sides[sender].data_to_send()
        log.deliver(sender, data)
        return bool(data)

    while deliver(0) | deliver(1):
        pass
    assert sides[0].seq == sides[1].seq == max(len(r.actions) for r in records) == 5
    assert sides[0].connection_id is not None
    return {
        "description": "a match cut after action 5 (the other side's record ends at 4) and "
        "resumed: "
        "fresh hellos with 'resume' = H0 and via 'resume' (the SPAKE2 password is "
        "'p2pkoikoi/v2/resume\\0' || resume_secret), then each side's 'resume' message "
        "(the joiner's first, then its start signature again), then the side that played "
        "action 5 re-sends it. sig = Ed25519(identity, 'p2pkoikoi/v2/resume\\0' || Hr || "
        "entry('resume', role, H0, u64 seq, tx, hash)); at seq 0, tx and hash are the "
        "transcript and state hash right after the reveal",
        "inputs": {
            "host_record": record_to_dict(records[0]),
            "joiner_record": record_to_dict(records[1]),
            "resume_secret": secret.hex(),
            "entropy_layout": ENTROPY_LAYOUT + "; a resumed connection's password is the"
            " resume password, drawn from seed || 'main' as any connection's",
            "host_entropy": det_bytes("entropy/resume-vectors/0").hex(),
            "joiner_entropy": det_bytes("entropy/resume-vectors/1").hex(),
        },
        "hr": sides[0].connection_id.hex(),
        "frames": log.frames,
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
        "off_turn_resignation": _off_turn_resignation(),
        "description": "Match journals (protocol/records.md): each line is the CRC-32 of the "
        "JSON (8 lowercase hex digits), a space, compact JSON, a newline.  'record' is the "
        "compact record a journal decodes to: what verify checks and resume continues from.",
        "entry": {"object": sample, "line": encode_entry(sample).decode("utf-8")},
        "journals": out,
    }


def _off_turn_resignation() -> dict[str, Any]:
    """README.md section 9.1: a resignation on the other player's turn that crossed
    that player's action; both sides' records are this one."""
    host, joiner = make_pair(get_preset("online"), label="offturn")
    run_pair(host, joiner)
    choose = random_chooser(3)
    for _ in range(3):
        m = host.match
        assert m is not None and m.to_act is not None
        actor, peer = (host, joiner) if m.to_act == 0 else (joiner, host)
        peer.receive_data(actor.send(SendAction(choose(m))))
        drain(peer)
    m = host.match
    assert m is not None and m.to_act is not None
    mover, resigner = (host, joiner) if m.to_act == 0 else (joiner, host)
    crossed = mover.seq + 1
    move = mover.send(SendAction(choose(m)))
    resignation = resigner.send(Resign())  # both in flight at once
    mover.receive_data(resignation)
    resigner.receive_data(move)
    run_pair(host, joiner)
    rec = host.record()
    assert rec == joiner.record() and rec.is_complete
    return {
        "description": f"seat {resigner.our_seat} resigned at seq {crossed} while seat "
        f"{mover.our_seat} was to act, and seat {mover.our_seat}'s action {crossed} crossed "
        f"it: the action stands, and the resignation was sent again at seq {crossed + 1} "
        "(README.md section 9.1). Both sides' records are this one.",
        "record": encode_record(rec).decode("utf-8"),
    }


def build(name: str) -> dict[str, Any]:
    return {
        "records": records,
        "framing": framing,
        "messages": messages,
        "invite": invite,
        "code": code,
        "wordlist": wordlist,
        "pake": pake,
        "resume": resume,
        "crypto": crypto_vectors,
        "transcript": transcript,
        "hidden": _hidden,
        "rematch": rematch,
        "dht": _dht,
        "answer": answer_vectors,
    }[name]()


def _dht() -> dict[str, Any]:
    from make_dht import dht

    return dht()


def _hidden() -> dict[str, Any]:
    from make_hidden import hidden_vectors

    return hidden_vectors()


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python protocol/vectors/make.py",
        description="Regenerate the protocol test vectors (" + ", ".join(FILES) + ").",
    )
    parser.add_argument(
        "out",
        nargs="?",
        default=str(HERE),
        help="directory (default: this file's, protocol/vectors)",
    )
    out = Path(parser.parse_args(argv).out)
    if not out.is_dir():
        parser.error(f"{out} is not a directory")
    for name in FILES:
        (out / f"{name}.json").write_text(dumps(build(name)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
