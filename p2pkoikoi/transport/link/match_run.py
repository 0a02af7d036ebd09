"""One match of a link: what a rematch starts afresh.

A link plays one match after another on the same connection (protocol section
13).  What belongs to one match (its record file, its ``updates`` channel,
its result, a resignation waiting for our turn, the final-signature wait) is
one :class:`MatchRun`: a rematch makes a new one instead of resetting fields,
so what a rematch resets is what this class holds.
"""

from __future__ import annotations

import math
from contextlib import suppress

import trio

from p2pkoikoi.session import MatchOver
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.store.records import RecordKeeper


class MatchRun:
    """The state of one match of a link (made at the start and by each rematch)."""

    def __init__(self, records: RecordKeeper) -> None:
        self.records = records
        self.result: MatchOver | None = None
        self.final_hash = ""
        self.forfeit_reason = ""
        #: a resignation waiting for our turn (its reason)
        self.resign_pending: str | None = None
        self.awaiting_final = False  # the final-signature wait runs
        self.started = trio.Event()  # the commit-reveal is done (or the match resumed)
        self.ended = trio.Event()  # both signatures, or the link stopped
        self._tx, self.updates = trio.open_memory_channel[Update](math.inf)

    def push(self, update: Update) -> None:
        """One update for the table (dropped once the channel is closed)."""
        with suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            self._tx.send_nowait(update)

    def end(self) -> None:
        """No more updates: the table's ``async for`` ends."""
        self._tx.close()
        self.ended.set()
