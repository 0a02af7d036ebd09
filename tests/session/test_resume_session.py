"""The resume handshake, sans-I/O: cut the byte stream anywhere, resume both sides from
their records, and the match ends as one match: equal final hashes, records that
verify, every seq exactly once."""

from __future__ import annotations

import dataclasses

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import (
    ActionReceived,
    LocalProtocolError,
    MatchOver,
    RemoteProtocolError,
    Resumed,
    ResumeError,
    Session,
    State,
    wire,
)
from p2pkoikoi.session.events import SendAction
from p2pkoikoi.session.testing import (
    det_bytes,
    det_key,
    drain,
    make_pair,
    play_until_cut,
    random_chooser,
    resumed,
    run_pair,
)
from p2pkoikoi.session.verify.check import verify_record

RULES = get_preset("online").with_settings(rounds=1)


def check_one_match(host: Session, joiner: Session) -> None:
    assert host.state is State.DONE and joiner.state is State.DONE
    rh, rj = host.record(), joiner.record()
    assert rh.result == rj.result and rh.final_sigs == rj.final_sigs
    assert rh.actions == rj.actions
    assert [a.seq for a in rh.actions] == list(range(1, len(rh.actions) + 1))
    assert verify_record(rh).ok and verify_record(rj).ok
    assert rh.is_complete


def test_cut_anywhere_then_resume_finishes_one_match() -> None:
    SEED = 4  # noqa: N806 - a match of 17 actions with these rules and keys
    h0, j0 = make_pair(RULES)
    run_pair(h0, j0, random_chooser(SEED))
    total = len(h0.record().actions)
    # a reference run tells roughly how many bytes a match takes
    h, j = make_pair(RULES)
    sizes: list[int] = []

    def tap(seat: int, data: bytes) -> bytes:
        sizes.append(len(data))
        return data

    run_pair(h, j, random_chooser(SEED), tap=tap)
    full = sum(sizes)
    cuts = sorted({full * k // 23 for k in range(1, 23)} | {full - 1, full - 40})
    for cut in cuts:
        h, j = make_pair(RULES)
        choose = random_chooser(SEED)
        if play_until_cut(h, j, choose, cut):
            continue
        if h.match is None or j.match is None:
            # (the side that has not started: the host starts first, on the joiner's value;
            # the host may have revealed while the joiner never saw it: that joiner
            # cannot resume, and an end now is the host's forfeit: test_forfeit.py)
            lacking = h if h.match is None else j
            with pytest.raises(LocalProtocolError, match="before the match started"):
                resumed(lacking, "resume/x")
            continue
        if h.record().is_complete and j.record().is_complete:
            continue
        nh, nj = resumed(h, f"resume/h{cut}"), resumed(j, f"resume/j{cut}")
        ev_h, ev_j = run_pair(nh, nj, choose)
        assert isinstance(ev_h[0], Resumed) and isinstance(ev_j[0], Resumed)
        assert ev_h[0].peer_seq == ev_j[0].our_seq
        for evs in (ev_h, ev_j):
            assert sum(isinstance(e, MatchOver) for e in evs) <= 1
        check_one_match(nh, nj)
    assert total > 10


def test_resume_twice_and_the_side_ahead_resends() -> None:
    h, j = make_pair(RULES, label="2")
    choose = random_chooser(3)
    # cut right after the host sent an action the joiner never got
    budget = 4000
    play_until_cut(h, j, choose, budget)
    for rnd in range(3):
        nh = Session.resume(
            h.record(),
            "host",
            identity_key=det_key("host2"),
            resume_secret=h.resume_secret,
            entropy=det_bytes(f"e/h/{rnd}"),
        )
        nj = Session.resume(
            j.record(),
            "joiner",
            identity_key=det_key("joiner2"),
            resume_secret=j.resume_secret,
            entropy=det_bytes(f"e/j/{rnd}"),
        )
        # resume, play a little, cut again (budget covers the resume handshake)
        if play_until_cut(nh, nj, choose, 1500):
            break
        h, j = nh, nj
    else:
        nh = Session.resume(
            h.record(),
            "host",
            identity_key=det_key("host2"),
            resume_secret=h.resume_secret,
            entropy=det_bytes("e/h/last"),
        )
        nj = Session.resume(
            j.record(),
            "joiner",
            identity_key=det_key("joiner2"),
            resume_secret=j.resume_secret,
            entropy=det_bytes("e/j/last"),
        )
        run_pair(nh, nj, choose)
    check_one_match(nh, nj)


def test_lost_actions_are_resent_by_the_side_ahead() -> None:
    # The cut must fall mid-match with both sides level. Where that is depends on the
    # match seed, and so on the rules encoding and the protocol (a new RuleSet field or
    # handshake message moves it): look for it among the ends of delivered chunks.
    boundaries: list[int] = []
    play_until_cut(*make_pair(RULES), random_chooser(5), 10**9, boundaries)
    for budget in reversed(boundaries):
        h, j = make_pair(RULES)
        choose = random_chooser(5)
        play_until_cut(h, j, choose, budget)
        level = h.seq == j.seq and h.match is not None and h.match.to_act is not None
        if h.state is State.PLAY and j.state is State.PLAY and level:
            break
    else:
        raise AssertionError("no cut at the end of a delivered chunk falls mid-match")
    # make the host ahead: it acts (if it can) and the bytes are lost
    for s, other in ((h, j), (j, h)):
        m = s.match
        assert m is not None
        if s.state is State.PLAY and m.to_act == s.our_seat and other.seq == s.seq:
            s.send(SendAction(choose(m)))
            break
    ahead = max(h.seq, j.seq)
    assert h.seq != j.seq
    nh, nj = resumed(h, "resume/a"), resumed(j, "resume/b")
    ev_h, ev_j = run_pair(nh, nj, choose)
    behind_events = ev_j if h.seq > j.seq else ev_h
    got = [e.seq for e in behind_events if isinstance(e, ActionReceived)]
    assert got[0] == min(h.seq, j.seq) + 1 and ahead in got
    check_one_match(nh, nj)


def test_an_impostor_cannot_resume_and_the_match_goes_on() -> None:
    h, j = make_pair(RULES)
    choose = random_chooser(9)
    play_until_cut(h, j, choose, 3000)
    nh = resumed(h, "resume/real-host")
    # a stranger who knows the invite and has the (shareable) record, not the key
    fake = resumed(j, "resume/fake")
    fake._key = det_key("mallory")  # noqa: SLF001 - the attacker signs with its own key
    nh.receive_data(fake.data_to_send())
    drain(nh)
    fake.receive_data(nh.data_to_send())
    drain(fake)
    nh.receive_data(fake.data_to_send())
    with pytest.raises(ResumeError, match="not the one this match was played with"):
        drain(nh)
    # the host tries again with a fresh session; the real joiner resumes
    nh2, nj = resumed(h, "resume/real-host-2"), resumed(j, "resume/real")
    run_pair(nh2, nj, choose)
    check_one_match(nh2, nj)


def test_mismatched_hellos_and_refusal() -> None:
    h, j = make_pair(RULES)
    play_until_cut(h, j, random_chooser(1), 3000)
    nh = resumed(h, "resume/r")
    fresh_h, fresh_j = make_pair(RULES, label="other")
    # a new joiner reaching a resuming host, and the reverse
    nh.receive_data(fresh_j.data_to_send())
    with pytest.raises(ResumeError, match="new match"):
        drain(nh)
    fresh_h.receive_data(resumed(j, "resume/s").data_to_send())
    with pytest.raises(RemoteProtocolError, match="resume an earlier match"):
        drain(fresh_h)
    # a plaintext refusal instead of a hello
    refuse = wire.encode_frame(wire.encode_message(wire.RefuseMsg(reason="busy")))
    j2 = make_pair(RULES, label="z")[1]
    j2.receive_data(refuse)
    with pytest.raises(RemoteProtocolError, match="refused the connection: busy"):
        drain(j2)


def test_records_that_cannot_resume() -> None:
    h, j = make_pair(RULES)
    run_pair(h, j, random_chooser(2))
    assert resumed(h, "resume/done").state is State.HELLO  # it can still re-send its signature
    with pytest.raises(LocalProtocolError, match="another identity"):
        Session.resume(
            j.record(),
            "joiner",
            identity_key=det_key("x"),
            resume_secret=j.resume_secret,
            entropy=det_bytes("q"),
        )


def test_a_side_catching_up_on_its_own_lost_action_cannot_act_until_it_arrives() -> None:
    """Our last action reached the peer but not our record (a crash before the journal
    reached the disk): after the resume the peer re-sends it, and until it arrives our
    engine state says it is our turn, which is not the live state: a local action
    then is refused, not sent as a second action for the same seq."""
    h, j = make_pair(RULES)
    run_pair(h, j)
    actor = h if h.match is not None and h.match.to_act == 0 else j
    other = j if actor is h else h
    choose = random_chooser(3)
    assert actor.match is not None
    other.receive_data(actor.send(SendAction(choose(actor.match))))
    drain(other)
    lost = actor.record()
    cut = dataclasses.replace(lost, actions=lost.actions[:-1])
    new_actor = Session.resume(
        cut,
        actor.role,
        identity_key=det_key(actor.role.value),
        resume_secret=actor.resume_secret,  # type: ignore[arg-type]
        entropy=det_bytes("entropy/lost-own/a"),
    )
    new_other = resumed(other, "lost-own/o")
    sides = {new_actor: new_other, new_other: new_actor}
    refused = 0
    for _ in range(20):
        moved = False
        for sender, receiver in sides.items():
            data = sender.data_to_send()
            while data:  # one frame at a time
                frame, data = wire.decode_frame(data)
                assert frame is not None
                receiver.receive_data(wire.encode_frame(frame))
                drain(receiver)
                moved = True
                m = new_actor.match
                if new_actor.catching_up and m is not None and m.to_act == new_actor.our_seat:
                    with pytest.raises(LocalProtocolError, match="re-sending the actions"):
                        new_actor.send(SendAction(choose(m)))
                    refused += 1
        if not moved:
            break
    assert refused
    assert not new_actor.catching_up and new_actor.seq == new_other.seq == len(lost.actions)
    assert new_actor.record().actions == new_other.record().actions
