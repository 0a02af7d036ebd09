"""Rematch on one connection (protocol/README.md section 13), in memory.

A rematch is offered with ``again`` after both final signatures; the other side
accepts with ``again`` (crossing offers also agree) or declines with
``no_again``.  Each match gets its own record, chained to the previous one's
final transcript: it verifies alone, and records cannot be spliced.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session import (
    Goodbye,
    LocalProtocolError,
    MatchOver,
    MatchStarted,
    RemoteProtocolError,
    Session,
    State,
    wire,
)
from p2pkoikoi.session.events import (
    ActionReceived,
    ConnectionClosed,
    DeclineRematch,
    HiddenProgress,
    OfferRematch,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
    SendAction,
)
from p2pkoikoi.session.records.journal import decode_record
from p2pkoikoi.session.records.record import Record
from p2pkoikoi.session.records.writer import encode_record
from p2pkoikoi.session.testing import det_bytes, det_key, make_pair, random_chooser, run_pair
from p2pkoikoi.session.verify.check import verify_record

RULES = dataclasses.replace(get_preset("nintendo"), rounds=1)


def _played() -> tuple[Session, Session]:
    host, joiner = make_pair(RULES)
    ev_h, ev_j = run_pair(host, joiner, random_chooser(3))
    assert host.state is State.DONE and joiner.state is State.DONE
    assert any(isinstance(e, MatchOver) for e in ev_h)
    return host, joiner


def _offer(s: Session, label: str) -> bytes:
    return s.send(OfferRematch(det_bytes("again/" + label, 32)))


def _rematch(host: Session, joiner: Session, offerer: int, seed: int) -> None:
    sides = (host, joiner)
    first = sides[offerer]
    other = sides[1 - offerer]
    other.receive_data(_offer(first, f"{offerer}/{first.match_number}"))
    (ev,) = run_pair(host, joiner)[1 - offerer]
    assert ev == RematchOffered(first.match_number + 1)
    first.receive_data(_offer(other, f"{1 - offerer}/{other.match_number}"))
    ev_h, ev_j = run_pair(host, joiner, random_chooser(seed))
    for evs in (ev_h, ev_j):
        kinds = [type(e) for e in evs]
        assert RematchStarted in kinds and MatchStarted in kinds and MatchOver in kinds
    assert host.state is State.DONE and joiner.state is State.DONE


def test_offer_accept_second_match_has_its_own_verifying_record() -> None:
    host, joiner = _played()
    first = host.record()
    _rematch(host, joiner, offerer=1, seed=9)  # the joiner offers, the host accepts
    second = host.record()
    assert second == joiner.record()
    assert second.match_number == 2 and second.previous == first.result.transcript_hash  # type: ignore[union-attr]
    assert second.session_id == first.session_id  # the same connection
    assert second.match_seed != first.match_seed  # a fresh commit-reveal
    assert second.host_value != first.host_value and second.joiner_value != first.joiner_value
    for r in (first, second):
        report = verify_record(r)
        assert report.ok and report.complete, report
        assert decode_record(encode_record(r)) == r
    # a third one, offered by the host this time: numbers and chain go on
    _rematch(host, joiner, offerer=0, seed=10)
    third = joiner.record()
    assert third.match_number == 3 and third.previous == second.result.transcript_hash  # type: ignore[union-attr]
    assert verify_record(third).complete


def test_crossing_offers_agree() -> None:
    host, joiner = _played()
    a, b = _offer(host, "h"), _offer(joiner, "j")
    joiner.receive_data(a)
    host.receive_data(b)
    ev_h, ev_j = run_pair(host, joiner, random_chooser(4))
    assert any(isinstance(e, RematchStarted) for e in ev_h)
    assert not any(isinstance(e, RematchOffered) for e in ev_h + ev_j)
    assert host.record() == joiner.record() and verify_record(host.record()).complete


def test_decline_keeps_the_connection_and_the_first_record() -> None:
    host, joiner = _played()
    first = host.record()
    joiner.receive_data(_offer(host, "h"))
    assert run_pair(host, joiner)[1] == [RematchOffered(2)]
    host.receive_data(joiner.send(DeclineRematch("no time")))
    ev_h, _ = run_pair(host, joiner)
    assert ev_h == [RematchDeclined("no time")]
    assert host.state is State.DONE and host.record() == first
    with pytest.raises(LocalProtocolError):
        joiner.send(DeclineRematch())  # nothing to decline now
    joiner.receive_data(host.send(Goodbye()))
    _, ev_j = run_pair(host, joiner)
    assert ev_j == [ConnectionClosed(clean=True, reason="the other player left")]


def test_offer_only_after_both_final_signatures() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)  # handshake done, nobody plays
    assert host.state is State.PLAY
    with pytest.raises(LocalProtocolError, match="both players signed"):
        _offer(host, "early")


def test_offer_during_play_or_for_another_match_is_refused() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    assert host._send is not None  # noqa: SLF001 - forging a peer's message
    forged = host._send.seal(wire.encode_message(wire.AgainMsg(n=2, tx=b"\0" * 32)))  # noqa: SLF001
    joiner.receive_data(wire.encode_frame(forged))
    with pytest.raises(RemoteProtocolError, match="unexpected again"):
        joiner.next_event()
    host, joiner = _played()
    assert host._send is not None  # noqa: SLF001
    forged = host._send.seal(wire.encode_message(wire.AgainMsg(n=3, tx=b"\0" * 32)))  # noqa: SLF001
    joiner.receive_data(wire.encode_frame(forged))
    with pytest.raises(
        RemoteProtocolError,
        match="^the other player offers match 3 of this connection; the next is 2$",
    ):
        joiner.next_event()


def _failed(r: Record) -> str:
    report = verify_record(r)
    assert not report.ok
    bad = report.first_failure
    assert bad is not None
    return bad.name


def test_spliced_records_are_refused() -> None:
    host, joiner = _played()
    first = host.record()
    _rematch(host, joiner, offerer=0, seed=11)
    second = host.record()
    assert verify_record(first).ok and verify_record(second).ok
    # the second match's play under the first match's start (commit-reveal, signatures)
    head_of_first = dataclasses.replace(
        second,
        match_number=1,
        previous=None,
        commitment=first.commitment,
        commit_sig=first.commit_sig,
        host_value=first.host_value,
        joiner_value=first.joiner_value,
        match_seed=first.match_seed,
        host=first.host,
        joiner=first.joiner,
    )
    assert _failed(head_of_first).startswith("action")
    # the second match passed off as the connection's first (its chain link removed)
    assert _failed(dataclasses.replace(second, match_number=1, previous=None)) == (
        "commitment signature"
    )
    # renumbered, or chained to another match
    assert _failed(dataclasses.replace(second, match_number=3)) == "commitment signature"
    other = bytes(32)
    assert _failed(dataclasses.replace(second, previous=other)) == "commitment signature"
    # the first match's actions and result under the second match's start
    tail = dataclasses.replace(
        second, actions=first.actions, result=first.result, final_sigs=first.final_sigs
    )
    assert not verify_record(tail).ok


def test_a_record_with_match_but_no_previous_is_malformed() -> None:
    host, joiner = _played()
    _rematch(host, joiner, offerer=0, seed=12)
    text = encode_record(host.record()).decode()
    assert '"match": 2' in text
    bad = text.replace('"previous": "', '"previous_": "')
    from p2pkoikoi.session import RecordError

    with pytest.raises(RecordError):
        decode_record(bad.encode())
    # and a first match's record is written as before: no match/previous keys
    assert '"match"' not in encode_record(make_pair(RULES)[0].record()).decode()


def test_a_rematch_cut_mid_match_resumes_from_its_own_record() -> None:
    host, joiner = _played()
    host.receive_data(_offer(joiner, "j"))
    run_pair(host, joiner)
    joiner.receive_data(_offer(host, "h"))
    choose = random_chooser(13)
    run_pair(host, joiner)  # the commit-reveal; nobody has played yet
    for _ in range(6):  # a few actions, then the connection breaks
        m = host.match
        assert m is not None and m.to_act is not None
        side = (host, joiner)[m.to_act]
        (joiner, host)[m.to_act].receive_data(side.send(SendAction(choose(m))))
        run_pair(host, joiner)
    assert host.match_number == 2 and host.seq == 6
    news = []
    for old in (host, joiner):
        assert old.resume_secret is not None
        news.append(
            Session.resume(
                old.record(),
                old.role,
                identity_key=det_key(old.role.value),
                resume_secret=old.resume_secret,
                entropy=det_bytes("entropy/resume/" + old.role.value),
            )
        )
    nh, nj = news
    assert nh.match_number == 2
    run_pair(nh, nj, random_chooser(14))
    assert nh.state is State.DONE and nj.state is State.DONE
    rec = nh.record()
    assert rec == nj.record() and rec.match_number == 2
    assert verify_record(rec).complete


def test_a_decline_without_our_offer_is_refused() -> None:
    host, joiner = _played()
    assert joiner._send is not None  # noqa: SLF001 - forging a peer's message
    forged = joiner._send.seal(wire.encode_message(wire.NoAgainMsg(reason="no")))  # noqa: SLF001
    host.receive_data(wire.encode_frame(forged))
    with pytest.raises(RemoteProtocolError, match="unexpected no_again message"):
        host.next_event()


def test_an_offer_is_made_once_until_answered() -> None:
    host, joiner = _played()
    joiner.receive_data(_offer(host, "h1"))
    with pytest.raises(LocalProtocolError, match="offered already"):
        _offer(host, "h2")
    assert run_pair(host, joiner)[1] == [RematchOffered(2)]


def test_an_offer_needs_32_random_bytes() -> None:
    host, joiner = _played()
    with pytest.raises(LocalProtocolError, match="^a rematch needs 32 random bytes$"):
        host.send(OfferRematch(bytes(31)))
    assert host.state is State.DONE and host.data_to_send() == b""
    joiner.receive_data(host.send(OfferRematch(bytes(32))))  # 32 will do
    assert run_pair(host, joiner)[1] == [RematchOffered(2)]


def test_a_note_of_a_missing_signature_stays_with_its_own_match() -> None:
    # ``missing`` is the transport's note on one match's record (why the peer's final
    # signature is absent); the next match on the connection starts a record of its own.
    host, joiner = _played()
    host.missing = "a note on the first match"
    assert host.record().missing == "a note on the first match"
    _rematch(host, joiner, offerer=0, seed=11)
    second = host.record()
    assert second.match_number == 2 and second.missing is None
    assert second == joiner.record()


def _engine_events(evs: list[object]) -> list[object]:
    """The engine events a session reported, in order (a table builds itself from these)."""
    out: list[object] = []
    for e in evs:
        if isinstance(e, (MatchStarted, ActionReceived, HiddenProgress)):
            out.extend(e.events)
    return out


def test_a_hidden_deal_rematch_reports_each_engine_event_of_its_own_match_once() -> None:
    """Each match's hidden table starts its reports afresh: the second match reports
    its own events from the first, none of the first match's count carried over, and
    no report says nothing (a decision nobody made, with no events)."""
    rules = dataclasses.replace(RULES, deal=DealMode.HIDDEN)
    host, joiner = make_pair(rules)
    for match, evs in enumerate((run_pair(host, joiner, random_chooser(3)), None)):
        if evs is None:
            host.receive_data(_offer(joiner, "1/1"))
            run_pair(host, joiner)
            joiner.receive_data(_offer(host, "0/1"))
            evs = run_pair(host, joiner, random_chooser(4))
        assert host.match_number == joiner.match_number == match + 1
        for s, got in zip((host, joiner), evs, strict=True):
            assert s.state is State.DONE
            assert s._hidden is not None
            assert _engine_events(got) == list(s._hidden.events)
            quiet = [e for e in got if isinstance(e, HiddenProgress) and not e.events]
            assert all(e.actor is not None for e in quiet), quiet
