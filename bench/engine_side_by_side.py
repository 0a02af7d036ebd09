"""This tree's engine against an older revision (and optionally another engine), side by side.

Never part of the test suite.  Usage::

    python bench/engine_side_by_side.py --against bd3f75b --seconds 1 --rounds 5 \\
        [--node /tmp/senri/bench.js]

The older revision's ``p2pkoikoi`` package is exported with ``git archive`` into a
temporary directory under another name (``p2pkoikoi_old``), so both engines run in
this one process, slice after slice, and the machine's load falls on both alike.
Each slice is one second of this process's CPU time (``time.process_time``).
``--node`` runs a JavaScript benchmark between rounds of slices; it must print one
number, rounds a second over ``argv[2]`` seconds of its own CPU time (docs/engine.md
says how the Senridogs/hanafuda one was built).  Prints best and median per engine.
"""

from __future__ import annotations

import argparse
import importlib
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2pkoikoi import engine as new_engine  # noqa: E402
from p2pkoikoi.engine.playout import DONE, Playout, quick_deck  # noqa: E402


def export_old(rev: str, into: Path) -> ModuleType:
    """``rev``'s engine as the package ``p2pkoikoi_old`` (imports renamed)."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "p2pkoikoi"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    (into / "p2pkoikoi").rename(into / "p2pkoikoi_old")
    for f in (into / "p2pkoikoi_old").rglob("*.py"):
        text = f.read_text()
        f.write_text(re.sub(r"\bp2pkoikoi\.", "p2pkoikoi_old.", text))
    sys.path.insert(0, str(into))
    return importlib.import_module("p2pkoikoi_old.engine")


def match_rate(eng: Any, with_events: bool, span: float, rng: random.Random) -> float:
    """Random 12-round matches through ``eng`` for ``span`` CPU seconds: rounds a second."""
    rules = eng.get_preset("online").with_settings(rounds=12, scoring="sum")
    count = 0
    start = time.process_time()
    while time.process_time() - start < span:
        m = eng.new_match(rules, rng.randbytes(32))
        while not m.is_over:
            acts = m.legal_actions()
            a = acts[rng.randrange(len(acts))]
            m = m.apply(a)[0] if with_events else m.after(a)
        count += len(m.results)
    return count / (time.process_time() - start)


def core_rate(span: float, rng: random.Random) -> float:
    """Random rounds through the search core, deal to round end: rounds a second."""
    rules = new_engine.get_preset("online").with_settings(rounds=12, scoring="sum")
    count = 0
    start = time.process_time()
    while time.process_time() - start < span:
        p = Playout.deal(rules, lambda: quick_deck(rng), count & 1)
        while p.phase != DONE:
            moves = p.moves()
            p.do(moves[rng.randrange(len(moves))])
        count += 1
    return count / (time.process_time() - start)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--against", default="main", help="the older revision (default main)")
    ap.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per slice")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of slices")
    ap.add_argument("--node", metavar="JS", help="a Node benchmark to run between slices")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = export_old(args.against, Path(tmp))
        span = args.seconds
        measures: dict[str, Callable[[random.Random], float]] = {
            "old after": lambda r: match_rate(old, False, span, r),
            "new after": lambda r: match_rate(new_engine, False, span, r),
            "old apply (events)": lambda r: match_rate(old, True, span, r),
            "new apply (events)": lambda r: match_rate(new_engine, True, span, r),
            "new search core": lambda r: core_rate(span, r),
        }
        if args.node:
            node = args.node
            measures["node"] = lambda r: float(
                subprocess.run(
                    ["node", node, str(span)], capture_output=True, text=True, check=True
                ).stdout.split()[-1]
            )
        results: dict[str, list[float]] = {k: [] for k in measures}
        for i in range(args.rounds):
            for name, measure in measures.items():
                results[name].append(measure(random.Random(i)))
    print(f"{'engine':20} {'best':>8} {'median':>8}   rounds/s, {args.rounds} slices of {span:g} s")
    for name, rates in results.items():
        rates.sort()
        print(f"{name:20} {rates[-1]:8.0f} {rates[len(rates) // 2]:8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
