"""The table as a prompt_toolkit full-screen application, with the game running on trio.

Theory of operation
-------------------
prompt_toolkit runs on asyncio; games (a :class:`~p2pkoikoi.transport.link.contract.GameLink`
and whatever it drives) run on trio.  :class:`TableApp` starts trio in *guest
mode* on prompt_toolkit's asyncio loop (``trio.lowlevel.start_guest_run``),
so both live on one thread:

* the trio side calls the link factory, then reads ``link.updates`` and feeds
  each :class:`Update` to the :class:`~p2pkoikoi.ui.state.TableState`, then
  asks the application to redraw;
* the prompt_toolkit side turns keys and clicks into calls on the state; an
  action to send is handed to trio with ``TrioToken.run_sync_soon``, which
  starts a task that awaits ``link.act(action)``.

The layout and key bindings are built from the one state object (like
prompt_toolkit's full-screen examples); everything drawn comes from the pure
functions in :mod:`p2pkoikoi.ui.render`.

Entry point for any front end (practice, host, join): :func:`run_table`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import outcome
import trio
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    Dimension,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import Frame

from p2pkoikoi.engine import Action, KoiKoiError
from p2pkoikoi.transport.link.contract import GameLink
from p2pkoikoi.ui import render as R
from p2pkoikoi.ui.fold import SIDE, TALL, SizedText, board_width, folded_window
from p2pkoikoi.ui.state import Dialog, Page, RulesOffer, TableState, table_names
from p2pkoikoi.ui.sync_output import synchronize_output
from p2pkoikoi.ui.tutorial import tutorial_tip

#: the smallest terminal the table is laid out for (pages fold to any width)
MIN_COLUMNS, MIN_ROWS = 80, 24

STYLE = Style.from_dict(
    {
        "card": "bold",
        "card.bright": "bg:#b58900 #000000",
        "card.animal": "bg:#2e7d32 #ffffff",
        "card.poem": "bg:#c62828 #ffffff underline",
        "card.red": "bg:#c62828 #ffffff",
        "card.blue": "bg:#1565c0 #ffffff",
        "card.chaff": "bg:#5d4037 #ffffff nobold",
        "selected": "reverse",
        "selected.mark": "bold #ffd54f",
        "target": "underline",
        "target.current": "reverse blink",
        "drawn": "underline",
        "label": "#9e9e9e",
        "rule": "#616161",
        "dim": "#9e9e9e",
        "name": "bold",
        "dealer": "#ffb300",
        "heading": "bold",
        "yaku": "bold #ffd54f",
        "near": "#80cbc4",
        "score": "bold",
        "prompt": "bold #81d4fa",
        "message": "bold #ff8a65",
        "warn": "#ff8a65",
        "status": "#81d4fa",
        "status.bad": "bold reverse #ff5252",
        "footer": "reverse",
        "button": "",
        "button.focused": "reverse bold",
        "log.round": "bold",
        "log.yaku": "#ffd54f",
        "log.koikoi": "bold #ff8a65",
        "log.chat": "#ce93d8",
        "log.status": "#81d4fa",
        "opp.last": "#e0e0e0",
        "note": "#9e9e9e",
        "frame.border": "#9e9e9e",
        "offer.diff": "bold #ffd54f",
        "guide": "#a5d6a7",
    }
)


@dataclass
class TableContext:
    """What a link factory gets: a nursery and a way to show the waiting screen.

    ``nursery`` lives as long as the table: start the link's background tasks
    in it (they are cancelled when the person leaves).  ``waiting(title,
    *lines)`` shows a full-screen message (an invite to pass on, "connecting
    to ...") with a turning indicator and the time waited, ``status(text)`` a
    one-line note under it.  ``await ask_rules(...)`` shows the host's rules
    to a joiner and returns whether the person accepted them.
    """

    nursery: trio.Nursery
    state: TableState
    _redraw: Callable[[], None]

    def waiting(self, title: str, *lines: str) -> None:
        self.state.waiting(title, tuple(lines), since=time.monotonic())
        self._redraw()

    async def ask_rules(self, offer: RulesOffer) -> bool:
        """Show who invites and their rules (``offer``, made by
        :func:`~p2pkoikoi.ui.state.make_offer`); wait for Accept (True) or Decline (False).

        ``offer.warning`` is the known-peers warning for a changed identity;
        ``offer.seen_before`` says whether this identity is already known (None: unknown).
        """
        token = trio.lowlevel.current_trio_token()
        answered = trio.Event()
        answer: list[bool] = []

        def reply(ok: bool) -> None:  # on prompt_toolkit's side, outside trio
            if not answer:
                answer.append(ok)
                with contextlib.suppress(trio.RunFinishedError):
                    token.run_sync_soon(answered.set)

        self.state.show_offer(offer, reply)
        self._redraw()
        try:
            await answered.wait()
        finally:
            if not answer:  # cancelled (e.g. the host went away): take the question down
                self.state.offer = None
                self.state.changed()
                self._redraw()
        return answer[0]

    def accept_answers(self, give: Callable[[str], Awaitable[None]]) -> None:
        """The waiting screen takes a pasted answer (key p, then paste, Enter): ``give``
        gets its text (in trio)."""
        self.state.answer_box = give
        self._redraw()

    def status(self, text: str) -> None:
        self.state.set_status(text)
        self.state.changed()
        self._redraw()


#: ``factory(ctx)`` returns an awaitable GameLink (its tasks started in ``ctx.nursery``)
#: or an async context manager yielding one (``net.open_host(...)``), kept open
#: until the person leaves the table.
LinkFactory = Callable[
    [TableContext], "Awaitable[GameLink] | AbstractAsyncContextManager[GameLink]"
]


@dataclass
class TableApp:
    """One table: the state, the prompt_toolkit application and the trio side.

    Tests build one with a pipe input and a fixed-size output, start
    :meth:`run` as an asyncio task, and wait on :meth:`wait_for`.
    """

    factory: LinkFactory
    ascii: bool = False
    bell: bool = False  # ring the terminal's bell when it becomes your turn
    input: Input | None = None
    output: Output | None = None
    refresh_interval: float | None = 1.0
    state: TableState = field(init=False)
    app: Application[int] = field(init=False)
    link: GameLink | None = field(default=None, init=False)
    error: BaseException | None = field(default=None, init=False)
    _token: trio.lowlevel.TrioToken | None = field(default=None, init=False)
    _leave: trio.Event | None = field(default=None, init=False)
    _nursery: trio.Nursery | None = field(default=None, init=False)
    _next: trio.Event | None = field(default=None, init=False)  # a rematch has started
    _chat: Buffer = field(init=False)
    _chatting: bool = field(default=False, init=False)
    _pasting: bool = field(default=False, init=False)  # the line input takes an answer
    _renders: int = field(default=0, init=False)
    interrupted: bool = field(default=False, init=False)  # Ctrl-C asked to leave

    def __post_init__(self) -> None:
        self.state = TableState(ascii=self.ascii, bell=self.bell)
        self.state.waiting("Starting the match...", ())
        self._chat = Buffer(multiline=False, accept_handler=self._send_chat)
        self.app = Application(
            layout=self._layout(),
            key_bindings=self._keys(),
            style=STYLE,
            full_screen=True,
            mouse_support=True,
            input=self.input,
            output=self.output,
            refresh_interval=self.refresh_interval,
            after_render=self._after_render,
        )
        synchronize_output(self.app)

    # ------------------------------------------------------------------ layout
    def _click(self, area: str, index: int) -> R.MouseHandler:
        def on_click() -> None:
            st = self.state
            if area == "hand":
                action = st.click_hand(index)
            elif area == "target":
                action = st.click_target(index)
            elif area == "offer":
                st.answer_offer(index == 0)
                action = None
            else:
                dialog = st.dialog
                action = st.click_option(index)
                if dialog is not None and st.dialog_cursor == 0:
                    self._dialog_yes(dialog)
            self._after_input(action)

        return R.mouse_up(on_click)

    def _ft(self, fn: Callable[[], StyleAndTextTuples], **kw: Any) -> FormattedTextControl:
        return FormattedTextControl(fn, **kw)

    def _size(self) -> tuple[int, int]:
        """(columns, rows) of the terminal, 80x24 before the first render."""
        try:
            size = self.app.output.get_size()
        except Exception:  # noqa: BLE001 - before the first render
            return 80, 24
        return size.columns, size.rows

    def _board_width(self) -> int:
        """The cards' part of the table: what the side panel leaves, at most BOARD_MAX."""
        return board_width(self._size()[0])

    def _tall(self) -> bool:
        return self._size()[1] >= TALL

    def _log_lines(self, width: int, height: int) -> StyleAndTextTuples:
        st = self.state
        total = sum(len(R.wrap_line([("", " " + t)], width, hang=2)) for _, t in st.log)
        st.log_scroll = max(0, min(st.log_scroll, total - height))
        st.log_height = height
        return R.log_fragments(st, height, width)

    def _big_enough(self) -> bool:
        columns, rows = self._size()
        return columns >= MIN_COLUMNS and rows >= MIN_ROWS

    def _too_small_text(self) -> StyleAndTextTuples:
        columns, rows = self._size()
        return [
            ("class:status.bad", f" The terminal is too small: {MIN_COLUMNS}x{MIN_ROWS} needed."),
            ("", "\n"),
            ("", f" It is {columns}x{rows} now: make it larger and the table comes back."),
            ("", "\n"),
            ("class:dim", " (q leaves; the match waits.)"),
        ]

    def _box(self, body: Window) -> Any:
        """A frame around a dialog: prompt_toolkit's box drawing, or ``+-|`` for ``--ascii``."""
        if not self.ascii:
            return Frame(body)
        edge = "class:frame.border"

        def rule(corner: str) -> VSplit:
            return VSplit(
                [
                    Window(width=1, height=1, char=corner, style=edge),
                    Window(height=1, char="-", style=edge),
                    Window(width=1, height=1, char=corner, style=edge),
                ],
                height=1,
            )

        side = Window(width=1, char="|", style=edge)
        return HSplit([rule("+"), VSplit([side, body, side]), rule("+")])

    def _layout(self) -> Layout:
        st = self.state
        on_page = Condition(lambda: st.page is not None)
        on_table = ~on_page
        big = Condition(self._big_enough)
        has_dialog = Condition(lambda: bool(R.dialog_fragments(st)))

        def fixed(fn: Callable[[], StyleAndTextTuples], **kw: Any) -> Window:
            return folded_window(fn, self._board_width, **kw)

        main = HSplit(
            [
                fixed(lambda: R.opponent_fragments(st, self._tall())),
                Window(
                    self._ft(lambda: R.field_fragments(st, self._click, self._board_width())),
                    height=lambda: Dimension.exact(
                        max(3, len(R.fold(R.field_fragments(st, None, self._board_width()), 9999)))
                    ),
                    wrap_lines=False,
                ),
                fixed(lambda: R.mine_fragments(st, self._tall())),
                fixed(lambda: R.hand_fragments(st, self._click), focusable=True),
                Window(SizedText(self._log_lines), height=Dimension(min=0), wrap_lines=False),
            ],
            width=lambda: Dimension.exact(self._board_width()),
        )
        board = FloatContainer(
            content=main,
            floats=[
                Float(
                    content=ConditionalContainer(
                        self._box(
                            Window(
                                self._ft(lambda: R.dialog_fragments(st, self._click)),
                                dont_extend_height=True,
                            )
                        ),
                        filter=has_dialog,
                    ),
                    top=1,
                    left=1,
                    right=1,
                )
            ],
        )
        side_rule = "|" if self.ascii else "│"
        table = VSplit(
            [
                board,
                Window(width=1, char=side_rule, style="class:rule"),
                Window(self._ft(lambda: R.side_fragments(st)), width=SIDE, wrap_lines=False),
                Window(),  # a wide terminal: the side panel stays beside the cards
            ]
        )
        page = Window(self._ft(self._page_text), wrap_lines=False)
        chat_line = ConditionalContainer(
            VSplit(
                [
                    Window(
                        self._ft(
                            lambda: [("class:prompt", " answer: " if self._pasting else " say: ")]
                        ),
                        width=lambda: 9 if self._pasting else 6,
                    ),
                    Window(BufferControl(self._chat), height=1),
                ]
            ),
            filter=Condition(lambda: self._chatting),
        )
        root = HSplit(
            [
                ConditionalContainer(table, filter=on_table & big),
                ConditionalContainer(
                    Window(self._ft(self._too_small_text), wrap_lines=True),
                    filter=on_table & ~big,
                ),
                ConditionalContainer(page, filter=on_page),
                folded_window(  # with the countdown a prompt may need a second row
                    lambda: R.prompt_fragments(st, time.monotonic(), self._click),
                    lambda: self._size()[0],
                ),
                ConditionalContainer(  # folded: a wrong code's advice is a long line
                    folded_window(lambda: R.status_fragments(st), lambda: self._size()[0]),
                    filter=Condition(lambda: bool(st.status) and st.page is not Page.WAITING),
                ),
                ConditionalContainer(
                    Window(
                        self._ft(self._guide_text),
                        height=lambda: Dimension.exact(len(self._guide_lines()) or 1),
                        wrap_lines=False,
                    ),
                    filter=Condition(lambda: bool(tutorial_tip(st))),
                ),
                chat_line,
                Window(self._ft(lambda: R.footer_fragments(st)), height=1, style="class:footer"),
            ]
        )
        return Layout(root)

    def _guide_lines(self) -> list[StyleAndTextTuples]:
        tip = tutorial_tip(self.state)
        if not tip:
            return []
        return R.wrap_line([("class:guide", " " + self.state.p(tip))], self._size()[0] - 1)

    def _guide_text(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for i, line in enumerate(self._guide_lines()):
            if i:
                out.append(("", "\n"))
            out.extend(line)
        return out

    def _page_text(self) -> StyleAndTextTuples:
        columns, rows = self._size()
        guide = len(self._guide_lines())  # the guided round's tip sits under the page too
        status = len(R.fold(R.status_fragments(self.state), columns))
        if self.state.page is Page.WAITING:
            status = 0  # the waiting page shows the status among its own lines
        height = max(1, rows - 2 - (status if self.state.status else 0) - guide)
        now = time.monotonic()
        # keep the scroll where the last line is still in view, so Up works at once
        lines = R.wrapped_page_lines(self.state, now, columns)
        self.state.scroll = min(self.state.scroll, max(0, len(lines) - height))
        ask = R.dialog_fragments(self.state, self._click)  # "Leave now?" asked on a page too
        if ask:
            return ask + [("", "\n")] + R.page_fragments(self.state, height - 3, now, columns)
        return R.page_fragments(self.state, height, now, columns)

    # ------------------------------------------------------------------ keys
    def _keys(self) -> KeyBindings:
        kb = KeyBindings()
        st = self.state
        not_chatting = ~has_focus(self._chat)
        on_page = Condition(lambda: st.page is not None)
        big = Condition(self._big_enough)

        @kb.add("left", filter=not_chatting)
        @kb.add("up", filter=not_chatting & Condition(lambda: st.page is None))
        def _(event: KeyPressEvent) -> None:
            st.move(-1)

        @kb.add("right", filter=not_chatting)
        @kb.add("down", filter=not_chatting & Condition(lambda: st.page is None))
        def _(event: KeyPressEvent) -> None:
            st.move(1)

        @kb.add("up", filter=not_chatting & Condition(lambda: st.page is not None))
        def _(event: KeyPressEvent) -> None:
            st.move(-1)

        @kb.add("down", filter=not_chatting & Condition(lambda: st.page is not None))
        def _(event: KeyPressEvent) -> None:
            st.move(1)

        @kb.add("pageup")
        def _(event: KeyPressEvent) -> None:
            if st.page is None:
                st.scroll_log(-1)  # the table: the log (and chat) back
            elif not self._chatting:
                st.move(-10)

        @kb.add("pagedown")
        def _(event: KeyPressEvent) -> None:
            if st.page is None:
                st.scroll_log(1)
            elif not self._chatting:
                st.move(10)

        for n in range(1, 9):

            @kb.add(str(n), filter=not_chatting & (on_page | big))
            def _(event: KeyPressEvent, n: int = n) -> None:
                st.digit(n)

        @kb.add("enter", filter=not_chatting & (on_page | big))
        @kb.add(" ", filter=not_chatting & (on_page | big))
        def _(event: KeyPressEvent) -> None:
            if st.page is Page.OVER or (st.page is Page.WAITING and st.closed):
                self.exit()
                return
            dialog = st.dialog
            if dialog is not None and st.dialog_cursor == 0:
                self._dialog_yes(dialog)
                return
            self._after_input(st.enter())

        @kb.add("escape", filter=not_chatting, eager=True)
        def _(event: KeyPressEvent) -> None:
            st.escape()

        @kb.add("?", filter=not_chatting)
        @kb.add("f1")
        def _(event: KeyPressEvent) -> None:
            st.toggle_help()

        @kb.add("k", filter=not_chatting)
        @kb.add("s", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            opts = st.options()
            want = "Koi-koi" if event.data == "k" else "Stop"
            if want in opts and st.page is None and st.dialog is None:
                st.dialog_cursor = opts.index(want)
                self._after_input(st.enter())

        @kb.add("g", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            st.toggle_tutorial()

        @kb.add("h", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            if st.practice and st.decision is not None and st.page is None:
                st.message = "Hint: thinking..."
                st.changed()
                self._in_trio(self._hint_task)

        @kb.add("z", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            if st.practice and st.page is None and st.dialog is None:
                self._in_trio(self._undo_task)

        @kb.add("u", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            st.toggle_unseen()

        dialog_open = not_chatting & Condition(
            lambda: st.dialog is not None and (st.page is None or st.dialog is Dialog.QUIT)
        )

        @kb.add("y", filter=dialog_open)
        def _(event: KeyPressEvent) -> None:
            dialog = st.dialog
            if dialog is not None:
                self._dialog_yes(dialog)

        @kb.add("n", filter=dialog_open)
        def _(event: KeyPressEvent) -> None:
            st.dialog = None
            st.changed()

        @kb.add("r", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            if st.page is Page.OVER and st.rematch_possible:
                self._in_trio(self._again_task)
                return
            if st.page is None and st.view is not None and st.over is None and not st.closed:
                st.open_dialog(Dialog.RESIGN)

        @kb.add("q", filter=not_chatting)
        @kb.add("c-c")
        @kb.add("c-q")
        def _(event: KeyPressEvent) -> None:
            if self._chatting:
                self._stop_chat()
                return
            ctrl_c = event.key_sequence[0].key == "c-c"
            if st.over is not None or st.closed or st.view is None:
                self.interrupted = ctrl_c
                self.exit()
            elif st.dialog is Dialog.QUIT and event.key_sequence[0].key == "c-c":
                self._dialog_yes(Dialog.QUIT)  # a second Ctrl-C means it: leave
            elif st.dialog is Dialog.QUIT:
                st.dialog = None
                st.changed()
            else:
                if st.page is Page.HELP:
                    st.toggle_help()
                self.interrupted = ctrl_c  # a leave begun by Ctrl-C exits 130, as headless
                st.open_dialog(Dialog.QUIT)

        @kb.add("c", filter=not_chatting)
        def _(event: KeyPressEvent) -> None:
            if st.view is not None and not st.closed:
                self._chatting = True
                self.app.layout.focus(self._chat)
                st.changed()

        pasting = not_chatting & Condition(
            lambda: st.answer_box is not None and st.page is Page.WAITING and st.offer is None
        )

        @kb.add("p", filter=pasting)
        def _(event: KeyPressEvent) -> None:
            self._chatting = self._pasting = True
            self.app.layout.focus(self._chat)
            st.changed()

        offering = not_chatting & Condition(
            lambda: st.offer is not None and st.page is Page.WAITING
        )

        @kb.add("a", filter=offering)
        @kb.add("y", filter=offering)
        def _(event: KeyPressEvent) -> None:
            st.answer_offer(True)

        @kb.add("d", filter=offering)
        @kb.add("n", filter=offering)
        @kb.add("q", filter=offering)
        def _(event: KeyPressEvent) -> None:
            st.answer_offer(False)

        @kb.add("left", filter=offering)
        @kb.add("right", filter=offering)
        @kb.add("tab", filter=offering)
        @kb.add("s-tab", filter=offering)
        def _(event: KeyPressEvent) -> None:
            st.move_offer(1)

        @kb.add("escape", filter=has_focus(self._chat), eager=True)
        def _(event: KeyPressEvent) -> None:
            self._stop_chat()

        return kb

    def _stop_chat(self) -> None:
        self._chatting = False
        self._chat.reset()
        self.app.layout.focus_last()
        self.state.changed()

    def _send_chat(self, buf: Buffer) -> bool:
        text = buf.text.strip()
        pasted, self._pasting = self._pasting, False
        self._chatting = False
        self.app.layout.focus_last()
        box = self.state.answer_box
        if text and pasted and box is not None:
            self._in_trio(box, text)
        elif text:
            self._in_trio(self._chat_task, text)
        self.state.changed()
        return False

    def _dialog_yes(self, dialog: Dialog) -> None:
        st = self.state
        st.dialog = None
        if dialog is Dialog.RESIGN or (dialog is Dialog.QUIT and st.over is None and not st.closed):
            self._in_trio(self._resign_task, dialog is Dialog.QUIT)
        else:
            self.exit()
        st.changed()

    def _after_input(self, action: Action | None) -> None:
        if action is not None:
            self._in_trio(self._act_task, action)
        self.app.invalidate()

    # ------------------------------------------------------------------ trio side
    def _in_trio(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        token, nursery = self._token, self._nursery
        if token is None or nursery is None:
            return
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(lambda: nursery.start_soon(fn, *args))

    async def _act_task(self, action: Action) -> None:
        link = self.link
        if link is None:
            return
        try:
            await link.act(action)
        except KoiKoiError as exc:
            self.state.action_failed(str(exc))
        self.app.invalidate()

    async def _hint_task(self) -> None:
        """What medium would play here (in a thread: it looks ahead a little)."""
        from p2pkoikoi.ui.hint import hint

        view = self.state.view
        if view is None:
            return
        action, text = await trio.to_thread.run_sync(hint, view, 0, self.state.ascii)
        self.state.show_hint(view, action, text)
        self.app.invalidate()

    async def _undo_task(self) -> None:
        link: Any = self.link
        if link is None or not hasattr(link, "take_back"):
            return
        try:
            await link.take_back()
        except KoiKoiError as exc:
            self.state.action_failed(str(exc))
        self.app.invalidate()

    async def _chat_task(self, text: str) -> None:
        if self.link is not None:
            try:
                await self.link.chat(text)
            except KoiKoiError as exc:
                self.state.action_failed(str(exc))

    async def _resign_task(self, then_exit: bool) -> None:
        if self.link is not None:
            try:
                if then_exit and self.state.resumable:
                    await self.link.leave()  # a practice match kept for --resume
                elif then_exit:  # leaving: resign, and let the result be signed by both
                    self.state.action_failed("leaving: resigning and waiting for the signatures")
                    self.app.invalidate()
                    await self.link.leave()
                else:
                    await self.link.resign()
            except KoiKoiError as exc:
                self.state.action_failed(str(exc))
        if then_exit:
            self.exit()

    async def _watch_offer(self, link: Any) -> None:
        """Between matches: the other player's offer, or its leaving, on the end page."""
        if await link.wait_offer():
            if self.state.rematch == "":
                self.state.set_rematch("The other player wants to play again: press r to accept.")
        elif self._next is not None and not self._next.is_set():
            self.state.set_rematch("The other player has left.", possible=False)
        self.app.invalidate()

    async def _again_task(self) -> None:
        """``r`` on the end page: offer a rematch, or accept the other player's."""
        link: Any = self.link
        if link is None or not hasattr(link, "play_again"):
            return
        self.state.set_rematch(
            "Waiting for the other player's answer (q: leave)...", possible=False
        )
        self.app.invalidate()
        try:
            started = await link.play_again()
        except KoiKoiError as exc:
            self.state.set_rematch(f"No rematch: {exc}", possible=False)
            self.app.invalidate()
            return
        if started:
            if self._next is not None:
                self._next.set()
            return
        why = link.rematch_declined
        text = f"The other player declined: {why}" if why else "The other player has left."
        self.state.set_rematch(text + " Press q to leave.", possible=why is not None)
        self.app.invalidate()

    def _clock(self, link: GameLink) -> None:
        """Your own turn's deadline, from the link's (trio's) clock to the table's."""
        deadline = getattr(link, "turn_deadline", None)
        left = deadline() - trio.current_time() if deadline is not None else math.inf
        self.state.turn_deadline = time.monotonic() + left if math.isfinite(left) else None

    async def _trio_main(self) -> None:
        self._leave = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            ctx = TableContext(nursery, self.state, self.app.invalidate)
            made = self.factory(ctx)
            if isinstance(made, AbstractAsyncContextManager) or hasattr(made, "__aenter__"):
                async with made as link:  # type: ignore[union-attr]
                    await self._serve(link)
            else:
                await self._serve(await made)
            nursery.cancel_scope.cancel()  # the link's own tasks (a LocalLink's run)

    async def _serve(self, link: GameLink) -> None:
        """Feed the link's updates to the state until the person leaves the table."""
        self.link = link
        self.state.practice = hasattr(link, "undo")  # a LocalLink: hints and undo
        self.state.resumable = bool(getattr(link, "resumable", False))
        recorder = getattr(link, "recorder", None)
        self.state.record_path = str(getattr(recorder, "path", "") or "")
        fingerprint = str(getattr(link, "peer_fingerprint", "") or "")
        self.state.attach(link.seat, table_names(link.seat, link.names, fingerprint), link.rules)
        assert self._leave is not None
        async with trio.open_nursery() as inner:

            async def pump() -> None:
                while True:
                    async for upd in link.updates:
                        was_my_turn = self.state.my_turn
                        self.state.apply_update(upd, time.monotonic())
                        self._clock(link)
                        if self.state.bell and self.state.my_turn and not was_my_turn:
                            self.app.output.bell()  # "your turn", noticed in another window
                            self.app.output.flush()
                        self.app.invalidate()
                    self.state.link_closed()
                    self.app.invalidate()
                    if self.state.over is None or not hasattr(link, "play_again"):
                        return
                    # a network match is over: "r: play again" until a rematch starts
                    self._next = trio.Event()
                    self.state.set_rematch("")
                    self.app.invalidate()
                    async with trio.open_nursery() as watch:
                        watch.start_soon(self._watch_offer, link)
                        await self._next.wait()
                        watch.cancel_scope.cancel()
                    self.state.next_match(link.match_number)  # type: ignore[attr-defined]
                    self.app.invalidate()

            inner.start_soon(pump)
            await self._leave.wait()
            inner.cancel_scope.cancel()

    # ------------------------------------------------------------------ running
    def exit(self) -> None:
        """Close the table: status 130 when Ctrl-C began the leaving (as a shell and
        headless report an interrupt), else 0."""
        if not self.app.is_done and self.app.is_running:
            self.app.exit(result=130 if self.interrupted else 0)

    def _after_render(self, app: Application[int]) -> None:
        self._renders += 1
        self.state.changed()

    async def run(self) -> int:
        """Run the table until the person leaves; re-raise what stopped the game early."""
        loop = asyncio.get_running_loop()
        trio_done: asyncio.Future[outcome.Outcome[None]] = loop.create_future()

        def done(result: outcome.Outcome[None]) -> None:
            if not trio_done.done():
                trio_done.set_result(result)
            if isinstance(result, outcome.Error):
                self.error = result.error
                self.exit()

        import threading

        trio.lowlevel.start_guest_run(
            self._trio_main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=threading.current_thread() is threading.main_thread(),
        )
        try:
            code = await self.app.run_async()
        finally:
            result = await self._stop_trio(trio_done)
        if isinstance(result, outcome.Error) and not isinstance(result.error, trio.Cancelled):
            raise _one_error(result.error)
        return code if isinstance(code, int) else 0

    async def _stop_trio(
        self, trio_done: asyncio.Future[outcome.Outcome[None]]
    ) -> outcome.Outcome[None]:
        """Leave the link's context gracefully (a goodbye on the network); cancel if it hangs."""
        token, leave, nursery = self._token, self._leave, self._nursery
        if (
            not trio_done.done()
            and token is not None
            and leave is not None
            and self.link is not None
        ):
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(leave.set)
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(trio_done), 5)
        if not trio_done.done() and token is not None and nursery is not None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(nursery.cancel_scope.cancel)
        return await trio_done

    # ------------------------------------------------------------------ for tests
    async def wait_for(self, predicate: Callable[[], bool], what: str = "condition") -> None:
        """Wait until ``predicate()`` holds, re-checked at every change of state and every render."""
        if predicate():
            return
        event = asyncio.Event()

        def check() -> None:
            if predicate():
                event.set()

        self.state.listeners.append(check)
        try:
            await asyncio.wait_for(event.wait(), timeout=20)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None
        finally:
            self.state.listeners.remove(check)

    def screen_text(self) -> str:
        """The characters on the last rendered screen, one line per row (for tests and debugging)."""
        screen = self.app.renderer.last_rendered_screen
        if screen is None:
            return ""
        size = self.app.output.get_size()
        rows = []
        for y in range(size.rows):
            row = screen.data_buffer[y]
            rows.append("".join(row[x].char for x in range(size.columns)).rstrip())
        return "\n".join(rows)


def _one_error(exc: BaseException) -> BaseException:
    """The one real error inside nested nursery groups (the CLI reports it as one line)."""
    if not isinstance(exc, BaseExceptionGroup):
        return exc
    leaves: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        elif not isinstance(e, trio.Cancelled):
            leaves.append(e)
    return leaves[0] if len(leaves) == 1 else exc


class TerminalRequiredError(KoiKoiError):
    """The table was asked for without a terminal to draw it on."""

    exit_code = 2


def require_terminal(advice: str = "for scripts use --headless") -> None:
    """Refuse, in one line, to open a full-screen interface without a terminal;
    ``advice`` says what to use instead (each command has its own)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise TerminalRequiredError(f"the table needs a terminal (stdin and stdout); {advice}")


def run_table(
    link_factory: LinkFactory,
    *,
    ascii: bool = False,
    bell: bool = False,
    input: Input | None = None,
    output: Output | None = None,
) -> int:
    """Run the terminal table on the game that ``link_factory`` produces; return an exit status.

    ``link_factory(ctx: TableContext)`` is called inside trio once the screen
    is up.  It returns either an awaitable of a :class:`GameLink` (for a
    :class:`LocalLink`: create it, ``ctx.nursery.start_soon(link.run)``,
    return it) or an async context manager that yields one (e.g.
    ``net.open_host(..., notify=...)``); the context stays open while the
    table shows and is left normally when the person leaves.  While it waits (for a peer, a connection) it
    may call ``ctx.waiting(title, *lines)`` to show e.g. the invite, and
    ``ctx.status(text)`` for progress; it must start the link's background
    tasks in ``ctx.nursery`` (cancelled when the person leaves the table).
    Exceptions (e.g. a :class:`KoiKoiError` for a refused connection)
    close the screen and propagate from here, so the CLI reports them.

    ``ascii`` avoids characters some terminals cannot draw; colours follow
    ``NO_COLOR`` (prompt_toolkit's colour depth).  ``input``/``output`` are
    for tests.  Blocks until the person leaves; returns 0.
    """
    if input is None or output is None:
        require_terminal()
    table = TableApp(link_factory, ascii=ascii, bell=bell, input=input, output=output)
    try:
        return asyncio.run(table.run())
    finally:
        for line in closing_lines(table.state):
            sys.stdout.write(line + "\n")
        sys.stdout.flush()


def closing_lines(state: TableState) -> list[str]:
    """What stays in the shell after the table closes: where the record is and how
    to verify it (the path is long and the table's copy is gone), or how to go on
    with a practice match left unfinished."""
    over = state.over
    if over is None and state.resumable and state.record_path:
        return [
            f"The match is kept in {state.record_path}",
            f"Play on with: p2pkoikoi practice --resume {state.record_path}",
        ]
    if over is None or not over.record:
        return []
    return [f"Match record: {over.record}", f"Verify it with: p2pkoikoi verify {over.record}"]
