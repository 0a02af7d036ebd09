"""Rematch through two NetworkLinks in memory, under trio's mock clock: accepted (a new
record file per match), declined (the connection stays until goodbye)."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from test_transport import Side, T, host_session, joiner_session, link_player, random_choose

from p2pkoikoi.cli.headless import play_headless
from p2pkoikoi.session import decode_record
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.link.lifetime import open_link


async def _side(
    side: Side,
    stream: trio.abc.Stream,
    host: bool,
    record: Path,
    want_again: bool,
    results: dict[str, object],
) -> None:
    session = host_session() if host else joiner_session()
    try:
        async with open_link(
            stream, session, link_player(timeouts=T, record_path=record), notify=side.notes.append
        ) as link:
            side.link = link
            await play_headless(
                link, random_choose(1 if host else 2), side.events.append, in_thread=False
            )
            if want_again:
                results[side.name] = await link.play_again(timeout=60)
                if results[side.name]:
                    side.final = await play_headless(
                        link, random_choose(3), side.events.append, in_thread=False
                    )
            else:
                assert await link.wait_offer()
                await link.decline_again("tired")
    except Exception as exc:  # the test inspects it
        side.error = exc


async def _pair(
    tmp_path: Path, host_again: bool, joiner_again: bool
) -> tuple[Side, Side, dict[str, object]]:
    a, b = trio.testing.memory_stream_pair()
    h, j = Side("host"), Side("joiner")
    results: dict[str, object] = {}
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_side, h, a, True, tmp_path / "h.koikoi", host_again, results)
            nursery.start_soon(_side, j, b, False, tmp_path / "j.koikoi", joiner_again, results)
    return h, j, results


async def test_both_play_again_each_match_its_own_record(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    h, j, results = await _pair(tmp_path, True, True)
    assert h.error is None and j.error is None, (h.error, j.error)
    assert results == {"host": True, "joiner": True}
    assert h.link is not None and h.link.match_number == 2
    assert h.link.finished_records == [tmp_path / "h.koikoi"]
    assert h.final is not None and j.final is not None and h.final["match"] == 2
    assert h.final["final_hash"] == j.final["final_hash"]
    recs = {}
    for name in ("h.koikoi", "j.koikoi", "h-match2.koikoi", "j-match2.koikoi"):
        rec = decode_record((tmp_path / name).read_bytes())
        assert verify_record(rec).complete, name
        recs[name] = rec
    assert recs["h-match2.koikoi"] == recs["j-match2.koikoi"]
    assert recs["h-match2.koikoi"].previous == recs["h.koikoi"].result.transcript_hash  # type: ignore[union-attr]
    assert [n["match"] for n in h.notes if n["event"] == "rematch"] == [2]


async def test_a_declined_offer_returns_false_with_the_reason(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    h, j, results = await _pair(tmp_path, True, False)
    assert h.error is None and j.error is None, (h.error, j.error)
    assert results == {"host": False}
    assert h.link is not None and h.link.rematch_declined == "tired"
    assert any(n["event"] == "rematch_declined" for n in h.notes)
    assert any(n["event"] == "rematch_offered" for n in j.notes)
    assert not (tmp_path / "h-match2.koikoi").exists()
    assert verify_record(decode_record((tmp_path / "h.koikoi").read_bytes())).complete
