"""Soak: many headless matches over loopback TCP between random bots, in one process.

Long-running: never part of the test suite.  Each match is a real
``open_host`` (listening on 127.0.0.1, port 0) and a real ``open_join`` with
the host's invite, both driven by :func:`play_headless`, every record written
(atomically, after every action) and, with ``--verify``, verified.  ``--concurrency``
matches run at once in one trio loop.  Reports matches completed, desyncs
(the two sides' final state hash or transcript hash differ: must be 0),
failures, throughput and the process's peak resident memory.  Usage::

    nohup python bench/soak.py --matches 1000 --concurrency 16 --rounds 1 \
        > bench/soak.out 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.cli.headless import play_headless
from p2pkoikoi.engine import Action, KoiKoiError, PlayerView, RuleSet, get_preset
from p2pkoikoi.session import decode_record
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.notes import Note
from p2pkoikoi.transport.open.host import open_host
from p2pkoikoi.transport.open.join import open_join
from p2pkoikoi.transport.open.options import HostOptions, JoinOptions
from p2pkoikoi.transport.player import Player


def chooser(seed: int) -> Callable[[PlayerView], Action]:
    rng = random.Random(seed)
    return lambda view: rng.choice(view.legal_actions)


class Stats:
    def __init__(self) -> None:
        self.completed = 0
        self.desyncs = 0
        self.failures: list[str] = []
        self.verified = 0
        self.actions = 0


async def one_match(
    n: int, rules: RuleSet, records: Path, stats: Stats, verify: bool, timeouts: Timeouts
) -> None:
    invite: list[str] = []
    ready = trio.Event()
    finals: dict[str, dict[str, Any] | None] = {}

    def host_note(note: Note) -> None:
        if note.get("event") == "listening":
            invite.append(str(note["invite"]))
            ready.set()

    def nop(obj: dict[str, Any]) -> None:
        pass

    async def host() -> None:
        async with open_host(
            Player(
                Ed25519PrivateKey.generate(),
                "Host",
                record_path=records / f"{n}-host.koikoi",
                timeouts=timeouts,
            ),
            HostOptions(rules, port=0, bind="127.0.0.1"),
            notify=host_note,
        ) as link:
            finals["host"] = await play_headless(link, chooser(2 * n), nop, in_thread=False)

    async def join() -> None:
        await ready.wait()
        async with open_join(
            invite[0],
            Player(
                Ed25519PrivateKey.generate(),
                "Joiner",
                record_path=records / f"{n}-joiner.koikoi",
                timeouts=timeouts,
            ),
            JoinOptions(expected_rules=rules),
        ) as link:
            finals["joiner"] = await play_headless(link, chooser(2 * n + 1), nop, in_thread=False)

    try:
        with trio.fail_after(600):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(host)
                nursery.start_soon(join)
    except* (KoiKoiError, trio.TooSlowError, OSError) as group:  # bare or from the nursery
        errors = [f"{type(e).__name__}: {e}" for e in group.exceptions]
        stats.failures.append(f"match {n}: {'; '.join(errors)}")
    if len(finals) < 2 and stats.failures and stats.failures[-1].startswith(f"match {n}:"):
        return
    h, j = finals.get("host"), finals.get("joiner")
    if h is None or j is None:
        stats.failures.append(f"match {n}: unfinished ({h}, {j})")
        return
    stats.completed += 1
    if h["final_hash"] != j["final_hash"] or h["transcript_hash"] != j["transcript_hash"]:
        stats.desyncs += 1
        stats.failures.append(f"match {n}: DESYNC host {h} joiner {j}")
    for side in ("host", "joiner"):
        path = records / f"{n}-{side}.koikoi"
        rec = decode_record(path.read_bytes())
        if side == "host":
            stats.actions += len(rec.actions)
        if verify:
            report = verify_record(rec)
            if report.ok and report.complete:
                stats.verified += 1
            else:
                stats.failures.append(f"match {n}: {side} record fails verify: {report.to_dict()}")
        path.unlink()


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    rules = get_preset(args.rules).with_settings(rounds=args.rounds)
    timeouts = Timeouts(handshake=120, reveal=120)  # a loaded box must not cause false failures
    stats = Stats()
    limiter = trio.CapacityLimiter(args.concurrency)
    start = time.monotonic()
    next_report = [start + args.report_every]
    with tempfile.TemporaryDirectory(prefix="p2pkoikoi-soak-") as tmp:
        records = Path(tmp)

        async def run(n: int) -> None:
            async with limiter:
                await one_match(n, rules, records, stats, args.verify, timeouts)
            now = time.monotonic()
            if now >= next_report[0]:
                next_report[0] = now + args.report_every
                print(
                    f"  {stats.completed} completed, {stats.desyncs} desyncs, "
                    f"{len(stats.failures)} failures, {now - start:.0f}s",
                    flush=True,
                )

        async with trio.open_nursery() as nursery:
            for n in range(args.matches):
                nursery.start_soon(run, n)
    elapsed = time.monotonic() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "matches": args.matches,
        "completed": stats.completed,
        "desyncs": stats.desyncs,
        "failures": len(stats.failures),
        "failure_examples": stats.failures[:5],
        "records_verified": stats.verified,
        "actions": stats.actions,
        "rounds": args.rounds,
        "rules": args.rules,
        "concurrency": args.concurrency,
        "seconds": round(elapsed, 1),
        "matches_per_second": round(stats.completed / elapsed, 2),
        "peak_rss_mb": round(peak_mb, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--rules", default="online")
    ap.add_argument("--verify", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--report-every", type=float, default=30.0, metavar="SECONDS")
    args = ap.parse_args()
    result = trio.run(soak, args)
    print(json.dumps(result, indent=1), flush=True)
    return 0 if result["desyncs"] == 0 and result["failures"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
