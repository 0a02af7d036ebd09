"""Exact outcomes for session paths that a mutation run (issue 15) found untested:
the failed session's ``error``, ``waiting_for`` during a hidden deal, joining with a
short code, resume records that disagree in one field only, the host's rules count,
stray or changed start signatures, an unknown resignation reason, who needs which
secret, the first frame after the hellos, a decline out of place, a bad reveal (the
host's forfeit) and the side channel before the handshake.

It runs first in bench/mutation.py's TESTS for session.py: in memory, a few seconds."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import (
    CheatingError,
    LocalProtocolError,
    MatchOver,
    RemoteProtocolError,
    Resign,
    Resumed,
    ResumeError,
    SendAction,
    Session,
    State,
    WaitingFor,
    WrongSecretError,
    crypto,
    wire,
)
from p2pkoikoi.session.code import CODE_SECRET_BYTES, decode_code, encode_code
from p2pkoikoi.session.events import Ping
from p2pkoikoi.session.testing import (
    SECRET,
    det_bytes,
    det_key,
    drain,
    forge,
    make_pair,
    random_chooser,
    run_pair,
)
from p2pkoikoi.session.verify import verify_record

RULES = get_preset("online")


def rewrite_queue(s: Session, change: Callable[[wire.Message], wire.Message]) -> None:
    """Make ``s`` pass every message it sends through ``change`` (a modified program)."""
    queue = s._queue
    s._queue = lambda msg: queue(change(msg))  # type: ignore[method-assign]


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


def _resumed(old: Session, label: str) -> Session:
    return Session.resume(
        old.record(),
        old.role,
        identity_key=det_key(old.role.value),
        resume_secret=old.resume_secret,
        entropy=det_bytes("entropy/mutants/" + label),
    )


@pytest.mark.parametrize("field", ["tx", "hash"])
def test_resume_records_that_differ_in_one_field_are_refused(field: str) -> None:
    """A resume whose transcript alone, or state hash alone, differs at the same
    action is two records that disagree (validly signed by the reconnecting player)."""
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    n_host, n_joiner = _resumed(host, "h"), _resumed(joiner, "j")

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


def test_a_hidden_play_waiting_for_its_draw_key_reports_no_local_events_yet() -> None:
    """``last_local_events`` are the engine events of our last action; a hidden-deal
    play that waits for the peer's draw key has none yet, even when our previous
    action had some."""
    host, joiner = make_pair(RULES.with_settings(deal="hidden", rounds=1), label="lle")
    sides = (host, joiner)
    rng = random_chooser(11)
    acted: dict[int, tuple[int, bool]] = {}  # side -> (moves applied, had events before)
    waited_after_events = 0

    def choose(m):  # type: ignore[no-untyped-def]
        for i, s in enumerate(sides):
            if s.match is m and s.waiting_for is WaitingFor.LOCAL_ACTION:
                assert s._hidden is not None
                acted[i] = (s._hidden.applied, bool(s.last_local_events))
        return rng(m)

    def tap(i: int, data: bytes) -> bytes:
        nonlocal waited_after_events
        s = sides[i]
        if i in acted:
            applied, had_events = acted.pop(i)
            assert s._hidden is not None
            if s._hidden.applied == applied:  # our action waits for the peer's move
                assert s.last_local_events == ()
                waited_after_events += had_events
        return data

    run_pair(host, joiner, choose, tap=tap)
    assert host.state is State.DONE and joiner.state is State.DONE
    assert waited_after_events > 0


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
    for _ in range(10):
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        if joiner.record().joiner_value is not None:
            break
        host.receive_data(joiner.data_to_send())
        drain(host)
    assert joiner.state is State.SEED and joiner.forfeit is None
    joiner.receive_data(forge(host, wire.AbortMsg(reason="stop")))
    with pytest.raises(RemoteProtocolError, match="program stopped: stop"):
        drain(joiner)
    assert joiner.forfeit is not None and joiner.forfeit.seat == 0
    assert "before revealing its own" in joiner.forfeit.reason


def test_a_resumed_session_keeps_the_resume_secret_for_the_next_resume() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    n_host, n_joiner = _resumed(host, "h1"), _resumed(joiner, "j1")
    assert n_host.resume_secret == host.resume_secret
    assert n_joiner.resume_secret == joiner.resume_secret
    run_pair(n_host, n_joiner)
    m_host, m_joiner = _resumed(n_host, "h2"), _resumed(n_joiner, "j2")
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
    n_host, n_joiner = _resumed(host, "ts-h"), _resumed(joiner, "ts-j")
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
    n_joiner = _resumed(joiner, "nosig-j")
    ev_h, ev_j = run_pair(n_host, n_joiner)
    assert n_host.error is None and n_joiner.error is None
    assert n_host.state is State.DONE and n_joiner.state is State.DONE
    assert [type(e) for e in ev_h] == [Resumed, MatchOver] and [type(e) for e in ev_j] == [Resumed]
    assert n_host.final_signatures == (None, rec.final_sigs[1])


def test_each_side_needs_exactly_its_secrets_and_a_turn_limit_in_range() -> None:
    code = decode_code(encode_code(7, det_bytes("code", CODE_SECRET_BYTES)))

    def new(role: str, **kw: object) -> Session:
        args: dict[str, object] = dict(
            identity_key=det_key(role), name="Alice", entropy=det_bytes("e/" + role)
        )
        args.update(kw)
        return Session(role, **args)  # type: ignore[arg-type]

    with pytest.raises(LocalProtocolError, match="^the host needs its invite secret$"):
        new("host", rules=RULES, code=code)
    either = "^the joiner uses either an invite secret or a code$"
    with pytest.raises(LocalProtocolError, match=either):
        new("joiner", invite_secret=SECRET, code=code)
    with pytest.raises(LocalProtocolError, match=either):
        new("joiner")
    assert new("joiner", code=code).via == "code"
    assert new("joiner", invite_secret=SECRET).via == "invite"
    limit = f"^the turn limit must be 0..{wire.MAX_TURN_LIMIT} seconds$"
    for bad in (-1, wire.MAX_TURN_LIMIT + 1, True):
        with pytest.raises(LocalProtocolError, match=limit):
            new("host", invite_secret=SECRET, rules=RULES, turn_limit=bad)
    for good in (0, wire.MAX_TURN_LIMIT):
        assert new("host", invite_secret=SECRET, rules=RULES, turn_limit=good).turn_limit == good
    assert new("joiner", invite_secret=SECRET, turn_limit=30).turn_limit == 0  # the host's


def _joiner_waiting_for_the_reveal() -> tuple[Session, Session]:
    host, joiner = make_pair(RULES)
    for _ in range(10):
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        if joiner.record().joiner_value is not None:
            break
        host.receive_data(joiner.data_to_send())
        drain(host)
    assert joiner.state is State.SEED and joiner.forfeit is None
    return host, joiner


def test_a_reveal_that_does_not_open_the_commitment_is_the_hosts_forfeit() -> None:
    """Any failure while the joiner waits for the reveal (here a reveal of another
    value) ends the match as the host's forfeit: the joiner's record says so, signed."""
    host, joiner = _joiner_waiting_for_the_reveal()
    joiner.receive_data(forge(host, wire.RevealMsg(r=bytes(32), sig=bytes(64))))
    with pytest.raises(RemoteProtocolError, match="does not open its commitment"):
        drain(joiner)
    assert joiner.state is State.ERROR and joiner.forfeit is not None
    assert (joiner.forfeit.seat, joiner.forfeit.reason) == (
        0,
        "the host stopped after the joiner's value, before revealing its own",
    )
    report = verify_record(joiner.record())
    assert report.ok and [c.name for c in report.checks][-1] == "forfeit"


def test_is_hidden_says_whether_a_hidden_deal_is_on() -> None:
    open_h, open_j = make_pair(RULES, label="open")
    hidden_h, hidden_j = make_pair(RULES.with_settings(deal="hidden", rounds=1), label="hid")
    assert hidden_h.is_hidden is False  # before the match starts
    run_pair(open_h, open_j)
    run_pair(hidden_h, hidden_j)
    assert open_h.state is State.PLAY and hidden_h.state is State.PLAY
    assert open_h.is_hidden is False and open_j.is_hidden is False
    assert hidden_h.is_hidden is True and hidden_j.is_hidden is True


def _hellos_exchanged() -> tuple[Session, Session]:
    """Both hellos delivered; the host has keys but has sent nothing encrypted yet
    (the joiner's auth, already queued, is dropped)."""
    host, joiner = make_pair(RULES, auto_accept=False)
    joiner.receive_data(host.data_to_send())
    host.receive_data(joiner.data_to_send())
    assert drain(joiner) == [] and drain(host) == []
    joiner.data_to_send()  # its auth: never delivered
    assert host.state is State.AUTH and joiner.state is State.AUTH
    return host, joiner


def test_a_plaintext_abort_instead_of_the_first_frame_is_reported_not_counted() -> None:
    host, joiner = _hellos_exchanged()
    joiner.receive_data(wire.encode_frame(wire.encode_message(wire.AbortMsg(reason="busy"))))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(joiner)
    assert type(exc.value) is RemoteProtocolError  # not a wrong secret
    assert str(exc.value) == "the other player's program stopped: busy"
    assert joiner.data_to_send() == b""  # the session closed: no abort back


def test_a_first_frame_that_decrypts_must_be_the_auth() -> None:
    host, joiner = _hellos_exchanged()
    joiner.receive_data(forge(host, wire.ChatMsg(text="hello")))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(joiner)
    assert str(exc.value) == "bad message from peer: expected auth first, got chat"


def test_a_first_frame_that_does_not_decrypt_names_the_joiners_secret() -> None:
    host, joiner = _hellos_exchanged()
    joiner.receive_data(wire.encode_frame(bytes(40)))
    with pytest.raises(WrongSecretError) as exc:
        drain(joiner)
    assert str(exc.value) == (
        "the host's first message does not decrypt: it does not hold this invite's secret"
        " (a wrong code or invite, or not the host you meant)"
    )


@pytest.mark.parametrize("to", ["host in play", "joiner deciding"])
def test_a_decline_is_for_the_host_waiting_for_the_decision_only(to: str) -> None:
    if to == "host in play":
        host, joiner = make_pair(RULES)
        run_pair(host, joiner)
        receiver, sender, during = host, joiner, "play"
    else:
        host, joiner = make_pair(RULES, auto_accept=False)
        run_pair(host, joiner)  # the joiner's user has not decided yet
        receiver, sender, during = joiner, host, "rules"
    receiver.receive_data(forge(sender, wire.DeclineMsg(reason="no", expected=None)))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(receiver)
    assert str(exc.value) == f"unexpected decline message from peer during {during}"


def test_result_record_is_the_records_result_once_the_match_is_over() -> None:
    host, joiner = make_pair(RULES.with_settings(rounds=1), label="result")
    run_pair(host, joiner)
    assert host.result_record is None and joiner.result_record is None
    run_pair(host, joiner, random_chooser(5))
    for s in (host, joiner):
        assert s.state is State.DONE and s.result_record is not None
        assert s.result_record == s.record().result
        assert s.result_record.transcript_hash == s.transcript_hash


def test_the_side_channel_waits_for_the_handshake() -> None:
    """Nothing but the hello may go out before our first encrypted frame (a fast,
    exact test: the fuzzing in test_session_errors.py finds this only late)."""
    from p2pkoikoi.session import Goodbye, Pong, SendChat

    host, _ = make_pair(RULES)
    assert host.data_to_send()  # the hello
    for event, message in (
        (Ping(b"n"), "cannot ping before the handshake"),
        (Pong(b"n"), "cannot ping before the handshake"),
        (SendChat("hi"), "cannot chat before the handshake"),
    ):
        with pytest.raises(LocalProtocolError, match=f"^{message}$"):
            host.send(event)
    assert host.data_to_send() == b""
    assert host.send(Goodbye()) == b""  # no bye: the peer shares no keys with us yet
    assert host.state is State.CLOSED


def test_a_withheld_card_move_is_the_peers_forfeit_only_when_one_is_due() -> None:
    host, joiner = make_pair(RULES.with_settings(deal="hidden", rounds=1), label="withheld")
    run_pair(host, joiner, None)  # the deal's masking steps; the first decision waits
    actor = next(s for s in (host, joiner) if s.waiting_for is WaitingFor.LOCAL_ACTION)
    other = joiner if actor is host else host
    for s in (actor, other):  # a decision is due, no card move: no forfeit
        s.peer_withheld("late")
        assert s.forfeit is None
    actor.send(SendAction(random_chooser(1)(actor.match)))  # the draw key never comes
    assert actor.waiting_for is WaitingFor.PEER_CARDS
    actor.peer_withheld("x" * 300)
    assert actor.forfeit is not None
    assert (actor.forfeit.seat, actor.forfeit.reason) == (other.our_seat, "x" * 200)
    first = actor.forfeit
    actor.peer_withheld("again")  # the first forfeit stands
    assert actor.forfeit is first


@pytest.mark.parametrize(
    ("sender", "change", "message"),
    [
        ("joiner", {"via": None}, "bad hello from the joiner: it lacks 'via'"),
        (
            "joiner",
            {"pake_code": bytes(33)},
            "bad hello from the joiner: 'pake_code' is the host's",
        ),
        ("host", {"via": "invite"}, "bad hello from the host: 'via' is the joiner's"),
        ("joiner", {"via": "resume"}, "bad hello from the joiner: 'via' does not fit 'resume'"),
        (
            "host",
            {"resume": bytes(32)},
            "the other player wants to resume an earlier match, not start a new one",
        ),
    ],
)
def test_a_hello_with_the_other_roles_fields_is_refused(
    sender: str, change: dict[str, object], message: str
) -> None:
    host, joiner = make_pair(RULES)
    src, dst = (host, joiner) if sender == "host" else (joiner, host)
    payload, rest = wire.decode_frame(src.data_to_send())
    assert payload is not None and rest == b""
    hello = wire.decode_message(payload)
    bad = dataclasses.replace(hello, **change)  # type: ignore[type-var]
    dst.receive_data(wire.encode_frame(wire.encode_message(bad)))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(dst)
    assert type(exc.value) is RemoteProtocolError and str(exc.value) == message
    assert dst.state is State.ERROR


def test_out_of_turn_in_a_hidden_match_is_a_local_error() -> None:
    host, joiner = make_pair(RULES.with_settings(deal="hidden", rounds=1), label="hturn")
    run_pair(host, joiner, None)  # the deal's masking steps; the first decision waits
    waiting = next(s for s in (host, joiner) if s.waiting_for is WaitingFor.PEER_ACTION)
    m = waiting.match
    assert m is not None and m.to_act != waiting.our_seat
    with pytest.raises(LocalProtocolError, match="^cannot act: it is not your turn$"):
        waiting.send(SendAction(m.legal_actions()[0]))
    with pytest.raises(LocalProtocolError, match="^cannot resign: it is not your turn$"):
        waiting.send(Resign())
    assert waiting.data_to_send() == b"" and waiting.seq == waiting.record().actions[-1].seq


def test_a_record_cut_before_our_final_signature_resumes_and_signs_after_the_handshake() -> None:
    """We crashed between the last action and our final signature: the resumed session
    signs the result at once but sends ``over`` only after the resume handshake."""
    host, joiner = make_pair(RULES.with_settings(rounds=1), label="crash-final")
    run_pair(host, joiner, random_chooser(8))
    assert host.state is State.DONE
    whole = host.record()
    cut = dataclasses.replace(whole, result=None, final_sigs=(None, None))
    new_host = Session.resume(
        cut,
        "host",
        identity_key=det_key("hostcrash-final"),
        resume_secret=host.resume_secret,  # type: ignore[arg-type]
        entropy=det_bytes("entropy/crash-final/h"),
    )
    assert new_host.state is State.HELLO and new_host.result_record == whole.result
    hello, rest = wire.decode_frame(new_host.data_to_send())
    assert hello is not None and rest == b""  # the hello alone: no over before the keys
    new_host._out = bytearray(wire.encode_frame(hello))  # (put it back)
    new_joiner = _resumed_as(joiner, "joinercrash-final", "crash-final/j")
    ev_h, _ = run_pair(new_host, new_joiner)
    assert [type(e) for e in ev_h] == [Resumed, MatchOver]
    assert new_host.state is State.DONE and new_joiner.state is State.DONE
    assert new_host.record() == whole == new_joiner.record()


def _resumed_as(old: Session, key: str, label: str) -> Session:
    return Session.resume(
        old.record(),
        old.role,
        identity_key=det_key(key),
        resume_secret=old.resume_secret,  # type: ignore[arg-type]
        entropy=det_bytes("entropy/" + label),
    )


def _start_replaced_by(change: Callable[[wire.Message], wire.Message]) -> tuple[Session, Session]:
    """A pair whose joiner's start message goes out through ``change`` (a modified
    program); the frame counter stays right, so only the content differs."""
    host, joiner = make_pair(RULES, label="start")
    rewrite_queue(joiner, lambda m: change(m) if isinstance(m, wire.StartMsg) else m)
    return host, joiner


def test_a_forged_start_signature_is_cheating() -> None:
    host, joiner = _start_replaced_by(lambda m: wire.StartMsg(sig=bytes(64)))
    with pytest.raises(CheatingError) as exc:
        run_pair(host, joiner)
    assert str(exc.value) == "the joiner's start signature is invalid (forged)"
    assert host.record().joiner.start_sig is None  # type: ignore[union-attr]


def test_no_move_of_the_joiner_counts_before_its_start_signature() -> None:
    host, joiner = _start_replaced_by(lambda m: wire.PingMsg(nonce=b"no start"))
    with pytest.raises(RemoteProtocolError) as exc:
        run_pair(host, joiner, random_chooser(1))
    assert re.fullmatch(r"the joiner sent action \d+ before its start signature", str(exc.value))
    assert host.state is State.ERROR
    assert all(a.seat == 0 for a in host.record().actions)  # none of the joiner's


def test_rules_the_host_sends_out_of_canonical_form_are_refused() -> None:
    host, joiner = make_pair(RULES, label="canon")
    spaced = RULES.encode().replace(b",", b", ", 1)  # the same rules, another spelling
    assert spaced != RULES.encode()
    rewrite_queue(
        host,
        lambda m: dataclasses.replace(m, rules=spaced) if isinstance(m, wire.AuthMsg) else m,
    )
    with pytest.raises(RemoteProtocolError) as exc:
        run_pair(host, joiner)
    assert str(exc.value) == "bad rules from the host: not in canonical form"
    assert joiner.state is State.ERROR


def test_a_second_value_from_the_joiner_is_unexpected() -> None:
    host, joiner = make_pair(RULES, label="value")
    run_pair(host, joiner)
    assert host.state is State.PLAY
    before = host.record()
    host.receive_data(forge(joiner, wire.ValueMsg(r=bytes(32))))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(host)
    assert str(exc.value) == "unexpected value message from peer during play"
    assert host.record().joiner_value == before.joiner_value


def test_only_send_events_can_be_sent() -> None:
    host, joiner = make_pair(RULES)
    run_pair(host, joiner)
    with pytest.raises(LocalProtocolError, match="^cannot send MatchOver$"):
        host.send(MatchOver((0, 0), 0, bytes(32), bytes(32)))  # type: ignore[arg-type]
    assert host.state is State.PLAY and host.data_to_send() == b""


@pytest.mark.parametrize(
    ("sender", "change", "message"),
    [
        ("joiner", {"turn_limit": 0}, "bad auth message from joiner: it proposes rules"),
        ("joiner", {"rounds": 1}, "bad auth message from joiner: it proposes rules"),
        ("host", {"fp": None}, "bad auth message from host: it lacks the rules"),
        ("host", {"fp": "0" * 64}, "bad auth message from host: rules fingerprint mismatch"),
        (
            "joiner",
            {"sig": bytes(64)},
            "the other player's identity signature is invalid: the connection may be under attack",
        ),
        (
            "host",
            {"sig": bytes(64)},
            "the other player's identity signature is invalid: the connection may be under attack",
        ),
    ],
)
def test_an_auth_message_out_of_its_role_or_unsigned_is_refused(
    sender: str, change: dict[str, object], message: str
) -> None:
    host, joiner = make_pair(RULES, label="auth")
    src, dst = (host, joiner) if sender == "host" else (joiner, host)
    rewrite_queue(
        src, lambda m: dataclasses.replace(m, **change) if isinstance(m, wire.AuthMsg) else m
    )
    with pytest.raises(RemoteProtocolError) as exc:
        run_pair(host, joiner)
    assert str(exc.value) == message
    assert dst.state is State.ERROR and dst.peer_key is None
