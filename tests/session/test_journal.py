"""The match journal (session/records/journal.py): round trip, and a journal cut at every byte.

A crash can leave a journal cut anywhere (in the middle of a write, or short
of blocks the disk had not synced).  Cut at every byte offset of its last
entries, a journal decodes to the record of its complete entries, that
record verifies, and a player resumed from it finishes the match with the
other: the resume handshake brings back the actions the cut lost, the
player's own included.
"""

from __future__ import annotations

import dataclasses
import json
import zlib

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import RecordError, Session, State, decode_record, encode_record
from p2pkoikoi.session.records.journal import (
    decode_entry,
    decode_journal,
    decode_record_file,
    is_journal,
)
from p2pkoikoi.session.records.record import ActionRecord, Record
from p2pkoikoi.session.records.writer import (
    JournalWriter,
    _action_line,
    action_to_dict,
    encode_action_entry,
    encode_entry,
)
from p2pkoikoi.session.testing import (
    det_bytes,
    det_key,
    make_pair,
    random_chooser,
    run_pair,
)
from p2pkoikoi.session.verify.check import verify_record

RULES = get_preset("online").with_settings(rounds=1)


def prefix(record: Record, actions: int) -> Record:
    """``record`` as it stood after ``actions`` actions (no result yet)."""
    return dataclasses.replace(
        record, actions=record.actions[:actions], result=None, final_sigs=(None, None)
    )


@pytest.fixture(scope="module")
def finished() -> tuple[Session, Session]:
    host, joiner = make_pair(RULES, label="journal")
    run_pair(host, joiner, random_chooser(5))
    assert host.state is State.DONE
    return host, joiner


def journal_of(record: Record) -> bytes:
    """The journal a transport writes for ``record``, fed one step at a time."""
    writer = JournalWriter()
    out = [writer.feed(prefix(record, n)) for n in range(len(record.actions) + 1)]
    for sigs in ((record.final_sigs[0], None), record.final_sigs):
        out.append(writer.feed(dataclasses.replace(record, final_sigs=sigs)))
    out.append(writer.feed(record))  # nothing new: nothing to append
    assert out[-1] == b""
    return b"".join(out)


def test_journal_round_trip(finished: tuple[Session, Session]) -> None:
    record = finished[0].record()
    data = journal_of(record)
    assert is_journal(data) and not is_journal(encode_record(record))
    assert data == JournalWriter().feed(record)  # incremental or at once: the same bytes
    read = decode_journal(data)
    assert read.record == record and read.discarded == 0
    assert read.entries == 1 + len(record.actions) + 1 + 2  # head, actions, result, two sigs
    assert decode_record(data) == record  # verify and resume read either format
    assert decode_record_file(data) == (record, read)
    assert decode_record_file(encode_record(record)) == (record, None)
    # compacting gives exactly the record a finished match always had
    assert encode_record(read.record) == encode_record(record)


def test_an_entry_is_checksummed_json_on_one_line() -> None:
    line = encode_entry({"final_sig": {"role": "host", "sig": "00"}})
    text = b'{"final_sig":{"role":"host","sig":"00"}}'
    assert line == b"%08x %s\n" % (zlib.crc32(text), text)
    assert decode_entry(line[:-1]) == {"final_sig": {"role": "host", "sig": "00"}}
    flipped = line[:-3] + (b"1" if line[-3:-2] != b"1" else b"2") + line[-2:-1]
    assert decode_entry(flipped) is None  # one changed byte: the checksum fails


@pytest.mark.parametrize(
    "action",
    [
        ActionRecord(1, 0, "play 1b", bytes(range(32)), bytes(64)),
        ActionRecord(2**40, 1, "resign", b"", b"\xff"),
        ActionRecord(7, 1, 'odd "text" \\ with\ncontrol \x01 and \u00fc\u2028', b"\x00", b""),
    ],
)
def test_an_action_entry_is_the_generic_entry_byte_for_byte(action: ActionRecord) -> None:
    # the hot path formats action entries itself; the bytes are the encoder's
    generic = encode_entry(
        {
            "action": {
                "seq": action.seq,
                "seat": action.seat,
                "action": action.action,
                "state_hash": action.state_hash.hex(),
                "sig": action.sig.hex(),
            }
        }
    )
    assert encode_action_entry(action) == generic
    assert json.loads(generic[9:])["action"]["action"] == action.action


def test_cut_at_every_byte_of_the_last_entries_decodes_the_complete_prefix(
    finished: tuple[Session, Session],
) -> None:
    record = finished[0].record()
    data = journal_of(record)
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]  # entry boundaries
    n = len(record.actions)
    # the last six entries: three actions, the result, both final signatures (and the
    # cut right after the entry before them)
    first = ends[-7]
    expected_records: list[Record] = [prefix(record, k) for k in range(n - 3, n + 1)]
    expected_records.append(dataclasses.replace(record, final_sigs=(None, None)))
    expected_records.append(dataclasses.replace(record, final_sigs=(record.final_sigs[0], None)))
    expected_records.append(record)
    seen = set()
    for cut in range(first, len(data) + 1):
        read = decode_journal(data[:cut])
        complete = max(e for e in ends if e <= cut)
        assert read.discarded == cut - complete
        assert read.entries == ends.index(complete) + 1
        assert read.record == expected_records[read.entries - ends.index(first) - 1]
        seen.add(read.entries)
    assert len(seen) == 7
    # each distinct prefix verifies; only the whole journal is a finished match
    for rec in expected_records:
        report = verify_record(rec)
        assert report.ok, report.first_failure
        assert report.complete == (rec == record)


def test_a_cut_inside_the_head_or_a_bad_entry_is_an_error(
    finished: tuple[Session, Session],
) -> None:
    data = journal_of(finished[0].record())
    head_end = data.index(b"\n") + 1
    for cut in (10, head_end // 2, head_end - 1):
        with pytest.raises(RecordError, match="first entry .* incomplete or damaged"):
            decode_journal(data[:cut])
    with pytest.raises(RecordError, match="unknown kind 'chat'"):
        decode_journal(data[:head_end] + encode_entry({"chat": "hi"}))
    with pytest.raises(RecordError, match="final signature before the result"):
        decode_journal(data[:head_end] + encode_entry({"final_sig": {"role": "host", "sig": ""}}))
    bad_action = {"action": {"seq": 1, "seat": 3, "action": "x", "state_hash": "", "sig": ""}}
    with pytest.raises(RecordError, match=r"malformed journal: actions\[0\]"):
        decode_journal(data[:head_end] + encode_entry(bad_action))
    # garbage where the disk lost a block: the journal ends before it
    read = decode_journal(data[:head_end] + bytes(300) + b"\n" + data[head_end:])
    assert read.entries == 1 and read.discarded == len(data) - head_end + 301


def resume(record: Record, role: str, label: str, secret: bytes) -> Session:
    return Session.resume(
        record,
        role,
        identity_key=det_key(role + "journal"),
        resume_secret=secret,
        entropy=det_bytes("entropy/journal-resume/" + label),
    )


def stop_after(host: Session, joiner: Session, actions: int, seed: int) -> None:
    """Play until ``actions`` actions are applied on both sides, then stop (the crash)."""
    choose = random_chooser(seed)
    sides = (host, joiner)
    pending = [host.data_to_send(), joiner.data_to_send()]
    from p2pkoikoi.session.events import SendAction
    from p2pkoikoi.session.testing import drain

    for _ in range(100_000):
        for s in (0, 1):
            if pending[s]:
                sides[1 - s].receive_data(pending[s])
                pending[s] = b""
                drain(sides[1 - s])
        for s in (0, 1):
            sess = sides[s]
            drain(sess)
            pending[s] += sess.data_to_send()
            m = sess.match
            if host.seq >= actions and joiner.seq >= actions:
                return
            if sess.state is State.PLAY and m is not None and m.to_act == s:
                pending[s] += sess.send(SendAction(choose(m)))
    raise AssertionError("did not reach the action")


@pytest.mark.parametrize("role", ["host", "joiner"])
def test_resume_from_a_journal_cut_at_every_byte_of_its_last_entries(role: str) -> None:
    """The crashed player's journal lost up to its last three entries (actions of
    both seats among them); the other player's record is whole.  For every cut,
    the resumed pair finishes one match whose records verify."""
    host, joiner = make_pair(RULES, label="journal")
    stop_after(host, joiner, 8, seed=9)
    crashed, other = (host, joiner) if role == "host" else (joiner, host)
    full = crashed.record()
    assert {a.seat for a in full.actions[-3:]} == {0, 1}
    data = JournalWriter().feed(full)
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    # A cut inside an entry decodes to the same record as a cut at the entry's start
    # (test above); resuming from that record is then the same computation, so each
    # distinct record is resumed once.
    by_entries: dict[int, Record] = {}
    for cut in range(ends[-4], len(data) + 1):
        read = decode_journal(data[:cut])
        by_entries.setdefault(read.entries, read.record)
        assert read.record == by_entries[read.entries]
    assert len(by_entries) == 4
    for entries, record in sorted(by_entries.items()):
        lost = len(full.actions) - len(record.actions)
        assert host.resume_secret is not None  # both sides derived it at the start
        new = resume(record, role, f"{role}{entries}", host.resume_secret)
        peer = resume(other.record(), other.role.value, f"{role}{entries}peer", host.resume_secret)
        pair = (new, peer) if role == "host" else (peer, new)
        run_pair(*pair, random_chooser(entries))
        for s in pair:
            assert s.state is State.DONE, (lost, s.state)
        rh, rj = pair[0].record(), pair[1].record()
        assert rh.actions == rj.actions and rh.result == rj.result
        assert rh.actions[: len(full.actions)] == full.actions  # nothing agreed was changed
        assert verify_record(rh).ok and verify_record(rj).ok and rh.is_complete


def test_the_journal_format_is_documented_with_vectors() -> None:
    """protocol/records.md's vectors decode to their records (see test_wire_vectors too)."""
    from pathlib import Path

    vectors = json.loads(
        (Path(__file__).parents[2] / "protocol" / "vectors" / "records.json").read_text()
    )
    for case in vectors["journals"]:
        data = case["journal"].encode("utf-8")
        read = decode_journal(data)
        assert read.entries == case["entries"] and read.discarded == case["discarded"]
        assert encode_record(read.record).decode() == case["record"]


def test_the_joiners_start_signature_reaches_the_hosts_journal() -> None:
    """The host's head is written when it reveals; the joiner's start signature comes
    after: a start_sig entry carries it, so a crashed host's journal still binds Bob."""
    from p2pkoikoi.session.testing import drain

    host, joiner = make_pair(RULES, label="journal-start")

    def deliver(src: Session, dst: Session) -> None:
        data = src.data_to_send()
        if data:  # b"" would mean the end of the stream
            dst.receive_data(data)
        drain(dst)

    while host.match is None:  # hellos, auths, rules, commit, value: up to the reveal
        deliver(host, joiner)
        deliver(joiner, host)
    writer = JournalWriter()
    data = writer.feed(host.record())
    before = host.record().joiner
    assert before is not None and before.start_sig is None
    deliver(host, joiner)  # the reveal: the joiner signs the start
    deliver(joiner, host)
    data += writer.extend(
        host.recorded_actions, host.result_record, host.final_signatures, host.start_signatures
    )
    assert b'"start_sig"' in data
    read = decode_journal(data)
    assert read.record.joiner is not None
    assert read.record.joiner.start_sig == host.start_signatures[1] is not None
    report = verify_record(read.record)
    assert report.ok and not any("never signed" in lack for lack in report.lacks), report.lacks


def test_a_hidden_deal_card_move_keeps_its_data_in_the_journal() -> None:
    """The hot path formats open-deal actions itself; a card move (kind, pos, deck,
    keys) goes through the generic encoder and reads back whole."""
    card = ActionRecord(7, 1, "play 1b", bytes(32), bytes(64), "act", 4, b"", bytes(64))
    line = encode_action_entry(card)
    assert json.loads(line[9:])["action"] == action_to_dict(card)
    assert json.loads(line[9:])["action"]["kind"] == "act"


def test_a_records_action_lines_are_json_dumps_byte_for_byte() -> None:
    """The compact record writes an open deal's action without the JSON encoder's
    walk (record._action_line): the same text as json.dumps of its dict."""
    texts = ["play 12c3 capture 12a", "koikoi", "resign", "", 'a "quoted" \\ line', "é 札 \n"]
    for i, text in enumerate(texts):
        for seq, seat in ((1, 0), (2**31 - 1, 1), (7 + i, i % 2)):
            a = ActionRecord(seq, seat, text, bytes([i]) * 32, bytes([255 - i]) * 64)
            assert _action_line(a) == json.dumps(action_to_dict(a), separators=(", ", ": "))
    card = ActionRecord(3, 1, "", bytes(32), bytes(64), kind="play", pos=2, deck=b"\x01")
    assert _action_line(card) == json.dumps(action_to_dict(card), separators=(", ", ": "))
