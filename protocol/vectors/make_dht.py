"""protocol/vectors/dht.json: the DHT rendezvous of a short code (protocol/dht.md).

Every value is computed from fixed seeds by :mod:`p2pkoikoi.session.codes.rendezvous`;
the BEP 44 parts (signature input, signature, target) are computed here from
BEP 44's definitions, so an implementation can check its items byte for byte.
"""

from __future__ import annotations

import hashlib
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.session.codes import rendezvous as rv
from p2pkoikoi.session.codes.code import decode_code

INVITE = "koi2-11.22.33.1_47474-aaaaaaaaaaaaaaaaaaaaaaaaaa-abcd"
#: an answer's text is opaque here (the NAT traversal defines it)
ANSWER = "koia-s11.22.33.2_40000-e-abcd-aaaaaaaaaaaaaaaa-wxyz"


def _h(b: bytes) -> str:
    return b.hex()


def _item(pub: rv.Publish, seq: int) -> dict[str, Any]:
    """A payload as the BEP 44 item that carries it: v is the payload as a bencoded string."""
    v = str(len(pub.payload)).encode() + b":" + pub.payload
    salt = b"4:salt" + str(len(pub.salt)).encode() + b":" + pub.salt
    signed = salt + b"3:seqi" + str(seq).encode() + b"e1:v" + v
    sig = Ed25519PrivateKey.from_private_bytes(pub.seed).sign(signed)
    return {
        "k": _h(pub.key),
        "salt": _h(pub.salt),
        "target": _h(hashlib.sha1(pub.key + pub.salt).digest()),
        "seq": seq,
        "v": _h(v),
        "signature_input": _h(signed),
        "sig": _h(sig),
    }


def dht() -> dict[str, Any]:
    code = decode_code("7-crossover-clockwork")
    wrong = decode_code("7-crossover-button")
    host_seed = bytes(range(64))
    joiner_seed = bytes(range(100, 132))
    host = rv.HostAttempt(code, host_seed)
    ann = host.announcement
    joiner = rv.JoinerAttempt(code, ann, joiner_seed)
    th = rv.transcript(ann.payload, joiner.inbox.payload[len(rv.JOIN) : len(rv.JOIN) + 33])
    accepted = host.answer(joiner.inbox.payload, INVITE, 0)
    assert isinstance(accepted, rv.Accepted)
    answer = joiner.answer(ANSWER)
    assert accepted.open_answer(answer.payload) == ANSWER
    host2 = rv.HostAttempt(code, bytes(range(1, 65)))
    guess = rv.JoinerAttempt(wrong, host2.announcement, joiner_seed)
    refused = host2.answer(guess.inbox.payload, INVITE, 0)
    assert isinstance(refused, rv.Refused)
    seq = 1764633600
    return {
        "about": "protocol/dht.md: a code's rendezvous through BEP 44 items; bytes in hex",
        "public_seed": _h(rv.PUBLIC_SEED),
        "public_key": _h(rv.PUBLIC_KEY),
        "password": _h(rv.password(code)),
        "ids": {"joiner": "p2pkoikoi/v3/dht/joiner", "host": "p2pkoikoi/v3/dht/host"},
        "live_for": rv.LIVE_FOR,
        "joiner_attempts": rv.JOINER_ATTEMPTS,
        "code": str(code),
        "host_seed": _h(host_seed),
        "joiner_pake_seed": _h(joiner_seed),
        "announcement": {"payload": _h(ann.payload), "item": _item(host.announce(), seq)},
        "inbox": {
            "payload": _h(joiner.inbox.payload),
            "transcript": _h(th),
            "item": _item(joiner.inbox, seq + 5),
        },
        "reply": {
            "invite": INVITE,
            "payload": _h(accepted.reply.payload),
            "item": _item(accepted.reply, 1),
        },
        "answer": {
            "text": ANSWER,
            "salt": _h(accepted.answer_salt),
            "payload": _h(answer.payload),
            "item": _item(answer, seq + 9),
        },
        "refusal": {
            "code": str(wrong),
            "host_seed": _h(bytes(range(1, 65))),
            "payload": _h(refused.reply.payload),
            "text": refused.reply.payload[len(rv.REFUSED) :].decode(),
        },
        "closed": _h(rv.CLOSED),
        "announce_salts": {str(n): _h(rv.announce_salt(n)) for n in (1, 7, 99, 100, 9999)},
    }
