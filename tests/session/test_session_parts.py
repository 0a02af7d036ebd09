"""The session's parts as a developer meets them: each says what it holds in its repr,
and the phase moves only along its table (docs/architecture.md)."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import OfferRematch, State
from p2pkoikoi.session.phases import TRANSITIONS, SessionPhase
from p2pkoikoi.session.testing import det_bytes, drain, make_pair, random_chooser, run_pair

RULES = get_preset("online").with_settings(rounds=1)


def test_each_part_says_what_it_holds() -> None:
    host, joiner = make_pair(RULES)
    assert repr(host._phase) == "SessionPhase(<State.HELLO: 'hello'>)"
    assert repr(host._m.rematch) == "Rematch(after=1, offered=False, peer=False)"
    assert repr(host._m.forfeits) == "Forfeits(None, missing=None)"
    assert repr(host._m) == "MatchParts(1, seed=None, play=None)"
    assert repr(host._inbox) == "Inbox(<0 bytes>, eof=False, flooded=False)"
    assert repr(host._outbox).startswith("Outbox(<") and "keyed=False" in repr(host._outbox)
    assert repr(host._me).startswith("Identity(<Role.HOST: 'host'>, 'Alice', <key ")
    assert repr(host._handshake) == (
        "Handshake(<Role.HOST: 'host'>, via='invite', SessionPhase(<State.HELLO: 'hello'>))"
    )
    assert repr(host._side) == "SideChannel(SessionPhase(<State.HELLO: 'hello'>))"
    run_pair(host, joiner, random_chooser(1))
    assert host.state is State.DONE
    assert "keyed=True" in repr(host._outbox)
    assert repr(host._m.seed) == "CommitReveal(<Role.HOST: 'host'>, seeded=True)"
    assert repr(host._m.play) == f"Play(<Role.HOST: 'host'>, seq={host.seq}, over=True)"
    assert repr(host._matches) == f"Matches({host._m!r})"
    offer = host.send(OfferRematch(det_bytes("again", 32)))
    assert repr(host._m.rematch) == "Rematch(after=1, offered=True, peer=False)"
    joiner.receive_data(offer)
    drain(joiner)
    assert repr(joiner._m.rematch) == "Rematch(after=1, offered=False, peer=True)"


def test_the_phase_moves_only_along_its_table() -> None:
    phase = SessionPhase()
    phase.go(State.HELLO)  # staying put
    for state in (State.AUTH, State.RULES, State.SEED, State.PLAY, State.FINISH, State.DONE):
        phase.go(state)
    phase.go(State.SEED)  # a rematch
    with pytest.raises(AssertionError, match="no move from seed to done"):
        phase.go(State.DONE)
    assert phase.state is State.SEED
    assert all(State.ERROR in TRANSITIONS[s] for s in State if s is not State.ERROR)
    assert TRANSITIONS[State.ERROR] == frozenset()
    assert "during seed" in str(phase.unexpected("over"))


def test_a_record_before_the_hosts_auth_names_no_rules_and_no_turn_limit() -> None:
    _, joiner = make_pair(RULES)
    r = joiner.record()
    assert r.rules is None and r.turn_limit == 0 and r.session_id is None
    assert r.host is None and r.joiner is not None and r.joiner.name == "Bob"
    assert r.match_number == 1 and r.previous is None and r.actions == ()
