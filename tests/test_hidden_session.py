"""Hidden-deal matches between two sessions in memory: signed card moves, records, cheats."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session import CheatingError, State
from p2pkoikoi.session.events import MatchOver
from p2pkoikoi.session.record import decode_record, encode_record
from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair


def hidden(name: str, rounds: int = 2):  # type: ignore[no-untyped-def]
    return PRESETS[name].with_settings(deal="hidden", rounds=rounds)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_hidden_match_between_two_sessions(preset: str) -> None:
    host, joiner = make_pair(hidden(preset), label=preset)
    ev_h, ev_j = run_pair(host, joiner, random_chooser(len(preset)))
    assert host.state is State.DONE and joiner.state is State.DONE
    over_h = [e for e in ev_h if isinstance(e, MatchOver)]
    over_j = [e for e in ev_j if isinstance(e, MatchOver)]
    assert over_h and over_j and over_h[0] == over_j[0]
    rec = host.record()
    assert rec.is_complete and any(a.kind == "audit" for a in rec.actions)
    assert decode_record(encode_record(rec)) == rec
    assert host.record().actions == joiner.record().actions


def test_a_card_move_that_proves_a_cheat_stays_in_the_record_with_evidence() -> None:
    host, joiner = make_pair(hidden("online"), label="cheat")

    # the joiner's program is modified: its key for the host's first draw is garbage
    state = {"n": 0}

    import msgpack  # noqa: F401  (the tap sees encrypted frames: tamper at the table instead)

    j = joiner

    def start_hook() -> None:
        h = j._hidden
        assert h is not None
        orig = h.table.draw_share

        def bad_share() -> bytes:
            state["n"] += 1
            return bytes([1]) + bytes(31) if h.table.seat != h.state.to_act else orig()

        h.table.draw_share = bad_share  # type: ignore[method-assign]

    # run until the match started, then plant the modification
    run_pair(host, joiner, None)
    start_hook()
    with pytest.raises(CheatingError) as exc:
        run_pair(host, joiner, random_chooser(1))
    assert "joiner" in str(exc.value)
    rec = host.record()
    assert rec.evidence is not None and rec.evidence.seat == 0
    assert rec.actions[-1].seat == 1 and rec.actions[-1].kind == "draw"
    assert decode_record(encode_record(rec)) == rec
