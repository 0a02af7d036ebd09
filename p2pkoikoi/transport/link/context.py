"""What every part of the link is handed: :class:`LinkContext`, made once by the link.

The link (:class:`~p2pkoikoi.transport.link.network.NetworkLink`) is composed of
parts with one lifetime each (the supervisor, the connection, the ending, the
heartbeat, the turn clock, the handshake, the key question, local moves, the
rematch, the event router).  Most of them read the same few things -- our
seat, the time bounds, the pulse they wait on, the current session, match and
connection -- and report through the same few callables (write, flush, save
the record, notify, drop the connection, fail).  :class:`LinkContext` is those,
made once, as :class:`~p2pkoikoi.session.part.PartContext` is for the session's
parts; a part's constructor then names only what is its own (a sibling part,
or a callback only it uses).  No part is handed the link.

The context holds callables, not the parts that answer them, so that this
module imports no part (the parts import it) and each part keeps owning its
state: the current session and connection are the supervisor's, the error is
the ending's, the match's state is the link's :class:`MatchRun`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import Session
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.match_run import MatchRun
from p2pkoikoi.transport.link.notes import Notify
from p2pkoikoi.transport.link.pulse import Pulse


class Wire(Protocol):
    """What the parts read of the current connection
    (:class:`~p2pkoikoi.transport.link.connection.Connection`)."""

    @property
    def stream(self) -> trio.abc.Stream | None: ...
    @property
    def lost(self) -> trio.Event: ...  # the link gave this connection up
    @property
    def writer_done(self) -> trio.Event: ...
    @property
    def last_tx(self) -> float: ...
    @property
    def blocked(self) -> bool: ...  # bytes wait for the writer task
    def close(self) -> None: ...


@dataclass(frozen=True)
class LinkContext:
    """The link's own things every part reads and reports through (none is the link)."""

    seat: int  # our seat (0: the host's)
    timeouts: Timeouts
    pulse: Pulse  # "something changed" and "stopped"
    notify: Notify  # a note for the table or the headless stream
    session: Callable[[], Session]  # the current session (a reconnect replaces it)
    run: Callable[[], MatchRun]  # the current match's state (a rematch makes a new one)
    connection: Callable[[], Wire]  # the current connection
    nursery: Callable[[], trio.Nursery | None]  # the link's tasks
    online: Callable[[], bool]  # a connection is up (not reconnecting)
    names: Callable[[], tuple[str, str]]  # both players' names, by seat
    error: Callable[[], KoiKoiError | None]  # why the link failed, if it did
    write: Callable[[bytes], None]  # to the current connection, in order
    flush: Callable[[], None]  # send what the session queued
    save_record: Callable[[], None]  # the record up to the session (a failure ends the link)
    save_lazy: Callable[[], None]  # the same, but the other player's moves may wait
    process: Callable[[], None]  # handle what the session received
    drop: Callable[[KoiKoiError], None]  # the connection broke: reconnect, or stop
    resumable: Callable[[], bool]  # a lost connection would be replaced
    fail: Callable[[KoiKoiError], None]  # stop for good
