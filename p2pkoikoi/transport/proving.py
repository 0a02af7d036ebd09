"""A second thread for the hidden deal's provers, while a link is open.

A masking step and its proof are made while the other program waits for them
(the steps go one after the other: ``protocol/hidden-deal.md`` section 3), so
the other machine's core, or this machine's second one, is idle then.  libsodium
runs outside Python's lock, so half of a proof's products can go to a worker
thread.  Verifying stays on one thread: both programs verify at the same time
(the joiner checks ``D1`` while the host checks its answer), and two threads
each would only contend for the cores.  The products are the same whichever
thread makes them, so the bytes on the wire do not depend on this.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Final

from p2pkoikoi.session.mental.group import Point, mul_many, reset_proving, set_proving

#: fewer products than this are made on the calling thread (a hand-off costs ~50 µs)
SPREAD_FROM: Final = 64


@contextmanager
def proving_on_two_threads() -> Iterator[None]:
    """For this context and the tasks started from it: provers use a worker thread."""
    with ThreadPoolExecutor(1, thread_name_prefix="p2pkoikoi-prover") as pool:

        def spread(pairs: Sequence[tuple[int, Point | None]]) -> list[Point]:
            if len(pairs) < SPREAD_FROM:
                return mul_many(pairs)
            half = len(pairs) // 2
            later = pool.submit(mul_many, pairs[half:])
            return mul_many(pairs[:half]) + later.result()

        token = set_proving(spread)
        try:
            yield
        finally:
            reset_proving(token)
