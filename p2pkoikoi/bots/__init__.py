"""Bots that play fair: each sees only its seat's :class:`PlayerView`.

``make_bot(spec, seed)`` builds one from a spec string:

``random`` | ``easy`` | ``medium`` | ``hard`` | ``hard:BUDGET_MS`` |
``hard:playouts=N`` | ``cmd:COMMAND``

and ``hard-v1`` (with the same ``:BUDGET_MS`` or ``:playouts=N``): the hard
bot before the playout core, kept to measure what the core is worth.

A bot is any object with a ``name`` and ``choose(view) -> Action``
(:class:`Bot`); practice games pass ``bot.choose`` to ``LocalLink``.
"""

from __future__ import annotations

import os
import shutil

from p2pkoikoi.bots.base import Bot, EasyBot, MediumBot, RandomBot
from p2pkoikoi.bots.external import DEFAULT_TIMEOUT, EngineBot, EngineFailure
from p2pkoikoi.bots.mcts import DEFAULT_PLAYOUTS, HardBot
from p2pkoikoi.bots.mcts_v1 import V1_PLAYOUTS, HardBotV1
from p2pkoikoi.engine import InputError

LEVELS = ("random", "easy", "medium", "hard")
SPEC_HELP = (
    "random, easy, medium, hard, hard:BUDGET_MS, hard:playouts=N, cmd:COMMAND"
    " (or hard-v1 in place of hard: the previous hard bot)"
)
#: the cap on a bare ``hard`` decision, in milliseconds, when it is allowed a clock
DEFAULT_CAP_MS = 1000.0


def make_bot(
    spec: str, seed: int, *, engine_timeout: float = DEFAULT_TIMEOUT, reproducible: bool = False
) -> Bot:
    """The bot a spec names, seeded with ``seed``.

    A bare ``hard`` does :data:`DEFAULT_PLAYOUTS` playouts but stops at one
    second on a slow machine; ``reproducible=True`` (selfplay) drops that
    clock so results depend on the seed alone.  Unknown specs raise
    :class:`InputError` naming them.
    """
    if not isinstance(spec, str):
        raise InputError(f"bot spec must be text, not {type(spec).__name__}")
    text = spec.strip()
    low = text.lower()
    if low == "random":
        return RandomBot(seed)
    if low == "easy":
        return EasyBot(seed)
    if low == "medium":
        return MediumBot(seed)
    for prefix, cls, default in (
        ("hard-v1", HardBotV1, V1_PLAYOUTS),
        ("hard", HardBot, DEFAULT_PLAYOUTS),
    ):
        if low == prefix:
            return cls(seed, playouts=default, budget_ms=None if reproducible else DEFAULT_CAP_MS)
        if low.startswith(prefix + ":"):
            arg = low[len(prefix) + 1 :].strip()
            if arg.startswith("playouts="):
                n = _whole(arg[9:], spec)
                if not 1 <= n <= 1_000_000:
                    raise InputError(f"bot {spec!r}: playouts must be between 1 and 1000000")
                return cls(seed, playouts=n)
            ms = _whole(arg.removesuffix("ms"), spec)
            if not 1 <= ms <= 600_000:
                raise InputError(f"bot {spec!r}: the budget must be between 1 and 600000 ms")
            return cls(seed, playouts=None, budget_ms=float(ms))
    if low.startswith("cmd:"):
        command = text[4:].strip()
        if not command:
            raise InputError(
                "bot 'cmd:' needs a command, as in cmd:python examples/simple_engine.py"
            )
        bot = EngineBot(command, seed, timeout=engine_timeout)
        program = bot.argv[0]
        if shutil.which(program) is None:
            # a mistyped program is bad input: say so now, not at the first decision
            # (a headless host would otherwise wait for a joiner only to forfeit)
            what = "is not executable" if os.path.exists(program) else "not found"
            raise InputError(f"bot {spec!r}: engine program {program!r} {what}")
        return bot
    raise InputError(f"unknown bot {spec!r} (choose from: {SPEC_HELP})")


def _whole(text: str, spec: str) -> int:
    try:
        return int(text.strip(), 10)
    except ValueError:
        raise InputError(f"bad bot {spec!r}: expected a whole number after ':'") from None


def close_bot(bot: Bot) -> None:
    """Release what a bot holds (an engine process); harmless for the others."""
    close = getattr(bot, "close", None)
    if callable(close):
        close()


__all__ = [
    "DEFAULT_PLAYOUTS",
    "LEVELS",
    "SPEC_HELP",
    "Bot",
    "EasyBot",
    "EngineBot",
    "EngineFailure",
    "HardBot",
    "HardBotV1",
    "MediumBot",
    "RandomBot",
    "close_bot",
    "make_bot",
]
