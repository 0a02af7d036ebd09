"""Two hidden-deal tables driven in memory, and the "modified client" that snoops.

:class:`Snoop` is a test double for a modified program: it keeps every byte its
side ever holds (its own secrets, everything it sent and received) and, at every
step, tries to name each card still hidden from it with everything it holds.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from p2pkoikoi.session.mental.deck import HOST, JOINER, DeckSecrets
from p2pkoikoi.session.mental.group import CARD_OF_POINT, GROUP_ORDER, SCALAR_LEN, inv, mul
from p2pkoikoi.session.mental.table import STOCK_START, HiddenTable


def seed(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


class Snoop:
    """Everything one side holds, and its attempts to read hidden cards."""

    def __init__(self, table: HiddenTable) -> None:
        self.table = table
        self.held: list[bytes] = [table.secrets.encode()]
        self.attempts = 0

    def keep(self, data: bytes) -> bytes:
        self.held.append(data)
        return data

    def scalars(self) -> list[bytes]:
        """Every aligned 32-byte piece of what it holds, as a would-be key."""
        out: dict[bytes, None] = {}
        for blob in self.held:
            for i in range(0, len(blob) - SCALAR_LEN + 1, SCALAR_LEN):
                chunk = blob[i : i + SCALAR_LEN]
                if chunk != bytes(SCALAR_LEN) and int.from_bytes(chunk, "little") < GROUP_ORDER:
                    out[chunk] = None
        return list(out)

    def try_to_read(self, peer_secrets: DeckSecrets) -> None:
        """Assert that no hidden position opens with what this side holds."""
        t = self.table
        if not t.dealt:
            return
        everything = b"".join(self.held)
        d3 = t.decks[2]
        mine = t.secrets.keys
        candidates = self.scalars()
        hidden = t.hidden_from_me()
        tried = {hidden[0], hidden[-1], hidden[len(hidden) // 2]}
        for pos in hidden:
            # the peer's key for a hidden position is nowhere in what this side holds
            assert peer_secrets.keys[pos] not in everything, f"peer key for {pos} leaked"
            # and no scalar it holds opens the position together with its own key
            # (tried for three positions per step: each try is a scalar multiplication)
            if pos in tried:
                base = mul(inv(mine[pos]), d3[pos])
                for k in candidates:
                    self.attempts += 1
                    assert mul(inv(k), base) not in CARD_OF_POINT, f"{pos} opened by a held key"
            # the unmasked-by-own-key point is not a card either
            assert mul(inv(mine[pos]), d3[pos]) not in CARD_OF_POINT


def deal_pair(
    dealer: int = 0, label: str = "t", tamper: Callable[[int, bytes], bytes] | None = None
) -> tuple[HiddenTable, HiddenTable]:
    """Host and joiner tables after the three steps; ``tamper(step, data)`` may change a deck."""
    t = tamper or (lambda step, data: data)
    host = HiddenTable(HOST, dealer, DeckSecrets.derive(HOST, seed(label + "h")))
    joiner = HiddenTable(JOINER, dealer, DeckSecrets.derive(JOINER, seed(label + "j")))
    d2 = joiner.on_step1(t(1, host.step1()))
    joiner.on_step3(t(3, host.on_step2(t(2, d2))))
    return host, joiner


def open_deal(host: HiddenTable, joiner: HiddenTable) -> None:
    """The keys after the deal: the field to both, each hand to its owner."""
    hp = host.deal_keys()
    joiner.on_keys(hp, host.keys_for(hp))
    jp = joiner.deal_keys()
    host.on_keys(jp, joiner.keys_for(jp))


def play_round(
    host: HiddenTable,
    joiner: HiddenTable,
    rng: random.Random,
    step: Callable[[], None] = lambda: None,
) -> None:
    """Each side in turn plays a random hand card and draws, until the hands are empty."""
    tables = (host, joiner)
    seat = host.dealer
    while host.hand_positions(0) or host.hand_positions(1):
        me, peer = tables[seat], tables[1 - seat]
        card = me.cards[rng.choice(me.hand_positions(seat))]
        pos, key = me.reveal(card)
        share = me.draw_share()
        peer.on_reveal(card, pos, key)
        drawn_peer = peer.on_draw_share(share)
        back = peer.draw_share()
        drawn_me = me.on_draw_share(back)
        assert drawn_me == drawn_peer
        me.drawn()
        peer.drawn()
        step()
        seat = 1 - seat
    assert host.draws == 16 and host.draw_position == STOCK_START + 16


# ---------------------------------------------------------------------- forged masking steps
def _sum(*points: bytes) -> bytes:
    from p2pkoikoi.session.mental.group import psum

    return psum(points)


def forged_step(
    step: int,
    sec: DeckSecrets,
    inputs: tuple[bytes, ...],
    context: bytes,
    sums: dict[int, list[int]],
) -> bytes:
    """A cheater's masking step ``step`` whose output at each position ``p`` of ``sums``
    is its mask times the *sum* of the input points ``sums[p]`` (the D2 sum attack and
    its twins), sent with the best proof its real secrets give for that deck.

    ``step`` is 1 (host, D1 from the card points), 2 (joiner: the sums in ``E``, ``D2``
    re-keyed from it, so only the shuffle proof can catch it), 22 (joiner: ``E`` honest,
    the sums in ``D2``: the re-keying proof must catch it) or 3 (host, ``D3``).
    """
    from p2pkoikoi.session.mental import deck as d
    from p2pkoikoi.session.mental.group import CARD_POINTS
    from p2pkoikoi.session.mental.proof import prove_rekey, prove_shuffle

    ctx = context + bytes([2 if step == 22 else step])
    if step == 1:
        out = list(d.host_mask(sec))
        for p, srcs in sums.items():
            out[p] = mul(sec.scalar, _sum(*(CARD_POINTS[i] for i in srcs)))
        return d.encode_deck(out) + prove_shuffle(ctx, CARD_POINTS, out, sec.perm, sec.scalar)
    factors = d.rekey_factors(sec)
    if step in (2, 22):
        e = list(d.joiner_shuffle(sec, inputs))
        if step == 2:
            for p, srcs in sums.items():
                e[p] = mul(sec.scalar, _sum(*(inputs[i] for i in srcs)))
        d2 = [mul(factors[j], e[j]) for j in range(48)]
        if step == 22:
            for p, srcs in sums.items():
                d2[p] = mul(sec.keys[p], _sum(*(inputs[i] for i in srcs)))
        return (
            d.encode_deck(d2)
            + d.encode_deck(e)
            + prove_shuffle(ctx, inputs, e, sec.perm, sec.scalar)
            + prove_rekey(ctx, e, d2, factors)
        )
    assert step == 3
    d3 = list(d.host_lock(sec, inputs))
    for p, srcs in sums.items():
        d3[p] = mul(factors[p], _sum(*(inputs[i] for i in srcs)))
    return d.encode_deck(d3) + prove_rekey(ctx, inputs, d3, factors)


def d2_sum_attack(hand: tuple[int, ...]) -> dict[int, list[int]]:
    """The issue's attack: at three of the joiner's own hand positions, sums of D1 entries
    (``A + H1 + H2 + H3``, ``A + D + E``, ``D + H4 + H5 + H6`` with indices into D1)."""
    x = list(range(48))
    a, dd, ee, *h = x[40:48]
    return {hand[0]: [a, h[0], h[1], h[2]], hand[1]: [a, dd, ee], hand[2]: [dd, h[3], h[4], 0]}
