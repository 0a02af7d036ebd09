"""Headless play: a chooser (a bot) drives a :class:`NetworkLink`; JSON lines come out.

Why here and not in the CLI: the driver only needs the link contract and a
``choose(view) -> Action`` function, and tests run it in memory under a
mock clock.  The CLI picks the bot (layer 4 may import bots; this layer may
not) and passes its ``choose``.

A chooser that raises a :class:`KoiKoiError` (a ``cmd:`` bot whose external
engine crashed, hung or misbehaved) forfeits: we resign on its behalf, emit a
``forfeit`` event saying why, and the match still ends with both signatures.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

import trio

from p2pkoikoi.engine import Action, KoiKoiError, PlayerView
from p2pkoikoi.transport.match_link import NetworkLink

Chooser = Callable[[PlayerView], Action]
Emit = Callable[[dict[str, Any]], None]

ROLES = ("host", "joiner")


def json_emitter(out: IO[str] | None = None) -> Emit:
    """One JSON object per line, flushed at once (a script waits on each line)."""

    encoder = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))

    def emit(obj: dict[str, Any]) -> None:
        stream = out if out is not None else sys.stdout
        stream.write(encoder.encode(obj) + "\n")
        stream.flush()

    return emit


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
    async for update in link.updates:
        if update.kind == "state":
            for ev in update.events:
                out = ev.to_dict()
                if update.actor is not None:
                    out.setdefault("by", ROLES[update.actor])
                emit(out)
            live = link.session.match  # a queued update may be stale (e.g. we resigned since)
            if live is None or live.is_over or live.to_act != link.seat:
                continue
            if link.session.catching_up:  # our own lost actions are coming back first
                continue
            view = live.view(link.seat)  # the live state (after a resume, updates repeat)
            if view.to_act == link.seat and view.legal_actions:
                try:
                    if in_thread:
                        action = await trio.to_thread.run_sync(choose, view, abandon_on_cancel=True)
                    else:
                        action = choose(view)
                except KoiKoiError as exc:
                    reason = f"{ROLES[link.seat]}'s engine failed: {exc}"
                    emit({"event": "forfeit", "by": ROLES[link.seat], "reason": reason})
                    await link.resign(reason)
                    continue
                await link.act(action)
        elif update.kind == "status":
            continue  # already emitted as a note
        elif update.kind == "over":
            if link.result is not None:
                final = match_over_event(link)
                emit(final)
                return final
            return None
    return None
