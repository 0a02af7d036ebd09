"""Issue 10.9: a network player who leaves the table mid-match still gets a complete
record: the result with its own signature and the opponent's, or a line saying why
the opponent's is missing (and ``p2pkoikoi verify`` says which)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio
import trio.testing
from test_transport import Side, T, host_session, joiner_session, play_side, random_choose

from p2pkoikoi.cli.verify_cmd import EXIT_COMPLETE, EXIT_INCOMPLETE
from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import decode_record
from p2pkoikoi.session.verify import verify_record
from p2pkoikoi.transport.match_link import open_link


async def leaver(stream: trio.abc.Stream, record: Path, after: int) -> None:
    """The host plays at random until ``after`` actions, then leaves the table."""
    rng = random.Random(5)
    async with open_link(stream, host_session(), timeouts=T, record_path=record) as link:
        async for upd in link.updates:
            if link.session.seq >= after:
                break
            view = upd.view
            if view.to_act == link.seat and view.legal_actions and upd.kind == "state":
                await link.act(rng.choice(view.legal_actions))
        await link.leave()


async def test_leaving_mid_match_gives_both_a_complete_record(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    a, b = trio.testing.memory_stream_pair()
    j = Side("joiner")
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(leaver, a, tmp_path / "h.koikoi", 3)
            nursery.start_soon(
                play_side, j, b, joiner_session(), random_choose(2), tmp_path / "j.koikoi"
            )
    assert j.error is None, j.error
    for name in ("h.koikoi", "j.koikoi"):
        rec = decode_record((tmp_path / name).read_bytes())
        report = verify_record(rec)
        assert report.complete, (name, report.lacks)
        assert rec.actions[-1].action == "resign" and rec.actions[-1].seat == 0


async def test_leaving_when_the_peer_never_signs_says_why(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The opponent's program goes away right after our resignation: our record has the
    result with our signature and says why the other one is missing (verify: exit 3)."""
    a, b = trio.testing.memory_stream_pair()

    async def joiner_that_vanishes() -> None:
        async with open_link(b, joiner_session(), timeouts=T, record_path=tmp_path / "j.k") as link:
            async for upd in link.updates:
                if any(type(e).__name__ == "Resigned" for e in upd.events):
                    await b.aclose()  # gone before it signs the result
                    return
                view = upd.view
                if view.to_act == link.seat and view.legal_actions and upd.kind == "state":
                    await link.act(random.Random(1).choice(view.legal_actions))

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            # the host's link ends with the lost connection: its error is not the subject
            nursery.start_soon(_quietly, lambda: leaver(a, tmp_path / "h.koikoi", 2))
            nursery.start_soon(_quietly, joiner_that_vanishes)
    rec = decode_record((tmp_path / "h.koikoi").read_bytes())
    assert rec.result is not None and rec.final_sigs[0] is not None and rec.final_sigs[1] is None
    assert rec.missing, rec
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert any(lack.startswith("the joiner's final signature: ") for lack in report.lacks)
    from p2pkoikoi.cli import main

    assert main(["verify", str(tmp_path / "h.koikoi")]) == EXIT_INCOMPLETE != EXIT_COMPLETE


async def _quietly(fn: Callable[[], Awaitable[None]]) -> None:
    with contextlib.suppress(KoiKoiError):
        await fn()
