"""The start screen: what ``p2pkoikoi`` with no command opens.

A menu (practise, host, join, rules and yaku, verify a record, quit).  The
menu is its own small prompt_toolkit application; choosing a game closes it
and runs the game (the practice table, or the ``host`` / ``join`` commands),
then the menu comes back.  :class:`StartState` holds the menu's state and the
render functions below are pure, like the table's.

Below the menu, the matches waiting on this network (hosts announcing
themselves by multicast DNS, :class:`~p2pkoikoi.transport.discovery.Browser`,
whose threads update ``StartState.lan`` and redraw).  Choosing one asks for the
words of its code: the number is in the announcement, the words never are.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.output import Output

from p2pkoikoi.engine import RuleSet, get_preset
from p2pkoikoi.engine.presets import DEFAULT_PRESET, PRESETS
from p2pkoikoi.transport.discovery import Browser, Waiting
from p2pkoikoi.ui.app import STYLE
from p2pkoikoi.ui.reference import help_lines
from p2pkoikoi.ui.sync_output import synchronize_output
from p2pkoikoi.ui.tiles import plain

MENU = (
    ("practice", "Practise against the computer"),
    ("host", "Host a match (you get a code and an invite to pass on)"),
    ("join", "Join a match (type the code or paste the invite you were given)"),
    ("rules", "Rules and yaku reference"),
    ("verify", "Verify a match record"),
    ("quit", "Quit"),
)
LEVELS = ("random", "easy", "medium", "hard")


class Screen(enum.Enum):
    MENU = "menu"
    PRACTICE = "practice"  # choose level and rules
    RULES = "rules"
    ASK = "ask"  # a line of text: the invite, a code's words or a record's path
    TEXT = "text"  # a message or a verification report


@dataclass
class StartState:
    ascii: bool = False
    screen: Screen = Screen.MENU
    cursor: int = 0
    level: int = 2  # medium
    preset: int = field(default_factory=lambda: list(PRESETS).index(DEFAULT_PRESET))
    row: int = 0  # practice form: 0 level, 1 rules, 2 start
    scroll: int = 0
    asking: str = ""  # "join", "code" or "verify"
    lan: list[Waiting] = field(default_factory=list)  # matches waiting on this network
    chosen: Waiting | None = None  # the one whose code's words are asked
    text_title: str = ""
    text_lines: list[tuple[str, str]] = field(default_factory=list)
    result: tuple[str, ...] | None = None

    @property
    def preset_name(self) -> str:
        return list(PRESETS)[self.preset]

    @property
    def rows(self) -> int:
        """Menu entries, then one per match waiting on this network."""
        return len(MENU) + len(self.lan)


def menu_fragments(s: StartState) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [
        ("class:heading", "  p2pkoikoi" if s.ascii else "  花札  p2pkoikoi"),
        ("class:dim", " - Koi-koi for the terminal, peer to peer\n\n"),
    ]
    if s.screen is Screen.MENU:
        for i, (_, label) in enumerate(MENU):
            style = "class:button.focused" if i == s.cursor else ""
            out.append(("", "  "))
            out.append((style, f" {i + 1}  {label} "))
            out.append(("", "\n"))
        if s.lan:
            out.append(("class:heading", "\n  Matches waiting on this network:\n"))
            for j, w in enumerate(s.lan):
                style = "class:button.focused" if len(MENU) + j == s.cursor else ""
                out.append(("", "  "))
                out.append((style, f" {w.name} - rules {w.rules} - code {w.number}-... "))
                out.append(("", "\n"))
        out.append(("class:dim", "\n  ↑↓ or 1-6 to choose, Enter to confirm, q to quit"))
    elif s.screen is Screen.PRACTICE:
        rows = [
            ("Computer player", LEVELS[s.level]),
            ("Rules", s.preset_name),
        ]
        out.append(("class:heading", "  Practice\n\n"))
        for i, (label, value) in enumerate(rows):
            style = "class:button.focused" if i == s.row else ""
            out.append(("", f"  {label:<16}"))
            out.append((style, f" ◀ {value:^10} ▶ "))
            out.append(("", "\n"))
        out.append(("", "\n  "))
        out.append(("class:button.focused" if s.row == 2 else "class:button", " [ Start ] "))
        out.append(
            ("class:dim", "\n\n  ↑↓ choose a row, ←→ change it, Enter to start, Esc to go back")
        )
    elif s.screen is Screen.RULES:
        out.append(("class:heading", f"  Rules: {s.preset_name} "))
        out.append(("class:dim", "(←→ other presets, ↑↓ scroll, Esc back)\n"))
        lines = help_lines(get_preset(s.preset_name), s.ascii)
        for style, text in lines[s.scroll :]:
            out.append((style, " " + text + "\n"))
    elif s.screen is Screen.ASK:
        prompt = {
            "join": "The code or invite:",
            "verify": "Path of the record to verify:",
        }.get(s.asking, "")
        if s.asking == "code" and s.chosen is not None:
            prompt = (
                f"{s.chosen.name}'s code is {s.chosen.number}-... : type its two words (ask them)"
            )
        out.append(("class:heading", f"  {prompt}\n"))
        out.append(("class:dim", "  Enter to go on, Esc to go back"))
    elif s.screen is Screen.TEXT:
        out.append(("class:heading", f"  {s.text_title}\n\n"))
        for style, text in s.text_lines[s.scroll :]:
            out.append((style, f"  {text}\n"))
        out.append(("class:dim", "\n  Enter or Esc: back to the menu"))
    return [(st, plain(t, s.ascii)) for st, t, *_ in out]


def verify_report(path: str) -> tuple[str, list[tuple[str, str]]]:
    """Verify the record at ``path``: a title and report lines (never raises for a bad file)."""
    try:
        from p2pkoikoi.session.journal import decode_record
        from p2pkoikoi.session.verify import verify_record
    except ImportError:
        return "Verification is not available in this build.", []
    try:
        with open(path, "rb") as f:
            data = f.read()
        record = decode_record(data)
    except OSError as exc:
        return f"Cannot read {path}", [("class:message", exc.strerror or str(exc))]
    except Exception as exc:  # noqa: BLE001 - a bad record is reported, not raised
        return f"Not a readable record: {path}", [("class:message", str(exc))]
    report = verify_record(record)
    lines: list[tuple[str, str]] = []
    for c in report.checks:
        mark = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}.get(c.status, c.status)
        style = "class:message" if c.status == "fail" else ""
        lines.append((style, f"{mark} {c.name}{': ' + c.detail if c.detail else ''}"))
    first = report.first_failure
    title = "The record verifies." if first is None else f"Verification FAILED at '{first.name}'."
    if first is None and not report.complete:
        title += " (The match in it is not finished.)"
    return title, lines


class StartScreen:
    """The menu application; :meth:`run` returns the choice, e.g. ``("join", INVITE)``."""

    def __init__(
        self, *, ascii: bool, input: Input | None = None, output: Output | None = None
    ) -> None:
        self.state = StartState(ascii=ascii)
        self.entry = Buffer(multiline=False, accept_handler=self._accept)
        self.app: Application[tuple[str, ...]] = Application(
            layout=self._layout(),
            key_bindings=self._keys(),
            style=STYLE,
            full_screen=True,
            mouse_support=False,
            input=input,
            output=output,
        )
        synchronize_output(self.app)

    def _layout(self) -> Layout:
        s = self.state
        return Layout(
            HSplit(
                [
                    Window(
                        FormattedTextControl(lambda: menu_fragments(s), focusable=True),
                        wrap_lines=True,
                    ),
                    ConditionalContainer(
                        VSplit([Window(width=4), Window(BufferControl(self.entry), height=1)]),
                        filter=Condition(lambda: s.screen is Screen.ASK),
                    ),
                ]
            )
        )

    def _accept(self, buf: Buffer) -> bool:
        s = self.state
        text = buf.text.strip()
        buf.reset()
        if not text:
            return False
        if s.asking == "join":
            self.app.exit(result=("join", text))
        elif s.asking == "code" and s.chosen is not None:
            words = " ".join(text.replace("-", " ").split())
            self.app.exit(result=("join", f"{s.chosen.number} {words}"))
        else:
            s.text_title, s.text_lines = verify_report(text)
            s.screen, s.scroll = Screen.TEXT, 0
            self.app.layout.focus_previous()
        return False

    def choose(self, index: int) -> None:
        s = self.state
        if index >= len(MENU):  # a match waiting on this network: ask for its code's words
            s.chosen = s.lan[index - len(MENU)]
            s.screen, s.asking = Screen.ASK, "code"
            self.app.layout.focus(self.entry)
            return
        key = MENU[index][0]
        if key == "quit":
            self.app.exit(result=("quit",))
        elif key == "practice":
            s.screen, s.row = Screen.PRACTICE, 2
        elif key == "rules":
            s.screen, s.scroll = Screen.RULES, 0
        elif key in ("join", "verify"):
            s.screen, s.asking = Screen.ASK, key
            self.app.layout.focus(self.entry)
        elif key == "host":
            self.app.exit(result=("host",))

    def _keys(self) -> KeyBindings:
        kb = KeyBindings()
        s = self.state
        typing = has_focus(self.entry)

        def on(
            *keys: str,
        ) -> Callable[[Callable[[KeyPressEvent], None]], Callable[[KeyPressEvent], None]]:
            def deco(fn: Callable[[KeyPressEvent], None]) -> Callable[[KeyPressEvent], None]:
                for k in keys:
                    kb.add(k, filter=~typing)(fn)
                return fn

            return deco

        @on("up")
        def _(event: KeyPressEvent) -> None:
            if s.screen is Screen.MENU:
                s.cursor = (s.cursor - 1) % s.rows
            elif s.screen is Screen.PRACTICE:
                s.row = (s.row - 1) % 3
            else:
                s.scroll = max(0, s.scroll - 1)

        @on("down")
        def _(event: KeyPressEvent) -> None:
            if s.screen is Screen.MENU:
                s.cursor = (s.cursor + 1) % s.rows
            elif s.screen is Screen.PRACTICE:
                s.row = (s.row + 1) % 3
            else:
                s.scroll += 1

        def side(delta: int) -> None:
            if s.screen is Screen.PRACTICE and s.row == 0:
                s.level = (s.level + delta) % len(LEVELS)
            elif s.screen is Screen.RULES or (s.screen is Screen.PRACTICE and s.row == 1):
                s.preset = (s.preset + delta) % len(PRESETS)
                s.scroll = 0

        @on("left")
        def _(event: KeyPressEvent) -> None:
            side(-1)

        @on("right")
        def _(event: KeyPressEvent) -> None:
            side(1)

        for n in range(1, len(MENU) + 1):

            @on(str(n))
            def _(event: KeyPressEvent, n: int = n) -> None:
                if s.screen is Screen.MENU:
                    s.cursor = n - 1
                    self.choose(n - 1)

        @on("enter", " ")
        def _(event: KeyPressEvent) -> None:
            if s.screen is Screen.MENU:
                self.choose(s.cursor)
            elif s.screen is Screen.PRACTICE:
                if s.row == 2:
                    event.app.exit(result=("practice", LEVELS[s.level], s.preset_name))
                else:
                    side(1)
            else:
                s.screen = Screen.MENU

        @on("escape")
        def _(event: KeyPressEvent) -> None:
            s.screen = Screen.MENU

        @kb.add("escape", filter=typing, eager=True)
        def _(event: KeyPressEvent) -> None:
            self.entry.reset()
            s.screen = Screen.MENU
            event.app.layout.focus_previous()

        @on("q")
        @kb.add("c-c")
        def _(event: KeyPressEvent) -> None:
            if s.screen is Screen.MENU or event.key_sequence[0].key == "c-c":
                event.app.exit(result=("quit",))
            else:
                s.screen = Screen.MENU

        return kb

    def show_lan(self, hosts: list[Waiting]) -> None:
        """The matches waiting on this network changed (called from zeroconf's threads)."""
        s = self.state
        s.lan = list(hosts)
        s.cursor = min(s.cursor, s.rows - 1)
        self.app.invalidate()  # thread-safe: redraws in the application's loop

    def run(self) -> tuple[str, ...]:
        return self.app.run()


#: runs a practice match: ``(rules, level) -> exit status``
Practice = Callable[[RuleSet, str], int]
#: runs a network command line (``["host", ...]``); ``None`` if it is not available
NetworkCommand = Callable[[list[str]], int | None]


def start_screen(*, practice: Practice, network: NetworkCommand, ascii: bool = False) -> int:
    """The start screen loop: show the menu, run what is chosen, come back; 0 on quit.

    What a choice runs comes from the caller (the command line passes its
    ``practice`` and its own parser), so the interface never imports the
    command line that sits beside it.
    """
    from p2pkoikoi.engine import KoiKoiError
    from p2pkoikoi.ui.app import require_terminal

    require_terminal()
    note: tuple[str, list[tuple[str, str]]] | None = None
    while True:
        screen = StartScreen(ascii=ascii)
        if note is not None:
            screen.state.screen = Screen.TEXT
            screen.state.text_title, screen.state.text_lines = note
            note = None
        lan = Browser(screen.show_lan)  # only while the menu shows: a match stops it
        lan.start()
        try:
            choice = screen.run()
        finally:
            lan.stop()
        try:
            if choice[0] == "quit":
                return 0
            if choice[0] == "practice":
                practice(get_preset(choice[2]), choice[1])
            elif choice[0] in ("host", "join"):
                argv = [choice[0], *choice[1:]]
                if ascii:
                    argv.append("--ascii")
                code = network(argv)
                if code is None:
                    note = ("Network play is not available in this build.", [])
        except KoiKoiError as exc:
            note = ("That did not work:", [("class:message", str(exc))])
