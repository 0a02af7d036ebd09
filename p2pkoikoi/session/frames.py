"""Frames in and out: the bytes read, split into frames, and the bytes to write.

Theory of operation
-------------------
:class:`Inbox` holds what the transport read and the session has not decoded
yet (:meth:`Inbox.feed`: at most :data:`~p2pkoikoi.session.states.MAX_BUFFER`
unread bytes, and never a frame whose header is already bad) and hands out one
whole frame at a time (:meth:`Inbox.take`).  :class:`Outbox` holds the bytes the
session produced and not yet handed to the transport, and the two AEAD
channels once the hellos gave keys: a message is sealed and queued in the order
produced (:meth:`Outbox.seal`), or written in plaintext while the peer may not
share our keys (:meth:`Outbox.plain`).  The
:class:`~p2pkoikoi.session.session.Session` reads frames off the inbox, hands
the first (the peer's plaintext ``hello``) to the handshake and every later
one, once decrypted, to the part for its message type; events queued by a part
come out before the next frame is read, so the session never decodes past an
error.  They are separate because they are the one way in and out for every
byte, and the rules above hold for all the parts at once.
"""

from __future__ import annotations

import p2pkoikoi.session.channel as channel
import p2pkoikoi.session.wire as wire
from p2pkoikoi.session.errors import LocalProtocolError, RemoteProtocolError
from p2pkoikoi.session.states import MAX_BUFFER


class Inbox:
    """Bytes read from the peer, not yet taken as frames."""

    __slots__ = ("_buf", "_eof", "_flooded")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._eof = False
        self._flooded = False  # the peer sent more than MAX_BUFFER unread bytes

    def __repr__(self) -> str:
        return f"Inbox(<{len(self._buf)} bytes>, eof={self._eof}, flooded={self._flooded})"

    def __len__(self) -> int:
        return len(self._buf)

    @property
    def eof(self) -> bool:
        return self._eof

    @property
    def flooded(self) -> bool:
        return self._flooded

    def feed(self, data: bytes, *, reading: bool) -> None:
        """Bytes read; ``b""`` means the stream ended.  ``reading``: the session still
        reads (not closed, not failed); otherwise the bytes are dropped."""
        if self._eof:
            if data:
                raise LocalProtocolError("receive_data after end of stream")
            return
        if not data:
            self._eof = True
            return
        if not reading or self._flooded:
            return  # nothing more is read
        buf = self._buf
        buf += data
        if len(buf) >= wire.HEADER:
            try:
                wire.frame_length(bytes(buf[: wire.HEADER]))
            except RemoteProtocolError:
                del buf[wire.HEADER :]  # never buffer a frame we will reject
        if len(buf) > MAX_BUFFER:
            # More unread bytes than a transport that drains events after each read
            # ever holds: a flood, however it is framed.  Keep none of it, and let
            # next_event refuse the peer (after the events already decoded).
            buf.clear()
            self._flooded = True

    def take(self) -> bytes | None:
        """The next whole frame's payload, or None when none is complete yet."""
        buf = self._buf
        if len(buf) >= wire.HEADER:
            length = wire.frame_length(bytes(buf[: wire.HEADER]))
            if len(buf) >= wire.HEADER + length:
                payload = bytes(buf[wire.HEADER : wire.HEADER + length])
                del buf[: wire.HEADER + length]
                return payload
        return None

    def clear(self) -> None:
        self._buf.clear()


class Outbox:
    """Bytes for the peer, in the order produced, and the keyed channels."""

    __slots__ = ("_buf", "_recv", "_send", "_sent_first")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._send: channel.Channel | None = None
        self._recv: channel.Channel | None = None
        self._sent_first = False  # our first encrypted frame (auth / resume) is queued

    def __repr__(self) -> str:
        return f"Outbox(<{len(self._buf)} bytes>, keyed={self._send is not None})"

    @property
    def pending(self) -> bytearray:
        """The bytes not yet taken (the buffer itself)."""
        return self._buf

    @property
    def keyed(self) -> bool:
        return self._send is not None

    @property
    def send_channel(self) -> channel.Channel | None:
        return self._send

    @property
    def sent_first(self) -> bool:
        return self._sent_first

    def set_keys(self, send: channel.Channel, recv: channel.Channel) -> None:
        self._send, self._recv = send, recv

    def first_sent(self) -> None:
        """Our first encrypted frame is queued: chat and pings may follow."""
        self._sent_first = True

    def plain(self, payload: bytes) -> None:
        self._buf += wire.encode_frame(payload)

    def seal(self, msg: wire.Message) -> None:
        assert self._send is not None
        self._buf += wire.encode_frame(self._send.seal(wire.encode_message(msg)))

    def open(self, payload: bytes) -> bytes:
        assert self._recv is not None
        return self._recv.open(payload)

    def take(self) -> bytes:
        out = bytes(self._buf)
        self._buf.clear()
        return out

    def replace(self, data: bytes) -> None:
        """Put ``data`` in place of what is queued (tests put a taken hello back)."""
        self._buf = bytearray(data)
