"""What every part of a session is handed, and the base that keeps it.

A :class:`~p2pkoikoi.session.session.Session` is composed of parts (the
handshake, the commit-reveal, play, the hidden deal's card moves, resuming,
rematch, the side channel), each owning one lifetime's state.  They all report
through the same few things the session hands them: who we are, the
connection's phase, the sealed outbox, the message queue and the event queue.
:class:`PartContext` is those five, made once by the session; :class:`Part` keeps
them under the names the parts use, so a part's constructor says only what is
its own.
"""

from __future__ import annotations

from collections.abc import Callable

import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine.values import value
from p2pkoikoi.session.events import Event
from p2pkoikoi.session.frames import Outbox
from p2pkoikoi.session.identity import Identity
from p2pkoikoi.session.phases import SessionPhase


@value
class PartContext:
    """The session's own things every part reports through (none is the session)."""

    me: Identity
    phase: SessionPhase
    outbox: Outbox
    queue: Callable[[wire.Message], None]  # send a message (sealed by the outbox)
    emit: Callable[[Event], None]  # report an event to the session's caller


class Part:
    """A session part: what it was handed, under the names the parts use."""

    def __init__(self, ctx: PartContext) -> None:
        self._ctx = ctx
        self._me = ctx.me
        self._phase = ctx.phase
        self._outbox = ctx.outbox
        self._queue = ctx.queue
        self._emit = ctx.emit
