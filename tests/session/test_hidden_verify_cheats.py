"""Each cheat over the wire: the honest session stops with its own error, and ``verify`` of
the honest side's record fails naming the cheater."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session.mental import (
    BrokenAuditError,
    FalseClaimError,
    SwappedCardError,
    WithheldKeyError,
)
from p2pkoikoi.session.mental.deck import encode_deck
from p2pkoikoi.session.mental.errors import BadProofError
from p2pkoikoi.session.mental.group import mul
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch
from p2pkoikoi.session.mental.table import FIELD_POSITIONS
from p2pkoikoi.session.records.journal import decode_record
from p2pkoikoi.session.records.writer import encode_record
from p2pkoikoi.session.session import Session
from p2pkoikoi.session.testing import drain, make_pair, random_chooser, run_pair
from p2pkoikoi.session.verify.check import verify_record

RULES = PRESETS["online"].with_settings(deal="hidden", rounds=2)
Tamper = Callable[[HiddenMatch, CardMove], CardMove]


def modify(session: Session, tamper: Tamper) -> None:
    """A modified program: it keeps its own view honest but sends ``tamper(move)``."""
    h = session._hidden
    assert h is not None

    def send(move: CardMove) -> None:
        bad = tamper(h, move)
        h.outbox.append((bad, h.state_hash()))
        # a deck it sends is part of its own state hash: it keeps the one it sent
        h._process(bad if move.kind.startswith("deck") else move)

    h._send = send  # type: ignore[method-assign]

    # and it does not check its own sabotage (a duplicate it made itself)
    def lenient() -> None:
        t = h.table
        t._learn = lambda pos, card: t.cards.__setitem__(pos, card)  # type: ignore[method-assign]

    begin = h._begin_deal

    def begin_deal() -> None:
        begin()
        lenient()

    h._begin_deal = begin_deal  # type: ignore[method-assign]
    lenient()


def wrong_masking(h: HiddenMatch, m: CardMove) -> CardMove:
    if m.kind != "deck3":
        return m
    f = FIELD_POSITIONS[0]
    two = (2).to_bytes(32, "little")
    d = m.deck
    return dataclasses.replace(
        m, deck=d[: f * 32] + mul(two, d[f * 32 : f * 32 + 32]) + d[f * 32 + 32 :]
    )


def swapped_card(h: HiddenMatch, m: CardMove) -> CardMove:
    if m.kind != "act" or not m.action.startswith("play"):
        return m
    played = m.action.split()[1]
    other = next(
        c for c in (h.table.cards[p] for p in h.table.hand_positions(h.seat)) if c is not None
    )
    from p2pkoikoi.engine.cards import CARDS

    code = CARDS[other].code if CARDS[other].code != played else "1b"
    return dataclasses.replace(m, action=f"play {code}")


def duplicated_card(h: HiddenMatch, m: CardMove) -> CardMove:
    if m.kind != "deck2":
        return m
    t = h.table
    d1 = t.decks[0]
    a, b = FIELD_POSITIONS[0], FIELD_POSITIONS[1]
    d2 = list(t.decks[1])
    d2[b] = mul(t.secrets.keys[b], d1[t.secrets.perm[a]])  # the same card twice on the field
    return dataclasses.replace(m, deck=encode_deck(d2) + m.deck[48 * 32 :])


def false_claim(h: HiddenMatch, m: CardMove) -> CardMove:
    if m.kind != "declare" or m.keys:
        return m
    own = h.table.hand_positions(h.seat)
    return dataclasses.replace(m, keys=b"".join(h.table.secrets.keys[p] for p in own))


def withheld_draw_key(h: HiddenMatch, m: CardMove) -> CardMove:
    if m.kind != "draw":
        return m
    return CardMove("act", m.seat, "koikoi")


def broken_audit(h: HiddenMatch, m: CardMove) -> CardMove:
    if m.kind != "audit":
        return m
    d = bytearray(m.deck)
    # its key for a field card, sent during the round (hidden-deal.md section 5: an
    # audit is scalar || perm || keys)
    keys_at = 32 + 48
    d[keys_at + FIELD_POSITIONS[0] * 32] ^= 1
    return dataclasses.replace(m, deck=bytes(d))


CASES: list[tuple[str, Tamper, int, type]] = [
    ("wrong masking", wrong_masking, 0, BadProofError),
    ("swapped card", swapped_card, 1, SwappedCardError),
    ("duplicated card", duplicated_card, 1, BadProofError),
    ("false hand-yaku claim", false_claim, 1, FalseClaimError),
    ("withheld draw key", withheld_draw_key, 1, WithheldKeyError),
    ("broken audit", broken_audit, 1, BrokenAuditError),
]


@pytest.mark.parametrize(("name", "tamper", "cheater", "error"), CASES, ids=[c[0] for c in CASES])
def test_a_cheat_is_caught_and_verify_names_the_cheater(
    name: str, tamper: Tamper, cheater: int, error: type
) -> None:
    host, joiner = make_pair(RULES, label=name)
    sides = (host, joiner)
    # the handshake and the seed; once both sides have started the match, the cheater's
    # program is modified (the host's first move, deck1, may already be on its way)
    pending = [b"", b""]
    for _ in range(20):
        for i in (0, 1):
            pending[i] += sides[i].data_to_send()
            drain(sides[i])
        for i in (0, 1):
            if pending[i]:
                sides[1 - i].receive_data(pending[i])
                pending[i] = b""
        if host._hidden is not None and joiner._hidden is not None:
            break
    cheat = sides[cheater]
    honest = sides[1 - cheater]
    modify(cheat, tamper)
    with pytest.raises(error) as exc:
        run_pair(host, joiner, random_chooser(5))
    assert exc.value.seat == cheater  # type: ignore[attr-defined]
    rec = decode_record(encode_record(honest.record()))
    report = verify_record(rec)
    bad = report.first_failure
    assert bad is not None and f"seat {cheater} cheated" in bad.detail, report.to_dict()


def test_a_broken_host_audit_at_the_end_of_a_round_is_pinned_on_the_host() -> None:
    """The joiner catches it; the evidence is labelled with the audited deal, not the next."""
    host, joiner = make_pair(RULES, label="host-audit")
    run_pair(host, joiner, None)
    modify(host, broken_audit)
    with pytest.raises(BrokenAuditError) as exc:
        run_pair(host, joiner, random_chooser(5))
    assert exc.value.seat == 0
    rec = decode_record(encode_record(joiner.record()))
    assert rec.evidence is not None and rec.evidence.seat == 1
    assert (rec.evidence.round, rec.evidence.attempt) == (1, 0)
    bad = verify_record(rec).first_failure
    assert bad is not None and "seat 0 cheated" in bad.detail, bad
