"""A small Mainline DHT client for BEP 44 items, driven by trio over one UDP socket.

Theory of operation
-------------------
The client is read-only in BEP 43's sense: it asks nodes and never answers, so
it joins no routing table and needs no port of its own reachable.  It knows
two operations, both iterative lookups (:class:`~p2pkoikoi.transport.lookup.krpc.Lookup`)
towards an item's target:

* :meth:`DhtClient.get` asks ``get`` of the closest nodes and returns every
  verified item they hold for that key and salt (a node may hold an older one,
  or a forged one with a valid signature where the key is public: the caller
  sorts them out);
* :meth:`DhtClient.put` looks up the target the same way, then sends ``put``
  with each closest node's write token.

Every lookup starts from the nodes closest to the target found last time (so
polling an item costs one round of queries) and the bootstrap nodes.  Queries
time out after ``query_timeout``; a lookup ends after ``lookup_timeout``
whatever the nodes do, so a DHT that does not answer (no internet, no
bootstrap node) costs at most that, never a hang.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, Final

import trio

from p2pkoikoi.transport.lookup import krpc
from p2pkoikoi.transport.lookup.krpc import Lookup, MutableItem, NodeInfo

#: the usual public bootstrap nodes, as BitTorrent clients ship them (never used by tests)
DEFAULT_BOOTSTRAP: Final = (
    ("router.bittorrent.com", 6881),
    ("dht.transmissionbt.com", 6881),
    ("router.utorrent.com", 6881),
    ("dht.libtorrent.org", 25401),
)


#: how long a node that did not answer is left out of lookups (seconds)
DEAD_FOR: Final = 60.0


@dataclass(frozen=True, slots=True)
class DhtConfig:
    """Where the DHT starts and how long it may take."""

    bootstrap: tuple[tuple[str, int], ...] = DEFAULT_BOOTSTRAP
    query_timeout: float = 1.0
    lookup_timeout: float = 6.0
    bind: str = "0.0.0.0"


class DhtClient:
    """Lookups over one UDP socket; use through :func:`open_dht`."""

    def __init__(self, sock: trio.socket.SocketType, config: DhtConfig) -> None:
        self._sock = sock
        self.config = config
        self.node_id = os.urandom(krpc.ID_BYTES)
        self._waiting: dict[bytes, trio.MemorySendChannel[krpc.Response | krpc.ErrorReply]] = {}
        self._bootstrap: list[NodeInfo] = []
        self._near: dict[bytes, list[NodeInfo]] = {}
        #: nodes that did not answer, and when: skipped by lookups for DEAD_FOR seconds
        #: (a node may list a read-only client long gone; each costs a query timeout)
        self._dead: dict[tuple[str, int], float] = {}
        self._tid = int.from_bytes(os.urandom(2), "big")
        self.sent = 0  # datagrams sent (for the benchmark)

    async def _resolve(self) -> list[NodeInfo]:
        if self._bootstrap:
            return self._bootstrap
        out = []
        for host, port in self.config.bootstrap:
            try:
                infos = await trio.socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)
            except (OSError, UnicodeError):
                continue  # offline, or a name that does not resolve: skip it
            for info in infos[:2]:
                out.append(NodeInfo(b"", str(info[4][0]), int(info[4][1])))
        self._bootstrap = out
        return out

    async def receive_loop(self) -> None:
        while True:
            try:
                data, _addr = await self._sock.recvfrom(krpc.MAX_DATAGRAM * 2)
            except OSError:
                continue  # an ICMP error for an earlier datagram: nothing to do
            try:
                msg = krpc.decode_message(data)
            except krpc.KrpcError:
                continue
            if isinstance(msg, krpc.Query):
                continue  # read-only: we answer nothing
            waiter = self._waiting.pop(msg.tid, None)
            if waiter is not None:
                with suppress(trio.WouldBlock, trio.BrokenResourceError):
                    waiter.send_nowait(msg)

    async def query(
        self, node: NodeInfo, method: str, args: dict[bytes, Any]
    ) -> krpc.Response | krpc.ErrorReply | None:
        """One query; None when it timed out (or the network refused it)."""
        self._tid = (self._tid + 1) % 65536
        tid = self._tid.to_bytes(2, "big")
        tx, rx = trio.open_memory_channel[krpc.Response | krpc.ErrorReply](1)
        self._waiting[tid] = tx
        try:
            try:
                await self._sock.sendto(krpc.encode_query(tid, method, args), node.addr)
                self.sent += 1
            except OSError:
                return None
            with trio.move_on_after(self.config.query_timeout):
                return await rx.receive()
            return None
        finally:
            self._waiting.pop(tid, None)

    async def _lookup(self, target: bytes, key: bytes | None, salt: bytes) -> Lookup:
        now = trio.current_time()
        self._dead = {a: t for a, t in self._dead.items() if now - t < DEAD_FOR}
        look = Lookup(target, skip=frozenset(self._dead))
        look.add(self._near.get(target, []))
        done = trio.Event()

        async def ask(nursery: trio.Nursery, node: NodeInfo) -> None:
            reply = await self.query(node, "get", krpc.get_args(self.node_id, target))
            if isinstance(reply, krpc.Response):
                look.answered(node.addr, reply)
                if key is not None:
                    item = reply.item(key, salt)
                    if item is not None:
                        look.items.append(item)
            else:
                look.failed(node.addr)
            spawn(nursery)

        def spawn(nursery: trio.Nursery) -> None:
            for n in look.next_queries():
                nursery.start_soon(ask, nursery, n)
            if look.in_flight == 0:
                done.set()

        with trio.move_on_after(self.config.lookup_timeout):
            look.add(await self._resolve())  # names: bounded too (no resolver, offline)
            async with trio.open_nursery() as nursery:
                spawn(nursery)
                await done.wait()
                nursery.cancel_scope.cancel()
        self._near[target] = [n for n, _ in look.storers()]
        for addr, e in look.entries.items():
            if e.state == "failed" and e.node.id:  # (not a bootstrap node: ask it again)
                self._dead[addr] = trio.current_time()
        return look

    async def get(self, key: bytes, salt: bytes = b"") -> list[MutableItem]:
        """Every verified item the closest nodes hold for (``key``, ``salt``), distinct
        values only: the one most nodes hold first, then by ``seq`` (one lying node
        cannot put its forgery ahead of what the others hold)."""
        look = await self._lookup(krpc.target_of(key, salt), key, salt)
        count: dict[bytes, int] = {}
        first: dict[bytes, MutableItem] = {}
        for it in look.items:
            count[it.value + it.sig] = count.get(it.value + it.sig, 0) + 1
            first.setdefault(it.value + it.sig, it)
        return sorted(first.values(), key=lambda i: (-count[i.value + i.sig], -i.seq))

    async def put(self, item: MutableItem, *, cas: int | None = None) -> int:
        """Store ``item`` at the closest nodes; the number that accepted it."""
        look = await self._lookup(item.target, None, b"")
        stored = 0

        async def one(node: NodeInfo, token: bytes) -> None:
            nonlocal stored
            reply = await self.query(node, "put", krpc.put_args(self.node_id, token, item, cas))
            if isinstance(reply, krpc.Response):
                stored += 1

        with trio.move_on_after(self.config.lookup_timeout):
            async with trio.open_nursery() as nursery:
                for node, token in look.storers():
                    nursery.start_soon(one, node, token)
        return stored


@asynccontextmanager
async def open_dht(config: DhtConfig) -> AsyncIterator[DhtClient]:
    """A client on a fresh UDP socket for the block."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        await sock.bind((config.bind, 0))
        client = DhtClient(sock, config)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.receive_loop)
                try:
                    yield client
                finally:
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # the receiver never raises: what comes out is the block's own error, as is
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
