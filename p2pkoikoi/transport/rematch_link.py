"""Play again on the same connection (protocol section 13): offers, answers, the next match.

A separate object because a rematch has its own lifetime, between two matches
of one link: an offer (ours or theirs) waits for an answer, and when both want
another match the link starts over with a new record file, a new ``updates``
channel and its per-match state reset (:meth:`Rematch.next_match`); the
commit-reveal then runs under the handshake deadlines, as the first match's did.
"""

from __future__ import annotations

import math
import secrets
from contextlib import suppress
from typing import TYPE_CHECKING

import trio

from p2pkoikoi.engine import IllegalActionError
from p2pkoikoi.session import (
    DeclineRematch,
    LocalProtocolError,
    OfferRematch,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    State,
)
from p2pkoikoi.transport.link import Update
from p2pkoikoi.transport.record_files import RecordKeeper, next_match_path

if TYPE_CHECKING:
    from p2pkoikoi.transport.match_link import NetworkLink


class Rematch:
    """The rematch state of one link: an offer not answered yet, the last refusal."""

    def __init__(self, link: NetworkLink) -> None:
        self._link = link
        #: the other player offers a rematch we have not answered yet
        self.offered = False
        self.declined: str | None = None  # why the other player declined our offer

    async def play_again(self, *, timeout: float = math.inf) -> bool:
        """See :meth:`NetworkLink.play_again`."""
        link = self._link
        link._check_alive()
        s = link.session
        if s.state is not State.DONE:
            raise IllegalActionError("a rematch can be offered once both players signed the result")
        number = s.match_number
        self.declined = None
        try:
            data = s.send(OfferRematch(secrets.token_bytes(32)))
        except LocalProtocolError as exc:
            raise IllegalActionError(str(exc)) from None
        self.offered = False
        link._write(data)
        link._process()  # an offer already received: the new match starts at once
        with trio.move_on_after(timeout):
            while s.match_number == number and self.declined is None and not link._stopped.is_set():
                await link._progress.wait()
        if s.match_number == number:
            return False
        await link._handshake.run()
        return True

    async def wait_offer(self) -> bool:
        """Until the other player offers a rematch (True) or the connection ends (False)."""
        link = self._link
        while not self.offered and not link._stopped.is_set():
            await link._progress.wait()
        return self.offered

    def decline(self, reason: str) -> None:
        """Say no to the other player's rematch offer (the connection stays open)."""
        link = self._link
        if not self.offered or link._stopped.is_set():
            return
        self.offered = False
        with suppress(LocalProtocolError):
            link._write(link.session.send(DeclineRematch(reason or "not this time")))

    def on_offered(self, ev: RematchOffered) -> None:
        self.offered = True
        self._link._notify(
            {
                "event": "rematch_offered",
                "match": ev.match_number,
                "text": "the other player offers to play again",
            }
        )

    def on_declined(self, ev: RematchDeclined) -> None:
        self.declined = ev.reason
        self._link._notify(
            {
                "event": "rematch_declined",
                "reason": ev.reason,
                "text": f"the other player does not want to play again: {ev.reason}",
            }
        )

    def next_match(self, ev: RematchStarted) -> None:
        """Both want another match: a new record file, a new ``updates`` channel, the
        per-match state reset; the commit-reveal runs next (:meth:`play_again`)."""
        link = self._link
        previous = link._records.path
        if previous is not None:
            link.finished_records.append(previous)
        link._records = RecordKeeper(next_match_path(previous, ev.match_number))
        link.result = None
        link.final_hash = ""
        link.forfeit_reason = ""
        link._resign_pending = None
        link._awaiting_final = False
        self.offered = False
        link._clock.reset()
        link._started = trio.Event()
        link._ended = trio.Event()
        link._up_tx, link.updates = trio.open_memory_channel[Update](math.inf)
        link._last_rx = link._conn.last_tx = trio.current_time()
        link._notify(
            {
                "event": "rematch",
                "match": ev.match_number,
                "text": f"match {ev.match_number} on this connection: dealing",
            }
        )
        if link._conn_nursery is not None and not link._heartbeat.on:
            link._conn_nursery.start_soon(link._heartbeat.run)
