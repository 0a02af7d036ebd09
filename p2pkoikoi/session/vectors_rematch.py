"""The ``rematch.json`` vector (protocol/README.md section 13): a short match, the
rematch agreement and the second match on the same connection.

Its own module so that :mod:`p2pkoikoi.session.vectors` stays one file per job
(that one builds the other vectors; this one only the rematch).
"""

from __future__ import annotations

from typing import Any

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import crypto, wire
from p2pkoikoi.session.events import OfferRematch, Resign, SendAction
from p2pkoikoi.session.record import record_to_dict
from p2pkoikoi.session.session import Session
from p2pkoikoi.session.testing import SECRET, det_bytes, drain, make_pair, random_chooser

LABEL = "rematch-vectors"


def _play(sides: tuple[Session, Session], deliver: Any, n_actions: int, seed: int) -> None:
    """``n_actions`` random actions, then the player to act resigns; both sign."""
    host = sides[0]
    choose = random_chooser(seed)
    for _ in range(n_actions):
        m = host.match
        assert m is not None and m.to_act is not None
        deliver(m.to_act, sides[m.to_act].send(SendAction(choose(m))))
    m = host.match
    assert m is not None and m.to_act is not None
    deliver(m.to_act, sides[m.to_act].send(Resign()))
    _settle(sides, deliver)


def _settle(sides: tuple[Session, Session], deliver: Any) -> None:
    for _ in range(8):
        for s in (0, 1):
            data = sides[s].data_to_send()
            if data:
                deliver(s, data)


def rematch() -> dict[str, Any]:
    rules = get_preset("online")
    host, joiner = make_pair(rules, label=LABEL)
    sides = (host, joiner)
    frames: list[dict[str, Any]] = []
    counters = [0, 0]
    part = ["first match"]

    def deliver(sender: int, data: bytes) -> None:
        rest = data
        while rest:
            payload, rest = wire.decode_frame(rest)
            assert payload is not None
            who = ("host", "joiner")[sender]
            entry: dict[str, Any] = {"part": part[0], "from": who}
            if not any(f["from"] == who for f in frames):
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
    _settle(sides, deliver)
    _play(sides, deliver, 4, 5)
    first = host.record()
    assert first == joiner.record() and first.is_complete
    part[0] = "rematch agreement"
    joiner_value = det_bytes(f"again/joiner{LABEL}", 32)
    host_value = det_bytes(f"again/host{LABEL}", 32)
    deliver(1, joiner.send(OfferRematch(joiner_value)))  # the joiner offers
    part[0] = "second match"
    deliver(0, host.send(OfferRematch(host_value)))  # the host accepts (and commits)
    _settle(sides, deliver)
    _play(sides, deliver, 6, 6)
    second = host.record()
    assert second == joiner.record() and second.is_complete and second.match_number == 2
    assert first.session_id is not None and first.result is not None
    t0 = crypto.rematch_start(first.session_id, 2, first.result.transcript_hash)
    return {
        "description": "one connection, two matches: a short first match (resigned), the "
        "joiner's 'again', the host's 'again' (acceptance) followed by its commit, and the "
        "second match's commit-reveal and play; every frame with its AEAD counter (the "
        "counters go on across matches: same keys), the second match's transcript start, "
        "and both records",
        "inputs": {
            "rules": "online preset",
            "invite_secret": SECRET.hex(),
            "host": {
                "name": "Alice",
                "identity_private": det_bytes(f"key/host{LABEL}", 32).hex(),
                "entropy": det_bytes(f"entropy/host{LABEL}").hex(),
                "rematch_value": host_value.hex(),
            },
            "joiner": {
                "name": "Bob",
                "identity_private": det_bytes(f"key/joiner{LABEL}", 32).hex(),
                "entropy": det_bytes(f"entropy/joiner{LABEL}").hex(),
                "rematch_value": joiner_value.hex(),
            },
        },
        "frames": frames,
        "second_match_t0": {
            "formula": "SHA-256('p2pkoikoi/v2/rematch\\0' || H0 || entry('rematch', u64 2, "
            "first match's final transcript hash))",
            "entry": crypto.entry("rematch", 2, first.result.transcript_hash).hex(),
            "t0": t0.hex(),
        },
        "records": [record_to_dict(first), record_to_dict(second)],
    }
