"""The joiner's opener: :func:`open_join`, an ``async with`` that yields a started match.

The joiner gets its candidates from the invite (or, for a short code, from
:mod:`~p2pkoikoi.transport.lookup.find`: the hosts announcing it here, or the
invite the DHT rendezvous gave), races them to an authenticated host
(:mod:`~p2pkoikoi.transport.open.dialer`, Happy Eyeballs) and, with an invite, at the
same time punches a UDP path (:class:`~p2pkoikoi.transport.nat.punch.JoinerUdp`,
:func:`_tcp_or_udp`): the first path whose peer completes the handshake is the
match's.  Its stream and session go to
:func:`~p2pkoikoi.transport.link.lifetime.open_link` with a :class:`Reconnect` that
redials the address that worked first (or re-punches the UDP path) after a drop.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio

from p2pkoikoi.session import (
    Invite,
    Role,
    Session,
    decode_invite,
)
from p2pkoikoi.session.codes.code import (
    ShortCode,
)
from p2pkoikoi.session.codes.invite import Address
from p2pkoikoi.transport.errors import ConnectError, raise_single
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.handshake import DecideRules
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Notify, nop
from p2pkoikoi.transport.link.reconnect import Reconnect, session_entropy
from p2pkoikoi.transport.lookup.find import answer_back, find_host_of
from p2pkoikoi.transport.lookup.rendezvous import (
    Found,
)
from p2pkoikoi.transport.nat.punch import JoinerUdp
from p2pkoikoi.transport.nat.quic import QuicStream
from p2pkoikoi.transport.nat.udp import UdpEndpoint, open_socket
from p2pkoikoi.transport.open.addresses import (
    Candidate,
    dedupe,
    is_local_only,
    screen_invite,
)
from p2pkoikoi.transport.open.dialer import (
    Authenticated,
    authenticate_stream,
    dial_any,
    dial_authenticated,
)
from p2pkoikoi.transport.open.options import JoinOptions
from p2pkoikoi.transport.open.race import AllAttemptsFailed
from p2pkoikoi.transport.player import Player


@asynccontextmanager
async def open_join(
    invite: str | Invite | ShortCode,
    player: Player,
    options: JoinOptions | None = None,
    *,
    notify: Notify | None = None,
    decide_rules: DecideRules | None = None,
) -> AsyncIterator[NetworkLink]:
    """Connect to the host named by ``invite`` and play.

    ``player`` is who joins (:class:`~p2pkoikoi.transport.player.Player`);
    ``options`` how (:class:`~p2pkoikoi.transport.open.options.JoinOptions`:
    ``udp``, ``stun``, ``answer_wait``, ``screen``, ``address``... below are its
    fields; None: the defaults).  ``decide_rules`` is asked about the host's rules
    when ``options.expected_rules`` is None.

    With an invite (and ``udp``) the joiner also punches a UDP path
    (:class:`~p2pkoikoi.transport.nat.punch.JoinerUdp`): it checks the host's UDP
    candidates at once and, when nothing connected once its own candidates
    are gathered (``stun`` servers asked), shows the answer (an ``answer``
    note) and waits up to ``answer_wait`` seconds for the host to use it.

    ``min_turn_limit``: a host's turn limit under it is declined (the session says
    why); a program that accepts the rules without asking a person passes a floor.

    ``screen``: the invite came from a person (the command line), so its loopback
    and link-local addresses are warned about and only the first is dialed
    (:func:`~p2pkoikoi.transport.open.addresses.screen_invite`).

    Every address of the invite is tried, Happy Eyeballs style
    (:mod:`~p2pkoikoi.transport.open.dialer`): the first connection whose peer
    completes the authenticated handshake is the match's; when none does, one
    line names each address and why it failed.  With ``expected_rules`` the
    session accepts exactly those rules (or fails naming the differences);
    without, ``decide_rules`` is asked (default: accept, after a
    ``rules_proposed`` note).

    With a short code the hosts waiting on this network are found by multicast
    DNS (:func:`~p2pkoikoi.transport.lookup.mdns.find_host`): every host that
    announces the code's number is a candidate, and only the one that knows
    the code's words completes the handshake.  With ``dht`` the host is looked for
    on the DHT too (:func:`~p2pkoikoi.transport.lookup.rendezvous.find_invite`), once
    the network has been silent for :data:`~p2pkoikoi.transport.lookup.find.LAN_FIRST`: the rendezvous there gives
    the host's invite, used as if it had been pasted, and the answer, if one is
    shown, goes back the same way.  A given ``address`` is tried instead of
    looking (a code) or first (an invite).
    """
    options = options or JoinOptions()
    async with contextlib.AsyncExitStack() as dht_stack:
        notify = notify or nop
        address_list: list[Candidate] = []
        if isinstance(invite, ShortCode) and options.address is None:
            found = await find_host_of(invite, notify, options.dht, dht_stack)
            if isinstance(found, Found):  # an invite from the DHT is screened like a person's
                options = dataclasses.replace(options, screen=True)
                invite = decode_invite(found.invite)
                notify = await answer_back(found, notify, dht_stack)
            else:
                address_list = found
        async with _open_join(
            invite, player, options, listed=address_list, notify=notify, decide_rules=decide_rules
        ) as link:
            yield link


@asynccontextmanager
async def _open_join(
    invite: str | Invite | ShortCode,
    player: Player,
    options: JoinOptions,
    *,
    listed: list[Candidate],
    notify: Notify,
    decide_rules: DecideRules | None,
) -> AsyncIterator[NetworkLink]:
    """:func:`open_join` once a code has been looked up (``listed``: its hosts here)."""
    address = options.address
    given = [Candidate(address.host, address.port, "given")] if address is not None else []
    if isinstance(invite, ShortCode):
        code = invite
        candidates = given or listed
        secret: bytes | None = None
        resume_as = ""  # no invite: a resume redials the addresses the sidecar lists
        inv: Invite | None = None
    else:
        inv = decode_invite(invite) if isinstance(invite, str) else invite
        code, secret, resume_as = None, inv.secret, str(inv)
        listed = [Candidate(a.host, a.port, "invite") for a in inv.addresses]
        if options.screen:  # loopback or link-local: this machine's own services
            listed, warnings = screen_invite(listed)
            for text in warnings:
                notify({"event": "warning", "text": text})
        candidates = dedupe(given + listed)

    def joiner_session(invite_secret: bytes | None, code: ShortCode | None) -> Session:
        """One joiner's session, as every path to the host makes it (TCP with the
        invite's secret or the code; a punched path with its answered secret)."""
        return Session(
            Role.JOINER,
            identity_key=player.identity,
            invite_secret=invite_secret,
            code=code,
            name=player.name,
            entropy=session_entropy(),
            expected_rules=options.expected_rules,
            min_turn_limit=options.min_turn_limit,
        )

    def session() -> Session:
        return joiner_session(secret, code)

    def udp_session(special: bytes) -> Callable[[], Session]:
        return lambda: joiner_session(special, None)

    punch: JoinerUdp | None = None
    if options.udp and inv is not None:
        try:
            punch = JoinerUdp(UdpEndpoint(open_socket(0, None)), inv, options.stun, notify)
        except OSError:
            punch = None
    try:
        async with contextlib.AsyncExitStack() as stack:
            if punch is not None:
                udp_nursery = await stack.enter_async_context(trio.open_nursery())
                stack.callback(punch.ep.close)
                stack.callback(udp_nursery.cancel_scope.cancel)
                await udp_nursery.start(punch.ep.run)
            punched = None
            if punch is not None:
                punched = _Punched(punch, udp_session(punch.secret), options.answer_wait)
            async with _joining(
                candidates,
                session,
                player,
                punched=punched,
                sidecar={
                    "role": "joiner",
                    **({"invite": resume_as} if resume_as else {}),
                    "address": str(Address(candidates[0].address, candidates[0].port)),
                    "addresses": [[c.address, c.port] for c in candidates],
                },
                decide_rules=decide_rules,
                notify=notify,
            ) as link:
                yield link
    except BaseExceptionGroup as group:  # the UDP side's nursery wraps the link's error
        raise_single(group)


@dataclass(frozen=True)
class _Punched:
    """The UDP side of a join: the hole puncher, the session a punched path gets,
    and how long a shown answer waits for the host."""

    punch: JoinerUdp
    session: Callable[[], Session]
    answer_wait: float


@asynccontextmanager
async def _joining(
    candidates: list[Candidate],
    make_session: Callable[[], Session],
    player: Player,
    *,
    punched: _Punched | None,
    sidecar: dict[str, Any],
    decide_rules: DecideRules | None,
    notify: Notify,
) -> AsyncIterator[NetworkLink]:
    """Race ``candidates`` to an authenticated host, then play over the winner."""
    t = player.timeouts
    punch = punched.punch if punched is not None else None
    first = candidates[0]
    notify(
        {
            "event": "connecting",
            "host": first.address,
            "port": first.port,
            "addresses": [str(c) for c in candidates],
        }
    )
    if punched is None:
        won = await dial_authenticated(
            candidates, make_session, connect=t.connect, handshake=t.handshake, stagger=t.stagger
        )
    else:
        won = await _tcp_or_udp(candidates, make_session, punched, t)
    # redialing after a drop: the address that worked first, then the others
    order = [won.candidate] + [c for c in candidates if c != won.candidate]

    async def dial() -> trio.abc.Stream:
        if won.candidate.source == "udp" and punch is not None:  # re-punch the known path
            return await punch.repunch((won.candidate.address, won.candidate.port), t.connect)
        return await dial_any(order, connect=t.connect)

    rc = Reconnect(identity=player.identity, dial=dial, sidecar=sidecar)
    async with open_link(
        won.stream,
        won.session,
        player,
        notify=notify,
        decide_rules=decide_rules,
        reconnect=rc,
        early=won.pending,
    ) as link:
        yield link


def _all_refused(exc: AllAttemptsFailed[Any]) -> bool:
    return bool(exc.failures) and all("refused" in why for _, why in exc.failures)


async def _tcp_or_udp(
    candidates: list[Candidate],
    make_session: Callable[[], Session],
    punched: _Punched,
    t: Timeouts,
) -> Authenticated:
    """The TCP race and the punched UDP paths at once: the first authenticated wins.

    A TCP race that fails leaves the UDP side running (with the answer shown),
    unless every address refused and the invite has no reflexive entry: then
    nobody is there, and the TCP line is the answer, as before."""
    punch, udp_session, answer_wait = punched.punch, punched.session, punched.answer_wait
    won: list[Authenticated] = []
    tcp_failed: list[Exception] = []
    stop = trio.Event()
    # a host the invite places on this computer or link only (loopback, link-local), with
    # no reflexive entry: an answer cannot reach it either, so TCP's verdict stands
    only_local = not punch.inv.udp and all(is_local_only(a.host) for a in punch.inv.addresses)

    async with trio.open_nursery() as nursery:

        async def tcp() -> None:
            try:
                got = await dial_authenticated(
                    candidates,
                    make_session,
                    connect=t.connect,
                    handshake=t.handshake,
                    stagger=t.stagger,
                )
            except AllAttemptsFailed as exc:
                tcp_failed.append(exc)
                punch.tcp_failed.set()
                if (_all_refused(exc) and not punch.inv.udp) or only_local or punch.gave_up:
                    nursery.cancel_scope.cancel()
                return
            except Exception as exc:  # the host answered and said no: decisive
                tcp_failed.append(exc)
                stop.set()
                nursery.cancel_scope.cancel()
                return
            if not won:
                won.append(got)
                stop.set()
                nursery.cancel_scope.cancel()

        async def quic() -> None:
            async def attempt(addr: tuple[str, int], stream: QuicStream) -> Authenticated:
                c = Candidate(addr[0], addr[1], "udp")
                return await authenticate_stream(c, stream, udp_session, t.handshake)

            with trio.move_on_after(answer_wait):
                got = await punch.connect(attempt, stop)
                if isinstance(got, Authenticated) and not won:
                    won.append(got)
                    nursery.cancel_scope.cancel()
                    return
            punch.gave_up = True
            if tcp_failed:  # both gave up; else the TCP race (bounded) still decides
                nursery.cancel_scope.cancel()

        nursery.start_soon(tcp)
        nursery.start_soon(quic)
    if won:
        return won[0]
    if tcp_failed and (only_local or not isinstance(tcp_failed[0], AllAttemptsFailed)):
        raise tcp_failed[0]
    if tcp_failed and _all_refused(tcp_failed[0]) and not punch.inv.udp:  # type: ignore[arg-type]
        if all(is_local_only(a.host) for a in punch.inv.addresses):
            raise tcp_failed[0]
        raise ConnectError(
            f"{tcp_failed[0]}; the invite has no public UDP address, so the host's network "
            "may block UDP (or it asked no STUN server): what would help: let the other "
            "player host, UPnP or NAT-PMP on the host's router, or IPv6 on both sides"
        ) from None
    why = f" ({tcp_failed[0]})" if tcp_failed else ""
    raise ConnectError(
        f"no direct path to the host within {answer_wait:g}s: the invite's addresses did "
        f"not answer{why} and the host did not use the answer; see docs/network.md"
    )
