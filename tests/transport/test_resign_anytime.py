"""Issue 22, item 3: a resignation at any time during play, off-turn included, and the
crossing rule (protocol/README.md section 9): the other player's move for the seq a
resignation names wins; the resigning side takes its resignation back, applies the
move and resigns again at the next seq.  Both records end identical and verify."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session import (
    LocalProtocolError,
    PeerResigned,
    Resign,
    SendAction,
    Session,
    State,
    decode_record,
    encode_record,
)
from p2pkoikoi.session.testing import drain, make_pair, random_chooser, run_pair
from p2pkoikoi.session.verify.check import verify_record


def _playing(label: str, seed: int, steps: int) -> tuple[Session, Session]:
    """A match in play after ``steps`` random actions (fewer if it would end)."""
    host, joiner = make_pair(get_preset("online"), label=label)
    run_pair(host, joiner)
    assert host.state is State.PLAY and joiner.state is State.PLAY
    choose = random_chooser(seed)
    for _ in range(steps):
        m = host.match
        assert m is not None and m.to_act is not None
        actor, peer = (host, joiner) if m.to_act == 0 else (joiner, host)
        data = actor.send(SendAction(choose(m)))
        if actor.state is not State.PLAY:
            raise AssertionError("the match ended in the warm-up")
        peer.receive_data(data)
        drain(peer)
        if peer.state is not State.PLAY:
            raise AssertionError("the match ended in the warm-up")
    return host, joiner


def _same_complete_records(host: Session, joiner: Session) -> None:
    assert host.state is State.DONE and joiner.state is State.DONE, (host.state, joiner.state)
    h, j = host.record(), joiner.record()
    assert h.actions == j.actions
    assert h.result == j.result and h.final_sigs == j.final_sigs
    for rec in (h, j):
        again = decode_record(encode_record(rec))
        report = verify_record(again)
        assert report.complete, report.lacks


def test_an_off_turn_resignation_is_signed_and_recorded_by_both() -> None:
    host, joiner = _playing("off", 1, 4)
    m = host.match
    assert m is not None
    off, to_act = (host, joiner) if m.to_act == 1 else (joiner, host)
    seq = off.seq
    to_act.receive_data(off.send(Resign()))  # not its turn: it goes at once
    assert off.state is State.FINISH
    events = drain(to_act)
    assert isinstance(events[0], PeerResigned) and events[0].seat == off.our_seat
    run_pair(host, joiner)
    _same_complete_records(host, joiner)
    last = host.record().actions[-1]
    assert (last.seq, last.seat, last.action) == (seq + 1, off.our_seat, "resign")
    labels = [c for c in verify_record(host.record()).checks if c.name == "resigned"]
    assert labels and "on the other player's turn" in labels[0].detail, labels


@pytest.mark.parametrize("seed", range(12))
def test_a_resignation_crossing_the_other_players_move(seed: int) -> None:
    """Both in flight at once: the move for seq N and the resignation naming N."""
    host, joiner = _playing(f"cross{seed}", seed, seed % 5)
    m = host.match
    assert m is not None and m.to_act is not None
    mover, resigner = (host, joiner) if m.to_act == 0 else (joiner, host)
    n = mover.seq + 1
    move = mover.send(SendAction(random_chooser(100 + seed)(m)))
    resignation = resigner.send(Resign())  # off-turn, before the move arrives
    assert resigner.state is State.FINISH
    # crossing: each side reads the other's bytes only now
    mover.receive_data(resignation)
    resigner.receive_data(move)
    drain(mover)
    drain(resigner)
    run_pair(host, joiner)
    _same_complete_records(host, joiner)
    acts = host.record().actions
    assert acts[n - 1].seat == mover.our_seat and acts[n - 1].action != "resign"
    last = acts[-1]  # (a move this early never ends the match)
    assert (last.seat, last.action, last.seq) == (resigner.our_seat, "resign", n + 1)


def test_a_resignation_crossing_several_moves() -> None:
    """The mover sends two steps in a row before the resignation arrives: each one
    voids the resignation, which is sent again after it."""
    host, joiner = _playing("many", 7, 0)
    choose = random_chooser(7)
    for _ in range(2000):
        m = host.match
        assert host.state is State.PLAY and m is not None and m.to_act is not None
        mover, resigner = (host, joiner) if m.to_act == 0 else (joiner, host)
        moves = mover.send(SendAction(choose(m)))
        mm = mover.match
        if mover.state is State.PLAY and mm is not None and mm.to_act == mover.our_seat:
            moves += mover.send(SendAction(choose(mm)))  # a second step in a row
            if mover.state is not State.PLAY:
                break
            resignation = resigner.send(Resign())
            mover.receive_data(resignation)
            resigner.receive_data(moves)
            drain(mover)
            drain(resigner)
            run_pair(host, joiner)
            _same_complete_records(host, joiner)
            last = host.record().actions[-1]
            assert (last.seat, last.action) == (resigner.our_seat, "resign")
            assert last.seq == mover.seq == resigner.seq
            return
        resigner.receive_data(moves)
        drain(resigner)
        if resigner.state is not State.PLAY:
            break
    raise AssertionError("no player made two steps in a row")


def test_two_resignations_crossing() -> None:
    """Both players resign at once: the resignation of the player to act wins."""
    host, joiner = _playing("two", 2, 3)
    m = host.match
    assert m is not None and m.to_act is not None
    to_act, off = (host, joiner) if m.to_act == 0 else (joiner, host)
    n = to_act.seq + 1
    a, b = to_act.send(Resign()), off.send(Resign())
    to_act.receive_data(b)
    off.receive_data(a)
    drain(to_act)
    drain(off)
    run_pair(host, joiner)
    _same_complete_records(host, joiner)
    last = host.record().actions[-1]
    assert (last.seq, last.seat, last.action) == (n, to_act.our_seat, "resign")


def test_the_hidden_deal_keeps_the_turn_rule() -> None:
    host, joiner = make_pair(PRESETS["online"].with_settings(deal="hidden"), label="hid")
    run_pair(host, joiner)
    assert host.state is State.PLAY
    off = joiner if host.waiting_for.name == "LOCAL_ACTION" else host
    with pytest.raises(LocalProtocolError, match="not your turn"):
        off.send(Resign())


def test_the_resigners_journal_follows_the_taken_back_resignation(tmp_path: Path) -> None:
    """The journal appends; a resignation taken back by the crossing rule makes it
    start again from the record, so a crash then resumes from the right steps."""
    from p2pkoikoi.transport.store.journal import RecordJournal
    from p2pkoikoi.transport.store.records import read_record

    host, joiner = _playing("journal", 4, 3)
    m = host.match
    assert m is not None and m.to_act is not None
    mover, resigner = (host, joiner) if m.to_act == 0 else (joiner, host)
    journal = RecordJournal(tmp_path / "r.koikoi")
    journal.save(resigner)
    move = mover.send(SendAction(random_chooser(9)(m)))
    resignation = resigner.send(Resign())
    journal.save(resigner)  # our resignation is written before it leaves
    assert read_record(tmp_path / "r.koikoi").actions[-1].action == "resign"
    mover.receive_data(resignation)
    resigner.receive_data(move)
    drain(resigner)
    journal.save(resigner)  # taken back, the action, the resignation again
    assert read_record(tmp_path / "r.koikoi").actions == resigner.record().actions
    drain(mover)
    run_pair(host, joiner)
    journal.save(resigner)
    assert read_record(tmp_path / "r.koikoi") == resigner.record() == mover.record()
