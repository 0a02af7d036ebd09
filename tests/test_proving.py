"""The hidden deal's provers on a second thread (transport/proving.py): the same bytes,
and only the provers spread (verifying runs on one thread, both programs verify at once)."""

from __future__ import annotations

import threading

from hidden_helpers import seed

from p2pkoikoi.session.mental import deck as d
from p2pkoikoi.session.mental.deck import HOST, JOINER, DeckSecrets
from p2pkoikoi.session.mental.group import mul_many, reset_proving, set_proving
from p2pkoikoi.transport.proving import proving_on_two_threads

CONTEXT = b"\x00\x01\x00\x00\x00"


def test_a_step_is_the_same_bytes_on_two_threads_and_the_worker_ran() -> None:
    host = DeckSecrets.derive(HOST, seed("h"))
    joiner = DeckSecrets.derive(JOINER, seed("j"))
    d1, one = d.step1_message(host, CONTEXT)
    _, two = d.step2_message(joiner, d1, CONTEXT)
    with proving_on_two_threads():
        d1_spread, one_spread = d.step1_message(host, CONTEXT)
        _, two_spread = d.step2_message(joiner, d1, CONTEXT)
        workers = [t for t in threading.enumerate() if t.name.startswith("p2pkoikoi-prover")]
    assert (d1_spread, one_spread, two_spread) == (d1, one, two)
    assert workers, "the products were all made on the calling thread"
    assert not [t for t in threading.enumerate() if t.name.startswith("p2pkoikoi-prover")]


def test_provers_use_the_drivers_strategy_and_verifiers_do_not() -> None:
    host = DeckSecrets.derive(HOST, seed("h"))
    calls: list[int] = []

    def counting(pairs):  # type: ignore[no-untyped-def]
        calls.append(len(pairs))
        return mul_many(pairs)

    token = set_proving(counting)
    try:
        d1, message = d.step1_message(host, CONTEXT)
        made = len(calls)
        assert made >= 3 and sum(calls) > 300  # the shuffle proof's phases
        assert d.decode_step1(message, CONTEXT) == d1  # verifying: not through it
        assert len(calls) == made
    finally:
        reset_proving(token)
    d.step1_message(host, CONTEXT)
    assert len(calls) == made  # reset: back to one thread
