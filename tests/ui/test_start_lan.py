"""The start screen lists matches waiting on this network; choosing one asks for the
words of its code and joins with the whole code (no network: the list is given)."""

from __future__ import annotations

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pkoikoi.transport.lookup.mdns import Waiting
from p2pkoikoi.ui.start import MENU, StartScreen, menu_fragments

ALICE = Waiting("Alice (7)._p2pkoikoi._tcp.local.", "Alice", "online", 7, ("10.0.0.5",), 47474)


def text(screen: StartScreen) -> str:
    return "".join(t for _, t, *_ in menu_fragments(screen.state))


def test_a_waiting_match_is_listed_and_asks_for_the_words() -> None:
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        screen = StartScreen(ascii=True, input=inp, output=DummyOutput())
        assert "waiting on this network" not in text(screen)
        screen.show_lan([ALICE])
        shown = text(screen)
        assert "Matches waiting on this network:" in shown
        assert "Alice - rules online - code 7-..." in shown
        # up from the first menu row wraps to the last row: the match
        inp.send_text("\x1b[A")  # up
        inp.send_text("\r")
        inp.send_text("Crossover  clockwork\r")
        result = screen.run()
    assert screen.state.cursor == len(MENU)
    assert result == ("join", "7 Crossover clockwork")


def test_the_list_shrinks_when_a_host_stops_announcing() -> None:
    with create_pipe_input() as inp:
        screen = StartScreen(ascii=True, input=inp, output=DummyOutput())
        screen.show_lan([ALICE])
        screen.state.cursor = len(MENU)
        screen.show_lan([])
        assert screen.state.cursor == len(MENU) - 1
        assert "Alice" not in text(screen)
