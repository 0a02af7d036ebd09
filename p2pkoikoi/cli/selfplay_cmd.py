"""``p2pkoikoi selfplay``: bot-vs-bot tournaments, reproducible from a seed.

The statistics live in :mod:`p2pkoikoi.bots.tournament`; this module only
reads arguments, draws a progress bar on a terminal and prints the report
(text, or one JSON object with ``--json`` for scripts and ``bench/``).
"""

from __future__ import annotations

import argparse
import sys
import time

from p2pkoikoi.cli.engine_cmds import add_rules_options, rules_from_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DESCRIPTION = (
    "Bot-vs-bot matches with seats alternated. Reports wins, draws and losses"
    " for the first bot, a 95% Wilson interval on its win rate (draws count half)"
    " and the Elo difference. Bots: {specs}."
)


class _HelpWithBots(argparse.Action):
    """``selfplay --help``: names the bots, importing them only then (not for every command)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from p2pkoikoi.bots import SPEC_HELP

        parser.description = DESCRIPTION.format(specs=SPEC_HELP)
        parser.print_help()
        parser.exit()


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "selfplay",
        help="play bots against each other and report their strength",
        description=DESCRIPTION.format(specs="see --help"),
        add_help=False,
    )
    p.add_argument(
        "-h", "--help", action=_HelpWithBots, nargs=0, help="show this help message and exit"
    )
    p.add_argument("--bots", required=True, metavar="A,B", help="the two bots, comma-separated")
    p.add_argument("--games", type=int, default=100, metavar="N", help="matches (default 100)")
    add_rules_options(p)
    p.add_argument("--seed", type=int, default=0, metavar="S", help="tournament seed")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="worker processes")
    p.add_argument(
        "--engine-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="per-decision limit for cmd: engines (default 10)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def parse_bots(text: str) -> tuple[str, str]:
    # cmd: specs may contain commas; only the first comma outside cmd: separates
    from p2pkoikoi.engine.errors import InputError

    parts = text.split(",", 1)
    if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
        raise InputError(f"--bots needs two bots separated by a comma, not {text!r}")
    from p2pkoikoi.bots import make_bot

    a, b = parts[0].strip(), parts[1].strip()
    for spec in (a, b):
        if not spec.lower().startswith("cmd:"):
            make_bot(spec, 0)  # validates; external engines are checked when they start
    return a, b


def run(args: argparse.Namespace) -> int:
    import json

    from p2pkoikoi.bots.tournament import format_summary, run_games, summarize
    from p2pkoikoi.engine.errors import InputError

    spec_a, spec_b = parse_bots(args.bots)
    if args.games < 1:
        raise InputError("--games must be at least 1")
    if not 1 <= args.jobs <= 256:
        raise InputError("--jobs must be between 1 and 256")
    if args.engine_timeout <= 0:
        raise InputError("--engine-timeout must be positive")
    rules = rules_from_args(args)
    tty = sys.stderr.isatty()
    start = time.monotonic()

    def progress(done: int, total: int) -> None:
        if not tty:
            return
        width = 30
        fill = width * done // total
        el = time.monotonic() - start
        eta = el / done * (total - done) if done else 0.0
        sys.stderr.write(
            f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total}"
            f"  {el:.0f}s elapsed, ~{eta:.0f}s left "
        )
        sys.stderr.flush()
        if done == total:
            sys.stderr.write("\n")

    results = run_games(
        spec_a,
        spec_b,
        rules,
        args.games,
        args.seed,
        args.jobs,
        engine_timeout=args.engine_timeout,
        progress=progress,
    )
    summary = summarize(spec_a, spec_b, results)
    elapsed = time.monotonic() - start
    if args.json:
        out = summary.to_dict()
        out.update(
            rules=args.rules,
            rounds=rules.rounds,
            seed=args.seed,
            jobs=args.jobs,
            seconds=round(elapsed, 2),
            draws_count_half=True,
            forfeits=[r.forfeit for r in results if r.forfeit][:10],
        )
        print(json.dumps(out, sort_keys=True))
    else:
        print(format_summary(summary))
        for r in results:
            if r.forfeit:
                print(f"  game {r.index}: {r.forfeit}")
        print(f"  ({args.rules}, {rules.rounds} rounds, seed {args.seed}, {elapsed:.1f} s)")
    return 0
