"""A userspace faulty link between two network namespaces (stdlib only).

For kernels without ``sch_netem``: one TUN device in each namespace, and a
relay that reads IP packets from each TUN and writes them to the other after a
delay drawn uniformly from ``delay +- jitter``, dropping a fraction ``loss``
and sending a fraction ``reorder`` at once (ahead of the packets still in
flight, like netem's ``reorder``).  Both directions are impaired the same way,
each with its own random stream seeded from ``--seed``, so a run is
reproducible packet by packet.

    ip netns add a; ip netns add b
    python tests/faultylink.py --ns a b --addr 10.78.0.1 10.78.0.2 \\
        --delay 0.15 --jitter 0.04 --loss 0.05 --reorder 0.1 --seed 1 --control /tmp/fl

The relay enters each namespace with ``setns(2)`` only to create its TUN
device there (``ip -n NS`` then gives it its point-to-point address and
brings it up), so it is one process with one poll loop.  It prints one JSON
line ``{"event": "ready", ...}`` once both ends are up, and on SIGTERM or
SIGINT a final ``{"event": "stats", ...}`` line, then exits 0; the devices
disappear with it.  Writing a number of seconds to the ``--control`` file
cuts the link (every packet dropped, both ways) for that long.

Counters, per direction (``ab`` is from the first namespace to the second):
``relayed`` (written out), ``dropped`` (random loss), ``cut`` (dropped by a
cut) and ``reordered`` (written out after a packet that was read later,
i.e. the order on the wire really changed).
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import heapq
import json
import os
import random
import select
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def open_tun(netns: str, name: str) -> int:
    """Create TUN device ``name`` inside namespace ``netns``; its fd (non-blocking).

    The calling thread stays in ``netns`` afterwards; the fd works from anywhere.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    nsfd = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
    try:
        if libc.setns(nsfd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({netns}): {os.strerror(err)}")
    finally:
        os.close(nsfd)
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd


def ip(*args: str) -> None:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise OSError(f"ip {' '.join(args)}: {r.stderr.strip()}")


@dataclass
class Direction:
    """One way through the link: its randomness and its counters."""

    rng: random.Random
    read: int = 0  # sequence number of the next packet read
    newest_out: int = -1  # highest sequence number written out so far
    relayed: int = 0
    dropped: int = 0
    cut: int = 0
    reordered: int = 0

    def counters(self) -> dict[str, int]:
        return {
            "read": self.read,
            "relayed": self.relayed,
            "dropped": self.dropped,
            "cut": self.cut,
            "reordered": self.reordered,
        }


@dataclass
class Relay:
    fds: tuple[int, int]
    delay: float
    jitter: float
    loss: float
    reorder: float
    seed: int
    control: str = ""
    ways: tuple[Direction, Direction] = field(init=False)
    queue: list[tuple[float, int, int, bytes]] = field(init=False, default_factory=list)
    cut_until: float = 0.0
    stop: bool = False

    def __post_init__(self) -> None:
        # one stream per direction, so each side's fate does not depend on the other's timing
        self.ways = (
            Direction(random.Random(f"{self.seed}/ab")),
            Direction(random.Random(f"{self.seed}/ba")),
        )

    def receive(self, src: int, packet: bytes, now: float) -> None:
        way = self.ways[src]
        seq = way.read
        way.read += 1
        # every packet draws the same numbers, so its fate depends only on its position
        lost, early, spread = way.rng.random(), way.rng.random(), way.rng.uniform(-1.0, 1.0)
        if now < self.cut_until:
            way.cut += 1
        elif lost < self.loss:
            way.dropped += 1
        else:
            wait = 0.0 if early < self.reorder else max(0.0, self.delay + self.jitter * spread)
            heapq.heappush(self.queue, (now + wait, src, seq, packet))

    def deliver(self, now: float) -> None:
        while self.queue and self.queue[0][0] <= now:
            _, src, seq, packet = heapq.heappop(self.queue)
            way = self.ways[src]
            if now < self.cut_until:
                way.cut += 1
                continue
            try:
                os.write(self.fds[1 - src], packet)
            except OSError:  # the device is down or full: the packet is lost, as on a wire
                way.dropped += 1
                continue
            way.relayed += 1
            if seq < way.newest_out:
                way.reordered += 1
            way.newest_out = max(way.newest_out, seq)

    def check_control(self, now: float) -> None:
        if not self.control:
            return
        try:
            with open(self.control) as f:
                text = f.read().strip()
            os.unlink(self.control)
        except FileNotFoundError:
            return
        self.cut_until = now + float(text or 0)
        emit({"event": "cut", "seconds": float(text or 0)})

    def stats(self) -> dict[str, object]:
        ab, ba = (w.counters() for w in self.ways)
        total = {k: ab[k] + ba[k] for k in ab}
        return {"event": "stats", **total, "ab": ab, "ba": ba}

    def run(self) -> None:
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, select.POLLIN)
        side = {fd: i for i, fd in enumerate(self.fds)}
        while not self.stop:
            now = time.monotonic()
            wait = 0.05 if not self.queue else min(0.05, max(0.0, self.queue[0][0] - now))
            for fd, _ in poller.poll(wait * 1000):
                now = time.monotonic()
                while True:  # drain the device
                    try:
                        packet = os.read(fd, 65536)
                    except BlockingIOError:
                        break
                    self.receive(side[fd], packet, now)
            now = time.monotonic()
            self.deliver(now)
            self.check_control(now)


def emit(obj: dict[str, object]) -> None:
    print(json.dumps(obj), flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ns", nargs=2, required=True, metavar=("NS_A", "NS_B"))
    p.add_argument("--dev", nargs=2, default=["tq0", "tq1"], metavar=("DEV_A", "DEV_B"))
    p.add_argument("--addr", nargs=2, default=["10.78.0.1", "10.78.0.2"], metavar=("IP_A", "IP_B"))
    p.add_argument("--delay", type=float, default=0.15, help="seconds (default 0.15)")
    p.add_argument("--jitter", type=float, default=0.04, help="+- seconds, uniform (0.04)")
    p.add_argument("--loss", type=float, default=0.05, help="fraction dropped (0.05)")
    p.add_argument("--reorder", type=float, default=0.1, help="fraction sent at once (0.1)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--control", default="", help="file: write N to cut the link for N s")
    a = p.parse_args(argv)

    fds = tuple(open_tun(ns, dev) for ns, dev in zip(a.ns, a.dev, strict=True))
    for i in (0, 1):
        ns, dev = a.ns[i], a.dev[i]
        ip("-n", ns, "addr", "add", f"{a.addr[i]}/32", "peer", f"{a.addr[1 - i]}/32", "dev", dev)
        ip("-n", ns, "link", "set", dev, "addrgenmode", "none")  # no IPv6 chatter
        ip("-n", ns, "link", "set", dev, "up")
    relay = Relay((fds[0], fds[1]), a.delay, a.jitter, a.loss, a.reorder, a.seed, a.control)

    def stop(signum: int, frame: object) -> None:
        relay.stop = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    emit({"event": "ready", "ns": a.ns, "dev": a.dev, "addr": a.addr})
    relay.run()
    emit(relay.stats())
    for fd in fds:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
