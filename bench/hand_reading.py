"""How well the hard bot's HandReader predicts the opponent's hand.

Long-running: never part of the test suite.  Usage::

    python bench/hand_reading.py --games 60 --rules online 0,0,0.2,0.7 1,1,0.2,0.85

Plays ``hard:playouts=60`` (seat 0) against ``hard-v1:playouts=24`` and, at
each of hard's plays, asks one reader per configuration ``DRAWS,OPENING,
STRONG,WEAK`` (see :class:`~p2pkoikoi.bots.inference.HandReader`) about every
month with unseen cards, then looks at the opponent's true hand.  Prints,
per configuration, how often months in each weight bucket were really held
and the log-likelihood of the per-month chances (:meth:`HandReader.hold`, or
the uniform chance when nothing has been learnt): higher is better.
"""

from __future__ import annotations

import argparse
import hashlib
import math

from p2pkoikoi.bots import make_bot
from p2pkoikoi.bots.heuristics import p_holds_any, tables_for
from p2pkoikoi.bots.inference import HandReader
from p2pkoikoi.engine import Phase, get_preset, new_match
from p2pkoikoi.engine.cards import MONTH_MASKS


def bucket(w: float) -> str:
    return "1" if w == 1.0 else "0.5-1" if w > 0.5 else "0.2-0.5" if w > 0.2 else "<=0.2"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("configs", nargs="+", help="DRAWS,OPENING,STRONG,WEAK (e.g. 1,1,0.2,0.85)")
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--rules", default="online")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    rules = get_preset(args.rules).with_settings(rounds=args.rounds)
    held: dict[str, dict[str, list[int]]] = {k: {} for k in args.configs}
    loglik = dict.fromkeys(args.configs, 0.0)
    for g in range(args.games):
        m = new_match(rules.with_open_deal(), hashlib.sha256(b"calib%d" % g).digest())
        bots = (make_bot("hard:playouts=60", g), make_bot("hard-v1:playouts=24", g + 1))
        readers = {}
        for spec in args.configs:
            draws, opening, strong, weak = spec.split(",")
            r = HandReader(float(strong), float(weak))
            r.draws, r.opening = draws == "1", opening == "1"
            readers[spec] = r
        while not m.is_over:
            p = m.to_act
            assert p is not None
            v = m.view(p)
            if p == 0:
                static = tables_for(v.rules).static
                truth = m.hand(1).mask
                unseen = v.unseen.mask
                for spec, r in readers.items():
                    r.observe(static, v)
                    if v.phase is not Phase.PLAY or not v.opponent_hand_size:
                        continue
                    hold = r.hold(v)
                    for month in range(1, 13):
                        k = (unseen & MONTH_MASKS[month]).bit_count()
                        if not k:
                            continue
                        is_held = bool(truth & MONTH_MASKS[month])
                        cell = held[spec].setdefault(bucket(r.month_weight[month]), [0, 0])
                        cell[0] += is_held
                        cell[1] += 1
                        if hold is not None:
                            q = hold[month]
                        else:
                            q = p_holds_any(k, unseen.bit_count(), v.opponent_hand_size)
                        q = min(max(q, 1e-3), 1 - 1e-3)
                        loglik[spec] += math.log(q if is_held else 1 - q)
            m = m.apply(bots[p].choose(v))[0]
    for spec in args.configs:
        cells = ", ".join(
            f"weight {b}: {100 * h / n:.0f}% held ({n})" for b, (h, n) in sorted(held[spec].items())
        )
        print(f"{spec}: log-likelihood {loglik[spec]:.1f}; {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
