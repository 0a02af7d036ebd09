"""verify_record: a fair record passes; one changed byte fails the right check."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from p2pkoikoi.cli.verify_cmd import add_parser, run
from p2pkoikoi.engine import Action, get_preset
from p2pkoikoi.session import Record, decode_record, encode_record
from p2pkoikoi.session.testing import drain, make_pair, random_chooser, run_pair
from p2pkoikoi.session.verify.check import Check, verify_record


@pytest.fixture(scope="module")
def record() -> Record:
    host, joiner = make_pair(get_preset("online"), label="verify")
    run_pair(host, joiner, random_chooser(4))
    rec = host.record()
    assert len(rec.actions) > 5
    return rec


def flip(b: bytes, i: int = 0) -> bytes:
    return b[:i] + bytes([b[i] ^ 1]) + b[i + 1 :]


def first_failure(rec: Record) -> str:
    report = verify_record(rec)
    assert not report.ok
    fail = report.first_failure
    assert fail is not None
    # the replay stops at its first failure; only the other final signature may follow
    after = report.checks[report.checks.index(fail) + 1 :]
    assert all(c.name.startswith("final signature") for c in after), report
    return fail.name


def test_fair_record_passes(record: Record) -> None:
    report = verify_record(record)
    assert report.ok and report.complete and report.first_failure is None
    names = [c.name for c in report.checks]
    assert names == [
        "rules",
        "identity host",
        "identity joiner",
        "commitment signature",
        "commitment",
        "seed",
        "start host",
        "start joiner",
        "deal",
        "actions",
        "result",
        "final signature host",
        "final signature joiner",
    ]


def _with_action(rec: Record, k: int, **changes: object) -> Record:
    actions = list(rec.actions)
    actions[k] = dataclasses.replace(actions[k], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(rec, actions=tuple(actions))


def test_tampered_reveal(record: Record) -> None:
    assert record.host_value is not None
    assert first_failure(dataclasses.replace(record, host_value=flip(record.host_value))) == (
        "commitment"
    )


def test_tampered_commitment(record: Record) -> None:
    assert record.commitment is not None
    rec = dataclasses.replace(record, commitment=flip(record.commitment, 31))
    assert first_failure(rec) == "commitment signature"  # the host signed its commitment


def test_tampered_joiner_value(record: Record) -> None:
    assert record.joiner_value is not None
    rec = dataclasses.replace(record, joiner_value=flip(record.joiner_value, 5))
    assert first_failure(rec) == "seed"


def test_tampered_seed(record: Record) -> None:
    assert record.match_seed is not None
    rec = dataclasses.replace(record, match_seed=flip(record.match_seed, 2))
    assert first_failure(rec) == "seed"


def _last_of_each_seat(rec: Record) -> dict[int, int]:
    return {a.seat: i for i, a in enumerate(rec.actions)}


def test_tampered_action_signature(record: Record) -> None:
    """Each seat's last action signature is checked where no final signature of that
    seat covers it (an unfinished record, or one the seat did not sign): it covers the
    seat's earlier moves."""
    last = _last_of_each_seat(record)
    unfinished = dataclasses.replace(record, result=None, final_sigs=(None, None))
    for seat, k in last.items():
        for rec in (
            _with_action(unfinished, k, sig=flip(record.actions[k].sig, 10)),
            # signed by the other player alone: only that one's final covers its moves
            dataclasses.replace(
                _with_action(record, k, sig=flip(record.actions[k].sig, 10)),
                final_sigs=tuple(s if i != seat else None for i, s in enumerate(record.final_sigs)),
            ),
        ):
            assert first_failure(rec) == f"action {k + 1} signature"
            fail = verify_record(rec).first_failure
            assert fail is not None
            assert fail.detail == f"{record.actions[k].action}: signature by seat {seat} fails"


def test_a_final_signature_covers_its_players_moves(record: Record) -> None:
    """A final signature is over the transcript after the last action: where both hold,
    the last action signatures are covered too, and their bytes change nothing the
    record proves (a program resuming from its journal, which re-sends them, still
    checks every one)."""
    for k in _last_of_each_seat(record).values():
        rec = _with_action(record, k, sig=flip(record.actions[k].sig, 10))
        report = verify_record(rec)
        assert report.ok and report.complete, report
        strict = verify_record(rec, every_signature=True).first_failure
        assert strict is not None and strict.name == f"action {k + 1} signature"
        # a move changed under it fails: the final signatures no longer hold
        changed = _with_action(rec, k, state_hash=flip(record.actions[k].state_hash))
        assert not verify_record(changed).ok


def test_a_covered_signature_changes_nothing_the_record_proves(record: Record) -> None:
    """A signature that a later one of the same player covers is not checked while the
    covering ones hold: the later one is over a transcript that holds this action (its
    seat, text and state hash), so changing the move itself fails."""
    k = 3
    assert k not in _last_of_each_seat(record).values()
    rec = _with_action(record, k, sig=flip(record.actions[k].sig, 10))
    report = verify_record(rec)
    assert report.ok and report.complete, report
    actions = next(c for c in report.checks if c.name == "actions")
    assert actions.detail.endswith("each player's last signature covers all of their moves")
    # a program resuming from its journal re-sends signed actions: it checks them all
    strict = verify_record(rec, every_signature=True)
    assert strict.first_failure is not None
    assert strict.first_failure.name == f"action {k + 1} signature"
    assert verify_record(record, every_signature=True).checks == tuple(
        c
        if c.name != "actions"
        else Check(
            "actions",
            "pass",
            f"{len(record.actions)} actions: turn, legality, state hash, every signature",
        )
        for c in report.checks
    )


def test_with_a_covering_signature_bad_the_first_bad_one_is_named(record: Record) -> None:
    """Once a covering signature fails every one is checked in order, so the report
    names the first failing signature, as a check of every signature would."""
    last = max(_last_of_each_seat(record).values())
    # unfinished: no final signature covers the last action signatures
    rec = dataclasses.replace(record, result=None, final_sigs=(None, None))
    rec = _with_action(rec, 3, sig=flip(record.actions[3].sig, 10))
    rec = _with_action(rec, last, sig=flip(record.actions[last].sig, 1))
    assert first_failure(rec) == "action 4 signature"
    # and before an action that fails its replay, a failing signature comes first
    rec = _with_action(rec, 6, state_hash=flip(record.actions[6].state_hash))
    assert first_failure(rec) == "action 4 signature"


def _forge_under_a_later_signature(record: Record) -> tuple[Record, int, int]:
    """A forger's record: an earlier move of one player replaced by another legal move,
    every later state hash made to fit the replay, the later moves' texts kept (all
    still legal), cut after that player's next move.  Returns the record, the changed
    action's index and the index of the later move whose signature covers it."""
    from p2pkoikoi.engine import IllegalActionError, MatchState

    assert record.rules is not None and record.match_seed is not None
    m, _ = MatchState.start(record.rules, record.match_seed)
    states = [m]
    for a in record.actions:
        m = m.after(Action.parse(a.action))
        states.append(m)
    for j, aj in enumerate(record.actions):
        later = [k for k in range(j + 1, len(record.actions)) if record.actions[k].seat == aj.seat]
        if not later:
            continue
        for other in states[j].legal_actions():
            if str(other) == aj.action:
                continue
            actions = list(record.actions[: later[0] + 1])
            try:
                m = states[j].after(other)
                actions[j] = dataclasses.replace(aj, action=str(other), state_hash=m.state_hash())
                for k in range(j + 1, later[0] + 1):
                    m = m.after(Action.parse(actions[k].action))
                    actions[k] = dataclasses.replace(actions[k], state_hash=m.state_hash())
            except IllegalActionError:
                continue
            forged = dataclasses.replace(
                record, actions=tuple(actions), result=None, final_sigs=(None, None)
            )
            return forged, j, later[0]
    raise AssertionError("no move to forge in this record")  # pragma: no cover


def test_a_move_changed_under_a_later_signature_fails(record: Record) -> None:
    """The chain at work: a forger changes a player's earlier move and makes every
    state hash fit.  The changed move's signature no longer holds (it was over the
    real move), and neither does the player's later one, which covers it."""
    forged, j, k = _forge_under_a_later_signature(record)
    assert forged.actions[k].sig == record.actions[k].sig
    assert first_failure(forged) == f"action {j + 1} signature"
    # the later, covering signature alone already fails the forgery
    only_later = _with_action(forged, j, sig=record.actions[j].sig)
    assert not verify_record(only_later).ok


def test_a_complete_record_checks_seven_signatures(
    record: Record, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two identities, the commitment, two starts and two finals: the covering
    signatures, not one per action (the finals cover each player's last action)."""
    from p2pkoikoi.session import crypto

    calls: list[bytes] = []
    real = crypto.verify_sig

    def counting(key: bytes, sig: bytes, message: bytes) -> bool:
        calls.append(sig)
        return real(key, sig, message)

    monkeypatch.setattr(crypto, "verify_sig", counting)
    assert verify_record(record).complete
    assert len(record.actions) > 9 and len(calls) == 7


def test_tampered_action_hash(record: Record) -> None:
    rec = _with_action(record, 2, state_hash=flip(record.actions[2].state_hash, 7))
    assert first_failure(rec) == "action 3 state hash"


def test_tampered_action_seq(record: Record) -> None:
    rec = _with_action(record, 4, seq=record.actions[4].seq ^ 1)
    assert first_failure(rec) == "action 5 turn"


def test_tampered_action_text(record: Record) -> None:
    """One changed byte in the action text: another card, illegal or a different state."""
    text = record.actions[0].action
    for i, ch in enumerate(text):
        if ch.isdigit() and ch != "9":
            changed = text[:i] + chr(ord(ch) + 1) + text[i + 1 :]
            break
    else:  # pragma: no cover
        pytest.skip("no digit to change")
    rec = _with_action(record, 0, action=changed)
    assert first_failure(rec) in ("action 1 legal", "action 1 state hash")


def test_swapped_legal_action(record: Record) -> None:
    host, _ = make_pair(get_preset("online"), label="verify")
    # replace the first action by another legal action: the state hash no longer matches
    from p2pkoikoi.engine import MatchState

    assert record.rules is not None and record.match_seed is not None
    m, _ = MatchState.start(record.rules, record.match_seed)
    others = [a for a in m.legal_actions() if str(a) != record.actions[0].action]
    rec = _with_action(record, 0, action=str(others[0]))
    assert first_failure(rec) == "action 1 state hash"
    assert isinstance(others[0], Action)


def test_tampered_auth_signature(record: Record) -> None:
    assert record.host is not None and record.host.auth_sig is not None
    host = dataclasses.replace(record.host, auth_sig=flip(record.host.auth_sig, 1))
    assert first_failure(dataclasses.replace(record, host=host)) == "identity host"


def test_tampered_name(record: Record) -> None:
    assert record.joiner is not None
    joiner = dataclasses.replace(record.joiner, name="Eve")
    assert first_failure(dataclasses.replace(record, joiner=joiner)) == "identity joiner"


def test_tampered_rules(record: Record) -> None:
    assert record.rules is not None
    rules = record.rules.with_settings(double_at=record.rules.double_at + 1)
    assert first_failure(dataclasses.replace(record, rules=rules)) == "identity host"


def test_tampered_result(record: Record) -> None:
    assert record.result is not None
    res = dataclasses.replace(
        record.result, scores=(record.result.scores[0] + 1, record.result.scores[1])
    )
    assert first_failure(dataclasses.replace(record, result=res)) == "result"


def test_tampered_final_signature(record: Record) -> None:
    h, j = record.final_sigs
    assert j is not None
    rec = dataclasses.replace(record, final_sigs=(h, flip(j, 63)))
    assert first_failure(rec) == "final signature joiner"


def test_one_byte_in_the_file(record: Record, tmp_path: Path) -> None:
    """A changed hex digit in the file itself is caught the same way."""
    data = encode_record(record)
    sig = record.actions[5].sig.hex()
    assert data.count(sig.encode()) == 1
    bad = data.replace(sig.encode(), (("1" if sig[0] != "1" else "2") + sig[1:]).encode())
    if 5 in _last_of_each_seat(record).values():  # pragma: no cover - a long record
        assert first_failure(decode_record(bad)) == "action 6 signature"
    # a covered signature's byte changes nothing the record proves; a move's byte fails
    text = record.actions[5].action
    assert data.count(f'"{text}"'.encode()) >= 1
    moved = data.replace(record.actions[5].state_hash.hex().encode(), b"0" * 64)
    assert first_failure(decode_record(moved)) == "action 6 state hash"
    assert verify_record(decode_record(bad)).ok


def _cli(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return run(parser.parse_args(argv))


def test_cli(record: Record, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(encode_record(record))
    assert _cli(["verify", str(good)]) == 0
    assert "verified: the shuffle was fair" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    assert record.host_value is not None
    bad.write_bytes(encode_record(dataclasses.replace(record, host_value=flip(record.host_value))))
    assert _cli(["verify", str(bad)]) == 1
    assert "FAILED at check 'commitment'" in capsys.readouterr().out
    assert _cli(["verify", "--json", str(bad)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["first_failure"] == "commitment"


def test_cli_through_dispatcher(record: Record, tmp_path: Path) -> None:
    from p2pkoikoi.cli import main

    path = tmp_path / "r.json"
    path.write_bytes(encode_record(record))
    assert main(["verify", str(path)]) == 0
    path.write_bytes(b"{")
    assert main(["verify", str(path)]) == 2


def test_record_that_stops_in_the_handshake() -> None:
    """An honest record cut before the peer's auth verifies so far; one with more does not."""
    host, joiner = make_pair(get_preset("online"), label="early")
    joiner.receive_data(host.data_to_send())  # the joiner saw the host's hello only
    assert joiner.next_event() is not None
    early = host.record()
    assert early.joiner is None and early.session_id is None  # nothing at all yet
    host.receive_data(joiner.data_to_send()[:60])  # part of the joiner's hello: no record
    rec = joiner.record()
    assert rec.host is None and rec.session_id is not None
    report = verify_record(rec)
    assert report.ok and not report.complete, report
    assert [c.status for c in report.checks] == ["pass", "skip"]  # joiner identity, handshake
    bad = dataclasses.replace(rec, actions=record_actions())
    assert first_failure(bad) == "handshake"
    forged = dataclasses.replace(
        rec, joiner=dataclasses.replace(rec.joiner, auth_sig=flip(rec.joiner.auth_sig or b""))
    )
    assert first_failure(forged) == "identity joiner"


def record_actions() -> tuple[Any, ...]:
    host, joiner = make_pair(get_preset("online"), label="early-actions")
    run_pair(host, joiner, random_chooser(5))
    return host.record().actions[:2]


def _cut_after_the_commitment() -> tuple[Record, Record]:
    """(host, joiner) records once the joiner holds the commitment and sent its value,
    before the host's reveal arrives."""
    host, joiner = make_pair(get_preset("online"), label="commit")
    for _ in range(10):
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        if joiner.record().commitment is not None:
            return host.record(), joiner.record()
        host.receive_data(joiner.data_to_send())
        drain(host)
    raise AssertionError("no commitment")


def test_record_that_stops_between_the_commitment_and_the_reveal() -> None:
    host_rec, rec = _cut_after_the_commitment()
    assert rec.commitment is not None and rec.joiner_value is not None
    assert rec.host_value is None and rec.match_seed is None and rec.accepted
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert [(c.name, c.status) for c in report.checks] == [
        ("rules", "pass"),
        ("identity host", "pass"),
        ("identity joiner", "pass"),
        ("commitment signature", "pass"),
        ("commitment", "skip"),
    ]
    assert report.checks[-1].detail == "the record stops before the reveal"
    # the host has committed but not yet seen the joiner's value
    assert host_rec.commitment == rec.commitment and host_rec.joiner_value is None
    assert [(c.name, c.status) for c in verify_record(host_rec).checks][-1] == (
        "commitment",
        "skip",
    )


def test_a_match_without_the_reveal_does_not_verify(record: Record) -> None:
    # Actions, a result and final signatures that no reveal backs cannot be checked.
    no_reveal = dataclasses.replace(record, host_value=None)
    assert first_failure(no_reveal) == "commitment"
    not_accepted = dataclasses.replace(record, accepted=False)
    assert first_failure(not_accepted) == "commitment"


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ("winner", "winner is"),
        ("final_state_hash", "final state hash differs"),
        ("transcript_hash", "final transcript hash differs"),
    ],
)
def test_each_part_of_the_result_is_checked(record: Record, change: str, detail: str) -> None:
    assert record.result is not None
    res = record.result
    value: object
    if change == "winner":
        value = None if res.winner is not None else 0
    else:
        value = flip(getattr(res, change))
    bad = dataclasses.replace(record, result=dataclasses.replace(res, **{change: value}))
    assert first_failure(bad) == "result"
    fail = verify_record(bad).first_failure
    assert (
        fail is not None
        and fail.detail
        == {
            "winner": f"winner is {res.winner}, record says {value}",
            "final_state_hash": "final state hash differs",
            "transcript_hash": "final transcript hash differs",
        }[change]
    )
    assert detail in fail.detail


def test_result_detail_and_a_missing_final_signature(record: Record) -> None:
    assert record.result is not None
    report = verify_record(record)
    (res,) = [c for c in report.checks if c.name == "result"]
    assert res.status == "pass"
    assert res.detail == f"scores {record.result.scores}, confirmed: both players signed it"
    h, _ = record.final_sigs
    half = verify_record(dataclasses.replace(record, final_sigs=(h, None)))
    assert half.ok and not half.complete
    assert [(c.name, c.status, c.detail) for c in half.checks[-2:]] == [
        ("final signature host", "pass", ""),
        ("final signature joiner", "skip", "missing"),
    ]


def test_a_declined_match_verifies_so_far_and_nothing_after_a_decline_may_follow() -> None:
    from p2pkoikoi.session import DeclineRules, RulesMismatchError

    host, joiner = make_pair(get_preset("online"), label="decline", auto_accept=False)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    host.receive_data(joiner.data_to_send())
    drain(host)
    joiner.receive_data(host.data_to_send())
    drain(joiner)
    host.receive_data(joiner.send(DeclineRules()))
    with pytest.raises(RulesMismatchError):
        drain(host)
    for rec in (host.record(), joiner.record()):
        report = verify_record(rec)
        assert report.ok and not report.complete, report
        assert report.checks[-1] == Check(
            "commitment", "skip", "the joiner did not accept the rules"
        )
    _, cut = _cut_after_the_commitment()
    for change in (
        {"host_value": b"\x01" * 32},
        {"commitment": cut.commitment, "joiner_value": None},
        {"commitment": None, "joiner_value": cut.joiner_value},
    ):
        bad = dataclasses.replace(cut, accepted=False, commitment=None, joiner_value=None)
        bad = dataclasses.replace(bad, **change)  # type: ignore[arg-type]
        assert first_failure(bad) == "commitment"
        fail = verify_record(bad).first_failure
        assert fail is not None and fail.detail == (
            "the joiner did not accept the rules, yet it records more of the match"
        )


def test_turn_failures_say_which_rule_broke(record: Record) -> None:
    a = record.actions[4]
    bad_seq = _with_action(record, 4, seq=a.seq ^ 1)
    fail = verify_record(bad_seq).first_failure
    assert fail is not None and fail.detail == f"seq {a.seq ^ 1}, expected 5"
    bad_seat = _with_action(record, 4, seat=1 - a.seat)
    fail = verify_record(bad_seat).first_failure
    assert fail is not None and fail.name == "action 5 turn"
    assert fail.detail == f"seat {1 - a.seat} acted, seat {a.seat} was to act"


def test_a_record_ending_in_a_resignation() -> None:
    from p2pkoikoi.session import Resign

    host, joiner = make_pair(get_preset("online"), label="resigned")
    run_pair(host, joiner)
    assert host.match is not None
    actor, other = (host, joiner) if host.match.to_act == 0 else (joiner, host)
    other.receive_data(actor.send(Resign()))
    drain(other)
    actor.receive_data(other.data_to_send())
    drain(actor)
    rec = actor.record()
    assert rec.actions[-1].action == "resign" and rec.result is not None
    report = verify_record(rec)
    assert report.ok and report.complete, report
    assert rec.result.winner == other.our_seat
    bad = _with_action(rec, len(rec.actions) - 1, state_hash=flip(rec.actions[-1].state_hash))
    assert first_failure(bad) == f"action {len(rec.actions)} state hash"
    forged = _with_action(rec, len(rec.actions) - 1, sig=flip(rec.actions[-1].sig, 3))
    # the resigner's final signature covers the resignation; without it, its own does
    assert verify_record(forged).complete
    forged = dataclasses.replace(
        forged,
        final_sigs=tuple(None if i == actor.our_seat else s for i, s in enumerate(rec.final_sigs)),
    )
    assert first_failure(forged) == f"action {len(rec.actions)} signature"


def test_a_non_canonical_action_text_is_not_legal(record: Record) -> None:
    text = record.actions[0].action
    rec = _with_action(record, 0, action=text.upper())
    assert first_failure(rec) == "action 1 legal"
    fail = verify_record(rec).first_failure
    assert fail is not None and fail.detail == f"{text.upper()}: not canonical: {text.upper()!r}"


def test_a_record_in_the_middle_of_the_match(record: Record) -> None:
    mid = dataclasses.replace(
        record, actions=record.actions[:5], result=None, final_sigs=(None, None)
    )
    report = verify_record(mid)
    assert report.ok and not report.complete
    assert report.checks[0] == Check(
        "rules",
        "pass",
        f"fingerprint {record.rules.fingerprint()[:16]}...",  # type: ignore[union-attr]
    )
    assert [(c.name, c.status) for c in report.checks[-2:]] == [
        ("actions", "pass"),
        ("result", "skip"),
    ]
    assert report.checks[-1].detail == "the match is not finished"
    assert report.checks[-2].detail == (
        "5 actions: turn, legality, state hash; each player's last signature covers all of"
        " their moves"
    )


def test_a_result_the_actions_do_not_reach(record: Record) -> None:
    short = dataclasses.replace(record, actions=record.actions[:-1])
    assert first_failure(short) == "result"
    report = verify_record(short)
    assert report.checks[-1].name == "result"  # no final signature is checked after it
    assert "the replayed match is not over" in report.checks[-1].detail


# ------------------------------------------------------------ issue 10.3: forgery
def forge_mallory_beats_bob(genuine: Record) -> Record:
    """A record "Mallory beat Bob" from Bob's genuine auth signature: Mallory's own host
    key, other rules, values ground until the deal ends the match before Bob would
    have signed anything (a hand yaku in a one-round match)."""
    from p2pkoikoi.engine import MatchState
    from p2pkoikoi.session import crypto
    from p2pkoikoi.session.records.record import PlayerRecord, ResultRecord
    from p2pkoikoi.session.records.transcript import transcript_to_accept
    from p2pkoikoi.session.testing import det_key

    mallory = det_key("mallory")
    rules = get_preset("nintendo").with_settings(rounds=1)
    assert genuine.session_id is not None and genuine.joiner is not None
    h0 = genuine.session_id
    mkey = crypto.public_bytes(mallory)
    sig = crypto.sign(mallory, crypto.auth_message(h0, "host", "Mallory", mkey, rules.encode(), 0))
    base = dataclasses.replace(
        genuine,
        rules=rules,
        turn_limit=0,
        host=PlayerRecord("Mallory", mkey, sig),
        joiner=dataclasses.replace(genuine.joiner, start_sig=None),  # Bob never signed one
        actions=(),
        final_sigs=(None, None),
        missing=None,
    )
    t_c = transcript_to_accept(base)
    for i in range(100_000):
        hv, jv = i.to_bytes(32, "big"), bytes(32)
        seed = crypto.derive_seed(hv, jv, t_c)
        m, _ = MatchState.start(rules, seed)
        if m.is_over and m.winner == 0:
            break
    else:
        pytest.skip("no deal ended the match at once")
    c = crypto.commitment(t_c, hv)
    t_k = crypto.absorb(t_c, "commit", c)
    t_r = crypto.absorb(crypto.absorb(t_k, "value", jv), "reveal", hv)
    h = m.state_hash()
    return dataclasses.replace(
        base,
        commitment=c,
        commit_sig=crypto.sign(mallory, crypto.commit_sig_message(t_k)),
        joiner_value=jv,
        host_value=hv,
        match_seed=seed,
        host=dataclasses.replace(
            base.host, start_sig=crypto.sign(mallory, crypto.start_message(t_r))
        ),
        result=ResultRecord(m.scores, m.winner, h, t_r),
        final_sigs=(crypto.sign(mallory, crypto.final_message(t_r, h)), None),
    )


def test_a_record_forged_with_a_real_joiners_signature_is_not_accepted(
    record: Record, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = forge_mallory_beats_bob(record)
    report = verify_record(forged)
    assert not report.complete
    assert any("never signed this match" in lack for lack in report.lacks), report.lacks
    result = next(c for c in report.checks if c.name == "result")
    assert "NOT confirmed: only the host signed it" in result.detail
    path = tmp_path / "forged.koikoi"
    path.write_bytes(encode_record(forged))
    assert _cli(["verify", str(path)]) == 3  # never 0: not a whole, confirmed match
    out = capsys.readouterr().out
    assert "skip start joiner" in out and "INCOMPLETE" in out
    assert "never signed this match" in out
    # Bob's genuine start (or final) signature does not fit the forged match
    assert record.joiner is not None and record.joiner.start_sig is not None
    assert forged.joiner is not None
    stolen = dataclasses.replace(
        forged, joiner=dataclasses.replace(forged.joiner, start_sig=record.joiner.start_sig)
    )
    assert first_failure(stolen) == "start joiner"
    assert record.final_sigs[1] is not None
    stolen_final = dataclasses.replace(
        forged, final_sigs=(forged.final_sigs[0], record.final_sigs[1])
    )
    assert first_failure(stolen_final) == "final signature joiner"


# ------------------------------------------------------------ issue 10.9: exit statuses
def test_exit_status_says_complete_incomplete_or_failed(
    record: Record, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.koikoi"
    cases = [
        (record, 0, "verified: the shuffle was fair"),
        (dataclasses.replace(record, result=None, final_sigs=(None, None)), 3, "did not finish"),
        (
            dataclasses.replace(
                record, final_sigs=(record.final_sigs[0], None), missing="the joiner left"
            ),
            3,
            "the joiner's final signature: the joiner left",
        ),
        (dataclasses.replace(record, actions=record.actions[:3], result=None), 3, "did not finish"),
        (dataclasses.replace(record, host_value=flip(record.host_value or bytes(32))), 1, "FAILED"),
    ]
    for rec, status, words in cases:
        path.write_bytes(encode_record(rec))
        assert _cli(["verify", str(path)]) == status, words
        assert words in capsys.readouterr().out
        assert _cli(["verify", "--json", str(path)]) == status
        out = json.loads(capsys.readouterr().out)
        assert out["exit_status"] == status and out["complete"] is (status == 0)


def test_a_record_that_stops_before_the_commitment() -> None:
    host, joiner = make_pair(get_preset("online"), label="before-commit")
    rec = None
    for _ in range(10):
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        r = joiner.record()
        if r.accepted and r.commitment is None:
            rec = r
            break
        host.receive_data(joiner.data_to_send())
        drain(host)
    assert rec is not None
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert report.checks[-1] == Check(
        "commitment", "skip", "the record stops before the commitment"
    )
    bad = dataclasses.replace(rec, joiner_value=bytes(32))  # a value with no commitment
    assert first_failure(bad) == "commitment"
    fail = verify_record(bad).first_failure
    assert fail is not None
    assert fail.detail == "the record stops before the commitment, yet it records more of the match"
