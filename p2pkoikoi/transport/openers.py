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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import KoiKoiError, RuleSet
from p2pkoikoi.session import (
    Invite,
    Role,
    RulesMismatchError,
    Session,
    VersionMismatchError,
    decode_invite,
    encode_invite,
)
from p2pkoikoi.session.invite import SECRET_BYTES
from p2pkoikoi.session.record import Record
from p2pkoikoi.transport.addresses import DEFAULT_PORT, invite_address
from p2pkoikoi.transport.errors import ConnectError, PeerTimeoutError, os_reason
from p2pkoikoi.transport.identity import KnownPeers
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.listener import hosting, listen, peer_address
from p2pkoikoi.transport.match_link import DecideRules, NetworkLink, open_link
from p2pkoikoi.transport.notes import Notify, nop
from p2pkoikoi.transport.reconnect import Reconnect, close_queued, session_entropy
from p2pkoikoi.transport.record_files import read_sidecar


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
) -> AsyncIterator[NetworkLink]:
    """Listen, announce the invite (a ``listening`` note), accept one player, play.

    ``port=0`` picks a free port; the note says which.  The host listens for
    the whole match: a connection that fails before the peer proved it holds
    the invite (garbage, a wrong secret) is dropped with a ``warning`` note
    and the host waits for the next; once a match is on, other connections
    get a one-line ``refuse``; after a drop the same opponent may resume.
    """
    notify = notify or nop
    listeners = await listen(port, bind)
    actual = int(listeners[0].socket.getsockname()[1])
    secret = os.urandom(SECRET_BYTES)
    try:
        invite = encode_invite(invite_address(bind, advertise), actual, secret)
    except KoiKoiError:
        for ln in listeners:
            await ln.aclose()
        raise
    notify({"event": "listening", "invite": invite, "port": actual})
    sidecar = {"role": "host", "invite": invite, "port": actual, "bind": bind}
    rc = Reconnect(identity=identity, secret=secret, sidecar=sidecar, wanted=True)
    limit = math.inf if accept_timeout is None else accept_timeout
    async with hosting(listeners, rc) as incoming, contextlib.AsyncExitStack() as stack:
        link: NetworkLink | None = None
        deadline = trio.current_time() + limit
        while link is None:
            got: trio.abc.Stream | None = None
            with trio.move_on_at(deadline):
                got = await incoming.receive()
            if got is None:
                break
            stream = got
            address, peer_port = peer_address(stream)
            notify({"event": "connected", "address": address, "port": peer_port})
            session = Session(
                Role.HOST,
                identity_key=identity,
                invite_secret=secret,
                name=name,
                entropy=session_entropy(),
                rules=rules,
            )
            cm = open_link(
                stream,
                session,
                timeouts=timeouts,
                record_path=record_path,
                notify=notify,
                known_peers=known_peers,
                reconnect=rc,
            )
            try:
                link = await stack.enter_async_context(cm)
            except KoiKoiError as exc:
                if session.peer_key is not None or isinstance(
                    exc, VersionMismatchError | RulesMismatchError
                ):
                    raise
                # not our friend (no invite secret, garbage, silence): keep waiting
                notify(
                    {
                        "event": "warning",
                        "text": f"dropped a connection from {address}: {exc}",
                    }
                )
        if link is None:
            raise PeerTimeoutError(f"nobody joined within {limit:g}s")
        rc.wanted = False
        close_queued(incoming)
        yield link


@asynccontextmanager
async def open_join(
    invite: str | Invite,
    *,
    identity: Ed25519PrivateKey,
    name: str,
    expected_rules: RuleSet | None = None,
    decide_rules: DecideRules | None = None,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    notify: Notify | None = None,
    known_peers: KnownPeers | None = None,
) -> AsyncIterator[NetworkLink]:
    """Connect to the host named by ``invite`` and play.

    With ``expected_rules`` the session accepts exactly those rules (or fails
    naming the differences); without, ``decide_rules`` is asked (default:
    accept, after a ``rules_proposed`` note).
    """
    inv = decode_invite(invite) if isinstance(invite, str) else invite
    notify = notify or nop
    t = timeouts or Timeouts()
    where = f"[{inv.host}]" if ":" in inv.host else inv.host
    notify({"event": "connecting", "host": inv.host, "port": inv.port})

    async def dial() -> trio.abc.Stream:
        return await trio.open_tcp_stream(inv.host, inv.port)

    sidecar = {"role": "joiner", "invite": encode_invite(inv.host, inv.port, inv.secret)}
    rc = Reconnect(identity=identity, secret=inv.secret, dial=dial, sidecar=sidecar)
    try:
        with trio.fail_after(t.connect):
            stream = await dial()
    except trio.TooSlowError:
        raise ConnectError(
            f"cannot connect to {where}:{inv.port}: no answer within {t.connect:g}s "
            "(is the host listening? a firewall?)"
        ) from None
    except OSError as exc:
        raise ConnectError(f"cannot connect to {where}:{inv.port}: {os_reason(exc)}") from None
    session = Session(
        Role.JOINER,
        identity_key=identity,
        invite_secret=inv.secret,
        name=name,
        entropy=session_entropy(),
        expected_rules=expected_rules,
    )
    async with open_link(
        stream,
        session,
        timeouts=t,
        record_path=record_path,
        notify=notify,
        decide_rules=decide_rules,
        known_peers=known_peers,
        reconnect=rc,
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
    inv = decode_invite(str(side["invite"]))
    role = Role(str(side["role"]))
    session = Session.resume(
        record, role, identity_key=identity, invite_secret=inv.secret, entropy=session_entropy()
    )
    rc = Reconnect(identity=identity, secret=inv.secret, sidecar=dict(side))
    rc.sidecar = {k: v for k, v in side.items() if k not in ("format", "version")}
    kw: dict[str, Any] = {
        "timeouts": timeouts,
        "record_path": record_path,
        "notify": notify,
        "known_peers": known_peers,
        "reconnect": rc,
    }
    if role is Role.JOINER:

        async def dial() -> trio.abc.Stream:
            return await trio.open_tcp_stream(inv.host, inv.port)

        rc.dial = dial
        notify({"event": "connecting", "host": inv.host, "port": inv.port})
        async with open_link(None, session, **kw) as link:
            yield link
        return
    bind = side.get("bind")
    listeners = await listen(
        int(side.get("port", inv.port)), bind if isinstance(bind, str) else None
    )
    actual = int(listeners[0].socket.getsockname()[1])
    notify({"event": "listening", "invite": side["invite"], "port": actual, "resume": True})
    async with hosting(listeners, rc), open_link(None, session, **kw) as link:
        yield link
