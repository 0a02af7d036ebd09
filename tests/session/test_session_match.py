"""Two sessions back to back through whole matches, and the side channels."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session import (
    NEED_DATA,
    AcceptRules,
    ActionReceived,
    ChatReceived,
    ConnectionClosed,
    DeclineRules,
    Goodbye,
    HandshakeComplete,
    LocalProtocolError,
    MatchOver,
    MatchStarted,
    PeerResigned,
    Ping,
    Pong,
    Resign,
    RulesMismatchError,
    RulesProposed,
    SendAction,
    SendChat,
    Session,
    State,
    WaitingFor,
    decode_record,
    encode_record,
    fingerprint,
)
from p2pkoikoi.session.testing import drain, make_pair, random_chooser, run_pair
from p2pkoikoi.session.verify.check import verify_record


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("seed", [1, 2])
def test_full_match_every_preset(preset: str, seed: int) -> None:
    rules = PRESETS[preset]
    host, joiner = make_pair(rules, label=f"{preset}{seed}")
    ev_h, ev_j = run_pair(host, joiner, random_chooser(seed))
    assert host.state is State.DONE and joiner.state is State.DONE
    assert host.match is not None and joiner.match is not None
    assert host.match.is_over and host.match == joiner.match
    for evs, peer in ((ev_h, joiner), (ev_j, host)):
        kinds = [type(e) for e in evs]
        assert kinds[0] is HandshakeComplete and kinds[1] is MatchStarted
        assert kinds[-1] is MatchOver
        hs = evs[0]
        assert isinstance(hs, HandshakeComplete)
        assert hs.peer_name == peer.name and hs.rules == rules
        assert hs.peer_fingerprint == fingerprint(
            peer.record().host.key  # type: ignore[union-attr]
            if peer is host
            else hs.peer_key
        )
    over_h, over_j = ev_h[-1], ev_j[-1]
    assert isinstance(over_h, MatchOver) and over_h == over_j
    assert over_h.scores == host.match.scores and over_h.winner == host.match.winner
    n_actions = sum(isinstance(e, ActionReceived) for e in ev_h + ev_j)
    assert n_actions == host.seq == joiner.seq
    rec = host.record()
    assert rec == joiner.record()
    assert rec.is_complete
    assert decode_record(encode_record(rec)) == rec
    report = verify_record(rec)
    assert report.ok and report.complete, report.first_failure
    assert host.waiting_for is WaitingFor.NOTHING


def wf(session: Session) -> WaitingFor:
    return session.waiting_for


def test_waiting_for_through_the_phases() -> None:
    rules = get_preset("online")
    host, joiner = make_pair(rules)
    assert wf(host) is WaitingFor.PEER_HELLO
    joiner.receive_data(host.data_to_send())
    assert drain(joiner) == []
    assert wf(joiner) is WaitingFor.PEER_AUTH
    host.receive_data(joiner.data_to_send())
    drain(host)  # the joiner's hello and auth arrived together
    assert wf(host) is WaitingFor.PEER_RULES_DECISION
    joiner.receive_data(host.data_to_send())
    assert isinstance(drain(joiner)[0], HandshakeComplete)
    assert wf(joiner) is WaitingFor.COMMIT
    host.receive_data(joiner.data_to_send())
    drain(host)
    assert wf(host) is WaitingFor.JOINER_VALUE
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    assert wf(joiner) is WaitingFor.REVEAL
    host.receive_data(joiner.data_to_send())
    assert isinstance(drain(host)[0], MatchStarted)
    assert host.waiting_for in (WaitingFor.LOCAL_ACTION, WaitingFor.PEER_ACTION)
    joiner.receive_data(host.data_to_send())
    started = drain(joiner)[0]
    assert isinstance(started, MatchStarted)
    assert started.seed == host.seed and len(started.seed) == 32
    assert joiner.match is not None and started.first_dealer == joiner.match.dealer


def test_rules_proposed_and_accepted_by_the_person() -> None:
    rules = get_preset("nintendo")
    host, joiner = make_pair(rules, auto_accept=False)
    run_pair(host, joiner)
    events = drain(joiner)
    assert events == []
    assert joiner.waiting_for is WaitingFor.LOCAL_RULES_DECISION
    assert host.waiting_for is WaitingFor.PEER_RULES_DECISION


def _proposed(host_rules: str) -> tuple:  # type: ignore[type-arg]
    host, joiner = make_pair(get_preset(host_rules), auto_accept=False)
    joiner.receive_data(host.data_to_send())
    drain(joiner)  # the joiner has keys: its auth follows its hello
    host.receive_data(joiner.data_to_send())
    drain(host)  # the joiner proved the secret: the host's auth
    joiner.receive_data(host.data_to_send())
    events = drain(joiner)
    return host, joiner, events


def test_rules_proposed_event_then_accept() -> None:
    host, joiner, events = _proposed("rulebook")
    (proposed,) = events
    assert isinstance(proposed, RulesProposed)
    assert proposed.rules == get_preset("rulebook")
    assert proposed.rounds == proposed.rules.rounds
    assert proposed.fingerprint == proposed.rules.fingerprint()
    assert proposed.peer_name == "Alice"
    with pytest.raises(LocalProtocolError):
        joiner.send(SendAction("stop"))
    out = joiner.send(AcceptRules())
    assert isinstance(drain(joiner)[0], HandshakeComplete)
    host.receive_data(out)
    assert isinstance(drain(host)[0], HandshakeComplete)
    ev_h, ev_j = run_pair(host, joiner, random_chooser(3))
    assert host.state is State.DONE


def test_rules_declined_by_the_person() -> None:
    host, joiner, _ = _proposed("rulebook")
    host.receive_data(joiner.send(DeclineRules()))
    assert joiner.state is State.CLOSED
    with pytest.raises(RulesMismatchError, match="declined the rules"):
        drain(host)


def test_rules_mismatch_names_the_settings() -> None:
    rules = get_preset("online")
    expected = rules.with_settings(double_at=7, rounds=12)
    host, joiner = make_pair(rules, expected=expected)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    host.receive_data(joiner.data_to_send())
    drain(host)
    joiner.receive_data(host.data_to_send())
    with pytest.raises(RulesMismatchError) as exc:
        drain(joiner)
    assert "double_at" in str(exc.value) and "rounds" in str(exc.value)
    assert joiner.state is State.ERROR
    host.receive_data(joiner.data_to_send())
    with pytest.raises(RulesMismatchError) as exc2:
        drain(host)
    assert "double_at" in str(exc2.value) and "rounds" in str(exc2.value)
    assert host.match is None and joiner.match is None
    # the error stays set, like h11
    with pytest.raises(RulesMismatchError):
        joiner.next_event()


def _playing() -> tuple:  # type: ignore[type-arg]
    host, joiner = make_pair(get_preset("online"))
    run_pair(host, joiner)
    assert host.state is State.PLAY and joiner.state is State.PLAY
    return host, joiner


def test_resign_on_own_turn() -> None:
    host, joiner = _playing()
    actor, other = (host, joiner) if host.match.to_act == 0 else (joiner, host)
    # (off-turn resignations: tests/transport/test_resign_anytime.py)
    other.receive_data(actor.send(Resign()))
    events = drain(other)
    assert isinstance(events[0], PeerResigned)
    assert events[0].seat == actor.our_seat
    actor_events_before = actor.state
    assert actor_events_before is State.FINISH
    assert other.data_to_send()  # its final signature
    assert actor.match is not None and actor.match.winner == other.our_seat


def test_resign_full_exchange_verifies() -> None:
    host, joiner = _playing()
    chooser = random_chooser(5)
    for _ in range(7):
        actor = host if host.match.to_act == 0 else joiner
        peer = joiner if actor is host else host
        peer.receive_data(actor.send(SendAction(chooser(actor.match))))
        drain(peer)
    actor = host if host.match.to_act == 0 else joiner
    peer = joiner if actor is host else host
    peer.receive_data(actor.send(Resign()))
    ev_peer = drain(peer)  # the resignation and the actor's final signature
    assert isinstance(ev_peer[0], PeerResigned) and isinstance(ev_peer[-1], MatchOver)
    actor.receive_data(peer.data_to_send())
    ev_actor = drain(actor)
    assert isinstance(ev_actor[-1], MatchOver)
    assert actor.data_to_send() == b""
    assert ev_actor[-1].winner == peer.our_seat
    rec = host.record()
    assert rec == joiner.record() and rec.actions[-1].action == "resign"
    assert verify_record(rec).ok
    host.receive_data(joiner.send(Goodbye()))
    assert drain(host) == [ConnectionClosed(clean=True, reason="the other player left")]


def test_chat_ping_pong_anytime() -> None:
    host, joiner = _playing()
    host.receive_data(joiner.send(SendChat("hello\x1b[31m there\u202e")))
    assert drain(host) == [ChatReceived("hello[31m there")]
    joiner.receive_data(host.send(Ping(b"n1")))
    assert drain(joiner) == [Ping(b"n1")]
    host.receive_data(joiner.send(Pong(b"n1")))
    assert drain(host) == [Pong(b"n1")]
    with pytest.raises(LocalProtocolError, match="at most 200"):
        host.send(SendChat("x" * 201))
    with pytest.raises(LocalProtocolError, match="empty"):
        host.send(SendChat("\x00\x07"))


def test_local_misuse() -> None:
    host, joiner = _playing()
    actor, other = (host, joiner) if host.match.to_act == 0 else (joiner, host)
    with pytest.raises(LocalProtocolError, match="not your turn"):
        other.send(SendAction(other.match.legal_actions()[0] if other.match else "stop"))
    with pytest.raises(LocalProtocolError, match="illegal action|expected"):
        actor.send(SendAction("koikoi"))
    with pytest.raises(LocalProtocolError, match="unknown action"):
        actor.send(SendAction("fold"))
    assert actor.state is State.PLAY  # local errors change nothing
    with pytest.raises(LocalProtocolError):
        host.send(AcceptRules())


def test_eof_mid_match_and_after() -> None:
    host, joiner = _playing()
    host.receive_data(b"")
    assert drain(host) == [ConnectionClosed(clean=False, reason="the connection ended early")]
    assert host.state is State.CLOSED
    assert host.next_event() is NEED_DATA


def test_record_so_far_before_the_end() -> None:
    host, joiner = _playing()
    rec = host.record()
    assert rec.match_seed == host.seed and not rec.is_complete
    report = verify_record(rec)
    assert report.ok and not report.complete
