"""Hello, SPAKE2, auth, rules agreement, commit-reveal and start (README.md sections 5-8)."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from spake2 import SPAKE2_A, SPAKE2_B  # type: ignore[import-untyped]

from . import rules as rules_mod
from .wire import (
    Framed,
    ProtocolError,
    Transcript,
    derive_keys,
    entry,
    handshake_hash,
    pack,
    tag,
    unpack,
)

ID_A = b"p2pkoikoi/v2/joiner"
ID_B = b"p2pkoikoi/v2/host"


def raw_pub(k: Ed25519PrivateKey) -> bytes:
    return k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def verify_sig(key: bytes, sig: bytes, data: bytes, what: str) -> None:
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(sig, data)
    except Exception as exc:
        raise ProtocolError(f"forged: {what}") from exc


@dataclass
class Session:
    """Everything a match needs from the handshake."""

    role: str
    ch: Framed
    tx: Transcript
    identity: Ed25519PrivateKey
    peer_key: bytes
    rules: dict[str, Any]
    rules_bytes: bytes
    fp: bytes
    seed: bytes
    h0: bytes
    host_entry: bytes
    joiner_entry: bytes
    match: int = 1
    resume_secret: bytes = b""
    start_sig: bytes = b""  # the joiner's start signature, sent again on a resume
    addr: tuple[str, int] = ("", 0)  # the joiner's: where the host listens

    @property
    def seat(self) -> int:
        return 0 if self.role == "host" else 1

    def sign(self, t: str, data: bytes) -> bytes:
        return self.identity.sign(tag(t) + data)


def _hellos(
    sock: socket.socket,
    role: str,
    password: bytes,
    via: str = "invite",
    resume: bytes | None = None,
) -> tuple[Framed, bytes, dict[str, Any], bytes]:
    """Both hellos; returns the channel, H0 (Hr when resuming), the peer's hello, the resume secret."""
    ch = Framed(sock)
    eph = X25519PrivateKey.generate()
    eph_pub = eph.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    pake = (
        SPAKE2_A(password, idA=ID_A, idB=ID_B)
        if role == "joiner"
        else SPAKE2_B(password, idA=ID_A, idB=ID_B)
    )
    msg = pake.start()
    hello: dict[str, Any] = {
        "type": "hello",
        "role": role,
        "program": "indie 0.1",
        "eph": eph_pub,
        "pake": msg,
    }
    if role == "joiner":
        hello["via"] = via
    if resume is not None:
        hello["resume"] = resume
    mine = pack(hello)
    ch.write_frame(mine)
    theirs = ch.read_frame()
    peer = unpack(theirs)
    if peer.get("type") != "hello":
        raise ProtocolError(f"expected a hello, got {peer.get('type')}: {peer.get('reason')}")
    if peer.get("v") != 3:
        raise ProtocolError(f"protocol version mismatch: {peer.get('v')}")
    if peer["role"] == role:
        raise ProtocolError("both sides have the same role")
    if peer.get("resume") != resume:
        raise ProtocolError("the other side resumes another match (or starts a new one)")
    if role == "joiner" and via == "code":
        if "pake_code" not in peer:
            raise ProtocolError("the host accepts no code now")
        k = pake.finish(peer["pake_code"])
    else:
        k = pake.finish(peer["pake"])
    shared = eph.exchange(X25519PublicKey.from_public_bytes(peer["eph"]))
    if shared == bytes(32):
        raise ProtocolError("low-order key")
    hh, jh = (mine, theirs) if role == "host" else (theirs, mine)
    h0 = handshake_hash(hh, jh)
    k_h2j, k_j2h, resume_secret = derive_keys(k, shared, h0)
    ch.keys(role, k_h2j, k_j2h)
    return ch, h0, peer, resume_secret


def _auth_entry(role: str, name: str, key: bytes, rules: bytes, turn_limit: int) -> bytes:
    return entry("auth", role, name, key, rules, turn_limit)


def join(sock: socket.socket, secret: bytes, name: str, code: str | None = None) -> Session:
    """Joins with the invite's secret, or with a short code (README.md 2.1) when given."""
    if code is not None:
        ch, h0, _, rs = _hellos(sock, "joiner", tag("p2pkoikoi/v2/code") + code.encode(), "code")
    else:
        ch, h0, _, rs = _hellos(sock, "joiner", tag("p2pkoikoi/v2/invite-secret") + secret)
    ident = Ed25519PrivateKey.generate()
    key = raw_pub(ident)
    je = _auth_entry("joiner", name, key, b"", 0)
    ch.send(
        {
            "type": "auth",
            "name": name,
            "key": key,
            "sig": ident.sign(tag("p2pkoikoi/v2/auth") + h0 + je),
        }
    )
    a = ch.recv()
    if a["type"] != "auth":
        raise ProtocolError("expected auth first")
    he = _auth_entry("host", a["name"], a["key"], a["rules"], a["turn_limit"])
    verify_sig(a["key"], a["sig"], tag("p2pkoikoi/v2/auth") + h0 + he, "host auth")
    rules = rules_mod.decode(a["rules"])
    fp = rules_mod.fingerprint(a["rules"])
    if fp.hex() != a["fp"] or rules["rounds"] != a["rounds"]:
        raise ProtocolError("rules fingerprint or rounds do not match")
    tx = Transcript(h0)
    tx.absorb(he)
    tx.absorb(je)
    ch.send({"type": "accept", "fp": fp.hex()})
    t_c = tx.absorb(entry("accept", fp.hex()))
    seed = _joiner_seed(ch, tx, t_c, a["key"], ident)
    start_sig = _last_start_sig
    sess = Session("joiner", ch, tx, ident, a["key"], rules, a["rules"], fp, seed, h0, he, je)
    sess.resume_secret, sess.start_sig = rs, start_sig
    return sess


def host(
    sock: socket.socket, secret: bytes, name: str, rules: dict[str, Any], turn_limit: int
) -> Session:
    ch, h0, peer, rs = _hellos(sock, "host", tag("p2pkoikoi/v2/invite-secret") + secret)
    if peer.get("via") != "invite":
        raise ProtocolError(f"the joiner uses {peer.get('via')}, not the invite")
    a = ch.recv()
    if a["type"] != "auth":
        raise ProtocolError("expected auth first")
    je = _auth_entry("joiner", a["name"], a["key"], b"", 0)
    verify_sig(a["key"], a["sig"], tag("p2pkoikoi/v2/auth") + h0 + je, "joiner auth")
    ident = Ed25519PrivateKey.generate()
    key = raw_pub(ident)
    rb = rules_mod.encode(rules)
    fp = rules_mod.fingerprint(rb)
    he = _auth_entry("host", name, key, rb, turn_limit)
    ch.send(
        {
            "type": "auth",
            "name": name,
            "key": key,
            "sig": ident.sign(tag("p2pkoikoi/v2/auth") + h0 + he),
            "rules": rb,
            "fp": fp.hex(),
            "rounds": rules["rounds"],
            "turn_limit": turn_limit,
        }
    )
    tx = Transcript(h0)
    tx.absorb(he)
    tx.absorb(je)
    acc = ch.recv()
    if acc["type"] != "accept" or acc["fp"] != fp.hex():
        raise ProtocolError(f"the joiner declined: {acc.get('reason')}")
    t_c = tx.absorb(entry("accept", fp.hex()))
    seed = _host_seed(ch, tx, t_c, a["key"], ident)
    sess = Session("host", ch, tx, ident, a["key"], rules, rb, fp, seed, h0, he, je)
    sess.resume_secret = rs
    return sess


_last_start_sig = b""


def _joiner_seed(
    ch: Framed, tx: Transcript, t_c: bytes, host_key: bytes, ident: Ed25519PrivateKey
) -> bytes:
    """Commit, value, reveal, start from the joiner's side (README.md section 8)."""
    c = ch.recv()
    if c["type"] != "commit":
        raise ProtocolError(f"expected commit, got {c['type']}")
    t_k = tx.absorb(entry("commit", c["c"]))
    verify_sig(host_key, c["sig"], tag("p2pkoikoi/v2/commit-sig") + t_k, "commitment")
    jv = os.urandom(32)
    ch.send({"type": "value", "r": jv})
    tx.absorb(entry("value", jv))
    r = ch.recv()
    if r["type"] != "reveal":
        raise ProtocolError(f"expected reveal, got {r['type']}")
    hv = r["r"]
    if hashlib.sha256(tag("p2pkoikoi/v2/commit") + t_c + hv).digest() != c["c"]:
        raise ProtocolError("cheating: the reveal does not match the commitment")
    t_r = tx.absorb(entry("reveal", hv))
    verify_sig(host_key, r["sig"], tag("p2pkoikoi/v2/start") + t_r, "host start signature")
    global _last_start_sig
    _last_start_sig = ident.sign(tag("p2pkoikoi/v2/start") + t_r)
    ch.send({"type": "start", "sig": _last_start_sig})
    return hashlib.sha256(tag("p2pkoikoi/v2/seed") + hv + jv + t_c).digest()


def _host_seed(
    ch: Framed, tx: Transcript, t_c: bytes, joiner_key: bytes, ident: Ed25519PrivateKey
) -> bytes:
    """Commit, value, reveal, start from the host's side (README.md section 8)."""
    hv = os.urandom(32)
    c = hashlib.sha256(tag("p2pkoikoi/v2/commit") + t_c + hv).digest()
    t_k = tx.absorb(entry("commit", c))
    ch.send({"type": "commit", "c": c, "sig": ident.sign(tag("p2pkoikoi/v2/commit-sig") + t_k)})
    v = ch.recv()
    if v["type"] != "value":
        raise ProtocolError(f"expected value, got {v['type']}")
    jv = v["r"]
    tx.absorb(entry("value", jv))
    t_r = tx.absorb(entry("reveal", hv))
    ch.send({"type": "reveal", "r": hv, "sig": ident.sign(tag("p2pkoikoi/v2/start") + t_r)})
    s = ch.recv()
    if s["type"] != "start":
        raise ProtocolError(f"expected start, got {s['type']}")
    verify_sig(joiner_key, s["sig"], tag("p2pkoikoi/v2/start") + t_r, "joiner start signature")
    return hashlib.sha256(tag("p2pkoikoi/v2/seed") + hv + jv + t_c).digest()


def rematch(s: Session) -> None:
    """Offers (or accepts) the next match on this connection (README.md section 13)."""
    n, t_f = s.match + 1, s.tx.t
    s.ch.send({"type": "again", "n": n, "tx": t_f})
    m = s.ch.recv()
    if m["type"] != "again" or m["n"] != n or m["tx"] != t_f:
        raise ProtocolError(f"expected again {n}, got {m['type']}: {m.get('reason', '')}")
    s.match = n
    s.tx = Transcript(s.h0)
    s.tx.t = hashlib.sha256(tag("p2pkoikoi/v2/rematch") + s.h0 + entry("rematch", n, t_f)).digest()
    s.tx.absorb(s.host_entry)
    s.tx.absorb(s.joiner_entry)
    t_c = s.tx.absorb(entry("accept", s.fp.hex()))
    if s.role == "host":
        s.seed = _host_seed(s.ch, s.tx, t_c, s.peer_key, s.identity)
    else:
        s.seed = _joiner_seed(s.ch, s.tx, t_c, s.peer_key, s.identity)
        s.start_sig = _last_start_sig


def resume_joiner(
    s: Session, addr: tuple[str, int], seq: int, tx: bytes, state_hash: bytes
) -> dict[str, Any]:
    """A new connection for the same match (README.md section 12); returns the host's `resume`."""
    for attempt in range(40):  # the host refuses until it has seen the old connection end
        sock = socket.create_connection(addr, timeout=120)
        try:
            ch, hr, _, _ = _hellos(
                sock, "joiner", tag("p2pkoikoi/v2/resume") + s.resume_secret, "resume", s.h0
            )
            break
        except ProtocolError as exc:
            sock.close()
            if "refuse" not in str(exc) or attempt == 39:
                raise
            time.sleep(0.25)
    re = entry("resume", "joiner", s.h0, seq, tx, state_hash)
    ch.send(
        {
            "type": "resume",
            "seq": seq,
            "tx": tx,
            "hash": state_hash,
            "sig": s.sign("p2pkoikoi/v2/resume", hr + re),
        }
    )
    ch.send({"type": "start", "sig": s.start_sig})
    m = ch.recv()
    if m["type"] != "resume":
        raise ProtocolError(f"expected resume, got {m['type']}")
    he = entry("resume", "host", s.h0, m["seq"], m["tx"], m["hash"])
    verify_sig(s.peer_key, m["sig"], tag("p2pkoikoi/v2/resume") + hr + he, "the host's resume")
    s.ch.sock.close()
    s.ch = ch
    return m
