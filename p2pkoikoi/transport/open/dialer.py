"""The joiner's side of reaching a host: every candidate address, raced until
one of them completes the authenticated handshake.

Theory of operation
-------------------
:func:`dial_authenticated` races the invite's candidates with
:func:`p2pkoikoi.transport.open.race.race`.  One attempt is: a TCP connection
(bounded by the connect timeout), a fresh :class:`Session` from the caller's
factory, and the session pumped by hand -- bytes out, bytes in, events pulled
-- until the peer has *proved itself* (``session.peer_key`` is set: its
identity signature over this connection's key exchange verified, which only
the holder of the invite's secret can make happen).  A LAN address that
reaches some other machine on the friend's network, a stale address, a
host that refuses: each fails only its own attempt.

The winner's stream and session go on to the match link together with the
events already pulled (``pending``), which the link processes first, as if
it had read them itself.  An error *after* the peer proved itself (the rules
differ) ends the race at once: it is the answer, not a wrong address.

:func:`dial_any` is the plain TCP race used to redial after a drop (the
resume handshake then proves the peer).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import Session
from p2pkoikoi.session.errors import ProtocolError, RefusedError
from p2pkoikoi.session.events import Event, NeedData
from p2pkoikoi.transport.open.addresses import Candidate
from p2pkoikoi.transport.open.gate import BUSY_REASON
from p2pkoikoi.transport.open.race import STAGGER, AllAttemptsFailed, Decisive, race

RECEIVE_SIZE = 65536
BUSY_PAUSE = 1.0  #: the first pause before dialing a busy host again (then doubled)
BUSY_PAUSE_MAX = 8.0


@dataclass
class Authenticated:
    """A connection whose peer proved it holds the invite, ready for the match link."""

    candidate: Candidate
    stream: trio.abc.Stream
    session: Session
    pending: list[Event]


def reason(exc: BaseException) -> str:
    """The words for one failed address (one clause of the one-line error)."""
    if isinstance(exc, trio.TooSlowError):
        return str(exc.args[0]) if exc.args else "no answer"
    if isinstance(exc, OSError):
        inner = exc.__cause__
        errs = list(inner.exceptions) if isinstance(inner, BaseExceptionGroup) else [exc]
        for err in errs:
            if isinstance(err, OSError) and err.errno:
                return os.strerror(err.errno)
        if exc.errno:
            return os.strerror(exc.errno)
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


async def _connect(c: Candidate, limit: float) -> trio.SocketStream:
    try:
        with trio.fail_after(limit):
            return await trio.open_tcp_stream(c.address, c.port)
    except trio.TooSlowError:
        raise trio.TooSlowError(f"no answer within {limit:g}s") from None


async def _authenticate(
    c: Candidate, make_session: Callable[[], Session], connect: float, handshake: float
) -> Authenticated:
    stream = await _connect(c, connect)
    return await authenticate_stream(c, stream, make_session, handshake)


async def authenticate_stream(
    c: Candidate,
    stream: trio.abc.Stream,
    make_session: Callable[[], Session],
    handshake: float,
) -> Authenticated:
    """Run a fresh session's handshake on ``stream`` (TCP, or QUIC over a punched path)
    until the peer proved itself (module docstring)."""
    session = make_session()
    pending: list[Event] = []
    try:
        with trio.fail_after(handshake):
            while True:
                while True:
                    ev = session.next_event()
                    out = session.data_to_send()
                    if out:
                        await stream.send_all(out)
                    if isinstance(ev, NeedData):
                        break
                    pending.append(ev)
                if session.peer_key is not None:
                    return Authenticated(c, stream, session, pending)
                data = await stream.receive_some(RECEIVE_SIZE)
                session.receive_data(bytes(data))
                if not data:
                    session.next_event()  # raises or reports the early close
                    raise ConnectionResetError(errno.ECONNRESET, "the connection ended early")
    except trio.TooSlowError:
        await trio.aclose_forcefully(stream)
        raise trio.TooSlowError(f"connected, but no handshake within {handshake:g}s") from None
    except BaseException as exc:
        if isinstance(exc, KoiKoiError) and session.peer_key is not None:
            # the session's last words (a decline naming the differing rules) go out first
            with trio.move_on_after(1), suppress(trio.BrokenResourceError, OSError):
                if out := session.data_to_send():
                    await stream.send_all(out)
            await trio.aclose_forcefully(stream)
            raise Decisive(exc) from None
        await trio.aclose_forcefully(stream)
        if isinstance(exc, trio.BrokenResourceError):
            raise ConnectionResetError(errno.ECONNRESET, "the connection broke") from None
        raise


async def dial_authenticated(
    candidates: Sequence[Candidate],
    make_session: Callable[[], Session],
    *,
    connect: float,
    handshake: float,
    stagger: float = STAGGER,
) -> Authenticated:
    """The first candidate to complete the authenticated handshake (module docstring);
    :class:`~p2pkoikoi.transport.open.race.AllAttemptsFailed` names every address and why."""

    async def attempt(c: Candidate) -> Authenticated:
        return await _authenticate(c, make_session, connect, handshake)

    async def discard(a: Authenticated) -> None:
        await trio.aclose_forcefully(a.stream)

    # a host whose slots for strangers are all taken says it is busy: try again,
    # pausing 1, 2, 4 ... s, as long as the handshake time-out allows
    give_up = trio.current_time() + handshake
    pause = BUSY_PAUSE
    while True:
        try:
            _, won = await race(
                candidates, attempt, reason=reason, discard=discard, stagger=stagger
            )
        except AllAttemptsFailed as exc:
            # a p2pkoikoi host answered ("busy with another match", "the code does not
            # match"): that is the answer, not a list of addresses that did not work
            spoke = [e for e in exc.errors if isinstance(e, ProtocolError)]
            busy = all(isinstance(e, RefusedError) and BUSY_REASON in str(e) for e in spoke)
            if spoke and busy and trio.current_time() + pause < give_up:
                await trio.sleep(pause)
                pause = min(2 * pause, BUSY_PAUSE_MAX)
                continue
            if spoke:
                raise spoke[0] from None
            raise
        return won


async def dial_any(
    candidates: Sequence[Candidate], *, connect: float, stagger: float = STAGGER
) -> trio.SocketStream:
    """The first TCP connection to any candidate (redialing; the resume proves the peer)."""

    async def attempt(c: Candidate) -> trio.SocketStream:
        return await _connect(c, connect)

    async def discard(s: trio.SocketStream) -> None:
        await trio.aclose_forcefully(s)

    _, stream = await race(candidates, attempt, reason=reason, discard=discard, stagger=stagger)
    return stream
