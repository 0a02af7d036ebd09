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
from test_transport import (
    Side,
    T,
    host_session,
    joiner_session,
    link_player,
    play_side,
    random_choose,
)

from p2pkoikoi.cli.verify_cmd import EXIT_COMPLETE, EXIT_INCOMPLETE
from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import decode_record
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.link.lifetime import open_link


async def leaver(stream: trio.abc.Stream, record: Path, after: int) -> None:
    """The host plays at random until ``after`` actions, then leaves the table."""
    rng = random.Random(5)
    async with open_link(
        stream, host_session(), link_player(timeouts=T, record_path=record)
    ) as link:
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
        async with open_link(
            b, joiner_session(), link_player(timeouts=T, record_path=tmp_path / "j.k")
        ) as link:
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


async def test_leaving_on_the_other_players_turn_does_not_wait_for_its_move(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Issue 22, item 3: the person leaves while the other player is to act, and the
    other player's program never moves.  On the old code ``leave`` waited for the
    turn (a few seconds), then went without a resignation, and the other side
    counted the leaving as a forfeit only after its reconnect window.  Now the
    resignation goes at once, off-turn: both records end with it, signed by both."""
    from p2pkoikoi.transport.link.local_moves import LEAVE_OFF_TURN

    a, b = trio.testing.memory_stream_pair()
    took: list[float] = []
    ended: list[float] = []
    rng = random.Random(3)

    async def host() -> None:
        rec = tmp_path / "h.koikoi"
        async with open_link(a, host_session(), link_player(timeouts=T, record_path=rec)) as link:
            async for upd in link.updates:
                view = upd.view
                if upd.kind != "state" or view.to_act is None:
                    continue
                if view.to_act != link.seat:
                    break  # the joiner's turn: it never moves
                await link.act(rng.choice(view.legal_actions))
            start = trio.current_time()
            await link.leave()
            took.append(trio.current_time() - start)

    async def joiner() -> None:
        rec = tmp_path / "j.koikoi"
        with contextlib.suppress(KoiKoiError):
            async with open_link(
                b, joiner_session(), link_player(timeouts=T, record_path=rec)
            ) as link:
                async for upd in link.updates:  # never moves
                    if any(type(e).__name__ == "Resigned" for e in upd.events):
                        ended.append(trio.current_time())
                await link.wait_closed()

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_quiet, host)
            nursery.start_soon(_quiet, joiner)
    assert took and took[0] < LEAVE_OFF_TURN, took  # no wait for the turn at all
    assert ended, "the joiner never saw the resignation"
    for name in ("h.koikoi", "j.koikoi"):
        rec = decode_record((tmp_path / name).read_bytes())
        assert rec.forfeit is None, (name, rec.forfeit)
        last = rec.actions[-1]
        assert (last.action, last.seat) == ("resign", 0), (name, last)
        report = verify_record(rec)
        assert report.complete, (name, report.lacks)
        labels = [c for c in report.checks if c.name == "resigned"]
        assert labels and "on the other player's turn" in labels[0].detail, report.checks
    h, j = ((tmp_path / n).read_bytes() for n in ("h.koikoi", "j.koikoi"))
    assert decode_record(h).actions == decode_record(j).actions


async def _quiet(f: Callable[[], Awaitable[None]]) -> None:
    with contextlib.suppress(KoiKoiError):
        await f()
