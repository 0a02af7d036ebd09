"""``p2pkoikoi bench`` figures beyond the engine: what a move costs over the protocol,
and how long the program takes to start.

* **Protocol** (:func:`protocol_figures`): two sessions back to back in this
  process (no sockets, no trio: the sans-I/O state machines) play random
  12-round matches, each side keeping its record file exactly as a network
  player does (:class:`~p2pkoikoi.transport.store.records.RecordKeeper`: the
  journal, flushed at each round's end, compacted at the end) in a temporary
  directory.  Reported per action and per side: CPU time and wall time.  That
  is the protocol's own cost (signing, verifying, encrypting, replaying,
  recording); a real network match adds trio and the kernel's loopback
  (``bench/protocol_cost.py`` measures two real processes).
* **Start-up** (:func:`startup_figures`): ``python -c pass``, ``p2pkoikoi
  --help``, ``score``, ``rules`` and ``verify`` of a 12-round record, each run
  as a new process a few times; the fastest run of each (like ``timeit``: load
  only ever slows a run down) and its ratio to ``python -c pass``.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import p2pkoikoi


def _one_match(directory: Path, index: int, seed: int) -> tuple[int, Path]:
    """One random 12-round match between two in-process sessions, records on disk."""
    from p2pkoikoi.engine import get_preset
    from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair
    from p2pkoikoi.transport.store.records import RecordKeeper

    rules = get_preset("online").with_settings(rounds=12, scoring="sum")
    host, joiner = make_pair(rules, label=f"bench{seed}/{index}")
    keepers = (
        RecordKeeper(directory / f"host-{index}.koikoi"),
        RecordKeeper(directory / f"joiner-{index}.koikoi"),
    )

    def record(seat: int, data: bytes) -> bytes:
        # bytes about to leave a side: its record is written first, as a link does
        keepers[seat].save((host, joiner)[seat])
        keepers[1 - seat].save((host, joiner)[1 - seat])
        return data

    run_pair(host, joiner, random_chooser(random.Random(seed * 1000 + index).randrange(2**32)),
             tap=record)  # fmt: skip
    for keeper, session in zip(keepers, (host, joiner), strict=True):
        keeper.save(session)
        keeper.close(session)
    path = keepers[0].path
    assert path is not None
    return len(host.record().actions), path


def protocol_figures(
    matches: int = 3, seed: int = 1, directory: Path | None = None
) -> tuple[dict[str, float], Path]:
    """CPU and wall milliseconds per action per side; also one finished record's path.

    The first match warms up (imports, caches) and is not counted.  The
    record returned lives in a temporary directory that the caller removes.
    """
    base = Path(tempfile.mkdtemp(prefix="p2pkoikoi-bench-", dir=directory))
    _, path = _one_match(base, 0, seed)
    actions = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(1, matches + 1):
        n, path = _one_match(base, i, seed)
        actions += n
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    # both sides run in this process: halve for "per side"
    return {
        "protocol_cpu_ms_per_action_per_side": 1000 * cpu / actions / 2,
        "protocol_wall_ms_per_action": 1000 * wall / actions,
        "protocol_actions": float(actions),
    }, path


def timed_run(argv: list[str], env: dict[str, str] | None, cwd: str | None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the child's own rusage) of one process.

    The parent blocks in ``wait4`` until the child ends (killed after 120 s), so the
    wall time is the child's: ``subprocess.run(..., timeout=...)`` polls instead,
    sleeping 0.5, 1, 2, ... up to 50 ms between looks, which rounded every wall time
    up to the next poll (64, 114, 164 ms ...), ``python -c pass`` most of all.
    """
    import threading

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, cwd=cwd)  # fmt: skip
    killer = threading.Timer(120, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return wall, usage.ru_utime + usage.ru_stime


def has_bytecode(source: str) -> bool:
    """Whether the interpreter would load ``source`` (a module's ``.py`` file) from
    cached bytecode rather than compile it: its ``__pycache__`` file exists and was
    made from this source (same modification time and size; a hash-based file counts).

    Without it, every start compiles the module, which ``python -c pass`` never does:
    an editable install has no bytecode until a run writes it, and with
    ``PYTHONDONTWRITEBYTECODE`` set no run does (the start-up figures say so)."""
    import importlib.util

    try:
        cached = Path(importlib.util.cache_from_source(source))
        with cached.open("rb") as f:
            header = f.read(16)
        st = os.stat(source)
    except (OSError, NotImplementedError, ValueError):
        return False
    if len(header) < 16:
        return False
    flags = int.from_bytes(header[4:8], "little")
    if flags & 1:  # checked against a hash of the source (PEP 552): taken as current
        return True
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return mtime == int(st.st_mtime) & 0xFFFFFFFF and size == st.st_size & 0xFFFFFFFF


def startup_figures(record: Path, runs: int = 5) -> dict[str, float]:
    """The fastest of ``runs`` new processes for each command, wall and CPU time in
    milliseconds, and the ratio of each to ``python -c pass`` (the interpreter's own
    start-up), run side by side: each round starts every command once, so that a
    change of load touches them all alike.  ``p2pkoikoi`` is run as a user runs it,
    the console script beside the interpreter when there is one (``python -m``
    otherwise, which adds runpy)."""
    py = sys.executable
    root = str(Path(p2pkoikoi.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    script = Path(py).parent / "p2pkoikoi"
    me = (
        [str(script)]
        if script.is_file() and os.access(script, os.X_OK)
        else [py, "-m", "p2pkoikoi"]
    )
    commands = {
        "python": [py, "-c", "pass"],
        "help": [*me, "--help"],
        "score": [*me, "score", "--rules", "online", "1b", "3b"],
        "rules": [*me, "rules"],
        "verify": [*me, "verify", str(record)],
    }
    best = {name: (float("inf"), float("inf")) for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            wall, cpu = timed_run(argv, env, root)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    import p2pkoikoi.engine.match as match  # the largest module on verify's way

    compiled = has_bytecode(match.__file__) or not sys.dont_write_bytecode
    out: dict[str, float] = {"startup_bytecode": 1.0 if compiled else 0.0}
    for name, (wall, cpu) in best.items():
        out[f"startup_{name}_ms"] = 1000 * wall
        out[f"startup_{name}_cpu_ms"] = 1000 * cpu
    for name in commands:
        if name != "python":
            out[f"startup_{name}_ratio"] = out[f"startup_{name}_ms"] / out["startup_python_ms"]
            out[f"startup_{name}_cpu_ratio"] = (
                out[f"startup_{name}_cpu_ms"] / out["startup_python_cpu_ms"]
            )
    return out
