"""The lifetime of a link: :func:`open_link`, the ``async with`` that owns its nursery.

Theory of operation
-------------------
:func:`open_link` makes the :class:`~p2pkoikoi.transport.link.network.NetworkLink`
and, in the task that owns the link's lifetime, the nursery of all its tasks
(the supervisor's, the clock's, the final-signature wait...).  It hands the link
out once the match has started: the handshake runs first (or, with no stream,
a resumed session reconnects first).  Errors during play do not cancel the
caller: the link stores the error, sends a last ``"over"`` update and stops
its tasks; leaving the ``async with`` block then raises that one error, a
:class:`KoiKoiError` with its one-line message, never a group.  Leaving the
block before the match is over says goodbye (the match stays unfinished, its
record written); the record is closed and the stream with it, however the
block ends.  Who the stream comes from is the openers' job
(:mod:`~p2pkoikoi.transport.open.host`, :mod:`~p2pkoikoi.transport.open.join`,
:mod:`~p2pkoikoi.transport.open.resume`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import trio

from p2pkoikoi.session import LocalProtocolError, Session
from p2pkoikoi.session.events import Event as SessionEvent
from p2pkoikoi.transport.errors import TransportError, raise_single
from p2pkoikoi.transport.link.handshake import DecideRules, accept_decision
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Notify, nop
from p2pkoikoi.transport.link.reconnect import Reconnect
from p2pkoikoi.transport.player import Player


def open_link(
    stream: trio.abc.Stream | None,
    session: Session,
    player: Player,
    *,
    notify: Notify | None = None,
    decide_rules: DecideRules | None = None,
    reconnect: Reconnect | None = None,
    early: Sequence[SessionEvent] = (),
) -> AbstractAsyncContextManager[NetworkLink]:
    """Run ``session`` over ``stream``; yields the link once the match has started.

    ``player`` says where the record goes, the time bounds and the known peers
    (its identity and name are the session's already).

    ``early`` are events already pulled from ``session`` (the joiner's dialer
    runs the first steps of the handshake itself): they are handled first.

    The nursery of the connection's tasks lives here.  Leaving the block
    before the match is over says goodbye (the match stays unfinished, its
    record written); an error raised by the link is re-raised on exit.

    With ``reconnect`` a connection lost during play is replaced (see
    :class:`Reconnect`) within ``timeouts.reconnect_window``.  ``stream=None``
    with a resumed session (:meth:`Session.resume`) starts by reconnecting:
    that is how a crashed player comes back.
    """
    make = functools.partial(
        NetworkLink,
        stream,
        session,
        player,
        notify=notify or nop,
        decide_rules=decide_rules or accept_decision,
        reconnect=reconnect,
        early=early,
    )
    return _opened(stream, session, reconnect, make)


@asynccontextmanager
async def _opened(
    stream: trio.abc.Stream | None,
    session: Session,
    reconnect: Reconnect | None,
    make: Callable[[], NetworkLink],
) -> AsyncIterator[NetworkLink]:
    """:func:`open_link`: the nursery of the link's tasks lives here, in the task
    that owns the link's lifetime."""
    if stream is None and (reconnect is None or session.match is None):
        raise LocalProtocolError("only a resumed session with a way to reconnect needs no stream")
    link = make()
    started = False
    try:
        async with trio.open_nursery() as nursery:
            link.start(nursery, stream)
            try:
                started = await link.begin(resuming=stream is None)
            finally:
                if not started:
                    await link.shutdown(goodbye=False)
            if started:
                try:
                    yield link
                finally:
                    await link.shutdown(goodbye=True)
    except BaseExceptionGroup as group:
        raise_single(group)
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        if link.error is None:
            raise TransportError("the connection to the other player broke") from None
    finally:
        await link.release()
    if link.error is not None:
        raise link.error
