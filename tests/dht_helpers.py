"""A private DHT in this process on loopback, for the rendezvous tests (no lab needed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio
from dht_node import Node

from p2pkoikoi.transport.lookup.dht import DhtConfig


@asynccontextmanager
async def loopback_dht(
    count: int = 8, hostile: str = ""
) -> AsyncIterator[tuple[DhtConfig, list[Node]]]:
    """``count`` nodes on 127.0.0.1 (the last one ``hostile``), joined; a client config."""
    nodes = []
    for _ in range(count):
        s = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
        await s.bind(("127.0.0.1", 0))
        nodes.append(Node(s, "127.0.0.1", s.getsockname()[1]))
    if hostile:
        nodes[-1].hostile = hostile
    async with trio.open_nursery() as nursery:
        for n in nodes:
            nursery.start_soon(n.serve)
            if n.hostile == "overwrite":
                nursery.start_soon(n.vandal)
        async with trio.open_nursery() as joining:
            for n in nodes[1:]:
                joining.start_soon(n.join, (nodes[0].host, nodes[0].port))
            joining.start_soon(nodes[0].join, (nodes[1].host, nodes[1].port))
        config = DhtConfig(
            bootstrap=((nodes[0].host, nodes[0].port),),
            query_timeout=0.5,
            lookup_timeout=3.0,
            bind="127.0.0.1",
        )
        try:
            yield config, nodes
        finally:
            nursery.cancel_scope.cancel()
            for n in nodes:
                n.sock.close()
