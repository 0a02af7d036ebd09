"""Bot-vs-bot matches and their statistics (``p2pkoikoi selfplay``, ``bench/``).

Reproducibility: game ``i`` of a tournament with seed ``S`` is dealt from
``SHA-256(tag, S, i)`` and its bots are seeded from that match seed, so a
game's outcome depends on (S, i, bots, rules) alone -- not on how many
processes run the tournament or in which order games finish.  Bot A takes
seat 0 in even games and seat 1 in odd ones, so the dealer advantage cancels.

A bot that fails (an external engine that is slow, crashes or misbehaves,
:class:`~p2pkoikoi.engine.errors.KoiKoiError`) forfeits the match: the other
side wins it, and the failure message is kept in the result.

Worker processes are *spawned* (a fresh interpreter that imports this
module), never forked: the calling process may have threads (trio keeps an
idle worker thread after ``to_thread``), and forking a threaded process can
deadlock the child -- Python 3.12+ warns about it, and 3.14 stops forking by
default on Linux.  ``spawn`` exists on every platform and behaves the same on
every Python version; it costs each worker an interpreter start and the
package's imports (about a second for a tournament), once per run.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass

from p2pkoikoi.bots import close_bot, make_bot
from p2pkoikoi.engine import KoiKoiError, RuleSet, new_match

SEED_TAG = b"p2pkoikoi/selfplay/v1\x00"

#: How worker processes start (see the module docstring): the same on every
#: platform and Python version, and no fork() of a possibly threaded process.
START_METHOD = "spawn"


def match_seed(seed: int, index: int) -> bytes:
    """The 32-byte match seed of game ``index`` in a tournament seeded ``seed``."""
    return hashlib.sha256(SEED_TAG + f"{seed}:{index}".encode()).digest()


def bot_seed(mseed: bytes, side: str) -> int:
    return int.from_bytes(hashlib.sha256(mseed + side.encode()).digest()[:8], "big")


@dataclass(frozen=True)
class GameResult:
    """One match, from bot A's side: ``outcome`` is ``"win"``, ``"draw"`` or ``"loss"``."""

    index: int
    a_seat: int
    outcome: str
    points_a: int
    points_b: int
    rounds: int
    forfeit: str  # "" or who forfeited and why
    decisions: tuple[int, int]  # (A, B)
    seconds: tuple[float, float]  # thinking time (A, B)


def play_game(
    spec_a: str, spec_b: str, rules: RuleSet, seed: int, index: int, engine_timeout: float = 10.0
) -> GameResult:
    """Play game ``index``; any bot failure forfeits the match for that bot's side."""
    mseed = match_seed(seed, index)
    a_seat = index % 2
    bot_a = make_bot(spec_a, bot_seed(mseed, "A"), engine_timeout=engine_timeout, reproducible=True)
    bot_b = make_bot(spec_b, bot_seed(mseed, "B"), engine_timeout=engine_timeout, reproducible=True)
    bots = (bot_a, bot_b) if a_seat == 0 else (bot_b, bot_a)
    side = ("A", "B") if a_seat == 0 else ("B", "A")
    dec = [0, 0]
    secs = [0.0, 0.0]
    forfeit = ""
    forfeiter = -1
    m = new_match(rules, mseed)
    try:
        while not m.is_over:
            p = m.to_act
            assert p is not None
            t0 = time.perf_counter()
            try:
                action = bots[p].choose(m.view(p))
                m = m.apply(action)[0]
            except KoiKoiError as exc:
                forfeiter = p
                forfeit = f"{side[p]} ({bots[p].name}) forfeits: {exc}"
                break
            finally:
                secs[p] += time.perf_counter() - t0
                dec[p] += 1
    finally:
        close_bot(bot_a)
        close_bot(bot_b)
    b_seat = 1 - a_seat
    if forfeiter >= 0:
        outcome = "loss" if forfeiter == a_seat else "win"
    elif m.winner is None:
        outcome = "draw"
    else:
        outcome = "win" if m.winner == a_seat else "loss"
    return GameResult(
        index=index,
        a_seat=a_seat,
        outcome=outcome,
        points_a=m.scores[a_seat],
        points_b=m.scores[b_seat],
        rounds=len(m.results),
        forfeit=forfeit,
        decisions=(dec[a_seat], dec[b_seat]),
        seconds=(secs[a_seat], secs[b_seat]),
    )


def _play_star(args: tuple[str, str, RuleSet, int, int, float]) -> GameResult:
    return play_game(*args)


def run_games(
    spec_a: str,
    spec_b: str,
    rules: RuleSet,
    games: int,
    seed: int,
    jobs: int = 1,
    engine_timeout: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[GameResult]:
    """Play ``games`` matches on ``jobs`` processes; results in game order."""
    tasks = [(spec_a, spec_b, rules, seed, i, engine_timeout) for i in range(games)]
    results: list[GameResult] = []
    if jobs <= 1 or games <= 1:
        for t in tasks:
            results.append(_play_star(t))
            if progress:
                progress(len(results), games)
        return results
    context = multiprocessing.get_context(START_METHOD)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending: set[Future[GameResult]] = set()
        it: Iterator[tuple[str, str, RuleSet, int, int, float]] = iter(tasks)
        # Keep a bounded queue so an interrupt does not leave thousands of games queued.
        for t in it:
            pending.add(pool.submit(_play_star, t))
            if len(pending) >= jobs * 4:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                results.append(f.result())
                if progress:
                    progress(len(results), games)
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(_play_star, nxt))
    results.sort(key=lambda r: r.index)
    return results


# ---------------------------------------------------------------------- statistics
Z95 = 1.959963984540054


def wilson(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``score`` observed over ``n`` trials."""
    if n <= 0:
        return (0.0, 1.0)
    denom = 1 + z * z / n
    centre = (score + z * z / (2 * n)) / denom
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo(p: float) -> float:
    """The Elo difference that predicts an expected score ``p`` (infinite at 0 and 1)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / p - 1.0)


@dataclass(frozen=True)
class Summary:
    """Everything ``selfplay`` reports, from bot A's side (draws count half a win)."""

    bot_a: str
    bot_b: str
    games: int
    wins: int
    draws: int
    losses: int
    forfeits_a: int
    forfeits_b: int
    score: float
    score_low: float
    score_high: float
    elo: float
    elo_low: float
    elo_high: float
    mean_point_diff: float
    ms_per_decision_a: float
    ms_per_decision_b: float

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        for k in ("elo", "elo_low", "elo_high"):
            v = d[k]
            if isinstance(v, float) and math.isinf(v):
                d[k] = None if math.isnan(v) else ("+inf" if v > 0 else "-inf")
        return d


def summarize(spec_a: str, spec_b: str, results: list[GameResult]) -> Summary:
    n = len(results)
    w = sum(r.outcome == "win" for r in results)
    d = sum(r.outcome == "draw" for r in results)
    lo = sum(r.outcome == "loss" for r in results)
    fa = sum(r.outcome == "loss" and r.forfeit.startswith("A ") for r in results)
    fb = sum(r.outcome == "win" and r.forfeit.startswith("B ") for r in results)
    score = (w + d / 2) / n if n else 0.0
    low, high = wilson(score, n)
    diff = sum(r.points_a - r.points_b for r in results) / n if n else 0.0
    da = sum(r.decisions[0] for r in results)
    db = sum(r.decisions[1] for r in results)
    ta = sum(r.seconds[0] for r in results)
    tb = sum(r.seconds[1] for r in results)
    return Summary(
        bot_a=spec_a,
        bot_b=spec_b,
        games=n,
        wins=w,
        draws=d,
        losses=lo,
        forfeits_a=fa,
        forfeits_b=fb,
        score=score,
        score_low=low,
        score_high=high,
        elo=elo(score),
        elo_low=elo(low),
        elo_high=elo(high),
        mean_point_diff=diff,
        ms_per_decision_a=1000 * ta / da if da else 0.0,
        ms_per_decision_b=1000 * tb / db if db else 0.0,
    )


def format_summary(s: Summary) -> str:
    def e(x: float) -> str:
        return f"{x:+.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")

    lines = [
        f"{s.bot_a} vs {s.bot_b}: {s.games} matches, seats alternated",
        f"  {s.bot_a}: {_n(s.wins, 'win')}, {_n(s.draws, 'draw')}, {_n(s.losses, 'loss')}"
        + (f" ({s.forfeits_a} by forfeit)" if s.forfeits_a else "")
        + (f"; {s.bot_b} forfeited {s.forfeits_b}" if s.forfeits_b else ""),
        f"  win rate {100 * s.score:.1f}% (draws count half), 95% CI (Wilson)"
        f" {100 * s.score_low:.1f}%..{100 * s.score_high:.1f}%",
        f"  Elo difference {e(s.elo)} (95% CI {e(s.elo_low)}..{e(s.elo_high)})",
        f"  mean point difference {s.mean_point_diff:+.2f} per match",
        f"  thinking time {s.ms_per_decision_a:.1f} ms / {s.ms_per_decision_b:.1f} ms per decision",
    ]
    return "\n".join(lines)


def _n(count: int, noun: str) -> str:
    """``"1 draw"``, ``"2 draws"``, ``"3 losses"``."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}es" if noun.endswith("s") else f"{count} {noun}s"
