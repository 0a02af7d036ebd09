"""The host's listener: accept for the whole match, hand on who is wanted, refuse the rest.

A host listens from the invite to the end of the match.  While it needs a
connection (before the match, and while re-accepting after a drop,
:attr:`Reconnect.wanted`) accepted streams go into a channel for the opener
or the reconnect loop, at most :data:`MAX_PENDING` at a time; every other
connection gets one plaintext ``refuse`` frame (:data:`REFUSE_REASON`) and is
closed, so a third player learns in one line that the host is busy.
"""

from __future__ import annotations

import errno
import math
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import trio

from p2pkoikoi.transport.errors import ConnectError, ListenAddressError, raise_single
from p2pkoikoi.transport.link.reconnect import Reconnect, close_queued
from p2pkoikoi.transport.open.strangers import refuse


async def listen(port: int, bind: str | None) -> list[trio.SocketListener]:
    """Listeners on ``port`` (0: a free one) of ``bind`` (None: all addresses), all on one port."""
    try:
        listeners = await trio.open_tcp_listeners(port, host=bind or None)
    except OSError as exc:
        where = f"{bind or 'all addresses'} port {port}"
        message = f"cannot listen on {where}: {exc.strerror or exc}"
        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
            raise ListenAddressError(message) from None  # bad input, not a busy port
        raise ConnectError(message) from None
    first = listeners[0].socket.getsockname()[1]
    keep = [ln for ln in listeners if ln.socket.getsockname()[1] == first]
    for ln in listeners:
        if ln not in keep:
            await ln.aclose()
    return keep


#: connections a host holds at once while it still needs one (more are refused)
MAX_PENDING: Final = 16


async def serve(
    listeners: list[trio.SocketListener],
    incoming: trio.MemorySendChannel[trio.abc.Stream],
    rc: Reconnect,
) -> None:
    """Accept for the whole match: hand connections on while one is wanted, refuse the rest."""
    async with trio.open_nursery() as nursery:

        async def accept_loop(listener: trio.SocketListener) -> None:
            while True:
                try:
                    stream = await listener.accept()
                except OSError:  # out of file descriptors and the like: try again soon
                    await trio.sleep(0.5)
                    continue
                if rc.wanted and incoming.statistics().current_buffer_used < MAX_PENDING:
                    incoming.send_nowait(stream)
                else:
                    nursery.start_soon(refuse, stream)

        for ln in listeners:
            nursery.start_soon(accept_loop, ln)


async def forward(
    extra: trio.MemoryReceiveChannel[Any],
    incoming: trio.MemorySendChannel[trio.abc.Stream],
    rc: Reconnect,
) -> None:
    """Streams from another source (QUIC over a punched path) join the TCP ones, on the
    same terms: handed on while one is wanted, refused otherwise."""
    async with trio.open_nursery() as nursery:
        async for stream in extra:
            if rc.wanted and incoming.statistics().current_buffer_used < MAX_PENDING:
                incoming.send_nowait(stream)
            else:
                nursery.start_soon(refuse, stream)


@asynccontextmanager
async def hosting(
    listeners: list[trio.SocketListener],
    rc: Reconnect,
    extra: trio.MemoryReceiveChannel[Any] | None = None,
) -> AsyncIterator[trio.MemoryReceiveChannel[trio.abc.Stream]]:
    """The listeners' accept loops run (in the background) for the whole block; streams
    from ``extra`` are handed on with the accepted ones."""
    tx, rx = trio.open_memory_channel[trio.abc.Stream](math.inf)
    rc.incoming = rx
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve, listeners, tx, rc)
            if extra is not None:
                nursery.start_soon(forward, extra, tx, rc)
            try:
                yield rx
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise_single(group)
    finally:
        close_queued(rx)
        for ln in listeners:
            with trio.move_on_after(1) as cs:
                cs.shield = True
                await ln.aclose()
