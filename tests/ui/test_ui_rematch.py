"""The end-of-match page over a real loopback connection: "r: play again" on one table,
the offer shown on the other, accepted with r, and both tables deal match 2."""

from __future__ import annotations

import queue
from pathlib import Path

from prompt_toolkit.input import PipeInput
from test_ui_net import ENTER, LIMIT, Side, argv, finish, host_invite, key, on_screen

from p2pkoikoi.ui.app import TableApp
from p2pkoikoi.ui.state import Page


async def play_to_match_end(table: TableApp, inp: PipeInput, *, offer: bool = True) -> None:
    """Enter at every decision and on every round page until the end-of-match page."""
    st = table.state
    for _ in range(200):
        await table.wait_for(
            lambda: st.page is not None or (st.decision is not None and not st.busy),
            "a decision or a page",
        )
        if st.page is Page.OVER:
            break
        await key(table, inp, ENTER)
    else:
        raise AssertionError("the match did not end")
    if not offer:  # the last match: the other table may already have closed
        return

    def offered() -> bool:  # ours to make, or the other side's already made
        screen = table.screen_text()
        return "Press r to play again" in screen or "wants to play again" in screen

    await table.wait_for(offered, "r: play again on the end page")


async def second_match(table: TableApp, inp: PipeInput) -> None:
    st = table.state
    await table.wait_for(
        lambda: st.over is None and st.view is not None and not st.rematch_possible,
        "the second match's deal",
    )
    link = table.link
    assert link is not None and link.match_number == 2  # type: ignore[attr-defined]
    await play_to_match_end(table, inp, offer=False)  # the second match is played out too


def test_play_again_from_the_end_page(tmp_path: Path) -> None:
    invites: queue.Queue[str] = queue.Queue()

    async def host(table: TableApp, inp: PipeInput) -> None:
        await host_invite(table, invites)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        await play_to_match_end(table, inp)
        inp.send_text("r")
        # the joiner accepts only once it saw our offer, so this shows first (unless
        # the second deal already replaced the end page before the next render)
        await table.wait_for(
            lambda: (
                "Waiting for the other player's answer" in table.screen_text()
                or table.state.over is None
            ),
            "the waiting line",
        )
        await second_match(table, inp)

    async def joiner(table: TableApp, inp: PipeInput) -> None:
        await on_screen(table, "Alice invites you to a match")
        await key(table, inp, "a")
        await table.wait_for(lambda: table.state.view is not None, "the match")
        await play_to_match_end(table, inp)
        await on_screen(table, "The other player wants to play again: press r to accept.")
        inp.send_text("r")
        await second_match(table, inp)

    h = Side(argv(tmp_path, "host", "--rounds", "1"), host).start()
    invite = invites.get(timeout=LIMIT)
    j = Side(argv(tmp_path, "join", invite), joiner).start()
    finish(j, h)
    for who in ("host", "join"):
        assert (tmp_path / f"{who}.record").exists()
        assert (tmp_path / f"{who}-match2.record").exists()  # the second match's own record
