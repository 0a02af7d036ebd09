"""The terminal table: the real Application driven by key presses through a pipe input.

Each test runs a practice match (LocalLink) against a stand-in opponent that
plays its first legal action, with a fixed seed chosen so the situation under
test happens.  The screen is a fixed-size DummyOutput; what a person sees is
read back from the renderer's last screen.  Nothing sleeps: tests wait on the
table's state and renders (``TableApp.wait_for``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import cache

import pytest
import trio
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pkoikoi.engine import Action, ActionKind, MatchState, Phase, PlayerView, RuleSet, get_preset
from p2pkoikoi.transport.link.contract import GameLink, LocalLink
from p2pkoikoi.ui.app import TableApp, TableContext
from p2pkoikoi.ui.state import Decision, Page
from p2pkoikoi.ui.tiles import tile_text

ENTER, RIGHT, LEFT, ESC = "\r", "\x1b[C", "\x1b[D", "\x1b"


class SizedOutput(DummyOutput):
    """A DummyOutput with a size the test controls (DummyOutput is fixed at 80 x 40)."""

    def __init__(self, rows: int = 24, columns: int = 80) -> None:
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


def first_legal(view: PlayerView) -> Action:
    return view.legal_actions[0]


def my_keys_policy(view: PlayerView) -> Action:
    """What pressing Enter at every decision does (cursor on the first card, Stop by default)."""
    legal = view.legal_actions
    if view.phase is Phase.PLAY:
        first = next(iter(view.hand))
        return next(a for a in legal if a.card is first)
    if view.phase is Phase.KOIKOI:
        return next(a for a in legal if a.kind is ActionKind.STOP)
    return legal[0]


def _seed(i: int) -> bytes:
    return i.to_bytes(32, "big")


@cache
def find_seed(want: str, preset: str = "online") -> bytes:
    """A seed whose first round, played by Enter presses against ``first_legal``, reaches ``want``."""
    rules = get_preset(preset)
    for i in range(2000):
        state, _ = MatchState.start(rules, _seed(i))
        while not state.is_over and state.round == 1:
            if state.to_act == 0:
                v = state.view(0)
                if want == "two_match" and v.phase is Phase.PLAY:
                    first = next(iter(v.hand))
                    if sum(1 for a in v.legal_actions if a.card is first) == 2:
                        return _seed(i)
                if want == "koikoi" and v.phase is Phase.KOIKOI:
                    return _seed(i)
                if want == "i_deal" and state.dealer == 0 and v.phase is Phase.PLAY:
                    return _seed(i)
                action = my_keys_policy(v)
            else:
                action = state.legal_actions()[0]
            state, _ = state.apply(action)
    raise AssertionError(f"no seed reaches {want}")


Body = Callable[[TableApp, PipeInput, SizedOutput], Awaitable[None]]


def play(body: Body, *, seed: bytes, rules: RuleSet | None = None, ascii: bool = False) -> None:
    """Run a practice table on ``seed`` and drive it with ``body``."""
    rules = rules or get_preset("online")

    async def main() -> None:
        with create_pipe_input() as inp:
            out = SizedOutput()

            async def factory(ctx: TableContext) -> GameLink:
                link = LocalLink(rules, seed, first_legal, names=("You", "Computer"))
                ctx.nursery.start_soon(link.run)
                return link

            table = TableApp(factory, ascii=ascii, input=inp, output=out, refresh_interval=None)
            table.app.ttimeoutlen = 0.05  # a lone Escape is flushed quickly
            task = asyncio.create_task(table.run())
            try:
                await table.wait_for(
                    lambda: table.state.view is not None and bool(table.screen_text()), "first view"
                )
                await body(table, inp, out)
            finally:
                table.exit()
                await asyncio.wait_for(task, 10)

    asyncio.run(main())


async def press(table: TableApp, inp: PipeInput, keys: str) -> None:
    """Send keys and wait until the table has changed because of them and redrawn."""
    st = table.state
    before = (
        st.view,
        st.choosing,
        st.cursor,
        st.target_cursor,
        st.dialog_cursor,
        tuple(st.pages),
        st.dialog,
        st.busy,
        st.scroll,
    )
    renders = table._renders
    inp.send_text(keys)

    def moved() -> bool:
        now = (
            st.view,
            st.choosing,
            st.cursor,
            st.target_cursor,
            st.dialog_cursor,
            tuple(st.pages),
            st.dialog,
            st.busy,
            st.scroll,
        )
        return now != before and table._renders > renders

    await table.wait_for(moved, f"the effect of {keys!r}")


async def until_decision_or_page(table: TableApp) -> None:
    st = table.state
    await table.wait_for(
        lambda: st.page is not None or st.decision is not None, "a decision or a page"
    )
    await rendered(table)


async def rendered(table: TableApp) -> None:
    """Wait for a render that happened after now."""
    n = table._renders
    table.app.invalidate()
    await table.wait_for(lambda: table._renders > n, "a render")


# ---------------------------------------------------------------------------- tests
def test_render_80x24_shows_hand_field_and_scores() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        await until_decision_or_page(table)
        await table.wait_for(lambda: st.decision is Decision.PLAY, "my turn")
        await rendered(table)
        screen = table.screen_text()
        lines = screen.splitlines()
        assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
        v = st.view
        assert v is not None and len(v.hand) == 8
        for card in v.hand:
            assert tile_text(card, False) in screen, card
        for card in v.field:
            assert tile_text(card, False) in screen, card
        assert "Field" in screen and f"stock {v.stock_size}" in screen
        side = "\n".join(line[58:] for line in lines)
        assert f"You{v.scores[0]:>15}" in side and f"Computer{v.scores[1]:>10}" in side
        assert "Round 1 of 6" in screen
        assert "Your turn" in screen

    play(body, seed=find_seed("i_deal"))


def test_a_whole_round_by_key_presses() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        for _ in range(60):
            await until_decision_or_page(table)
            if st.page is Page.ROUND:
                break
            await press(table, inp, ENTER)
        else:
            raise AssertionError("the round did not end")
        screen = table.screen_text()
        assert "Round 1 of 6:" in screen
        assert "Your captures" in screen and "Computer's captures" in screen
        assert "Pools now:" in screen
        summary = st.summaries[0]
        if summary.winner is not None and summary.breakdown is not None:
            for y in summary.breakdown.yaku:
                assert y.romaji in screen
        await press(table, inp, ENTER)
        assert st.page is None
        await rendered(table)
        assert "Round 2 of 6" in table.screen_text()

    play(body, seed=find_seed("i_deal"))


def test_choosing_between_two_matching_field_cards() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        while True:
            await until_decision_or_page(table)
            assert st.page is None, "the round ended before a two-card choice"
            v = st.view
            assert v is not None
            first = st.hand[0]
            if sum(1 for a in v.legal_actions if a.card is first) == 2:
                break
            await press(table, inp, ENTER)
        await press(table, inp, ENTER)  # play the first card: two field cards match
        assert st.decision is Decision.TARGET
        targets = st.targets()
        assert len(targets) == 2 and all(t.month == first.month for t in targets)
        screen = table.screen_text()
        assert "Two cards match" in screen
        await press(table, inp, ESC)  # back to choosing a hand card
        assert st.decision is Decision.PLAY and st.choosing is None
        await press(table, inp, ENTER)
        await press(table, inp, "2")  # take the second one
        assert st.target_cursor == 1
        log_before = len(st.log)
        await press(table, inp, ENTER)
        await table.wait_for(lambda: len(st.log) > log_before, "the play in the log")
        assert any(
            targets[1].english in text and "You played" in text for _, text in st.log[log_before:]
        )
        assert targets[1] in st.view.piles[0] if st.view else False

    play(body, seed=find_seed("two_match"))


def test_koikoi_dialog_shows_worth_and_calls() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        while True:
            await until_decision_or_page(table)
            assert st.page is None, "the round ended before a koi-koi choice"
            if st.decision is Decision.KOIKOI:
                break
            await press(table, inp, ENTER)
        await rendered(table)
        screen = table.screen_text()
        v = st.view
        assert v is not None
        assert "You made a yaku!" in screen
        assert "Stop now:" in screen
        assert "if you win later: x2 (now x1)" in screen  # online: x(1 + all calls)
        for y in v.yaku(0):
            assert y.romaji in screen
        assert "k Koi-koi" in screen and "s Stop" in screen
        await press(table, inp, "1")
        await press(table, inp, ENTER)
        await table.wait_for(lambda: st.view is not None and st.view.calls[0] == 1, "the call")
        assert any("You called koi-koi" in text for _, text in st.log)

    play(body, seed=find_seed("koikoi"))


def test_help_shows_the_rules_in_force_and_escape_returns() -> None:
    rules = get_preset("nintendo").with_settings(goko=15)  # as --set goko=15 would

    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        await until_decision_or_page(table)
        await press(table, inp, "?")
        screen = table.screen_text()
        assert st.page is Page.HELP
        assert "Yaku in these rules" in screen
        goko = next(line for line in screen.splitlines() if "Gokō" in line)
        assert goko.rstrip().endswith("15")  # the value in force, not the preset's 10
        await press(table, inp, "\x1b[6~")  # page down reaches the koi-koi rules
        assert "x2 if the loser of the round called koi-koi" in table.screen_text()
        await press(table, inp, ESC)
        assert st.page is None
        assert "Field" in table.screen_text()

    play(body, seed=_seed(3), rules=rules)


def test_resize_redraws_to_the_new_size() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        await until_decision_or_page(table)
        await rendered(table)
        narrow = table.screen_text().splitlines()
        out.size = Size(rows=30, columns=100)
        n = table._renders
        table.app._on_resize()
        await table.wait_for(lambda: table._renders > n, "a redraw")
        wide = table.screen_text().splitlines()
        assert len(wide) > 24 or any(len(line) > 80 for line in wide)
        assert max(len(line) for line in wide) > max(len(line) for line in narrow)
        out.size = Size(rows=24, columns=80)
        n = table._renders
        table.app._on_resize()
        await table.wait_for(lambda: table._renders > n, "a redraw")
        assert all(len(line) <= 80 for line in table.screen_text().splitlines())

    play(body, seed=_seed(5))


def test_resign_asks_first_then_ends_the_match() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        await until_decision_or_page(table)
        await press(table, inp, "r")
        assert "Resign the match?" in table.screen_text()
        await press(table, inp, ENTER)  # "No" is the default
        assert st.dialog is None and st.over is None
        await press(table, inp, "r")
        await press(table, inp, "1")
        inp.send_text(ENTER)
        await table.wait_for(lambda: st.page is Page.OVER, "the match-end page")
        await rendered(table)
        screen = table.screen_text()
        assert "Computer won" in screen and "resigned" in screen
        assert "Total" in screen

    play(body, seed=find_seed("i_deal"))


def test_ascii_mode_draws_only_ascii() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        await until_decision_or_page(table)
        await rendered(table)
        screen = table.screen_text()
        assert screen.isascii(), [ch for ch in screen if not ch.isascii()]
        await press(table, inp, "?")
        assert table.screen_text().isascii()

    play(body, seed=find_seed("i_deal"), ascii=True)


@pytest.mark.parametrize("preset", ["rulebook"])
def test_hand_swap_offer(preset: str) -> None:
    rules = get_preset(preset)
    if not rules.hand_swap:
        pytest.skip("preset has no hand swap")
    for i in range(200):
        state, _ = MatchState.start(rules, _seed(i))
        if state.phase is Phase.HAND_SWAP and state.to_act == 0:
            break
    else:
        pytest.skip("no seed offers seat 0 the swap")

    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        await until_decision_or_page(table)
        assert st.decision is Decision.SWAP
        screen = table.screen_text()
        assert "Hand swap" in screen and "1 Swap" in screen and "2 Keep" in screen
        await press(table, inp, "2")
        await press(table, inp, ENTER)
        await table.wait_for(
            lambda: st.view is not None and st.view.phase is not Phase.HAND_SWAP, "the deal"
        )
        assert any("kept the hands" in text for _, text in st.log)

    play(body, seed=_seed(i), rules=rules)


def test_waiting_screen_then_a_context_manager_link_left_cleanly() -> None:
    """The host/join shape: the factory shows an invite, waits, then yields a link from a context."""
    gate = trio.Event()
    left: list[bool] = []
    rules = get_preset("online")

    @asynccontextmanager
    async def factory(ctx: TableContext) -> AsyncIterator[GameLink]:
        ctx.waiting("Waiting for your opponent", "Invite: p2pk1-TEST", "Pass it on.")
        await gate.wait()
        link = LocalLink(rules, find_seed("i_deal"), first_legal)
        ctx.nursery.start_soon(link.run)
        try:
            yield link
        finally:
            left.append(True)

    async def main() -> None:
        with create_pipe_input() as inp:
            table = TableApp(factory, input=inp, output=SizedOutput(), refresh_interval=None)
            task = asyncio.create_task(table.run())
            try:
                await table.wait_for(
                    lambda: "p2pk1-TEST" in table.screen_text(), "the invite on screen"
                )
                assert table.state.page is Page.WAITING
                assert table._token is not None
                table._token.run_sync_soon(gate.set)
                await table.wait_for(lambda: table.state.decision is Decision.PLAY, "the table")
                await rendered(table)
                assert "Field" in table.screen_text()
            finally:
                table.exit()
                await asyncio.wait_for(task, 10)
        assert left == [True]

    asyncio.run(main())


def test_mouse_click_selects_then_plays_a_hand_card() -> None:
    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        await table.wait_for(lambda: st.decision is Decision.PLAY, "my turn")
        await rendered(table)
        card = st.hand[1]
        lines = table.screen_text().splitlines()
        text = tile_text(card, False)
        y = next(i for i, line in enumerate(lines) if text in line and "Your" not in line and i > 8)
        x = lines[y].index(text) + 2
        click = f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m"
        await press(table, inp, click)
        assert st.cursor == 1
        hand_before = len(st.hand)
        inp.send_text(click)  # a second click on the selected card plays it
        await table.wait_for(lambda: len(st.hand) < hand_before, "the card played")
        assert card not in st.hand

    play(body, seed=find_seed("i_deal"))


def test_q_on_the_end_of_round_page_asks_before_it_resigns() -> None:
    """Issue 22, item 3: as mid-round, ``q`` on the round's summary page asks first;
    "No" (the default) leaves the match as it was."""

    async def body(table: TableApp, inp: PipeInput, out: SizedOutput) -> None:
        st = table.state
        for _ in range(60):
            await until_decision_or_page(table)
            if st.page is Page.ROUND:
                break
            await press(table, inp, ENTER)
        else:
            raise AssertionError("the round did not end")
        await press(table, inp, "q")
        await rendered(table)
        assert "Leave now? That resigns the match." in table.screen_text(), table.screen_text()
        assert st.over is None
        await press(table, inp, "n")
        assert st.dialog is None and st.over is None and st.page is Page.ROUND
        await press(table, inp, "q")
        inp.send_text("y")  # now it means it: resign and leave
        await table.wait_for(lambda: st.over is not None, "the resignation")

    play(body, seed=find_seed("i_deal"))
