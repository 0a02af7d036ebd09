"""The hidden deal through the network link, in memory under a mock clock: a program that
withholds a move of the hidden deal (here its key for the other's draw) while keeping the
connection alive forfeits after the step deadline."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from test_reconnect import Net, Side, T, play

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Session
from p2pkoikoi.session.mental.play import CardMove
from p2pkoikoi.session.testing import SECRET, det_bytes, det_key
from p2pkoikoi.transport.errors import PeerTimeoutError
from p2pkoikoi.transport.reconnect import Reconnect

RULES = get_preset("online").with_settings(rounds=2, deal="hidden")


def withholding_joiner() -> Session:
    """A joiner whose program never sends its key for the host's first draw."""
    s = Session(
        "joiner",
        identity_key=det_key("joiner"),
        invite_secret=SECRET,
        name="Bob",
        entropy=det_bytes("entropy/joiner"),
        expected_rules=RULES,
    )
    start = s._start_match

    def start_match() -> None:
        start()
        h = s._hidden
        assert h is not None
        send = h._send

        def send_but_withhold(move: CardMove) -> None:
            if move.kind == "draw":
                return  # the key never leaves; the program waits, answering pings
            send(move)

        h._send = send_but_withhold  # type: ignore[method-assign]

    s._start_match = start_match  # type: ignore[method-assign]
    return s


async def test_a_withheld_draw_key_forfeits_after_the_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    net = Net()
    host = Session(
        "host",
        identity_key=det_key("host"),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("entropy/host"),
        rules=RULES,
    )
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)
    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=net.dial)
    a, b = net.pair()
    h, j = Side(), Side()
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, host, rc_h, tmp_path / "h.koikoi", 1)
            nursery.start_soon(play, j, b, withholding_joiner(), rc_j, tmp_path / "j.koikoi", 2)
    assert isinstance(h.error, PeerTimeoutError), h.error
    assert "withheld" in str(h.error) and "forfeits" in str(h.error)
    assert trio.current_time() >= T.handshake
    # main's forfeit machinery: the host's record says the joiner forfeited, and verify
    # reports it as valid but incomplete (one player's account)
    from p2pkoikoi.session.verify import verify_record
    from p2pkoikoi.transport.record_files import read_record

    rec = read_record(tmp_path / "h.koikoi")
    assert rec.forfeit is not None and rec.forfeit.seat == 1 and "withheld" in rec.forfeit.reason
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert any("joiner forfeited" in lack for lack in report.lacks)


async def test_a_cheat_caught_over_the_link_leaves_a_record_that_names_the_cheater(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    from p2pkoikoi.session.mental import NotACardError
    from p2pkoikoi.session.verify import verify_record
    from p2pkoikoi.transport.record_files import read_record

    net = Net()
    host = Session(
        "host",
        identity_key=det_key("host"),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("entropy/host"),
        rules=RULES,
    )
    joiner = Session(
        "joiner",
        identity_key=det_key("joiner"),
        invite_secret=SECRET,
        name="Bob",
        entropy=det_bytes("entropy/joiner"),
        expected_rules=RULES,
    )
    start = joiner._start_match

    def start_match() -> None:
        start()
        h = joiner._hidden
        assert h is not None
        send = h._send

        def send_garbage(move: CardMove) -> None:
            if move.kind == "draw":
                import dataclasses

                move = dataclasses.replace(move, keys=bytes([1]) + bytes(31))
            send(move)

        h._send = send_garbage  # type: ignore[method-assign]

    joiner._start_match = start_match  # type: ignore[method-assign]
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)
    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=net.dial)
    a, b = net.pair()
    h, j = Side(), Side()
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, host, rc_h, tmp_path / "h.koikoi", 1)
            nursery.start_soon(play, j, b, joiner, rc_j, tmp_path / "j.koikoi", 2)
    assert isinstance(h.error, NotACardError), h.error
    record = read_record(tmp_path / "h.koikoi")
    assert record.evidence is not None and record.evidence.seat == 0
    bad = verify_record(record).first_failure
    assert bad is not None and "seat 1 cheated" in bad.detail, bad
