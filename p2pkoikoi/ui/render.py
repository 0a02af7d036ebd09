"""Rendering: :class:`~p2pkoikoi.ui.state.TableState` in, prompt_toolkit formatted text out.

Every function here is pure: it reads the state (and the clock value it is
given) and returns ``StyleAndTextTuples``.  Clickable pieces get a mouse
handler from the optional ``click`` factory, which the application passes
in; tests call these functions without one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType

from p2pkoikoi.engine import Card, CardSet, Kind, Phase, PlayerView, RuleSet
from p2pkoikoi.engine.rules import Scoring
from p2pkoikoi.engine.yaku import ScoreBreakdown, YakuScore, score
from p2pkoikoi.ui.progress import near_yaku
from p2pkoikoi.ui.reference import deal_text, help_lines, rules_lines, yaku_lines
from p2pkoikoi.ui.state import Decision, Dialog, Page, RoundSummary, RulesOffer, TableState
from p2pkoikoi.ui.tiles import (
    GROUPS,
    by_kind,
    by_month,
    card_label,
    short_text,
    tile_style,
    tile_text,
)

MouseHandler = Callable[[MouseEvent], object]
#: ``click(area, index)`` -> a mouse handler; areas: "hand", "target", "option", "offer"
Clicker = Callable[[str, int], MouseHandler] | None

_REASONS = {
    "stop": "stopped",
    "no_call": "made a yaku when no koi-koi call was possible",
    "next_yaku": "made a yaku after a koi-koi",
    "hand_yaku": "was dealt a hand yaku",
    "both_hand_yaku": "both were dealt hand yaku",
    "drawn": "the hands ran out",
    "oya_ken": "the hands ran out; the dealer's right (oya-ken)",
    "resign": "a player resigned",
    "rounds": "all rounds played",
    "knockout": "a pool ran dry",
}


def _frag(
    style: str, text: str, click: Clicker, area: str, index: int
) -> tuple[str, str] | tuple[str, str, MouseHandler]:
    if click is None:
        return (style, text)
    return (style, text, click(area, index))


def mouse_up(fn: Callable[[], object]) -> MouseHandler:
    """A mouse handler that runs ``fn`` on a click (button release)."""

    def handler(event: MouseEvent) -> object:
        if event.event_type == MouseEventType.MOUSE_UP:
            fn()
            return None
        return NotImplemented

    return handler


def _indent(text: str, line: StyleAndTextTuples) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("", text)]
    out.extend(line)
    return out


def _lines(lines: list[StyleAndTextTuples]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for i, line in enumerate(lines):
        if i:
            out.append(("", "\n"))
        out.extend(line)
    return out


def join_lines(lines: list[StyleAndTextTuples]) -> StyleAndTextTuples:
    """Lines of formatted text as one, with newlines between them."""
    return _lines(lines)


def koi_factor(rules: RuleSet, calls_winner: int, calls_loser: int) -> int:
    """The product of the koi-koi multipliers for a winner with these calls."""
    f = 1
    for m in score((), rules, calls_winner, calls_loser).multipliers:
        f *= m.factor
    return f


def _score_word(rules: RuleSet) -> str:
    return "Pool" if rules.scoring is Scoring.POOL else "Score"


# ---------------------------------------------------------------------- captured piles
def pile_lines(st: TableState, pile: CardSet, full: bool = False) -> list[StyleAndTextTuples]:
    """A captured pile grouped by kind.

    Compact (the table): two lines, brights and animals, then ribbons and the
    number of chaff.  ``full`` (the round-end page): one line per kind, whole tiles.
    """
    groups = by_kind(pile)

    def group(kind: Kind, title: str) -> StyleAndTextTuples:
        cards = groups[kind]
        if full:
            out: StyleAndTextTuples = [("class:label", f"{title:<8}")]
            if not cards:
                out.append(("class:dim", "-"))
            for c in cards:
                out.append((tile_style(c), tile_text(c, st.ascii)))
                out.append(("", " "))
            return out
        out = [("class:label", f"{title[:3]} ")]
        if kind is Kind.CHAFF:
            out.append(("class:label", f"{len(cards):>2}"))
            return out
        if not cards:
            out.append(("class:dim", " -"))
        for c in cards:
            out.append((tile_style(c), short_text(c, st.ascii)))
            out.append(("", " "))
        return out

    if full:
        return [group(*g) for g in GROUPS]
    first = group(*GROUPS[0]) + [("", "  ")] + group(*GROUPS[1])
    second = group(*GROUPS[2]) + [("", "  ")] + group(*GROUPS[3])
    return [first, second]


def possessive(st: TableState, seat: int) -> str:
    name = st.name(seat)
    return "Your" if name == "You" else f"{name}'s"


# ---------------------------------------------------------------------- the table
def opponent_fragments(st: TableState, full: bool = False) -> StyleAndTextTuples:
    """The other player: hand size, last play and draw, captures (``full``: whole tiles,
    a line per kind, for a tall terminal)."""
    v = st.view
    if v is None:
        return []
    them = 1 - st.seat
    head: StyleAndTextTuples = [("class:name", f" {st.them}")]
    head.append(("", f"  hand {v.opponent_hand_size}"))
    if st.opp_moves:
        head.append(("class:dim", "  last:"))
        for verb, card, captured in st.opp_moves:
            head.append(("class:opp.last", f"  {'play' if verb == 'played' else 'draw'} "))
            head.append((tile_style(card), tile_text(card, st.ascii).strip()))
            if captured:
                head.append(("class:opp.last", ">" if st.ascii else "→"))
                for c in captured:
                    head.append((tile_style(c), tile_text(c, st.ascii).strip()))
    piles = pile_lines(st, v.piles[them], full)
    return _lines([head, *[_indent(" ", line) for line in piles]])


def field_fragments(st: TableState, click: Clicker = None, width: int = 57) -> StyleAndTextTuples:
    v = st.view
    if v is None:
        return []
    hl = st.highlighted()
    offered = st.targets()
    current = offered[st.target_cursor % len(offered)] if offered else None
    head: StyleAndTextTuples = [
        ("class:rule", "─" if not st.ascii else "-"),
        ("class:label", " Field "),
    ]
    shown = len(v.field) - (1 if v.drawn is not None else 0)
    head.append(("class:dim", f"({shown} cards, stock {v.stock_size})"))
    if v.drawn is not None:
        head.append(("", "  drawn: "))
        head.append((tile_style(v.drawn, "class:drawn"), tile_text(v.drawn, st.ascii)))
    rows: list[StyleAndTextTuples] = []
    row: StyleAndTextTuples = [("", " ")]
    used = 1
    # while a drawn card waits to take one of two, it is shown once, after "drawn:"
    on_field = CardSet(v.field.mask & ~v.drawn.bit) if v.drawn is not None else v.field
    for group in by_month(on_field):
        need = len(group) * 7 + 2 + 2 * sum(1 for c in group if c in offered)
        if used + need > width + 1 and used > 1:
            rows.append(row)
            row, used = [("", " ")], 1
        for c in group:
            extra = ""
            if c is current:
                extra = "class:target.current"
            elif c in hl:
                extra = "class:target"
            text = tile_text(c, st.ascii)
            if c in offered:  # "1:12Pau★ 2:12Pau·": the number before its card, apart
                n = offered.index(c)
                row.append(_frag("class:selected.mark", f"{n + 1}:", click, "target", n))
                row.append(_frag(tile_style(c, extra), text.strip(), click, "target", n))
                row.append(("", " "))
            else:
                row.append((tile_style(c, extra), text))
                row.append(("", " "))
        row.append(("", "  "))
        used += need
    rows.append(row)
    return _lines([head, *rows])


def mine_fragments(st: TableState, full: bool = False) -> StyleAndTextTuples:
    v = st.view
    if v is None:
        return []
    head: StyleAndTextTuples = [
        ("class:rule", "─" if not st.ascii else "-"),
        ("class:label", " Your captures"),
    ]
    if v.dealer == st.seat:
        head.append(("class:dealer", " (you deal)"))
    piles = pile_lines(st, v.piles[st.seat], full)
    return _lines([head, *[_indent(" ", line) for line in piles]])


def hand_fragments(st: TableState, click: Clicker = None) -> StyleAndTextTuples:
    v = st.view
    if v is None:
        return []
    hand = st.hand
    title: StyleAndTextTuples = [
        ("class:rule", "─" if not st.ascii else "-"),
        ("class:label", " Your hand"),
    ]
    if v.phase is Phase.HAND_SWAP and v.to_act == st.seat:
        title.append(("class:dim", " (face down: swap or keep before looking)"))
    elif not hand:
        title.append(("class:dim", " (empty)"))
    numbers: StyleAndTextTuples = [("", " ")]
    tiles: StyleAndTextTuples = [("", " ")]
    selecting = st.decision in (Decision.PLAY, Decision.TARGET, None) and st.page is None
    for i, c in enumerate(hand):
        sel = selecting and i == st.cursor
        if st.choosing is not None:
            sel = c is st.choosing
        label = f"[{i + 1}]" if sel else f" {i + 1} "
        numbers.append(
            _frag("class:selected.mark" if sel else "class:label", f"{label:^6} ", click, "hand", i)
        )
        tiles.append(
            _frag(
                tile_style(c, "class:selected" if sel else ""),
                tile_text(c, st.ascii),
                click,
                "hand",
                i,
            )
        )
        tiles.append(("", " "))
    if not hand and v.hand_size:
        tiles.append(("class:dim", " ".join(["[????]"] * min(v.hand_size, 8))))
    sel_card = st.selected
    info: StyleAndTextTuples = []
    if sel_card is not None and st.page is None:
        grab = [c for c in v.field if c.month == sel_card.month]
        info.append(("class:dim", " " + st.p(card_label(sel_card))))
        if grab:
            info.append(("class:dim", st.p(" → takes ") + takes_text(grab)))
        else:
            info.append(("class:dim", st.p(" → stays on the field")))
    return _lines([title, numbers, tiles, info])


def short_name(name: str, n: int) -> str:
    """``name`` in ``n`` cells for the side panel, keeping a fingerprint tag ``(ab12)``
    whole: it is what tells two players of one name apart."""
    if len(name) <= n:
        return name
    tag = name[name.rfind(" (") :] if name.endswith(")") and " (" in name else ""
    if tag and len(tag) < n - 1:
        return name[: n - len(tag) - 1] + "~" + tag
    return name[: n - 1] + "~"


def takes_text(grab: list[Card]) -> str:
    """What a card matching ``grab`` captures: one card, one of two, or all three."""
    names = [c.english for c in grab]
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        if names[0] == names[1]:
            return f"one {names[0]} (of the two on the field)"
        return f"{names[0]} or {names[1]} (you choose one)"
    return ", ".join(names[:-1]) + f" and {names[-1]} (all three)"


def side_fragments(st: TableState) -> StyleAndTextTuples:
    v = st.view
    rule = "-" if st.ascii else "─"
    if v is None:
        return [("class:dim", " waiting...")]
    r = v.rules
    me, them = st.seat, 1 - st.seat
    lines: list[StyleAndTextTuples] = [
        [("class:heading", f" Round {v.round} of {r.rounds}")],
        [("", f" Dealer: {short_name(st.name(v.dealer), 13)}")],
        [("class:label", f" {rule * 2} {_score_word(r)} {rule * 8}")],
    ]
    for seat in (me, them):
        lines.append([("", f" {short_name(st.name(seat), 12):<12}{v.scores[seat]:>6}")])
    lines.append([("class:label", f" {rule * 2} Koi-koi {rule * 8}")])
    lines.append([("", f" calls {v.calls[me]} : {v.calls[them]}")])
    lines.append(
        [
            (
                "",
                f" mult. you x{koi_factor(r, v.calls[me], v.calls[them])}, them x{koi_factor(r, v.calls[them], v.calls[me])}",
            )
        ]
    )
    for seat, title in ((me, "You"), (them, short_name(st.name(them), 15))):
        lines.append([("class:label", f" {rule * 2} {title} {rule * max(2, 16 - len(title))}")])
        made = v.yaku(seat)
        for y in made:
            lines.append([("class:yaku", st.p(f" {y.romaji[:15]:<15}{y.points:>3}"))])
        if made:
            worth = score(made, r, v.calls[seat], v.calls[1 - seat]).score
            if v.calls[seat] == 0 or (seat == me and st.decision is Decision.KOIKOI):
                lines.append([("class:dim", f" stop now: {worth}")])
            else:  # after a call the round goes on until a new yaku (or a raise)
                lines.append([("class:dim", f" called; worth {worth}")])
        near = near_yaku(v.piles[seat], v.piles[1 - seat], r, made, limit=3 if seat == me else 2)
        for p in near:
            lines.append([("class:near", st.p(f" {p.romaji[:14]:<14}{p.have}/{p.need}"))])
        if not made and not near:
            lines.append([("class:dim", " no yaku yet")])
    return _lines(lines)


def log_fragments(st: TableState, height: int = 5, width: int = 1000) -> StyleAndTextTuples:
    return _lines(log_lines(st, width, height))


def log_lines(st: TableState, width: int, height: int) -> list[StyleAndTextTuples]:
    """The event log (chat included) folded to ``width``: the ``height`` rows that end
    ``st.log_scroll`` rows above the newest, with a note of what is hidden below."""
    if height <= 0:
        return []
    rows: list[StyleAndTextTuples] = []
    for style, text in st.log:
        rows.extend(wrap_line([(style or "class:log", " " + text)], width, hang=2))
    back = max(0, min(st.log_scroll, len(rows) - height))
    if back == 0:
        return rows[-height:]
    end = len(rows) - back
    shown = rows[max(0, end - height + 1) : end]
    more = st.p(f" ↓ {back} newer line{'s' if back != 1 else ''}: PgDn")
    return [*shown, [("class:status", more)]]


def fold(fragments: StyleAndTextTuples, width: int) -> list[StyleAndTextTuples]:
    """Formatted text of several lines, each folded to ``width`` (never cut)."""
    from prompt_toolkit.formatted_text.utils import split_lines

    out: list[StyleAndTextTuples] = []
    for line in split_lines(fragments):
        out.extend(wrap_line(line, width) if line else [line])
    return out


def prompt_fragments(st: TableState, now: float = 0.0, click: Clicker = None) -> StyleAndTextTuples:
    """One line: what the table waits for, or the latest message."""
    v = st.view
    if st.closed:
        return [
            (
                "class:status.bad",
                " " + st.p("Connection closed - the match cannot go on. Press q to leave."),
            )
        ]
    if st.offer is not None and st.page is Page.WAITING:
        return offer_buttons(st, click)
    if v is None:
        return [] if st.page is Page.WAITING else [("class:dim", " Starting...")]
    if st.page is not None:
        return []
    if st.over is not None:
        return [("class:prompt", " The match is over. Press q to leave.")]
    if st.message:
        return [("class:message", " " + st.p(st.message))]
    if st.busy:
        return [("class:dim", " Sending...")]
    line = _decision_prompt(st, v)
    if line and st.turn_deadline is not None and now:
        left = max(0, math.ceil(st.turn_deadline - now))
        line.append(("class:message" if left <= 10 else "class:dim", f"  {clock_text(left)} left"))
    if line or v.to_act is None or v.to_act == st.seat:
        return line
    secs = max(0, int(now - st.wait_since)) if now else 0
    dots = "." * (1 + secs % 3)
    return [
        (
            "class:dim",
            f" Waiting for {st.them}{dots:<3} {secs}s" if secs else f" Waiting for {st.them}...",
        )
    ]


def clock_text(seconds: int) -> str:
    """``0:42``: minutes and seconds of a countdown."""
    return f"{seconds // 60}:{seconds % 60:02d}"


def _decision_prompt(st: TableState, v: PlayerView) -> StyleAndTextTuples:
    """The line asking for your decision ([] when there is none)."""
    d = st.decision
    if d is Decision.PLAY:
        n = len(st.hand)
        keys = "1" if n == 1 else f"1-{n}"
        return [
            ("class:prompt", st.p(f" Your turn: choose a card (←→ or {keys}) and press Enter."))
        ]
    if d is Decision.TARGET:
        c = st.choosing
        name = c.english if c else "card"
        return [
            (
                "class:prompt",
                st.p(f" Two cards match {name}: choose one (←→ 1-2), Enter; Esc to go back."),
            )
        ]
    if d is Decision.TAKE:
        drawn = v.drawn.english if v.drawn else "drawn card"
        return [
            ("class:prompt", st.p(f" You drew {drawn}: choose the card it takes (←→ 1-2), Enter."))
        ]
    if d is Decision.KOIKOI:
        return [("class:prompt", " You made a yaku: koi-koi or stop?")]
    if d is Decision.SWAP:
        return [("class:prompt", " Before looking: swap hands with the dealer, or keep?")]
    return []


def status_fragments(st: TableState) -> StyleAndTextTuples:
    if not st.status:
        return []
    return [("class:status.bad" if st.status_bad else "class:status", " " + st.p(st.status))]


def footer_fragments(st: TableState) -> StyleAndTextTuples:
    if st.page is Page.HELP:
        text = " ↑↓ PgUp PgDn: scroll   Enter/Esc/?: back to the table"
    elif st.page is Page.ROUND:
        text = " Enter: continue   ↑↓: scroll   ?: rules"
    elif st.page is Page.OVER:
        again = "r: play again   " if st.rematch_possible else ""
        text = f" {again}q or Enter: leave   ↑↓: scroll"
    elif st.page is Page.UNSEEN:
        text = " u/Enter/Esc: back to the table"
    elif st.page is Page.WAITING and st.offer is not None:
        text = " a/Enter: accept   d/Esc: decline   ←→: choose   ↑↓ PgUp PgDn: scroll"
    elif st.page is Page.WAITING:
        text = " q: cancel"
    elif st.practice:
        text = " ?: rules  u: unseen  h: hint  z: undo  PgUp/PgDn: log  r: resign  q: leave"
    else:
        text = " ?: yaku & rules  u: unseen  c: chat  PgUp/PgDn: log  r: resign  q: leave"
    return [("class:footer", st.p(text))]


# ---------------------------------------------------------------------- dialogs
#: the letter keys that answer a dialog at once, shown on its buttons
_BUTTON_KEYS = {"Koi-koi": "k", "Stop": "s", "Yes, resign": "y", "Yes, leave": "y", "No": "n"}


def _buttons(st: TableState, labels: list[str], click: Clicker) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("", " ")]
    for i, label in enumerate(labels):
        style = "class:button.focused" if i == st.dialog_cursor % len(labels) else "class:button"
        key = _BUTTON_KEYS.get(label, str(i + 1))
        out.append(_frag(style, f"[ {key} {label} ]", click, "option", i))
        out.append(("", "  "))
    return out


def koikoi_lines(st: TableState) -> list[StyleAndTextTuples]:
    """The koi-koi dialog: the yaku, what stopping is worth, what calling adds."""
    v = st.view
    if v is None:
        return []
    r = v.rules
    me, them = st.seat, 1 - st.seat
    made: tuple[YakuScore, ...] = v.yaku(me)
    now = score(made, r, v.calls[me], v.calls[them])
    lines: list[StyleAndTextTuples] = [[("class:heading", " You made a yaku!")]]
    for y in made:
        lines.append([("class:yaku", st.p(f"   {y.romaji:<26}{y.points:>3}"))])
    lines.append(_breakdown_line(st, now, " Stop now: "))
    if r.scoring is Scoring.POOL and r.pool_payment_cap and now.score > v.scores[them]:
        lines.append([("class:dim", f"   (capped at {st.them}'s pool: {v.scores[them]})")])
    mine_now = koi_factor(r, v.calls[me], v.calls[them])
    mine_after = koi_factor(r, v.calls[me] + 1, v.calls[them])
    theirs_now = koi_factor(r, v.calls[them], v.calls[me])
    theirs_after = koi_factor(r, v.calls[them], v.calls[me] + 1)
    lines.append([("", " Koi-koi plays on for more yaku:")])
    if mine_after != mine_now:
        lines.append([("", f"   if you win later: x{mine_after} (now x{mine_now})")])
    if theirs_after != theirs_now:
        lines.append(
            [
                (
                    "class:warn",
                    f"   if {st.them} wins instead: x{theirs_after} for them (now x{theirs_now})",
                )
            ]
        )
    bonus_after = score(made, r, v.calls[me] + 1, v.calls[them]).bonus
    if bonus_after != now.bonus:
        lines.append(
            [("", f"   if you win later: +{bonus_after} for your calls (now +{now.bonus})")]
        )
    if mine_after == mine_now and theirs_after == theirs_now and bonus_after == now.bonus:
        lines.append([("class:dim", "   calling adds no multiplier under these rules")])
    lines.append(_buttons(st, st.options(), None))
    return lines


def _breakdown_line(st: TableState, b: ScoreBreakdown, prefix: str) -> StyleAndTextTuples:
    parts = [f"{b.base}"] + ([f"+{b.bonus}"] if b.bonus else [])
    for m in b.multipliers:
        parts.append(f"x{m.factor}")
    calc = " ".join(parts)
    shown = b.multipliers or b.bonus
    return [("class:score", st.p(f"{prefix}{b.score} points" + (f" ({calc})" if shown else "")))]


def dialog_fragments(st: TableState, click: Clicker = None) -> StyleAndTextTuples:
    """The dialog over the table, if any (koi-koi, hand swap, resign, quit); on a
    page only the question before leaving (``q`` asks there too)."""
    if st.page is not None and (st.dialog is not Dialog.QUIT or st.page is Page.HELP):
        return []
    if st.dialog is Dialog.RESIGN:
        lines: list[StyleAndTextTuples] = [
            [("class:heading", " Resign the match?")],
            [("", f" {st.them} wins the match at once.")],
            _buttons(st, ["Yes, resign", "No"], click),
        ]
        return _lines(lines)
    if st.dialog is Dialog.QUIT:
        if st.over is not None or st.closed:
            text = " Leave the table?"
        elif st.resumable:
            text = " Leave now? The match is kept: practice --resume plays on."
        else:
            text = " Leave now? That resigns the match."
        return _lines([[("class:heading", text)], _buttons(st, ["Yes, leave", "No"], click)])
    d = st.decision
    if d is Decision.KOIKOI:
        lines = koikoi_lines(st)
        lines[-1] = _buttons(st, st.options(), click)
        return _lines(lines)
    if d is Decision.SWAP:
        return _lines(
            [
                [("class:heading", " Hand swap")],
                [
                    (
                        "",
                        f" You may swap your unseen hand with {st.name(st.view.dealer if st.view else 0)}'s.",
                    )
                ],
                _buttons(st, st.options(), click),
            ]
        )
    return []


# ---------------------------------------------------------------------- pages
def _reason(summary: RoundSummary, st: TableState) -> str:
    reason = st.round_reasons.get(summary.round, summary.reason)
    return _REASONS.get(reason, reason.replace("_", " "))


def round_how(st: TableState, round_no: int, winner: int | None, reason: str) -> str:
    """How a round ended, saying who did what: "You stopped", "Computer: made a
    yaku when no koi-koi call was possible", "no winner: the hands ran out"."""
    reason = st.round_reasons.get(round_no, reason)
    text = _REASONS.get(reason, reason.replace("_", " "))
    if winner is None:
        return f"no winner: {text}"
    if reason == "stop":
        return f"{st.name(winner)} stopped"
    return f"{st.name(winner)}: {text}"


def round_lines(st: TableState, s: RoundSummary) -> list[StyleAndTextTuples]:
    r = st.rules
    lines: list[StyleAndTextTuples] = []
    if s.winner is None:
        head = f"Round {s.round} of {s.rounds}: no winner ({_reason(s, st)})."
    else:
        head = f"Round {s.round} of {s.rounds}: {st.name(s.winner)} won {s.gained[s.winner]} points ({_reason(s, st)})."
    lines.append([("class:heading", " " + head)])
    for hy in s.hand_yaku:
        cards = " ".join(tile_text(c, st.ascii).strip() for c in hy.hand)
        lines.append(
            [
                (
                    "",
                    st.p(
                        f" {st.does(hy.seat, 'was')} dealt {hy.yaku.romaji} ({hy.yaku.points}): {cards}"
                    ),
                )
            ]
        )
    b = s.breakdown
    if b is not None and s.winner is not None:
        lines.append([("class:label", f" {possessive(st, s.winner)} yaku:")])
        for y in b.yaku:
            lines.append([("class:yaku", st.p(f"   {y.romaji:<26}{y.name:<28}{y.points:>3}"))])
        lines.append([("", f"   {'base':<54}{b.base:>3}")])
        if b.bonus:
            lines.append([("", f"   {'your own koi-koi calls':<54}+{b.bonus}")])
        for m in b.multipliers:
            lines.append([("", st.p(f"   {m.reason:<54}x{m.factor}"))])
        lines.append([("class:score", f"   {'score':<54}{b.score:>3}")])
        if b.score != s.gained[s.winner]:
            lines.append([("class:dim", f"   (paid {s.gained[s.winner]}: capped by the pool)")])
    calls = f"koi-koi calls: {st.me} {s.calls[st.seat]}, {st.them} {s.calls[1 - st.seat]}"
    lines.append([("class:dim", " " + calls)])
    word = "Pools" if r.scoring is Scoring.POOL else "Totals"
    lines.append(
        [
            (
                "class:score",
                f" {word} now: {st.me} {s.scores[st.seat]}, {st.them} {s.scores[1 - st.seat]}",
            )
        ]
    )
    for seat in (1 - st.seat, st.seat):
        if not s.piles[0] and not s.piles[1]:
            break  # a round ended by a dealt hand: nothing was captured
        lines.append(
            [("class:label", f" {possessive(st, seat)} captures ({len(s.piles[seat])} cards):")]
        )
        lines.extend([_indent("   ", line) for line in pile_lines(st, s.piles[seat], full=True)])
    more = len(st.summaries) - 1
    lines.append(
        [
            (
                "class:prompt",
                " Press Enter to continue" + (f" ({more} more round)" if more > 0 else "") + ".",
            )
        ]
    )
    return lines


def over_lines(st: TableState) -> list[StyleAndTextTuples]:
    upd = st.over
    v = st.view
    if upd is None or v is None:
        return []
    r = v.rules
    me, them = st.seat, 1 - st.seat
    if v.winner is None:
        head = "The match is over: a draw."
    elif v.winner == me:
        head = (
            f"The match is over: {st.me} won!" if st.me != "You" else "The match is over: you won!"
        )
    else:
        head = f"The match is over: {st.them} won."
    reason = upd.text or ""
    lines: list[StyleAndTextTuples] = [
        [("class:heading", " " + head + (f" ({_REASONS.get(reason, reason)})" if reason else ""))]
    ]
    dash = "-" if st.ascii else "—"
    # columns as wide as the names: a cut name could be either player's
    col = max(12, len(st.me) + 2, len(st.them) + 2)
    dw = max(9, len(st.me) + 1, len(st.them) + 1)
    lines.append(
        [
            (
                "class:label",
                f" {'Round':<7}{st.me:>{col}}{st.them:>{col}}   {'dealer':<{dw}} how it ended",
            )
        ]
    )
    tot = [0, 0]
    for res in v.results:
        cells = []
        for seat in (me, them):
            g = res.gained[seat]
            tot[seat] += g
            cells.append(f"{g if g else dash:>{col}}")
        how = round_how(st, res.round, res.winner, res.reason)
        dealer = st.name(res.dealer)
        lines.append([("", st.p(f" {res.round:<7}{cells[0]}{cells[1]}   {dealer:<{dw}} {how}"))])
    lines.append([("class:score", f" {'Total':<7}{tot[me]:>{col}}{tot[them]:>{col}}")])
    if r.scoring is Scoring.POOL:
        lines.append(
            [
                (
                    "class:score",
                    f" Pools: {st.me} {v.scores[me]}, {st.them} {v.scores[them]} (each began with {r.pool_stake})",
                )
            ]
        )
    if upd.record:
        lines.append([("", f" Record: {upd.record}")])
        lines.append([("", " Verify it with (printed again when you leave):")])
        lines.append([("", f"   p2pkoikoi verify {upd.record}")])
    else:
        lines.append([("class:dim", " No record is kept for this match.")])
    if upd.final_hash:
        lines.append([("class:dim", f" Final state hash: {upd.final_hash[:32]}...")])
    if st.rematch:
        lines.append([("class:prompt", " " + st.rematch)])
    elif st.rematch_possible:
        lines.append([("class:prompt", " Press r to play again (same opponent, a new deal).")])
    lines.append([("class:prompt", " Press q or Enter to leave.")])
    return lines


_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_SPINNER_ASCII = "|/-\\"


def waiting_indicator(st: TableState, now: float) -> str:
    """``"⠹ 0:12"``: a turning mark and the time waited, or "" when not timed."""
    if st.waiting_since is None or now <= 0:
        return ""
    secs = max(0, int(now - st.waiting_since))
    marks = _SPINNER_ASCII if st.ascii else _SPINNER
    return f"{marks[secs % len(marks)]} {secs // 60}:{secs % 60:02d}"


def spaced_invite(invite: str) -> str:
    """The invite for reading aloud (see :func:`p2pkoikoi.session.codes.invite.spaced_invite`)."""
    from p2pkoikoi.session.codes.invite import spaced_invite as spaced

    return spaced(invite)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split():
        if line and len(indent) + len(line) + 1 + len(word) > width:
            out.append(indent + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(indent + line)
    return out


def _shown(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).replace("_", " ")


def offer_lines(st: TableState, offer: RulesOffer) -> list[StyleAndTextTuples]:
    """The joiner's rules screen: who invites, their identity, the rules and what differs."""
    from p2pkoikoi.engine import InputError
    from p2pkoikoi.engine.presets import describe_setting

    lines: list[StyleAndTextTuples] = [
        [
            (
                "class:heading",
                st.p(
                    f" {offer.peer_name} wants to join your match: play with this new key?"
                    if offer.joining
                    else f" {offer.peer_name} invites you to a match"
                ),
            )
        ],
        [("class:label", " Identity: "), ("class:name", offer.fingerprint)],
    ]
    if offer.own_fingerprint:
        lines.append([("class:label", " Yours:    "), ("class:dim", offer.own_fingerprint)])
    if offer.warning:
        for text in _wrap("Warning: " + offer.warning, 78, " "):
            lines.append([("class:status.bad", st.p(text))])
    elif offer.seen_before is True:
        lines.append([("class:dim", " Known: the same identity as in your earlier matches.")])
    elif offer.seen_before is False:
        lines.append([("class:dim", " New to you: this identity is remembered if you play.")])
    lines.append([])
    n = len(offer.diffs)
    where = f"the {offer.preset} preset" if offer.named else f"closest to the {offer.preset} preset"
    if n == 0:
        head = f" Rules: exactly the {offer.preset} preset."
    else:
        head = f" Rules: {where}, {n} setting{'s' if n != 1 else ''} differ{'' if n != 1 else 's'}:"
    limit = offer.turn_limit
    clock = f"{limit // 60} min" if limit and limit % 60 == 0 else f"{limit} s"
    lines.append(  # before the rules' head: the differences follow it directly
        [
            ("class:label", st.p(" Time per decision: ")),
            ("class:name", st.p(clock if limit else "no limit")),
            ("class:dim", st.p("  (running out forfeits the match)" if limit else "")),
        ]
    )
    lines.append(
        [
            ("class:label", st.p(" Deal: ")),
            ("class:name", st.p(deal_text(offer.rules))),
        ]
    )
    lines.append([("class:heading", st.p(head))])
    for setting, mine, theirs in offer.diffs:
        lines.append(
            [
                ("class:offer.diff", st.p(f"  * {setting.replace('_', ' ')}: {_shown(mine)}")),
                ("class:dim", st.p(f"   ({offer.preset}: {_shown(theirs)})")),
            ]
        )
        try:
            about = describe_setting(setting)
        except InputError:  # an undocumented setting still gets its line
            about = ""
        if about:
            lines.append([("class:note", st.p(f"      {about}"))])
    lines.append([])
    lines.append([("class:dim", st.p(" The full rules (↑↓ PgUp PgDn to scroll):"))])
    for style, text in (*yaku_lines(offer.rules, st.ascii), *rules_lines(offer.rules, st.ascii)):
        lines.append([(style, " " + text)])
    lines.append([("class:heading", " Every setting")])
    differ = {k for k, _, _ in offer.diffs}
    for key, value in offer.rules.to_dict().items():
        mark = "*" if key in differ else " "
        style = "class:offer.diff" if key in differ else ""
        lines.append([(style, st.p(f"  {mark} {key.replace('_', ' '):<30} {_shown(value)}"))])
    return lines


def offer_buttons(st: TableState, click: Clicker = None) -> StyleAndTextTuples:
    """Accept and Decline, for the prompt line under the rules screen."""
    out: StyleAndTextTuples = [("class:prompt", " Play by these rules? ")]
    for i, label in enumerate(("a Accept", "d Decline")):
        style = "class:button.focused" if i == st.offer_cursor else "class:button"
        out.append(_frag(style, f"[ {label} ]", click, "offer", i))
        out.append(("", "  "))
    return out


def waiting_lines(st: TableState, now: float = 0.0) -> list[StyleAndTextTuples]:
    if st.offer is not None:
        return offer_lines(st, st.offer)
    title: StyleAndTextTuples = [("class:heading", " " + st.p(st.waiting_title))]
    indicator = waiting_indicator(st, now)
    if indicator:
        title.append(("class:status", "   " + indicator))
    lines: list[StyleAndTextTuples] = [title, []]
    if st.status:  # under the title: at the foot of a long page it would be out of view
        lines.extend([status_fragments(st), []])
    lines.extend([[("", " " + line)] for line in st.waiting_lines])
    return lines


def page_lines(st: TableState, now: float = 0.0) -> list[StyleAndTextTuples]:
    page = st.page
    if page is Page.HELP:
        return [[(s, " " + t)] if t else [] for s, t in help_lines(st.rules, st.ascii)]
    if page is Page.ROUND and st.summaries:
        return round_lines(st, st.summaries[0])
    if page is Page.OVER:
        return over_lines(st)
    if page is Page.WAITING:
        return waiting_lines(st, now)
    if page is Page.UNSEEN:
        return unseen_lines(st)
    return []


def page_fragments(
    st: TableState, height: int = 1000, now: float = 0.0, width: int = 1000
) -> StyleAndTextTuples:
    """The page on top, folded to ``width`` and scrolled by ``st.scroll`` (clamped so
    the last line stays in view)."""
    lines = wrapped_page_lines(st, now, width)
    top = max(0, min(st.scroll, len(lines) - height))
    return _lines(lines[top : top + height])


# ---------------------------------------------------------------------- wrapping
def _text_of(line: StyleAndTextTuples) -> str:
    return "".join(frag[1] for frag in line)


def _is_command(line: StyleAndTextTuples) -> bool:
    """A shell command to copy (``p2pkoikoi join ...``, ``p2pkoikoi verify PATH``)."""
    return _text_of(line).lstrip().startswith("p2pkoikoi ")


def wrap_line(line: StyleAndTextTuples, width: int, hang: int = 0) -> list[StyleAndTextTuples]:
    """``line`` folded to ``width`` cells: never cut.

    Breaks after a space when there is one, else inside a word (an invite or a
    path can be longer than a narrow terminal).  Continuation lines keep the
    line's indent (and ``hang`` cells more).  A shell command ends each folded line with `` \\``, so the
    lines pasted into a shell are still one command (backslash-newline joins
    them, and ``join`` accepts an invite in several pieces).
    """
    from prompt_toolkit.utils import get_cwidth

    cells: list[tuple[Any, str]] = [(frag, ch) for frag in line for ch in frag[1]]
    widths = [get_cwidth(ch) for _, ch in cells]
    if sum(widths) <= width or width < 12:
        return [line]
    text = "".join(ch for _, ch in cells)
    command = _is_command(line)
    tail = " \\" if command else ""
    indent = min(len(text) - len(text.lstrip(" ")) + (2 if command else 0) + hang, width // 3)
    out: list[StyleAndTextTuples] = []
    start, n = 0, len(cells)
    glued = False  # the last row broke inside a word of a command: no indent, no space
    while start < n:
        prefix = indent if out and not glued else 0
        if sum(widths[start:]) <= width - prefix:
            end = n
        else:
            room, used, end = width - prefix - len(tail), 0, start
            while end < n and used + widths[end] <= room:
                used += widths[end]
                end += 1
            space = text.rfind(" ", start, end)
            if space > start and space - start >= room // 3:
                end = space + 1
            elif not command and "://" in text[start:end]:
                # a web address longer than the row: break after a "/" (a path's step)
                slash = text.rfind("/", start, end - 1)
                if slash - start >= room // 3:
                    end = slash + 1
            end = max(end, start + 1)
        piece = cells[start:end]
        mid_word = end < n and cells[end - 1][1] != " " and cells[end][1] != " "
        if end < n:
            while piece and piece[-1][1] == " ":
                piece = piece[:-1]
        row: StyleAndTextTuples = [("", " " * prefix)] if prefix else []
        group: list[tuple[Any, str]] = []
        for cell in [*piece, (None, "")]:
            if group and cell[0] is not group[0][0]:
                frag = group[0][0]
                row.append((frag[0], "".join(ch for _, ch in group), *frag[2:]))
                group = []
            if cell[0] is not None:
                group.append(cell)
        if end < n and tail:
            # inside a word (a path), the backslash must touch it and the next row
            # start at the margin, or the shell would read two words
            row.append(("", "\\" if mid_word else tail))
        glued = bool(tail) and mid_word
        out.append(row)
        start = end
        while start < n and cells[start][1] == " " and not glued:
            start += 1
    return out


def wrapped_page_lines(
    st: TableState, now: float = 0.0, width: int = 1000
) -> list[StyleAndTextTuples]:
    """The page's lines folded to ``width`` (what scrolling counts)."""
    out: list[StyleAndTextTuples] = []
    for line in page_lines(st, now):
        out.extend(wrap_line(line, width) if line else [line])
    return out


# ---------------------------------------------------------------------- unseen cards
def unseen_lines(st: TableState) -> list[StyleAndTextTuples]:
    """Per month, the cards you have not seen yet: in the opponent's hand or the stock."""
    from p2pkoikoi.engine.cards import CARDS

    v = st.view
    if v is None:
        return []
    unseen = v.unseen
    lines: list[StyleAndTextTuples] = [
        [("class:heading", f" Cards you have not seen yet: {len(unseen)}")],
        [("class:dim", f" (in {st.them}'s hand or the stock; the rest are on the table)")],
        [],
    ]
    from p2pkoikoi.engine.cards import FLOWER3

    for month in range(1, 13):
        month_cards = [c for c in CARDS if c.month == month]
        hidden = [c for c in month_cards if c in unseen]
        row: StyleAndTextTuples = [("class:label", f" {month:>2} {FLOWER3[month]}  ")]
        if not hidden:
            row.append(("class:dim", "all seen"))
        for c in hidden:
            row.append((tile_style(c), tile_text(c, st.ascii)))
            row.append(("", " "))
        if hidden:
            row.append(("class:dim", f" {len(hidden)} of 4"))
        lines.append(row)
    lines.append([])
    lines.append([("class:prompt", " Press u, Enter or Esc to go back to the table.")])
    return lines
