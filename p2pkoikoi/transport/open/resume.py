"""Resuming a crashed match: :func:`open_resume`, an ``async with`` that yields the link.

The resume file beside the record (:func:`~p2pkoikoi.transport.store.records.read_sidecar`)
says who we were: a host listens on the same port again, a joiner redials the
addresses its first connection was made with.  The link starts with no stream,
by reconnecting (:func:`~p2pkoikoi.transport.link.lifetime.open_link` with
``stream=None``), and the opponent must come back within ``reconnect_window``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from p2pkoikoi.session import (
    Role,
    Session,
    decode_invite,
)
from p2pkoikoi.session.codes.invite import decode_address
from p2pkoikoi.session.records.record import Record
from p2pkoikoi.transport.errors import ConfigError
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Notify, nop
from p2pkoikoi.transport.link.reconnect import Reconnect, session_entropy
from p2pkoikoi.transport.open.addresses import (
    Candidate,
)
from p2pkoikoi.transport.open.dialer import (
    dial_any,
)
from p2pkoikoi.transport.open.listener import hosting, listen
from p2pkoikoi.transport.player import Player
from p2pkoikoi.transport.store.records import read_sidecar, sidecar_path


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


@asynccontextmanager
async def open_resume(
    record: Record, player: Player, *, notify: Notify | None = None
) -> AsyncIterator[NetworkLink]:
    """Continue the match of ``record`` after a crash (``p2pkoikoi resume``).

    ``record`` is :func:`~p2pkoikoi.transport.store.records.read_record` of
    ``player.record_path`` (which must be given): after a crash usually a
    journal, maybe cut short; the link starts a fresh journal there with
    everything ``record`` holds.

    The resume file beside the record says who we were: a host listens on the
    same port again, a joiner dials the host; the opponent (in its own
    reconnect loop) must come back within ``timeouts.reconnect_window``.
    """
    notify = notify or nop
    record_path, identity = player.record_path, player.identity
    if record_path is None:
        raise ConfigError("resuming needs the record file of the match")
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
    first = order[0]
    if role is Role.JOINER:

        async def dial() -> trio.abc.Stream:
            return await dial_any(order, connect=player.timeouts.connect)

        rc.dial = dial
        notify({"event": "connecting", "host": first.address, "port": first.port})
        async with open_link(None, session, player, notify=notify, reconnect=rc) as link:
            yield link
        return
    bind = side.get("bind")
    listeners = await listen(
        int(side.get("port", first.port)), bind if isinstance(bind, str) else None
    )
    actual = int(listeners[0].socket.getsockname()[1])
    notify({"event": "listening", "invite": side["invite"], "port": actual, "resume": True})
    async with (
        hosting(listeners, rc),
        open_link(None, session, player, notify=notify, reconnect=rc) as link,
    ):
        yield link
