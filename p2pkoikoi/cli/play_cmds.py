"""``p2pkoikoi practice`` and the start screen (``p2pkoikoi`` with no command)."""

from __future__ import annotations

import argparse
import os
import random
from collections.abc import Callable

from p2pkoikoi.engine import Action, InputError, PlayerView, RuleSet, get_preset
from p2pkoikoi.engine.presets import DEFAULT_PRESET, PRESETS

AI_LEVELS = ("random", "easy", "medium", "hard")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "practice",
        help="play a local match against the computer (no network)",
        description="Play a local match against a built-in bot in the terminal table.",
    )
    p.add_argument(
        "--ai",
        default="medium",
        metavar="LEVEL",
        help=f"the bot: {', '.join(AI_LEVELS)} (default medium)",
    )
    p.add_argument(
        "--rules",
        default=DEFAULT_PRESET,
        metavar="PRESET",
        help=f"rule preset: {', '.join(PRESETS)} (default {DEFAULT_PRESET})",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="settings",
        help="change one rule (repeatable)",
    )
    p.add_argument(
        "--rounds", type=int, metavar="N", help="number of rounds (overrides the preset)"
    )
    p.add_argument("--seed", metavar="HEX", help="the match seed, 64 hex digits (default: random)")
    p.add_argument("--ascii", action="store_true", help="draw with plain ASCII characters only")
    p.set_defaults(func=run)


def build_rules(preset: str, settings: list[str], rounds: int | None) -> RuleSet:
    rules = get_preset(preset)
    for s in settings:
        rules = rules.apply_setting(s)
    if rounds is not None:
        rules = rules.with_settings(rounds=rounds)
    return rules


def parse_seed(text: str | None) -> bytes:
    if text is None:
        return os.urandom(32)
    try:
        seed = bytes.fromhex(text.strip())
    except ValueError:
        raise InputError("--seed must be 64 hex digits") from None
    if len(seed) != 32:
        raise InputError(f"--seed must be 64 hex digits (32 bytes), not {len(seed)} bytes")
    return seed


def make_opponent(level: str, seed: int) -> tuple[Callable[[PlayerView], Action], str]:
    """The bot's ``choose`` and its display name; a random player if the bots are not installed."""
    if level not in AI_LEVELS:
        raise InputError(f"unknown AI level {level!r} (choose from: {', '.join(AI_LEVELS)})")
    try:
        from p2pkoikoi.bots import make_bot  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        rng = random.Random(seed)

        def choose(view: PlayerView) -> Action:
            return rng.choice(view.legal_actions)

        return choose, "random"
    bot = make_bot(level, seed)
    return bot.choose, level


def practice(
    rules: RuleSet, match_seed: bytes, level: str, *, ascii: bool, bot_seed: int | None = None
) -> int:
    from p2pkoikoi.transport.link import GameLink, LocalLink
    from p2pkoikoi.ui.app import TableContext, run_table

    choose, kind = make_opponent(
        level, int.from_bytes(match_seed[:8], "big") if bot_seed is None else bot_seed
    )

    async def factory(ctx: TableContext) -> GameLink:
        link = LocalLink(rules, match_seed, choose, names=("You", "Computer"))
        ctx.state.log.append(("class:dim", f"Practice against the {kind} computer player."))
        ctx.nursery.start_soon(link.run)
        return link

    return run_table(factory, ascii=ascii)


def run(args: argparse.Namespace) -> int:
    rules = build_rules(args.rules, args.settings, args.rounds)
    seed = parse_seed(args.seed)
    return practice(rules, seed, args.ai, ascii=args.ascii)


def run_start_screen(args: argparse.Namespace) -> int:
    from p2pkoikoi.ui.start import start_screen

    return start_screen(ascii=bool(getattr(args, "ascii", False)))
