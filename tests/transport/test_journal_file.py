"""The record file on disk (transport/store/journal.py): journal during play, compact after."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Session, State, decode_record, encode_record
from p2pkoikoi.session.events import SendAction
from p2pkoikoi.session.records.journal import decode_journal, is_journal
from p2pkoikoi.session.records.record import Record
from p2pkoikoi.session.testing import drain, make_pair, random_chooser
from p2pkoikoi.transport.store.journal import JournalFile, RecordJournal

RULES = get_preset("online").with_settings(rounds=2)


def step_pair(host: Session, joiner: Session, keepers: tuple[RecordJournal, RecordJournal],
              stop: int | None = None) -> None:  # fmt: skip
    """Play on, saving both records as a link does; stop once ``stop`` actions are in."""
    sides = (host, joiner)
    choose = random_chooser(4)
    pending = [host.data_to_send(), joiner.data_to_send()]
    for _ in range(100_000):
        moved = False
        for s in (0, 1):
            keepers[s].save(sides[s])  # before its bytes leave
            if pending[s]:
                sides[1 - s].receive_data(pending[s])
                pending[s] = b""
                drain(sides[1 - s])
                keepers[1 - s].save(sides[1 - s])
                moved = True
        for s in (0, 1):
            sess = sides[s]
            drain(sess)
            pending[s] += sess.data_to_send()
            m = sess.match
            if stop is not None and host.seq >= stop and joiner.seq >= stop:
                return
            if sess.state is State.PLAY and m is not None and m.to_act == s:
                pending[s] += sess.send(SendAction(choose(m)))
                moved = True
        if not moved:
            return
    raise AssertionError("did not settle")


def test_journal_during_play_compact_record_after(tmp_path: Path) -> None:
    host, joiner = make_pair(RULES, label="jf")
    paths = (tmp_path / "h.koikoi", tmp_path / "j.koikoi")
    keepers = (RecordJournal(paths[0]), RecordJournal(paths[1]))
    drain(host)
    keepers[0].save(host)
    assert not paths[0].exists()  # before the match starts nothing is written
    step_pair(host, joiner, keepers, stop=6)
    for path, side in zip(paths, (host, joiner), strict=True):
        data = path.read_bytes()
        assert is_journal(data)
        assert decode_journal(data).record == side.record()  # nothing held back in memory
    step_pair(host, joiner, keepers)
    assert host.state is State.DONE
    for path, side in zip(paths, (host, joiner), strict=True):
        data = path.read_bytes()
        assert not is_journal(data) and data == encode_record(side.record())
    assert keepers[0]._file is None  # closed: no thread left behind


def test_close_compacts_an_unfinished_match_and_a_handshake_only_one(tmp_path: Path) -> None:
    host, joiner = make_pair(RULES, label="jf2")
    keepers = (RecordJournal(tmp_path / "h.koikoi"), RecordJournal(tmp_path / "j.koikoi"))
    step_pair(host, joiner, keepers, stop=3)
    keepers[0].close(host)
    data = (tmp_path / "h.koikoi").read_bytes()
    assert not is_journal(data) and decode_record(data) == host.record()
    # a match that never started: nothing while it stood, the handshake's record at close
    h2, j2 = make_pair(RULES, label="jf3")
    keeper = RecordJournal(tmp_path / "never.koikoi")
    keeper.save(h2)
    keeper.close(h2)
    assert not (tmp_path / "never.koikoi").exists()  # not even hellos: nothing to record
    j2.receive_data(h2.data_to_send())
    h2.receive_data(j2.data_to_send())
    drain(h2)
    assert h2.session_id is not None and h2.match is None
    keeper.save(h2)
    assert not (tmp_path / "never.koikoi").exists()
    keeper.close(h2)
    assert decode_record((tmp_path / "never.koikoi").read_bytes()).session_id == h2.session_id


def test_journal_file_flushes_in_the_background_and_stops(tmp_path: Path) -> None:
    jf = JournalFile(tmp_path / "x.journal")
    jf.start(b"head\n")
    for i in range(50):
        jf.append(b"entry %d\n" % i)
        if i % 10 == 9:
            jf.sync_soon()
    jf.close()
    assert jf.syncs >= 1 and not jf.is_open
    assert (tmp_path / "x.journal").read_bytes().count(b"\n") == 51
    assert [p.name for p in tmp_path.iterdir()] == ["x.journal"]  # no temporary file left
    jf.sync_soon()  # after close: nothing to do, no error


def test_a_failed_flush_is_raised_at_the_next_append(tmp_path: Path) -> None:
    jf = JournalFile(tmp_path / "y.journal")
    jf.start(b"head\n")
    jf.error = OSError(5, os.strerror(5))
    with pytest.raises(OSError, match="Input/output error"):
        jf.append(b"more\n")
    jf.close()


def test_a_lazy_save_leaves_the_other_players_move_for_our_next_write(tmp_path: Path) -> None:
    """``save(lazy=True)`` after a received move that leaves the match in play writes
    nothing; our next (eager) save appends what waited; a lazy save that sees anything
    else new (here the end of the match) writes at once."""
    host, joiner = make_pair(RULES, label="jf-lazy")
    path = tmp_path / "j.koikoi"
    keepers = (RecordJournal(tmp_path / "h.koikoi"), RecordJournal(path))
    step_pair(host, joiner, keepers, stop=2)
    choose = random_chooser(9)
    waited = 0
    while host.state is State.PLAY:
        m = host.match
        assert m is not None
        sender, receiver = (host, joiner) if m.to_act == 0 else (joiner, host)
        sm = sender.match
        assert sm is not None
        receiver.receive_data(sender.send(SendAction(choose(sm))))
        drain(receiver)
        reply = receiver.data_to_send()  # (b"" would mean the stream ended)
        if reply:
            sender.receive_data(reply)
            drain(sender)
        if receiver is host:
            keepers[1].save(joiner)  # our own move: written (with what waited) before it leaves
            assert read(path) == joiner.record()
            continue
        before = path.read_bytes()
        keepers[1].save(joiner, lazy=True)
        if joiner.state is not State.PLAY:
            break  # the match is over: written at once
        assert path.read_bytes() == before  # the host's move waits
        written = decode_journal(before).record.actions
        assert written == joiner.record().actions[: len(written)]
        assert len(written) < len(joiner.record().actions)
        waited += 1
    assert waited > 0
    assert read(path) == joiner.record()


def read(path: Path) -> Record:
    """The record a record file stands for, journal or compact."""
    data = path.read_bytes()
    return decode_journal(data).record if is_journal(data) else decode_record(data)
