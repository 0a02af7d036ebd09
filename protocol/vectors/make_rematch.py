"""The ``rematch.json`` vector (protocol/README.md section 13): a short match, the
rematch agreement and the second match on the same connection.

Its own module so that :mod:`p2pkoikoi.session.vectors` stays one file per job
(that one builds the other vectors; this one only the rematch).
"""

from __future__ import annotations

from typing import Any

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import get_preset
from p2pkoikoi.session.events import OfferRematch
from p2pkoikoi.session.records.writer import record_to_dict
from p2pkoikoi.session.testing import SECRET, FrameLog, det_bytes, make_pair

LABEL = "rematch-vectors"


def rematch() -> dict[str, Any]:
    rules = get_preset("online")
    host, joiner = make_pair(rules, label=LABEL)
    log = FrameLog((host, joiner))
    log.fields["part"] = "first match"
    log.handshake(8)
    log.play(4, 5, rounds=8)
    first = host.record()
    assert first == joiner.record() and first.is_complete
    log.fields["part"] = "rematch agreement"
    joiner_value = det_bytes(f"again/joiner{LABEL}", 32)
    host_value = det_bytes(f"again/host{LABEL}", 32)
    log.deliver(1, joiner.send(OfferRematch(joiner_value)))  # the joiner offers
    log.fields["part"] = "second match"
    log.deliver(0, host.send(OfferRematch(host_value)))  # the host accepts (and commits)
    log.settle(8)
    log.play(6, 6, rounds=8)
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
        "frames": log.frames,
        "second_match_t0": {
            "formula": "SHA-256('p2pkoikoi/v2/rematch\\0' || H0 || entry('rematch', u64 2, "
            "first match's final transcript hash))",
            "entry": crypto.entry("rematch", 2, first.result.transcript_hash).hex(),
            "t0": t0.hex(),
        },
        "records": [record_to_dict(first), record_to_dict(second)],
    }
