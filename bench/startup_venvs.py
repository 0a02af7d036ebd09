"""Start-up of the installed program in several venvs, side by side: CPU time.

A figure, never a test.  ``bench/startup_cost.py`` puts code trees on
``PYTHONPATH``; this one runs what a user runs, each venv's own ``python -c pass``
and ``p2pkoikoi`` script (a ``pip install .`` venv and an editable one differ most
in what ``python -c pass`` itself costs).  Each of ``--runs`` rounds starts every
command of every venv once, so a change of load touches them all; the fastest CPU
time (user + system, the child's own rusage) and its ratio to the same venv's
``python -c pass`` are printed, with the median.  Usage::

    python bench/startup_venvs.py --runs 30 --record REC12 BEFORE_VENV AFTER_VENV
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from p2pkoikoi.cli.bench_protocol import timed_run

COMMANDS = ("pass", "--help", "score", "rules", "verify")


def _argv(venv: Path, command: str, record: str) -> list[str]:
    script = str(venv / "bin" / "p2pkoikoi")
    return {
        "pass": [str(venv / "bin" / "python"), "-c", "pass"],
        "--help": [script, "--help"],
        "score": [script, "score", "--rules", "online", "1b", "3b"],
        "rules": [script, "rules"],
        "verify": [script, "verify", record],
    }[command]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--record", required=True, help="a record for verify")
    parser.add_argument("venvs", nargs="+", type=Path)
    args = parser.parse_args()
    cpu: dict[tuple[Path, str], list[float]] = {}
    for _ in range(args.runs):
        for venv in args.venvs:
            for command in COMMANDS:
                _, seconds = timed_run(_argv(venv, command, args.record), None, "/")
                cpu.setdefault((venv, command), []).append(1000 * seconds)
    for venv in args.venvs:
        base = min(cpu[venv, "pass"])
        cells = []
        for command in COMMANDS:
            best = min(cpu[venv, command])
            median = statistics.median(cpu[venv, command])
            cells.append(f"{command} {best:.1f} ms ({best / base:.2f} x, median {median:.1f})")
        print(f"{venv}: " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
