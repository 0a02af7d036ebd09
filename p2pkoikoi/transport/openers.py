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

import math
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import KoiKoiError, RuleSet
from p2pkoikoi.session import (
    Invite,
    LocalProtocolError,
    Role,
    Session,
    decode_invite,
    encode_invite,
)
from p2pkoikoi.session.code import (
    CODE_NUMBER_MAX,
    CODE_SECRET_BYTES,
    ShortCode,
    decode_code,
    encode_code,
)
from p2pkoikoi.session.invite import SECRET_BYTES, Address, decode_address
from p2pkoikoi.session.record import Record
from p2pkoikoi.transport.addresses import DEFAULT_PORT, invite_address
from p2pkoikoi.transport.errors import ConfigError, ConnectError, PeerTimeoutError, os_reason
from p2pkoikoi.transport.gate import Admitted, CodeGuard, Gate, GateLimits
from p2pkoikoi.transport.identity import KnownPeers
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.listener import hosting, listen
from p2pkoikoi.transport.match_link import DecideRules, NetworkLink, open_link
from p2pkoikoi.transport.notes import Notify, nop
from p2pkoikoi.transport.reconnect import Reconnect, close_queued, session_entropy
from p2pkoikoi.transport.record_files import read_sidecar, sidecar_path


def new_code(number: int | None = None) -> ShortCode:
    """A fresh short code: a random number 1..99 (unless given) and two random words."""
    n = number if number is not None else 1 + secrets.randbelow(CODE_NUMBER_MAX)
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
) -> AsyncIterator[NetworkLink]:
    """Listen, announce the invite and code (a ``listening`` note), admit one player, play.

    ``port=0`` picks a free port; the note says which.  ``code``: True makes a
    fresh short code (:func:`new_code`), a :class:`ShortCode` uses that one,
    False/None none.  The host listens for the whole match.  Before a joiner
    has proved the code or invite and its identity, connections run
    concurrently in the :class:`~p2pkoikoi.transport.gate.Gate` and any failure
    only drops that connection (a ``warning`` note: hosting goes on); wrong
    guesses of the code are counted and end it (a ``code_expired`` note).  Once
    a match is on, other connections get a one-line ``refuse``; after a drop
    the same opponent may resume.
    """
    notify = notify or nop
    listeners = await listen(port, bind)
    actual = int(listeners[0].socket.getsockname()[1])
    secret = os.urandom(SECRET_BYTES)
    short = new_code() if code is True else (code or None)
    try:
        invite = encode_invite([(invite_address(bind, advertise), actual)], secret)
    except KoiKoiError:
        for ln in listeners:
            await ln.aclose()
        raise
    note: dict[str, Any] = {"event": "listening", "invite": invite, "port": actual}
    if short is not None:
        note["code"] = str(short)
    notify(note)
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
        )

    if gate_limits is None:  # a stranger gets at most the handshake step's time
        gate_limits = GateLimits(
            deadline=min(GateLimits.deadline, (timeouts or Timeouts()).handshake)
        )
    gate = Gate(make_session, notify, limits=gate_limits, guard=CodeGuard(short))
    async with hosting(listeners, rc) as incoming:
        admitted: Admitted | None = None
        with trio.move_on_after(limit):
            admitted = await gate.admit(incoming)
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
) -> AsyncIterator[NetworkLink]:
    """Connect to the host named by ``invite`` and play.

    ``invite`` may be a short code (:class:`ShortCode`, the SPAKE2 password)
    with the host's ``address`` (found by LAN discovery: it is not in the code).
    With ``expected_rules`` the session accepts exactly those rules (or fails
    naming the differences); without, ``decide_rules`` is asked (default:
    accept, after a ``rules_proposed`` note).
    """
    code = invite if isinstance(invite, ShortCode) else None
    inv = None if code is not None else decode_invite(invite) if isinstance(invite, str) else invite
    assert inv is None or isinstance(inv, Invite)
    if inv is not None:
        first = address or inv.addresses[0]  # dialing every address at once: branch net9
    elif address is not None:
        first = address
    else:
        raise LocalProtocolError("joining with a code needs the host's address")
    notify = notify or nop
    t = timeouts or Timeouts()
    where = first.display
    notify({"event": "connecting", "host": first.host, "port": first.port})

    async def dial() -> trio.abc.Stream:
        return await trio.open_tcp_stream(first.host, first.port)

    sidecar = {"role": "joiner", "address": str(first)}
    rc = Reconnect(identity=identity, dial=dial, sidecar=sidecar)
    try:
        with trio.fail_after(t.connect):
            stream = await dial()
    except trio.TooSlowError:
        raise ConnectError(
            f"cannot connect to {where}: no answer within {t.connect:g}s "
            "(is the host listening? a firewall?)"
        ) from None
    except OSError as exc:
        raise ConnectError(f"cannot connect to {where}: {os_reason(exc)}") from None
    session = Session(
        Role.JOINER,
        identity_key=identity,
        invite_secret=inv.secret if inv is not None else None,
        code=code,
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
    role = Role(str(side["role"]))
    if isinstance(side.get("address"), str):
        first = decode_address(str(side["address"]))
    else:
        first = decode_invite(str(side["invite"])).addresses[0]
    try:
        resume_secret = bytes.fromhex(str(side["resume_secret"]))
    except ValueError:
        raise ConfigError(f"{sidecar_path(record_path)}: resume_secret is not hex") from None
    session = Session.resume(
        record, role, identity_key=identity, resume_secret=resume_secret, entropy=session_entropy()
    )
    rc = Reconnect(identity=identity, secret=resume_secret, sidecar=dict(side))
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
            return await trio.open_tcp_stream(first.host, first.port)

        rc.dial = dial
        notify({"event": "connecting", "host": first.host, "port": first.port})
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
