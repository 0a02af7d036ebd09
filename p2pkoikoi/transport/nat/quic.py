"""The match over UDP: aioquic's sans-I/O ``QuicConnection`` driven by trio, as a stream.

Theory of operation
-------------------
Once a connectivity check has found a UDP path through both NATs
(:mod:`~p2pkoikoi.transport.nat.checks`), the match runs over QUIC on that very
socket: the NAT mappings the checks opened are the ones QUIC uses.

* :class:`QuicPeer` is one ``QuicConnection`` to one remote address.  The
  endpoint (:class:`~p2pkoikoi.transport.nat.udp.UdpEndpoint`) hands it the
  datagrams from that address; its timer task calls ``handle_timer`` when
  aioquic asks; after every input the connection's datagrams go out on the
  shared socket.
* :class:`QuicStream` is the ``trio.abc.Stream`` the session sees: the one
  bidirectional QUIC stream 0 (the client opens it).  The session's framing,
  keys, signatures and records are exactly those of a TCP connection, so
  ``verify``, ``resume`` and other clients are untouched.
* QUIC's own TLS certificate is a fresh self-signed one and the client does
  not verify it: the session handshake authenticates the peer (SPAKE2 on the
  invite secret, identity signatures), as it does over TCP.
* Keepalive: the session pings every few seconds while the match is on
  (``Timeouts.ping_interval``, 5 s), well under the 25 s that UDP bindings of
  common NATs survive; QUIC's idle timeout (60 s) is longer than the session's
  own silence limit, so the session decides when a connection is lost.
"""

from __future__ import annotations

import datetime
import ssl
from collections.abc import Callable
from typing import Final

import trio
from aioquic.quic import events as qe
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ALPN: Final = "p2pkoikoi"
IDLE_TIMEOUT: Final = 60.0
Addr = tuple[str, int]
Send = Callable[[bytes, Addr], None]


def self_signed() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A throw-away certificate for QUIC's TLS (the session authenticates, not TLS)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "p2pkoikoi")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    return cert, key


def configuration(
    *, client: bool, cert: tuple[x509.Certificate, object] | None = None
) -> QuicConfiguration:
    conf = QuicConfiguration(is_client=client, alpn_protocols=[ALPN], idle_timeout=IDLE_TIMEOUT)
    if client:
        conf.verify_mode = ssl.CERT_NONE
    else:
        c, k = cert or self_signed()
        conf.certificate = c
        conf.private_key = k
    return conf


class QuicPeer:
    """One QUIC connection to ``addr`` on a shared socket (module docstring)."""

    def __init__(self, conn: QuicConnection, addr: Addr, send: Send) -> None:
        self.conn = conn
        self.addr = addr
        self._send = send
        self._wake = trio.Event()
        self.handshake = trio.Event()
        self.closed = trio.Event()
        self.close_reason = ""
        self._data = bytearray()
        self._readable = trio.Event()
        self._eof = False
        self.stream_id: int | None = None
        self.new_stream = trio.Event()

    def now(self) -> float:
        return trio.current_time()

    def flush(self) -> None:
        """Process aioquic's events and send what it has."""
        while (ev := self.conn.next_event()) is not None:
            if isinstance(ev, qe.HandshakeCompleted):
                self.handshake.set()
            elif isinstance(ev, qe.StreamDataReceived):
                if self.stream_id is None:
                    self.stream_id = ev.stream_id
                    self.new_stream.set()
                if ev.stream_id == self.stream_id:
                    self._data += ev.data
                    if ev.end_stream:
                        self._eof = True
                    self._readable.set()
            elif isinstance(ev, qe.ConnectionTerminated):
                self.close_reason = ev.reason_phrase or f"QUIC error {ev.error_code}"
                self._terminated()
        if not self.closed.is_set():
            for data, addr in self.conn.datagrams_to_send(self.now()):
                self._send(data, (str(addr[0]), int(addr[1])))
        self._wake.set()

    def _terminated(self) -> None:
        self.closed.set()
        self._eof = True
        self._readable.set()
        self.handshake.set()
        self.new_stream.set()

    def datagram(self, data: bytes, addr: Addr) -> None:
        self.conn.receive_datagram(data, addr, self.now())
        self.flush()

    async def run(self) -> None:
        """The timer: ``handle_timer`` whenever aioquic asks, until the connection ends."""
        while not self.closed.is_set():
            self._wake = trio.Event()
            at = self.conn.get_timer()
            if at is None:
                await self._wake.wait()
                continue
            with trio.move_on_at(at):
                await self._wake.wait()
            if trio.current_time() >= at:
                self.conn.handle_timer(self.now())
                self.flush()

    # -- the stream's side
    def write(self, data: bytes, *, end_stream: bool = False) -> None:
        """Send ``data`` on the stream (``end_stream``: then its FIN)."""
        if self.closed.is_set():
            raise trio.BrokenResourceError(self.close_reason or "the QUIC connection closed")
        if self.stream_id is None:
            self.stream_id = self.conn.get_next_available_stream_id()
        self.conn.send_stream_data(self.stream_id, data, end_stream=end_stream)
        self.flush()

    @property
    def at_eof(self) -> bool:
        """The peer's FIN (or the connection's end) has arrived."""
        return self._eof

    async def read(self, max_bytes: int) -> bytes:
        while not self._data and not self._eof:
            self._readable = trio.Event()
            await self._readable.wait()
        out = bytes(self._data[:max_bytes])
        del self._data[:max_bytes]
        return out

    def close(self, reason: str = "") -> None:
        if not self.closed.is_set():
            self.conn.close(error_code=0, reason_phrase=reason)
            for data, addr in self.conn.datagrams_to_send(self.now()):
                self._send(data, (str(addr[0]), int(addr[1])))
            self.close_reason = reason or "closed"
            self._terminated()
            self._wake.set()


class QuicStream(trio.abc.HalfCloseableStream):
    """The session's byte stream over one :class:`QuicPeer` (stream 0).

    Closing: a QUIC ``CONNECTION_CLOSE`` discards stream data the other side
    has not acknowledged, so a graceful end (see
    :func:`~p2pkoikoi.transport.link.connection.close_gracefully`) sends the
    stream's FIN (:meth:`send_eof`), reads to the peer's FIN, then
    :meth:`delivered`: the side whose FIN went *last* cannot know that its last
    bytes arrived until the other side closes (it does once it has read that
    FIN, hence every byte before it); the side whose FIN went first knows
    already, since the peer's FIN came after reading ours.
    """

    def __init__(self, peer: QuicPeer, on_close: Callable[[QuicPeer], None] | None = None) -> None:
        self.peer = peer
        self._on_close = on_close
        self._eof_was_last = False  # we sent our FIN after the peer's had arrived

    @property
    def peer_address(self) -> Addr:
        return self.peer.addr

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.peer.write(bytes(data))
        await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        return await self.peer.read(max_bytes or 65536)

    async def send_eof(self) -> None:
        self._eof_was_last = self.peer.at_eof
        self.peer.write(b"", end_stream=True)
        await trio.lowlevel.checkpoint()

    async def delivered(self) -> None:
        """After :meth:`send_eof` and the peer's FIN: until the peer has all we sent."""
        if self._eof_was_last:
            await self.peer.closed.wait()
        else:
            await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self.peer.close()
        if self._on_close is not None:
            self._on_close(self.peer)
        await trio.lowlevel.checkpoint()
