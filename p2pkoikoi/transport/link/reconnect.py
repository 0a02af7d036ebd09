"""Reconnect and resume: a new connection to the same opponent, the match kept.

Theory of operation
-------------------
Connections come and go, the match stays.  When a link loses its connection
during play it keeps its session's record and asks this module for a new
stream carrying a *resumed* session (:meth:`Session.resume`):

* the joiner **redials** (:func:`redial`) with exponential backoff
  (``backoff_initial`` doubling up to ``backoff_max``), each attempt a TCP
  connect under ``timeouts.connect`` and a resume handshake;
* the host **re-accepts** (:func:`reaccept`): its listener, which refuses
  everyone while :attr:`Reconnect.wanted` is false, hands it candidate streams;
  each candidate runs its own resume handshake and the first that succeeds
  wins, the others are closed.

Both run until the caller's ``reconnect_window`` cancels them.  A
:class:`ResumeError` (another player, another match) is hopeless and ends the
redial at once; every other failure is one line in ``last``, which the caller
names when the window runs out.  The resume handshake (:func:`resume_handshake`)
runs on the bare stream in one task, before any link task touches it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import NEED_DATA, ConnectionClosed, Resumed, ResumeError, Role, Session
from p2pkoikoi.session.records.record import Record
from p2pkoikoi.session.records.resume import ResumePoint
from p2pkoikoi.transport.errors import TransportError, os_reason
from p2pkoikoi.transport.limits import RECEIVE_SIZE, Timeouts
from p2pkoikoi.transport.link.notes import Notify
from p2pkoikoi.transport.open.strangers import peer_address, refuse

#: called with the attempt number (1, 2, ...) as each reconnection attempt starts
OnAttempt = Callable[[int], None]


def session_entropy() -> bytes:
    """Fresh randomness for a new or resumed session (its commit-reveal value)."""
    return os.urandom(64)


@dataclass
class Reconnect:
    """How a link gets a new connection to the same opponent after a drop.

    The joiner ``dial``s (with exponential backoff); the host takes candidate
    streams from ``incoming`` (fed by its listener, which refuses everyone while
    ``wanted`` is false).  ``sidecar`` is what ``p2pkoikoi resume`` needs after a
    crash (the resume secret, role, address): written beside the record.
    """

    identity: Ed25519PrivateKey
    secret: bytes | None = None  #: the match's resume secret, known once the match started
    dial: Callable[[], Awaitable[trio.abc.Stream]] | None = None
    incoming: trio.MemoryReceiveChannel[trio.abc.Stream] | None = None
    sidecar: dict[str, Any] | None = None
    wanted: bool = False
    #: the hidden deal: this side's deal secret (also in the sidecar, never in the record)
    hidden_secret: bytes | None = None
    _point: ResumePoint | None = None

    def session(self, record: Record, role: Role) -> Session:
        """A session for one reconnection attempt.  The record is verified and
        replayed once per break, not once per connection: strangers knocking
        during the reconnect window cost a copy of a few lists, not a replay."""
        if self._point is None or self._point.record is not record:
            self._point = ResumePoint.from_record(record)
        assert self.secret is not None
        return Session.resume(
            self._point,
            role,
            identity_key=self.identity,
            resume_secret=self.secret,
            entropy=session_entropy(),
            hidden_secret=self.hidden_secret,
        )


async def resume_handshake(stream: trio.abc.Stream, session: Session, limit: float) -> Resumed:
    """Run a resumed session's handshake on ``stream`` (one task, no writer needed).

    Returns at the :class:`Resumed` event, with the session's catch-up bytes
    written; later events stay queued in the session for the link's reader.
    """
    with trio.fail_after(limit):
        await stream.send_all(session.data_to_send())
        while True:
            ev = session.next_event()
            out = session.data_to_send()
            if out:
                await stream.send_all(out)
            if isinstance(ev, Resumed):
                return ev
            if ev is NEED_DATA:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    raise TransportError("the connection closed during the resume handshake")
                session.receive_data(bytes(data))
            elif isinstance(ev, ConnectionClosed):
                raise TransportError(ev.reason)


def close_queued(incoming: trio.MemoryReceiveChannel[trio.abc.Stream]) -> None:
    """Connections queued while we did not need one: dropped (closed without a word)."""
    while True:
        try:
            stream = incoming.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
            return
        with suppress(Exception):
            if isinstance(stream, trio.SocketStream):
                stream.socket.close()


async def redial(
    rc: Reconnect,
    record: Record,
    role: Role,
    timeouts: Timeouts,
    on_attempt: OnAttempt,
    last: list[str],
) -> tuple[trio.abc.Stream, Session]:
    """The joiner: dial again and again, pausing longer each time (exponential backoff).

    Runs until it resumes or the caller cancels it; raises :class:`ResumeError`
    when the host answered but the match cannot resume there.
    """
    assert rc.dial is not None
    t = timeouts
    delay = t.backoff_initial
    attempt = 0
    while True:
        attempt += 1
        on_attempt(attempt)
        stream: trio.abc.Stream | None = None
        try:
            with trio.fail_after(t.connect):
                stream = await rc.dial()
            session = rc.session(record, role)
            await resume_handshake(stream, session, t.handshake)
            return stream, session
        except ResumeError:  # another player or another match: hopeless
            if stream is not None:
                await trio.aclose_forcefully(stream)
            raise
        except (KoiKoiError, OSError, trio.TooSlowError, trio.BrokenResourceError) as exc:
            last.append(
                os_reason(exc) if isinstance(exc, OSError) else str(exc) or type(exc).__name__
            )
            if stream is not None:
                await trio.aclose_forcefully(stream)
        await trio.sleep(delay)
        delay = min(delay * 2, t.backoff_max)


#: reconnection attempts a host runs at once, and per source address
RESUME_TOTAL: Final = 16
RESUME_PER_SOURCE: Final = 4
#: failed reconnection attempts one source address gets per break; later ones are refused
RESUME_FAILURES_PER_SOURCE: Final = 10


async def reaccept(
    rc: Reconnect,
    record: Record,
    role: Role,
    timeouts: Timeouts,
    on_attempt: OnAttempt,
    last: list[str],
    notify: Notify,
) -> tuple[trio.abc.Stream, Session] | None:
    """The host: try incoming connections; the first that resumes wins.

    The record is verified once (:meth:`Reconnect.session`); each candidate
    costs its handshake only, and a candidate proves the match and the resume
    secret before the host sends it anything keyed.  At most
    :data:`RESUME_TOTAL` candidates at once, :data:`RESUME_PER_SOURCE` per
    address, and :data:`RESUME_FAILURES_PER_SOURCE` failures per address; more
    get a plaintext ``refuse``.
    """
    assert rc.incoming is not None
    won: list[tuple[trio.abc.Stream, Session]] = []
    running: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    attempt = 1
    on_attempt(attempt)
    rc.wanted = True
    try:
        async with trio.open_nursery() as nursery:

            async def candidate(stream: trio.abc.Stream, source: str) -> None:
                try:
                    session = rc.session(record, role)
                    await resume_handshake(stream, session, timeouts.handshake)
                except (KoiKoiError, OSError, trio.TooSlowError, trio.BrokenResourceError) as e:
                    failed[source] += 1
                    await trio.aclose_forcefully(stream)
                    last.append(str(e) or type(e).__name__)
                    notify({"event": "warning", "text": f"refused a reconnection: {last[-1]}"})
                    return
                except BaseException:
                    await trio.aclose_forcefully(stream)
                    raise
                finally:
                    running[source] -= 1
                if won:
                    await trio.aclose_forcefully(stream)
                    return
                won.append((stream, session))
                nursery.cancel_scope.cancel()

            async for stream in rc.incoming:
                source = peer_address(stream)[0]
                if (
                    sum(running.values()) >= RESUME_TOTAL
                    or running[source] >= RESUME_PER_SOURCE
                    or failed[source] >= RESUME_FAILURES_PER_SOURCE
                ):
                    why = (
                        "too many failed reconnection attempts"
                        if failed[source] >= RESUME_FAILURES_PER_SOURCE
                        else "too many reconnection attempts at once"
                    )
                    notify(
                        {"event": "warning", "text": f"refused a reconnection from {source}: {why}"}
                    )
                    nursery.start_soon(refuse, stream, f"{why} from your address")
                    continue
                if attempt > 1 or won:
                    on_attempt(attempt)
                attempt += 1
                running[source] += 1
                nursery.start_soon(candidate, stream, source)
    finally:
        rc.wanted = False
        close_queued(rc.incoming)
    return won[0] if won else None
