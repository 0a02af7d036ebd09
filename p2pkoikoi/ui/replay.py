"""A finished match on the table, read-only: step through it forwards and backwards.

Theory of operation: :func:`positions` replays a record's actions through the
engine from its match seed (as ``verify`` does), keeping every state and the
events that led to it.  A step shows position ``i`` by feeding the first ``i``
updates to a fresh :class:`~p2pkoikoi.ui.state.TableState` (the same object the
live table uses, so the same renderer draws it, log included); nothing is ever
sent anywhere.  Once the record holds the result, both hands are shown: the
match is over, and seeing the computer's (or the friend's) cards is how one
checks for oneself that the deal was what the seed says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Dimension, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output

from p2pkoikoi.engine import Action, Event, MatchState, RuleSet
from p2pkoikoi.session.errors import RecordError
from p2pkoikoi.session.records.record import Record
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.ui import render as R
from p2pkoikoi.ui.fold import SIDE, SizedText, board_width, folded_window
from p2pkoikoi.ui.state import TableState
from p2pkoikoi.ui.sync_output import synchronize_output
from p2pkoikoi.ui.tiles import tile_style, tile_text


@dataclasses.dataclass(frozen=True, slots=True)
class Position:
    """The match after ``seq`` actions; ``actor``/``action`` made it (none at the start)."""

    seq: int
    state: MatchState
    events: tuple[Event, ...]
    actor: int | None
    action: str


def positions(record: Record) -> list[Position]:
    """Every position of the recorded match; :class:`RecordError` if it cannot be replayed."""
    from p2pkoikoi.engine import KoiKoiError

    if record.rules is None or record.match_seed is None:
        raise RecordError("the record stops before the match began: nothing to replay")
    rules: RuleSet = record.rules
    if any(a.kind for a in record.actions):
        return hidden_positions(record)
    try:
        m, events = MatchState.start(rules, record.match_seed)
        out = [Position(0, m, events, None, "")]
        for a in record.actions:
            if a.action == "resign":
                m, events = m.resign(a.seat)
            else:
                m, events = m.apply(Action.parse(a.action))
            out.append(Position(a.seq, m, events, a.seat, a.action))
    except KoiKoiError as exc:
        raise RecordError(f"action {len(out)} cannot be replayed: {exc}") from None
    return out


def hidden_positions(record: Record) -> list[Position]:
    """A hidden-deal record's positions: each deal dealt from its audited deck.

    The audits (protocol/hidden-deal.md section 5) give each deal's cards
    (``σ(j) = π_h(π_j(j))``); with them the engine deals as an open deal does and
    plays the recorded decisions (``act``), so both hands show as they were.  The
    other card moves (decks, keys, declarations, draws) are the deal's mechanics,
    not positions.  A deal without audits (the record stops in it) is not shown.
    ``verify`` is what checks that the audits and every move hold.
    """
    from p2pkoikoi.engine import KoiKoiError, Phase
    from p2pkoikoi.session.mental.deck import DeckSecrets, dealt_deck
    from p2pkoikoi.session.mental.errors import HiddenDealError

    assert record.rules is not None and record.match_seed is not None
    audits: list[list[bytes]] = [[], []]
    for a in record.actions:
        if a.kind == "audit":
            audits[a.seat].append(a.deck)
    deals = min(len(audits[0]), len(audits[1]))
    try:
        m, events = MatchState.start(record.rules, record.match_seed)
        dealt = 0

        def deal(state: MatchState) -> tuple[MatchState, tuple[Event, ...]]:
            """Deal every deal due now (a redeal follows its deal at once)."""
            nonlocal dealt
            got: list[Event] = []
            while state.phase is Phase.DEAL and not state.is_over and dealt < deals:
                host = DeckSecrets.decode(0, audits[0][dealt])
                joiner = DeckSecrets.decode(1, audits[1][dealt])
                state, more = state.deal(dealt_deck(host, joiner))
                got.extend(more)
                dealt += 1
            return state, tuple(got)

        m, more = deal(m)
        out = [Position(0, m, events + more, None, "")]
        for a in record.actions:
            if a.kind == "act":
                m, events = m.apply(Action.parse(a.action))
            elif not a.kind and a.action.startswith("resign"):
                m, events = m.resign(a.seat)
            else:
                continue
            m, more = deal(m)
            out.append(Position(a.seq, m, events + more, a.seat, a.action.split(":")[0]))
            if m.phase is Phase.DEAL and not m.is_over:
                break  # the record stops in a deal that was never audited
    except (KoiKoiError, HiddenDealError) as exc:
        raise RecordError(f"the hidden deal cannot be replayed: {exc}") from None
    return out


def turn_ends(moves: list[Position]) -> list[int]:
    """Indexes that end a player's turn (their play, draw and any choice after it)."""
    ends = [0]
    for i in range(1, len(moves)):
        nxt = moves[i + 1] if i + 1 < len(moves) else None
        if nxt is None or nxt.actor != moves[i].actor or nxt.state.round != moves[i].state.round:
            ends.append(i)
    return ends


@dataclasses.dataclass
class Replay:
    """The stepping state: which position shows (pure; the app draws it)."""

    record: Record
    seat: int
    moves: list[Position]
    ascii: bool = False
    index: int = 0
    note: str = ""  # e.g. the verification failure

    @property
    def names(self) -> tuple[str, str]:
        host = self.record.host.name if self.record.host else "host"
        joiner = self.record.joiner.name if self.record.joiner else "joiner"
        return host, joiner

    @property
    def finished(self) -> bool:
        return self.record.result is not None

    def table(self) -> TableState:
        """The table as it stood at :attr:`index` (the log holds every move so far)."""
        names = list(self.names)
        names[self.seat] = "You"
        st = TableState(ascii=self.ascii)
        rules = self.record.rules
        assert rules is not None
        st.attach(self.seat, (names[0], names[1]), rules)
        for pos in self.moves[: self.index + 1]:
            st.apply_update(Update("state", pos.state.view(self.seat), pos.events, pos.actor))
        st.pages.clear()  # round pages are for live play; here the log tells
        st.summaries.clear()
        return st

    def step(self, delta: int) -> None:
        self.index = max(0, min(len(self.moves) - 1, self.index + delta))

    def turn(self, direction: int) -> None:
        ends = turn_ends(self.moves)
        if direction > 0:
            self.index = next((i for i in ends if i > self.index), self.index)
        else:
            self.index = next((i for i in reversed(ends) if i < self.index), 0)

    def round(self, direction: int) -> None:
        """To the start of the next (or this / the previous) round."""
        now = self.moves[self.index].state.round
        if direction > 0:
            self.index = next(
                (i for i, p in enumerate(self.moves) if p.state.round > now), len(self.moves) - 1
            )
        else:
            starts = [
                i
                for i, p in enumerate(self.moves)
                if i == 0 or p.state.round != self.moves[i - 1].state.round
            ]
            self.index = next((i for i in reversed(starts) if i < self.index), 0)

    def caption(self) -> StyleAndTextTuples:
        pos = self.moves[self.index]
        total = len(self.moves) - 1
        where = f" Move {pos.seq} of {total}" if pos.seq else f" The deal (0 of {total} moves)"
        out: StyleAndTextTuples = [("class:heading", where)]
        if pos.actor is not None:
            who = "You" if pos.actor == self.seat else self.names[pos.actor]
            out.append(("", f": {who} {'resigned' if pos.action == 'resign' else pos.action}"))
        if pos.state.is_over:
            out.append(("class:score", "  (the match is over)"))
        if self.note:
            out.append(("class:status.bad", "  " + self.note))
        return out

    def other_hand(self) -> StyleAndTextTuples:
        """The other player's hand: shown only for a finished match."""
        them = 1 - self.seat
        name = self.names[them]
        rule = "-" if self.ascii else "─"
        if not self.finished:
            return [("class:dim", f"{rule} {name}'s hand is hidden: the match did not finish")]
        hand = self.moves[self.index].state.view(them).hand
        out: StyleAndTextTuples = [("class:label", f"{rule} {name}'s hand: ")]
        for c in hand:
            out.append((tile_style(c), tile_text(c, self.ascii)))
            out.append(("", " "))
        if not hand:
            out.append(("class:dim", "(empty)"))
        return out


def replay_app(
    rp: Replay, *, input: Input | None = None, output: Output | None = None
) -> Application[int]:
    """The read-only table for ``rp``; keys step, q leaves."""
    from p2pkoikoi.ui.app import STYLE

    cache: dict[int, TableState] = {}

    def st() -> TableState:
        if rp.index not in cache:
            cache.clear()
            cache[rp.index] = rp.table()
        return cache[rp.index]

    def ft(fn: object) -> FormattedTextControl:
        return FormattedTextControl(fn)  # type: ignore[arg-type]

    def width() -> int:
        return board_width(get_app().output.get_size().columns)

    def log(w: int, h: int) -> StyleAndTextTuples:
        return R.log_fragments(st(), h, w)

    board = HSplit(
        [
            folded_window(lambda: R.opponent_fragments(st()), width),
            folded_window(rp.other_hand, width),
            folded_window(lambda: R.field_fragments(st(), None, width()), width),
            folded_window(lambda: R.mine_fragments(st()), width),
            folded_window(lambda: R.hand_fragments(st()), width),
            Window(SizedText(log), height=Dimension(min=1), wrap_lines=False),
        ],
        width=lambda: Dimension.exact(width()),
    )
    side_rule = "|" if rp.ascii else "│"
    footer = (
        " Left/Right: turn   ,/.: move   Up/Down: round   Home/End   q: leave"
        if rp.ascii
        else " ←→: turn   ,/.: move   ↑↓: round   Home/End   q: leave"
    )
    root = HSplit(
        [
            VSplit(
                [
                    board,
                    Window(width=1, char=side_rule, style="class:rule"),
                    Window(ft(lambda: R.side_fragments(st())), width=SIDE, wrap_lines=False),
                    Window(),
                ]
            ),
            Window(ft(rp.caption), height=1),
            Window(ft(lambda: [("class:footer", footer)]), height=1, style="class:footer"),
        ]
    )
    kb = KeyBindings()

    def bind(keys: tuple[str, ...], fn: Callable[[KeyPressEvent], object]) -> None:
        for k in keys:
            kb.add(k)(fn)

    bind(("right", "l", " "), lambda e: rp.turn(1))
    bind(("left", "h", "backspace"), lambda e: rp.turn(-1))
    bind((".",), lambda e: rp.step(1))
    bind((",",), lambda e: rp.step(-1))
    bind(("down", "pagedown"), lambda e: rp.round(1))
    bind(("up", "pageup"), lambda e: rp.round(-1))
    bind(("home",), lambda e: rp.step(-len(rp.moves)))
    bind(("end",), lambda e: rp.step(len(rp.moves)))

    def leave(event: KeyPressEvent) -> None:
        event.app.exit(result=0)

    bind(("q", "c-c", "escape"), leave)
    app: Application[int] = Application(
        layout=Layout(root),
        key_bindings=kb,
        style=STYLE,
        full_screen=True,
        input=input,
        output=output,
    )
    synchronize_output(app)
    return app
