"""Hole punching for a match: the host's and the joiner's UDP sides, up to an authenticated stream.

Theory of operation
-------------------
The joiner (:class:`JoinerUdp`) opens its match socket at once and, in
parallel with the TCP race to the invite's addresses:

1. checks every UDP candidate of the host (the invite's addresses with their
   port, and its ``s`` reflexive entries): against a host behind a full-cone
   NAT, or with a public address, this alone connects, no answer needed;
2. gathers its own candidates (:func:`~p2pkoikoi.transport.nat.gather.gather`,
   1.8 s at most) and, if nothing has connected by then, shows the *answer*
   (:mod:`p2pkoikoi.session.codes.answer`): its candidates, its NAT's kind and the
   fresh nonce its checks carry;
3. for every path that works (its check answered, or a verified check from
   the host arrived), opens QUIC there and runs the session's handshake in it
   with the answered secret; the first authenticated session is the match's.

The host (:class:`HostUdp`) answers verified checks from anybody holding the
invite (and checks back at once), and on each answer it is given checks the
joiner's candidates for :data:`CHECK_TIME`; if no path opened within
:data:`NO_PATH` seconds of the answer it says in one line whose network
blocks direct play and what would help.  QUIC streams that arrive from an
address that passed a check go to the host's gate with the TCP ones.

Both keep probing the winning path while the match runs (the NAT mappings
stay as they are: reconnecting re-punches the same candidates).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import trio

from p2pkoikoi.session.codes.answer import (
    NONCE_BYTES,
    AnswerError,
    UdpCandidate,
    answered_secret,
    decode_answer,
    make_answer,
    pair_order,
    priority,
)
from p2pkoikoi.session.codes.invite import Invite
from p2pkoikoi.transport.link.notes import Notify
from p2pkoikoi.transport.nat.checks import KEEP, Responder, check_all, probe
from p2pkoikoi.transport.nat.gather import Gathered, gather, symmetric_text
from p2pkoikoi.transport.nat.quic import Addr, QuicStream
from p2pkoikoi.transport.nat.udp import UdpEndpoint

#: how long the host checks one answer's candidates
CHECK_TIME: Final = 30.0
#: when the host says no direct path opened, counted from the answer
NO_PATH: Final = 12.0
#: the joiner shows its answer no sooner than this after it started: a join on the
#: host's network has its handshake within 0.3 s, a host behind a full cone within
#: 0.2-0.5 s of the joiner's checks (bench/punch_bench.py), so the answer appears
#: only when it is needed, and costs those who need it one second
FIRST_TRY: Final = 1.0
#: how long a working path waits for a better one still being checked
NOMINATE: Final = 0.25
#: QUIC handshake bound on a checked path
QUIC_CONNECT: Final = 8.0


def host_udp_candidates(inv: Invite) -> list[UdpCandidate]:
    """Where the host's match socket may be: the invite's IP addresses (same port) and
    its reflexive ``s`` entries."""
    out: list[UdpCandidate] = []
    for a in inv.addresses:
        try:
            ipaddress.ip_address(a.host)
        except ValueError:
            continue
        out.append(UdpCandidate("h", a.host, a.port))
    return out + list(inv.udp)


def blame(host: str, joiner: str, friend: str) -> str:
    """The host's one line when no path opened: whose network blocks, what would help."""
    helps = (
        "what would help: UPnP or NAT-PMP turned on in a router (then host there), IPv6 "
        "on both sides, or a network without carrier-grade NAT (a phone's hotspot)"
    )
    if host == "d" and joiner == "d":
        return (
            f"no direct path to {friend}: both your network and theirs change the UDP port "
            f"for every destination (symmetric NATs), so no hole can be punched; {helps}"
        )
    if joiner == "u":
        return (
            f"no direct path to {friend}: {friend}'s network let no UDP through (no STUN "
            f"server answered it; UDP may be blocked there); {helps}"
        )
    if host == "u":
        return (
            f"no direct path to {friend}: your network let no UDP through (no STUN server "
            f"answered; UDP may be blocked here); {helps}"
        )
    if host == "d":
        return (
            f"no direct path to {friend}: your network is a symmetric NAT (it changes the UDP "
            f"port for every destination) and {friend}'s filters unsolicited packets; "
            f"let {friend} host, or: {helps}"
        )
    if joiner == "d":
        return (
            f"no direct path to {friend}: {friend}'s network is a symmetric NAT (it changes "
            "the UDP port for every destination) and yours filters unsolicited packets; "
            f"{helps}"
        )
    return (
        f"no direct path to {friend}: no UDP packet got through between the two networks "
        f"although neither NAT looked symmetric (a firewall dropping UDP?); {helps}"
    )


class HostUdp:
    """The host's match socket while it waits and plays (module docstring)."""

    def __init__(self, ep: UdpEndpoint, secret: bytes, gathered: Gathered, notify: Notify) -> None:
        self.ep = ep
        self.secret = secret
        self.gathered = gathered
        self.notify = notify
        self.responder = Responder(ep, secret, controlling=False, on_pass=self._passed)
        self.responder.install()
        self._nursery: trio.Nursery | None = None
        self._probing: set[Addr] = set()
        self.answers: dict[bytes, float] = {}  # nonce -> when its answer came

    def secret_for(self, stream: trio.abc.Stream) -> bytes | None:
        """The session secret of a QUIC stream: the invite's, bound to its answer nonce."""
        if not isinstance(stream, QuicStream):
            return None
        nonce = self.responder.passed.get(stream.peer_address)
        return answered_secret(self.secret, nonce) if nonce is not None else None

    def _passed(self, addr: Addr, nonce: bytes) -> None:
        if self._nursery is not None and addr not in self._probing:  # a triggered check
            self._probing.add(addr)
            self._nursery.start_soon(self._probe, addr, nonce)

    async def _probe(self, addr: Addr, nonce: bytes) -> None:
        await probe(self.ep, addr, nonce, self.secret, controlling=False, found=lambda a: None)

    def take_answer(self, text: str) -> None:
        """An answer pasted or read on stdin: check its candidates (errors: a warning)."""
        try:
            ans = decode_answer(text, self.secret)
        except AnswerError as exc:
            self.notify({"event": "warning", "text": str(exc)})
            return
        if ans.nonce in self.answers or self._nursery is None:
            return
        self.answers[ans.nonce] = trio.current_time()
        pairs = pair_order(self.gathered.candidates, ans.candidates, controlling=False)
        remote = [r for _, r in pairs]
        self.notify(
            {
                "event": "answer_received",
                "candidates": [c.display for c in ans.candidates],
                "nat": ans.nat,
                "text": f"checking {len(remote)} paths to your friend's network",
            }
        )
        self._nursery.start_soon(self._check_answer, remote, ans.nonce, ans.nat)

    async def _check_answer(self, remote: Sequence[UdpCandidate], nonce: bytes, nat: str) -> None:
        with trio.move_on_after(CHECK_TIME):
            async with trio.open_nursery() as n:
                n.start_soon(self._verdict, nonce, nat)
                await check_all(
                    self.ep, remote, nonce, self.secret, controlling=False, found=lambda a: None
                )

    async def _verdict(self, nonce: bytes, nat: str) -> None:
        await trio.sleep(NO_PATH)
        if nonce in self.responder.passed.values():
            return
        self.notify(
            {
                "event": "no_direct_path",
                "host_nat": self.gathered.nat,
                "joiner_nat": nat,
                "text": blame(self.gathered.nat, nat, "your friend"),
            }
        )

    def start(self, nursery: trio.Nursery) -> None:
        """Probes and answers' checks run in ``nursery`` (the endpoint's lifetime)."""
        self._nursery = nursery

    def spawn(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(fn, *args)


Attempt = Callable[[Addr, trio.abc.Stream], Awaitable[object]]


class JoinerUdp:
    """The joiner's match socket (module docstring)."""

    def __init__(
        self,
        ep: UdpEndpoint,
        inv: Invite,
        servers: Sequence[tuple[str, int]],
        notify: Notify,
        nonce: bytes | None = None,
    ) -> None:
        self.ep = ep
        self.inv = inv
        self.servers = servers
        self.notify = notify
        self.nonce = nonce or os.urandom(NONCE_BYTES)
        self.secret = answered_secret(inv.secret, self.nonce)
        self.remote = host_udp_candidates(inv)
        self.found_tx, self.found_rx = trio.open_memory_channel[Addr](64)
        self.responder = Responder(
            ep, inv.secret, controlling=True, only=self.nonce, on_pass=self._host_checked
        )
        self.responder.install()
        self.gathered: Gathered | None = None
        self.answer: str | None = None
        self.won = trio.Event()
        self.tcp_failed = trio.Event()
        self.gave_up = False  # the wait for the host to use the answer ran out
        self._seen: set[Addr] = set()
        self._nursery: trio.Nursery | None = None

    def _found(self, addr: Addr) -> None:
        if addr not in self._seen:
            self._seen.add(addr)
            self.found_tx.send_nowait(addr)

    def _host_checked(self, addr: Addr, nonce: bytes) -> None:
        self._found(addr)
        if self._nursery is not None and all(addr != (c.ip, c.port) for c in self.remote):
            self._nursery.start_soon(self._probe, addr)  # check back (triggered)

    async def _probe(self, addr: Addr) -> None:
        await probe(self.ep, addr, self.nonce, self.inv.secret, controlling=True, found=self._found)

    async def show_answer(self, after: trio.Event) -> None:
        """Gather, then show the answer unless a path won meanwhile: once gathered and
        :data:`FIRST_TRY` passed (even when the TCP race failed sooner: a host behind a
        full cone answers the checks within it, and then no answer is needed)."""
        began = trio.current_time()
        self.gathered = await gather(self.ep, self.servers)
        await trio.sleep_until(began + FIRST_TRY)
        self.answer = make_answer(
            self.gathered.candidates, self.gathered.nat, self.inv.secret, self.nonce
        )
        if self.gathered.nat == "d":
            self.notify({"event": "warning", "nat": "symmetric", "text": symmetric_text()})
        if not self.won.is_set() and not after.is_set():
            self.notify(
                {
                    "event": "answer",
                    "answer": self.answer,
                    "text": "the invite alone does not reach the host: send this answer "
                    "back to your friend (who pastes it while waiting)",
                }
            )

    async def connect(
        self, attempt: Callable[[Addr, QuicStream], Awaitable[object]], stop: trio.Event
    ) -> object:
        """Checks, the answer, then QUIC on each working path; the first ``attempt``
        (the authenticated handshake) that returns wins."""
        result: list[object] = []
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(
                lambda: check_all(
                    self.ep,
                    self.remote,
                    self.nonce,
                    self.inv.secret,
                    controlling=True,
                    found=self._found,
                    keep=KEEP,
                )
            )
            nursery.start_soon(self.show_answer, stop)

            async def one(addr: Addr) -> None:
                # a better path still unconfirmed gets a head start (ICE's nomination of
                # the best pair, RFC 8445 section 8.1.1, in miniature)
                mine = self._priority(addr)
                if any(self._priority(a) > mine for a in self._unconfirmed()):
                    await trio.sleep(NOMINATE)
                try:
                    stream = await self.ep.connect(addr, QUIC_CONNECT)
                except (OSError, trio.TooSlowError, ConnectionError):
                    self._seen.discard(addr)
                    return
                try:
                    got = await attempt(addr, stream)
                except Exception:
                    await stream.aclose()
                    return
                if result:
                    await trio.aclose_forcefully(stream)
                    return
                result.append(got)
                self.won.set()
                nursery.cancel_scope.cancel()

            async for addr in self.found_rx:
                nursery.start_soon(one, addr)
        return result[0] if result else None

    def _priority(self, addr: Addr) -> int:
        for i, c in enumerate(self.remote):
            if (c.ip, c.port) == addr:
                return priority(c, i)
        kind = "h" if ":" in addr[0] else "s"  # learnt from the host's own check
        return priority(UdpCandidate(kind, addr[0], addr[1]), len(self.remote))

    def _unconfirmed(self) -> list[Addr]:
        return [(c.ip, c.port) for c in self.remote if (c.ip, c.port) not in self._seen]

    async def repunch(self, first: Addr, limit: float) -> QuicStream:
        """After a drop: check the known host candidates again, QUIC on the first path."""
        found = trio.open_memory_channel[Addr](16)
        order = [first] + [(c.ip, c.port) for c in self.remote if (c.ip, c.port) != first]
        cands = [UdpCandidate("h", ip, port) for ip, port in order]
        with trio.fail_after(limit):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    lambda: check_all(
                        self.ep,
                        cands,
                        self.nonce,
                        self.inv.secret,
                        controlling=True,
                        found=lambda a: found[0].send_nowait(a),
                    )
                )
                addr = await found[1].receive()
                stream = await self.ep.connect(addr, limit)
                nursery.cancel_scope.cancel()
        return stream
