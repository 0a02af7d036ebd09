"""Talking to connections that are not (yet) the opponent: who they are, and a refusal.

Used by the listener, the gate and the reconnect loop alike, so it sits below
all three.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Final

import trio

from p2pkoikoi.session import wire
from p2pkoikoi.transport.limits import RECEIVE_SIZE

REFUSE_REASON: Final = "the host is playing a match with someone else"


async def refuse(stream: trio.abc.Stream, reason: str = REFUSE_REASON) -> None:
    """One plaintext ``refuse`` frame, then close (after the peer read it, if it does)."""
    frame = wire.encode_frame(wire.encode_message(wire.RefuseMsg(reason=reason)))
    with (
        trio.move_on_after(5),
        suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
    ):
        await stream.send_all(frame)
        if isinstance(stream, trio.abc.HalfCloseableStream):
            await stream.send_eof()
        # drain what the peer sent (its hello) so that closing does not reset the
        # connection before it read the refusal
        while await stream.receive_some(RECEIVE_SIZE):
            pass
    await trio.aclose_forcefully(stream)


def peer_address(stream: trio.abc.Stream) -> tuple[str, int]:
    """Who connected (for notes); ``("?", 0)`` for a stream that is not a socket."""
    if isinstance(stream, trio.SocketStream):
        peer = stream.socket.getpeername()
        return str(peer[0]), int(peer[1])
    other = getattr(stream, "peer_address", None)  # a QUIC stream over a punched path
    if isinstance(other, tuple) and len(other) == 2:
        return str(other[0]), int(other[1])
    return "?", 0
