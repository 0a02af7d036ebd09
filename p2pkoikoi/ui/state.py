"""The one object that owns the table's interface state.

:class:`TableState` holds the latest :class:`PlayerView` (from the link's
updates), what the person has selected, which page or dialog is open, the
event log and the chat.  Key presses and clicks become calls to its methods;
a method that decides a move returns the :class:`Action` to send and the
caller (:mod:`p2pkoikoi.ui.app`) sends it through the :class:`GameLink`.
Nothing here does I/O, so every interaction can be tested without a
terminal.  Rendering (:mod:`p2pkoikoi.ui.render`) reads this object and never
changes it.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from p2pkoikoi.engine import (
    Action,
    ActionKind,
    Card,
    CardSet,
    Phase,
    PlayerView,
    RuleSet,
    get_preset,
)
from p2pkoikoi.engine.events import (
    DealerChosen,
    Drew,
    Event,
    HandSwapDecided,
    HandYaku,
    KoiKoiCalled,
    MatchEnded,
    Played,
    Redealt,
    Resigned,
    RoundEnded,
    RoundStarted,
    Took,
    YakuMade,
)
from p2pkoikoi.engine.yaku import ScoreBreakdown
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.ui.tiles import plain, tile_text


class Page(enum.Enum):
    """Full-screen pages, shown instead of the table."""

    WAITING = "waiting"  # before the game exists (e.g. a host waiting for a peer)
    ROUND = "round"  # a round's summary
    OVER = "over"  # the match's end
    HELP = "help"  # yaku and rules
    UNSEEN = "unseen"  # per month, the cards not yet seen


class Dialog(enum.Enum):
    """Small dialogs over the table."""

    RESIGN = "resign"
    QUIT = "quit"


class Decision(enum.Enum):
    """What the table waits for the person to decide."""

    PLAY = "play"  # a hand card
    TARGET = "target"  # which of two field cards the played card takes
    TAKE = "take"  # which of two field cards the drawn card takes
    KOIKOI = "koikoi"
    SWAP = "swap"


@dataclass(frozen=True, slots=True)
class RulesOffer:
    """The host's proposal as the joiner reads it before accepting or declining.

    ``preset`` is the preset the rules are compared against: the one the host
    named when ``named``, else the closest one (fewest differences).  ``diffs``
    holds ``(setting, offered value, the preset's value)``.
    """

    peer_name: str
    fingerprint: str
    rules: RuleSet
    preset: str
    named: bool
    diffs: tuple[tuple[str, object, object], ...]
    warning: str = ""  # the known-peers warning when this name's key changed
    seen_before: bool | None = None  # True: a known peer with this key; False: new
    own_fingerprint: str = ""  # yours, to compare out of band
    turn_limit: int = 0  # seconds per decision the host proposes (0: none)
    #: the host's question about a joiner with a changed key (the rules are its own)
    joining: bool = False


def make_offer(
    peer_name: str,
    fingerprint: str,
    rules: RuleSet,
    preset: str | None = None,
) -> RulesOffer:
    """A :class:`RulesOffer`, comparing against ``preset`` or else the closest preset.

    What else the question says (a changed key's warning, the turn limit...) is
    added with :func:`dataclasses.replace`: those are the offer's own fields."""
    from p2pkoikoi.engine.presets import closest_preset

    if preset is not None:
        name = preset.strip().lower()
        diffs = [(k, mine, theirs) for k, mine, theirs in rules.diff(get_preset(name))]
    else:
        name, diffs = closest_preset(rules)
    return RulesOffer(
        peer_name,
        fingerprint,
        rules,
        name,
        preset is not None,
        tuple(diffs),
    )


def table_names(seat: int, names: tuple[str, str], peer_fingerprint: str = "") -> tuple[str, str]:
    """The names a table shows: its own seat is always "You"; the other player goes by
    their name, with the first group of their fingerprint when that name could be
    mistaken for yours (the same name, or "You")."""
    other = names[1 - seat]
    if other.casefold() in (names[seat].casefold(), "you"):
        tag = peer_fingerprint.split("-")[0] if peer_fingerprint else "other player"
        other = f"{other} ({tag})"
    out = ["", ""]
    out[seat], out[1 - seat] = "You", other
    return (out[0], out[1])


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """A finished round as the round-end page shows it."""

    round: int
    rounds: int
    dealer: int
    winner: int | None
    reason: str
    breakdown: ScoreBreakdown | None
    gained: tuple[int, int]
    scores: tuple[int, int]
    piles: tuple[CardSet, CardSet]
    hand_yaku: tuple[HandYaku, ...]
    calls: tuple[int, int]


@dataclass
class TableState:
    """The interface state; see the module docstring."""

    ascii: bool = False
    seat: int = 0
    names: tuple[str, str] = ("You", "Opponent")
    rules: RuleSet = field(default_factory=lambda: get_preset("online"))
    view: PlayerView | None = None
    # selection
    cursor: int = 0  # index into the hand
    choosing: Card | None = None  # a hand card whose capture is being chosen
    target_cursor: int = 0
    dialog_cursor: int = 0  # KOIKOI / SWAP buttons, and the yes/no of dialogs
    # pages and dialogs
    pages: list[Page] = field(default_factory=list)  # a stack; the last one shows
    summaries: list[RoundSummary] = field(default_factory=list)  # rounds not yet acknowledged
    dialog: Dialog | None = None
    scroll: int = 0  # of the page on top
    waiting_title: str = "Starting..."
    waiting_lines: tuple[str, ...] = ()
    waiting_since: float | None = None  # monotonic time the waiting began (the indicator)
    #: a host's waiting screen takes a pasted answer (key p): where it goes
    answer_box: Callable[[str], Awaitable[None]] | None = None
    offer: RulesOffer | None = None  # the host's rules, shown on the waiting page
    offer_cursor: int = 0  # 0 = Accept, 1 = Decline
    _offer_reply: Callable[[bool], None] | None = None
    # game flow
    busy: bool = False  # an action was sent; waiting for the update it causes
    message: str = ""  # the latest error or note for the person
    status: str = ""  # the latest connection status ("" = fine)
    status_bad: bool = False
    status_news: bool = False  # the status is news, cleared by the next move
    over: Update | None = None
    closed: bool = False  # the link's updates ended before the match did
    #: network matches: the end page offers "r: play again" (protocol section 13)
    rematch_possible: bool = False
    rematch: str = ""  # where a rematch stands, for the end page ("" = not asked yet)
    wait_since: float = 0.0  # when the opponent's turn began (monotonic seconds)
    #: when your own decision must be made under the agreed turn limit (monotonic
    #: seconds; None: no limit, or not your turn)
    turn_deadline: float | None = None
    opp_last: tuple[str, ...] = ()  # the opponent's last play and draw, as text
    opp_moves: tuple[tuple[str, Card, tuple[Card, ...]], ...] = ()  # (verb, card, captured)
    log: list[tuple[str, str]] = field(default_factory=list)  # (style, text)
    log_scroll: int = 0  # folded rows of the log scrolled back from the newest
    log_height: int = 6  # rows the log had when last drawn (a PgUp's step)
    listeners: list[Callable[[], None]] = field(default_factory=list)
    _piles: list[int] = field(default_factory=lambda: [0, 0])
    _round_dealer: int = 0
    _hand_yaku: list[HandYaku] = field(default_factory=list)
    _calls: tuple[int, int] = (0, 0)
    #: rounds whose engine reason says too little: a "stop" that nobody chose (a yaku
    #: when no koi-koi call was possible, e.g. on the last turn) becomes "no_call"
    round_reasons: dict[int, str] = field(default_factory=dict)
    bell: bool = False  # ring the terminal bell when it becomes your turn
    tutorial: bool = False  # the guided first round (ui/tutorial.py) is on
    practice: bool = False  # against the computer here: hints and undo
    resumable: bool = False  # leaving keeps the match for ``practice --resume``
    record_path: str = ""  # where a practice match's record is being kept

    # ------------------------------------------------------------------ names
    @property
    def me(self) -> str:
        return self.names[self.seat]

    @property
    def them(self) -> str:
        return self.names[1 - self.seat]

    def name(self, seat: int | None) -> str:
        return "nobody" if seat is None else self.names[seat]

    def does(self, seat: int | None, verb: str) -> str:
        """``"Computer deals"`` but ``"You deal"``: the name with the verb agreeing."""
        name = self.name(seat)
        if name == "You":
            verb = {"holds": "hold", "was": "were"}.get(
                verb, verb[:-1] if verb.endswith("s") else verb
            )
        return f"{name} {verb}"

    def p(self, text: str) -> str:
        """``text`` made plain for ``--ascii``."""
        return plain(text, self.ascii)

    def changed(self) -> None:
        for fn in list(self.listeners):
            fn()

    # ------------------------------------------------------------------ updates
    def waiting(self, title: str, lines: tuple[str, ...], since: float | None = None) -> None:
        self.waiting_title = title
        self.waiting_lines = lines
        self.waiting_since = since
        if Page.WAITING not in self.pages:
            self.pages.insert(0, Page.WAITING)
        self.changed()

    def show_offer(self, offer: RulesOffer, reply: Callable[[bool], None]) -> None:
        """Show the host's rules on the waiting page; ``reply(accepted)`` is called once."""
        self.offer, self._offer_reply, self.offer_cursor = offer, reply, 0
        self.scroll = 0
        if Page.WAITING not in self.pages:
            self.pages.insert(0, Page.WAITING)
        self.changed()

    def answer_offer(self, accepted: bool) -> None:
        """Accept or decline the rules on show (no-op without an offer)."""
        reply = self._offer_reply
        if self.offer is None or reply is None:
            return
        self.offer, self._offer_reply = None, None
        self.scroll = 0
        self.waiting(
            "Starting the match..." if accepted else "Declined",
            ("You accepted the rules.",) if accepted else ("Telling the host...",),
        )
        reply(accepted)

    def move_offer(self, delta: int) -> None:
        """Move between the Accept and Decline buttons."""
        if self.offer is not None:
            self.offer_cursor = (self.offer_cursor + delta) % 2
            self.changed()

    def attach(self, seat: int, names: tuple[str, str], rules: RuleSet) -> None:
        self.seat, self.names, self.rules = seat, names, rules
        self.offer, self._offer_reply = None, None
        if Page.WAITING in self.pages:
            self.pages.remove(Page.WAITING)
        self.changed()

    def apply_update(self, upd: Update, now: float = 0.0) -> None:
        if upd.kind == "chat":
            # the link says whose line it is by seat (both players may be "root")
            sender = self.name(upd.actor) if upd.actor is not None else upd.sender
            self._log("class:log.chat", f"<{sender}> {upd.text}")
        elif upd.kind == "status":
            self.set_status(upd.text)
            if upd.text:
                self._log("class:log.status", upd.text)
        elif upd.kind == "over":
            self.over = upd
            self.busy = False
            self._clear_news()  # e.g. "you will resign when your turn comes": it is over
            if Page.OVER not in self.pages:
                self.pages.insert(0, Page.OVER)  # below any round summary still to read
                if len(self.pages) == 1:
                    self.scroll = 0
            self.dialog = None
        if upd.kind in ("state", "jump") or self.view is None:
            self._apply_state(upd, now)
        if upd.kind == "jump":
            self._resync(upd.view, upd.text)
        self.changed()

    def set_status(self, text: str) -> None:
        """Connection news or trouble for the status line.  News ("connected to Bob",
        "reconnected", "match 2 ...: dealing") lasts until the next move; trouble
        stays until news replaces it."""
        self.status = text
        bad_words = (
            "lost",
            "disconnect",
            "trouble",
            "retry",
            "reconnect",
            "timeout",
            "closed",
            "error",
        )
        low = text.lower()
        self.status_bad = any(w in low for w in bad_words) and not low.startswith("reconnected")
        self.status_news = not self.status_bad

    def _resync(self, view: PlayerView, why: str) -> None:
        """The match moved without its events (undo, resume): what the table keeps
        from the events is taken from the view instead."""
        self._piles = [view.piles[0].mask, view.piles[1].mask]
        self._calls = (view.calls[0], view.calls[1])
        self._round_dealer = view.dealer if view.dealer is not None else self._round_dealer
        self._hand_yaku = []
        self.opp_last, self.opp_moves = (), ()
        self.choosing = None
        self.message = ""
        if why == "undo":
            self._log("class:log.status", "Undo: your last turn (and the reply) taken back.")
        else:
            self._log("class:log.status", f"Resumed: round {view.round}, where you left it.")

    def _apply_state(self, upd: Update, now: float) -> None:
        old = self.view
        view = upd.view
        self._events(upd.events)
        self.view = view
        if upd.kind == "jump" or upd.events or upd.actor != self.seat:
            # (our own move's update without events is that move still in flight: the
            # hidden deal applies a play only once the other side sent its key for the
            # draw.  Until then the table stays "Sending...": a prompt shown meanwhile
            # would ask again, and an Enter meant for it would answer the next decision)
            self.busy = False
        if upd.events:
            self.message = ""
        if (
            old is None
            or old.phase is not view.phase
            or old.to_act != view.to_act
            or old.round != view.round
        ):
            self.choosing = None
            self.target_cursor = 0
            self.dialog_cursor = 1 if view.phase is Phase.KOIKOI else 0  # Stop is the safe default
            if view.to_act is not None and view.to_act != self.seat:
                self.wait_since = now
        n = len(view.hand)
        self.cursor = min(self.cursor, max(0, n - 1))

    def _clear_news(self) -> None:
        if self.status_news:
            self.status, self.status_news = "", False

    def _log(self, style: str, text: str) -> None:
        self.log.append((style, self.p(text)))
        del self.log[:-200]
        if self.log_scroll:  # reading back: the rows on show stay put
            self.log_scroll += 1

    def scroll_log(self, pages: int) -> None:
        """PgUp (-1) / PgDn (+1) on the table: the log back or forward by a window less a row."""
        step = max(1, self.log_height - 1)
        self.log_scroll = max(0, self.log_scroll - pages * step)
        self.changed()

    def _events(self, events: tuple[Event, ...]) -> None:
        them = 1 - self.seat
        opp_moves: list[str] = []
        moves: list[tuple[str, Card, tuple[Card, ...]]] = []
        forced_end = False  # the last YakuMade offered no koi-koi: the round ends by itself
        for ev in events:
            who = self.name(getattr(ev, "seat", None))
            if isinstance(ev, RoundStarted):
                self._piles = [0, 0]
                self._round_dealer = ev.dealer
                self._hand_yaku = []
                self._calls = (0, 0)
                again = f" (dealt again, try {ev.attempt + 1})" if ev.attempt else ""
                self._log(
                    "class:log.round", f"Round {ev.round}: {self.does(ev.dealer, 'deals')}{again}."
                )
            elif isinstance(ev, DealerChosen):
                how = "by a coin" if ev.method == "coin" else "by drawing cards"
                self._log("", f"{self.does(ev.dealer, 'deals')} first (chosen {how}).")
            elif isinstance(ev, Redealt):
                self._log("", f"Redeal: {ev.reason.replace('_', ' ')}.")
            elif isinstance(ev, HandSwapDecided):
                self._log("", f"{who} {'swapped hands' if ev.swapped else 'kept the hands'}.")
            elif isinstance(ev, HandYaku):
                self._hand_yaku.append(ev)
                self._log(
                    "class:log.yaku",
                    f"{self.does(ev.seat, 'holds')} {ev.yaku.romaji} ({ev.yaku.points}).",
                )
            elif isinstance(ev, Played):
                self._clear_news()
                text = self._capture_text("played", ev.card, ev.captured)
                self._log("", f"{who} {text}.")
                if ev.captured:
                    self._piles[ev.seat] |= ev.card.bit | CardSet(ev.captured).mask
                if ev.seat == them:
                    opp_moves = [text]
                    moves = [("played", ev.card, ev.captured)]
            elif isinstance(ev, Drew):
                if ev.pending:
                    text = f"drew {self._card(ev.card)}: two cards match"
                else:
                    text = self._capture_text("drew", ev.card, ev.captured)
                self._log("", f"{who} {text}.")
                if ev.captured and not ev.pending:
                    self._piles[ev.seat] |= ev.card.bit | CardSet(ev.captured).mask
                if ev.seat == them:
                    opp_moves.append(text)
                    moves.append(("drew", ev.card, () if ev.pending else ev.captured))
            elif isinstance(ev, Took):
                taken = ", ".join(c.english for c in ev.captured)
                text = f"took {taken} with the drawn {self._card(ev.card)}"
                self._piles[ev.seat] |= ev.card.bit | CardSet(ev.captured).mask
                self._log("", f"{who} {text}.")
                if ev.seat == them:
                    opp_moves.append(text)
                    if moves and moves[-1][0] == "drew":
                        moves[-1] = ("drew", ev.card, ev.captured)
            elif isinstance(ev, YakuMade):
                forced_end = not ev.can_koikoi
                names = ", ".join(f"{y.romaji} {y.points}" for y in ev.yaku)
                self._log("class:log.yaku", f"{who} made {names} (total {ev.total}).")
            elif isinstance(ev, KoiKoiCalled):
                calls = list(self._calls)
                calls[ev.seat] = ev.calls
                self._calls = (calls[0], calls[1])
                self._log("class:log.koikoi", f"{who} called koi-koi! ({ev.calls})")
            elif isinstance(ev, RoundEnded):
                if ev.reason == "stop" and forced_end:
                    self.round_reasons[ev.round] = "no_call"
                self._round_ended(ev)
            elif isinstance(ev, MatchEnded):
                if ev.winner is None:
                    self._log("class:log.round", "The match is over: a draw.")
                else:
                    won = "you won" if ev.winner == self.seat else f"{self.name(ev.winner)} won"
                    self._log("class:log.round", f"The match is over: {won}.")
            elif isinstance(ev, Resigned):
                self._log("class:log.round", f"{who} resigned.")
        if opp_moves:
            self.opp_last = tuple(self.p(m) for m in opp_moves)
        if moves:
            self.opp_moves = tuple(moves)

    def _card(self, card: Card) -> str:
        return f"{card.english} [{tile_text(card, self.ascii).strip()}]"

    def _capture_text(self, verb: str, card: Card, captured: tuple[Card, ...]) -> str:
        if not captured:
            return f"{verb} {self._card(card)} to the field"
        return f"{verb} {self._card(card)}, took {', '.join(c.english for c in captured)}"

    def _round_ended(self, ev: RoundEnded) -> None:
        rounds = self.rules.rounds
        summary = RoundSummary(
            round=ev.round,
            rounds=rounds,
            dealer=self._round_dealer,
            winner=ev.winner,
            reason=ev.reason,
            breakdown=ev.breakdown,
            gained=ev.gained,
            scores=ev.scores,
            piles=(CardSet(self._piles[0]), CardSet(self._piles[1])),
            hand_yaku=tuple(self._hand_yaku),
            calls=self._calls,
        )
        self.summaries.append(summary)
        if ev.winner is None:
            self._log(
                "class:log.round",
                f"Round {ev.round} ends with no winner ({ev.reason.replace('_', ' ')}).",
            )
        else:
            pts = ev.gained[ev.winner]
            self._log("class:log.round", f"Round {ev.round}: {self.does(ev.winner, 'wins')} {pts}.")
        if Page.ROUND not in self.pages:
            self.pages.append(Page.ROUND)
            self.scroll = 0
        self.dialog = None

    # ------------------------------------------------------------------ what is asked
    @property
    def page(self) -> Page | None:
        return self.pages[-1] if self.pages else None

    @property
    def my_turn(self) -> bool:
        v = self.view
        return v is not None and v.to_act == self.seat and not self.busy and self.over is None

    @property
    def decision(self) -> Decision | None:
        v = self.view
        if not self.my_turn or v is None:
            return None
        if v.phase is Phase.PLAY:
            return Decision.TARGET if self.choosing is not None else Decision.PLAY
        if v.phase is Phase.DRAW_CHOICE:
            return Decision.TAKE
        if v.phase is Phase.KOIKOI:
            return Decision.KOIKOI
        if v.phase is Phase.HAND_SWAP:
            return Decision.SWAP
        return None

    @property
    def hand(self) -> list[Card]:
        return list(self.view.hand) if self.view else []

    @property
    def selected(self) -> Card | None:
        hand = self.hand
        if self.choosing is not None:
            return self.choosing
        return hand[self.cursor] if 0 <= self.cursor < len(hand) else None

    def targets(self) -> list[Card]:
        """The field cards on offer in a TARGET or TAKE decision, in order."""
        v = self.view
        if v is None:
            return []
        d = self.decision
        if d is Decision.TARGET and self.choosing is not None:
            card = self.choosing
            return [a.target for a in v.legal_actions if a.card is card and a.target is not None]
        if d is Decision.TAKE:
            return [
                a.card for a in v.legal_actions if a.kind is ActionKind.TAKE and a.card is not None
            ]
        return []

    def highlighted(self) -> set[Card]:
        """Field cards the selected hand card would capture (or those on offer)."""
        v = self.view
        if v is None:
            return set()
        offered = self.targets()
        if offered:
            return set(offered)
        card = self.selected
        if card is None:
            return set()
        return {c for c in v.field if c.month == card.month}

    def options(self) -> list[str]:
        """Button labels of a KOIKOI or SWAP decision."""
        d = self.decision
        if d is Decision.KOIKOI:
            v = self.view
            if v is not None and any(a.kind is ActionKind.KOIKOI for a in v.legal_actions):
                return ["Koi-koi", "Stop"]
            return ["Stop"]
        if d is Decision.SWAP:
            return ["Swap", "Keep"]
        return []

    # ------------------------------------------------------------------ input
    def _count(self) -> int:
        """How many things the arrows move over right now."""
        if self.page is not None or self.dialog is not None:
            return 2 if self.dialog is not None else 0
        d = self.decision
        if d in (Decision.TARGET, Decision.TAKE):
            return len(self.targets())
        if d in (Decision.KOIKOI, Decision.SWAP):
            return len(self.options())
        return len(self.hand)

    def move(self, delta: int) -> None:
        if self.page is not None:
            self.scroll = max(0, self.scroll + delta)
        elif self.dialog is not None:
            self.dialog_cursor = (self.dialog_cursor + delta) % 2
        else:
            n = self._count()
            if n:
                d = self.decision
                if d in (Decision.TARGET, Decision.TAKE):
                    self.target_cursor = (self.target_cursor + delta) % n
                elif d in (Decision.KOIKOI, Decision.SWAP):
                    self.dialog_cursor = (self.dialog_cursor + delta) % n
                else:
                    self.cursor = (self.cursor + delta) % n
        self.changed()

    def digit(self, n: int) -> None:
        """Choose the n-th thing (1-based) without confirming."""
        if self.page is not None:
            return
        count = self._count()
        if 1 <= n <= count:
            d = self.decision
            if self.dialog is not None:
                self.dialog_cursor = n - 1
            elif d in (Decision.TARGET, Decision.TAKE):
                self.target_cursor = n - 1
            elif d in (Decision.KOIKOI, Decision.SWAP):
                self.dialog_cursor = n - 1
            else:
                self.cursor = n - 1
        self.changed()

    def enter(self) -> Action | None:
        """Confirm what is chosen; returns the action to send, if any."""
        try:
            return self._enter()
        finally:
            self.changed()

    def _enter(self) -> Action | None:
        page = self.page
        if page is Page.WAITING and self.offer is not None:
            self.answer_offer(self.offer_cursor == 0)
            return None
        if page is Page.ROUND:
            if self.summaries:
                self.summaries.pop(0)
            if not self.summaries:
                self.pages.remove(Page.ROUND)
            self.scroll = 0
            return None
        if page in (Page.HELP, Page.UNSEEN):
            self.pages.remove(page)
            self.scroll = 0
            return None
        if page is not None:
            return None
        if self.dialog is not None:
            if self.dialog_cursor == 1:  # "No"
                self.dialog = None
            return None  # the caller acts on a "Yes" (resign or quit)
        v = self.view
        d = self.decision
        if v is None or d is None:
            if v is not None and v.to_act is not None and v.to_act != self.seat:
                self.message = f"Not your turn: waiting for {self.them}."
            return None
        if d is Decision.PLAY:
            card = self.selected
            if card is None:
                return None
            acts = [a for a in v.legal_actions if a.kind is ActionKind.PLAY and a.card is card]
            if not acts:
                self.message = "You must play a card that captures (forced capture)."
                return None
            if len(acts) == 1:
                return self._send(acts[0])
            self.choosing = card
            self.target_cursor = 0
            self.message = ""
            return None
        if d is Decision.TARGET:
            targets = self.targets()
            if not targets or self.choosing is None:
                return None
            target = targets[self.target_cursor % len(targets)]
            for a in v.legal_actions:
                if a.card is self.choosing and a.target is target:
                    return self._send(a)
            return None
        if d is Decision.TAKE:
            targets = self.targets()
            if not targets:
                return None
            target = targets[self.target_cursor % len(targets)]
            return self._send(next(a for a in v.legal_actions if a.card is target))
        if d in (Decision.KOIKOI, Decision.SWAP):
            label = self.options()[self.dialog_cursor % len(self.options())]
            kind = {
                "Koi-koi": ActionKind.KOIKOI,
                "Stop": ActionKind.STOP,
                "Swap": ActionKind.SWAP,
                "Keep": ActionKind.KEEP,
            }[label]
            return self._send(next(a for a in v.legal_actions if a.kind is kind))
        return None

    def _send(self, action: Action) -> Action:
        self.busy = True
        self.choosing = None
        self.message = ""
        return action

    def escape(self) -> None:
        if self.page is Page.WAITING and self.offer is not None:
            self.answer_offer(False)
        elif self.page in (Page.HELP, Page.UNSEEN):
            self.pages.remove(self.page)
            self.scroll = 0
        elif self.dialog is not None:
            self.dialog = None
        elif self.choosing is not None:
            self.choosing = None
        elif self.decision is Decision.TAKE:
            self.message = "The drawn card must take one of the two field cards."
        self.changed()

    def start_tutorial(self) -> None:
        self.tutorial = True
        self.changed()

    def toggle_tutorial(self) -> None:
        """``g``: the guide off (or back on, while the first round lasts)."""
        self.tutorial = not self.tutorial
        self.changed()

    def toggle_unseen(self) -> None:
        """The unseen-cards page, for players learning to count."""
        if self.page is Page.UNSEEN:
            self.pages.remove(Page.UNSEEN)
        elif self.view is not None and self.page is None:
            self.pages.append(Page.UNSEEN)
        self.scroll = 0
        self.changed()

    def toggle_help(self) -> None:
        if self.page is Page.HELP:
            self.pages.remove(Page.HELP)
        else:
            self.pages.append(Page.HELP)
        self.scroll = 0
        self.changed()

    def open_dialog(self, dialog: Dialog) -> None:
        if self.over is None or dialog is Dialog.QUIT:
            self.dialog = dialog
            self.dialog_cursor = 1  # "No" first: a stray Enter does no harm
        self.changed()

    def click_hand(self, index: int) -> Action | None:
        """A click on a hand card: select it; a second click on it plays it."""
        if self.page is not None or self.dialog is not None or self.choosing is not None:
            return None
        if index == self.cursor and self.decision is Decision.PLAY:
            return self.enter()
        self.cursor = index
        self.changed()
        return None

    def click_target(self, index: int) -> Action | None:
        if self.decision in (Decision.TARGET, Decision.TAKE) and self.page is None:
            self.target_cursor = index
            return self.enter()
        return None

    def click_option(self, index: int) -> Action | None:
        if self.page is None:
            if self.dialog is not None:
                self.dialog_cursor = index
                return self.enter()
            if self.decision in (Decision.KOIKOI, Decision.SWAP):
                self.dialog_cursor = index
                return self.enter()
        return None

    def show_hint(self, view: PlayerView, action: Action, text: str) -> None:
        """A hint for ``view`` (if it is still the position on show): select what it
        plays and say why on the prompt line."""
        if self.view is not view or self.decision is None:
            return
        if action.card is not None and self.decision is Decision.PLAY:
            hand = self.hand
            if action.card in hand:
                self.cursor = hand.index(action.card)
        elif self.decision is Decision.TAKE and action.card in self.targets():
            self.target_cursor = self.targets().index(action.card)
        elif self.decision in (Decision.KOIKOI, Decision.SWAP):
            label = {
                ActionKind.KOIKOI: "Koi-koi",
                ActionKind.STOP: "Stop",
                ActionKind.SWAP: "Swap",
                ActionKind.KEEP: "Keep",
            }.get(action.kind)
            if label in self.options():
                self.dialog_cursor = self.options().index(label)
        self.message = "Hint (medium): " + text
        self.changed()

    def action_failed(self, text: str) -> None:
        self.busy = False
        self.message = text
        self.changed()

    def set_rematch(self, text: str, *, possible: bool = True) -> None:
        """The end page's line about playing again (and whether ``r`` still can)."""
        self.rematch, self.rematch_possible = text, possible
        if not possible and "left" in text:  # "connected to Bob" is no longer true
            self.status, self.status_bad, self.status_news = "", False, False
        self.changed()

    def next_match(self, number: int) -> None:
        """A rematch on the same connection was agreed: clear the finished match
        (its record is kept; the log stays) and wait for the new deal."""
        self.view = None
        self.over = None
        self.pages = []
        self.summaries = []
        self.round_reasons = {}
        self.dialog = None
        self.scroll = self.cursor = self.target_cursor = self.dialog_cursor = 0
        self.choosing = None
        self.busy = False
        self.message = ""
        self.opp_last, self.opp_moves = (), ()
        self._piles = [0, 0]
        self._hand_yaku = []
        self._calls = (0, 0)
        self.rematch, self.rematch_possible = "", False
        self._log("class:log.status", f"match {number}: a new deal on the same connection")
        self.changed()

    def link_closed(self) -> None:
        if self.over is None:
            self.closed = True
            self.status = "The connection closed before the match ended."
            self.status_bad = True
            self._log("class:log.status", self.status)
        self.changed()
