"""Exact outcomes for session paths that the second mutation pass (issue 15) found
untested: who needs which secret, hellos and auths that carry the other role's fields
or no valid signature, the first frame after the hellos, a decline out of place, a
forged or missing start signature, rules out of canonical form, a second value, a bad
reveal (the host's forfeit), the side channel before the handshake, a withheld card
move, out of turn in a hidden match, and a record cut before our final signature.

It runs right after test_session_mutants.py in bench/mutation.py's TESTS for
session.py: in memory, a few seconds.
"""

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
    SendAction,
    Session,
    State,
    WaitingFor,
    WrongSecretError,
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
    until_the_joiners_value(host, joiner)
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
    new_joiner = resumed(joiner, "crash-final/j", key="joinercrash-final")
    ev_h, _ = run_pair(new_host, new_joiner)
    assert [type(e) for e in ev_h] == [Resumed, MatchOver]
    assert new_host.state is State.DONE and new_joiner.state is State.DONE
    assert new_host.record() == whole == new_joiner.record()


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


@pytest.mark.parametrize("to", ["joiner deciding", "host in play"])
def test_an_accept_is_for_the_host_waiting_for_the_decision_only(to: str) -> None:
    host, joiner = make_pair(RULES, auto_accept=(to == "host in play"), label="accept")
    run_pair(host, joiner)
    if to == "host in play":
        receiver, sender, during = host, joiner, "play"
    else:
        receiver, sender, during = joiner, host, "rules"
    receiver.receive_data(forge(sender, wire.AcceptMsg(fp=RULES.fingerprint())))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(receiver)
    assert str(exc.value) == f"unexpected accept message from peer during {during}"


def test_an_accept_of_other_rules_is_refused() -> None:
    host, joiner = make_pair(RULES, label="accept-fp")
    rewrite_queue(
        joiner,
        lambda m: wire.AcceptMsg(fp="0" * 64) if isinstance(m, wire.AcceptMsg) else m,
    )
    with pytest.raises(RemoteProtocolError) as exc:
        run_pair(host, joiner)
    assert str(exc.value) == "the joiner accepted rules other than the ones proposed"
    assert host.state is State.ERROR and host.record().commitment is None


def test_a_reveal_with_a_forged_start_signature_is_cheating() -> None:
    host, joiner = make_pair(RULES, label="reveal-sig")
    rewrite_queue(
        host,
        lambda m: dataclasses.replace(m, sig=bytes(64)) if isinstance(m, wire.RevealMsg) else m,
    )
    with pytest.raises(CheatingError) as exc:
        run_pair(host, joiner)
    assert str(exc.value) == "the host's start signature is invalid (forged)"
    assert joiner.seed is None and joiner.match is None


def test_a_deal_that_ends_the_match_at_once_is_signed_at_once() -> None:
    """A one-round match whose only deal gives a hand yaku is over when it starts
    (the label is one whose seed deals one under protocol version 3): both sides sign the result at once."""
    rules = get_preset("nintendo").with_settings(rounds=1)
    host, joiner = make_pair(rules, label="over21")  # (the seed covers the hellos: v3)
    ev_h, ev_j = run_pair(host, joiner)
    for s, ev in ((host, ev_h), (joiner, ev_j)):
        kinds = [type(e).__name__ for e in ev]
        assert kinds[-2:] == ["MatchStarted", "MatchOver"], kinds
        assert s.state is State.DONE and s.seq == 0
        rec = s.record()
        assert rec.actions == () and rec.is_complete and verify_record(rec).complete
    assert host.record() == joiner.record()


def test_a_rematch_value_is_the_first_32_bytes_of_the_offers_entropy() -> None:
    from p2pkoikoi.session.events import OfferRematch

    rules = get_preset("nintendo").with_settings(rounds=1)
    host, joiner = make_pair(rules, label="again64")
    run_pair(host, joiner, random_chooser(3))
    long_h, long_j = bytes(range(64)), bytes(range(100, 164))
    joiner.receive_data(host.send(OfferRematch(long_h)))
    drain(joiner)
    host.receive_data(joiner.send(OfferRematch(long_j)))
    run_pair(host, joiner, random_chooser(4))
    rec = host.record()
    assert rec.match_number == 2 and rec.is_complete and rec == joiner.record()
    assert rec.host_value == long_h[:32] and rec.joiner_value == long_j[:32]


@pytest.mark.parametrize("to", ["host", "joiner"])
def test_a_reveal_after_the_start_or_to_the_host_is_unexpected(to: str) -> None:
    """The reveal opens the commitment once, host to joiner, in the seed exchange:
    a replay of the host's own value (which does open the commitment) during play
    is out of place, not a forged signature."""
    host, joiner = make_pair(RULES, label="reveal-late")
    run_pair(host, joiner)
    assert host.state is State.PLAY and joiner.state is State.PLAY
    value = joiner.record().host_value
    assert value is not None
    target, sender = (host, joiner) if to == "host" else (joiner, host)
    target.receive_data(forge(sender, wire.RevealMsg(r=value, sig=bytes(64))))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(target)
    assert str(exc.value) == "unexpected reveal message from peer during play"
    assert target.state is State.ERROR


def test_a_plaintext_abort_instead_of_the_hello_is_reported() -> None:
    # A host that cannot take the joiner (busy, another version) may answer with a
    # plaintext abort before any hello: the joiner reports the host's reason.
    host, joiner = make_pair(RULES)
    joiner.data_to_send()  # its hello, sent at once
    joiner.receive_data(wire.encode_frame(wire.encode_message(wire.AbortMsg(reason="busy"))))
    with pytest.raises(RemoteProtocolError) as exc:
        drain(joiner)
    assert type(exc.value) is RemoteProtocolError
    assert str(exc.value) == "the other player's program stopped: busy"
    assert joiner.data_to_send() == b""  # no abort back


def test_a_commitment_with_a_forged_signature_is_cheating() -> None:
    # The host signs its commitment so that a walk-away before the reveal can be
    # proven; a commitment whose signature does not check is refused at once, and the
    # joiner's value never leaves.
    host, joiner = make_pair(RULES, label="commit")
    rewrite_queue(
        host,
        lambda m: dataclasses.replace(m, sig=bytes(64)) if isinstance(m, wire.CommitMsg) else m,
    )
    with pytest.raises(CheatingError) as exc:
        run_pair(host, joiner)
    assert str(exc.value) == "the host's signature on its commitment is invalid (forged)"
    assert joiner.record().commitment is None and joiner.record().joiner_value is None
