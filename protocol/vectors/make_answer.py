"""Vectors for answers, UDP candidates, the invite's ``s`` entries and the pairing order
(protocol/README.md section 2.3); built by ``python -m p2pkoikoi.session.vectors``."""

from __future__ import annotations

from typing import Any

from p2pkoikoi.session.codes.answer import (
    AnswerError,
    UdpCandidate,
    answered_secret,
    check_key,
    decode_answer,
    for_tag,
    make_answer,
    pair_order,
    pair_priority,
    priority,
)
from p2pkoikoi.session.codes.invite import _check as invite_check
from p2pkoikoi.session.codes.invite import decode_invite, encode_invite
from p2pkoikoi.session.errors import InviteError


def _c(c: UdpCandidate) -> dict[str, Any]:
    return {"kind": c.kind, "ip": c.ip, "port": c.port, "text": str(c)}


def answer_vectors() -> dict[str, Any]:
    secret = bytes(range(16))
    nonce = bytes(range(100, 110))
    joiner = [
        UdpCandidate("h", "2001:db8:2::10", 40123),
        UdpCandidate("h", "192.168.1.10", 40123),
        UdpCandidate("s", "198.51.100.20", 20123),
    ]
    valid: list[dict[str, Any]] = []
    for cands, nat in ((joiner, "e"), ([], "u"), (joiner[1:2], "n"), (joiner[2:], "d")):
        text = make_answer(cands, nat, secret, nonce)
        valid.append(
            {
                "candidates": [_c(c) for c in cands],
                "nat": nat,
                "secret": secret.hex(),
                "nonce": nonce.hex(),
                "answer": text,
            }
        )
    good = str(valid[0]["answer"])
    typed = [
        {"typed": good.upper(), "answer": good},
        {"typed": f"  '{good[:30]} {good[30:]}'\n", "answer": good},
    ]
    invalid = []
    for text in (
        good[:-1] + ("a" if good[-1] != "a" else "b"),
        good.replace("40123", "40124"),
        good[:40],
        "koi2-192.0.2.7_7777-aaaqeayeaudaocajbifqydiob4-eybt",
        "hello",
    ):
        try:
            decode_answer(text, secret)
        except AnswerError as exc:
            invalid.append({"answer": text, "error": str(exc)})
        else:  # pragma: no cover - the generator's own check
            raise AssertionError(f"{text} should not decode")
    other = make_answer(joiner, "e", bytes(16), nonce)
    try:
        decode_answer(other, secret)
    except AnswerError as exc:
        invalid.append({"answer": other, "secret": secret.hex(), "error": str(exc)})
    host_udp = [UdpCandidate("s", "203.0.113.7", 20474)]
    invite = encode_invite(
        [("192.168.1.10", 47474), ("2001:db8:1::10", 47474)], secret, udp=host_udp
    )
    parsed = decode_invite(invite)
    host = [
        UdpCandidate("h", "192.168.1.10", 47474),
        UdpCandidate("h", "2001:db8:1::10", 47474),
        *host_udp,
    ]
    pairs = pair_order(joiner, host, controlling=True)
    body = "koi2-s192.0.2.1_1-aaaqeayeaudaocajbifqydiob4"
    only_udp = f"{body}-{invite_check(body)}"
    try:
        decode_invite(only_udp)
    except InviteError as exc:
        no_tcp = {"invite": only_udp, "error": str(exc)}
    return {
        "description": "koia-CANDIDATES-NAT-FOR-NONCE-CHECK (protocol/README.md section 2.3). "
        "candidate = KIND IP _ PORT (h host, m router mapping, s STUN reflexive), '+'-joined, "
        "'0' for none; NAT one of o e d u n; FOR = first 4 base32 chars of "
        "SHA-256('p2pkoikoi/v3/answer-for\\0' || invite secret); NONCE = 10 bytes base32; "
        "CHECK = first 4 base32 chars of SHA-256('p2pkoikoi/v3/answer\\0' || text before the "
        "last hyphen).  answered_secret = SHA-256('p2pkoikoi/v3/answered\\0' || secret || "
        "nonce)[:16] is the SPAKE2 secret over the punched path; check_key = "
        "SHA-256('p2pkoikoi/v3/checks\\0' || secret || nonce) keys the checks' "
        "MESSAGE-INTEGRITY.",
        "for": {"secret": secret.hex(), "for": for_tag(secret)},
        "keys": {
            "secret": secret.hex(),
            "nonce": nonce.hex(),
            "answered_secret": answered_secret(secret, nonce).hex(),
            "check_key": check_key(secret, nonce).hex(),
        },
        "valid": valid,
        "typed": typed,
        "invalid": invalid,
        "invite_with_reflexive": {
            "invite": invite,
            "tcp": [{"host": a.host, "port": a.port} for a in parsed.addresses],
            "udp": [_c(c) for c in parsed.udp],
            "only_udp_entries_error": no_tcp,
        },
        "pairing": {
            "controlling": "joiner",
            "joiner": [_c(c) for c in joiner],
            "host": [_c(c) for c in host],
            "priorities_joiner": [priority(c, i) for i, c in enumerate(joiner)],
            "priorities_host": [priority(c, i) for i, c in enumerate(host)],
            "pairs": [
                {
                    "local": str(m),
                    "remote": str(t),
                    "priority": pair_priority(
                        priority(m, joiner.index(m)), priority(t, host.index(t))
                    ),
                }
                for m, t in pairs
            ],
        },
    }
