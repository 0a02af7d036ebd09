"""The time from a code typed to the handshake, through the DHT, per pair.

Two parts:

* ``--loopback``: the rendezvous alone (announce, inbox, sealed reply) between two
  clients in one process over a private DHT of N nodes on 127.0.0.1, with the
  reference pacing (1 s polls) and with fast polls, and the datagrams it costs;
* by default, the home-router lab (tests/netlab.py, needs root, ip, nft,
  miniupnpd): a private DHT of 8 nodes in the wan namespace, a ``p2pkoikoi host
  --headless`` behind the router, and ``p2pkoikoi join CODE --headless`` on the
  internet side, PAIRS times: from the joiner's start of the search to the DHT's
  invite and to the handshake, and the process start before it;
* ``--matrix``: the NAT lab (tests/netlab.py NatLab, needs coturn too) with the
  DHT, every host profile x joiner profile by code only, one pair at a time (no
  other pair loading the machine): code -> the DHT's invite -> handshake.

Nothing leaves the lab's namespaces or the loopback.  Usage::

    python bench/dht_pairing.py --loopback --nodes 8 --pairs 10
    python bench/dht_pairing.py --pairs 5
    python bench/dht_pairing.py --matrix
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def loopback(nodes: int, pairs: int, poll: float) -> None:
    import trio
    from dht_helpers import loopback_dht

    from p2pkoikoi.session.codes.code import decode_code
    from p2pkoikoi.transport.lookup.dht import open_dht
    from p2pkoikoi.transport.lookup.rendezvous import Pace, find_invite, host_rendezvous
    from p2pkoikoi.transport.open.gate import CodeGuard

    pace = Pace(poll=poll)

    async def main() -> None:
        times: list[float] = []
        sent: list[int] = []
        async with loopback_dht(nodes) as (cfg, _):
            for i in range(pairs):
                code = decode_code(f"{1 + i % 99}-crossover-clockwork")
                announced = trio.Event()

                def note(n: dict[str, object], ev: trio.Event = announced) -> None:
                    if n.get("event") == "dht_announced":
                        ev.set()

                async with open_dht(cfg) as h, open_dht(cfg) as j, trio.open_nursery() as ns:
                    ns.start_soon(host_rendezvous, h, code, "koi2-x", CodeGuard(code), note, pace)
                    await announced.wait()
                    t = time.perf_counter()
                    await find_invite(j, code, lambda n: None, pace)
                    times.append(time.perf_counter() - t)
                    sent.append(j.sent)
                    ns.cancel_scope.cancel()
        print(
            f"loopback, {nodes} nodes, polls every {poll:g} s: code -> invite "
            f"median {statistics.median(times):.3f} s, max {max(times):.3f} s over {pairs} "
            f"pairs; the joiner sent {statistics.median(sent):.0f} datagrams (median)"
        )

    trio.run(main)


def lab(pairs: int) -> None:
    from netlab import Lab, LabError, why_not
    from test_dht_lab import BOOT, LabDht, _code_join, finish
    from test_netlab import Hosting

    why = why_not(router=True)
    if why:
        raise SystemExit(f"no lab here: {why}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        net = Lab(tmp_path)
        try:
            net.build()
            net.start_miniupnpd()
            dht = LabDht(net)
            rows = []
            try:
                for n in range(pairs):
                    host = Hosting(net, tmp_path, 100 + n, *BOOT)
                    code = str(host.listening["code"])
                    host.proc.wait_event("dht_announced")
                    joiner, jrec, began = _code_join(net, tmp_path, 100 + n, code, *BOOT)
                    joiner.wait_event("searching")
                    typed = time.monotonic()
                    joiner.wait_event("dht_found")
                    found = time.monotonic()
                    joiner.wait_event("handshake")
                    shaken = time.monotonic()
                    with contextlib.redirect_stdout(io.StringIO()):  # verify's report
                        finish(host, joiner, jrec)
                    rows.append((typed - began, found - typed, shaken - found, shaken - typed))
                    print(
                        f"pair {n + 1}: process start {rows[-1][0]:.2f} s, code -> DHT invite "
                        f"{rows[-1][1]:.2f} s, -> handshake {rows[-1][2]:.2f} s; "
                        f"code -> handshake {rows[-1][3]:.2f} s"
                    )
            finally:
                dht.close()
        except LabError as exc:
            raise SystemExit(f"no lab here: {exc}") from None
        finally:
            net.close()
    total = [r[3] for r in rows]
    print(
        f"home-router lab, host behind the router (UPnP mapping), friend on the internet, 8 DHT "
        f"nodes: code -> handshake median {statistics.median(total):.2f} s, "
        f"max {max(total):.2f} s over {pairs} pairs (1 s of it is the LAN's turn first)"
    )


def matrix() -> None:
    from netlab import HOST_PORTS, PROFILES, LabError, why_not_nat
    from test_dht_natlab import nat_lab_with_dht, play_by_code
    from test_natlab import connects

    why = why_not_nat()
    if why:
        raise SystemExit(f"no NAT lab here: {why}")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with nat_lab_with_dht(Path(tmp)) as lab:
                i = 0
                for h in PROFILES:
                    for j in PROFILES:
                        r = play_by_code(lab, Path(tmp) / f"{h}-{j}", h, j, HOST_PORTS[0] + i)
                        i += 1
                        if r.connected:
                            how = "answer through the DHT" if r.answered else "invite alone"
                            verdict = (
                                f"plays ({how}): code -> invite {r.found - r.typed:.2f} s, "
                                f"-> handshake {r.seconds - r.typed:.2f} s "
                                f"(+ {r.typed:.2f} s program start)"
                            )
                        else:
                            verdict = f"blocked in {r.seconds:.2f} s: {r.text}"
                        ok = "" if r.connected == connects(h, j) else "  (UNEXPECTED)"
                        print(f"{h:>6} x {j:<6} {verdict}{ok}", flush=True)
        except LabError as exc:
            raise SystemExit(f"no NAT lab here: {exc}") from None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--loopback", action="store_true", help="the in-process rendezvous only")
    p.add_argument("--nodes", type=int, default=8)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--matrix", action="store_true", help="the NAT lab's matrix by code")
    a = p.parse_args()
    if a.matrix:
        matrix()
    elif a.loopback:
        loopback(a.nodes, a.pairs, 1.0)
        loopback(a.nodes, a.pairs, 0.05)
    else:
        lab(a.pairs)


if __name__ == "__main__":
    main()
