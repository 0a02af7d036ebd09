"""How a link ends: for good (the one error it keeps), or for now (a drop, then a reconnect).

Theory of operation
-------------------
:class:`Ending` owns the link's error.  A broken stream or a silent peer
(:meth:`Ending.drop`), and the other player ending the connection
(:meth:`Ending.left`: ``bye``, or the end of the stream), only mark the
connection lost while the match can resume: the supervisor then reconnects
within ``reconnect_window``, and leaving counts as a forfeit only once the other
player has not come back.  Otherwise, and for every other failure,
:meth:`Ending.fail` stops the link for good: it keeps the error, lets the
writer send the session's abort, brings the record up to date (dropping the
resume file's secrets when the match can never resume), gives the table a last
``"over"`` update and stops every part (:meth:`Ending.stop`).  The end of
:func:`~p2pkoikoi.transport.link.lifetime.open_link`'s block is here too: a
goodbye, the writer drained, the tasks cancelled (:meth:`Ending.shutdown`),
then the record closed and the stream with it (:meth:`Ending.release`).

A link that fails keeps one :class:`KoiKoiError`, the line a person reads and a
script catches.  :func:`failure` tells the session the other player is gone
(who owes the next step forfeits) and words the error with what follows from it:
who forfeits and why, and, for a host whose reveal the joiner never confirmed,
that the joiner's record may count the end as the host's forfeit.  The kind of
error stays the same (callers and tests tell them apart).  :meth:`Ending.linger`
says how long the ending connection waits for the other side's end.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import Goodbye, ProtocolError, Session, State
from p2pkoikoi.session.forfeits import HOST_STOPPED
from p2pkoikoi.session.records.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import (
    PeerFloodError,
    PeerSilentError,
    PeerTimeoutError,
    TransportError,
)
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.table_feed import TableFeed


class Ending:
    """The link's error, and what a failure, a drop or the other player leaving does."""

    def __init__(
        self,
        ctx: LinkContext,
        feed: TableFeed,
        *,
        can_reconnect: Callable[[], bool],
        lose: Callable[[KoiKoiError], None],
    ) -> None:
        self._seat = ctx.seat
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._feed = feed
        self._ctx = ctx
        self._can_reconnect = can_reconnect  # the link has a way to reconnect
        self._lose = lose  # the connection is lost: the supervisor reconnects
        self.error: KoiKoiError | None = None

    def keep(self, exc: KoiKoiError) -> None:
        """``exc`` is the link's error, unless it has one already."""
        if self.error is None:
            self.error = exc

    def resumable(self) -> bool:
        """A lost connection now would be replaced (the supervisor reconnects)."""
        ctx = self._ctx
        return (
            self._can_reconnect()
            and ctx.run().started.is_set()
            and self._timeouts.reconnect_window > 0
            and ctx.session().state in (State.PLAY, State.FINISH)
        )

    def drop(self, exc: KoiKoiError) -> None:
        """The connection broke: reconnect if the match can resume, else stop for good."""
        ctx = self._ctx
        if self.error is not None or self._pulse.is_stopped or ctx.connection().lost.is_set():
            return
        if not self.resumable():
            ctx.session().peer_left()  # it cannot come back: who owes the next step forfeits
            self.fail(exc)
            return
        self._lose(exc)
        ctx.save_record()
        self._pulse.wake()

    def left(self, exc: KoiKoiError) -> None:
        """The other player ended the connection during the match (``bye``, or the
        session read the end of the stream): leaving is a forfeit only once it has not
        come back within the reconnect window, so wait for it as for a drop when the
        match can resume; otherwise it forfeits now."""
        ctx = self._ctx
        if self.error is not None or self._pulse.is_stopped or ctx.connection().lost.is_set():
            return
        m = ctx.session().match
        if (
            self._can_reconnect()
            and ctx.run().started.is_set()
            and self._timeouts.reconnect_window > 0
            and m is not None
            and not m.is_over
        ):
            self._lose(exc)
            ctx.save_record()
            self._pulse.wake()
            return
        ctx.session().peer_left()
        self.fail(exc)

    def fail(self, exc: KoiKoiError) -> None:
        """Stop for good: keep the error, tell the table, let the writer send the abort."""
        ctx = self._ctx
        if self.error is not None or self._pulse.is_stopped:
            return
        s = ctx.session()
        exc = failure(exc, s, self._seat, ctx.names())
        self.error = exc
        if s.lacks_peer_final and s.missing is None:  # our signature, not theirs
            s.missing = str(exc)[:200]
        ctx.flush()  # the session's abort, if it queued one
        ctx.save_record()
        s = ctx.session()
        run = ctx.run()
        if s.state not in (State.PLAY, State.FINISH) or s.forfeit:
            # a final end (a protocol error, a cheat, refused rules or identity): the
            # match can never resume, so the secrets in the resume file go;
            # a lost connection keeps it for ``p2pkoikoi resume``
            run.records.drop_sidecar()
        if s.match is not None:
            self._feed.push(
                Update("over", self._feed.view, text=str(exc), record=str(run.records.path or ""))
            )
        self.stop()

    def stop(self) -> None:
        """No more updates, the connection closed, every part told."""
        self._pulse.stopped.set()
        self._ctx.run().end()
        self._ctx.connection().close()
        self._pulse.wake()

    async def shutdown(self, *, goodbye: bool) -> None:
        """Say goodbye if still talking, let the writer drain, then stop every task."""
        ctx = self._ctx
        s = ctx.session()
        if goodbye and not self._pulse.is_stopped and s.state not in (State.CLOSED, State.ERROR):
            with suppress(ProtocolError):
                ctx.write(s.send(Goodbye()))
        ctx.save_record()
        self.stop()
        with trio.move_on_after(self._timeouts.handshake) as cs:
            cs.shield = True
            await ctx.connection().writer_done.wait()
        nursery = ctx.nursery()
        if nursery is not None:
            nursery.cancel_scope.cancel()

    async def release(self) -> None:
        """Last: the record brought up to date and closed (an unfinished match's
        journal becomes its compact record), the stream closed."""
        ctx = self._ctx
        ctx.save_record()
        try:
            ctx.run().records.close(ctx.session())
        except TransportError as exc:
            self.keep(exc)
        with trio.move_on_after(1) as cs:
            cs.shield = True
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                stream_now = ctx.connection().stream
                if stream_now is not None:
                    await stream_now.aclose()

    def linger(self) -> float:
        """How long the ending connection waits for the other side's end (see
        :func:`~p2pkoikoi.transport.link.connection.close_gracefully`): not at all for a
        peer that fell silent, flooded us or let a step or its turn run out (it is
        not answering; what we owe it is in our record)."""
        if isinstance(self.error, PeerSilentError | PeerFloodError | PeerTimeoutError):
            return 0.0
        return self._timeouts.linger


def failure(exc: KoiKoiError, session: Session, seat: int, names: tuple[str, str]) -> KoiKoiError:
    """The error a link that stops for good with ``exc`` keeps, once ``session``
    knows the other player is gone (``seat`` is ours, ``names`` both players')."""
    session.peer_gone()  # between the joiner's value and the reveal: host forfeits
    if isinstance(exc, PeerSilentError | PeerFloodError):
        # it left (or flooded us off) and did not come back within the window
        session.peer_left()
        left = session.forfeit
        if left is not None and left.seat != seat and left.reason != TIME_FORFEIT:
            who = names[left.seat]
            # a forfeit is the end: no "continue it later with p2pkoikoi resume"
            text = str(exc).split("; the match is unfinished")[0]
            exc = _reworded(exc, f"{text}: {who} forfeits the match ({left.reason})")
    forfeit = session.forfeit
    if forfeit is not None and forfeit.seat != seat and "forfeits" not in str(exc):
        who = "the host" if forfeit.seat == 0 else "the joiner"
        exc = _reworded(
            exc,
            f"{forfeit.reason} ({exc}): {who} forfeits the match"
            if forfeit.reason == HOST_STOPPED
            else f"{exc}: {who} forfeits the match ({forfeit.reason})",
        )
    if seat == 0 and session.match is not None and not session.joiner_started:
        # we revealed, but the joiner never confirmed it: if the reveal was lost on
        # the way, the joiner's program counts the end as our forfeit (protocol 8)
        exc = _reworded(
            exc,
            f"{exc} (before the joiner confirmed your reveal: if it never arrived, "
            "the joiner's record counts this as your forfeit)",
        )
    return exc


def _reworded(exc: KoiKoiError, text: str) -> KoiKoiError:
    """The same kind of error (callers and tests tell them apart) with more to say."""
    try:
        new = type(exc)(text)
    except TypeError:
        return TransportError(text)
    return new if isinstance(new, KoiKoiError) else TransportError(text)
