"""Happy Eyeballs (RFC 8305) over an invite's candidate addresses.

Theory of operation
-------------------
An invite lists several addresses (LAN, IPv6, the router's mapped one) and
the joiner cannot know which one reaches the host from where it sits.  So it
tries them all, staggered: the first attempt starts at once, and each next
one starts when the previous one failed or ``stagger`` seconds (250 ms, as
RFC 8305 section 5 recommends) have passed, whichever comes first.  An
address that does not answer therefore costs at most the stagger delay.

An *attempt* is whatever the caller says proves the right host: for a join
it is a TCP connection **and the authenticated handshake** on it (a LAN
address may well reach some other machine on the friend's network).  The
first attempt to finish wins; every other one is cancelled, and a result
that finished in the same instant is handed to ``discard`` (closed).

When every attempt fails, :class:`AllAttemptsFailed` names each address and
why, in one line.  This module knows nothing about sockets: attempts and the
candidates' names are the caller's, so it is tested with plain functions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Generic, TypeVar

import trio

from p2pkoikoi.transport.errors import ConnectError

C = TypeVar("C")
T = TypeVar("T")

#: RFC 8305 section 5: "a Connection Attempt Delay ... 250 ms"
STAGGER: Final = 0.25


class Decisive(Exception):
    """Raised by an attempt that reached the right peer and failed for good (the
    rules differ, the peer refused us after proving itself): the race stops and
    ``error`` is raised as it is, instead of trying the other addresses."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class AllAttemptsFailed(ConnectError, Generic[C]):
    """No candidate worked; ``failures`` pairs each candidate with why."""

    def __init__(
        self,
        failures: list[tuple[C, str]],
        describe: Callable[[C], str] = str,
        errors: list[Exception] | None = None,
    ) -> None:
        self.failures = failures
        self.errors = errors or []  # the exceptions behind ``failures``, in the same order
        if len(failures) == 1:
            c, why = failures[0]
            super().__init__(f"cannot connect to {describe(c)}: {why}")
            return
        parts = "; ".join(f"{describe(c)}: {why}" for c, why in failures)
        super().__init__(f"cannot reach the host at any address it gave ({parts})")


async def race(
    candidates: Sequence[C],
    attempt: Callable[[C], Awaitable[T]],
    *,
    reason: Callable[[BaseException], str],
    discard: Callable[[T], Awaitable[None]] | None = None,
    stagger: float = STAGGER,
    describe: Callable[[C], str] = str,
) -> tuple[C, T]:
    """The first candidate whose ``attempt`` succeeds, and its result.

    ``attempt`` raises to fail (``reason`` turns the exception into the words
    of the one-line error; exceptions it does not expect should not be caught
    by it: :class:`Exception` subclasses only are treated as a failed attempt).
    Losers are cancelled; results that arrive after the winner go to
    ``discard``.
    """
    if not candidates:
        raise AllAttemptsFailed([], describe)
    failures: dict[int, str] = {}
    errors: dict[int, Exception] = {}
    decided: list[Exception] = []
    winner: list[tuple[C, T]] = []
    extra: list[T] = []

    async with trio.open_nursery() as nursery:

        async def one(i: int, failed: trio.Event) -> None:
            try:
                got = await attempt(candidates[i])
            except Decisive as exc:
                decided.append(exc.error)
                nursery.cancel_scope.cancel()
                return
            except Exception as exc:
                failures[i] = reason(exc)
                errors[i] = exc
                failed.set()
                return
            if winner:
                extra.append(got)
            else:
                winner.append((candidates[i], got))
                nursery.cancel_scope.cancel()

        for i in range(len(candidates)):
            failed = trio.Event()
            nursery.start_soon(one, i, failed)
            if i < len(candidates) - 1:
                with trio.move_on_after(stagger):
                    await failed.wait()
    for got in extra:
        if discard is not None:
            await discard(got)
    if decided:
        for got in [w for _, w in winner]:
            if discard is not None:
                await discard(got)
        raise decided[0]
    if winner:
        return winner[0]
    order = sorted(failures)
    raise AllAttemptsFailed(
        [(candidates[i], failures[i]) for i in order], describe, [errors[i] for i in order]
    )
