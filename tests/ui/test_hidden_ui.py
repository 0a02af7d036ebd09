"""The terminal table with the hidden deal: two tables over loopback play a round."""

from __future__ import annotations

import queue
from pathlib import Path

from prompt_toolkit.input import PipeInput
from test_ui_net import (
    LIMIT,
    Side,
    argv,
    finish,
    host_invite,
    key,
    on_screen,
    play_to_round_end,
)

from p2pkoikoi.ui.app import TableApp


async def accept_hidden(table: TableApp, inp: PipeInput) -> None:
    await on_screen(table, "Alice invites you to a match")
    screen = table.screen_text()
    assert "* deal: hidden" in screen, screen  # the rules screen shows the setting
    await key(table, inp, "a")


def test_two_tables_play_a_hidden_round(tmp_path: Path) -> None:
    invites: queue.Queue[str] = queue.Queue()

    async def host(table: TableApp, inp: PipeInput) -> None:
        await host_invite(table, invites)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        await play_to_round_end(table, inp)

    async def joiner(table: TableApp, inp: PipeInput) -> None:
        await accept_hidden(table, inp)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        await play_to_round_end(table, inp)

    h = Side(argv(tmp_path, "host", "--rounds", "2", "--set", "deal=hidden"), host).start()
    invite = invites.get(timeout=LIMIT)
    j = Side(argv(tmp_path, "join", invite), joiner).start()
    finish(j, h)
    assert (tmp_path / "host.record").exists() and (tmp_path / "join.record").exists()
