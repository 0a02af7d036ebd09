"""The start screen: what ``p2pkoikoi`` with no command opens.

A menu (practise, host, join, rules and yaku, verify a record, quit).  The
menu is its own small prompt_toolkit application; choosing a game closes it
and runs the game (the practice table, or the ``host`` / ``join`` commands),
then the menu comes back.  :class:`StartState` holds the menu's state and the
render functions below are pure, like the table's.

Below the menu, the matches waiting on this network (hosts announcing
themselves by multicast DNS, :class:`~p2pkoikoi.transport.lookup.mdns.Browser`,
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
from prompt_toolkit.layout import ConditionalContainer, Dimension, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.output import Output

from p2pkoikoi.engine import RuleSet, get_preset
from p2pkoikoi.engine.presets import DEFAULT_PRESET, PRESETS
from p2pkoikoi.transport.lookup.mdns import Browser, Waiting
from p2pkoikoi.ui.app import STYLE
from p2pkoikoi.ui.reference import help_lines
from p2pkoikoi.ui.render import fold, join_lines
from p2pkoikoi.ui.sync_output import synchronize_output
from p2pkoikoi.ui.tiles import plain

MENU = (
    ("practice", "Practise against the computer"),
    ("host", "Host a match (you get a code to pass on)"),
    ("join", "Join a match (type the code or paste the invite)"),
    ("rules", "Rules and yaku reference"),
    ("verify", "Verify a match record"),
    ("quit", "Quit"),
)
LEVELS = ("random", "easy", "medium", "hard")
HOST_ROWS = ("Your name", "Rules", "Rounds", "Deal", "Start")
DEALS = ("the default: hidden", "open", "hidden")


def host_argv(s: StartState) -> tuple[str, ...]:
    """The ``host`` command line the host form stands for."""
    argv = ["host", "--rules", s.preset_name]
    if s.host_name:
        argv += ["--name", s.host_name]
    if s.rounds:
        argv += ["--rounds", str(s.rounds)]
    if s.deal:
        argv += ["--set", f"deal={DEALS[s.deal]}"]
    return tuple(argv)


def complete_code(text: str) -> tuple[str, list[str]]:
    """Tab on a short code being typed (``7-cross``): the text with the word completed
    as far as it is certain, and the words it could still be.  The first word comes
    from the PGP odd list, the second from the even list (session/codes/code.py)."""
    from p2pkoikoi.session.codes.code import word_choices

    choices = word_choices(text)
    if choices is None or not choices.words:
        return text, []
    fits = list(choices.words)
    common = fits[0]
    for w in fits[1:]:
        while not w.startswith(common):
            common = common[:-1]
    done = text[: len(text) - len(choices.typed)] + common
    if len(fits) == 1 and choices.position == 0:
        done += "-"  # the second word comes next
    return done, fits if len(fits) > 1 else []


class Screen(enum.Enum):
    MENU = "menu"
    PRACTICE = "practice"  # choose level and rules
    HOST = "host"  # choose name, rules, rounds and deal
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
    row: int = 0  # practice form: 0 level, 1 rules, 2 start; host form: HOST_ROWS
    host_name: str = ""  # "" = the default (config.toml, else the login name)
    rounds: int = 0  # host form: 0 = the preset's
    deal: int = 0  # host form: an index into DEALS
    hint: str = ""  # under the line being typed: Tab's choices, or what is wrong
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
    elif s.screen is Screen.HOST:
        values = (
            s.host_name or "(your default)",
            s.preset_name,
            str(s.rounds) if s.rounds else "the preset's",
            DEALS[s.deal],
        )
        out.append(("class:heading", "  Host a match\n\n"))
        for i, value in enumerate(values):
            style = "class:button.focused" if i == s.row else ""
            out.append(("", f"  {HOST_ROWS[i]:<12}"))
            shown = f" {value} (Enter: change) " if i == 0 else f" ◀ {value:^12} ▶ "
            out.append((style, shown))
            out.append(("", "\n"))
        out.append(("", "\n  "))
        out.append(("class:button.focused" if s.row == 4 else "class:button", " [ Start ] "))
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
            "join": "The code or invite (Tab completes a word of a code):",
            "verify": "Path of the record to verify:",
            "name": "Your name, as the other player sees it:",
        }.get(s.asking, "")
        if s.asking == "code" and s.chosen is not None:
            prompt = (
                f"{s.chosen.name}'s code is {s.chosen.number}-... : type its two words (ask them)"
            )
        out.append(("class:heading", f"  {prompt}"))  # the line typed follows at once
    elif s.screen is Screen.TEXT:
        out.append(("class:heading", f"  {s.text_title}\n\n"))
        for style, text in s.text_lines[s.scroll :]:
            out.append((style, f"  {text}\n"))
        out.append(("class:dim", "\n  Enter or Esc: back to the menu"))
    return [(st, plain(t, s.ascii)) for st, t, *_ in out]


def verify_report(path: str) -> tuple[str, list[tuple[str, str]]]:
    """Verify the record at ``path``: a title and report lines (never raises for a bad file)."""
    try:
        from p2pkoikoi.session.records.journal import decode_record
        from p2pkoikoi.session.verify.check import verify_record
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
        asking = Condition(lambda: s.screen is Screen.ASK)

        def width() -> int:
            return self.app.output.get_size().columns

        def lines() -> list[StyleAndTextTuples]:  # folded between words, never inside one
            return fold(menu_fragments(s), width())

        def hint() -> StyleAndTextTuples:
            text = s.hint or "Enter to go on, Esc to go back"
            return join_lines(fold([("class:dim", plain("  " + text.strip(), s.ascii))], width()))

        return Layout(
            HSplit(
                [
                    Window(
                        FormattedTextControl(lambda: join_lines(lines()), focusable=True),
                        height=lambda: Dimension(min=1, max=len(lines()), preferred=len(lines())),
                        wrap_lines=False,
                    ),
                    ConditionalContainer(  # the typed text, right under its prompt
                        VSplit([Window(width=4), Window(BufferControl(self.entry), height=1)]),
                        filter=asking,
                    ),
                    ConditionalContainer(Window(FormattedTextControl(hint)), filter=asking),
                    Window(),
                ]
            )
        )

    def _complete(self) -> None:
        """Tab in the Join field: complete the word of the code being typed."""
        s = self.state
        text = self.entry.text
        prefix = f"{s.chosen.number}-" if s.asking == "code" and s.chosen is not None else ""
        done, choices = complete_code(prefix + text)
        done = done[len(prefix) :]
        if done != text:
            self.entry.text = done
            self.entry.cursor_position = len(done)
        more = f" ... ({len(choices)} words)" if len(choices) > 10 else ""
        s.hint = ("  " + " ".join(choices[:10]) + more) if choices else ""

    def _accept(self, buf: Buffer) -> bool:
        s = self.state
        text = buf.text.strip()
        buf.reset()
        s.hint = ""
        if s.asking == "name":  # the host form's name: back to the form
            s.host_name, s.screen = text[:32], Screen.HOST
            self.app.layout.focus_previous()
            return False
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
            s.screen, s.row = Screen.HOST, len(HOST_ROWS) - 1

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
            elif s.screen is Screen.HOST:
                s.row = (s.row - 1) % len(HOST_ROWS)
            else:
                s.scroll = max(0, s.scroll - 1)

        @on("down")
        def _(event: KeyPressEvent) -> None:
            if s.screen is Screen.MENU:
                s.cursor = (s.cursor + 1) % s.rows
            elif s.screen is Screen.PRACTICE:
                s.row = (s.row + 1) % 3
            elif s.screen is Screen.HOST:
                s.row = (s.row + 1) % len(HOST_ROWS)
            else:
                s.scroll += 1

        def side(delta: int) -> None:
            if s.screen is Screen.PRACTICE and s.row == 0:
                s.level = (s.level + delta) % len(LEVELS)
            elif s.screen is Screen.RULES or (
                s.screen in (Screen.PRACTICE, Screen.HOST) and s.row == 1
            ):
                s.preset = (s.preset + delta) % len(PRESETS)
                s.scroll = 0
            elif s.screen is Screen.HOST and s.row == 2:
                s.rounds = (s.rounds + delta) % 13  # 0: the preset's; 1-12
            elif s.screen is Screen.HOST and s.row == 3:
                s.deal = (s.deal + delta) % len(DEALS)

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
            elif s.screen is Screen.HOST:
                if s.row == len(HOST_ROWS) - 1:
                    event.app.exit(result=host_argv(s))
                elif s.row == 0:
                    s.screen, s.asking = Screen.ASK, "name"
                    self.entry.text = s.host_name
                    self.entry.cursor_position = len(s.host_name)
                    self.app.layout.focus(self.entry)
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
            s.hint = ""
            s.screen = Screen.HOST if s.asking == "name" else Screen.MENU
            event.app.layout.focus_previous()

        @kb.add("tab", filter=typing)
        def _(event: KeyPressEvent) -> None:
            if s.asking in ("join", "code"):
                self._complete()

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
    from p2pkoikoi.session.errors import RulesDeclinedError
    from p2pkoikoi.transport.errors import DeclinedError
    from p2pkoikoi.ui.app import require_terminal

    require_terminal("for scripts use a command: p2pkoikoi host --headless, join --headless")
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
        except (DeclinedError, RulesDeclinedError) as exc:  # an answer, not a failure
            note = ("No match was played:", [("class:message", str(exc))])
        except KoiKoiError as exc:
            note = ("That did not work:", [("class:message", str(exc))])
