"""``p2pkoikoi practice`` and the start screen (``p2pkoikoi`` with no command)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from p2pkoikoi import doc_url
from p2pkoikoi.cli.engine_cmds import add_rules_options, rules_from_args
from p2pkoikoi.engine.errors import InputError

if TYPE_CHECKING:
    from p2pkoikoi.engine import Action, PlayerView, RuleSet


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "practice",
        help="play a local match against the computer (no network)",
        description="Play a local match against a built-in bot in the terminal table.",
    )
    p.add_argument(
        "--ai",
        "--bot",
        default="medium",
        metavar="LEVEL",
        help="the computer player (default medium): random, easy, medium, hard, or"
        f" cmd:COMMAND for an engine of your own, specified in {doc_url('docs/engine-protocol.md')}",
    )
    add_rules_options(p)
    p.add_argument("--seed", metavar="HEX", help="the match seed, 64 hex digits (default: random)")
    p.add_argument("--ascii", action="store_true", help="draw with plain ASCII characters only")
    p.set_defaults(func=run)


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
    """The bot's ``choose`` and its display name (``make_bot`` rejects an unknown spec)."""
    from p2pkoikoi.bots import make_bot

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
    rules = rules_from_args(args)
    seed = parse_seed(args.seed)
    return practice(rules, seed, args.ai, ascii=args.ascii)


def _network_command(argv: list[str]) -> int | None:
    """Run ``p2pkoikoi host`` / ``join`` if the network commands are installed; else ``None``."""
    from p2pkoikoi.cli import build_parser

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        return None
    func = getattr(args, "func", None)
    if func is None:
        return None
    return int(func(args))


def run_start_screen(args: argparse.Namespace) -> int:
    """The start screen, given what its choices run (the interface does not import the CLI)."""
    from p2pkoikoi.ui.start import start_screen

    ascii = bool(getattr(args, "ascii", False))

    def practise(rules: RuleSet, level: str) -> int:
        return practice(rules, os.urandom(32), level, ascii=ascii)

    return start_screen(practice=practise, network=_network_command, ascii=ascii)
