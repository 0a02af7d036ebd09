"""The pure parts of the table: state updates and render functions, without an Application."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine import CardSet, MatchState, get_preset, parse_cards
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.ui import render as R
from p2pkoikoi.ui.progress import near_yaku
from p2pkoikoi.ui.state import Page, TableState


def _text(fragments: R.StyleAndTextTuples) -> str:
    return "".join(f[1] for f in fragments)


def _played_state(rounds: int = 2) -> tuple[TableState, MatchState]:
    """A table fed a whole match in which both seats play their first legal action."""
    rules = get_preset("online").with_settings(rounds=rounds, scoring="sum")
    st = TableState(names=("You", "Computer"), rules=rules)
    state, events = MatchState.start(rules, bytes(32))
    st.apply_update(Update("state", state.view(0), events))
    while not state.is_over:
        actor = state.to_act
        state, events = state.apply(state.legal_actions()[0])
        st.apply_update(Update("state", state.view(0), events, actor))
    return st, state


def test_progress_counts_cards_towards_yaku_and_drops_impossible_ones() -> None:
    rules = get_preset("online")
    pile = CardSet(parse_cards(["boar", "deer", "1r", "2r"]))
    near = {p.yaku: (p.have, p.need) for p in near_yaku(pile, CardSet(), rules, ())}
    assert near["inoshikacho"] == (2, 3)
    assert near["akatan"] == (2, 3)
    other = CardSet(parse_cards(["butterflies"]))
    assert "inoshikacho" not in {p.yaku for p in near_yaku(pile, other, rules, ())}


def test_round_summaries_then_match_end_table_with_record() -> None:
    st, state = _played_state()
    assert len(st.summaries) == len(state.results)
    assert st.page is Page.ROUND
    text = "\n".join(_text(line) for line in R.round_lines(st, st.summaries[0]))
    assert "Round 1 of 2" in text
    st.apply_update(
        Update("over", state.view(0), text="rounds", record="/tmp/m.json", final_hash="ab" * 32)
    )
    while st.page is Page.ROUND:
        st.enter()
    assert st.page is Page.OVER
    over = "\n".join(_text(line) for line in R.over_lines(st))
    assert "Total" in over
    assert "Record: /tmp/m.json" in over and "p2pkoikoi verify /tmp/m.json" in over
    for res in state.results:
        assert f" {res.round} " in over


def test_round_page_shows_multipliers_with_reasons() -> None:
    st, state = _played_state(rounds=6)
    for s in st.summaries:
        if s.breakdown is not None and s.breakdown.multipliers:
            text = "\n".join(_text(line) for line in R.round_lines(st, s))
            for m in s.breakdown.multipliers:
                assert m.reason in text and f"x{m.factor}" in text


def test_status_and_disconnection_are_shown() -> None:
    st, state = _played_state(rounds=1)
    st.apply_update(Update("status", state.view(0), text="connection trouble: retrying"))
    assert "retrying" in _text(R.status_fragments(st)) and st.status_bad
    fresh = TableState(names=("You", "Peer"))
    s2, ev = MatchState.start(get_preset("online"), bytes(32))
    fresh.apply_update(Update("state", s2.view(0), ev))
    fresh.link_closed()
    assert "Connection closed" in _text(R.prompt_fragments(fresh))


def test_waiting_page_shows_the_invite() -> None:
    st = TableState()
    st.waiting("Waiting for your opponent", ("Invite: p2pk1-abc", "Pass it on."))
    assert st.page is Page.WAITING
    text = _text(R.page_fragments(st))
    assert "p2pk1-abc" in text and "Waiting for your opponent" in text


# ---------------------------------------------------------------------- the joiner's rules screen
def _offer_state(preset: str | None, **kw: object) -> tuple[TableState, list[bool]]:
    import dataclasses

    from p2pkoikoi.ui.state import make_offer

    rules = dataclasses.replace(get_preset("nintendo"), rounds=3, goko=15)
    st = TableState()
    answers: list[bool] = []
    offer = dataclasses.replace(make_offer("Alice", "abcd-efgh-ijkl-mnop", rules, preset), **kw)
    st.show_offer(offer, answers.append)
    return st, answers


def test_rules_offer_names_the_closest_preset_and_highlights_differences() -> None:
    st, answers = _offer_state(None, seen_before=False)
    lines = R.page_lines(st)
    text = "\n".join(_text(line) for line in lines)
    assert "Alice invites you to a match" in text
    assert "abcd-efgh-ijkl-mnop" in text and "New to you" in text
    assert "Rules: closest to the nintendo preset, 2 settings differ:" in text
    assert "* goko: 15   (nintendo: 10)" in text and "* rounds: 3   (nintendo: 12)" in text
    diff_lines = [line for line in lines if any(s == "class:offer.diff" for s, *_ in line)]
    assert len(diff_lines) == 4  # two in the summary, two in the list of every setting
    assert "Every setting" in text and "koikoi multiplier" in text  # the full rules follow
    prompt = _text(R.prompt_fragments(st))
    assert "[ a Accept ]" in prompt and "[ d Decline ]" in prompt
    assert "d/Esc: decline" in _text(R.footer_fragments(st))
    st.move_offer(1)
    st.enter()  # Decline has the focus
    assert answers == [False] and st.offer is None


def test_rules_offer_against_a_named_preset_with_a_changed_key_warning() -> None:
    st, answers = _offer_state("online", warning="Alice's identity changed: known as x, now y")
    text = "\n".join(_text(line) for line in R.page_lines(st))
    assert "Rules: the online preset," in text and "differ:" in text
    assert "Warning: Alice's identity changed" in text
    st.enter()  # Accept has the focus
    st.escape()  # answered already: nothing more happens
    assert answers == [True]


def test_the_hosts_question_about_a_joiner_with_a_new_key() -> None:
    st, answers = _offer_state(
        None, warning="Alice's identity changed: known as x, now y", joining=True
    )
    text = "\n".join(_text(line) for line in R.page_lines(st))
    assert "Alice wants to join your match: play with this new key?" in text
    assert "invites you" not in text
    assert "Warning: Alice's identity changed" in text
    st.move_offer(1)
    st.enter()  # Decline: the match does not start
    assert answers == [False]


def test_waiting_indicator_and_spaced_invite() -> None:
    st = TableState(ascii=True)
    st.waiting("Waiting for the other player", ("invite here",), since=100.0)
    assert R.waiting_indicator(st, 172.5) == "| 1:12"
    assert "1:12" in _text(R.page_fragments(st, now=172.5))
    assert R.waiting_indicator(st, 0.0) == ""
    from p2pkoikoi.session import decode_invite, encode_invite

    invite = encode_invite([("127.0.0.1", 47474)], bytes(range(16)))
    spaced = R.spaced_invite(invite)
    secret = invite.split("-")[2]
    assert spaced.startswith("koi2-127.0.0.1_47474- " + secret[:4] + " " + secret[4:8] + " ")
    assert spaced.endswith("- " + invite.rsplit("-", 1)[1])
    assert not any(group.startswith("-") for group in spaced.split())

    assert decode_invite(spaced) == decode_invite(invite)


@pytest.mark.parametrize(
    ("limit", "shown"),
    [
        (600, "Time per decision: 10 min  (running out forfeits"),
        (45, "Time per decision: 45 s"),
        (0, "Time per decision: no limit"),
    ],
)
def test_rules_offer_shows_the_turn_limit(limit: int, shown: str) -> None:
    st, _ = _offer_state(None, turn_limit=limit)
    text = "\n".join(_text(line) for line in R.page_lines(st))
    assert shown in text, text


def test_the_rules_screen_says_in_one_line_which_deal_and_what_it_protects_against() -> None:

    from p2pkoikoi.ui.reference import rules_lines
    from p2pkoikoi.ui.state import make_offer

    for deal, want in (
        ("hidden", "Deal: hidden: even a modified program cannot see your hand or the stock"),
        ("open", "Deal: open: a modified program could read your hand and the stock"),
    ):
        rules = get_preset("online").with_settings(deal=deal)
        text = "\n".join(t for _, t in rules_lines(rules))
        assert text.count("Deal: ") == 1 and want in text, text
        st = TableState()
        st.show_offer(make_offer("Alice", "abcd-efgh-ijkl-mnop", rules), lambda ok: None)
        offer = "\n".join(_text(line) for line in R.page_lines(st))
        assert want in offer  # the joiner sees it before it accepts
