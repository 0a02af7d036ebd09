"""Connections come and go, the match stays: a link's connections, one after another.

Theory of operation
-------------------
:meth:`Supervisor.run` is the link's supervisor task.  It runs one
:class:`~p2pkoikoi.transport.link.connection.Connection` (writer, reader and
heartbeat in their own nursery) until the link marks it lost
(:meth:`Supervisor.lose`, when the link drops it: a broken stream, or a
peer silent past ``silence_fail`` during play).  With a :class:`Reconnect` it then gets a new
stream with a resumed session from :mod:`p2pkoikoi.transport.link.reconnect` (the
joiner redials, the host re-accepts) and runs that, or fails the match when
``reconnect_window`` ends.  Local moves wait meanwhile (:attr:`Supervisor.online`
is False).  ``p2pkoikoi resume`` starts a link with no stream at all: its first
connection is a resume.  The secrets a resume needs are kept beside the
record (:meth:`Supervisor.write_sidecar`).

The supervisor owns what changes from one connection to the next: the
current :class:`Connection` and :class:`Session` (a resume replaces both),
whether we are online, why the last connection was lost, how many reconnects
there were, and the nursery of the current connection's tasks.  It runs the
link's :class:`~p2pkoikoi.transport.link.heartbeat.Heartbeat` per connection and
tells the link what happened through :class:`LinkContext`.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import ResumeError, Session
from p2pkoikoi.transport.errors import PeerSilentError
from p2pkoikoi.transport.link.connection import Connection, close_gracefully
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.link.heartbeat import Heartbeat
from p2pkoikoi.transport.link.notes import Note
from p2pkoikoi.transport.link.reconnect import Reconnect, reaccept, redial


class Supervisor:
    """A link's connections and reconnects (``reconnect=None``: one connection only)."""

    def __init__(
        self,
        stream: trio.abc.Stream | None,
        session: Session,
        reconnect: Reconnect | None,
        ctx: LinkContext,
        *,
        heartbeat: Heartbeat,
        resumed: Callable[[], None],
        announce: Callable[[Note], None],
        linger: Callable[[], float],
    ) -> None:
        self.reconnect = reconnect
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._heartbeat = heartbeat
        self._ctx = ctx
        self._resumed = resumed  # a new connection resumed the match
        self._announce = announce  # a note, and its text on the status line
        self._linger = linger  # how long a connection that ends waits for the peer's end
        self.session = session
        self.conn = Connection(stream, session, ctx)  # the current stream
        self.online = True  # a connection is up (false while reconnecting)
        self.lost_error: KoiKoiError | None = None
        self.reconnects = 0
        self.conn_nursery: trio.Nursery | None = None  # the current connection's tasks

    def lose(self, exc: KoiKoiError) -> None:
        """The link gives the current connection up, to replace it (see :meth:`run`)."""
        self.lost_error = exc
        self.online = False
        self.conn.lost.set()

    def write_sidecar(self) -> None:
        """The secrets ``p2pkoikoi resume`` needs, beside the record, private (0600)."""
        rc = self.reconnect
        if rc is None or rc.sidecar is None:
            return
        s = self.session
        if s.is_hidden:  # the deal secret: needed to resume, never in the record
            rc.hidden_secret = s.hidden_secret
            rc.sidecar["hidden_secret"] = s.hidden_secret.hex()
        try:
            self._ctx.run().records.write_sidecar(rc.sidecar)
        except OSError as exc:
            self._ctx.notify({"event": "warning", "text": f"cannot write the resume file: {exc}"})

    def started(self) -> None:
        """The match started: keep its resume secret for a reconnect, and on disk."""
        s = self.session
        rc = self.reconnect
        if rc is not None and s.resume_secret is not None:
            rc.secret = s.resume_secret
            if rc.sidecar is not None:
                rc.sidecar["resume_secret"] = rc.secret.hex()
        self.write_sidecar()

    async def run(self, stream: trio.abc.Stream | None) -> None:
        """One connection after another until the match ends or cannot resume."""
        if stream is None:  # resuming after a crash: the first connection is a resume
            stream = await self._reconnect_loop(None)
        while stream is not None:
            await self._run_connection(stream)
            if self._pulse.is_stopped or not self.conn.lost.is_set():
                return
            stream = await self._reconnect_loop(self.lost_error)

    async def _run_connection(self, stream: trio.abc.Stream) -> None:
        """Reader, writer and heartbeat of one connection; returns when it is lost."""
        self.conn = conn = Connection(stream, self.session, self._ctx)
        self._heartbeat.last_rx = conn.last_tx
        try:
            async with trio.open_nursery() as nursery:
                self.conn_nursery = nursery
                nursery.start_soon(conn.writer)
                self._ctx.flush()  # our hello, through the writer like everything else
                if self.reconnects:
                    self.online = True
                    self._resumed()
                nursery.start_soon(conn.reader)
                nursery.start_soon(self._heartbeat.run)
                await conn.lost.wait()
                nursery.cancel_scope.cancel()
        finally:
            if conn.lost.is_set():  # broken or given up: nothing more to deliver
                await trio.aclose_forcefully(stream)
            else:  # the link ended: what we sent last must still arrive
                await close_gracefully(stream, self._linger())

    def _note_reconnecting(
        self, attempt: int, lost: KoiKoiError | None, last: list[str] | None = None
    ) -> None:
        text = f"connection lost, reconnecting (attempt {attempt})..."
        if lost is None:
            text = f"resuming the match (attempt {attempt})..."
        note: Note = {"event": "reconnecting", "attempt": attempt, "text": text}
        if lost is not None:
            note["reason"] = str(lost)
        if last:
            note["last_error"] = last[-1]
        self._announce(note)

    async def _reconnect_loop(self, lost: KoiKoiError | None) -> trio.abc.Stream | None:
        """A new connection to the same opponent within the reconnect window, or fail."""
        ctx = self._ctx
        rc = self.reconnect
        assert rc is not None
        window = self._timeouts.reconnect_window
        record = self.session.record()
        got: tuple[trio.abc.Stream, Session] | None = None
        last: list[str] = []
        role = self.session.role
        try:
            with trio.move_on_after(window):
                if rc.dial is not None:
                    got = await redial(
                        rc,
                        record,
                        role,
                        self._timeouts,
                        lambda attempt: self._note_reconnecting(attempt, lost, last),
                        last,
                    )
                else:
                    got = await reaccept(
                        rc,
                        record,
                        role,
                        self._timeouts,
                        lambda attempt: self._note_reconnecting(attempt, lost),
                        last,
                        ctx.notify,
                    )
        except ResumeError as exc:  # another player or another match: hopeless
            ctx.fail(exc)
            return None
        if got is None:
            why = f" ({lost})" if lost is not None else ""
            tail = f"; last attempt: {last[-1]}" if last else ""
            ctx.fail(
                PeerSilentError(
                    f"the connection was lost{why} and the other player did not come "
                    f"back within {window:g}s{tail}; the match is unfinished: continue it "
                    f"later with: p2pkoikoi resume {ctx.run().records.path or 'RECORD'}"
                )
            )
            return None
        stream, session = got
        self.session = session
        self.reconnects += 1
        return stream
