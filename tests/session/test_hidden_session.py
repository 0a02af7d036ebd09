"""Hidden-deal matches between two sessions in memory: signed card moves, records, cheats."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.session import CheatingError, State
from p2pkoikoi.session.events import MatchOver
from p2pkoikoi.session.records.journal import decode_record
from p2pkoikoi.session.records.writer import encode_record
from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair


def hidden(name: str, rounds: int = 2):  # type: ignore[no-untyped-def]
    return PRESETS[name].with_settings(deal="hidden", rounds=rounds)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_hidden_match_between_two_sessions(preset: str) -> None:
    host, joiner = make_pair(hidden(preset), label=preset)
    ev_h, ev_j = run_pair(host, joiner, random_chooser(len(preset)))
    assert host.state is State.DONE and joiner.state is State.DONE
    over_h = [e for e in ev_h if isinstance(e, MatchOver)]
    over_j = [e for e in ev_j if isinstance(e, MatchOver)]
    assert over_h and over_j and over_h[0] == over_j[0]
    rec = host.record()
    assert rec.is_complete and any(a.kind == "audit" for a in rec.actions)
    assert decode_record(encode_record(rec)) == rec
    assert host.record().actions == joiner.record().actions


def test_a_card_move_that_proves_a_cheat_stays_in_the_record_with_evidence() -> None:
    host, joiner = make_pair(hidden("online"), label="cheat")

    # the joiner's program is modified: its key for the host's first draw is garbage
    state = {"n": 0}

    import msgpack  # noqa: F401  (the tap sees encrypted frames: tamper at the table instead)

    j = joiner

    def start_hook() -> None:
        h = j._hidden
        assert h is not None
        orig = h.table.draw_share

        def bad_share() -> bytes:
            state["n"] += 1
            return bytes([1]) + bytes(31) if h.table.seat != h.state.to_act else orig()

        h.table.draw_share = bad_share  # type: ignore[method-assign]

    # run until the match started, then plant the modification
    run_pair(host, joiner, None)
    start_hook()
    with pytest.raises(CheatingError) as exc:
        run_pair(host, joiner, random_chooser(1))
    assert "joiner" in str(exc.value)
    rec = host.record()
    assert rec.evidence is not None and rec.evidence.seat == 0
    assert rec.actions[-1].seat == 1 and rec.actions[-1].kind == "draw"
    assert decode_record(encode_record(rec)) == rec


def test_verify_replays_hidden_matches_and_names_the_cheater() -> None:
    from p2pkoikoi.session.verify.check import verify_record

    for preset in ("online", "rulebook", "vanikar"):
        host, joiner = make_pair(hidden(preset), label="v" + preset)
        run_pair(host, joiner, random_chooser(3))
        for rec in (host.record(), joiner.record()):
            report = verify_record(rec)
            assert report.ok and report.complete, report.first_failure
            names = [c.name for c in report.checks]
            assert "hidden deal" in names and "result" in names


def test_verify_rejects_a_tampered_hidden_record() -> None:
    import dataclasses

    from p2pkoikoi.session.verify.check import verify_record

    host, joiner = make_pair(hidden("online"), label="t")
    run_pair(host, joiner, random_chooser(3))
    rec = host.record()
    # a key in the joiner's first deal keys, changed (the signature no longer holds)
    i = next(k for k, a in enumerate(rec.actions) if a.kind == "keys")
    a = rec.actions[i]
    bad = dataclasses.replace(a, keys=bytes([a.keys[0] ^ 1]) + a.keys[1:])
    report = verify_record(
        dataclasses.replace(rec, actions=rec.actions[:i] + (bad,) + rec.actions[i + 1 :])
    )
    assert not report.ok and "signature" in report.first_failure.name  # type: ignore[union-attr]


def test_verify_names_the_cheater_from_the_honest_sides_record() -> None:
    from p2pkoikoi.session.verify.check import verify_record

    host, joiner = make_pair(hidden("online"), label="cheat2")
    run_pair(host, joiner, None)
    h = joiner._hidden
    assert h is not None
    orig = h.table.draw_share
    h.table.draw_share = lambda: (  # type: ignore[method-assign]
        bytes([1]) + bytes(31) if h.table.seat != h.state.to_act else orig()
    )
    with pytest.raises(CheatingError):
        run_pair(host, joiner, random_chooser(1))
    report = verify_record(host.record())
    bad = report.first_failure
    assert bad is not None and "seat 1 cheated" in bad.detail, report.to_dict()


def test_an_open_action_message_in_a_hidden_match_is_refused() -> None:
    from p2pkoikoi.session import RemoteProtocolError, wire
    from p2pkoikoi.session.testing import drain

    host, joiner = make_pair(hidden("online"), label="mixed")
    run_pair(host, joiner, None)  # the handshake, the seed and the first deal's masking
    assert host._hidden is not None and host._send is not None
    msg = wire.ActionMsg(seq=host.seq + 1, action="play 1b", hash=bytes(32), sig=bytes(64))
    frame = wire.encode_frame(joiner._send.seal(wire.encode_message(msg)))  # type: ignore[union-attr]
    host.receive_data(frame)
    with pytest.raises(RemoteProtocolError, match="action message in a hidden-deal match"):
        drain(host)


@pytest.mark.parametrize("reason", ["", "time"])
def test_a_resignation_in_a_hidden_match_carries_its_reason_and_verifies(reason: str) -> None:
    """A resignation (a plain one, or by time) ends a hidden match; the deal in play is
    audited after it; both records hold it with its reason, verify complete, and a
    resumed side rebuilds it."""
    from p2pkoikoi.session.events import Resign
    from p2pkoikoi.session.session import Session, WaitingFor
    from p2pkoikoi.session.testing import det_bytes, drain
    from p2pkoikoi.session.verify.check import verify_record

    host, joiner = make_pair(hidden("online", rounds=1), label="resign" + reason)
    run_pair(host, joiner, None)  # the deal's masking steps; then the first decision waits
    actor = next(s for s in (host, joiner) if s.waiting_for is WaitingFor.LOCAL_ACTION)
    other = joiner if actor is host else host
    other.receive_data(actor.send(Resign(reason)))
    drain(other)
    run_pair(host, joiner, None)
    text = "resign:time" if reason else "resign"
    for s in (host, joiner):
        rec = s.record()
        # the resignation, then the audits of the deal in play (host, joiner)
        assert [(a.action, a.kind) for a in rec.actions[-3:]] == [
            (text, ""),
            ("", "audit"),
            ("", "audit"),
        ]
        report = verify_record(rec)
        # the resigned deal is audited, so the whole match replays: complete, exit 0
        assert rec.is_complete and report.ok and not report.lacks, report.to_dict()
        names = {c.name: c.status for c in report.checks}
        assert names["final signature host"] == names["final signature joiner"] == "pass"
        assert names["result"] == "pass"
    again = Session.resume(
        actor.record(),
        actor.role,
        identity_key=actor._key,
        resume_secret=actor.resume_secret,
        entropy=det_bytes("e/resign"),
        hidden_secret=actor.hidden_secret,
    )
    assert again.transcript_hash == actor.transcript_hash
