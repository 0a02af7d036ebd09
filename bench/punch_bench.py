"""Hole punching in the NAT lab: the time from the answer to the handshake, per pair.

Runs every host profile x joiner profile of tests/netlab.py's NatLab one pair at a
time (so the figures are not the parallel CI run's), and the time a joiner on the
host's own machine takes from "connecting" to "handshake" (what the joiner's
first try before it shows the answer must leave room for).  Needs root, ip, nft
and coturn, like the lab tests::

    python bench/punch_bench.py [--pairs cone:home,home:home] [--repeat N]

Prints one line per pair: plays/blocked, whether the answer was needed, seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from netlab import HOST_PORTS, PROFILES, NatLab, why_not_nat  # noqa: E402
from test_natlab import Proc, env_for, play_pair  # noqa: E402


def lan_handshake(lab: NatLab, tmp: Path, port: int) -> float:
    """Seconds from the joiner's ``connecting`` to its ``handshake``, same machine."""
    home = lab.homes[("host", "home")]
    cli = [sys.executable, "-m", "p2pkoikoi"]
    h = Proc(
        lab.exec(home.machine, *cli, "host", "--headless", "--port", str(port), "--rounds",
                 "1", "--no-port-mapping", "--no-announce", "--no-stun"),
        env_for(tmp, "h"),
    )  # fmt: skip
    try:
        invite = ""
        while not invite:
            got = h.next(time.monotonic() + 60)
            assert got is not None and got[1] is not None
            invite = got[1].get("invite", "")
        j = Proc(
            lab.exec(home.machine, *cli, "join", invite, "--headless", "--no-stun"),
            env_for(tmp, "j"),
        )
        try:
            seen: dict[str, float] = {}
            while "handshake" not in seen:
                got = j.next(time.monotonic() + 60)
                assert got is not None and got[1] is not None, j.stderr()
                seen.setdefault(got[1]["event"], got[0])
            return seen["handshake"] - seen["connecting"]
        finally:
            j.stop()
    finally:
        h.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", help="host:joiner,... (default: all)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    why = why_not_nat()
    if why:
        print(f"cannot build the lab: {why}", file=sys.stderr)
        return 1
    pairs = (
        [tuple(p.split(":")) for p in args.pairs.split(",")]
        if args.pairs
        else [(h, j) for h in PROFILES for j in PROFILES]
    )
    tmp = Path(tempfile.mkdtemp(prefix="punch-bench-"))
    lab = NatLab(tmp)
    try:
        lab.build()
        lab.start_stun()
        lan = [lan_handshake(lab, tmp / f"lan{i}", HOST_PORTS[1] - i) for i in range(3)]
        print(f"same machine, invite: connecting -> handshake {statistics.median(lan):.3f}s "
              f"(median of 3: {', '.join(f'{x:.3f}' for x in lan)})")  # fmt: skip
        n = 0
        for h, j in pairs:
            times: list[float] = []
            last = None
            for _ in range(args.repeat):
                n += 1
                r = play_pair(lab, tmp / f"{h}-{j}-{n}", h, j, HOST_PORTS[0] + n % 150)
                times.append(r.seconds)
                last = r
            assert last is not None
            how = "answer" if last.answered else "invite"
            verdict = f"plays ({last.path}, {how})" if last.connected else "blocked"
            what = "answer -> handshake" if last.connected else "answer -> verdict"
            if not last.answered:
                what = "connecting -> handshake" if last.connected else "start -> error"
            print(f"{h:>6} x {j:<6} {verdict:<22} {what} {statistics.median(times):.2f}s")
    finally:
        lab.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
