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


# ============================================================== the NAT lab (issue 26)
"""A small internet of homes behind NAT routers, with a real STUN server.

::

    [machine 192.168.1.10] -- [router: nftables profile] --+
    [machine 192.168.1.10] -- [router] -- [carrier NAT] ---+-- wan bridge [coturn 11.0.0.2, .3]
    ...                                                    |

Every home uses the same private range (192.168.1.0/24), as real homes do.
Profiles (:data:`PROFILES`), all dropping unsolicited packets from the wan
side silently (no reject, no ICMP):

* ``cone``: endpoint-independent mapping and filtering (masquerade, and every
  UDP port forwarded back to the one machine: a full cone);
* ``home``: endpoint-independent mapping, address-and-port-dependent
  filtering (plain masquerade: conntrack lets in replies only);
* ``sym``: symmetric (``masquerade random-fully``: a new port per destination);
* ``cgn``: a carrier NAT on 100.64.0.0/10 in front of a home NAT; the carrier
  keeps one mapping per source port but not the port itself (40000+k becomes
  20000+k: a client that advertises its local port instead of its STUN-learnt
  one fails here);
* ``noudp``: a router that forwards no UDP at all;
* ``v6``: a dual-stack home: the ``home`` IPv4 NAT, and global IPv6 routed
  without NAT through a stateful firewall (established only, RFC 6092 style).

No UPnP runs.  coturn runs ``--stun-only`` (it must not relay) on two
addresses, so that a client can tell a symmetric NAT from the ports the two
addresses see.  Nothing links these namespaces to the machine's own network.
"""

PROFILES = ("cone", "home", "sym", "cgn", "noudp", "v6")
STUN_IPS = ("11.0.0.2", "11.0.0.3")
HOME_IP, HOME_GW = "192.168.1.10", "192.168.1.1"
TURNSERVER = "/usr/bin/turnserver"
#: machines' ephemeral ports and the hosts' ports stay inside what the carrier maps
EPHEMERAL = (40000, 40399)
HOST_PORTS = (40400, 40599)
CARRIER_SHIFT = 20000

ROUTER_NFT = """
table inet filter {{
    chain input {{
        type filter hook input priority 0; policy drop;
        iifname "lo" accept
        iifname "lan0" accept
        ct state established,related accept
        icmpv6 type {{ nd-neighbor-solicit, nd-neighbor-advert }} accept
    }}
    chain forward {{
        type filter hook forward priority 0; policy drop;
        {forward_extra}
        ct state established,related accept
        iifname "lan0" accept
        {forward_in}
    }}
}}
table ip nat {{
    chain prerouting {{
        type nat hook prerouting priority -100; policy accept;
        {prerouting}
    }}
    chain postrouting {{
        type nat hook postrouting priority 100; policy accept;
        oifname "wan0" masquerade {masq}
    }}
}}
"""


WAN_NFT = """
table inet lab {
    counter stun { }
    chain input {
        type filter hook input priority 0; policy accept;
        udp dport 3478 counter name "stun"
    }
}
"""


def _carrier_nft(wan_ip: str, shift: int = CARRIER_SHIFT) -> str:
    lo, hi = EPHEMERAL[0], HOST_PORTS[1]
    pairs = ", ".join(f"{p} : {p - shift}" for p in range(lo, hi + 1))
    return f"""
table inet filter {{
    chain input {{
        type filter hook input priority 0; policy drop;
        iifname "lo" accept
        ct state established,related accept
    }}
    chain forward {{
        type filter hook forward priority 0; policy drop;
        ct state established,related accept
        iifname "lan0" accept
    }}
}}
table ip nat {{
    chain postrouting {{
        type nat hook postrouting priority 100; policy accept;
        oifname "wan0" ip protocol udp snat to {wan_ip} : udp sport map {{ {pairs} }}
        oifname "wan0" masquerade
    }}
}}
"""


def why_not_nat() -> str:
    """Empty when the NAT lab can be built, else why not (a skip)."""
    why = why_not(router=False)
    if why:
        return why
    if not os.path.exists(TURNSERVER):
        return "no turnserver (install the Debian package coturn)"
    if shutil.which("conntrack") is None:
        return "no conntrack command (install the Debian package conntrack)"
    return ""


@dataclass
class Home:
    """One home: its machine's namespace and its router's (and a carrier's)."""

    profile: str
    side: str
    machine: str
    router: str
    carrier: str | None = None
    wan_ip: str = ""
    v6: str | None = None  # the machine's global IPv6 address


@dataclass
class NatLab:
    """The namespaces of the NAT lab; :meth:`close` removes them all."""

    tmp: Path
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    names: list[str] = field(default_factory=list)
    homes: dict[tuple[str, str], Home] = field(default_factory=dict)
    wan: str = ""
    stun: subprocess.Popen[str] | None = None
    _n: int = 0

    def _ns(self, kind: str) -> str:
        self._n += 1
        name = f"kn{kind}{self._n}{self.tag}"
        r = run("ip", "netns", "add", name, check=False)
        if r.returncode != 0:
            raise LabError(f"cannot create a network namespace: {r.stderr.strip()}")
        self.names.append(name)
        in_ns(name, "ip", "link", "set", "lo", "up")
        return name

    def _veth(self, a: str, a_name: str, b: str, b_name: str) -> None:
        self._n += 1
        x, y = f"kx{self._n}{self.tag}", f"ky{self._n}{self.tag}"
        run("ip", "link", "add", x, "netns", a, "type", "veth", "peer", "name", y, "netns", b)
        in_ns(a, "ip", "link", "set", x, "name", a_name)
        in_ns(b, "ip", "link", "set", y, "name", b_name)
        in_ns(a, "ip", "link", "set", a_name, "up")
        in_ns(b, "ip", "link", "set", b_name, "up")

    def build(self, profiles: tuple[str, ...] = PROFILES) -> None:
        self.wan = self._ns("w")
        in_ns(self.wan, "ip", "link", "add", "br0", "type", "bridge")
        in_ns(self.wan, "ip", "addr", "add", "11.0.0.1/16", "dev", "br0")
        for ip in STUN_IPS:
            in_ns(self.wan, "ip", "addr", "add", f"{ip}/16", "dev", "br0")
        in_ns(self.wan, "ip", "-6", "addr", "add", "2a0f:66:ff::fe/64", "dev", "br0", "nodad")
        in_ns(self.wan, "ip", "link", "set", "br0", "up")
        in_ns(self.wan, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
        self._nft(self.wan, WAN_NFT)
        index = 0
        for side in ("host", "joiner"):
            for profile in profiles:
                index += 1
                self.homes[(side, profile)] = self._home(profile, side, index)
        v6 = [h for h in self.homes.values() if h.v6]
        for h in v6:  # every IPv6 home routes to the others through the wan bridge
            for other in v6:
                if other is not h:
                    n = other.v6.split(":")[2] if other.v6 else ""
                    in_ns(h.router, "ip", "-6", "route", "add", f"2a0f:66:{n}::/64",
                          "via", f"2a0f:66:ff::{n}")  # fmt: skip

    def _wan_port(self, ns: str, ip: str, index: int) -> None:
        self._veth(self.wan, f"p{index}", ns, "wan0")
        in_ns(self.wan, "ip", "link", "set", f"p{index}", "master", "br0")
        in_ns(ns, "ip", "addr", "add", f"{ip}/16", "dev", "wan0")
        in_ns(ns, "ip", "route", "add", "default", "via", "11.0.0.1")

    def _home(self, profile: str, side: str, index: int) -> Home:
        machine, router = self._ns("m"), self._ns("r")
        self._veth(router, "lan0", machine, "eth0")
        in_ns(router, "ip", "addr", "add", f"{HOME_GW}/24", "dev", "lan0")
        in_ns(machine, "ip", "addr", "add", f"{HOME_IP}/24", "dev", "eth0")
        in_ns(machine, "ip", "route", "add", "default", "via", HOME_GW)
        in_ns(machine, "sysctl", "-qw",
              f"net.ipv4.ip_local_port_range={EPHEMERAL[0]} {EPHEMERAL[1]}")  # fmt: skip
        in_ns(router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        home = Home(profile, side, machine, router)
        if profile == "cgn":
            carrier = self._ns("c")
            home.carrier = carrier
            self._veth(carrier, "lan0", router, "wan0")
            in_ns(carrier, "ip", "addr", "add", f"100.64.{index}.1/24", "dev", "lan0")
            in_ns(router, "ip", "addr", "add", f"100.64.{index}.2/24", "dev", "wan0")
            in_ns(router, "ip", "route", "add", "default", "via", f"100.64.{index}.1")
            in_ns(carrier, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            home.wan_ip = f"11.0.2.{index}"
            self._wan_port(carrier, home.wan_ip, index)
            self._nft(carrier, _carrier_nft(home.wan_ip))
        else:
            home.wan_ip = f"11.0.1.{index}"
            self._wan_port(router, home.wan_ip, index)
        extra, inward, pre, masq = "", "", "", ""
        if profile == "cone":
            pre = f'iifname "wan0" udp dport 1024-65535 dnat to {HOME_IP}'
            inward = 'iifname "wan0" ct status dnat accept'
        elif profile == "sym":
            masq = "random,fully-random"
        elif profile == "noudp":
            extra = "meta l4proto udp drop"
        elif profile == "v6":
            home.v6 = f"2a0f:66:{index}::10"
            in_ns(router, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
            in_ns(router, "ip", "-6", "addr", "add", f"2a0f:66:{index}::1/64", "dev", "lan0",
                  "nodad")  # fmt: skip
            in_ns(router, "ip", "-6", "addr", "add", f"2a0f:66:ff::{index}/64", "dev", "wan0",
                  "nodad")  # fmt: skip
            in_ns(machine, "ip", "-6", "addr", "add", f"{home.v6}/64", "dev", "eth0", "nodad")
            in_ns(machine, "ip", "-6", "route", "add", "default", "via", f"2a0f:66:{index}::1")
        self._nft(
            router,
            ROUTER_NFT.format(forward_extra=extra, forward_in=inward, prerouting=pre, masq=masq),
        )
        return home

    def apply(self, ns: str, rules: str) -> None:
        """Load more nftables rules into namespace ``ns``."""
        self._nft(ns, rules)

    def _nft(self, ns: str, rules: str) -> None:
        path = self.tmp / f"{ns}-{secrets.token_hex(2)}.nft"
        path.write_text(rules)
        in_ns(ns, "nft", "-f", str(path))

    def start_stun(self) -> None:
        """coturn, STUN only (no relay), on both STUN addresses of the wan."""
        args = [TURNSERVER, "-n", "--stun-only", "--no-cli", "--no-tls", "--no-dtls",
                "--log-file", "stdout", "--simple-log"]  # fmt: skip
        for ip in STUN_IPS:
            args += ["-L", ip]
        self.stun = subprocess.Popen(
            ["ip", "netns", "exec", self.wan, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        for _ in range(100):  # until it answers a binding request on each address
            if all(self._stun_answers(ip) for ip in STUN_IPS):
                return
            if self.stun.poll() is not None:
                raise LabError("turnserver exited at start")
            threading.Event().wait(0.1)
        raise LabError("turnserver did not answer STUN")

    def _stun_answers(self, ip: str) -> bool:
        probe = (
            "import socket,os;s=socket.socket(2,2);s.settimeout(0.2);"
            "t=os.urandom(12);s.sendto(bytes.fromhex('000100002112a442')+t,"
            f"('{ip}',3478));"
            "print(s.recv(100)[8:20]==t)"
        )
        r = run("ip", "netns", "exec", self.wan, sys.executable, "-c", probe, check=False)
        return r.stdout.strip() == "True"

    def stun_args(self) -> list[str]:
        return [a for ip in STUN_IPS for a in ("--stun", f"{ip}:3478")]

    def exec(self, ns: str, *args: str) -> list[str]:
        return ["ip", "netns", "exec", ns, *args]

    def count_stun(self) -> int:
        """UDP packets that reached the STUN server's port since the lab was built."""
        r = in_ns(self.wan, "nft", "list", "counter", "inet", "lab", "stun")
        words = r.stdout.split()
        return int(words[words.index("packets") + 1])

    def remap_carrier(self, home: Home, shift: int) -> None:
        """The carrier hands out other ports from now on (after its mappings expired)."""
        assert home.carrier is not None
        in_ns(home.carrier, "nft", "flush", "ruleset")
        self._nft(home.carrier, _carrier_nft(home.wan_ip, shift))
        self.flush_conntrack(home)

    def flush_conntrack(self, home: Home) -> None:
        """Every mapping of ``home``'s NATs gone for real (not merely expired)."""
        for ns in (home.router, home.carrier):
            if ns is not None:
                run("ip", "netns", "exec", ns, "conntrack", "-F", check=False)

    def close(self) -> None:
        if self.stun is not None and self.stun.poll() is None:
            self.stun.terminate()
            try:
                self.stun.wait(5)
            except subprocess.TimeoutExpired:
                self.stun.kill()
        for name in reversed(self.names):
            run("ip", "netns", "del", name, check=False)


def in_ns(ns: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run("ip", "netns", "exec", ns, *args)
