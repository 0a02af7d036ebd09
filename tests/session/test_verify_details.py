"""verify_record, check by check: the exact detail of each check that the second
mutation pass (issue 15) found unpinned: a rematch's chain, forfeits (between the
value and the reveal, by time on and off the seat's turn, after the end, a withheld
card move), and a hidden-deal record cut in a deal, tampered or missing a signature.

It runs right after test_verify.py in bench/mutation.py's TESTS for verify.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Record, SendAction, Session
from p2pkoikoi.session.testing import (
    drain,
    make_pair,
    random_chooser,
    run_pair,
    until_the_joiners_value,
)
from p2pkoikoi.session.verify.check import Check, verify_record


@pytest.fixture(scope="module")
def record() -> Record:
    """A whole open-deal match (the default turn limit), as in test_verify.py."""
    host, joiner = make_pair(get_preset("online"), label="verify")
    run_pair(host, joiner, random_chooser(4))
    return host.record()


def _pair(label: str, *, turn_limit: int = 600) -> tuple[Session, Session]:
    """Two sessions with the host's ``turn_limit``."""
    return make_pair(get_preset("online"), label=label, turn_limit=turn_limit)


def _names(rec: Record) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in verify_record(rec).checks]


_HEAD = [
    ("rules", "pass"),
    ("identity host", "pass"),
    ("identity joiner", "pass"),
    ("commitment signature", "pass"),
]
_STARTED = [
    *_HEAD,
    ("commitment", "pass"),
    ("seed", "pass"),
    ("start host", "pass"),
    ("start joiner", "pass"),
    ("deal", "pass"),
]


@pytest.fixture(scope="module")
def rematch() -> tuple[Record, Record]:
    """A connection's first match and its rematch (one round each)."""
    from p2pkoikoi.session import OfferRematch

    rules = get_preset("nintendo").with_settings(rounds=1)
    host, joiner = make_pair(rules, label="verify-rematch")
    run_pair(host, joiner, random_chooser(3))
    first = host.record()
    joiner.receive_data(host.send(OfferRematch(bytes(range(32)))))
    drain(joiner)
    host.receive_data(joiner.send(OfferRematch(bytes(range(1, 33)))))
    run_pair(host, joiner, random_chooser(5))
    second = host.record()
    assert first.is_complete and second.is_complete and second.match_number == 2
    return first, second


def test_a_rematch_names_the_match_it_is_chained_to(rematch: tuple[Record, Record]) -> None:
    first, second = rematch
    assert first.result is not None and second.previous == first.result.transcript_hash
    report = verify_record(second)
    assert report.complete
    assert report.checks[1] == Check(
        "rematch",
        "pass",
        f"match 2 of its connection, chained to the previous match (final transcript "
        f"{first.result.transcript_hash.hex()[:16]}...): every signature below covers both",
    )
    assert [c.name for c in report.checks].count("rematch") == 1
    assert "rematch" not in [c.name for c in verify_record(first).checks]


def test_a_rematch_number_without_its_link_or_a_link_without_the_number_fails(
    rematch: tuple[Record, Record],
) -> None:
    """decode_record refuses both; verify_record gets a Record built in memory too."""
    first, second = rematch
    detail = "a rematch's number above 1 and 'previous' go together"
    for bad in (
        dataclasses.replace(second, previous=None),  # match 2, no link
        dataclasses.replace(first, previous=second.previous),  # match 1, linked
        dataclasses.replace(second, match_number=1),
    ):
        report = verify_record(bad)
        assert report.checks[1:] == (Check("rematch", "fail", detail),), report


def test_the_hosts_forfeit_between_the_value_and_the_reveal_verifies() -> None:
    """The joiner's record of a host that never revealed: the host's signed commitment
    places it in the match, and the joiner signs the forfeit."""
    host, joiner = _pair("forfeit-seed", turn_limit=0)
    until_the_joiners_value(host, joiner)
    joiner.peer_gone()
    rec = joiner.record()
    assert rec.forfeit is not None and rec.host_value is None and rec.turn_limit == 0
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert report.checks[4:] == (
        Check(
            "forfeit",
            "pass",
            "the host forfeits the host stopped after the joiner's value, before revealing "
            "its own (the joiner's claim: it rests on the joiner's signature alone; the "
            "host's signed commitment shows it was in this match)",
        ),
    )
    assert [(c.name, c.status) for c in report.checks[:4]] == _HEAD
    assert report.lacks == (
        "the host forfeited (the host stopped after the joiner's value, before revealing its"
        " own): one player's account",
    )
    # a host forfeit recorded before the joiner's value: nothing places the host in the
    # match beyond its commitment, so the record just stops there
    early = dataclasses.replace(rec, joiner_value=None)
    assert verify_record(early).checks[4:] == (
        Check("commitment", "skip", "the record stops before the reveal"),
    )
    # the joiner cannot forfeit there (it sent its value; the reveal is the host's move)
    joiners = dataclasses.replace(rec, forfeit=dataclasses.replace(rec.forfeit, seat=1))
    assert verify_record(joiners).checks[4:] == (
        Check("commitment", "skip", "the record stops before the reveal"),
    )


def _in_play(label: str, turn_limit: int, moves: int) -> tuple[Any, Any]:
    """(actor, waiting side) after ``moves`` actions of an open-deal match."""
    host, joiner = _pair(label, turn_limit=turn_limit)
    run_pair(host, joiner)
    choose = random_chooser(2)
    for _ in range(moves):
        assert host.match is not None and host.match.to_act is not None
        actor = (host, joiner)[host.match.to_act]
        (joiner, host)[host.match.to_act].receive_data(actor.send(SendAction(choose(actor.match))))
        drain(host)
        drain(joiner)
    assert host.match is not None and host.match.to_act is not None
    actor = (host, joiner)[host.match.to_act]
    return actor, (joiner if actor is host else host)


def _signed_forfeit(rec: Record, writer: Any, seat: int, reason: str) -> Record:
    from p2pkoikoi.session import crypto
    from p2pkoikoi.session.records.record import ForfeitRecord

    t = writer.transcript_hash
    sig = crypto.sign(writer._key, crypto.forfeit_message(t, seat, reason))
    return dataclasses.replace(rec, forfeit=ForfeitRecord(seat, reason, sig))


@pytest.mark.parametrize("limit", [1, 600])
def test_a_forfeit_by_time_on_the_peers_turn_verifies(limit: int) -> None:
    actor, waiting = _in_play(f"forfeit-time-{limit}", limit, 3)
    waiting.claim_time_forfeit()
    rec = waiting.record()
    who, writer = actor.role.value, waiting.role.value
    report = verify_record(rec)
    assert report.ok and not report.complete
    assert [(c.name, c.status) for c in report.checks] == [
        *_STARTED,
        ("actions", "pass"),
        ("forfeit", "pass"),
        ("result", "skip"),
    ]
    assert report.checks[-2].detail == (
        f"the {who} forfeits by time: the turn limit ({limit}s) ran out on its turn (the"
        f" {writer}'s claim: it rests on the {writer}'s signature alone)"
    )
    assert report.lacks[0] == f"the {who} forfeited (time): one player's account"


def test_a_forfeit_by_time_off_the_seats_turn_fails_however_well_signed() -> None:
    actor, waiting = _in_play("forfeit-turn", 600, 3)
    rec = actor.record()
    # the actor claims the waiting side ran out of time: but it was the actor's turn
    bad = _signed_forfeit(rec, actor, waiting.our_seat, "time")
    assert _names(bad)[-2:] == [("actions", "pass"), ("forfeit", "fail")]
    fail = verify_record(bad).first_failure
    assert fail == Check(
        "forfeit", "fail", f"a forfeit by time of the {waiting.role.value}, but it was not its turn"
    )
    # another reason is the writer's claim alone, whoever's turn it was
    other = _signed_forfeit(rec, actor, waiting.our_seat, "walked away")
    report = verify_record(other)
    assert report.ok and report.checks[-2] == Check(
        "forfeit",
        "pass",
        f"the {waiting.role.value} forfeits walked away (the {actor.role.value}'s claim: it"
        f" rests on the {actor.role.value}'s signature alone)",
    )
    # and in a match without a turn limit, only a forfeit by time is impossible
    host, joiner = _pair("forfeit-nolimit", turn_limit=0)
    run_pair(host, joiner)
    assert host.match is not None
    writer = (host, joiner)[1 - host.match.to_act]  # type: ignore[operator]
    walked = _signed_forfeit(writer.record(), writer, host.match.to_act, "walked away")  # type: ignore[arg-type]
    assert verify_record(walked).ok
    timed = _signed_forfeit(writer.record(), writer, host.match.to_act, "time")  # type: ignore[arg-type]
    assert verify_record(timed).first_failure == Check(
        "forfeit",
        "fail",
        f"the {('host', 'joiner')[host.match.to_act]} forfeits by time: the turn limit (no"  # type: ignore[index]
        f" limit) ran out on its turn (the {writer.role.value}'s claim: it rests on the"
        f" {writer.role.value}'s signature alone)",
    )


def test_a_forfeit_by_time_after_the_end_fails(record: Record) -> None:
    from p2pkoikoi.session import crypto
    from p2pkoikoi.session.records.record import ForfeitRecord
    from p2pkoikoi.session.testing import det_key

    assert record.result is not None and record.turn_limit > 0
    t = record.result.transcript_hash
    for seat in (0, 1):
        key = det_key(("joiner", "host")[seat] + "verify")
        sig = crypto.sign(key, crypto.forfeit_message(t, seat, "time"))
        bad = dataclasses.replace(record, forfeit=ForfeitRecord(seat, "time", sig))
        who = ("host", "joiner")[seat]
        assert verify_record(bad).first_failure == Check(
            "forfeit", "fail", f"a forfeit by time of the {who}, but it was not its turn"
        )


@pytest.fixture(scope="module")
def hidden_record() -> Record:
    rules = get_preset("online").with_settings(deal="hidden", rounds=1)
    host, joiner = make_pair(rules, label="verify-hidden")
    run_pair(host, joiner, random_chooser(3))
    rec = host.record()
    assert rec.is_complete and len(rec.actions) > 12
    return rec


def test_a_hidden_record_cut_in_a_deal_says_where(hidden_record: Record) -> None:
    cut = dataclasses.replace(
        hidden_record, actions=hidden_record.actions[:12], result=None, final_sigs=(None, None)
    )
    last = cut.actions[-1]
    assert (last.seq, last.kind, last.seat) == (12, "draw", 1)
    report = verify_record(cut)
    assert report.ok and not report.complete
    assert report.checks[-2:] == (
        Check(
            "hidden deal",
            "pass",
            "12 card moves; 0 deals audited: every masking step, key, declared and undeclared"
            " hand, and play checked; the last deal was not audited: the record stops in it,"
            " after card move 12 (draw by seat 1)",
        ),
        Check("result", "skip", "the match is not finished"),
    )
    whole = verify_record(hidden_record).checks
    assert [c for c in whole if c.name == "hidden deal"][0].detail.endswith(
        "1 deals audited: every masking step, key, declared and undeclared hand, and play checked"
    )


def test_a_bad_card_move_is_the_last_check(hidden_record: Record) -> None:
    i = next(k for k, a in enumerate(hidden_record.actions) if a.kind == "keys")
    a = hidden_record.actions[i]
    bad = dataclasses.replace(a, keys=bytes([a.keys[0] ^ 1]) + a.keys[1:])
    rec = dataclasses.replace(
        hidden_record, actions=hidden_record.actions[:i] + (bad,) + hidden_record.actions[i + 1 :]
    )
    checks = verify_record(rec).checks
    assert [(c.name, c.status) for c in checks] == [
        *_STARTED,
        (f"card move {a.seq} signature", "fail"),
    ]


def test_a_hidden_record_missing_a_final_signature_says_why(hidden_record: Record) -> None:
    for missing, detail in (("the joiner left", "the joiner left"), (None, "missing")):
        rec = dataclasses.replace(
            hidden_record, final_sigs=(hidden_record.final_sigs[0], None), missing=missing
        )
        report = verify_record(rec)
        assert report.ok and not report.complete
        assert report.checks[-2:] == (
            Check("final signature host", "pass"),
            Check("final signature joiner", "skip", detail),
        )


def test_a_hidden_deal_forfeit_for_a_withheld_card_move_is_checked() -> None:
    """The side whose peer's program withheld a card move records the forfeit; verify
    checks it after the card moves, signed by that side alone."""
    from p2pkoikoi.session.session import WaitingFor

    rules = get_preset("online").with_settings(deal="hidden", rounds=1)
    host, joiner = make_pair(rules, label="verify-withheld")
    run_pair(host, joiner, None)  # the deal's masking steps; the first decision waits
    actor = next(s for s in (host, joiner) if s.waiting_for is WaitingFor.LOCAL_ACTION)
    actor.send(SendAction(random_chooser(1)(actor.match)))  # the peer's draw key never comes
    assert actor.waiting_for is WaitingFor.PEER_CARDS
    actor.peer_withheld("no draw key")
    report = verify_record(actor.record())
    who, writer = actor.role.other.value, actor.role.value
    assert report.ok and not report.complete
    assert [(c.name, c.status) for c in report.checks[-3:]] == [
        ("hidden deal", "pass"),
        ("forfeit", "pass"),
        ("result", "skip"),
    ]
    assert report.checks[-2].detail == (
        f"the {who} forfeits no draw key (the {writer}'s claim: it rests on the {writer}'s"
        " signature alone)"
    )
    assert report.lacks == (
        f"the {who} forfeited (no draw key): one player's account",
        "the last deal was not audited: its cards never opened, so its moves rest on their"
        " signatures and on what one side's secrets could check",
    )


def test_a_hidden_record_whose_result_differs_stops_at_the_result(hidden_record: Record) -> None:
    """As for the open deal: no final signature is checked over a result that the
    replay does not reach."""
    assert hidden_record.result is not None
    res = dataclasses.replace(hidden_record.result, scores=(99, 0))
    report = verify_record(dataclasses.replace(hidden_record, result=res))
    assert [(c.name, c.status) for c in report.checks[-2:]] == [
        ("hidden deal", "pass"),
        ("result", "fail"),
    ]
    assert report.checks[-1].detail == (
        f"scores are {hidden_record.result.scores}, record says (99, 0)"
    )
