"""Connectivity checks: both players probe each other's UDP candidates at once (ICE-like).

Theory of operation
-------------------
A NAT lets a datagram in from the outside only after the inside sent one to
that address (and, for most home NATs, that port).  So once both sides know
both candidate lists, both send *checks* at once: STUN binding requests from
the match socket to every candidate of the other side, in pair-priority order
(:func:`~p2pkoikoi.session.codes.answer.pair_order`).  Each side's first packets
open its own NAT towards the other; the other's later packets then pass, and
a check that gets its binding response proves a working path.

* A check carries ``USERNAME`` = ``p2pkoikoi:`` + the joiner's answer nonce
  (base32) and ``MESSAGE-INTEGRITY`` keyed with
  :func:`~p2pkoikoi.session.codes.answer.check_key` of the invite secret and that
  nonce.  A request that does not verify is dropped without a word: a waiting
  host is not a STUN reflector for strangers, and only a holder of the invite
  gets its QUIC port to talk.
* A verified request is answered (keyed too), and its source address is
  *admitted* (the host then accepts QUIC from it) and checked back at once
  (a *triggered* check, RFC 8445 section 7.3.1.4): that is how a host behind a
  filtering NAT that received the joiner's check learns the joiner's mapping
  even when the answer lists another port (a symmetric joiner's).
* Pacing: one new check every :data:`PACE` (50 ms, RFC 8445's Ta), each pair
  retransmitted at 0.25, 0.5, 1 and 2 s, then every :data:`KEEP` seconds
  while the checker runs: this is also the keepalive that holds the NAT
  mappings open while a person passes the answer on (a carrier NAT forgets
  an idle UDP mapping after about 30 s).
* After a pair's first success, :data:`EXTRA` more probes go out on it so
  that both NATs see outbound traffic on the path QUIC will use.

The caller decides what a working path is for (the joiner dials QUIC there,
first success first; the host waits for the joiner's QUIC); the first path
whose session completes the authenticated handshake wins, as with TCP.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import trio

from p2pkoikoi.session.codes.answer import UdpCandidate, check_key
from p2pkoikoi.transport.nat import stun
from p2pkoikoi.transport.nat.quic import Addr
from p2pkoikoi.transport.nat.udp import UdpEndpoint

PACE: Final = 0.05
KEEP: Final = 4.0
EXTRA: Final = 3
USER_PREFIX: Final = b"p2pkoikoi:"


def username(nonce: bytes) -> bytes:
    return USER_PREFIX + base64.b32encode(nonce).rstrip(b"=").lower()


def nonce_of(user: bytes) -> bytes | None:
    if not user.startswith(USER_PREFIX):
        return None
    text = user[len(USER_PREFIX) :].upper()
    try:
        nonce = base64.b32decode(text + b"=" * (-len(text) % 8))
    except ValueError:
        return None
    return nonce if len(nonce) == 10 else None


def check_request(nonce: bytes, secret: bytes, *, controlling: bool) -> tuple[bytes, bytes]:
    """A check: (transaction, bytes)."""
    tid = stun.new_transaction()
    role = stun.ICE_CONTROLLING if controlling else stun.ICE_CONTROLLED
    attrs = ((stun.USERNAME, username(nonce)), (role, bytes(8)))
    raw = stun.encode(stun.Message(stun.BINDING_REQUEST, tid, attrs), key=check_key(secret, nonce))
    return tid, raw


@dataclass
class Responder:
    """Answers verified checks on an endpoint and remembers who passed one.

    ``nonces``: the answer nonces accepted (the joiner: its own only; the host:
    any, since a check proves the invite secret by its integrity).  ``passed``
    maps each admitted address to the nonce its check carried.
    """

    ep: UdpEndpoint
    secret: bytes
    controlling: bool
    only: bytes | None = None  # the joiner accepts checks keyed with its own nonce only
    passed: dict[Addr, bytes] = field(default_factory=dict)
    on_pass: Callable[[Addr, bytes], None] | None = None
    arrived: trio.Event = field(default_factory=trio.Event)

    def install(self) -> None:
        self.ep.on_request = self.request
        self.ep.admit = lambda addr: addr in self.passed

    def request(self, msg: stun.Message, raw: bytes, addr: Addr) -> None:
        user = msg.get(stun.USERNAME)
        nonce = nonce_of(user) if user is not None else None
        if nonce is None or (self.only is not None and nonce != self.only):
            return
        key = check_key(self.secret, nonce)
        try:
            stun.decode(raw, key=key)
        except stun.StunError:
            return  # not keyed with the invite: silence
        self.ep.sendto(stun.binding_success(msg, addr[0], addr[1], key=key), addr)
        first = addr not in self.passed
        self.passed[addr] = nonce
        self.arrived.set()
        if first and self.on_pass is not None:
            self.on_pass(addr, nonce)


async def probe(
    ep: UdpEndpoint,
    addr: Addr,
    nonce: bytes,
    secret: bytes,
    *,
    controlling: bool,
    found: Callable[[Addr], None],
    keep: float = KEEP,
) -> None:
    """Check one remote address until cancelled: retransmit, report a success once,
    send the extra probes, then keep the path warm every ``keep`` seconds."""
    succeeded = False
    while True:
        tid, raw = check_request(nonce, secret, controlling=controlling)
        got = await ep.transact(raw, tid, addr, limit=4.0 if not succeeded else 1.0)
        if got is not None:
            try:
                stun.decode(got[1], key=check_key(secret, nonce))
            except stun.StunError:  # an answer not keyed with the invite: no path
                got = None
        if got is not None and not succeeded:
            succeeded = True
            found(addr)
            for _ in range(EXTRA):
                await trio.sleep(0.1)
                tid, raw = check_request(nonce, secret, controlling=controlling)
                ep.sendto(raw, addr)
        await trio.sleep(keep if succeeded or got is None else PACE)


async def check_all(
    ep: UdpEndpoint,
    remote: Sequence[UdpCandidate],
    nonce: bytes,
    secret: bytes,
    *,
    controlling: bool,
    found: Callable[[Addr], None],
    keep: float = KEEP,
) -> None:
    """Probe every remote candidate (best first, :data:`PACE` apart) until cancelled."""
    async with trio.open_nursery() as nursery:
        seen: set[Addr] = set()
        for c in remote:
            addr = (c.ip, c.port)
            if addr in seen:
                continue
            seen.add(addr)
            nursery.start_soon(_probe, ep, addr, nonce, secret, controlling, found, keep)
            await trio.sleep(PACE)


async def _probe(
    ep: UdpEndpoint,
    addr: Addr,
    nonce: bytes,
    secret: bytes,
    controlling: bool,
    found: Callable[[Addr], None],
    keep: float,
) -> None:
    await probe(ep, addr, nonce, secret, controlling=controlling, found=found, keep=keep)
