"""The contract between a table (interface, headless driver) and a game in play.

Theory of operation: a table never touches an engine or a session directly.
It holds a :class:`GameLink`, reads :class:`Update` values from
``link.updates`` (a trio receive channel) and answers with ``await
link.act(action)``, ``link.chat(text)`` and ``link.resign()``.  A network game
(:mod:`p2pkoikoi.transport.link.network`) and a practice game against an in-process
opponent (:class:`LocalLink`) both implement it, so one table serves both.

Every update carries the complete :class:`PlayerView` for the table's seat,
so a table can always redraw from the latest update alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import trio

from p2pkoikoi.engine import (
    Action,
    Event,
    IllegalActionError,
    KoiKoiError,
    MatchState,
    Phase,
    PlayerView,
    RuleSet,
)
from p2pkoikoi.engine.events import Resigned


class Update:
    """One change at the table.

    ``kind`` is ``"state"`` (a move happened or the match started), ``"jump"`` (the
    match moved to ``view`` without its events: a practice undo or resume), ``"status"``
    (connection news: ``text`` says what), ``"chat"`` (``text`` from ``sender``),
    or ``"over"`` (the match ended; ``text`` says why, ``record`` where its
    record lies).

    ``view`` may be given as a function that makes it: it is made when first
    read (a headless player never reads the view of its own move's update, and
    making a view is a good part of a move's cost).  Otherwise a frozen value,
    like a frozen dataclass (its fields, ``==`` and a pasteable ``repr``).
    """

    __slots__ = ("kind", "_view", "events", "actor", "text", "sender", "record", "final_hash")
    _FIELDS = ("kind", "view", "events", "actor", "text", "sender", "record", "final_hash")

    kind: str
    _view: PlayerView | Callable[[], PlayerView]
    events: tuple[Event, ...]
    actor: int | None
    text: str
    sender: str
    record: str | None
    final_hash: str

    def __init__(
        self,
        kind: str,
        view: PlayerView | Callable[[], PlayerView],
        events: tuple[Event, ...] = (),
        actor: int | None = None,
        text: str = "",
        sender: str = "",
        record: str | None = None,
        final_hash: str = "",
    ) -> None:
        put = object.__setattr__
        put(self, "kind", kind)
        put(self, "_view", view)
        put(self, "events", events)
        put(self, "actor", actor)
        put(self, "text", text)
        put(self, "sender", sender)
        put(self, "record", record)
        put(self, "final_hash", final_hash)

    @property
    def view(self) -> PlayerView:
        got = self._view
        if isinstance(got, PlayerView):
            return got
        made = got()
        object.__setattr__(self, "_view", made)
        return made

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Update is frozen: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Update is frozen: cannot delete {name}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Update)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{name}={value!r}" for name, value in zip(self._FIELDS, self._values(), strict=True)
        )
        return f"Update({inner})"


class GameLink(Protocol):
    seat: int

    @property
    def names(self) -> tuple[str, str]: ...

    @property
    def rules(self) -> RuleSet: ...

    @property
    def updates(self) -> trio.MemoryReceiveChannel[Update]: ...

    async def act(self, action: Action) -> None: ...

    async def chat(self, text: str) -> None: ...

    async def resign(self) -> None: ...

    async def leave(self) -> None:
        """The person leaves the table mid-match: resign, and (over a network) wait a
        bounded time for the other player's signature on the result."""
        ...


Opponent = Callable[[PlayerView], Action]


class MoveRecorder(Protocol):
    """What a :class:`LocalLink` tells as the match goes (see
    :class:`~p2pkoikoi.transport.store.practice.PracticeRecorder`)."""

    @property
    def path(self) -> Path | None: ...

    def action(self, seat: int, action: Action) -> None: ...

    def resign(self, seat: int) -> bool: ...

    def rebuild(self, moves: Sequence[tuple[int, Action | None]]) -> None: ...


@dataclass
class LocalLink:
    """A practice game: the table's seat against an in-process opponent function.

    The opponent (a bot's ``choose``) runs in a worker thread, so a slow bot
    never freezes the table.  Run :meth:`run` in a nursery; it returns when the
    match is over.
    """

    rules: RuleSet
    match_seed: bytes
    opponent: Opponent
    seat: int = 0
    names: tuple[str, str] = ("You", "Computer")
    recorder: MoveRecorder | None = None  # writes a verifiable record as the match goes
    #: moves already played (a resumed match): (seat, action), or (seat, None) resigned
    moves: Sequence[tuple[int, Action | None]] = ()
    resumed: bool = False  # a match left earlier: the first update is a "jump"
    state: MatchState = field(init=False)
    #: the table's turns that can be taken back: (the state before, moves played then)
    _turns: list[tuple[MatchState, int]] = field(init=False, default_factory=list)
    _played: list[tuple[int, Action | None]] = field(init=False, default_factory=list)
    updates: trio.MemoryReceiveChannel[Update] = field(init=False)
    _send: trio.MemorySendChannel[Update] = field(init=False)
    _actions: trio.MemorySendChannel[Action | None] = field(init=False)
    _action_rx: trio.MemoryReceiveChannel[Action | None] = field(init=False)

    def __post_init__(self) -> None:
        # one program deals both hands: the hidden deal gains nothing here
        self.state, events = MatchState.start(self.rules.with_open_deal(), self.match_seed)
        self._send, self.updates = trio.open_memory_channel[Update](1000)
        self._actions, self._action_rx = trio.open_memory_channel[Action | None](1)
        for seat, action in self.moves:  # a resumed match: where it was left
            if action is None:
                self.state, _ = self.state.resign(seat)
            else:
                self.state, _ = self.state.apply(action)
            self._played.append((seat, action))
        kind = "jump" if self.resumed else "state"
        first = () if self.resumed else events
        self._send.send_nowait(Update(kind, self.state.view(self.seat), first))
        if self.state.is_over:  # the deal decided it (a hand yaku in a one-round match)
            self._send.send_nowait(
                Update(
                    "over",
                    self.state.view(self.seat),
                    text=self.state.end_reason or "",
                    final_hash=self.state.state_hash().hex(),
                    record=self._record_path(),
                )
            )

    async def act(self, action: Action) -> None:
        """Submit the table's action; an illegal one raises :class:`IllegalActionError`."""
        if self.state.to_act != self.seat:
            raise IllegalActionError("it is not your turn")
        if not self.state.is_legal(action):
            raise IllegalActionError(f"illegal action {action}")
        if self.state.phase is Phase.PLAY:  # a turn begins: it can be taken back
            self._turns.append((self.state, len(self._played)))
        await self._actions.send(action)

    @property
    def undo(self) -> bool:
        """Whether :meth:`take_back` has a turn of this round to take back."""
        return bool(self._turns) and self._turns[-1][0].round == self.state.round

    async def take_back(self) -> None:
        """Undo: back to the start of the table's last turn of this round (the computer's
        replies go too); the record is made again without them."""
        if self.state.is_over or self.state.to_act != self.seat:
            raise IllegalActionError("undo works on your turn, while the match goes on")
        if not self.undo:
            raise IllegalActionError("nothing to undo in this round")
        before, played = self._turns.pop()
        self.state = before
        del self._played[played:]
        if self.recorder is not None:
            self.recorder.rebuild(self._played)
        await self._send.send(Update("jump", self.state.view(self.seat), text="undo"))

    async def chat(self, text: str) -> None:
        await self._send.send(
            Update(
                "chat",
                self.state.view(self.seat),
                text=text,
                sender=self.names[self.seat],
                actor=self.seat,
            )
        )

    async def resign(self) -> None:
        if self.recorder is not None:
            self.recorder.resign(self.seat)
        self._played.append((self.seat, None))
        self.state, events = self.state.resign(self.seat)
        await self._publish(events, self.seat)
        with contextlib.suppress(trio.WouldBlock):  # wake run() if it waits for our action
            self._actions.send_nowait(None)

    @property
    def resumable(self) -> bool:
        """Left now, the match can be played on later (``practice --resume``): its
        record is being kept, with the resume file beside it."""
        return (
            self.recorder is not None and self.recorder.path is not None and not self.state.is_over
        )

    async def leave(self) -> None:
        """Leaving a practice game: kept for later when it is :attr:`resumable`, else
        resigned."""
        if self.resumable:
            with contextlib.suppress(trio.WouldBlock):  # run() stops waiting for us
                self._actions.send_nowait(None)
            return
        await self.resign()

    async def _publish(self, events: tuple[Event, ...], actor: int | None) -> None:
        view = self.state.view(self.seat)
        await self._send.send(Update("state", view, events, actor))
        if self.state.is_over:
            reason = (
                "resigned"
                if any(isinstance(e, Resigned) for e in events)
                else self.state.end_reason
            )
            await self._send.send(
                Update(
                    "over",
                    view,
                    text=reason,
                    final_hash=self.state.state_hash().hex(),
                    record=self._record_path(),
                )
            )

    def _record_path(self) -> str | None:
        path = self.recorder.path if self.recorder is not None else None
        return str(path) if path is not None else None

    async def run(self) -> None:
        other = 1 - self.seat
        while not self.state.is_over:
            if self.state.to_act == other:
                view = self.state.view(other)
                try:
                    action = await trio.to_thread.run_sync(
                        self.opponent, view, abandon_on_cancel=True
                    )
                    if not self.state.is_legal(action):
                        raise IllegalActionError(f"illegal action {action}")
                except KoiKoiError as exc:  # a crashed, slow or cheating engine forfeits
                    if self.state.is_over:
                        break
                    if self.recorder is not None:
                        self.recorder.resign(other)
                    self.state, events = self.state.resign(other)
                    view = self.state.view(self.seat)
                    await self._send.send(Update("state", view, events, other))
                    await self._send.send(
                        Update(
                            "over",
                            view,
                            text=f"{self.names[other]} forfeits: {exc}",
                            final_hash=self.state.state_hash().hex(),
                            record=self._record_path(),
                        )
                    )
                    break
                if self.state.is_over:  # the table resigned meanwhile
                    break
            else:
                got = await self._action_rx.receive()
                if got is None or self.state.is_over:
                    break
                action = got
            actor = self.state.to_act
            self.state, events = self.state.apply(action)
            if actor is not None:
                self._played.append((actor, action))
            if self.recorder is not None and actor is not None:
                self.recorder.action(actor, action)
            await self._publish(events, actor)
