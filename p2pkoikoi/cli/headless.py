"""Headless play: a chooser (a bot) drives a :class:`NetworkLink`; JSON lines come out.

Why here and not in the CLI: the driver only needs the link contract and a
``choose(view) -> Action`` function, and tests run it in memory under a
mock clock.  The CLI picks the bot (layer 4 may import bots; this layer may
not) and passes its ``choose``.

A chooser that raises a :class:`KoiKoiError` (a ``cmd:`` bot whose external
engine crashed, hung or misbehaved) forfeits: we resign on its behalf, emit a
``forfeit`` event saying why, and the match still ends with both signatures.
A chooser still thinking when the agreed turn limit runs out is abandoned (the
link warns first, ``time_warning``, then resigns on our behalf: ``time_out``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any, Final

import trio

from p2pkoikoi.engine import Action, Event, KoiKoiError, PlayerView
from p2pkoikoi.engine.events import Drew, KoiKoiCalled, Played, Took
from p2pkoikoi.session import WaitingFor
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.network import NetworkLink

Chooser = Callable[[PlayerView], Action]
Emit = Callable[[dict[str, Any]], None]

ROLES = ("host", "joiner")


class JsonLines:
    """An :data:`Emit`: one JSON object per line, flushed at once (a script waits on each line).

    Between :meth:`hold` and :meth:`release` lines are kept and then written
    with one ``write`` and one flush: :func:`play_headless` holds the lines of
    the updates already queued (the peer's move, our answer to it) and
    releases them before it waits for anything, so a script still has every
    line before this program waits, and a move costs one system call for its
    output instead of one per line.
    """

    def __init__(self, out: IO[str] | None = None) -> None:
        self._out = out
        self._held: list[str] | None = None
        self._encode = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode

    def __call__(self, obj: dict[str, Any]) -> None:
        self.line(self._encode(obj) + "\n")

    def encode(self, obj: dict[str, Any]) -> str:
        """The line :meth:`__call__` writes for ``obj`` (newline included)."""
        return self._encode(obj) + "\n"

    def line(self, line: str) -> None:
        """Write a line already encoded by :meth:`encode`."""
        if self._held is not None:
            self._held.append(line)
        else:
            self._write(line)

    def _write(self, text: str) -> None:
        stream = self._out if self._out is not None else sys.stdout
        stream.write(text)
        stream.flush()

    def hold(self) -> None:
        """Keep lines until :meth:`release` (holding twice is holding once)."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Write the lines held so far, in one go, and stop holding."""
        held, self._held = self._held, None
        if held:
            self._write("".join(held))


def json_emitter(out: IO[str] | None = None) -> JsonLines:
    """One JSON object per line on ``out`` (standard output by default)."""
    return JsonLines(out)


def match_over_event(link: NetworkLink) -> dict[str, Any]:
    """The last line of a headless match."""
    result = link.result
    assert result is not None
    winner = None if result.winner is None else ROLES[result.winner]
    return {
        "event": "match_over",
        "scores": {ROLES[0]: result.scores[0], ROLES[1]: result.scores[1]},
        "winner": winner,
        "winner_name": None if result.winner is None else link.names[result.winner],
        "you": ROLES[link.seat],
        "names": {ROLES[0]: link.names[0], ROLES[1]: link.names[1]},
        "record": str(link.record_path) if link.record_path else None,
        "final_hash": result.final_hash.hex(),
        "transcript_hash": result.transcript_hash.hex(),
        "match": link.match_number,  # which match of this connection (--rematch)
        **({"forfeit": link.forfeit_reason} if link.forfeit_reason else {}),
    }


async def play_headless(
    link: NetworkLink, choose: Chooser, emit: Emit, *, in_thread: bool = True
) -> dict[str, Any] | None:
    """Play until the match is over; returns the ``match_over`` event (also emitted).

    Returns ``None`` when the link stopped on an error (leaving the
    ``open_host``/``open_join`` block then raises it).  ``in_thread`` runs the
    chooser in a worker thread so a slow bot never stalls heartbeats; tests
    under a mock clock pass ``False``.
    """
    lines = emit if isinstance(emit, JsonLines) else None
    updates = link.updates
    try:
        while True:
            # an update already queued (our own move's, right after we made it) is
            # taken without a trip through trio's scheduler; only an empty channel waits
            try:
                update = updates.receive_nowait()
            except trio.WouldBlock:
                if lines is not None:
                    lines.release()  # before waiting, every line is out
                try:
                    update = await updates.receive()
                except trio.EndOfChannel:
                    return None
            except trio.EndOfChannel:
                return None
            if lines is not None:
                lines.hold()
            final = await _one_update(link, update, choose, emit, lines, in_thread)
            if final is not _GO_ON:
                return final
    finally:
        if lines is not None:
            lines.release()


def emit_events(events: tuple[Event, ...], actor: int | None, emit: Emit) -> None:
    """One line per event (``actor``: who caused them); a move's lines come from
    :data:`_LINES` when ``emit`` is a :class:`JsonLines`."""
    lines = emit if isinstance(emit, JsonLines) else None
    for ev in events:
        if lines is not None and type(ev) in _MOVES:
            key = (type(ev), ev, actor)
            line = _LINES.get(key)
            if line is None:
                line = lines.encode(_event_line(ev, actor))
                if len(_LINES) < _LINES_KEPT:
                    _LINES[key] = line
            lines.line(line)
        else:
            emit(_event_line(ev, actor))


#: fields of the engine's events that name a seat (0, 1; None for nobody)
_SEAT_FIELDS: Final = ("seat", "dealer", "winner")
#: fields that hold a value per seat, (seat 0's, seat 1's)
_PAIR_FIELDS: Final = ("scores", "gained")


def _event_line(ev: Event, actor: int | None) -> dict[str, Any]:
    """The JSON object of one event (``by``: who caused it), in the shapes of
    docs/headless-events.schema.json: a seat is its role ("host", "joiner"), a
    value per seat is ``{"host": N, "joiner": N}``, in every event alike."""
    out = ev.to_dict()
    for key in _SEAT_FIELDS:
        seat = out.get(key)
        if type(seat) is int:
            out[key] = ROLES[seat]
    for key in _PAIR_FIELDS:
        pair = out.get(key)
        if type(pair) is list:
            out[key] = {ROLES[0]: pair[0], ROLES[1]: pair[1]}
    if out["event"] == "dealer_chosen":
        out["draws"] = [{ROLES[0]: a, ROLES[1]: b} for a, b in out["draws"]]
    if actor is not None:
        out.setdefault("by", ROLES[actor])
    return out


#: The events of a move (a seat, a card, the cards it took): a match repeats a few
#: thousand of them at most, so each one's line is encoded once per process and
#: kept.  Keyed by type too: two event tuples with equal fields are equal tuples.
_MOVES: Final = frozenset({Played, Drew, Took, KoiKoiCalled})
_LINES: dict[tuple[type, Event, int | None], str] = {}
_LINES_KEPT: Final = 8192


#: what :func:`_one_update` returns when the match goes on (compared by identity)
_GO_ON: Final[dict[str, Any]] = {}


async def _one_update(
    link: NetworkLink,
    update: Update,
    choose: Chooser,
    emit: Emit,
    lines: JsonLines | None,
    in_thread: bool,
) -> dict[str, Any] | None:
    """One update: its events out, our move if it is our turn; :data:`_GO_ON` or the end."""
    if update.kind == "state":
        emit_events(update.events, update.actor, emit)
        live = link.session.match  # a queued update may be stale (e.g. we resigned since)
        if live is None or live.is_over or live.to_act != link.seat:
            return _GO_ON
        if link.session.catching_up:  # our own lost actions are coming back first
            return _GO_ON
        if link.session.waiting_for is not WaitingFor.LOCAL_ACTION:
            return _GO_ON  # the hidden deal: our play waits for the other's key to our draw
        view = link.view  # the live state (after a resume, updates repeat)
        if view.to_act == link.seat and view.legal_actions:
            seq = link.session.seq
            try:
                if in_thread:
                    if lines is not None:
                        lines.release()  # a bot may think for a while: the lines go first
                    # a bot that hangs past the turn limit is abandoned: the link
                    # resigns for us then (time_out), and the match ends signed
                    maybe: Action | None = None
                    with trio.move_on_at(link.turn_deadline()):
                        maybe = await trio.to_thread.run_sync(choose, view, abandon_on_cancel=True)
                    if maybe is None:
                        return _GO_ON
                    action = maybe
                else:
                    action = choose(view)
            except KoiKoiError as exc:
                reason = f"{ROLES[link.seat]}'s engine failed: {exc}"
                emit({"event": "forfeit", "by": ROLES[link.seat], "reason": reason})
                if lines is not None:
                    lines.release()
                await link.resign(reason)
                return _GO_ON
            if link.session.seq != seq or link.finished:
                return _GO_ON  # too late: the turn limit ran out meanwhile
            if lines is not None and not link.online:
                lines.release()  # the move waits for the connection: the lines go first
            await link.act(action)
    elif update.kind == "over":
        if link.result is not None:
            final = match_over_event(link)
            emit(final)
            return final
        return None
    return _GO_ON  # "status": already emitted as a note; "chat" likewise
