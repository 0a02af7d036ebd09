"""Card names as a user types them (issue 25, point 8), through real ``p2pkoikoi``
processes: ``p2pkoikoi cards`` lists the 48, and every form the table shows is a card."""

from __future__ import annotations

import json

import pytest
from procs import run_cli

from p2pkoikoi.engine.cards import CARDS, parse_card, parse_cards, table_label
from p2pkoikoi.ui.tiles import short_text, tile_text

p2p = run_cli


def test_cards_lists_all_48_with_code_names_and_label() -> None:
    proc = p2p("cards")
    assert proc.returncode == 0, proc.stderr
    for c in CARDS:
        line = next(x for x in proc.stdout.splitlines() if x.split()[:1] == [c.code])
        assert table_label(c) in line and table_label(c, ascii=True) in line
        assert c.english in line and c.romaji in line and c.japanese in line
    assert "3Chy★" in proc.stdout


def test_cards_json_gives_every_card_and_each_name_parses_back() -> None:
    proc = p2p("cards", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["code"] for r in rows] == [c.code for c in CARDS]
    for row in rows:
        card = CARDS[row["id"]]
        for name in (row["code"], row["english"], row["romaji"], row["japanese"], *row["aliases"]):
            # a name shared by a month's chaff is one of them
            assert parse_card(name).month == card.month, name
        assert parse_card(row["label"]).month == card.month
        if row["kind"] != "chaff":
            assert parse_card(row["label"]) is card and parse_card(row["label_ascii"]) is card
            assert parse_card(row["english"]) is card


@pytest.mark.parametrize("ascii", [False, True])
def test_every_tile_the_table_draws_is_a_card(ascii: bool) -> None:
    """The table's own tiles (ui/tiles.py), full and short, with and without the 1/2
    choice marker: the labels in engine/cards.py must stay the same as the table's."""
    for c in CARDS:
        for text in (tile_text(c, ascii), short_text(c, ascii)):
            got = parse_card(text)
            assert got.month == c.month and got.kind is c.kind, text
            assert parse_card(text.strip() + "1").month == c.month
        assert tile_text(c, ascii).strip() == table_label(c, ascii)


def test_chaff_labels_take_the_next_free_chaff() -> None:
    assert [c.code for c in parse_cards(["12Pau·", "12Pau.", "12Pau·"])] == [
        "12c1",
        "12c2",
        "12c3",
    ]


def test_score_accepts_the_table_label_and_a_quoted_name() -> None:
    proc = p2p("score", "--json", "3Chy★", "8Pmp*", "sake cup")
    assert proc.returncode == 0, proc.stderr
    assert [y["id"] for y in json.loads(proc.stdout)["yaku"]] == ["hanami", "tsukimi"]
    proc = p2p("score", "--json", "1Pin·", "1Pin·", "2Plm.", "2Plm.", "3Chy·", "3Chy·", "4Wis.",
               "4Wis.", "5Irs.", "5Irs.")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [y["id"] for y in json.loads(proc.stdout)["yaku"]] == ["kasu"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["sake", "cup"], "'sake cup' is one card's name (9a): quote it (\"sake cup\")"),
        (["1b", "rain", "man"], "'rain man' is one card's name (11b)"),
        (["3Chy"], "which card of Cherry? '3Chy' needs its mark: 3Chy★, 3Chyp, 3Chy·"),
        (["1b", "crane"], "duplicate card: 1b"),
    ],
)
def test_bad_card_names_get_a_line_that_helps(argv: list[str], message: str) -> None:
    proc = p2p("score", *argv)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
