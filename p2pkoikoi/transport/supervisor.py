"""Connections come and go, the match stays: a link's connections, one after another.

Theory of operation
-------------------
:meth:`Supervisor.run` is the link's supervisor task.  It runs one
:class:`~p2pkoikoi.transport.connection.Connection` (writer, reader and
heartbeat in their own nursery) until the link marks it lost
(``NetworkLink._drop``: a broken stream, or a peer silent past
``silence_fail`` during play).  With a :class:`Reconnect` it then gets a new
stream with a resumed session from :mod:`p2pkoikoi.transport.reconnect` (the
joiner redials, the host re-accepts) and runs that, or fails the match when
``reconnect_window`` ends.  Local moves wait meanwhile (``NetworkLink.online``
is False).  ``p2pkoikoi resume`` starts a link with no stream at all: its first
connection is a resume.  The secrets a resume needs are kept beside the
record (:meth:`Supervisor.write_sidecar`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import MatchOver, ResumeError, Session, State
from p2pkoikoi.transport.connection import Connection
from p2pkoikoi.transport.errors import PeerSilentError
from p2pkoikoi.transport.link import Update
from p2pkoikoi.transport.notes import Note
from p2pkoikoi.transport.reconnect import Reconnect, reaccept, redial

if TYPE_CHECKING:
    from p2pkoikoi.transport.match_link import NetworkLink


class Supervisor:
    """A link's connections and reconnects (``reconnect=None``: one connection only)."""

    def __init__(self, link: NetworkLink, reconnect: Reconnect | None) -> None:
        self._link = link
        self.reconnect = reconnect

    def write_sidecar(self) -> None:
        """The secrets ``p2pkoikoi resume`` needs, beside the record, private (0600)."""
        link = self._link
        rc = self.reconnect
        if rc is None or rc.sidecar is None:
            return
        if link.session.is_hidden:  # the deal secret: needed to resume, never in the record
            rc.hidden_secret = link.session.hidden_secret
            rc.sidecar["hidden_secret"] = link.session.hidden_secret.hex()
        try:
            link._records.write_sidecar(rc.sidecar)
        except OSError as exc:
            link._notify({"event": "warning", "text": f"cannot write the resume file: {exc}"})

    def started(self) -> None:
        """The match started: keep its resume secret for a reconnect, and on disk."""
        s = self._link.session
        rc = self.reconnect
        if rc is not None and s.resume_secret is not None:
            rc.secret = s.resume_secret
            if rc.sidecar is not None:
                rc.sidecar["resume_secret"] = rc.secret.hex()
        self.write_sidecar()

    async def run(self, stream: trio.abc.Stream | None) -> None:
        """One connection after another until the match ends or cannot resume."""
        link = self._link
        if stream is None:  # resuming after a crash: the first connection is a resume
            stream = await self._reconnect_loop(None)
        while stream is not None:
            await self._run_connection(stream)
            if link._stopped.is_set() or not link._lost.is_set():
                return
            stream = await self._reconnect_loop(link._lost_error)

    async def _run_connection(self, stream: trio.abc.Stream) -> None:
        """Reader, writer and heartbeat of one connection; returns when it is lost."""
        link = self._link
        link._conn = conn = Connection(link, stream)
        link._lost = trio.Event()
        link._last_rx = conn.last_tx
        try:
            async with trio.open_nursery() as nursery:
                link._conn_nursery = nursery
                nursery.start_soon(conn.writer)
                link._flush()  # our hello, through the writer like everything else
                if link.reconnects:
                    self._announce_resumed()
                nursery.start_soon(conn.reader)
                nursery.start_soon(link._heartbeat.run)
                await link._lost.wait()
                nursery.cancel_scope.cancel()
        finally:
            await trio.aclose_forcefully(stream)

    def _announce_resumed(self) -> None:
        link = self._link
        s = link.session
        link._online = True
        link._started.set()
        link._notify({"event": "reconnected", "text": "reconnected", "seq": s.seq})
        if s.match is not None:
            link._push(Update("status", link.view, text="reconnected"))
            link._push_state((), None)  # a table redraws; a bot acts if it is its turn
        link._save_record()
        link._wake()
        if s.state is State.DONE and link.result is None:  # we only had to re-sign
            r = s.record().result
            assert r is not None
            link._on_over(MatchOver(r.scores, r.winner, r.final_state_hash, r.transcript_hash))
            return
        link._after_step()

    def _note_reconnecting(
        self, attempt: int, lost: KoiKoiError | None, last: list[str] | None = None
    ) -> None:
        link = self._link
        text = f"connection lost, reconnecting (attempt {attempt})..."
        if lost is None:
            text = f"resuming the match (attempt {attempt})..."
        note: Note = {"event": "reconnecting", "attempt": attempt, "text": text}
        if lost is not None:
            note["reason"] = str(lost)
        if last:
            note["last_error"] = last[-1]
        link._notify(note)
        if link.session.match is not None and not link._stopped.is_set():
            link._push(Update("status", link.view, text=text))

    async def _reconnect_loop(self, lost: KoiKoiError | None) -> trio.abc.Stream | None:
        """A new connection to the same opponent within the reconnect window, or fail."""
        link = self._link
        rc = self.reconnect
        assert rc is not None
        window = link.timeouts.reconnect_window
        record = link.session.record()
        got: tuple[trio.abc.Stream, Session] | None = None
        last: list[str] = []
        role = link.session.role
        try:
            with trio.move_on_after(window):
                if rc.dial is not None:
                    got = await redial(
                        rc,
                        record,
                        role,
                        link.timeouts,
                        lambda attempt: self._note_reconnecting(attempt, lost, last),
                        last,
                    )
                else:
                    got = await reaccept(
                        rc,
                        record,
                        role,
                        link.timeouts,
                        lambda attempt: self._note_reconnecting(attempt, lost),
                        last,
                        link._notify,
                    )
        except ResumeError as exc:  # another player or another match: hopeless
            link._fail(exc)
            return None
        if got is None:
            if link.error is None:
                why = f" ({lost})" if lost is not None else ""
                tail = f"; last attempt: {last[-1]}" if last else ""
                link._fail(
                    PeerSilentError(
                        f"the connection was lost{why} and the other player did not come "
                        f"back within {window:g}s{tail}; the match is unfinished: continue it "
                        f"later with: p2pkoikoi resume {link.record_path or 'RECORD'}"
                    )
                )
            return None
        stream, session = got
        link._session = session
        link.reconnects += 1
        return stream
