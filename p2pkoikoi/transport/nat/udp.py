"""The match socket: one UDP socket for STUN, the connectivity checks and QUIC.

Theory of operation
-------------------
A NAT maps one *socket*: the reflexive address a STUN server reports is the
mapping of the socket that asked, and a hole a check punches is open for that
socket only.  So each side opens exactly one UDP socket (the host on its TCP
port number, so that the invite's LAN and IPv6 addresses serve both) and does
everything on it:

* STUN queries to public servers (:meth:`UdpEndpoint.stun_query`, retransmitted
  at 0.25, 0.5, 1 s ... within the caller's bound);
* connectivity checks between the players (binding requests, answered by
  :attr:`UdpEndpoint.on_request`, set by :mod:`~p2pkoikoi.transport.nat.checks`);
* the QUIC connections (:mod:`~p2pkoikoi.transport.nat.quic`), one per remote
  address.

Datagrams are told apart by their first byte (RFC 7983): 0-3 with the magic
cookie is STUN, anything else QUIC.  Unknown STUN and QUIC from an address
that was not admitted (:attr:`UdpEndpoint.admit`) are dropped silently: a
stranger cannot open a QUIC connection to a waiting host without first
passing a check keyed with the invite secret.

The socket is IPv6 with ``IPV6_V6ONLY`` off where the machine has IPv6 (one
socket, both families; addresses are handled as plain ``(ip, port)``).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from contextlib import suppress
from typing import Final

import trio
from aioquic.buffer import Buffer  # type: ignore[attr-defined]
from aioquic.quic.connection import QuicConnection
from aioquic.quic.packet import QuicPacketType, pull_quic_header

from p2pkoikoi.transport.nat import stun
from p2pkoikoi.transport.nat.quic import Addr, QuicPeer, QuicStream, configuration, self_signed

#: STUN retransmissions (RFC 8489 section 6.2.1 starts at 500 ms; a check or a
#: STUN server on a LAN answers in milliseconds, so start sooner)
RTO: Final = (0.0, 0.25, 0.5, 1.0, 2.0)


def plain(addr: tuple[object, ...]) -> Addr:
    """``('::ffff:1.2.3.4', 5, 0, 0)`` -> ``('1.2.3.4', 5)``."""
    ip = ipaddress.ip_address(str(addr[0]).split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip), int(addr[1])  # type: ignore[call-overload]


class UdpEndpoint:
    """One UDP socket shared by STUN, checks and QUIC (module docstring)."""

    def __init__(self, sock: socket.socket) -> None:
        self.raw = sock  # sends go out at once (non-blocking; a full buffer drops, as UDP may)
        self.sock = trio.socket.from_stdlib_socket(sock)
        self.v6 = sock.family == socket.AF_INET6
        self._waiters: dict[bytes, trio.MemorySendChannel[tuple[stun.Message, bytes, Addr]]] = {}
        self.peers: dict[Addr, QuicPeer] = {}
        #: incoming binding requests (a connectivity check): ``(message, raw, source)``
        self.on_request: Callable[[stun.Message, bytes, Addr], None] | None = None
        #: whether a QUIC connection from this address may be accepted
        self.admit: Callable[[Addr], bool] = lambda _addr: False
        #: accepted QUIC streams (the host's), once the client's first bytes arrived
        self.incoming: trio.MemorySendChannel[QuicStream] | None = None
        self._cert = self_signed()
        self._nursery: trio.Nursery | None = None
        self.sent_to: set[Addr] = set()  # every address a datagram went to (tests read it)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def sendto(self, data: bytes, addr: Addr) -> None:
        ip = addr[0]
        if self.v6 and ":" not in ip:
            ip = "::ffff:" + ip
        elif not self.v6 and ":" in ip:
            return  # an IPv4 socket cannot reach an IPv6 candidate
        self.sent_to.add(addr)
        with suppress(OSError):  # unreachable, no route: the check simply gets no answer
            self.raw.sendto(data, (ip, addr[1]))

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            while True:
                try:
                    data, raw_addr = await self.sock.recvfrom(65536)
                except OSError:  # ICMP errors surface here on Linux: ignore them
                    continue
                try:
                    addr = plain(raw_addr)
                except ValueError:
                    continue
                self._datagram(bytes(data), addr)

    def _datagram(self, data: bytes, addr: Addr) -> None:
        if stun.looks_like_stun(data):
            try:
                msg = stun.decode(data)
            except stun.StunError:
                return
            if msg.type == stun.BINDING_REQUEST:
                if self.on_request is not None:
                    self.on_request(msg, data, addr)
            elif (waiter := self._waiters.get(msg.transaction)) is not None:
                with suppress(trio.WouldBlock, trio.BrokenResourceError):
                    waiter.send_nowait((msg, data, addr))
            return
        peer = self.peers.get(addr)
        if peer is not None:
            peer.datagram(data, addr)
            return
        self._maybe_accept(data, addr)

    def _maybe_accept(self, data: bytes, addr: Addr) -> None:
        if self.incoming is None or self._nursery is None or not self.admit(addr):
            return
        try:
            header = pull_quic_header(Buffer(data=data), host_cid_length=8)
        except ValueError:
            return
        if header.packet_type != QuicPacketType.INITIAL:
            return
        conn = QuicConnection(
            configuration=configuration(client=False, cert=self._cert),
            original_destination_connection_id=header.destination_cid,
        )
        peer = QuicPeer(conn, addr, self.sendto)
        self.peers[addr] = peer
        self._nursery.start_soon(peer.run)
        self._nursery.start_soon(self._hand_over, peer)
        peer.datagram(data, addr)

    async def _hand_over(self, peer: QuicPeer) -> None:
        with trio.move_on_after(15):
            await peer.new_stream.wait()
        if peer.closed.is_set() or peer.stream_id is None or self.incoming is None:
            peer.close("no stream")
            self._forget(peer)
            return
        try:
            self.incoming.send_nowait(QuicStream(peer, self._forget))
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            peer.close("not wanted")
            self._forget(peer)

    def _forget(self, peer: QuicPeer) -> None:
        if self.peers.get(peer.addr) is peer:
            del self.peers[peer.addr]

    async def connect(self, addr: Addr, limit: float) -> QuicStream:
        """A QUIC connection to ``addr`` (the joiner's side), its handshake done."""
        assert self._nursery is not None
        old = self.peers.pop(addr, None)
        if old is not None:
            old.close("replaced")
        conn = QuicConnection(configuration=configuration(client=True))
        peer = QuicPeer(conn, addr, self.sendto)
        self.peers[addr] = peer
        self._nursery.start_soon(peer.run)
        conn.connect(addr, peer.now())
        peer.flush()
        try:
            with trio.fail_after(limit):
                await peer.handshake.wait()
        except trio.TooSlowError:
            peer.close()
            self._forget(peer)
            raise trio.TooSlowError(f"no QUIC handshake within {limit:g}s") from None
        if peer.closed.is_set():
            self._forget(peer)
            raise ConnectionError(f"QUIC: {peer.close_reason}")
        return QuicStream(peer, self._forget)

    async def transact(
        self, raw: bytes, transaction: bytes, addr: Addr, limit: float
    ) -> tuple[stun.Message, bytes, Addr] | None:
        """Send a binding request (retransmitted per :data:`RTO`) and wait for its
        answer; None when none came within ``limit``."""
        tx, rx = trio.open_memory_channel[tuple[stun.Message, bytes, Addr]](4)
        self._waiters[transaction] = tx
        try:
            with trio.move_on_after(limit):
                for i, at in enumerate(RTO):
                    gap = at - (RTO[i - 1] if i else 0.0)
                    with trio.move_on_after(gap):
                        got = await rx.receive()
                        return got
                    self.sendto(raw, addr)
                return await rx.receive()
            return None
        finally:
            del self._waiters[transaction]

    async def stun_query(self, server: Addr, limit: float) -> Addr | None:
        """This socket's reflexive address as ``server`` sees it (None: no answer)."""
        tid, raw = stun.binding_request()
        got = await self.transact(raw, tid, server, limit)
        if got is None:
            return None
        try:
            return got[0].mapped
        except stun.StunError:
            return None

    def close(self) -> None:
        for peer in list(self.peers.values()):
            peer.close("closing")
        self.peers.clear()
        self.sock.close()


def open_socket(port: int, bind: str | None) -> socket.socket:
    """The match socket on ``port`` (0: any) of ``bind`` (None: every address, both
    families where the machine has IPv6); non-blocking."""
    host = (bind or "").strip("[]")
    if host and (":" not in host or host == "0.0.0.0"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, port))
    else:
        try:
            sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            if not host:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind((host or "::", port))
        except OSError:
            if host:
                raise
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("0.0.0.0", port))
    sock.setblocking(False)
    return sock
