"""Exact outcomes for session paths that a mutation run (issue 15) found untested:
the failed session's ``error``, ``waiting_for`` during a hidden deal, joining with a
short code, resume records that disagree in one field only, the host's rules count,
stray or changed start signatures, an unknown resignation reason, who needs which
secret, the first frame after the hellos, a decline out of place, a bad reveal (the
host's forfeit) and the side channel before the handshake.

It runs first in bench/mutation.py's TESTS for session.py: in memory, a few seconds."""

from __future__ import annotations

import dataclasses

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import (
    LocalProtocolError,
    MatchOver,
    RemoteProtocolError,
    Resign,
    Resumed,
    ResumeError,
    Session,
    State,
    WaitingFor,
    crypto,
    wire,
)
from p2pkoikoi.session.codes.code import CODE_SECRET_BYTES, decode_code, encode_code
from p2pkoikoi.session.events import Ping
from p2pkoikoi.session.testing import (
    SECRET,
    det_bytes,
    det_key,
    drain,
    forge,
    make_pair,
    random_chooser,
    resumed,
    rewrite_queue,
    run_pair,
    until_the_joiners_value,
)
from p2pkoikoi.session.verify.check import verify_record

RULES = get_preset("online")


def test_error_is_the_exception_that_failed_the_session() -> None:
    host, _ = make_pair(RULES)
    assert host.error is None
    host.receive_data(b"\x00\x00\x00\x05garbage")
    with pytest.raises(RemoteProtocolError) as caught:
        drain(host)
    assert host.error is caught.value


def test_waiting_for_in_a_hidden_match_names_whose_move_is_due() -> None:
    """A card move owed by the peer's program is PEER_CARDS; a decision of ours is
    LOCAL_ACTION; anything else (the peer's decision, or our own program's move on
    its way) is PEER_ACTION."""
    host, joiner = make_pair(RULES.with_settings(deal="hidden", rounds=1), label="wf")
    sides = (host, joiner)
    seen: set[tuple[str, WaitingFor]] = set()

    def check(sender: int, data: bytes) -> bytes:
        for s in sides:
            if s.state is not State.PLAY or s._hidden is None:
                continue
            due = s._hidden.expecting
            if due is None:
                continue
            kind, seat = due
            if kind == "act" and seat == s.our_seat:
                want = WaitingFor.LOCAL_ACTION
            elif kind != "act" and seat != s.our_seat:
                want = WaitingFor.PEER_CARDS
            else:
                want = WaitingFor.PEER_ACTION
            assert s.waiting_for is want, (due, s.our_seat)
            seen.add(("mine" if seat == s.our_seat else "peer's", want))
        return data

    run_pair(host, joiner, random_chooser(5), tap=check)
    assert host.state is State.DONE and joiner.state is State.DONE
    # both cases were met between deliveries: a peer's card move, a peer's decision
    assert ("peer's", WaitingFor.PEER_CARDS) in seen
    assert ("peer's", WaitingFor.PEER_ACTION) in seen


def _code_pair(host_code: bool) -> tuple[Session, Session]:
    code = decode_code(encode_code(7, det_bytes("code", CODE_SECRET_BYTES)))
    host = Session(
        "host",
        identity_key=det_key("host"),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("entropy/host/code"),
        rules=RULES,
        code=code if host_code else None,
    )
    joiner = Session(
        "joiner",
        identity_key=det_key("joiner"),
        name="Bob",
        entropy=det_bytes("entropy/joiner/code"),
        expected_rules=RULES,
        code=code,
    )
    return host, joiner


def test_a_joiner_with_the_hosts_code_plays() -> None:
    host, joiner = _code_pair(host_code=True)
    assert joiner.via == "code"
    run_pair(host, joiner, random_chooser(2))
    assert host.state is State.DONE and joiner.state is State.DONE
    assert host.via == "code"


def test_a_code_is_refused_by_a_host_that_made_none() -> None:
    host, joiner = _code_pair(host_code=False)
    with pytest.raises(RemoteProtocolError, match="this host does not accept a code now"):
        run_pair(host, joiner)


@pytest.mark.parametrize("field", ["tx", "hash"])
def test_resume_records_that_differ_in_one_field_are_refused(field: str) -> None:
    """A resume whose transcript alone, or state hash alone, differs at the same
    action is two records that disagree (validly signed by the reconnecting player)."""
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    n_host, n_joiner = resumed(host, "mutants/h"), resumed(joiner, "mutants/j")

    def lie(msg: wire.Message) -> wire.Message:
        if not isinstance(msg, wire.ResumeMsg):
            return msg
        msg = dataclasses.replace(msg, **{field: bytes(32)})
        assert n_joiner.session_id is not None
        signed = crypto.resume_message(
            n_joiner.connection_id, "joiner", n_joiner.session_id, msg.seq, msg.tx, msg.hash
        )
        return dataclasses.replace(msg, sig=crypto.sign(n_joiner._key, signed))

    rewrite_queue(n_joiner, lie)
    with pytest.raises(ResumeError, match="the two records disagree at action 0"):
        run_pair(n_host, n_joiner)


def test_a_host_auth_whose_rounds_differ_from_its_rules_is_refused() -> None:
    host, joiner = make_pair(RULES)
    rewrite_queue(
        host,
        lambda m: (
            dataclasses.replace(m, rounds=RULES.rounds + 1) if isinstance(m, wire.AuthMsg) else m
        ),
    )
    with pytest.raises(RemoteProtocolError, match="rounds do not match rules"):
        run_pair(host, joiner)
    assert joiner.error is not None and joiner.rules is None


def test_a_start_signature_sent_to_the_joiner_is_unexpected() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    assert joiner.state is State.PLAY
    joiner.receive_data(forge(host, wire.StartMsg(sig=bytes(64))))
    with pytest.raises(RemoteProtocolError, match="unexpected start message"):
        drain(joiner)


def test_a_second_start_signature_must_be_the_same() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    mine = joiner._start_sigs[joiner.role]
    host.receive_data(forge(joiner, wire.StartMsg(sig=mine)))  # sent again: fine
    assert drain(host) == [] and host.error is None
    host.receive_data(forge(joiner, wire.StartMsg(sig=bytes(64))))
    with pytest.raises(RemoteProtocolError, match="a different start signature"):
        drain(host)


def test_an_unknown_resignation_reason_is_a_local_error() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    actor = host if host.match is not None and host.match.to_act == host.our_seat else joiner
    with pytest.raises(LocalProtocolError, match="unknown resignation reason 'bored'"):
        actor.send(Resign(reason="bored"))
    assert actor.state is State.PLAY


def test_a_hidden_decision_reports_its_engine_events_once() -> None:
    """With the hidden deal ``last_local_events`` stays empty, also after a decision of
    ours applied at once (``stop``, ``koikoi``) or a play that waits for the peer's
    draw key: every engine event is reported once, as ``HiddenProgress`` (a table
    that showed both showed a decision twice: a round page twice after ``stop``)."""
    from p2pkoikoi.session.events import ActionReceived, HiddenProgress, MatchStarted

    host, joiner = make_pair(RULES.with_settings(deal="hidden", rounds=2), label="lle")
    sides = (host, joiner)
    local: list[object] = []

    def tap(i: int, data: bytes) -> bytes:
        local.extend(sides[i].last_local_events)
        return data

    evs = run_pair(host, joiner, random_chooser(11), tap=tap)
    assert host.state is State.DONE and joiner.state is State.DONE
    assert local == []
    for s, got in zip(sides, evs, strict=True):
        assert s._hidden is not None
        reported = [
            e
            for ev in got
            if isinstance(ev, (MatchStarted, ActionReceived, HiddenProgress))
            for e in ev.events
        ]
        assert reported == list(s._hidden.events)


# ------------------------------------------------- survivors of the --seed 8 sample
def test_a_ping_nonce_longer_than_the_wire_allows_is_a_local_error() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    with pytest.raises(LocalProtocolError, match=f"a ping nonce is at most {wire.MAX_NONCE}"):
        host.send(Ping(b"n" * (wire.MAX_NONCE + 1)))
    joiner.receive_data(host.send(Ping(b"n" * wire.MAX_NONCE)))
    assert drain(joiner) == [Ping(b"n" * wire.MAX_NONCE)]


def test_an_action_after_the_match_is_unexpected() -> None:
    host, joiner = make_pair(RULES.with_settings(rounds=1), label="after")
    run_pair(host, joiner, random_chooser(3))
    assert host.state is State.DONE
    seq = len(host.record().actions) + 1
    msg = wire.ActionMsg(seq=seq, action="take 0", hash=bytes(32), sig=bytes(64))
    host.receive_data(forge(joiner, msg))
    with pytest.raises(RemoteProtocolError, match="unexpected action message from peer"):
        drain(host)


def test_an_abort_between_the_joiners_value_and_the_reveal_is_the_hosts_forfeit() -> None:
    host, joiner = make_pair(RULES)
    until_the_joiners_value(host, joiner)
    assert joiner.state is State.SEED and joiner.forfeit is None
    joiner.receive_data(forge(host, wire.AbortMsg(reason="stop")))
    with pytest.raises(RemoteProtocolError, match="program stopped: stop"):
        drain(joiner)
    assert joiner.forfeit is not None and joiner.forfeit.seat == 0
    assert "before revealing its own" in joiner.forfeit.reason


def test_a_resumed_session_keeps_the_resume_secret_for_the_next_resume() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    n_host, n_joiner = resumed(host, "mutants/h1"), resumed(joiner, "mutants/j1")
    assert n_host.resume_secret == host.resume_secret
    assert n_joiner.resume_secret == joiner.resume_secret
    run_pair(n_host, n_joiner)
    m_host, m_joiner = resumed(n_host, "mutants/h2"), resumed(n_joiner, "mutants/j2")
    run_pair(m_host, m_joiner, random_chooser(4))
    assert m_host.state is State.DONE and m_joiner.state is State.DONE


def test_a_host_that_lost_the_joiners_start_signature_checks_it_after_a_resume() -> None:
    """The joiner's start signature is over the transcript after the reveal; a host
    whose record lacks it gets it again after a resume and checks it against the
    reveal's transcript from its record."""
    host, joiner = make_pair(RULES)
    for _ in range(10):
        host.receive_data(joiner.data_to_send())
        drain(host)
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        if joiner.state is State.PLAY:
            break
    assert host.state is State.PLAY and joiner.state is State.PLAY
    joiner.data_to_send()  # the start signature is lost with the connection
    assert host.record().joiner.start_sig is None  # type: ignore[union-attr]
    sig = joiner.record().joiner.start_sig  # type: ignore[union-attr]
    assert sig is not None
    n_host, n_joiner = resumed(host, "mutants/ts-h"), resumed(joiner, "mutants/ts-j")
    run_pair(n_host, n_joiner)
    assert n_host.error is None and n_host.state is State.PLAY
    assert n_host.record().joiner.start_sig == sig  # type: ignore[union-attr]


def test_a_record_without_our_final_signature_resends_no_unsigned_over() -> None:
    """A finished record re-sends our final signature to a peer that lacks it; a
    record (still verifying, incomplete) that lost our own signature has none to
    re-send: the resume takes the peer's and sends no ``over`` without one."""
    host, joiner = make_pair(RULES.with_settings(rounds=1))
    run_pair(host, joiner, random_chooser(3))
    rec = host.record()
    assert rec.result is not None and rec.final_sigs[1] is not None
    lost = dataclasses.replace(rec, final_sigs=(None, rec.final_sigs[1]))
    report = verify_record(lost)
    assert report.ok and not report.complete
    n_host = Session.resume(
        lost,
        host.role,
        identity_key=det_key("host"),
        resume_secret=host.resume_secret,
        entropy=det_bytes("entropy/mutants/nosig-h"),
    )
    n_joiner = resumed(joiner, "mutants/nosig-j")
    ev_h, ev_j = run_pair(n_host, n_joiner)
    assert n_host.error is None and n_joiner.error is None
    assert n_host.state is State.DONE and n_joiner.state is State.DONE
    assert [type(e) for e in ev_h] == [Resumed, MatchOver] and [type(e) for e in ev_j] == [Resumed]
    assert n_host.final_signatures == (None, rec.final_sigs[1])


def test_a_code_joiner_is_told_when_the_hosts_hello_offers_no_code() -> None:
    # The joiner reads the host's hello first: a hello without the code's PAKE message
    # means the host made no code (or ended it), so the joiner says that itself.
    host, joiner = _code_pair(host_code=False)
    joiner.receive_data(host.data_to_send())
    with pytest.raises(RemoteProtocolError) as exc:
        drain(joiner)
    assert type(exc.value) is RemoteProtocolError
    assert str(exc.value) == (
        "the host does not accept a code now: ask it for a new code, or for the invite"
    )
    assert joiner.state is State.ERROR


def test_an_auth_after_the_handshake_is_unexpected() -> None:
    # The auth is the first encrypted message and comes once: another one during play
    # is refused as out of place (before its fields are even read).
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    assert host.state is State.PLAY
    host.receive_data(forge(joiner, wire.AuthMsg(name="Bob", key=bytes(32), sig=bytes(64))))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(host)
    assert str(exc.value) == "unexpected auth message from peer during play"
