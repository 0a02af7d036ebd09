"""The host's opener: :func:`open_host`, an ``async with`` that yields a started match.

It listens (:mod:`~p2pkoikoi.transport.open.listener`), opens the UDP match socket for
hole punching, asks the router for the port and STUN for the reflexive address,
picks the short code, then shows the invite (a ``listening`` note) and announces
the code on this network (multicast DNS) and, with a DHT, across the internet.
Connections run concurrently in the :class:`~p2pkoikoi.transport.open.gate.Gate`
until one completes the handshake -- a stranger without the invite secret or
the code is dropped with a warning and the host keeps waiting.  The admitted
stream and session go to :func:`~p2pkoikoi.transport.link.lifetime.open_link` with a
:class:`Reconnect` that re-accepts the same opponent after a drop.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio

from p2pkoikoi.engine.presets import closest_preset
from p2pkoikoi.session import (
    Role,
    Session,
    encode_invite,
)
from p2pkoikoi.session.codes.code import (
    CODE_NUMBER_SHORT,
    CODE_SECRET_BYTES,
    ShortCode,
    decode_code,
    encode_code,
)
from p2pkoikoi.session.codes.invite import SECRET_BYTES
from p2pkoikoi.transport.errors import PeerTimeoutError, raise_single
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Note, Notify, nop
from p2pkoikoi.transport.link.reconnect import Reconnect, close_queued, session_entropy
from p2pkoikoi.transport.lookup.dht import DhtClient, open_dht
from p2pkoikoi.transport.lookup.mdns import announce
from p2pkoikoi.transport.lookup.rendezvous import (
    choose_number,
    host_rendezvous,
)
from p2pkoikoi.transport.nat.gather import Gathered, Keeper, gather, symmetric_text
from p2pkoikoi.transport.nat.portmap import open_reachability
from p2pkoikoi.transport.nat.punch import HostUdp
from p2pkoikoi.transport.nat.quic import QuicStream
from p2pkoikoi.transport.nat.udp import UdpEndpoint, open_socket
from p2pkoikoi.transport.open.addresses import (
    Candidate,
    is_local_only,
)
from p2pkoikoi.transport.open.gate import Admitted, CodeGuard, Gate, GateLimits
from p2pkoikoi.transport.open.listener import hosting, listen
from p2pkoikoi.transport.open.options import HostOptions
from p2pkoikoi.transport.player import Player

#: where ``host`` reads answers from (headless: stdin lines); None at the end
AnswerSource = Callable[[], Awaitable[str | None]]


def new_code(number: int | None = None) -> ShortCode:
    """A fresh short code: a random number 1..99 (unless given) and two random words."""
    n = number if number is not None else 1 + secrets.randbelow(CODE_NUMBER_SHORT)
    return decode_code(encode_code(n, os.urandom(CODE_SECRET_BYTES)))


@asynccontextmanager
async def open_host(
    player: Player,
    options: HostOptions,
    *,
    notify: Notify | None = None,
    answers: AnswerSource | None = None,
) -> AsyncIterator[NetworkLink]:
    """Listen, announce the invite and code (a ``listening`` note), admit one player, play.

    ``player`` is who hosts (:class:`~p2pkoikoi.transport.player.Player`: key,
    name, record, time bounds, known peers); ``options`` how
    (:class:`~p2pkoikoi.transport.open.options.HostOptions`: ``dht``, ``udp``,
    ``stun``, ``port``, ``code``... below are its fields).

    With ``dht`` (and a code) the code also works across the internet: a fresh
    code's number is one no host announces on the DHT now, and while the host
    waits it answers joiners there (:mod:`~p2pkoikoi.transport.lookup.rendezvous`,
    protocol/dht.md) with its invite, sealed under the code's PAKE key; a
    joiner's answer that comes back that way is taken as a pasted one would be.

    ``udp``: also open the match socket (UDP, the same port) for hole punching
    (:mod:`~p2pkoikoi.transport.nat.punch`): ``stun`` servers are asked for its
    reflexive address, which the invite carries; ``answers`` gives the joiners'
    answers as they come (the table's paste box, headless stdin).  No STUN
    server is asked unless ``stun`` names some (the CLI passes its list).

    ``port=0`` picks a free port; the note says which.  Before the invite is
    shown the router is asked to open the port (``port_mapping``; bounded, see
    :mod:`~p2pkoikoi.transport.nat.portmap`); a ``reachability`` note follows the
    ``listening`` one, and the mapping is removed when the block ends, however
    it ends.  The invite lists every candidate address
    (:func:`~p2pkoikoi.transport.open.addresses.host_candidates`).

    ``code``: True makes a fresh short code (:func:`new_code`), a
    :class:`ShortCode` uses that one, False/None none.  With a code (and
    ``announce``) the waiting host is announced on this network by multicast
    DNS until the match starts (:mod:`~p2pkoikoi.transport.lookup.mdns`), so a
    friend there joins with the code alone.

    The host listens for the whole match.  Before a joiner has proved the code
    or invite and its identity, connections run concurrently in the
    :class:`~p2pkoikoi.transport.open.gate.Gate` and any failure only drops that
    connection (a ``warning`` note: hosting goes on); wrong guesses of the code
    are counted and end it (a ``code_expired`` note).  Once a match is on,
    other connections get a one-line ``refuse``; after a drop the same opponent
    may resume.
    """
    notify = notify or nop
    o = options
    code, bind = o.code, o.bind
    listeners = await listen(o.port, bind)
    actual = int(listeners[0].socket.getsockname()[1])
    net = contextlib.AsyncExitStack()
    client: DhtClient | None = None
    if o.dht is not None and code is not False and code is not None:
        client = await net.enter_async_context(open_dht(o.dht))  # no await until `net` is on
    short: ShortCode | None = code if isinstance(code, ShortCode) else None
    secret = os.urandom(SECRET_BYTES)
    ep: UdpEndpoint | None = None
    if o.udp:
        try:
            ep = UdpEndpoint(open_socket(actual, bind))
        except OSError as exc:  # the UDP port is taken: TCP only, as before
            notify({"event": "warning", "text": f"no UDP match socket on port {actual}: {exc}"})
    try:
        async with net, trio.open_nursery() as udp_nursery:
            picked = trio.Event()  # a fresh code's number: one nobody waits with on the DHT
            if code is True:

                async def pick() -> None:
                    nonlocal short
                    short = new_code(await choose_number(client) if client else None)
                    picked.set()

                udp_nursery.start_soon(pick)  # while the router and STUN are asked
            else:
                picked.set()
            gathered: list[Gathered] = []
            done = trio.Event()
            if ep is not None:
                await udp_nursery.start(ep.run)

                async def gather_now() -> None:
                    assert ep is not None
                    gathered.append(await gather(ep, o.stun))
                    done.set()

                udp_nursery.start_soon(gather_now)
            else:
                done.set()
            async with open_reachability(
                actual, bind=bind, advertise=o.advertise, port_mapping=o.port_mapping
            ) as (reach, candidates, waited):
                await done.wait()
                await picked.wait()
                host_udp = None
                if ep is not None and gathered:
                    host_udp = HostUdp(ep, secret, gathered[0], notify)
                    host_udp.start(udp_nursery)
                ready = _Ready(
                    listeners,
                    candidates,
                    secret=secret,
                    short=short,
                    reachability={
                        **reach.to_event(),
                        "waited": round(waited, 3),
                        # no NAT on IPv6: reachable from the internet there unless a firewall says no
                        "ipv6": [str(c) for c in candidates if c.source == "ipv6"],
                    },
                    host_udp=host_udp,
                    dht=client,
                )
                async with _hosting_match(
                    player, options, ready, notify=notify, answers=answers
                ) as link:
                    yield link
            udp_nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise_single(group)
    finally:
        if ep is not None:
            ep.close()
        for ln in listeners:  # closed already, unless the port mapping failed first
            with trio.move_on_after(1) as cs:
                cs.shield = True
                await ln.aclose()


@dataclass(frozen=True)
class LanAnnouncement:
    """What a waiting host tells its network (protocol/discovery.md): no secret."""

    name: str
    rules: str
    number: int


@dataclass(frozen=True)
class _Ready:
    """What :func:`open_host` found before it shows the invite: the listeners, the
    candidate addresses, the invite's secret, the code, the reachability note, the
    match socket's hole puncher and the DHT client."""

    listeners: list[trio.SocketListener]
    candidates: list[Candidate]
    secret: bytes
    short: ShortCode | None
    reachability: Note
    host_udp: HostUdp | None
    dht: DhtClient | None


@asynccontextmanager
async def _hosting_match(
    player: Player,
    options: HostOptions,
    ready: _Ready,
    *,
    notify: Notify,
    answers: AnswerSource | None,
) -> AsyncIterator[NetworkLink]:
    """:func:`open_host` once the candidates are known: the invite, then one player."""
    listeners, candidates, secret, short = (
        ready.listeners,
        ready.candidates,
        ready.secret,
        ready.short,
    )
    host_udp, dht, timeouts = ready.host_udp, ready.dht, player.timeouts
    actual = candidates[0].port
    room = 8 - len(candidates)
    reflexive = list(host_udp.gathered.reflexive[:room]) if host_udp is not None else []
    invite = encode_invite([(c.address, c.port) for c in candidates], secret, udp=reflexive)
    note: dict[str, Any] = {
        "event": "listening",
        "invite": invite,
        "port": actual,
        "addresses": [str(c) for c in candidates],
    }
    if short is not None:
        note["code"] = str(short)
        note["dht"] = dht is not None  # the code works across the internet too
    if host_udp is not None:
        note["udp"] = [c.display for c in reflexive]
        note["nat"] = host_udp.gathered.nat
    notify(note)
    notify(ready.reachability)
    if host_udp is not None and host_udp.gathered.nat == "d":
        notify({"event": "warning", "nat": "symmetric", "text": symmetric_text()})
    sidecar = {"role": "host", "invite": invite, "port": actual, "bind": options.bind}
    rc = Reconnect(identity=player.identity, sidecar=sidecar, wanted=True)
    limit = math.inf if options.accept_timeout is None else options.accept_timeout

    def make_session(code_now: ShortCode | None, invite_secret: bytes = secret) -> Session:
        """The host's side of one connection: the invite's secret (or a punched
        path's own), and the short code while it is the one guessed."""
        return Session(
            Role.HOST,
            identity_key=player.identity,
            invite_secret=invite_secret,
            name=player.name,
            entropy=session_entropy(),
            rules=options.rules,
            code=code_now,
            turn_limit=options.turn_limit,
        )

    gate_limits = options.gate_limits
    if gate_limits is None:  # a stranger gets at most the handshake step's time
        gate_limits = GateLimits(deadline=min(GateLimits.deadline, timeouts.handshake))

    def session_for(stream: trio.abc.Stream) -> Session | None:
        special = host_udp.secret_for(stream) if host_udp is not None else None
        if special is None:
            return None
        return make_session(None, special)

    gate = Gate(
        make_session,
        notify,
        limits=gate_limits,
        guard=CodeGuard(short),
        session_for=session_for,
    )
    lan = contextlib.AsyncExitStack()
    quic_tx, quic_rx = trio.open_memory_channel[QuicStream](16)
    if host_udp is not None:
        host_udp.ep.incoming = quic_tx
        if answers is not None:
            src, hu = answers, host_udp

            async def read_answers() -> None:
                while (text := await src()) is not None:
                    hu.take_answer(text)

            host_udp.spawn(read_answers)
        g = host_udp.gathered
        if g.seen and options.stun:  # keep the reflexive mapping alive, notice a change
            keeper = Keeper(host_udp.ep, g.seen[0][0], g.seen[0][1])
            host_udp.spawn(keeper.run, notify)
    local = [c.address for c in candidates if c.source in ("lan", "ipv6", "bind")]
    local = [a for a in local if not is_local_only(a)]
    if short is not None and options.announce and local:  # on loopback: nobody else could come
        ad = LanAnnouncement(player.name, closest_preset(options.rules)[0], short.number)
        await lan.enter_async_context(
            announce(name=ad.name, rules=ad.rules, number=ad.number, port=actual, addresses=local)
        )
    async with lan, hosting(listeners, rc, quic_rx if host_udp is not None else None) as incoming:
        admitted: Admitted | None = None
        async with trio.open_nursery() as waiting:
            if dht is not None and short is not None:
                take = host_udp.take_answer if host_udp is not None else None
                waiting.start_soon(
                    functools.partial(
                        host_rendezvous, dht, short, invite, gate.guard, notify, on_answer=take
                    )
                )
            with trio.move_on_after(limit):
                admitted = await gate.admit(incoming)
            waiting.cancel_scope.cancel()  # the match starts: the number is left closed
        await lan.aclose()  # the match starts (or hosting ends): no longer waiting here
        rc.wanted = False
        close_queued(incoming)
        if admitted is None:
            raise PeerTimeoutError(f"nobody joined within {limit:g}s")
        async with open_link(
            admitted.stream, admitted.session, player, notify=notify, reconnect=rc
        ) as link:
            yield link
