"""Opening a link: host, join or resume, each an ``async with`` that yields a started match.

:func:`open_host` listens (:mod:`~p2pkoikoi.transport.listener`), announces the
invite, and tries each connection until one completes the handshake -- a
stranger without the invite secret is dropped with a warning and the host
keeps waiting.  :func:`open_join` dials the invite's address.
:func:`open_resume` continues a crashed match from its record and resume file.
All three build a :class:`Reconnect` so that a link can come back after a drop,
and hand the stream and session to :func:`~p2pkoikoi.transport.match_link.open_link`.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import RuleSet
from p2pkoikoi.engine.presets import closest_preset
from p2pkoikoi.session import (
    Invite,
    Role,
    Session,
    decode_invite,
    encode_invite,
)
from p2pkoikoi.session.code import (
    CODE_NUMBER_SHORT,
    CODE_SECRET_BYTES,
    ShortCode,
    decode_code,
    encode_code,
)
from p2pkoikoi.session.errors import ProtocolError
from p2pkoikoi.session.invite import MAX_ADDRESSES, SECRET_BYTES, Address, decode_address
from p2pkoikoi.session.record import Record
from p2pkoikoi.session.wire import DEFAULT_TURN_LIMIT
from p2pkoikoi.transport.addresses import (
    DEFAULT_PORT,
    MAX_MDNS_ADDRESSES,
    MAX_MDNS_HOSTS,
    Candidate,
    dedupe,
    is_local_only,
    local_kind,
    screen_invite,
)
from p2pkoikoi.transport.dht import DhtClient, DhtConfig, open_dht
from p2pkoikoi.transport.dht_rendezvous import (
    Found,
    choose_number,
    find_invite,
    host_rendezvous,
)
from p2pkoikoi.transport.dialer import (
    Authenticated,
    authenticate_stream,
    dial_any,
    dial_authenticated,
)
from p2pkoikoi.transport.discovery import announce, find_host
from p2pkoikoi.transport.errors import ConfigError, ConnectError, PeerTimeoutError, leaves
from p2pkoikoi.transport.gate import Admitted, CodeGuard, Gate, GateLimits
from p2pkoikoi.transport.gather import Gathered, Keeper, gather, symmetric_text
from p2pkoikoi.transport.identity import KnownPeers
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.listener import hosting, listen
from p2pkoikoi.transport.match_link import DecideRules, NetworkLink, open_link
from p2pkoikoi.transport.notes import Note, Notify, nop
from p2pkoikoi.transport.portmap import open_reachability
from p2pkoikoi.transport.punch import HostUdp, JoinerUdp
from p2pkoikoi.transport.quic import QuicStream
from p2pkoikoi.transport.race import AllAttemptsFailed
from p2pkoikoi.transport.reconnect import Reconnect, close_queued, session_entropy
from p2pkoikoi.transport.record_files import read_sidecar, sidecar_path
from p2pkoikoi.transport.udp import UdpEndpoint, open_socket

#: where ``host`` reads answers from (headless: stdin lines); None at the end
AnswerSource = Callable[[], Awaitable[str | None]]
#: how long a joiner that showed its answer waits for the host to use it
ANSWER_WAIT: Final = 600.0


def new_code(number: int | None = None) -> ShortCode:
    """A fresh short code: a random number 1..99 (unless given) and two random words."""
    n = number if number is not None else 1 + secrets.randbelow(CODE_NUMBER_SHORT)
    return decode_code(encode_code(n, os.urandom(CODE_SECRET_BYTES)))


@asynccontextmanager
async def open_host(
    *,
    identity: Ed25519PrivateKey,
    name: str,
    rules: RuleSet,
    port: int = DEFAULT_PORT,
    bind: str | None = None,
    advertise: str | None = None,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
    accept_timeout: float | None = None,
    code: ShortCode | None | bool = True,
    gate_limits: GateLimits | None = None,
    port_mapping: bool = True,
    announce: bool = True,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    stun: Sequence[tuple[str, int]] = (),
    udp: bool = True,
    answers: AnswerSource | None = None,
    dht: DhtConfig | None = None,
) -> AsyncIterator[NetworkLink]:
    """Listen, announce the invite and code (a ``listening`` note), admit one player, play.

    With ``dht`` (and a code) the code also works across the internet: a fresh
    code's number is one no host announces on the DHT now, and while the host
    waits it answers joiners there (:mod:`~p2pkoikoi.transport.dht_rendezvous`,
    protocol/dht.md) with its invite, sealed under the code's PAKE key; a
    joiner's answer that comes back that way is taken as a pasted one would be.

    ``udp``: also open the match socket (UDP, the same port) for hole punching
    (:mod:`~p2pkoikoi.transport.punch`): ``stun`` servers are asked for its
    reflexive address, which the invite carries; ``answers`` gives the joiners'
    answers as they come (the table's paste box, headless stdin).  No STUN
    server is asked unless ``stun`` names some (the CLI passes its list).

    ``port=0`` picks a free port; the note says which.  Before the invite is
    shown the router is asked to open the port (``port_mapping``; bounded, see
    :mod:`~p2pkoikoi.transport.portmap`); a ``reachability`` note follows the
    ``listening`` one, and the mapping is removed when the block ends, however
    it ends.  The invite lists every candidate address
    (:func:`~p2pkoikoi.transport.addresses.host_candidates`).

    ``code``: True makes a fresh short code (:func:`new_code`), a
    :class:`ShortCode` uses that one, False/None none.  With a code (and
    ``announce``) the waiting host is announced on this network by multicast
    DNS until the match starts (:mod:`~p2pkoikoi.transport.discovery`), so a
    friend there joins with the code alone.

    The host listens for the whole match.  Before a joiner has proved the code
    or invite and its identity, connections run concurrently in the
    :class:`~p2pkoikoi.transport.gate.Gate` and any failure only drops that
    connection (a ``warning`` note: hosting goes on); wrong guesses of the code
    are counted and end it (a ``code_expired`` note).  Once a match is on,
    other connections get a one-line ``refuse``; after a drop the same opponent
    may resume.
    """
    notify = notify or nop
    listeners = await listen(port, bind)
    actual = int(listeners[0].socket.getsockname()[1])
    net = contextlib.AsyncExitStack()
    client: DhtClient | None = None
    if dht is not None and code is not False and code is not None:
        client = await net.enter_async_context(open_dht(dht))  # no await until `net` is on
    short: ShortCode | None = code if isinstance(code, ShortCode) else None
    secret = os.urandom(SECRET_BYTES)
    ep: UdpEndpoint | None = None
    if udp:
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
                    gathered.append(await gather(ep, stun))
                    done.set()

                udp_nursery.start_soon(gather_now)
            else:
                done.set()
            async with open_reachability(
                actual, bind=bind, advertise=advertise, port_mapping=port_mapping
            ) as (reach, candidates, waited):
                await done.wait()
                await picked.wait()
                ad = None
                if short is not None and announce:
                    ad = Announcement(name, closest_preset(rules)[0], short.number)
                host_udp = None
                if ep is not None and gathered:
                    host_udp = HostUdp(ep, secret, gathered[0], notify)
                    host_udp.start(udp_nursery)
                async with _hosting_match(
                    listeners,
                    candidates,
                    identity=identity,
                    name=name,
                    rules=rules,
                    bind=bind,
                    timeouts=timeouts,
                    record_path=record_path,
                    notify=notify,
                    known_peers=known_peers,
                    accept_timeout=accept_timeout,
                    short=short,
                    gate_limits=gate_limits,
                    announce_as=ad,
                    turn_limit=turn_limit,
                    reachability={
                        **reach.to_event(),
                        "waited": round(waited, 3),
                        # no NAT on IPv6: reachable from the internet there unless a firewall says no
                        "ipv6": [str(c) for c in candidates if c.source == "ipv6"],
                    },
                    secret=secret,
                    host_udp=host_udp,
                    answers=answers,
                    stun=stun,
                    dht=client,
                ) as link:
                    yield link
            udp_nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        errs = leaves(group)
        if len(errs) == 1:
            raise errs[0] from None
        raise
    finally:
        if ep is not None:
            ep.close()
        for ln in listeners:  # closed already, unless the port mapping failed first
            with trio.move_on_after(1) as cs:
                cs.shield = True
                await ln.aclose()


@dataclass(frozen=True)
class Announcement:
    """What a waiting host tells its network (protocol/discovery.md): no secret."""

    name: str
    rules: str
    number: int


@asynccontextmanager
async def _hosting_match(
    listeners: list[trio.SocketListener],
    candidates: list[Candidate],
    *,
    identity: Ed25519PrivateKey,
    name: str,
    rules: RuleSet,
    bind: str | None,
    timeouts: Timeouts | None,
    record_path: Path | None,
    notify: Notify,
    known_peers: KnownPeers | None,
    accept_timeout: float | None,
    short: ShortCode | None,
    gate_limits: GateLimits | None,
    announce_as: Announcement | None,
    turn_limit: int,
    reachability: Note,
    secret: bytes,
    host_udp: HostUdp | None = None,
    answers: AnswerSource | None = None,
    stun: Sequence[tuple[str, int]] = (),
    dht: DhtClient | None = None,
) -> AsyncIterator[NetworkLink]:
    """:func:`open_host` once the candidates are known: the invite, then one player."""
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
    notify(reachability)
    if host_udp is not None and host_udp.gathered.nat == "d":
        notify({"event": "warning", "nat": "symmetric", "text": symmetric_text()})
    sidecar = {"role": "host", "invite": invite, "port": actual, "bind": bind}
    rc = Reconnect(identity=identity, sidecar=sidecar, wanted=True)
    limit = math.inf if accept_timeout is None else accept_timeout

    def make_session(code_now: ShortCode | None) -> Session:
        return Session(
            Role.HOST,
            identity_key=identity,
            invite_secret=secret,
            name=name,
            entropy=session_entropy(),
            rules=rules,
            code=code_now,
            turn_limit=turn_limit,
        )

    if gate_limits is None:  # a stranger gets at most the handshake step's time
        gate_limits = GateLimits(
            deadline=min(GateLimits.deadline, (timeouts or Timeouts()).handshake)
        )

    def session_for(stream: trio.abc.Stream) -> Session | None:
        special = host_udp.secret_for(stream) if host_udp is not None else None
        if special is None:
            return None
        return Session(
            Role.HOST,
            identity_key=identity,
            invite_secret=special,
            name=name,
            entropy=session_entropy(),
            rules=rules,
            turn_limit=turn_limit,
        )

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
        if g.seen and stun:  # keep the reflexive mapping alive, notice a change
            keeper = Keeper(host_udp.ep, g.seen[0][0], g.seen[0][1])
            host_udp.spawn(keeper.run, notify)
    local = [c.address for c in candidates if c.source in ("lan", "ipv6", "bind")]
    local = [a for a in local if not is_local_only(a)]
    if announce_as is not None and local:  # bound to loopback: nobody else could come
        ad = announce_as
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
            admitted.stream,
            admitted.session,
            timeouts=timeouts,
            record_path=record_path,
            notify=notify,
            known_peers=known_peers,
            reconnect=rc,
        ) as link:
            yield link


@asynccontextmanager
async def open_join(
    invite: str | Invite | ShortCode,
    *,
    address: Address | None = None,
    identity: Ed25519PrivateKey,
    name: str,
    expected_rules: RuleSet | None = None,
    decide_rules: DecideRules | None = None,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
    stun: Sequence[tuple[str, int]] = (),
    udp: bool = True,
    answer_wait: float = ANSWER_WAIT,
    screen: bool = False,
    min_turn_limit: int = 0,
    dht: DhtConfig | None = None,
) -> AsyncIterator[NetworkLink]:
    """Connect to the host named by ``invite`` and play.

    With an invite (and ``udp``) the joiner also punches a UDP path
    (:class:`~p2pkoikoi.transport.punch.JoinerUdp`): it checks the host's UDP
    candidates at once and, when nothing connected once its own candidates
    are gathered (``stun`` servers asked), shows the answer (an ``answer``
    note) and waits up to ``answer_wait`` seconds for the host to use it.

    ``min_turn_limit``: a host's turn limit under it is declined (the session says
    why); a program that accepts the rules without asking a person passes a floor.

    ``screen``: the invite came from a person (the command line), so its loopback
    and link-local addresses are warned about and only the first is dialed
    (:func:`~p2pkoikoi.transport.addresses.screen_invite`).

    Every address of the invite is tried, Happy Eyeballs style
    (:mod:`~p2pkoikoi.transport.dialer`): the first connection whose peer
    completes the authenticated handshake is the match's; when none does, one
    line names each address and why it failed.  With ``expected_rules`` the
    session accepts exactly those rules (or fails naming the differences);
    without, ``decide_rules`` is asked (default: accept, after a
    ``rules_proposed`` note).

    With a short code the hosts waiting on this network are found by multicast
    DNS (:func:`~p2pkoikoi.transport.discovery.find_host`): every host that
    announces the code's number is a candidate, and only the one that knows
    the code's words completes the handshake.  With ``dht`` the host is looked for
    on the DHT too (:func:`~p2pkoikoi.transport.dht_rendezvous.find_invite`), once
    the network has been silent for :data:`LAN_FIRST`: the rendezvous there gives
    the host's invite, used as if it had been pasted, and the answer, if one is
    shown, goes back the same way.  A given ``address`` is tried instead of
    looking (a code) or first (an invite).
    """
    async with contextlib.AsyncExitStack() as dht_stack:
        notify = notify or nop
        address_list: list[Candidate] = []
        found_by_dht = False  # an invite from the DHT is screened like one from a person
        if isinstance(invite, ShortCode) and address is None:
            found = await _find(invite, notify, dht, dht_stack)
            if isinstance(found, Found):
                found_by_dht = True
                invite = decode_invite(found.invite)
                notify = _answer_back(found, notify, await _nursery(dht_stack))
            else:
                address_list = found
        async with _open_join(
            invite,
            address=address,
            listed=address_list,
            identity=identity,
            name=name,
            expected_rules=expected_rules,
            decide_rules=decide_rules,
            timeouts=timeouts,
            record_path=record_path,
            notify=notify,
            known_peers=known_peers,
            stun=stun,
            udp=udp,
            answer_wait=answer_wait,
            screen=screen or found_by_dht,
            min_turn_limit=min_turn_limit,
        ) as link:
            yield link


async def _nursery(stack: contextlib.AsyncExitStack) -> trio.Nursery:
    nursery = await stack.enter_async_context(trio.open_nursery())
    stack.callback(nursery.cancel_scope.cancel)
    return nursery


def _answer_back(found: Found, notify: Notify, nursery: trio.Nursery) -> Notify:
    """A notify that also sends an ``answer`` note's text to the host through the DHT
    (the rendezvous's second round), put again every 5 s for a minute."""

    async def send(text: str) -> None:
        for _ in range(12):
            await found.send_answer(text)
            await trio.sleep(5)

    def wrapped(note: Note) -> None:
        if note.get("event") == "answer" and isinstance(note.get("answer"), str):
            nursery.start_soon(send, str(note["answer"]))
            note = {**note, "dht": True}
        notify(note)

    return wrapped


@asynccontextmanager
async def _open_join(
    invite: str | Invite | ShortCode,
    *,
    address: Address | None,
    listed: list[Candidate],
    identity: Ed25519PrivateKey,
    name: str,
    expected_rules: RuleSet | None,
    decide_rules: DecideRules | None,
    timeouts: Timeouts | None,
    record_path: Path | None,
    notify: Notify,
    known_peers: KnownPeers | None,
    stun: Sequence[tuple[str, int]],
    udp: bool,
    answer_wait: float,
    screen: bool,
    min_turn_limit: int,
) -> AsyncIterator[NetworkLink]:
    """:func:`open_join` once a code has been looked up (``listed``: its hosts here)."""
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
        if screen:  # loopback or link-local: this machine's own services
            listed, warnings = screen_invite(listed)
            for text in warnings:
                notify({"event": "warning", "text": text})
        candidates = dedupe(given + listed)

    def joiner_session(invite_secret: bytes | None, code: ShortCode | None) -> Session:
        """One joiner's session, as every path to the host makes it (TCP with the
        invite's secret or the code; a punched path with its answered secret)."""
        return Session(
            Role.JOINER,
            identity_key=identity,
            invite_secret=invite_secret,
            code=code,
            name=name,
            entropy=session_entropy(),
            expected_rules=expected_rules,
            min_turn_limit=min_turn_limit,
        )

    def session() -> Session:
        return joiner_session(secret, code)

    def udp_session(special: bytes) -> Callable[[], Session]:
        return lambda: joiner_session(special, None)

    punch: JoinerUdp | None = None
    if udp and inv is not None:
        try:
            punch = JoinerUdp(UdpEndpoint(open_socket(0, None)), inv, stun, notify)
        except OSError:
            punch = None
    try:
        async with contextlib.AsyncExitStack() as stack:
            if punch is not None:
                udp_nursery = await stack.enter_async_context(trio.open_nursery())
                stack.callback(punch.ep.close)
                stack.callback(udp_nursery.cancel_scope.cancel)
                await udp_nursery.start(punch.ep.run)
            async with _joining(
                candidates,
                session,
                punch=punch,
                udp_session=udp_session(punch.secret) if punch is not None else None,
                answer_wait=answer_wait,
                sidecar={
                    "role": "joiner",
                    **({"invite": resume_as} if resume_as else {}),
                    "address": str(Address(candidates[0].address, candidates[0].port)),
                    "addresses": [[c.address, c.port] for c in candidates],
                },
                identity=identity,
                decide_rules=decide_rules,
                timeouts=timeouts,
                record_path=record_path,
                notify=notify,
                known_peers=known_peers,
            ) as link:
                yield link
    except BaseExceptionGroup as group:  # the UDP side's nursery wraps the link's error
        errs = leaves(group)
        if len(errs) == 1:
            raise errs[0] from None
        raise


def _resume_addresses(side: dict[str, Any]) -> list[Candidate]:
    """Where a resumed joiner redials: the addresses the first connection was made
    with (a code join has no invite), else the invite's."""
    listed = side.get("addresses")
    if isinstance(listed, list) and listed:
        try:
            return [Candidate(str(h), int(p), "resume") for h, p in listed]
        except (TypeError, ValueError):
            raise ConfigError("the resume file's addresses are not [host, port] pairs") from None
    if isinstance(side.get("address"), str):
        one = decode_address(str(side["address"]))
        return [Candidate(one.host, one.port, "resume")]
    inv = decode_invite(str(side["invite"]))
    return [Candidate(a.host, a.port, "invite") for a in inv.addresses]


#: how long ``join CODE`` looks for the host on this network
DISCOVERY_WAIT: Final = 3.0
#: how long the network may stay silent before ``join CODE`` asks the DHT too
LAN_FIRST: Final = 1.0


async def _find(
    code: ShortCode, notify: Notify, dht: DhtConfig | None, stack: contextlib.AsyncExitStack
) -> list[Candidate] | Found:
    """The hosts of ``code`` on this network (multicast DNS), or, when none answers
    within :data:`LAN_FIRST` and the DHT finds one first, what the DHT rendezvous
    gave (its client stays open in ``stack``, for the answer).  The DHT is read at
    once; nothing is put there before the LAN has had its turn."""
    if dht is None:
        return await _discover(code, notify)
    client = await stack.enter_async_context(open_dht(dht))
    out: list[list[Candidate] | Found] = []
    lan_error: list[ConnectError] = []
    net_error: list[BaseException] = []
    lan_done = trio.Event()

    async def lan(cancel: trio.CancelScope) -> None:
        try:
            out.append(await _discover(code, notify))
            cancel.cancel()
        except ConnectError as exc:
            lan_error.append(exc)
        finally:
            lan_done.set()

    async def lan_first() -> None:
        with trio.move_on_after(LAN_FIRST):
            await lan_done.wait()
        if out:  # the LAN found the host (and cancels us): put nothing on the DHT
            await trio.sleep_forever()

    async def net(cancel: trio.CancelScope) -> None:
        try:
            out.append(await find_invite(client, code, notify, ready=lan_first))
            cancel.cancel()
        except (ConnectError, ProtocolError) as exc:
            net_error.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lan, nursery.cancel_scope)
        nursery.start_soon(net, nursery.cancel_scope)
    if out:
        return out[0]
    raise (net_error or lan_error)[0]


async def _discover(code: ShortCode, notify: Notify) -> list[Candidate]:
    """The addresses of every host on this network announcing ``code``'s number."""
    notify({"event": "searching", "text": f"looking for the host of code {code.number} here"})
    found = await find_host(code.number, DISCOVERY_WAIT)
    if not found:
        raise ConnectError(
            f"no host on this network is waiting with code {code.number} (looked for "
            f"{DISCOVERY_WAIT:g}s): check the number, or ask the host for the koi2- invite "
            "(a code finds hosts on the same network only)"
        )
    if len(found) > MAX_MDNS_HOSTS:  # anybody here may announce: dial only a few
        notify(
            {
                "event": "warning",
                "text": f"{len(found)} hosts here announce code {code.number}: trying"
                f" {MAX_MDNS_HOSTS} of them (one may be flooding the network)",
            }
        )
        found = found[:MAX_MDNS_HOSTS]
    out = [Candidate(a, w.port, "mdns") for w in found for a in w.addresses[:MAX_ADDRESSES]]
    # a host never announces loopback (bound to it, it does not announce at all): one
    # that does points us at our own machine's services
    looped = [c for c in out if local_kind(c.address) == "loopback"]
    if looped:
        notify(
            {
                "event": "warning",
                "text": f"a host here announces {looped[0]}, an address on this computer"
                " itself: not dialed",
            }
        )
        out = [c for c in out if c not in looped]
    if not out:
        raise ConnectError(
            f"the hosts here announcing code {code.number} give no address to dial: ask the"
            " host for the koi2- invite"
        )
    notify({"event": "found", "hosts": [{"name": w.name, "rules": w.rules} for w in found]})
    return dedupe(out)[:MAX_MDNS_ADDRESSES]


@asynccontextmanager
async def _joining(
    candidates: list[Candidate],
    make_session: Callable[[], Session],
    *,
    punch: JoinerUdp | None = None,
    udp_session: Callable[[], Session] | None = None,
    answer_wait: float = ANSWER_WAIT,
    sidecar: dict[str, Any],
    identity: Ed25519PrivateKey,
    decide_rules: DecideRules | None,
    timeouts: Timeouts | None,
    record_path: Path | None,
    notify: Notify,
    known_peers: KnownPeers | None,
) -> AsyncIterator[NetworkLink]:
    """Race ``candidates`` to an authenticated host, then play over the winner."""
    t = timeouts or Timeouts()
    first = candidates[0]
    notify(
        {
            "event": "connecting",
            "host": first.address,
            "port": first.port,
            "addresses": [str(c) for c in candidates],
        }
    )
    if punch is None or udp_session is None:
        won = await dial_authenticated(
            candidates, make_session, connect=t.connect, handshake=t.handshake, stagger=t.stagger
        )
    else:
        won = await _tcp_or_udp(candidates, make_session, punch, udp_session, t, answer_wait)
    # redialing after a drop: the address that worked first, then the others
    order = [won.candidate] + [c for c in candidates if c != won.candidate]

    async def dial() -> trio.abc.Stream:
        if won.candidate.source == "udp" and punch is not None:  # re-punch the known path
            return await punch.repunch((won.candidate.address, won.candidate.port), t.connect)
        return await dial_any(order, connect=t.connect)

    rc = Reconnect(identity=identity, dial=dial, sidecar=sidecar)
    async with open_link(
        won.stream,
        won.session,
        timeouts=t,
        record_path=record_path,
        notify=notify,
        decide_rules=decide_rules,
        known_peers=known_peers,
        reconnect=rc,
        early=won.pending,
    ) as link:
        yield link


def _all_refused(exc: AllAttemptsFailed[Any]) -> bool:
    return bool(exc.failures) and all("refused" in why for _, why in exc.failures)


async def _tcp_or_udp(
    candidates: list[Candidate],
    make_session: Callable[[], Session],
    punch: JoinerUdp,
    udp_session: Callable[[], Session],
    t: Timeouts,
    answer_wait: float,
) -> Authenticated:
    """The TCP race and the punched UDP paths at once: the first authenticated wins.

    A TCP race that fails leaves the UDP side running (with the answer shown),
    unless every address refused and the invite has no reflexive entry: then
    nobody is there, and the TCP line is the answer, as before."""
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


@asynccontextmanager
async def open_resume(
    record_path: Path,
    record: Record,
    *,
    identity: Ed25519PrivateKey,
    timeouts: Timeouts | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
) -> AsyncIterator[NetworkLink]:
    """Continue the match of ``record`` after a crash (``p2pkoikoi resume``).

    ``record`` is :func:`~p2pkoikoi.transport.record_files.read_record` of
    ``record_path``: after a crash usually a journal, maybe cut short; the link
    starts a fresh journal there with everything ``record`` holds.

    The resume file beside the record says who we were: a host listens on the
    same port again, a joiner dials the host; the opponent (in its own
    reconnect loop) must come back within ``timeouts.reconnect_window``.
    """
    notify = notify or nop
    side = read_sidecar(record_path)
    role = Role(str(side["role"]))
    order = _resume_addresses(side)
    try:
        resume_secret = bytes.fromhex(str(side["resume_secret"]))
    except ValueError:
        raise ConfigError(f"{sidecar_path(record_path)}: resume_secret is not hex") from None
    # (read_sidecar checked it: 64 hex digits)
    hidden = bytes.fromhex(side["hidden_secret"]) if "hidden_secret" in side else None
    session = Session.resume(
        record,
        role,
        identity_key=identity,
        resume_secret=resume_secret,
        entropy=session_entropy(),
        hidden_secret=hidden,
    )
    rc = Reconnect(
        identity=identity, secret=resume_secret, sidecar=dict(side), hidden_secret=hidden
    )
    rc.sidecar = {k: v for k, v in side.items() if k not in ("format", "version")}
    kw: dict[str, Any] = {
        "timeouts": timeouts,
        "record_path": record_path,
        "notify": notify,
        "known_peers": known_peers,
        "reconnect": rc,
    }
    first = order[0]
    if role is Role.JOINER:

        async def dial() -> trio.abc.Stream:
            return await dial_any(order, connect=(timeouts or Timeouts()).connect)

        rc.dial = dial
        notify({"event": "connecting", "host": first.address, "port": first.port})
        async with open_link(None, session, **kw) as link:
            yield link
        return
    bind = side.get("bind")
    listeners = await listen(
        int(side.get("port", first.port)), bind if isinstance(bind, str) else None
    )
    actual = int(listeners[0].socket.getsockname()[1])
    notify({"event": "listening", "invite": side["invite"], "port": actual, "resume": True})
    async with hosting(listeners, rc), open_link(None, session, **kw) as link:
        yield link
