"""The session's phase and the table of the moves between phases (h11's ``ConnectionState``).

Theory of operation
-------------------
The protocol runs in lock-step phases (:class:`~p2pkoikoi.session.states.State`).
Which part of the session handles a frame or a local event depends on the
phase alone, and only a few moves between phases exist; :data:`TRANSITIONS`
lists them, and :meth:`SessionPhase.go` refuses any other (a bug in this program,
never the peer's fault: the parts check the peer's messages before they move).
Every part that moves the session on holds the same :class:`SessionPhase`; none holds
the :class:`~p2pkoikoi.session.session.Session`.  ``ERROR`` is final, and any
phase may end in ``CLOSED`` (a goodbye, an end of stream, an abort).
"""

from __future__ import annotations

from typing import Final

from p2pkoikoi.session.errors import RemoteProtocolError
from p2pkoikoi.session.states import State

_ENDS = frozenset({State.CLOSED, State.ERROR})

TRANSITIONS: Final[dict[State, frozenset[State]]] = {
    State.HELLO: frozenset({State.AUTH, State.RESUME}) | _ENDS,
    State.AUTH: frozenset({State.RULES}) | _ENDS,
    State.RULES: frozenset({State.SEED}) | _ENDS,
    State.SEED: frozenset({State.PLAY}) | _ENDS,
    # a resumed connection continues where the record ends
    State.RESUME: frozenset({State.PLAY, State.FINISH, State.DONE}) | _ENDS,
    State.PLAY: frozenset({State.FINISH}) | _ENDS,
    # FINISH -> PLAY: our off-turn resignation crossed the other player's move
    # (protocol/README.md section 9, the crossing rule): it is taken back
    State.FINISH: frozenset({State.DONE, State.PLAY}) | _ENDS,
    State.DONE: frozenset({State.SEED}) | _ENDS,  # a rematch
    State.CLOSED: frozenset({State.ERROR}),  # an abort read after the close fails it
    State.ERROR: frozenset(),
}


class SessionPhase:
    """The current phase of one session; moves only along :data:`TRANSITIONS`."""

    __slots__ = ("_state",)

    def __init__(self, state: State = State.HELLO) -> None:
        self._state = state

    def __repr__(self) -> str:
        return f"SessionPhase({self._state!r})"

    @property
    def state(self) -> State:
        return self._state

    def go(self, new: State) -> None:
        """Move to ``new`` (staying put is allowed)."""
        if new is not self._state and new not in TRANSITIONS[self._state]:
            raise AssertionError(f"no move from {self._state.value} to {new.value}")
        self._state = new

    def unexpected(self, what: str) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"unexpected {what} message from peer during {self._state.value}"
        )
