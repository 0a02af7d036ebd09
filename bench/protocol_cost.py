"""Per-move cost of the protocol: two headless processes, random bots, loopback TCP.

A figure, never a test.  For each records directory (by default one on disk
under the system temporary directory's parent filesystem, and ``/dev/shm``, a
tmpfs), it runs a headless host and joiner (``p2pkoikoi host|join --headless
--bot random``) for a 12-round match (``--rounds N``: longer) and for a
1-round match with the same bot seeds, and reports per side:

* wall time per action of the 12-round match (connect to match end);
* CPU (user + system, from ``wait4``'s rusage of each child) per action;
* the *marginal* figures, ``(12-round - 1-round) / (actions12 - actions1)``,
  which leave out start-up (imports, identity, handshake): what one more
  action costs;
* on Linux, the CPU *in play* per action: each side's CPU time (all its
  threads, ``/proc/PID/task/*/schedstat``) from its first ``round_started``
  line to its ``match_over`` line, over the actions.  It leaves out start-up
  without subtracting two noisy runs, so on a busy machine it is the steadier
  figure.

The 12-round match is played with ``scoring=sum`` so no knockout ends it
early.  Runs alternate between the directories (``--repeat`` times) so a
busy machine slows both alike; the median of the runs is printed.  Usage::

    PYTHONPATH=$PWD python bench/protocol_cost.py [--repeat 3] [--dirs DIR ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

LIMIT = 300.0


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "p2pkoikoi", *args]


#: the code tree the players run (``--trees``; also their working directory, which
#: ``python -m`` puts first on the path); None: the one this script imports
TREE: list[str | None] = [None]


def _env(base: Path, who: str) -> dict[str, str]:
    env = dict(os.environ)
    if TREE[0] is not None:
        env["PYTHONPATH"] = TREE[0]
    env["P2PKOIKOI_CONFIG_DIR"] = str(base / f"cfg-{who}")
    env["XDG_DATA_HOME"] = str(base / f"data-{who}")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _cpu_ns(pid: int) -> int | None:
    """CPU nanoseconds so far of a live process, all its threads (Linux; else None)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


class _Lines(threading.Thread):
    """Reads a player's output to the end (a full pipe would stall it), noting its
    CPU time at its first ``round_started`` line and at its ``match_over`` line."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.first: int | None = None
        self.last: int | None = None

    def run(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if self.first is None and '"round_started"' in line:
                self.first = _cpu_ns(self.proc.pid)
            elif '"match_over"' in line:
                self.last = _cpu_ns(self.proc.pid)

    @property
    def in_play(self) -> float:
        """CPU seconds between the two lines (nan if either is unknown)."""
        if self.first is None or self.last is None:
            return float("nan")
        return (self.last - self.first) / 1e9


def _wait(proc: subprocess.Popen[str], drained: threading.Thread) -> float:
    """CPU seconds (user + system) of a finished child (its stdout read to the end)."""
    drained.join()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        assert proc.stderr is not None
        raise SystemExit(f"a player failed ({proc.returncode}): {proc.stderr.read()}")
    return usage.ru_utime + usage.ru_stime


def one_match(directory: Path, rounds: int, seed: int) -> dict[str, float]:
    """Play one headless match with records in ``directory``; its figures."""
    base = Path(tempfile.mkdtemp(prefix="koi-bench-", dir=directory))
    hrec, jrec = base / "host.koikoi", base / "joiner.koikoi"
    rules = ["--rules", "online", "--rounds", str(rounds), "--set", "scoring=sum"]
    host = subprocess.Popen(
        _cli(
            "host", "--headless", "--bot", "random", "--bot-seed", str(seed), "--port", "0",
            "--bind", "127.0.0.1", "--name", "Alice", "--record", str(hrec), *rules,
        ),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, env=_env(base, "host"), cwd=TREE[0],
    )  # fmt: skip
    assert host.stdout is not None
    ready, _, _ = select.select([host.stdout], [], [], LIMIT)
    if not ready:
        host.kill()
        raise SystemExit("the host printed no first line")
    invite = json.loads(host.stdout.readline())["invite"]
    drain = _Lines(host)  # the host's output as it comes
    drain.start()
    start = time.perf_counter()
    joiner = subprocess.Popen(
        _cli(
            "join", invite, "--headless", "--bot", "random", "--bot-seed", str(seed + 1),
            "--name", "Bob", "--record", str(jrec),
        ),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, env=_env(base, "joiner"), cwd=TREE[0],
    )  # fmt: skip
    jdrain = _Lines(joiner)
    jdrain.start()
    jcpu = _wait(joiner, jdrain)
    wall = time.perf_counter() - start
    hcpu = _wait(host, drain)
    from p2pkoikoi.session.records.journal import decode_record

    actions = len(decode_record(hrec.read_bytes()).actions)
    shutil.rmtree(base, ignore_errors=True)
    return {
        "actions": actions,
        "wall": wall,
        "host_cpu": hcpu,
        "joiner_cpu": jcpu,
        "host_play": drain.in_play,
        "joiner_play": jdrain.in_play,
    }


def measure(
    directory: Path, repeat: int, seed: int, rounds: int = 12, trees: list[str] | None = None
) -> list[dict[str, Any]]:
    """The figures for ``directory``, one dict per code tree (``trees``: the
    matches of each tree alternate with the others', in turn first)."""
    names: list[str | None] = list(trees) if trees else [None]
    runs: dict[str | None, tuple[list[dict[str, float]], list[dict[str, float]]]] = {
        t: ([], []) for t in names
    }
    for i in range(repeat):  # trees, long and short alternate: a busy spell slows all
        for t in names[i % len(names) :] + names[: i % len(names)]:
            TREE[0] = t
            runs[t][0].append(one_match(directory, rounds, seed + 10 * i))
            runs[t][1].append(one_match(directory, 1, seed + 10 * i))
    TREE[0] = None
    out = [_figures(directory, rounds, longs, shorts) for longs, shorts in runs.values()]
    for t, o in zip(names, out, strict=True):
        o["tree"] = t
    return out


def _figures(
    directory: Path, rounds: int, longs: list[dict[str, float]], shorts: list[dict[str, float]]
) -> dict[str, Any]:
    repeat = len(longs)

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    a12, a1 = med(longs, "actions"), med(shorts, "actions")
    out: dict[str, Any] = {
        "directory": str(directory),
        "rounds": rounds,
        "actions_12_rounds": a12,
        "runs": repeat,
    }
    for key in ("wall", "host_cpu", "joiner_cpu"):
        per = statistics.median(r[key] / r["actions"] for r in longs)
        marginal = statistics.median(
            (lg[key] - sh[key]) / max(1.0, lg["actions"] - sh["actions"])
            for lg, sh in zip(longs, shorts, strict=True)
        )
        out[f"{key}_ms_per_action"] = round(per * 1000, 3)
        out[f"{key}_ms_per_action_marginal"] = round(marginal * 1000, 3)
    for key in ("host", "joiner"):
        per = statistics.median(r[f"{key}_play"] / r["actions"] for r in longs)
        out[f"{key}_cpu_ms_per_action_in_play"] = round(per * 1000, 3)
    out["seconds_12_rounds"] = round(med(longs, "wall"), 3)
    del a1
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="matches per directory and length")
    parser.add_argument("--dirs", nargs="*", help="records directories (default: disk, /dev/shm)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--trees",
        nargs="*",
        metavar="DIR",
        help="compare code trees (each a checkout's root, given as PYTHONPATH to the "
        "players), their runs alternating",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=12,
        help="rounds of the long match (default 12; more actions make the marginal "
        "figures steadier on a busy machine)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dirs = [Path(d) for d in args.dirs] if args.dirs else [Path("/var/tmp")]
    if not args.dirs and Path("/dev/shm").is_dir():
        dirs.append(Path("/dev/shm"))
    results = [r for d in dirs for r in measure(d, args.repeat, args.seed, args.rounds, args.trees)]
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for r in results:
        if r["tree"] is not None:
            print(f"code in {r['tree']}:")
        print(f"records in {r['directory']} ({r['runs']} runs, {r['actions_12_rounds']:.0f} actions,"
              f" {r['seconds_12_rounds']:.2f} s per {r['rounds']}-round match):")  # fmt: skip
        for key, label in (
            ("wall", "wall"),
            ("host_cpu", "host CPU"),
            ("joiner_cpu", "joiner CPU"),
        ):
            print(f"  {label:11} {r[f'{key}_ms_per_action']:8.3f} ms/action"
                  f"   marginal {r[f'{key}_ms_per_action_marginal']:8.3f} ms/action")  # fmt: skip
        print(f"  CPU in play {r['host_cpu_ms_per_action_in_play']:8.3f} ms/action (host)"
              f"   {r['joiner_cpu_ms_per_action_in_play']:8.3f} ms/action (joiner)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
