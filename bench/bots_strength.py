"""Measure the bot levels against each other and print a table (docs/bots.md quotes it).

Long-running: never part of the test suite.  Usage::

    nohup python bench/bots_strength.py --games 400 --jobs 2 --hard hard:playouts=300 \
        > bench/bots_strength.out 2>&1 &

The cheap pairs can be re-run alone with more matches, e.g.
``--pairs medium-easy,easy-random --games 2000``.

Every pair plays ``--games`` six-round matches per preset with seats
alternated, from a fixed seed, so the table is reproducible.
"""

from __future__ import annotations

import argparse
import json
import time

from p2pkoikoi.bots.tournament import run_games, summarize
from p2pkoikoi.engine import get_preset


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--hard", default="hard:playouts=300", help="the hard bot's spec")
    ap.add_argument("--presets", default="online,nintendo")
    ap.add_argument(
        "--pairs",
        default="hard-medium,medium-easy,easy-random",
        help="which pairs to run (the hard pair is the slow one)",
    )
    args = ap.parse_args()
    known = {
        "hard-medium": (args.hard, "medium"),
        "medium-easy": ("medium", "easy"),
        "easy-random": ("easy", "random"),
    }
    pairs = [known[p.strip()] for p in args.pairs.split(",")]
    start = time.monotonic()
    rows = []
    print(
        f"{'preset':9} {'pair':28} {'W-D-L':>11} {'win%':>6} {'95% CI':>13} "
        f"{'Elo (95% CI)':>20} {'pts/match':>9} {'ms/dec A':>8} {'time':>6}",
        flush=True,
    )
    for preset in args.presets.split(","):
        rules = get_preset(preset).with_settings(rounds=args.rounds)
        for a, b in pairs:
            t0 = time.monotonic()
            res = run_games(a, b, rules, args.games, args.seed, args.jobs)
            s = summarize(a, b, res)
            took = time.monotonic() - t0
            rows.append({"preset": preset, **s.to_dict(), "seconds": round(took, 1)})
            print(
                f"{preset:9} {a + ' vs ' + b:28} {f'{s.wins}-{s.draws}-{s.losses}':>11}"
                f" {100 * s.score:5.1f}% {100 * s.score_low:5.1f}-{100 * s.score_high:4.1f}%"
                f" {s.elo:+5.0f} ({s.elo_low:+4.0f}..{s.elo_high:+4.0f})"
                f" {s.mean_point_diff:+9.2f} {s.ms_per_decision_a:8.1f} {took:5.0f}s",
                flush=True,
            )
    total = time.monotonic() - start
    print(
        f"total {total:.0f} s, {args.games} matches of {args.rounds} rounds per pair and preset,"
        f" {args.jobs} processes, seed {args.seed}"
    )
    print("JSON " + json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
