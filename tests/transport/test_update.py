"""transport.link.Update: a frozen value whose view may be made when first read."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine import MatchState, PlayerView
from p2pkoikoi.engine.presets import get_preset
from p2pkoikoi.transport.link.contract import Update


def test_a_lazy_view_is_made_once_when_read_and_equals_the_eager_one() -> None:
    state, events = MatchState.start(get_preset("online"), bytes(32))
    made: list[int] = []

    def make() -> PlayerView:
        made.append(1)
        return state.view(0)

    lazy = Update("state", make, events, 0)
    assert not made  # nothing made yet
    eager = Update("state", state.view(0), events, 0)
    assert lazy.view == eager.view and made == [1]
    assert lazy.view is lazy.view and made == [1]  # made once
    assert lazy == eager and hash(lazy) == hash(eager)
    assert lazy != Update("state", state.view(1), events, 0)
    assert repr(lazy) == repr(eager) and repr(lazy).startswith("Update(kind='state', view=")
    with pytest.raises(AttributeError):
        lazy.kind = "over"
