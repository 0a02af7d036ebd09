"""CPU and bytes of the hidden deal, per side per round (figures, not a test).

    PYTHONPATH=. python bench/hidden.py [--rounds N]
    PYTHONPATH=. python bench/hidden.py --loopback 12     # two processes, open vs hidden

With ``--loopback R`` it also plays R-round matches between two ``p2pkoikoi``
processes (headless, random bots) over TCP on 127.0.0.1, with the open deal and
with the hidden deal in turn (``--pairs K`` pairs, default 3, the order
alternating), and prints the median wall time of each, their ratio, and for
the hidden deal the messages and wire bytes per round (frames of the ``card``
messages in the host's record: msgpack, AEAD tag and frame header).  The wall
times include starting both processes; compile the package first
(``python -m compileall -q p2pkoikoi``) or every process compiles it again
where ``PYTHONDONTWRITEBYTECODE`` is set.

Plays N whole rounds of the hidden deal's card protocol in memory (the three
masking steps, the keys after the deal, 16 turns of play and draw, the audit)
and reports, for each side, the CPU time (``time.process_time``, one core) of

* shuffle + deal: its masking step(s) with their proofs, checking the decks
  it receives and verifying their proofs, and opening the field and its own
  hand; "of which proofs" is the part spent making and verifying proofs
  (``session/mental/proof.py``), split into making and verifying;
* one reveal: checking a played card, or opening a drawn one;
* the audit: checking the other side's secrets against the three decks and
  every key it sent.

Bytes are the payloads the card protocol adds per round (decks, keys,
audits), before msgpack and frame overhead (a few dozen bytes per message).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from p2pkoikoi.session.mental import deck as deck_module
from p2pkoikoi.session.mental.deck import HOST, JOINER, DeckSecrets
from p2pkoikoi.session.mental.table import HiddenTable

T = TypeVar("T")
PROOF_CPU: dict[str, list[float]] = {}
_side = ["host"]


def _timed_proof(name: str, fn: Callable[..., T]) -> Callable[..., T]:
    def wrapped(*args: object) -> T:
        t0 = time.process_time()
        out = fn(*args)
        key = f"{_side[0]} {name}"
        PROOF_CPU.setdefault(key, [0.0])[-1] += time.process_time() - t0
        return out

    return wrapped


for _name in ("prove_shuffle", "prove_rekey", "verify_shuffle", "verify_rekey"):
    setattr(deck_module, _name, _timed_proof(_name.split("_")[0], getattr(deck_module, _name)))


class Meter:
    def __init__(self) -> None:
        self.cpu: dict[str, list[float]] = {}
        self.messages = 0
        self.bytes = 0

    def run(self, key: str, fn: Callable[[], T]) -> T:
        t0 = time.process_time()
        out = fn()
        self.cpu.setdefault(key, []).append(time.process_time() - t0)
        return out

    def send(self, data: bytes | tuple[bytes, ...]) -> None:
        self.messages += 1
        self.bytes += sum(map(len, data)) if isinstance(data, tuple) else len(data)


def one_round(m: Meter, dealer: int) -> None:
    h = HiddenTable(HOST, dealer, DeckSecrets.derive(HOST, os.urandom(32)))
    j = HiddenTable(JOINER, dealer, DeckSecrets.derive(JOINER, os.urandom(32)))
    deal_h: list[float] = []
    deal_j: list[float] = []

    for key in ("host prove", "host verify", "joiner prove", "joiner verify"):
        PROOF_CPU.setdefault(key, []).append(0.0)

    def timed(acc: list[float], fn: Callable[[], T]) -> T:
        _side[0] = "host" if acc is deal_h else "joiner"
        t0 = time.process_time()
        out = fn()
        acc.append(time.process_time() - t0)
        return out

    d1 = timed(deal_h, h.step1)
    m.send(d1)
    d2 = timed(deal_j, lambda: j.on_step1(d1))
    m.send(d2)
    d3 = timed(deal_h, lambda: h.on_step2(d2))
    hp = h.deal_keys()
    hk = timed(deal_h, lambda: h.keys_for(hp))
    m.send((d3, hk))  # one message: the locked deck and the host's deal keys
    timed(deal_j, lambda: j.on_step3(d3))
    timed(deal_j, lambda: j.on_keys(hp, hk))
    jp = j.deal_keys()
    jk = timed(deal_j, lambda: j.keys_for(jp))
    m.send(jk)
    timed(deal_h, lambda: h.on_keys(jp, jk))
    m.cpu.setdefault("deal host", []).append(sum(deal_h))
    m.cpu.setdefault("deal joiner", []).append(sum(deal_j))
    tables = (h, j)
    seat = dealer
    while h.hand_positions(0) or h.hand_positions(1):
        me, peer = tables[seat], tables[1 - seat]
        card = me.cards[me.hand_positions(seat)[0]]
        pos, key = me.reveal(card)
        share = me.draw_share()
        m.send((key, share))  # rides on the play message
        m.run("reveal: check a played card", lambda: peer.on_reveal(card, pos, key))  # noqa: B023
        m.run("reveal: open a drawn card", lambda: peer.on_draw_share(share))  # noqa: B023
        back = peer.draw_share()
        m.send(back)
        m.run("reveal: open a drawn card", lambda: me.on_draw_share(back))  # noqa: B023
        me.drawn()
        peer.drawn()
        seat = 1 - seat
    ha, ja = h.audit(), j.audit()
    m.send(ha)
    m.send(ja)
    m.run("audit host", lambda: h.on_audit(ja))
    m.run("audit joiner", lambda: j.on_audit(ha))


def critical_path(deals: int) -> None:
    """Wall time of the steps one side waits for the other, in one process: the host's
    ``D1``, the joiner's ``E``/``D2``, the host's check and ``D3``, the joiner's check of
    ``D3`` (the joiner's check of ``D1`` runs beside the host's check), with and without
    the helper thread that takes half of each batch of multiplications."""
    from p2pkoikoi.session.mental.group import use_helper_thread

    def wall(fn: Callable[[], T]) -> tuple[T, float]:
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0

    names = ("host D1", "joiner E/D2", "host check + D3", "joiner check D3", "(joiner D1 check)")
    for on in (False, True, False, True):
        use_helper_thread(on)
        rows = []
        for _ in range(deals):
            h = HiddenTable(HOST, 0, DeckSecrets.derive(HOST, os.urandom(32)))
            j = HiddenTable(JOINER, 0, DeckSecrets.derive(JOINER, os.urandom(32)))
            d1, a = wall(h.step1)
            d2, b = wall(lambda: j.on_step1(d1, later=True))  # noqa: B023
            _, e = wall(j.settle)
            d3, c = wall(lambda: h.on_step2(d2))  # noqa: B023
            _, c2 = wall(lambda: h.keys_for(h.deal_keys()))  # noqa: B023
            _, d = wall(lambda: j.on_step3(d3))  # noqa: B023
            rows.append((a, b, c + c2, d, e))
        med = [statistics.median(r[k] for r in rows) * 1000 for k in range(5)]
        parts = ", ".join(f"{n} {m:.1f}" for n, m in zip(names, med, strict=True))
        print(f"  {'two threads' if on else 'one thread ':<11}: critical path {sum(med[:4]):6.1f} ms"
              f"  ({parts}; medians of {deals} deals, wall ms)")  # fmt: skip
    use_helper_thread(True)


def loopback(rounds: int, deal: str, tmp: Path) -> tuple[float, Path]:
    """Wall time of one headless match between two processes; the host's record."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    rec = tmp / f"{deal}-host.koikoi"
    base = [sys.executable, "-m", "p2pkoikoi"]
    # nothing leaves loopback: no DHT, STUN, port mapping or LAN announcement
    quiet = ["--no-dht", "--no-stun", "--no-port-mapping", "--no-announce"]
    t0 = time.perf_counter()
    host = subprocess.Popen(
        [*base, "host", "--headless", "--bot", "random", "--port", "0", "--bind", "127.0.0.1",
         "--rounds", str(rounds), "--set", "knockout=false", "--set", f"deal={deal}",
         "--record", str(rec), *quiet],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=dict(env, P2PKOIKOI_CONFIG_DIR=str(tmp / f"cfg-h-{deal}")),
    )  # fmt: skip
    assert host.stdout is not None
    select.select([host.stdout], [], [], 60)
    invite = json.loads(host.stdout.readline())["invite"]
    subprocess.run(
        [*base, "join", invite, "--headless", "--bot", "random",
         "--record", str(tmp / f"{deal}-joiner.koikoi"), "--no-dht", "--no-stun"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600,
        env=dict(env, P2PKOIKOI_CONFIG_DIR=str(tmp / f"cfg-j-{deal}")),
    )  # fmt: skip
    host.communicate(timeout=600)
    return time.perf_counter() - t0, rec


def wire_figures(rec: Path) -> tuple[int, int]:
    """(card messages, wire bytes of them) from a hidden-deal record."""
    from p2pkoikoi.session import wire
    from p2pkoikoi.session.records.journal import decode_record

    r = decode_record(rec.read_bytes())
    count = size = 0
    for a in r.actions:
        if not a.kind:
            continue
        msg = wire.CardMsg(
            seq=a.seq, kind=a.kind, hash=a.state_hash, sig=a.sig, action=a.action or None,
            pos=a.pos, deck=a.deck or None, keys=a.keys or None,
        )  # fmt: skip
        count += 1
        size += len(wire.encode_message(msg)) + 16 + 4  # AEAD tag, frame length
    return count, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--loopback", type=int, metavar="R", help="also time R-round matches")
    ap.add_argument(
        "--critical", type=int, metavar="N", help="also time N deals' critical path, one process"
    )
    ap.add_argument("--pairs", type=int, default=3, metavar="K", help="open/hidden pairs")
    args = ap.parse_args()
    m = Meter()
    for r in range(args.rounds):
        one_round(m, r % 2)
    print(f"hidden deal, {args.rounds} rounds, CPU ms (median / best):")
    for key, values in m.cpu.items():
        ms = [v * 1000 for v in values]
        print(f"  {key:<30} {statistics.median(ms):8.2f} / {min(ms):8.2f}")
    for side in ("host", "joiner"):
        for what in ("prove", "verify"):
            ms = [v * 1000 for v in PROOF_CPU[f"{side} {what}"]]
            print(
                f"  of the deal, {side} proofs: {what:<6}"
                f" {statistics.median(ms):8.2f} / {min(ms):8.2f}"
            )
    for side in ("host", "joiner"):
        total = statistics.median(m.cpu[f"deal {side}"]) + statistics.median(m.cpu[f"audit {side}"])
        print(f"  deal + audit, {side:<16} {total * 1000:8.2f}")
    print(
        f"per round: {m.messages / args.rounds:.0f} messages carrying card data,"
        f" {m.bytes / args.rounds:,.0f} bytes of decks, keys and audits"
    )
    if args.critical:
        print("a deal's critical path (what the other side waits for):")
        critical_path(args.critical)
    if args.loopback:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            walls: dict[str, list[float]] = {"open": [], "hidden": []}
            for k in range(args.pairs):
                for deal in ("open", "hidden") if k % 2 == 0 else ("hidden", "open"):
                    run_dir = tmp / f"{deal}-{k}"
                    run_dir.mkdir()
                    wall, rec_k = loopback(args.loopback, deal, run_dir)
                    walls[deal].append(wall)
                    if deal == "hidden":
                        rec = rec_k
            wall_open = statistics.median(walls["open"])
            wall_hidden = statistics.median(walls["hidden"])
            from p2pkoikoi.session.records.journal import decode_record

            record = decode_record(rec.read_bytes())
            deals = sum(1 for a in record.actions if a.kind == "audit") // 2
            count, size = wire_figures(rec)
            print(
                f"{args.loopback}-round match over loopback, two processes, random bots,"
                f" median of {args.pairs} each:"
            )
            for deal, wall in (("open", wall_open), ("hidden", wall_hidden)):
                runs = ", ".join(f"{w:.2f}" for w in walls[deal])
                print(f"  {deal + ' deal':<13} {wall:6.2f} s wall  ({runs})")
            print(f"  {'hidden / open':<13} {wall_hidden / wall_open:6.2f}")
            print(
                f"  hidden: {deals} deals, {count} card messages ({count / deals:.1f} per deal),"
                f" {size:,} wire bytes ({size / deals:,.0f} per deal)"
            )


if __name__ == "__main__":
    main()
