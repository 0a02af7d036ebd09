"""Practice games: LocalLink against an in-process opponent, including one that fails."""

from __future__ import annotations

import trio

from p2pkoikoi.engine import Action, KoiKoiError, PlayerView, get_preset
from p2pkoikoi.transport.link.contract import LocalLink, Update

RULES = get_preset("online").with_settings(rounds=1)
SEED = bytes(range(32))


def first_legal(view: PlayerView) -> Action:
    return view.legal_actions[0]


async def play_out(link: LocalLink) -> list[Update]:
    seen: list[Update] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.run)
        async for update in link.updates:
            seen.append(update)
            if update.kind == "over":
                break
            if update.view.to_act == link.seat:
                await link.act(update.view.legal_actions[0])
    return seen


async def test_practice_match_runs_to_the_end() -> None:
    link = LocalLink(RULES, SEED, first_legal)
    seen = await play_out(link)
    assert seen[-1].kind == "over" and link.state.is_over
    assert seen[-1].final_hash == link.state.state_hash().hex()


async def test_a_failing_opponent_forfeits() -> None:
    def broken(view: PlayerView) -> Action:
        raise KoiKoiError("engine crashed (exit status 1)")

    link = LocalLink(RULES, SEED, broken)
    with trio.fail_after(10):
        seen = await play_out(link)
    over = seen[-1]
    assert over.kind == "over" and "Computer forfeits: engine crashed" in over.text
    assert link.state.winner == link.seat


async def test_an_illegal_opponent_action_forfeits() -> None:
    link = LocalLink(RULES, SEED, lambda view: Action.parse("koikoi"))
    with trio.fail_after(10):
        seen = await play_out(link)
    assert "forfeits: illegal action koikoi" in seen[-1].text
