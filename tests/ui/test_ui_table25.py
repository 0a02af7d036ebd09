"""Issue 25's table defects, on the pure state and renderer (the pty tests are in
tests/ui/test_terminal_table25.py)."""

from __future__ import annotations

import re

from test_ui_newcomer import find, text

from p2pkoikoi.engine import ActionKind, Phase, get_preset
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.ui import render as R
from p2pkoikoi.ui.state import Decision, TableState, table_names


def test_your_own_seat_is_you_and_an_equal_name_gets_a_fingerprint() -> None:
    assert table_names(0, ("root", "root"), "crts-mkt6-s4ty-tc74") == ("You", "root (crts)")
    assert table_names(1, ("root", "root"), "ab12-cd34") == ("root (ab12)", "You")
    assert table_names(1, ("Alice", "Bob"), "ab12-cd34") == ("Alice", "You")
    # a player who calls themselves "You" cannot pass for you either
    assert table_names(0, ("Bob", "you"), "ab12-cd34") == ("You", "you (ab12)")


def test_the_verb_agrees_with_you() -> None:
    st = TableState(seat=0, names=("You", "Computer"))
    assert st.does(0, "was") + " dealt" == "You were dealt"  # the round page's hand yaku
    assert st.does(1, "was") + " dealt" == "Computer was dealt"
    assert st.does(0, "holds") == "You hold"


def test_chat_lines_say_who_by_seat() -> None:
    st = TableState()
    st.attach(1, table_names(1, ("root", "root"), "ab12-cd34"), get_preset("online"))
    st, _ = find(lambda m, ev: True)
    st.attach(1, table_names(1, ("root", "root"), "ab12-cd34"), get_preset("online"))
    view = st.view
    assert view is not None
    st.apply_update(Update("chat", view, text="hello", sender="root", actor=1))
    st.apply_update(Update("chat", view, text="hi", sender="root", actor=0))
    assert st.log[-2][1] == "<You> hello"
    assert st.log[-1][1] == "<root (ab12)> hi"


def _choosing_between_two() -> TableState:
    def two(m, ev) -> bool:  # type: ignore[no-untyped-def]
        if m.to_act != 0 or m.phase is not Phase.PLAY:
            return False
        plays = [a for a in m.legal_actions() if a.kind is ActionKind.PLAY and a.target]
        return any(sum(1 for b in plays if b.card is a.card) == 2 for a in plays)

    st, m = find(two)
    card = next(
        a.card
        for a in m.legal_actions()
        if a.kind is ActionKind.PLAY
        and sum(1 for b in m.legal_actions() if b.card is a.card and b.target) == 2
    )
    st.cursor = st.hand.index(card)
    assert st.enter() is None and st.decision is Decision.TARGET
    return st


def test_the_choice_markers_stand_apart_from_the_tiles() -> None:
    st = _choosing_between_two()
    rows = text(R.field_fragments(st)).splitlines()[1:]
    shown = "\n".join(rows)
    assert "1:" in shown and "2:" in shown
    # every tile (month, flower, mark) is whole and set off by spaces or a "N:" marker
    for tile in re.findall(r"\S+", shown):
        assert re.fullmatch(r"([12]:)?\d{1,2}[A-Z][a-z]{2}\S", tile), (tile, shown)


def test_the_preview_says_one_card_when_one_of_two_is_taken() -> None:
    st = _choosing_between_two()
    st.choosing = None  # back to choosing the hand card: the preview line
    line = text(R.hand_fragments(st)).splitlines()[-1]
    assert "→ takes" in line
    taken = line.split("→ takes ")[1]
    assert ("one " in taken and "of the two" in taken) or " or " in taken, line
    assert "," not in taken  # not "Peony chaff, Peony chaff"


def test_log_lines_fold_to_the_width_and_scroll_back() -> None:
    st = TableState()
    for i in range(30):
        st._log("", f"line {i} " + "word " * 20)  # noqa: SLF001 - feeding the log
    rows = [text(r) for r in R.log_lines(st, 57, 6)]
    assert len(rows) == 6 and all(len(r) <= 57 for r in rows)
    assert "line 29" in "".join(rows)
    st.log_height = 6
    st.scroll_log(-1)
    back = [text(r) for r in R.log_lines(st, 57, 6)]
    assert "line 29" not in "".join(back) and "newer lines: PgDn" in back[-1]
    st.scroll_log(1)
    assert [text(r) for r in R.log_lines(st, 57, 6)] == rows


def test_news_in_the_status_line_lasts_until_the_next_move() -> None:
    st, m = find(lambda m, ev: m.to_act == 1 and m.phase is Phase.PLAY)
    view = st.view
    assert view is not None
    for news in ("connected to Bob (ab12-cd34)", "reconnected", "match 2 on this connection"):
        st.apply_update(Update("status", view, text=news))
        assert st.status == news and not st.status_bad
        after = m.apply(m.legal_actions()[0])
        st.apply_update(Update("state", after[0].view(0), after[1]))
        assert st.status == "", news
    st.apply_update(Update("status", view, text="connection lost: reconnecting"))
    assert st.status_bad
    after = m.apply(m.legal_actions()[0])
    st.apply_update(Update("state", after[0].view(0), after[1]))
    assert st.status_bad and st.status  # trouble stays until news replaces it


def test_the_end_page_and_a_departure_clear_the_status() -> None:
    st, m = find(lambda m, ev: m.to_act == 0 and m.phase is Phase.PLAY)
    view = st.view
    assert view is not None
    st.apply_update(Update("status", view, text="you will resign when your turn comes"))
    st.apply_update(Update("over", view, text="resigned"))
    assert st.status == ""
    st.apply_update(Update("status", view, text="connected to Bob (ab12-cd34)"))
    st.set_rematch("The other player has left.", possible=False)
    assert st.status == ""


def test_the_rules_screen_lists_the_differences_under_their_head() -> None:
    import dataclasses

    from p2pkoikoi.ui.state import make_offer

    rules = get_preset("online").with_settings(goko=15, rounds=2)
    offer = dataclasses.replace(
        make_offer("Alice", "crts-mkt6", rules), seen_before=False, turn_limit=60
    )
    rows = [text(line) for line in R.offer_lines(TableState(), offer)]
    head = next(i for i, r in enumerate(rows) if "2 settings differ:" in r)
    assert rows[head + 1].startswith("  * "), rows[head - 2 : head + 3]
    assert any("Time per decision: 1 min" in r for r in rows[:head])


def test_a_found_note_says_what_was_found() -> None:
    from p2pkoikoi.transport.link.notes import describe_note

    text_ = describe_note({"event": "found", "hosts": [{"name": "Bob", "rules": "online"}]})
    assert "found 1 match waiting" in text_


def test_the_host_form_stands_for_a_host_command() -> None:
    from p2pkoikoi.ui.start import StartState, host_argv

    s = StartState()
    assert host_argv(s) == ("host", "--rules", s.preset_name)
    s.host_name, s.rounds, s.deal = "Alice", 3, 2
    assert host_argv(s)[3:] == ("--name", "Alice", "--rounds", "3", "--set", "deal=hidden")
    from p2pkoikoi.cli.parsing import build_parser

    args = build_parser().parse_args(list(host_argv(s)))  # the host command takes it
    assert args.name == "Alice" and args.rounds == 3


def test_tab_completes_a_codes_words_from_their_lists() -> None:
    from p2pkoikoi.ui.start import complete_code

    assert complete_code("7-crosso") == ("7-crossover-", [])
    assert complete_code("7-crossover-clo") == ("7-crossover-clockwork", [])
    done, choices = complete_code("7-a")
    assert done == "7-a" and len(choices) > 1 and all(w.startswith("a") for w in choices)
    assert complete_code("koi2-10.0.0.1") == ("koi2-10.0.0.1", [])  # an invite: nothing


def test_a_hint_is_what_medium_plays_from_the_players_view() -> None:
    from test_ui_newcomer import random_play

    from p2pkoikoi.bots.base import MediumBot
    from p2pkoikoi.ui.hint import hint

    seen = set()
    for seed in range(3):
        for m, _ in random_play(seed):
            if m.is_over or m.to_act != 0:
                continue
            view = m.view(0)  # the player's view: all a hint may know
            action, text = hint(view)
            assert action == MediumBot(0).choose(view)
            assert "\n" not in text and text.endswith(".") and len(text) < 160, text
            seen.add(text.split(" ")[0])
    assert {"Play", "Stop:"} <= seen or {"Play", "Koi-koi:"} <= seen, seen


def test_news_the_link_factory_shows_is_news_too() -> None:
    from p2pkoikoi.ui.app import TableContext

    st, m = find(lambda m, ev: m.to_act == 1 and m.phase is Phase.PLAY)
    ctx = TableContext(None, st, lambda: None)  # type: ignore[arg-type]
    ctx.status("connected to Bob (ab12-cd34)")  # what net_run says at the handshake
    after = m.apply(m.legal_actions()[0])
    st.apply_update(Update("state", after[0].view(0), after[1]))
    assert st.status == ""


def test_our_move_in_flight_keeps_the_table_sending() -> None:
    """The hidden deal applies a play only after the other side's key for the draw: the
    link's update for our own move then carries no events.  The table stayed "Sending..."
    until the move is applied; on the old code the prompt came back at once (the same
    decision asked again), and an Enter pressed for it answered the next decision."""
    st, m = find(lambda m, ev: m.to_act == 0 and m.phase is Phase.PLAY)
    view = st.view
    assert view is not None and st.decision is Decision.PLAY
    sent = st.enter()  # the card
    sent = sent or st.enter()  # and its target, if it asks for one
    assert sent is not None and st.busy
    st.apply_update(Update("state", view, (), 0))  # our move, not yet applied
    assert st.busy and st.decision is None
    assert "Sending" in "".join(t for _, t in R.prompt_fragments(st))
    assert st.enter() is None  # an Enter now answers nothing
    after = m.apply(sent)
    st.apply_update(Update("state", after[0].view(0), after[1], 0))
    assert not st.busy
