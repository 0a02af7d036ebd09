"""Session limits and rarely taken paths, each with its exact outcome: the flood guard,
the invite secret's minimum length, a decline's ``expected`` rules, resuming a record
that holds a resignation, and a resume whose catch-up ends on another transcript."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import (
    LocalProtocolError,
    MatchOver,
    PeerResigned,
    RemoteProtocolError,
    Resign,
    Resumed,
    ResumeError,
    RulesMismatchError,
    SendAction,
    Session,
    State,
    wire,
)
from p2pkoikoi.session.events import ConnectionClosed, Ping
from p2pkoikoi.session.session import MAX_BUFFER, SECRET_MIN
from p2pkoikoi.session.testing import (
    SECRET,
    det_bytes,
    det_key,
    drain,
    forge,
    make_pair,
    random_chooser,
    resumed,
    run_pair,
    until_the_joiners_value,
)
from p2pkoikoi.session.verify.check import verify_record

RULES = get_preset("online")


def playing() -> tuple[Session, Session]:
    """(actor, other) at the first decision of a match."""
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    assert host.state is State.PLAY and host.match is not None
    return (host, joiner) if host.match.to_act == 0 else (joiner, host)


def pings(sender: Session, size: int) -> bytes:
    """Valid ping frames from ``sender``, cut to exactly ``size`` bytes."""
    out = bytearray()
    while len(out) < size:
        out += forge(sender, wire.PingMsg(nonce=b"x" * 32))
    return bytes(out[:size])


# ---------------------------------------------------------------------- the flood guard
def test_a_buffer_at_the_limit_is_not_a_flood() -> None:
    actor, other = playing()
    other.receive_data(pings(actor, MAX_BUFFER))  # all at once, before reading anything
    events = drain(other)
    assert len(events) == MAX_BUFFER // len(forge(actor, wire.PingMsg(nonce=b"x" * 32)))
    assert all(isinstance(e, Ping) for e in events)
    assert other.state is State.PLAY


def test_one_byte_over_the_limit_is_refused_as_a_flood() -> None:
    actor, other = playing()
    other.receive_data(pings(actor, MAX_BUFFER + 1))
    assert len(other._in) == 0  # nothing of a flood is kept
    with pytest.raises(RemoteProtocolError, match="peer sent too much data"):
        drain(other)
    assert other.state is State.ERROR
    assert other.data_to_send()  # the abort that tells the peer why
    other.receive_data(b"more")  # ignored from now on
    with pytest.raises(RemoteProtocolError, match="peer sent too much data"):
        other.next_event()


def test_events_decoded_before_a_flood_are_still_delivered() -> None:
    actor, other = playing()
    other.receive_data(pings(actor, 200))
    (first,) = drain(other)[:1]
    assert isinstance(first, Ping)
    other.receive_data(pings(actor, MAX_BUFFER + 1))
    with pytest.raises(RemoteProtocolError, match="peer sent too much data"):
        drain(other)


# ---------------------------------------------------------------------- invite secret
def test_invite_secret_minimum_length() -> None:
    assert SECRET_MIN == 16
    with pytest.raises(LocalProtocolError, match="at least 16 bytes"):
        make_pair(RULES, secret=bytes(range(15)))
    host, joiner = make_pair(RULES, secret=bytes(range(16)))
    run_pair(host, joiner)
    assert host.state is State.PLAY and joiner.state is State.PLAY


# ---------------------------------------------------------------------- a decline's rules
def _host_waiting_for_the_decision() -> tuple[Session, Session]:
    host, joiner = make_pair(RULES, auto_accept=False)
    joiner.receive_data(host.data_to_send())
    host.receive_data(joiner.data_to_send())
    drain(host)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    host.receive_data(joiner.data_to_send())  # the joiner's auth
    drain(host)
    assert host.state is State.RULES
    return host, joiner


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        (None, "the joiner declined the rules: too long"),
        (b"\x00 not a rule set", "the joiner declined the rules: too long"),
        ("same", "the joiner declined the rules: too long"),
        ("other", "the joiner expects other rules:"),
    ],
)
def test_decline_names_other_rules_only_when_they_decode_and_differ(
    expected: object, message: str
) -> None:
    host, joiner = _host_waiting_for_the_decision()
    if expected == "same":
        expected = RULES.encode()
    elif expected == "other":
        expected = RULES.with_settings(rounds=12).encode()
    host.receive_data(forge(joiner, wire.DeclineMsg(reason="too long", expected=expected)))  # type: ignore[arg-type]
    with pytest.raises(RulesMismatchError) as exc:
        drain(host)
    assert str(exc.value).startswith(message)
    if message.startswith("the joiner expects"):
        assert "rounds" in str(exc.value) and "12" in str(exc.value)


# ---------------------------------------------------------------------- resume
def _play_some(host: Session, joiner: Session, turns: int) -> None:
    choose = random_chooser(7)
    sides = (host, joiner)
    for _ in range(turns):
        actor = next(s for s in sides if s.match is not None and s.match.to_act == s.our_seat)
        other = joiner if actor is host else host
        other.receive_data(actor.send(SendAction(choose(actor.match))))  # type: ignore[arg-type]
        drain(other)


def test_resuming_a_record_that_holds_a_resignation() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    _play_some(host, joiner, 3)
    actor = host if host.match.to_act == 0 else joiner  # type: ignore[union-attr]
    other = joiner if actor is host else host
    actor.send(Resign())  # the connection breaks: the other side never hears of it
    assert actor.state is State.FINISH and actor.record().actions[-1].action == "resign"
    n_actor, n_other = resumed(actor, "edges/a"), resumed(other, "edges/o")
    assert n_actor.match is not None and n_actor.match.is_over
    assert n_actor.match.winner == other.our_seat
    ev = run_pair(*((n_actor, n_other) if actor is host else (n_other, n_actor)))
    other_events = ev[1] if actor is host else ev[0]
    assert isinstance(other_events[0], Resumed)
    assert [type(e) for e in other_events[1:3]] == [PeerResigned, MatchOver]
    assert other_events[1].seat == actor.our_seat  # type: ignore[attr-defined]
    for s in (n_actor, n_other):
        assert s.state is State.DONE
        report = verify_record(s.record())
        assert report.ok and report.complete
        assert s.record().result.winner == other.our_seat  # type: ignore[union-attr]


def test_a_catch_up_that_ends_on_another_transcript_is_refused() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    _play_some(host, joiner, 2)
    actor = host if host.match.to_act == 0 else joiner  # type: ignore[union-attr]
    other = joiner if actor is host else host
    actor.send(SendAction(random_chooser(1)(actor.match)))  # type: ignore[arg-type]  # lost
    assert actor.seq == other.seq + 1
    ahead, behind = resumed(actor, "edges/ahead"), resumed(other, "edges/behind")
    ahead._transcript = bytes(32)  # it claims a transcript the re-sent action cannot reach
    with pytest.raises(
        ResumeError, match=f"after catching up to action {actor.seq} the transcripts differ"
    ):
        # (as many exchanges as the resume takes: which side speaks first depends on the
        # roles, and so on the seed)
        for _ in range(4):
            behind.receive_data(ahead.data_to_send())
            drain(behind)
            ahead.receive_data(behind.data_to_send())
            drain(ahead)


# ---------------------------------------------------------------------- construction
def test_constructor_refuses_misuse() -> None:
    def new(role: str, **kw: object) -> Session:
        args: dict[str, object] = dict(
            identity_key=det_key(role),
            invite_secret=SECRET,
            name="Alice",
            entropy=det_bytes("e/" + role),
        )
        if role == "host":
            args["rules"] = RULES
        args.update(kw)
        return Session(role, **args)  # type: ignore[arg-type]

    with pytest.raises(LocalProtocolError, match="the host must propose rules"):
        new("host", rules=None)
    with pytest.raises(LocalProtocolError, match="expected_rules is for the joiner"):
        new("host", expected_rules=RULES)
    with pytest.raises(LocalProtocolError, match="the joiner does not propose rules"):
        new("joiner", rules=RULES)
    with pytest.raises(LocalProtocolError, match="Ed25519 private key"):
        new("host", identity_key=b"k" * 32)
    with pytest.raises(LocalProtocolError, match="entropy must be at least 64 bytes"):
        new("host", entropy=bytes(63))
    for bad in ("", " Alice", "Al\nice", "x" * (wire.MAX_NAME + 1)):
        with pytest.raises(LocalProtocolError, match="player name"):
            new("host", name=bad)
    assert new("host", name="x" * wire.MAX_NAME).name == "x" * wire.MAX_NAME


def test_longer_entropy_still_makes_32_byte_values() -> None:
    host = Session(
        "host",
        identity_key=det_key("h"),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("long/h", 100),
        rules=RULES,
    )
    joiner = Session(
        "joiner",
        identity_key=det_key("j"),
        invite_secret=SECRET,
        name="Bob",
        entropy=det_bytes("long/j", 100),
        expected_rules=RULES,
    )
    run_pair(host, joiner, random_chooser(3))
    rec = host.record()
    assert rec.host_value == det_bytes("long/h", 100)[32:64]
    assert rec.joiner_value == det_bytes("long/j", 100)[32:64]
    assert host.state is State.DONE and verify_record(rec).complete
    assert host.transcript_hash == joiner.transcript_hash == rec.result.transcript_hash  # type: ignore[union-attr]


def test_waiting_for_at_every_step() -> None:
    from p2pkoikoi.session import AcceptRules, WaitingFor

    host, joiner = make_pair(RULES, auto_accept=False)
    assert host.waiting_for is joiner.waiting_for is WaitingFor.PEER_HELLO
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    assert joiner.waiting_for is WaitingFor.PEER_AUTH
    host.receive_data(joiner.data_to_send())
    drain(host)
    assert host.waiting_for is WaitingFor.PEER_RULES_DECISION
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    assert joiner.waiting_for is WaitingFor.LOCAL_RULES_DECISION
    host.receive_data(joiner.send(AcceptRules()))
    drain(joiner)
    assert joiner.waiting_for is WaitingFor.COMMIT
    drain(host)
    assert host.waiting_for is WaitingFor.JOINER_VALUE
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    assert joiner.waiting_for is WaitingFor.REVEAL
    host.receive_data(joiner.data_to_send())
    drain(host)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    assert host.match is not None
    actor, other = (host, joiner) if host.match.to_act == 0 else (joiner, host)
    assert actor.waiting_for is WaitingFor.LOCAL_ACTION
    assert other.waiting_for is WaitingFor.PEER_ACTION
    other.receive_data(actor.send(Resign()))
    assert actor.waiting_for is WaitingFor.PEER_FINAL
    drain(other)
    actor.receive_data(other.data_to_send())
    drain(actor)
    assert actor.waiting_for is other.waiting_for is WaitingFor.NOTHING
    # a resumed session waits for the peer's resume after the hellos
    n_actor, n_other = resumed(actor, "edges/w1"), resumed(other, "edges/w2")
    n_other.receive_data(n_actor.data_to_send())
    drain(n_other)
    assert n_other.waiting_for is WaitingFor.PEER_RESUME


def test_receive_data_after_the_end_of_the_stream_is_a_local_error() -> None:
    _, joiner = make_pair(RULES)
    joiner.receive_data(b"")
    joiner.receive_data(b"")  # saying it twice is fine
    with pytest.raises(LocalProtocolError, match="receive_data after end of stream"):
        joiner.receive_data(b"x")


def test_a_second_hello_inside_the_encrypted_stream() -> None:
    actor, other = playing()
    hello = wire.HelloMsg(role=actor.role.value, program="x", eph=bytes(32), pake=bytes(33))
    other.receive_data(forge(actor, hello))
    with pytest.raises(RemoteProtocolError, match="bad message from peer: unexpected hello"):
        drain(other)


def test_a_peer_that_claims_actions_after_the_end_is_refused() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner, random_chooser(2))
    assert host.state is State.DONE
    n_host, n_joiner = resumed(host, "edges/end-h"), resumed(joiner, "edges/end-j")
    # the joiner's resume claims one more action than the finished match has
    n_joiner._seq += 1
    n_joiner._tx_at.append(bytes(32))
    n_joiner._hash_at.append(bytes(32))
    with pytest.raises(ResumeError, match="claims actions after the end of the match"):
        run_pair(n_host, n_joiner)
    assert n_host.state is State.ERROR


def test_bye_closes_the_session_and_nothing_after_it_is_read() -> None:
    from p2pkoikoi.session import ConnectionClosed, Goodbye

    actor, other = playing()
    other.receive_data(actor.send(Goodbye()) + forge(actor, wire.PingMsg(nonce=b"late")))
    assert drain(other) == [
        ConnectionClosed(clean=False, reason="the other player left before the match ended")
    ]
    assert other.state is State.CLOSED and actor.state is State.CLOSED
    with pytest.raises(LocalProtocolError, match="the session is closed"):
        actor.send(Goodbye())


def test_last_local_events_are_the_engine_events_of_our_action() -> None:
    actor, _ = playing()
    assert actor.last_local_events == ()  # nothing played yet
    m = actor.match
    assert m is not None
    action = m.legal_actions()[0]
    _, events = m.apply(action)
    actor.send(SendAction(action))
    assert actor.last_local_events == events and events


def test_a_failed_session_keeps_no_unread_bytes() -> None:
    actor, other = playing()
    frame = bytearray(forge(actor, wire.PingMsg(nonce=b"a")))
    frame[-1] ^= 1  # fails authentication
    other.receive_data(bytes(frame) + forge(actor, wire.PingMsg(nonce=b"b"))[:10])
    with pytest.raises(RemoteProtocolError, match="frame failed authentication"):
        drain(other)
    assert len(other._in) == 0


def test_resume_refuses_another_match_and_a_record_that_does_not_verify() -> None:
    import dataclasses

    a_host, a_joiner = make_pair(RULES)
    run_pair(a_host, a_joiner)
    _play_some(a_host, a_joiner, 2)
    b_host, b_joiner = make_pair(RULES, label="other")  # another match
    run_pair(b_host, b_joiner)
    n_a = resumed(a_host, "edges/a")
    n_b = Session.resume(
        b_joiner.record(),
        "joiner",
        identity_key=det_key("joinerother"),
        resume_secret=b_joiner.resume_secret,
        entropy=det_bytes("b"),
    )
    n_a.receive_data(n_b.data_to_send())
    with pytest.raises(ResumeError, match="the other player resumes a different match"):
        drain(n_a)
    rec = a_host.record()
    bad = dataclasses.replace(
        rec,
        actions=(dataclasses.replace(rec.actions[0], sig=bytes(64)), *rec.actions[1:]),
    )
    with pytest.raises(
        LocalProtocolError, match=r"the record does not verify \(action 1 signature"
    ):
        Session.resume(
            bad,
            "host",
            identity_key=det_key("host"),
            resume_secret=a_host.resume_secret,
            entropy=det_bytes("x"),
        )
    early = dataclasses.replace(rec, host_value=None)
    with pytest.raises(LocalProtocolError, match="stops before the match started"):
        Session.resume(
            early,
            "host",
            identity_key=det_key("host"),
            resume_secret=a_host.resume_secret,
            entropy=det_bytes("x"),
        )


def test_the_flood_limit_is_four_maximal_frames_and_above_one_read() -> None:
    from p2pkoikoi.transport.limits import RECEIVE_SIZE

    # a transport that drains after each read holds at most one read plus a partial frame
    assert MAX_BUFFER == 4 * (wire.MAX_FRAME + wire.HEADER) == 262_160
    assert MAX_BUFFER > RECEIVE_SIZE + wire.MAX_FRAME + wire.HEADER


def test_a_new_session_before_any_data() -> None:
    host, joiner = make_pair(RULES)
    for s in (host, joiner):
        assert s.peer_name is None and s.peer_key is None and s.session_id is None
        assert s.transcript_hash == b"" and s.seq == 0 and s.match is None
        assert s.error is None and s.state is State.HELLO
        assert s.code is None  # joined by invite, not by a short code


def test_joiner_started_and_a_forfeit_only_between_value_and_reveal() -> None:
    host, joiner = make_pair(RULES)
    assert not host.joiner_started
    # the joiner gets the commitment and sends its value; the reveal never comes
    until_the_joiners_value(host, joiner)
    assert joiner.state is State.SEED and joiner.forfeit is None
    joiner.peer_gone()
    assert joiner.forfeit is not None and joiner.forfeit.seat == 0
    assert "before revealing its own" in joiner.forfeit.reason
    # a match in play: a broken connection is no forfeit
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    assert host.joiner_started and joiner.state is State.PLAY
    joiner.peer_gone()
    host.peer_gone()
    assert joiner.forfeit is None and host.forfeit is None


def test_an_end_in_the_seed_phase_before_the_joiners_value_is_no_forfeit() -> None:
    """The host's forfeit needs the joiner's value out: before it (the commitment not yet
    sent, or not yet answered) the host has seen nothing and an end is only an end."""
    host, joiner = make_pair(RULES)
    # up to the joiner's accept: both in SEED, the host's commitment not yet delivered
    for _ in range(10):
        host.receive_data(joiner.data_to_send())
        drain(host)
        if host.state is State.SEED:
            break
        joiner.receive_data(host.data_to_send())
        drain(joiner)
    assert host.state is State.SEED and joiner.state is State.SEED
    assert joiner.record().commitment is None and joiner.record().joiner_value is None
    joiner.peer_gone()
    host.peer_gone()
    joiner.receive_data(b"")
    assert isinstance(drain(joiner)[-1], ConnectionClosed)
    assert joiner.forfeit is None and host.forfeit is None
    assert joiner.record().forfeit is None
