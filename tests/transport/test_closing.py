"""How a connection ends: what we sent last still arrives (transport/link/connection.py).

The faulty-link test (tests/lab/test_netns.py) lost a final signature now and then:
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

from p2pkoikoi.transport.link.connection import close_gracefully
from p2pkoikoi.transport.nat.quic import QuicStream
from p2pkoikoi.transport.nat.udp import UdpEndpoint, open_socket


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


class _DropOne:
    """A UDP socket that loses the next datagram it is asked to send, once armed."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.armed = False
        self.dropped = 0

    def sendto(self, data: bytes, addr: tuple[str, int]) -> int:
        if self.armed:
            self.armed = False
            self.dropped += 1
            return len(data)
        return self.sock.sendto(data, addr)


async def test_quic_a_lost_last_message_still_arrives_when_its_side_closes_gracefully() -> None:
    """Over QUIC a close discards what is not acknowledged yet: the side whose FIN goes
    last (after the other's) waits for the other's close, and its last message, lost
    once and sent again, arrives."""
    a_ep = UdpEndpoint(open_socket(0, "127.0.0.1"))
    b_ep = UdpEndpoint(open_socket(0, "127.0.0.1"))
    incoming_tx, incoming_rx = trio.open_memory_channel[QuicStream](1)
    b_ep.incoming = incoming_tx
    b_ep.admit = lambda _addr: True
    lossy = _DropOne(a_ep.raw)
    a_ep.raw = lossy  # type: ignore[assignment]
    got: list[bytes] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(a_ep.run)
        await nursery.start(b_ep.run)
        with trio.fail_after(30):  # a bound for a broken build, not a measurement
            ours = await a_ep.connect(("127.0.0.1", b_ep.port), 10)
            await ours.send_all(b"hello")
            theirs = await incoming_rx.receive()
            assert await theirs.receive_some(100) == b"hello"

            async def their_end() -> None:  # its FIN goes first; it reads to ours
                await theirs.send_eof()
                while data := await theirs.receive_some(100):
                    got.append(data)
                await theirs.delivered()
                await theirs.aclose()

            nursery.start_soon(their_end)
            assert await ours.receive_some(100) == b""  # their FIN: ours will be the last
            lossy.armed = True
            await ours.send_all(b"final signature")  # this datagram is lost
            await close_gracefully(ours, 10.0)
        nursery.cancel_scope.cancel()
    a_ep.close()
    b_ep.close()
    assert lossy.dropped == 1
    assert b"".join(got) == b"final signature"
