"""DHT nodes for the lab: BEP 5 routing and BEP 44 storage, honest or hostile.

Run inside the lab's wan namespace (``tests/netlab.py``), never anywhere else::

    python tests/dht_node.py 11.22.33.50:6881 11.22.33.51:6881 ... [--hostile MODE]

Each address is one node (its own socket, id and store); every node learns the
others by pinging the first, so the lab has a small private DHT.  The process
prints ``ready`` once all sockets are bound and stops on end of standard input
(or when killed).

Hostile modes (for the node listed last; the others stay honest):

* ``forge``: every ``get`` for a public-key item is answered with an item of its
  own under the same key and salt, correctly signed (the key is public) with a
  higher ``seq``: a fake host's SPAKE2 message;
* ``replay``: keeps the first item it ever stored for each target and serves
  that one for ever, refusing later puts silently;
* ``badsig``: serves items whose signature does not verify;
* ``overwrite``: also, whenever an item is put at it, re-puts a forged one (a
  higher ``seq``, its own value) at every other node, as a vandal with a client
  would.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import trio
from fastbencode import bdecode, bencode  # type: ignore[import-untyped]

from p2pkoikoi.session.codes import rendezvous
from p2pkoikoi.session.codes.code import decode_code
from p2pkoikoi.transport.lookup import krpc
from p2pkoikoi.transport.lookup.krpc import MutableItem, NodeInfo


@dataclass
class Node:
    sock: trio.socket.SocketType
    host: str
    port: int
    hostile: str = ""
    id: bytes = field(default_factory=lambda: os.urandom(20))
    known: dict[tuple[str, int], NodeInfo] = field(default_factory=dict)
    store: dict[bytes, MutableItem] = field(default_factory=dict)
    secret: bytes = field(default_factory=lambda: os.urandom(16))
    peers: list[tuple[str, int]] = field(default_factory=list)
    tid: int = 0
    vandalise: list[MutableItem] = field(default_factory=list)

    def token(self, ip: str) -> bytes:
        return hmac.new(self.secret, ip.encode(), hashlib.sha256).digest()[:8]

    def closest(self, target: bytes) -> list[NodeInfo]:
        nodes = sorted(self.known.values(), key=lambda n: krpc.distance(n.id, target))
        return nodes[: krpc.K]

    def learn(self, nid: Any, addr: tuple[str, int]) -> None:
        if isinstance(nid, bytes) and len(nid) == 20 and addr != (self.host, self.port):
            self.known[addr] = NodeInfo(nid, addr[0], addr[1])

    def forged(self, item: MutableItem) -> MutableItem | None:
        """An item of our own under a public key, validly signed with a higher seq (or
        None: a key we lack): for an announcement, a fake host's (SPAKE2 with a wrong
        password, a reply key of ours); for an inbox item, a guess of our own."""
        if item.key != rendezvous.PUBLIC_KEY:
            return None
        payload = item.decoded()
        guess = decode_code("7-crossover-button")
        if isinstance(payload, bytes) and payload.startswith(rendezvous.ANNOUNCE):
            fake = rendezvous.HostAttempt(guess, os.urandom(64)).announce().payload
        elif isinstance(payload, bytes) and payload.startswith(rendezvous.JOIN):
            ann = rendezvous.HostAttempt(guess, os.urandom(64)).announcement
            fake = rendezvous.JoinerAttempt(guess, ann, os.urandom(32)).inbox.payload
        else:
            fake = os.urandom(16)
        return krpc.sign_item(rendezvous.PUBLIC_SEED, item.salt, item.seq + 1000, fake)

    def answer(self, q: krpc.Query, addr: tuple[str, int]) -> bytes:
        a = q.args
        if not q.ro:
            self.learn(a.get(b"id"), addr)
        base: dict[bytes, Any] = {b"id": self.id}
        if q.method == "ping":
            return krpc.encode_response(q.tid, base)
        target = a.get(b"target")
        if q.method == "find_node" and isinstance(target, bytes) and len(target) == 20:
            base[b"nodes"] = krpc.encode_nodes(self.closest(target))
            return krpc.encode_response(q.tid, base)
        if q.method == "get" and isinstance(target, bytes) and len(target) == 20:
            base[b"nodes"] = krpc.encode_nodes(self.closest(target))
            base[b"token"] = self.token(addr[0])
            item = self.store.get(target)
            if item is not None:
                if self.hostile == "forge":
                    item = self.forged(item) or item
                elif self.hostile == "badsig":
                    item = MutableItem(item.key, item.salt, item.seq + 1, item.value, bytes(64))
                base.update({b"k": item.key, b"seq": item.seq, b"sig": item.sig})
                base[b"v"] = bdecode(item.value)
            return krpc.encode_response(q.tid, base)
        if q.method == "put":
            if not hmac.compare_digest(a.get(b"token", b""), self.token(addr[0])):
                return krpc.encode_error(q.tid, 203, "bad token")
            item = krpc.item_from_put(a)
            if item is None:
                return krpc.encode_error(q.tid, krpc.ERR_BAD_SIG, "invalid signature")
            old = self.store.get(item.target)
            if old is not None and self.hostile == "replay":
                return krpc.encode_response(q.tid, base)
            cas = a.get(b"cas")
            if old is not None and isinstance(cas, int) and cas != old.seq:
                return krpc.encode_error(q.tid, krpc.ERR_CAS, "cas mismatch")
            if old is not None and item.seq < old.seq:
                return krpc.encode_error(q.tid, krpc.ERR_SEQ, "sequence number less than current")
            self.store[item.target] = item
            if self.hostile == "overwrite":
                forged = self.forged(item)
                if forged is not None:
                    self.store[item.target] = forged
                    self.vandalise.append(forged)
            return krpc.encode_response(q.tid, base)
        return krpc.encode_error(q.tid, 204, "method unknown")

    async def serve(self) -> None:
        while True:
            try:
                data, addr = await self.sock.recvfrom(4096)
            except OSError:
                continue
            try:
                msg = krpc.decode_message(data)
            except krpc.KrpcError:
                continue
            if isinstance(msg, krpc.Query):
                out = self.answer(msg, (addr[0], addr[1]))
                await self.sock.sendto(out, addr)
            elif isinstance(msg, krpc.Response):
                self.learn(msg.sender, (addr[0], addr[1]))
                try:
                    for n in msg.nodes():
                        if n.addr != (self.host, self.port):
                            self.known.setdefault(n.addr, n)
                except krpc.KrpcError:
                    pass

    async def join(self, bootstrap: tuple[str, int]) -> None:
        """Find the others: ask the first node, then everyone it names, for ourselves."""
        for _round in range(3):
            targets = [bootstrap, *self.known.keys()]
            for t in targets:
                if t == (self.host, self.port):
                    continue
                self.tid += 1
                q = {b"id": self.id, b"target": self.id}
                await self.sock.sendto(
                    krpc.encode_query(self.tid.to_bytes(2, "big"), "find_node", q, ro=False), t
                )
            await trio.sleep(0.2)

    async def vandal(self) -> None:
        """The overwrite mode's client side: push forged items to every other node."""
        while True:
            await trio.sleep(0.2)
            while self.vandalise:
                item = self.vandalise.pop()
                for peer in list(self.known.values()):
                    self.tid += 1
                    tid = self.tid.to_bytes(2, "big")
                    # a token first (get), then the put: done in one go by asking for
                    # the token from a get whose answer the serve loop ignores
                    await self.put_at(peer, item, tid)

    async def put_at(self, peer: NodeInfo, item: MutableItem, tid: bytes) -> None:
        s = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
        with s:
            await s.bind((self.host, 0))
            await s.sendto(
                krpc.encode_query(tid, "get", krpc.get_args(self.id, item.target)), peer.addr
            )
            with trio.move_on_after(1):
                data, _ = await s.recvfrom(4096)
                msg = krpc.decode_message(data)
                if isinstance(msg, krpc.Response) and msg.token:
                    args = krpc.put_args(self.id, msg.token, item)
                    await s.sendto(krpc.encode_query(tid, "put", args), peer.addr)
                    await s.recvfrom(4096)


async def main(argv: list[str]) -> None:
    hostile = ""
    if "--hostile" in argv:
        i = argv.index("--hostile")
        hostile = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    nodes = []
    for spec in argv:
        host, port = spec.rsplit(":", 1)
        s = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
        await s.bind((host, int(port)))
        nodes.append(Node(s, host, int(port)))
    if hostile:
        nodes[-1].hostile = hostile
    print("ready", flush=True)
    async with trio.open_nursery() as nursery:
        for n in nodes:
            nursery.start_soon(n.serve)
            if n.hostile == "overwrite":
                nursery.start_soon(n.vandal)
        for n in nodes[1:]:
            nursery.start_soon(n.join, (nodes[0].host, nodes[0].port))
        nursery.start_soon(nodes[0].join, (nodes[-1].host, nodes[-1].port))
        await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    _ = bencode  # (re-exported for tests that build raw datagrams)
    trio.run(main, sys.argv[1:])
