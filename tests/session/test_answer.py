"""Answers and UDP candidates (session/codes/answer.py) against protocol/vectors/answer.json,
and the typed-input tolerance and one-line errors people meet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2pkoikoi.session import decode_invite, encode_invite, parse_join_target
from p2pkoikoi.session.codes.answer import (
    AnswerError,
    UdpCandidate,
    answered_secret,
    check_key,
    decode_answer,
    decode_candidate,
    for_tag,
    make_answer,
    pair_order,
)
from p2pkoikoi.session.errors import InviteError

VECTORS = json.loads((Path(__file__).parents[2] / "protocol/vectors/answer.json").read_text())


def test_valid_answers_decode() -> None:
    for v in VECTORS["valid"]:
        secret = bytes.fromhex(v["secret"])
        ans = decode_answer(v["answer"], secret)
        assert [str(c) for c in ans.candidates] == [c["text"] for c in v["candidates"]]
        assert ans.nat == v["nat"] and ans.nonce.hex() == v["nonce"]
        assert ans.for_tag == for_tag(secret)
        again = make_answer(ans.candidates, ans.nat, secret, ans.nonce)
        assert again == v["answer"]


def test_typed_answers_decode_to_the_same() -> None:
    for v in VECTORS["typed"]:
        assert decode_answer(v["typed"]) == decode_answer(v["answer"])


def test_invalid_answers_one_line_each() -> None:
    for v in VECTORS["invalid"]:
        secret = bytes.fromhex(v["secret"]) if "secret" in v else None
        with pytest.raises(AnswerError) as info:
            decode_answer(v["answer"], secret or bytes(range(16)))
        assert str(info.value) == v["error"]
        assert "\n" not in str(info.value)


def test_keys() -> None:
    k = VECTORS["keys"]
    secret, nonce = bytes.fromhex(k["secret"]), bytes.fromhex(k["nonce"])
    assert answered_secret(secret, nonce).hex() == k["answered_secret"]
    assert check_key(secret, nonce).hex() == k["check_key"]


def test_invite_with_reflexive_entries() -> None:
    v = VECTORS["invite_with_reflexive"]
    inv = decode_invite(v["invite"])
    assert [str(c) for c in inv.udp] == [c["text"] for c in v["udp"]]
    assert [(a.host, a.port) for a in inv.addresses] == [(a["host"], a["port"]) for a in v["tcp"]]
    assert str(inv) == v["invite"]
    with pytest.raises(InviteError, match="no TCP address"):
        decode_invite(v["only_udp_entries_error"]["invite"])
    # a host name that merely starts with a kind letter stays a TCP address
    named = decode_invite(encode_invite([("server.example", 1)], bytes(16)))
    assert named.udp == () and named.addresses[0].host == "server.example"


def test_pairing_order() -> None:
    p = VECTORS["pairing"]

    def cands(items: list[dict[str, object]]) -> list[UdpCandidate]:
        return [UdpCandidate(str(c["kind"]), str(c["ip"]), int(str(c["port"]))) for c in items]

    pairs = pair_order(cands(p["joiner"]), cands(p["host"]), controlling=True)
    assert [(str(m), str(t)) for m, t in pairs] == [(x["local"], x["remote"]) for x in p["pairs"]]


def test_an_answer_given_to_join_says_what_it_is() -> None:
    text = VECTORS["valid"][0]["answer"]
    with pytest.raises(InviteError, match="this is an answer"):
        parse_join_target(text)


def test_names_are_not_candidates() -> None:
    with pytest.raises(AnswerError, match="not an IP address"):
        decode_candidate("hexample.com_1")
    with pytest.raises(AnswerError, match="unknown candidate kind"):
        decode_candidate("x192.0.2.1_1")
