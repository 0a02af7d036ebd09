"""One connection of a link: its stream, its writer and reader tasks.

Theory of operation
-------------------
A :class:`Connection` lives as long as one byte stream; a link that
reconnects makes a new one per stream (an empty queue, a fresh writer).

* the **writer** (:meth:`Connection.writer`) is the only task that calls
  ``send_all``.  Everybody else hands bytes to :meth:`Connection.write`,
  which sends them at once from the calling task when nothing is queued and
  the kernel takes them (:meth:`Connection._send_now`), else queues them for
  the writer in the order the session produced them, so frames never
  interleave however many tasks act, chat or ping at once.  What waits is
  counted: past :data:`OUTGOING_LIMIT` the peer is not reading and the
  connection is dropped rather than our memory growing;
* the **reader** (:meth:`Connection.reader`) receives bytes, feeds
  :meth:`Session.receive_data` and lets the link turn the session's events
  into updates (:attr:`LinkContext.process`).  A stream that ends during
  play drops the connection (the link may resume); other errors fail the match.

A connection knows its stream, its session, the link's :class:`Pulse` and
the link's :class:`LinkContext` (callables), never the link itself.  It
owns its ``lost`` event: set once the link gives the connection up
(:attr:`LinkContext.drop` decides whether to reconnect or stop for good).
"""

from __future__ import annotations

import math
import os
from typing import Protocol, runtime_checkable

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import Session, State
from p2pkoikoi.transport.errors import PeerFloodError, TransportError
from p2pkoikoi.transport.limits import LINGER_BYTES, OUTGOING_LIMIT, RECEIVE_SIZE
from p2pkoikoi.transport.link.context import LinkContext


class Connection:
    """The I/O of one stream (``stream=None``: no connection yet, nothing is written)."""

    def __init__(
        self,
        stream: trio.abc.Stream | None,
        session: Session,
        ctx: LinkContext,
    ) -> None:
        self._session = session
        self._pulse = ctx.pulse
        self._ctx = ctx
        self.stream = stream
        self.lost = trio.Event()  # the link gave this connection up
        self.out_tx, self.out_rx = trio.open_memory_channel[bytes](math.inf)
        self.pending = 0  # bytes in that channel: bounded by OUTGOING_LIMIT in write
        self.writer_done = trio.Event()
        if stream is None:  # resuming: no writer runs until a connection comes back
            self.writer_done.set()
        self.last_tx = trio.current_time()

    def close(self) -> None:
        """No more writes: the writer drains the queue, then ends."""
        self.out_tx.close()

    def write(self, data: bytes) -> None:
        """Hand bytes to the stream, in order: at once when nothing waits for the
        writer task (see :meth:`_send_now`), else through the writer task.

        What waits for the writer is counted: past :data:`OUTGOING_LIMIT` the
        peer is not reading, and the connection is dropped rather than our
        memory growing (a reconnect starts over with an empty queue).
        """
        if not data:
            return
        if self.pending + len(data) > OUTGOING_LIMIT:
            self._ctx.drop(
                PeerFloodError(
                    f"the other player stopped reading: {self.pending // 1024} KiB wait to "
                    "be sent; connection closed"
                )
            )
            return
        if self.pending == 0:
            sent = self._send_now(data)
            if sent:
                self.last_tx = trio.current_time()
                if sent == len(data):
                    return
                data = data[sent:]
        try:
            self.out_tx.send_nowait(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return
        self.pending += len(data)
        self.last_tx = trio.current_time()

    def _send_now(self, data: bytes) -> int:
        """Bytes of ``data`` the kernel took at once (0: leave it all to the writer task).

        The common case during play: nothing is queued and a TCP socket's send
        buffer has room, so the bytes go out from the task that made them,
        without waking the writer task (two trio task switches and a
        scheduler pass per message).  Anything unusual (another kind of
        stream, a closed or shut socket, a full buffer, an error) returns 0
        or a partial count, and the writer task sends the rest and meets the
        error itself, as before.  Only while nothing is queued, so the order
        of bytes on the stream is the order of the calls.
        """
        stream = self.stream
        if (
            not isinstance(stream, trio.SocketStream)
            or not self._ctx.online()
            or self.lost.is_set()
            or self._pulse.is_stopped
        ):
            return 0
        sock = stream.socket
        fd = sock.fileno()
        if fd < 0 or sock.did_shutdown_SHUT_WR:
            return 0
        try:
            return os.write(fd, data)
        except OSError:  # a full buffer or a broken connection: the writer task's job
            return 0

    @property
    def blocked(self) -> bool:
        """Something waits for the writer: the peer reads slowly or not at all.

        Pings are not answered then, and not sent: a reply that cannot leave
        proves nothing and only fills the queue.
        """
        return self.pending > 0

    async def writer(self) -> None:
        """The one task that writes to the stream, in channel order."""
        try:
            async for data in self.out_rx:
                try:
                    assert self.stream is not None
                    await self.stream.send_all(data)
                    self.pending -= len(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    if not self._pulse.is_stopped:
                        self._ctx.drop(TransportError("the connection to the other player broke"))
                    return
        finally:
            self.writer_done.set()

    async def reader(self) -> None:
        """Receive, feed the session, let the link handle its events; until the end."""
        ctx, pulse, s = self._ctx, self._pulse, self._session
        try:
            while not pulse.is_stopped:
                ctx.process()
                if pulse.is_stopped or s.state in (State.CLOSED, State.ERROR):
                    return
                try:
                    data = await self._receive()
                except (trio.BrokenResourceError, OSError):
                    data = b""
                except trio.ClosedResourceError:
                    return
                if not data and ctx.resumable():  # keep the session: it resumes
                    ctx.drop(TransportError("the connection to the other player broke"))
                    return
                s.receive_data(bytes(data))
        except KoiKoiError as exc:
            ctx.fail(exc)

    async def _receive(self) -> bytes | bytearray:
        """The next bytes from the stream (``b""``: it ended).

        From a TCP socket, during play: wait until it is readable, then read,
        without trio's stream wrappers, which first try a read that fails (the
        reader asks right after handling a message, and the answer to it comes
        only after our player's move), then wait, then read again, and add a
        scheduler pass after every read.  Anything else, or a closed socket,
        goes through ``receive_some`` and meets its errors there.  The wait is
        a checkpoint: cancellation and the other tasks run as with
        ``receive_some``.
        """
        stream = self.stream
        assert stream is not None
        if isinstance(stream, trio.SocketStream):
            fd = stream.socket.fileno()
            while fd >= 0:
                await trio.lowlevel.wait_readable(fd)
                if stream.socket.fileno() != fd:  # closed meanwhile
                    break
                try:
                    return os.read(fd, RECEIVE_SIZE)
                except BlockingIOError:  # woken, yet nothing to read: wait again
                    continue
        return await stream.receive_some(RECEIVE_SIZE)


@runtime_checkable
class Delivering(Protocol):
    """A stream that can say when the peer has all we sent, after both ends' EOF
    (QUIC's :class:`~p2pkoikoi.transport.nat.quic.QuicStream`: its close would discard
    what the peer has not acknowledged; TCP's kernel keeps sending after a close)."""

    async def delivered(self) -> None: ...


async def close_gracefully(stream: trio.abc.Stream, linger: float) -> None:
    """Close ``stream`` so that what we sent last still reaches the other side.

    Closing a TCP socket while bytes of the peer's wait unread in it (a ping,
    its goodbye) makes the kernel answer with a reset instead of a FIN, and a
    reset throws away whatever we sent that the peer has not acknowledged
    yet.  Over a slow or lossy path that is our last message, often the final
    signature: the peer then sees a broken connection and a match without our
    signature.  So we half-close (the peer reads our end after all our bytes),
    read and discard until the peer ends too, and only then close; at most
    ``linger`` seconds and :data:`LINGER_BYTES`, so a peer that never closes
    costs a bounded wait.  Shielded: it runs while the link's tasks are
    being cancelled.
    """
    with trio.move_on_after(linger) as cs:
        cs.shield = True
        try:
            if isinstance(stream, trio.abc.HalfCloseableStream):
                await stream.send_eof()
            discarded = 0
            while discarded < LINGER_BYTES:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    if isinstance(stream, Delivering):
                        await stream.delivered()
                    break
                discarded += len(data)
        except (
            trio.BrokenResourceError,
            trio.ClosedResourceError,
            trio.BusyResourceError,
            OSError,
        ):
            pass
    await trio.aclose_forcefully(stream)
