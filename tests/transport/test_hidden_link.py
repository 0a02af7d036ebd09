"""The hidden deal through the network link, in memory under a mock clock: a program that
withholds a move of the hidden deal (here its key for the other's draw) while keeping the
connection alive forfeits after the step deadline."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing
from test_reconnect import Net, Side, T, play

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Session
from p2pkoikoi.session.mental.play import CardMove
from p2pkoikoi.session.testing import SECRET, det_key, make_pair
from p2pkoikoi.transport.errors import PeerTimeoutError
from p2pkoikoi.transport.link.reconnect import Reconnect

RULES = get_preset("online").with_settings(rounds=2, deal="hidden")


def _pair_whose_joiner_changes_its_draw_keys(
    change: Callable[[CardMove], CardMove | None], kind: str = "draw"
) -> tuple[Session, Session]:
    """The test pair, but the joiner's program passes each move of ``kind`` it sends
    (by default its key for the other's draw) through ``change`` (None: the move
    never leaves)."""
    host, joiner = make_pair(RULES)
    start = joiner._start_match

    def start_match() -> None:
        start()
        h = joiner._hidden
        assert h is not None
        send = h._send

        def send_changed(move: CardMove) -> None:
            if move.kind == kind:
                changed = change(move)
                if changed is None:
                    return
                move = changed
            send(move)

        h._send = send_changed  # type: ignore[method-assign]

    joiner._start_match = start_match  # type: ignore[method-assign]
    return host, joiner


async def _play_over_the_link(host: Session, joiner: Session, tmp_path: Path) -> tuple[Side, Side]:
    """Both sessions through real links over an in-memory network; each side's outcome."""
    net = Net()
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)
    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=net.dial)
    a, b = net.pair()
    h, j = Side(), Side()
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, host, rc_h, tmp_path / "h.koikoi", 1)
            nursery.start_soon(play, j, b, joiner, rc_j, tmp_path / "j.koikoi", 2)
    return h, j


@pytest.mark.parametrize("kind", ["draw", "deck2", "keys", "declare", "audit"])
async def test_a_withheld_move_forfeits_after_the_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, kind: str
) -> None:
    """A draw key, a masking step, the deal keys, a declaration or an audit that the
    joiner's program withholds while it stays connected: its forfeit, in the host's
    record."""
    # the move never leaves; the program waits, answering pings
    host, joiner = _pair_whose_joiner_changes_its_draw_keys(lambda move: None, kind)
    h, _ = await _play_over_the_link(host, joiner, tmp_path)
    assert isinstance(h.error, PeerTimeoutError), h.error
    assert "withheld" in str(h.error) and "forfeits" in str(h.error)
    assert trio.current_time() >= T.handshake
    # main's forfeit machinery: the host's record says the joiner forfeited, and verify
    # reports it as valid but incomplete (one player's account)
    from p2pkoikoi.session.verify.check import verify_record
    from p2pkoikoi.transport.store.records import read_record

    rec = read_record(tmp_path / "h.koikoi")
    assert rec.forfeit is not None and rec.forfeit.seat == 1 and "withheld" in rec.forfeit.reason
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert any("joiner forfeited" in lack for lack in report.lacks)


async def test_a_cheat_caught_over_the_link_leaves_a_record_that_names_the_cheater(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    from p2pkoikoi.session.mental import NotACardError
    from p2pkoikoi.session.verify.check import verify_record
    from p2pkoikoi.transport.store.records import read_record

    host, joiner = _pair_whose_joiner_changes_its_draw_keys(
        lambda move: dataclasses.replace(move, keys=bytes([1]) + bytes(31))
    )
    h, _ = await _play_over_the_link(host, joiner, tmp_path)
    assert isinstance(h.error, NotACardError), h.error
    record = read_record(tmp_path / "h.koikoi")
    assert record.evidence is not None and record.evidence.seat == 0
    bad = verify_record(record).first_failure
    assert bad is not None and "seat 1 cheated" in bad.detail, bad
