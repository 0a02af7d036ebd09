"""How a connection ends: what we sent last still arrives (transport/connection.py).

The faulty-link test (tests/test_netns.py) lost a final signature now and then:
the side that finished first closed its socket with a ping of the other's
unread in it, the kernel answered with a reset, and the reset threw away the
signature still in flight over the 150 ms link.  These tests pin the cause
on loopback, where a reset shows as ``ECONNRESET`` after the data.
"""

from __future__ import annotations

import socket

import pytest
import trio
import trio.testing

from p2pkoikoi.transport.connection import close_gracefully


async def _tcp_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    client = await trio.open_tcp_stream("127.0.0.1", port)
    server = await listeners[0].accept()
    await listeners[0].aclose()
    return client, server


async def _read_to_end(stream: trio.SocketStream) -> tuple[bytes, str]:
    """Everything the stream delivers, and how it ended: "eof" or "reset"."""
    got = b""
    while True:
        try:
            data = await stream.receive_some(65536)
        except trio.BrokenResourceError:
            return got, "reset"
        if not data:
            return got, "eof"
        got += data


async def test_a_graceful_close_with_unread_bytes_ends_in_eof_not_a_reset() -> None:
    ours, theirs = await _tcp_pair()
    await theirs.send_all(b"ping")  # never read by our side
    await trio.testing.wait_all_tasks_blocked()
    await ours.send_all(b"final signature")
    closed = trio.Event()

    async def close() -> None:
        await close_gracefully(ours, 5.0)
        closed.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(close)
        got, end = await _read_to_end(theirs)
        assert (got, end) == (b"final signature", "eof")
        assert not closed.is_set()  # it waits for our end before it closes
        await theirs.aclose()
    assert closed.is_set()


async def test_a_forced_close_with_unread_bytes_resets_the_connection() -> None:
    """The old way (``aclose_forcefully``), to show what the graceful close avoids."""
    ours, theirs = await _tcp_pair()
    await theirs.send_all(b"ping")
    await trio.testing.wait_all_tasks_blocked()
    await ours.send_all(b"final signature")
    await trio.aclose_forcefully(ours)
    got, end = await _read_to_end(theirs)
    assert end == "reset"
    await theirs.aclose()


async def test_a_peer_that_never_ends_costs_the_linger_and_no_more(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ours, theirs = trio.testing.memory_stream_pair()
    start = trio.current_time()
    await close_gracefully(ours, 3.0)
    assert trio.current_time() - start == pytest.approx(3.0)
    assert await theirs.receive_some(10) == b""  # it did say it was done


async def test_no_linger_closes_at_once(autojump_clock: trio.testing.MockClock) -> None:
    ours, _theirs = trio.testing.memory_stream_pair()
    start = trio.current_time()
    await close_gracefully(ours, 0.0)
    assert trio.current_time() == start


async def test_a_peer_that_keeps_talking_is_not_read_forever() -> None:
    ours, theirs = await _tcp_pair()
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)

    async def flood() -> None:
        chunk = b"x" * 65536
        try:
            while True:
                await theirs.send_all(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        with trio.fail_after(60):  # a bound for a broken build, not a measurement
            await close_gracefully(ours, 3600.0)
        nursery.cancel_scope.cancel()
    await theirs.aclose()
