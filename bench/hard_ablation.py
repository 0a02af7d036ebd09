"""Hard-bot ablations: one change at a time, in paired ("duplicate") matches.

Long-running: never part of the test suite.  Usage::

    python bench/hard_ablation.py "hard:10|infer=0" hard:10 --games 400 --rules online

A spec is any ``make_bot`` spec, optionally followed by ``|attribute=value``
settings applied to the bot after it is built (for the hard bot:
``prior_weight``, ``infer``, ``infer_prior``, ``discard_risk``, and the hand
reader's ``_reader.strong``, ``_reader.weak``, ``_reader.draws``, ``_reader.opening``), so a change can be measured
before it becomes a default.  Each deal is played twice with the seats
swapped (games ``2k`` and ``2k+1`` share match seed ``k``), which cancels
much of the luck of the cards; the paired standard error printed beside the
Wilson interval uses that.  Draws count half a win.

``--oracle`` hands A's hand reader the opponent's true hand before each of
its decisions (A must be a ``hard`` spec): a cheat, to measure how much
knowing the hand could be worth at most -- a ceiling for any reading, not a bot.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

from p2pkoikoi.bots import Bot, make_bot
from p2pkoikoi.bots.tournament import bot_seed, match_seed, wilson
from p2pkoikoi.engine import PlayerView, get_preset, new_match
from p2pkoikoi.engine.cards import iter_mask


def build(spec: str, seed: int) -> Bot:
    """``make_bot(spec)`` with ``|name=value`` attribute settings."""
    base, *settings = spec.split("|")
    bot = make_bot(base, seed, reproducible=True)
    for item in settings:
        path, _, value = item.partition("=")
        *parents, name = path.split(".")
        obj: object = bot
        for part in parents:  # e.g. ``_reader.strong``: a setting of a part of the bot
            obj = getattr(obj, part)
        if not hasattr(obj, name):
            raise SystemExit(f"{base} has no setting {path!r}")
        old = getattr(obj, name)
        setattr(obj, name, type(old)(float(value)) if not isinstance(old, bool) else value == "1")
    return bot


class Oracle:
    """A stand-in for :class:`~p2pkoikoi.bots.inference.HandReader` that knows the
    opponent's hand (``mask``, set by :func:`game`): its cards get so much weight
    that every guess holds exactly them."""

    def __init__(self) -> None:
        self.mask = 0

    def observe(self, static: object, view: PlayerView) -> None:
        pass

    def weights(self, view: PlayerView) -> dict[int, float] | None:
        return {c: 1e9 for c in iter_mask(self.mask & view.unseen.mask)} or None

    def hold(self, view: PlayerView) -> None:
        return None


def game(
    task: tuple[str, str, str, int, int, int, bool],
) -> tuple[int, float, int, float, float, int, int]:
    spec_a, spec_b, preset, rounds, seed, i, oracle = task
    rules = get_preset(preset).with_settings(rounds=rounds)
    mseed = match_seed(seed, i // 2)
    a_seat = i % 2
    b_seat = 1 - a_seat
    bot_a = build(spec_a, bot_seed(mseed, "A"))
    bot_b = build(spec_b, bot_seed(mseed, "B"))
    cheat = Oracle()
    if oracle:
        bot_a._reader = cheat  # type: ignore[attr-defined]  # noqa: SLF001  the oracle replaces the bot's reader (checked in main())
    bots = (bot_a, bot_b) if a_seat == 0 else (bot_b, bot_a)
    m = new_match(rules.with_open_deal(), mseed)
    secs = [0.0, 0.0]
    dec = [0, 0]
    while not m.is_over:
        p = m.to_act
        assert p is not None
        if p == a_seat:
            cheat.mask = m.hand(b_seat).mask
        t0 = time.perf_counter()
        action = bots[p].choose(m.view(p))
        secs[p] += time.perf_counter() - t0
        dec[p] += 1
        m = m.apply(action)[0]
    score = 0.5 if m.winner is None else (1.0 if m.winner == a_seat else 0.0)
    diff = m.scores[a_seat] - m.scores[b_seat]
    return i, score, diff, secs[a_seat], secs[b_seat], dec[a_seat], dec[b_seat]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--games", type=int, default=400, help="matches (even: deals are paired)")
    ap.add_argument("--rules", default="online")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--oracle", action="store_true", help="A's guesses hold the true hand")
    args = ap.parse_args()
    if args.oracle and not hasattr(build(args.a, 0), "_reader"):
        raise SystemExit(f"--oracle needs a hard bot as A, not {args.a}")
    t0 = time.monotonic()
    tasks = [
        (args.a, args.b, args.rules, args.rounds, args.seed, i, args.oracle)
        for i in range(args.games)
    ]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.jobs, mp_context=ctx) as pool:
        res = sorted(pool.map(game, tasks, chunksize=2))
    n = len(res)
    score = sum(r[1] for r in res) / n
    low, high = wilson(score, n)
    pairs = [(res[k][1] + res[k + 1][1]) / 2 for k in range(0, n - 1, 2)]
    mean = sum(pairs) / len(pairs)
    se = math.sqrt(sum((x - mean) ** 2 for x in pairs) / max(1, len(pairs) - 1) / len(pairs))
    ms_a = 1000 * sum(r[3] for r in res) / max(1, sum(r[5] for r in res))
    ms_b = 1000 * sum(r[4] for r in res) / max(1, sum(r[6] for r in res))
    print(
        f"{args.rules} {args.a}{' (oracle)' if args.oracle else ''} vs {args.b}: {n} matches, A scores {100 * score:.1f}%"
        f" (95% CI {100 * low:.1f}-{100 * high:.1f}%, paired SE {100 * se:.1f}),"
        f" points/match {sum(r[2] for r in res) / n:+.2f},"
        f" ms/decision {ms_a:.1f} / {ms_b:.1f}, {time.monotonic() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
