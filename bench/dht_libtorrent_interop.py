"""Our KRPC client against real Mainline DHT nodes: 8 libtorrent sessions on loopback.

libtorrent is not a dependency: give the Python of a venv that has it
(``python -m venv /tmp/lt && /tmp/lt/bin/pip install libtorrent``).  The
sessions run in that interpreter, on 127.0.0.1 only; this script's client
(transport/lookup/dht.py) puts a rendezvous-shaped BEP 44 item at them, reads it back
with a fresh client, overwrites it with a higher seq and checks that a lower
seq is refused.  Usage::

    python bench/dht_libtorrent_interop.py --lt-python /tmp/lt/bin/python
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import trio

from p2pkoikoi.transport.lookup import krpc
from p2pkoikoi.transport.lookup.dht import DhtConfig, open_dht

BASE = 46200
NODES = """
import sys, time, libtorrent as lt
def settings(i):
    return {"listen_interfaces": f"127.0.0.1:{%(base)d + i}", "enable_dht": True,
            "enable_lsd": False, "enable_upnp": False, "enable_natpmp": False,
            "dht_bootstrap_nodes": "127.0.0.1:%(base)d",
            "dht_restrict_routing_ips": False, "dht_restrict_search_ips": False,
            "dht_enforce_node_id": False, "dht_ignore_dark_internet": False, "alert_mask": 0}
ss = [lt.session(settings(i)) for i in range(8)]
for s in ss:
    for i in range(8):
        s.add_dht_node(("127.0.0.1", %(base)d + i))
time.sleep(8)
print("ready", lt.__version__, flush=True)
sys.stdin.read()
"""


async def check() -> None:
    cfg = DhtConfig(bootstrap=(("127.0.0.1", BASE),), bind="127.0.0.1")
    seed = os.urandom(32)
    item = krpc.sign_item(seed, b"koi3/n/7", int(time.time()), b"koi3a" + os.urandom(65))
    async with open_dht(cfg) as a:
        t = time.perf_counter()
        stored = await a.put(item)
        print(f"put: stored at {stored} libtorrent nodes in {time.perf_counter() - t:.3f} s")
    async with open_dht(cfg) as b:
        t = time.perf_counter()
        got = await b.get(item.key, item.salt)
        same = [g.value == item.value and g.seq == item.seq for g in got]
        print(f"get (a fresh client): {same} in {time.perf_counter() - t:.3f} s")
        newer = krpc.sign_item(seed, item.salt, item.seq + 1, b"koi3c")
        print(f"overwrite with seq+1: stored at {await b.put(newer)} nodes")
        print(f"read back: {[g.decoded() for g in await b.get(item.key, item.salt)]}")
        older = krpc.sign_item(seed, item.salt, item.seq - 5, b"old")
        print(f"a lower seq: stored at {await b.put(older)} nodes (BEP 44: refused)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lt-python", required=True, help="a Python that can import libtorrent")
    a = p.parse_args()
    nodes = subprocess.Popen(
        [a.lt_python, "-c", NODES % {"base": BASE}],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert nodes.stdout is not None
        print(nodes.stdout.readline().strip())
        trio.run(check)
    finally:
        if nodes.stdin is not None:
            nodes.stdin.close()
        nodes.wait(10)


if __name__ == "__main__":
    main()
