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
import math
import os
import secrets
from collections.abc import AsyncIterator, Callable
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
from p2pkoikoi.session.invite import SECRET_BYTES, Address, decode_address
from p2pkoikoi.session.record import Record
from p2pkoikoi.session.wire import DEFAULT_TURN_LIMIT
from p2pkoikoi.transport.addresses import DEFAULT_PORT, Candidate, dedupe, is_local_only
from p2pkoikoi.transport.dht import DhtClient, DhtConfig, open_dht
from p2pkoikoi.transport.dht_rendezvous import choose_number, find_invite, host_rendezvous
from p2pkoikoi.transport.dialer import dial_any, dial_authenticated
from p2pkoikoi.transport.discovery import announce, find_host
from p2pkoikoi.transport.errors import ConfigError, ConnectError, PeerTimeoutError
from p2pkoikoi.transport.gate import Admitted, CodeGuard, Gate, GateLimits
from p2pkoikoi.transport.identity import KnownPeers
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.listener import hosting, listen
from p2pkoikoi.transport.match_link import DecideRules, NetworkLink, open_link
from p2pkoikoi.transport.notes import Note, Notify, nop
from p2pkoikoi.transport.portmap import open_reachability
from p2pkoikoi.transport.reconnect import Reconnect, close_queued, session_entropy
from p2pkoikoi.transport.record_files import read_sidecar, sidecar_path


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
    dht: DhtConfig | None = None,
) -> AsyncIterator[NetworkLink]:
    """Listen, announce the invite and code (a ``listening`` note), admit one player, play.

    With ``dht`` (and a code) the code also works across the internet: a fresh
    code's number is one no host announces on the DHT now, and while the host
    waits it answers joiners there (:mod:`~p2pkoikoi.transport.dht_rendezvous`,
    protocol/dht.md) with its invite, sealed under the code's PAKE key.

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
        client = await net.enter_async_context(open_dht(dht))
    if code is True:
        short: ShortCode | None = new_code(await choose_number(client) if client else None)
    else:
        short = code or None
    ad = None
    if short is not None and announce:
        ad = Announcement(name, closest_preset(rules)[0], short.number)
    try:
        async with (
            net,
            open_reachability(
                actual, bind=bind, advertise=advertise, port_mapping=port_mapping
            ) as (reach, candidates, waited),
            _hosting_match(
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
                dht=client,
                reachability={
                    **reach.to_event(),
                    "waited": round(waited, 3),
                    # no NAT on IPv6: reachable from the internet there unless a firewall says no
                    "ipv6": [str(c) for c in candidates if c.source == "ipv6"],
                },
            ) as link,
        ):
            yield link
    finally:
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
    dht: DhtClient | None = None,
) -> AsyncIterator[NetworkLink]:
    """:func:`open_host` once the candidates are known: the invite, then one player."""
    secret = os.urandom(SECRET_BYTES)
    actual = candidates[0].port
    invite = encode_invite([(c.address, c.port) for c in candidates], secret)
    note: dict[str, Any] = {
        "event": "listening",
        "invite": invite,
        "port": actual,
        "addresses": [str(c) for c in candidates],
    }
    if short is not None:
        note["code"] = str(short)
        note["dht"] = dht is not None  # the code works across the internet too
    notify(note)
    notify(reachability)
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
    gate = Gate(make_session, notify, limits=gate_limits, guard=CodeGuard(short))
    lan = contextlib.AsyncExitStack()
    local = [c.address for c in candidates if c.source in ("lan", "ipv6", "bind")]
    local = [a for a in local if not is_local_only(a)]
    if announce_as is not None and local:  # bound to loopback: nobody else could come
        ad = announce_as
        await lan.enter_async_context(
            announce(name=ad.name, rules=ad.rules, number=ad.number, port=actual, addresses=local)
        )
    async with lan, hosting(listeners, rc) as incoming:
        admitted: Admitted | None = None
        async with trio.open_nursery() as waiting:
            if dht is not None and short is not None:
                waiting.start_soon(host_rendezvous, dht, short, invite, gate.guard, notify)
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
    dht: DhtConfig | None = None,
) -> AsyncIterator[NetworkLink]:
    """Connect to the host named by ``invite`` and play.

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
    the host's invite, used as if it had been pasted.  A given ``address`` is
    tried instead of looking (a code) or first (an invite).
    """
    notify = notify or nop
    given = [Candidate(address.host, address.port, "given")] if address is not None else []
    if isinstance(invite, ShortCode) and not given:
        found = await _find(invite, notify, dht)
        if isinstance(found, str):
            invite = decode_invite(found)
        else:
            given = found
    if isinstance(invite, ShortCode):
        code = invite
        candidates = given
        secret: bytes | None = None
        resume_as = ""  # no invite: a resume redials the addresses the sidecar lists
    else:
        inv = decode_invite(invite) if isinstance(invite, str) else invite
        code, secret, resume_as = None, inv.secret, str(inv)
        candidates = dedupe(given + [Candidate(a.host, a.port, "invite") for a in inv.addresses])

    def session() -> Session:
        return Session(
            Role.JOINER,
            identity_key=identity,
            invite_secret=secret,
            code=code,
            name=name,
            entropy=session_entropy(),
            expected_rules=expected_rules,
        )

    async with _joining(
        candidates,
        session,
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


async def _find(code: ShortCode, notify: Notify, dht: DhtConfig | None) -> list[Candidate] | str:
    """The hosts of ``code`` on this network (multicast DNS), or, when none answers
    within :data:`LAN_FIRST` and the DHT finds one first, that host's invite."""
    if dht is None:
        return await _discover(code, notify)
    out: list[list[Candidate] | str] = []
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

    async def net(cancel: trio.CancelScope) -> None:
        with trio.move_on_after(LAN_FIRST):
            await lan_done.wait()
        if out:
            return
        try:
            async with open_dht(dht) as client:
                out.append((await find_invite(client, code, notify)).invite)
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
    out = [Candidate(a, w.port, "mdns") for w in found for a in w.addresses]
    notify({"event": "found", "hosts": [{"name": w.name, "rules": w.rules} for w in found]})
    return dedupe(out)


@asynccontextmanager
async def _joining(
    candidates: list[Candidate],
    make_session: Callable[[], Session],
    *,
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
    won = await dial_authenticated(
        candidates, make_session, connect=t.connect, handshake=t.handshake, stagger=t.stagger
    )
    # redialing after a drop: the address that worked first, then the others
    order = [won.candidate] + [c for c in candidates if c != won.candidate]

    async def dial() -> trio.abc.Stream:
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
