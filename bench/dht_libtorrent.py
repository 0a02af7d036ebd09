# ruff: noqa: E402  (libtorrent is imported late on purpose: its import time is measured)
"""libtorrent's DHT on loopback: start-up of a session and a BEP 44 put/get among 8 nodes.

The measurement behind the choice of a small KRPC client (transport/lookup/krpc.py, dht.py)
over libtorrent's Python bindings.  libtorrent is not a dependency: run it in a venv
of its own, ``pip install libtorrent pynacl; python bench/dht_libtorrent.py``.  Only
loopback addresses are used.
"""

import os
import time

t0 = time.perf_counter()
import libtorrent as lt

t_import = time.perf_counter() - t0

N = 8
BASE = 46100


def settings(i):
    return {
        "listen_interfaces": f"127.0.0.1:{BASE + i}",
        "enable_dht": True,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        "dht_bootstrap_nodes": f"127.0.0.1:{BASE}",
        "dht_restrict_routing_ips": False,
        "dht_restrict_search_ips": False,
        "dht_enforce_node_id": False,
        "dht_ignore_dark_internet": False,
        "alert_mask": lt.alert_category.dht | lt.alert_category.error,
    }


t1 = time.perf_counter()
s0 = lt.session(settings(0))
t_session = time.perf_counter() - t1
sessions = [s0] + [lt.session(settings(i)) for i in range(1, N)]


def wait_alert(s, kind, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        s.wait_for_alert(200)
        for a in s.pop_alerts():
            if isinstance(a, kind):
                return a
    return None


# let the routing tables fill
time.sleep(5)
key = os.urandom(32)
import hashlib

import nacl.signing

pub = bytes(nacl.signing.SigningKey(key).verify_key)
h = bytearray(hashlib.sha512(key).digest())
h[0] &= 248
h[31] &= 63
h[31] |= 64
priv = bytes(h)
salt = b"p2pkoikoi-test"
a, b = sessions[1], sessions[-1]
t2 = time.perf_counter()


def cb(entry, sig, seq, salt_):
    return None


a.dht_put_mutable_item(
    priv, pub, b"5:hello", salt
)  # (new API: data, sig, seq callback variant differs)
put = wait_alert(a, lt.dht_put_alert)
t_put = time.perf_counter() - t2
t3 = time.perf_counter()
b.dht_get_mutable_item(pub, salt)
got = wait_alert(b, lt.dht_mutable_item_alert)
t_get = time.perf_counter() - t3
print(
    f"import {t_import * 1000:.0f} ms, first session {t_session * 1000:.0f} ms, put {t_put * 1000:.0f} ms ({getattr(put, 'num_success', None)} nodes), get {t_get * 1000:.0f} ms -> {getattr(got, 'item', None)!r}"
)
# a fresh session, as a player's program starts: bootstrap and put / get
for trial in range(3):
    tc = time.perf_counter()
    c = lt.session(settings(20 + trial))
    boot = wait_alert(c, lt.dht_bootstrap_alert)
    t_boot = time.perf_counter() - tc
    c.dht_put_mutable_item(priv, pub, b"5:world", salt + bytes([trial]))
    put = wait_alert(c, lt.dht_put_alert)
    t_cput = time.perf_counter() - tc
    td = time.perf_counter()
    d = lt.session(settings(30 + trial))
    item = None
    while time.perf_counter() - td < 20:
        d.dht_get_mutable_item(pub, salt + bytes([trial]))
        got = wait_alert(d, lt.dht_mutable_item_alert)
        if got is not None and got.item:
            item = got.item
            break
    t_dget = time.perf_counter() - td
    print(
        f"fresh session: bootstrap {t_boot * 1000:.0f} ms, put {t_cput * 1000:.0f} ms ({getattr(put, 'num_success', None)} nodes), get {t_dget * 1000:.0f} ms -> {item!r}"
    )
