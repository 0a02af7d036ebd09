"""What the table sees of a link: the current match's updates and the notes.

A link tells its table two things: :class:`~p2pkoikoi.transport.link.contract.Update`
values on the current match's ``updates`` channel (each with our seat's view of
the state), and notes for a script or the status line.  :class:`TableFeed` is
the one place that makes them.  It owns the view cache: every update carries
a view and the player to act asks for it again, so the view of one state is
made once (and the view of our own move only if a table reads it).  It reads
the current session and match through callables: a reconnect replaces the
session and a rematch the match, never the feed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from p2pkoikoi.engine import Event as EngineEvent
from p2pkoikoi.engine import MatchState, PlayerView
from p2pkoikoi.session import LocalProtocolError, Session
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.match_run import MatchRun
from p2pkoikoi.transport.link.notes import Note
from p2pkoikoi.transport.link.pulse import Pulse


class TableFeed:
    """The updates and notes of one link, for our ``seat``."""

    def __init__(
        self,
        seat: int,
        session: Callable[[], Session],
        run: Callable[[], MatchRun],
        notify: Callable[[Note], None],
        pulse: Pulse,
    ) -> None:
        self._seat = seat
        self._session = session
        self._run = run
        self._notify = notify
        self._pulse = pulse
        self._view_cache: tuple[MatchState, PlayerView] | None = None

    @property
    def view(self) -> PlayerView:
        """Our seat's view of the live state."""
        m = self._session().match
        if m is None:
            raise LocalProtocolError("the match has not started")
        return self.view_of(m)

    def view_of(self, m: MatchState) -> PlayerView:
        """Our seat's view of ``m`` (the last one made is kept)."""
        cached = self._view_cache
        if cached is not None and cached[0] is m:
            return cached[1]
        view = m.view(self._seat)
        self._view_cache = (m, view)
        return view

    def push(self, update: Update) -> None:
        self._run().push(update)

    def push_state(self, events: tuple[EngineEvent, ...], actor: int | None) -> None:
        """A move happened (or the match started): the new state, for the table."""
        if actor == self._seat:  # our own move: its view is made if a table reads it
            m = self._session().match
            if m is not None:
                self.push(Update("state", partial(self.view_of, m), events, actor))
                return
        self.push(Update("state", self.view, events, actor))

    def status(self, text: str, *, push: bool = True, event: str = "status") -> None:
        """A note, and (``push``, during a match) a line on the status line."""
        self._notify({"event": event, "text": text})
        if push and self._session().match is not None:
            self.push(Update("status", self.view, text=text))

    def announce(self, note: Note) -> None:
        """A note, and its text on the table's status line (during a match)."""
        self._notify(note)
        if self._session().match is not None and not self._pulse.is_stopped:
            self.push(Update("status", self.view, text=note["text"]))
