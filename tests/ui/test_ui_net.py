"""Two terminal tables over TCP loopback: a host and a joiner, both through their interfaces.

Each table is the real prompt_toolkit Application with trio in guest mode,
driven by key presses through a pipe input and read back from its rendered
screen.  Two trio guest runs cannot share one thread, so each table runs in
its own thread with its own asyncio loop.  The link factories are the CLI's
own (``net_cmds.network_table_factory`` over ``_opener`` built from parsed
``host``/``join`` arguments), so the rules screen, the known-peers check and
the waiting screen are the ones people see.

Nothing sleeps: every wait is on a condition (``TableApp.wait_for``, which
re-checks at every change of state and every render, or a queue) with a
timeout.
"""

from __future__ import annotations

import asyncio
import queue
import re
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pkoikoi.cli.net_run import _opener, network_table_factory
from p2pkoikoi.cli.parsing import build_parser
from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.transport.store.identity import KnownPeers
from p2pkoikoi.ui.app import TableApp
from p2pkoikoi.ui.state import Page

LIMIT = 90.0  # seconds for one side's whole script: generous on a loaded 2-core machine
ENTER = "\r"


class SizedOutput(DummyOutput):
    def __init__(self, rows: int = 24, columns: int = 80) -> None:
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


Script = Callable[[TableApp, PipeInput], Awaitable[None]]


class Side:
    """One table in its own thread; ``error`` is what its ``run()`` raised, if anything."""

    def __init__(self, argv: list[str], script: Script) -> None:
        self.argv = argv
        args = build_parser().parse_args(argv)
        self.opener = _opener(args, argv[0] == "host")
        self.script = script
        self.error: BaseException | None = None
        self.script_error: BaseException | None = None
        self.screen = ""
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        # A thread starts with an empty context: without its own app session the
        # two tables would share prompt_toolkit's default one (get_app() would mix them up).
        with create_pipe_input() as inp, create_app_session(input=inp, output=SizedOutput()):
            table = TableApp(
                network_table_factory(self.opener),
                input=inp,
                output=SizedOutput(),
                refresh_interval=None,
            )
            table.app.ttimeoutlen = 0.05
            task = asyncio.create_task(table.run())
            try:
                await asyncio.wait_for(self.script(table, inp), LIMIT)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                self.script_error = exc
            finally:
                self.screen = table.screen_text()
                table.exit()
                try:
                    await asyncio.wait_for(task, 15)
                except BaseException as exc:  # noqa: BLE001 - the table's own error
                    self.error = exc

    def start(self) -> Side:
        self.thread.start()
        return self

    def wait(self) -> None:
        self.thread.join(LIMIT + 30)
        assert not self.thread.is_alive(), "a table did not finish"


def finish(*sides: Side) -> None:
    """Wait for every table; fail with each failed script's error and last screen."""
    for side in sides:
        side.wait()
    failed = [s for s in sides if s.script_error is not None]
    if failed:
        text = "\n".join(
            f"{s.argv[0]}: {s.script_error!r} (table: {s.error!r})\n--- last screen:\n{s.screen}"
            for s in failed
        )
        raise AssertionError(text) from failed[0].script_error


def argv(tmp_path: Path, who: str, *extra: str) -> list[str]:
    common = [
        "--name",
        "Alice" if who == "host" else "Bob",
        "--config-dir",
        str(tmp_path / f"cfg-{who}"),
        "--record",
        str(tmp_path / f"{who}.record"),
    ]
    if who == "host":
        return ["host", "--bind", "127.0.0.1", "--port", "0", *common, *extra]
    return ["join", *extra, *common]


async def on_screen(table: TableApp, text: str) -> None:
    await table.wait_for(lambda: text in table.screen_text(), repr(text))


async def key(table: TableApp, inp: PipeInput, keys: str) -> None:
    """Send keys and wait until the table's state changed because of them and redrew."""
    st = table.state

    def snapshot() -> object:
        return (
            st.view,
            st.choosing,
            st.cursor,
            st.target_cursor,
            st.dialog_cursor,
            tuple(st.pages),
            st.busy,
            st.offer,
            st.message,
        )

    before, renders = snapshot(), table._renders
    inp.send_text(keys)
    await table.wait_for(
        lambda: snapshot() != before and table._renders > renders, f"the effect of {keys!r}"
    )


async def host_invite(table: TableApp, invites: queue.Queue[str]) -> None:
    """Read the invite off the host's waiting screen, as a person would."""
    await on_screen(table, "p2pkoikoi join koi2-")
    screen = table.screen_text()
    match = re.search(r"p2pkoikoi join (koi2-\S+)", screen)
    assert match is not None, screen
    assert "To read it aloud" in screen
    invites.put(match.group(1))


async def accept_rules(table: TableApp, inp: PipeInput, keys: str = "a") -> None:
    await on_screen(table, "Alice invites you to a match")
    screen = table.screen_text()
    offer = table.state.offer
    assert offer is not None
    assert offer.fingerprint in screen  # the host's identity
    assert "New to you" in screen
    # the host changed settings of the online preset: listed and highlighted
    assert re.search(r"Rules: closest to the online preset, \d settings differ:", screen)
    assert "* goko: 15   (online: 10)" in screen
    assert "* rounds: 2   (online: 6)" in screen
    assert "[ a Accept ]" in screen and "[ d Decline ]" in screen
    await key(table, inp, keys)


async def play_to_round_end(table: TableApp, inp: PipeInput) -> None:
    """Enter at every decision (the first card, the first target, Stop) until the round page."""
    st = table.state
    for _ in range(80):
        await table.wait_for(
            lambda: st.page is not None or (st.decision is not None and not st.busy),
            "a decision or a page",
        )
        if st.page is Page.ROUND:
            break
        assert st.page is None, st.page
        await key(table, inp, ENTER)
    else:
        raise AssertionError("the round did not end")
    await on_screen(table, "Round 1 of 2:")
    await on_screen(table, "Pools now: ")
    # the page's own line, or the footer's when a long page scrolls it out of view
    await table.wait_for(
        lambda: (
            "Press Enter to continue" in table.screen_text()
            or "Enter: continue" in table.screen_text()
        ),
        "the round page's continue prompt",
    )


def test_host_and_joiner_tables_chat_and_play_a_round_over_loopback(tmp_path: Path) -> None:
    invites: queue.Queue[str] = queue.Queue()

    async def host(table: TableApp, inp: PipeInput) -> None:
        await host_invite(table, invites)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        inp.send_text("c")
        await on_screen(table, " say:")
        inp.send_text("hello from Alice" + ENTER)
        await on_screen(table, "<You> hello from Alice")  # our own line in our log
        await play_to_round_end(table, inp)

    async def joiner(table: TableApp, inp: PipeInput) -> None:
        await accept_rules(table, inp)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        await on_screen(table, "<Alice> hello from Alice")  # the chat, on the other side
        await play_to_round_end(table, inp)

    # no hand yaku: a dealt one would end the round before the chat could be seen
    # at the table (the deal is random), and this test is about the chat and a round
    no_hand_yaku = ("--set", "teshi=0", "--set", "kuttsuki=0")
    h = Side(argv(tmp_path, "host", "--rounds", "2", "--set", "goko=15", *no_hand_yaku), host)
    h.start()
    invite = invites.get(timeout=LIMIT)
    j = Side(argv(tmp_path, "join", invite), joiner).start()
    finish(j, h)
    # both left mid-match by closing their tables: no crash, records written
    assert (tmp_path / "host.record").exists() and (tmp_path / "join.record").exists()
    known = KnownPeers.load(tmp_path / "cfg-join")
    assert "Alice" in known.peers.values()  # remembered once accepted


def test_joiner_clicks_decline_and_both_tables_end_with_one_line(tmp_path: Path) -> None:
    invites: queue.Queue[str] = queue.Queue()

    async def host(table: TableApp, inp: PipeInput) -> None:
        await host_invite(table, invites)
        await table.wait_for(lambda: table.app.is_done, "the table closing")

    async def joiner(table: TableApp, inp: PipeInput) -> None:
        await on_screen(table, "[ d Decline ]")
        lines = table.screen_text().splitlines()
        y = next(i for i, line in enumerate(lines) if "[ d Decline ]" in line)
        x = lines[y].index("[ d Decline ]") + 3
        inp.send_text(f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m")  # a click
        await table.wait_for(lambda: table.app.is_done, "the table closing")

    h = Side(argv(tmp_path, "host", "--rounds", "2", "--set", "goko=15"), host).start()
    j = Side(argv(tmp_path, "join", invites.get(timeout=LIMIT)), joiner).start()
    finish(j, h)
    assert isinstance(j.error, KoiKoiError) and str(j.error) == "you declined the host's rules"
    assert isinstance(h.error, KoiKoiError)
    assert str(h.error).startswith("the joiner declined the rules")
    assert "\n" not in str(h.error)


def test_expect_rules_refuses_a_difference_without_asking(tmp_path: Path) -> None:
    async def host(table: TableApp, inp: PipeInput) -> None:
        await host_invite(table, invites)
        await table.wait_for(lambda: table.app.is_done, "the table closing")

    async def joiner(table: TableApp, inp: PipeInput) -> None:
        await table.wait_for(lambda: table.app.is_done, "the table closing")
        assert table.state.offer is None

    invites: queue.Queue[str] = queue.Queue()
    h = Side(argv(tmp_path, "host", "--rounds", "2"), host).start()
    inv = invites.get(timeout=LIMIT)
    j = Side(argv(tmp_path, "join", inv, "--expect-rules", "online"), joiner).start()
    finish(j, h)
    assert isinstance(j.error, KoiKoiError) and "rounds" in str(j.error)
    assert isinstance(h.error, KoiKoiError)


def test_enter_accepts(tmp_path: Path) -> None:
    invites: queue.Queue[str] = queue.Queue()
    joiner_saw_the_table = threading.Event()

    async def host(table: TableApp, inp: PipeInput) -> None:
        await host_invite(table, invites)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        # stay until the joiner has drawn its table: leaving ends the match, and the
        # joiner would then show the end page instead (a race on a loaded machine)
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, joiner_saw_the_table.wait, LIMIT)

    async def joiner(table: TableApp, inp: PipeInput) -> None:
        await accept_rules(table, inp, ENTER)
        await table.wait_for(lambda: table.state.view is not None, "the match")
        await table.wait_for(lambda: "Round 1 of 2" in table.screen_text(), "the table")
        joiner_saw_the_table.set()

    h = Side(argv(tmp_path, "host", "--rounds", "2", "--set", "goko=15"), host).start()
    j = Side(argv(tmp_path, "join", invites.get(timeout=LIMIT)), joiner).start()
    finish(j, h)
