"""A modified ``p2pkoikoi`` program for tests: ``python tests/hidden_cheater.py ATTACK ARGS...``
runs the real command line (``ARGS``: ``host ...`` or ``join ...``) with one masking step of
the hidden deal replaced by a cheat.  ATTACK:

* ``d2-sums``: the joiner's D2 holds sums of D1 entries at three of its own hand positions
  (the security review's peek: 6 cards read once its hand opens); it re-keys honestly from
  an honest ``E``, so its re-keying proof is what must fail;
* ``e-sums``: the same sums in the joiner's singly masked deck ``E`` (the shuffle proof);
* ``d1-sums``: the host's D1 holds sums of card points; ``d3-sums``: the host's D3 holds
  sums of D2 entries;
* ``forged-audit``: the cheater's audit of the first deal claims another key for position 2
  (a field card, opened during the round with the key it really sent);
* ``leave-mid-deal``: the joiner's program ends (no goodbye, as a killed program) when
  it receives D3, so it never sends the deal keys it owes.

Each forged step carries the best proof the cheater's real secrets give for it.  The first
deal is forged; the program is otherwise the real one (transport, session, records).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hidden_helpers import d2_sum_attack, forged_step  # noqa: E402

from p2pkoikoi.cli import main  # noqa: E402
from p2pkoikoi.session.mental import table  # noqa: E402
from p2pkoikoi.session.mental.deck import Deck, DeckSecrets  # noqa: E402
from p2pkoikoi.session.mental.table import dealt_owner  # noqa: E402


def _hand(seat: int) -> tuple[int, ...]:
    # both dealers' layouts: positions in the cheater's hand whoever deals
    return tuple(p for p in range(24) if dealt_owner(p, 0) == seat)


def install(attack: str) -> None:
    step1, step2, step3 = table.step1_message, table.step2_message, table.step3_message

    def forged1(sec: DeckSecrets, context: bytes) -> tuple[Deck, bytes]:
        d1, _ = step1(sec, context)
        return d1, forged_step(1, sec, (), context, d2_sum_attack(_hand(0)))

    def forged2(sec: DeckSecrets, d1: Deck, context: bytes) -> tuple[Deck, bytes]:
        d2, _ = step2(sec, d1, context)
        which = 22 if attack == "d2-sums" else 2
        return d2, forged_step(which, sec, d1, context, d2_sum_attack(_hand(1)))

    def forged3(sec: DeckSecrets, d2: Deck, context: bytes) -> tuple[Deck, bytes]:
        d3, _ = step3(sec, d2, context)
        return d3, forged_step(3, sec, d2, context, d2_sum_attack(_hand(0)))

    if attack == "forged-audit":
        honest_audit = table.HiddenTable.audit

        def forged_audit(self: table.HiddenTable) -> bytes:
            d = bytearray(honest_audit(self))
            if self.context[:4] == (1).to_bytes(2, "big") + (0).to_bytes(2, "big"):
                d[32 + 48 + 2 * 32] ^= 1  # the first deal: the key for position 2
            return bytes(d)

        table.HiddenTable.audit = forged_audit  # type: ignore[method-assign]
    elif attack == "leave-mid-deal":
        import os
        import signal

        def leave(self: table.HiddenTable, data: bytes) -> None:
            os.kill(os.getpid(), signal.SIGKILL)  # as a killed program: no goodbye

        table.HiddenTable.on_step3 = leave  # type: ignore[method-assign]
    elif attack == "d1-sums":
        table.step1_message = forged1
    elif attack in ("d2-sums", "e-sums"):
        table.step2_message = forged2
    elif attack == "d3-sums":
        table.step3_message = forged3
    else:
        raise SystemExit(f"unknown attack {attack}")


if __name__ == "__main__":
    install(sys.argv[1])
    raise SystemExit(main(sys.argv[2:]))
