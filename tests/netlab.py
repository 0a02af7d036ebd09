"""A home network in network namespaces: a LAN behind a NAT router with miniupnpd,
and a friend on "the internet".

::

    [host 10.66.0.10] --+                                   (internet namespace)
                        +-- br0 [router 10.66.0.1 | 11.22.33.1] ---- [friend 11.22.33.2]
    [lan  10.66.0.20] --+        nftables masquerade, miniupnpd

The router namespace holds the bridge of the LAN, forwards with nftables
masquerade out of its WAN side and runs ``miniupnpd`` (Debian's
``miniupnpd-nftables``: UPnP IGD, NAT-PMP and PCP) when asked.  miniupnpd
refuses an external address in a private or documentation range, so the WAN
side uses 11.22.33.0/24, a public-range block; none of these namespaces has a
link to the machine's own network, and every process that uses the addresses
runs inside them (``Lab.exec``), so nothing ever dials them from the
machine's namespace.

Needs root, ``ip``, ``nft`` and (for the router) ``miniupnpd``; :func:`why_not`
says what is missing, for a skip.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

LAN = "10.66.0"
ROUTER_LAN, HOST_IP, LAN_FRIEND_IP = f"{LAN}.1", f"{LAN}.10", f"{LAN}.20"
ROUTER_WAN, NET_FRIEND_IP = "11.22.33.1", "11.22.33.2"
# global-range IPv6 (2000::/3, not the documentation prefix: the invite lists global
# addresses only), again only inside the namespaces
HOST_IP6, NET_FRIEND_IP6 = "2a0f:6600:1::10", "2a0f:6600:2::2"
SIDES = ("router", "host", "lan", "net")
MINIUPNPD = "/usr/sbin/miniupnpd"

NFT_RULES = """
table inet filter {
    chain forward {
        type filter hook forward priority 0; policy drop;
        ct state established,related accept
        iifname "br0" accept
        jump miniupnpd
    }
    chain miniupnpd {
    }
    chain prerouting {
        type nat hook prerouting priority -100; policy accept;
        jump prerouting_miniupnpd
    }
    chain postrouting {
        type nat hook postrouting priority 100; policy accept;
        jump postrouting_miniupnpd
        oifname "wan0" masquerade
    }
    chain prerouting_miniupnpd {
    }
    chain postrouting_miniupnpd {
    }
}
"""

MINIUPNPD_CONF = """
ext_ifname=wan0
listening_ip=br0
port=0
enable_natpmp={natpmp}
enable_upnp={upnp}
secure_mode=yes
min_lifetime=4
system_uptime=yes
uuid=3e1a7f36-0d62-4c2f-9a53-5f7b1c0e9a11
allow 1024-65535 10.66.0.0/24 1024-65535
deny 0-65535 0.0.0.0/0 0-65535
"""


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise LabError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r


class LabError(Exception):
    """The lab could not be built here (a skip reason)."""


def why_not(*, router: bool = True) -> str:
    """Empty when the lab can be built, else why not."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    for tool, package in (("ip", "iproute2"), ("nft", "nftables")):
        if shutil.which(tool) is None:
            return f"no '{tool}' command (install {package})"
    if router and not os.path.exists(MINIUPNPD):
        return "no miniupnpd (install the Debian package miniupnpd-nftables)"
    return ""


@dataclass
class Lab:
    """The namespaces of one test; :meth:`close` removes them all."""

    tmp: Path
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    ns: dict[str, str] = field(default_factory=dict)
    upnpd: subprocess.Popen[str] | None = None
    upnpd_log: list[str] = field(default_factory=list)

    def exec(self, side: str, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns[side], *args]

    def run(self, side: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(*self.exec(side, *args), check=check)

    def build(self) -> None:
        for side in SIDES:
            name = f"kl{side[0]}{self.tag}"
            r = run("ip", "netns", "add", name, check=False)
            if r.returncode != 0:
                raise LabError(f"cannot create a network namespace: {r.stderr.strip()}")
            self.ns[side] = name
            self.run(side, "ip", "link", "set", "lo", "up")
        rt = self.ns["router"]
        self.run("router", "ip", "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        self.run("router", "ip", "addr", "add", f"{ROUTER_LAN}/24", "dev", "br0")
        self.run("router", "ip", "link", "set", "br0", "up")
        for side, ip in (("host", HOST_IP), ("lan", LAN_FRIEND_IP)):
            outer, inner = f"kb{side[0]}{self.tag}", f"kv{side[0]}{self.tag}"
            run("ip", "link", "add", outer, "netns", rt, "type", "veth", "peer", "name", inner)
            run("ip", "link", "set", inner, "netns", self.ns[side])
            self.run("router", "ip", "link", "set", outer, "master", "br0", "up")
            self.run(side, "ip", "link", "set", inner, "name", "eth0")
            self.run(side, "ip", "addr", "add", f"{ip}/24", "dev", "eth0")
            self.run(side, "ip", "link", "set", "eth0", "up")
            self.run(side, "ip", "route", "add", "default", "via", ROUTER_LAN)
        wan = f"kw{self.tag}"
        run("ip", "link", "add", wan, "netns", rt, "type", "veth", "peer", "name", "eth0",
            "netns", self.ns["net"])  # fmt: skip
        self.run("router", "ip", "link", "set", wan, "name", "wan0")
        self.run("router", "ip", "addr", "add", f"{ROUTER_WAN}/24", "dev", "wan0")
        self.run("router", "ip", "link", "set", "wan0", "up")
        self.run("net", "ip", "addr", "add", f"{NET_FRIEND_IP}/24", "dev", "eth0")
        self.run("net", "ip", "link", "set", "eth0", "up")
        self.run("router", "sysctl", "-qw", "net.ipv4.ip_forward=1")
        rules = self.tmp / "router.nft"
        rules.write_text(NFT_RULES)
        self.run("router", "nft", "-f", str(rules))

    def enable_ipv6(self, *, allow_port: int | None = None) -> None:
        """Global IPv6 on the LAN and the internet side, routed (not NATed) by the router,
        whose forward chain drops new incoming connections as home routers do, unless
        ``allow_port`` opens that TCP port to the host (the rule a player adds)."""
        steps = [
            ("router", "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"),
            ("router", "ip", "-6", "addr", "add", "2a0f:6600:1::1/64", "dev", "br0", "nodad"),
            ("router", "ip", "-6", "addr", "add", "2a0f:6600:2::1/64", "dev", "wan0", "nodad"),
            ("host", "ip", "-6", "addr", "add", f"{HOST_IP6}/64", "dev", "eth0", "nodad"),
            ("host", "ip", "-6", "route", "add", "default", "via", "2a0f:6600:1::1"),
            ("net", "ip", "-6", "addr", "add", f"{NET_FRIEND_IP6}/64", "dev", "eth0", "nodad"),
            ("net", "ip", "-6", "route", "add", "default", "via", "2a0f:6600:2::1"),
        ]
        for side, *cmd in steps:
            self.run(side, *cmd)
        if allow_port is not None:
            self.run(
                "router", "nft", "insert", "rule", "inet", "filter", "forward", "ip6", "daddr",
                HOST_IP6, "tcp", "dport", str(allow_port), "accept",
            )  # fmt: skip

    def start_miniupnpd(self, *, upnp: bool = True, natpmp: bool = True) -> None:
        """Run miniupnpd on the router: UPnP IGD and/or NAT-PMP+PCP (one switch for both)."""
        conf = self.tmp / "miniupnpd.conf"
        yes = {True: "yes", False: "no"}
        conf.write_text(MINIUPNPD_CONF.format(upnp=yes[upnp], natpmp=yes[natpmp]))
        self.upnpd = subprocess.Popen(
            self.exec(
                "router", MINIUPNPD, "-d", "-f", str(conf), "-P", str(self.tmp / "upnpd.pid")
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        ready = threading.Event()

        def read() -> None:
            assert self.upnpd is not None and self.upnpd.stderr is not None
            for line in self.upnpd.stderr:
                self.upnpd_log.append(line.rstrip())
                if "Listening for NAT-PMP/PCP traffic" in line or (
                    not natpmp and "HTTP listening on port" in line
                ):
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(10) or self.upnpd.poll() is not None:
            raise LabError("miniupnpd did not start: " + " | ".join(self.upnpd_log[-3:]))

    def redirects(self) -> str:
        """The router's forwarding rules that miniupnpd made (empty when none)."""
        r = self.run("router", "nft", "list", "chain", "inet", "filter", "prerouting_miniupnpd")
        return "\n".join(line for line in r.stdout.splitlines() if "dnat" in line)

    def stop_miniupnpd(self) -> None:
        if self.upnpd is not None and self.upnpd.poll() is None:
            self.upnpd.terminate()
            try:
                self.upnpd.wait(10)
            except subprocess.TimeoutExpired:
                self.upnpd.kill()
                self.upnpd.wait()

    def close(self) -> None:
        self.stop_miniupnpd()
        for name in self.ns.values():
            run("ip", "netns", "del", name, check=False)
