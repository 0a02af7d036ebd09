"""The pulse of a link: "something changed" and "the link stopped", for its parts.

A link's parts wait for the same two things: that the link changed (a message
was handled, a connection came or went: :meth:`Pulse.changed`) and that it
stopped for good (:attr:`Pulse.stopped`).  The link owns one :class:`Pulse`
and hands it to each part, as trio hands a task an event rather than its
owner; only the link wakes and stops it.
"""

from __future__ import annotations

import trio


class Pulse:
    """Wakes every waiter on each change of a link; ``stopped`` once it ends."""

    def __init__(self) -> None:
        self._changed = trio.Event()
        self.stopped = trio.Event()

    @property
    def is_stopped(self) -> bool:
        return self.stopped.is_set()

    def wake(self) -> None:
        """Something changed: every task waiting in :meth:`changed` looks again."""
        self._changed.set()
        self._changed = trio.Event()

    def stop(self) -> None:
        self.stopped.set()
        self.wake()

    async def changed(self) -> None:
        """Until the next :meth:`wake`."""
        await self._changed.wait()
