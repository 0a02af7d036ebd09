"""Start-up of a command in new processes, code trees side by side: wall and CPU time.

A figure, never a test.  Each of ``--runs`` rounds starts ``python -c pass``
and then ``python -m p2pkoikoi ARGS`` once per code tree (a checkout's root,
given as ``PYTHONPATH`` and working directory), the trees' order alternating;
the fastest and the median wall time and CPU time (user + system, from the
children's rusage) are printed.  On a busy machine the CPU times and the
ratios say more than the wall times.  ``p2pkoikoi bench`` reports the fastest
run of each command for the installed code alone.  Usage::

    python bench/startup_cost.py --runs 15 --trees BEFORE AFTER -- verify RECORD

``--no-site`` runs every process with ``python -S`` and the interpreter's
site-packages on ``PYTHONPATH`` instead: the same modules are found, but no
``.pth`` hook runs at start-up (an editable install's import finder, a
sandbox's certificate hook: tens of milliseconds that a normal install of
p2pkoikoi does not pay, and that ``python -c pass`` pays too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from p2pkoikoi.cli.bench_protocol import timed_run

#: ``--no-site``: the interpreter's flag and the site-packages directories to search
NO_SITE: list[str] = []


def _run(argv: list[str], tree: str | None) -> tuple[float, float]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree
    if NO_SITE:
        argv = [argv[0], "-S", *argv[1:]]
        env["PYTHONPATH"] = os.pathsep.join([*([tree] if tree else []), *NO_SITE])
    return timed_run(argv, env, tree)  # p2pkoikoi bench's: a blocking wait, the child's rusage


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--trees", nargs="+", required=True, metavar="DIR")
    parser.add_argument(
        "--no-site", action="store_true", help="python -S, site-packages on PYTHONPATH"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="p2pkoikoi's arguments")
    args = parser.parse_args()
    if args.no_site:
        import site

        NO_SITE.extend(site.getsitepackages())
    command = [a for a in args.command if a != "--"]
    py = sys.executable
    times: dict[str, list[tuple[float, float]]] = {"python -c pass": []}
    times.update({t: [] for t in args.trees})
    for i in range(args.runs):
        times["python -c pass"].append(_run([py, "-c", "pass"], None))
        order = args.trees if i % 2 == 0 else args.trees[::-1]
        for tree in order:
            times[tree].append(_run([py, "-m", "p2pkoikoi", *command], tree))
    print(f"p2pkoikoi {' '.join(command)}: {args.runs} runs each, milliseconds")
    for name, got in times.items():
        wall = [w * 1000 for w, _ in got]
        cpu = [c * 1000 for _, c in got]
        print(f"  {name:40} wall min {min(wall):7.1f} median {statistics.median(wall):7.1f}"
              f"   CPU min {min(cpu):7.1f} median {statistics.median(cpu):7.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
