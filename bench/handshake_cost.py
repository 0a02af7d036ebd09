"""What one connection costs a host: the handshake's PAKE, and a reconnection attempt.

Prints, for one machine: the time of a SPAKE2 side (start + finish), of a whole
version 2 handshake between two in-memory sessions, of verifying a record of N
actions (what every reconnection attempt cost before issue 10.5), and of
starting a resumed session from a record verified once (what it costs now).
Usage::

    PYTHONPATH=. python bench/handshake_cost.py --actions 185
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Role, SendAction, Session
from p2pkoikoi.session.codes.pake import Pake
from p2pkoikoi.session.records.resume import ResumePoint
from p2pkoikoi.session.testing import (
    det_bytes,
    det_key,
    drain,
    make_pair,
    random_chooser,
    run_pair,
)
from p2pkoikoi.session.verify.check import verify_record


def per_call_ms(fn: Callable[[], object], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1000


def long_match(actions: int) -> Session:
    rules = get_preset("online").with_settings(rounds=99, knockout=False)
    host, joiner = make_pair(rules, label="bench")
    run_pair(host, joiner)  # the handshake, up to the first decision
    choose = random_chooser(1)
    while host.seq < actions and host.match is not None and not host.match.is_over:
        m = host.match
        assert m.to_act is not None
        sender, other = (host, joiner) if m.to_act == 0 else (joiner, host)
        other.receive_data(sender.send(SendAction(choose(m))))
        drain(other)
    return host


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=185)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    n = args.repeat

    def pake_side() -> None:
        a, b = Pake("host", b"pw", b"1"), Pake("joiner", b"pw", b"2")
        a.finish(b.message)

    print(f"SPAKE2, both sides (start + finish each): {per_call_ms(pake_side, n):.1f} ms")

    def handshake() -> None:
        host, joiner = make_pair(get_preset("online"), label="h")
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        host.receive_data(joiner.data_to_send())
        drain(host)

    print(f"v2 handshake to the host's auth (both sides): {per_call_ms(handshake, n):.1f} ms")
    host = long_match(args.actions)
    record = host.record()
    print(f"record of {len(record.actions)} actions")
    print(
        f"verify_record (each attempt before 10.5): {per_call_ms(lambda: verify_record(record), n):.1f} ms"
    )
    point = ResumePoint.from_record(record)
    assert host.resume_secret is not None
    secret = host.resume_secret

    def resumed() -> None:
        Session.resume(
            point,
            Role.HOST,
            identity_key=det_key("hostbench"),
            resume_secret=secret,
            entropy=det_bytes("e"),
        )

    print(f"Session.resume from a ResumePoint (each attempt now): {per_call_ms(resumed, n):.1f} ms")


if __name__ == "__main__":
    main()
