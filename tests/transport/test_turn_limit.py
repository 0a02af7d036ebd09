"""The agreed turn limit (issue 10.6) in memory, under trio's MockClock.

The side to act is warned, counts down, and resigns on its own behalf when its
time runs out; the waiting side ends the match as the other's forfeit by time
after the limit plus a grace, and records it signed.  The real-process
versions are in tests/transport/test_hostile.py.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from test_transport import link_player

from p2pkoikoi.cli.headless import play_headless
from p2pkoikoi.engine import RuleSet, get_preset
from p2pkoikoi.session import (
    NEED_DATA,
    TIME_FORFEIT,
    Ping,
    Pong,
    SendAction,
    Session,
    State,
    decode_record,
    encode_record,
)
from p2pkoikoi.session.errors import LocalProtocolError
from p2pkoikoi.session.records.record import ForfeitRecord
from p2pkoikoi.session.testing import SECRET, det_bytes, det_key
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.errors import TurnTimeoutError
from p2pkoikoi.transport.limits import Timeouts, turn_warning
from p2pkoikoi.transport.link.contract import Update
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.notes import Note

RULES = get_preset("online").with_settings(rounds=12)
LIMIT = 120  # seconds per decision in these tests
T = Timeouts(handshake=10, reveal=10, ping_interval=5, silence_warn=15, silence_fail=60)


def host_session(turn_limit: int = LIMIT, rules: RuleSet = RULES) -> Session:
    return Session(
        "host",
        identity_key=det_key("host"),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("entropy/host"),
        rules=rules,
        turn_limit=turn_limit,
    )


def joiner_session(rules: RuleSet = RULES) -> Session:
    return Session(
        "joiner",
        identity_key=det_key("joiner"),
        invite_secret=SECRET,
        name="Bob",
        entropy=det_bytes("entropy/joiner"),
        expected_rules=rules,
    )


def test_turn_warning_is_a_minute_or_half_the_limit() -> None:
    assert turn_warning(600) == 60 and turn_warning(60) == 30 and turn_warning(3) == 1.5


@pytest.mark.parametrize("deal", ["open", "hidden"])
async def test_a_player_who_walked_away_is_warned_then_resigns_by_time(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, deal: str
) -> None:
    """The host's person never acts: warned a minute before the limit, a countdown
    in the status line, then its program resigns for it at the limit (not before);
    the match ends normally and both records verify complete.  With the hidden deal
    the clock runs on the decisions (``act``) only, and the deal in play is audited
    after the resignation."""
    rules = RULES if deal == "open" else RULES.with_settings(deal="hidden", rounds=2)
    a, b = trio.testing.memory_stream_pair()
    notes: list[Note] = []
    statuses: list[tuple[float, str]] = []
    finals: dict[str, Any] = {}
    turn_at: list[float] = []

    async def absent_host() -> None:
        async with open_link(
            a,
            host_session(rules=rules),
            link_player(timeouts=T, record_path=tmp_path / "h.koikoi"),
            notify=notes.append,
        ) as link:
            async for up in link.updates:
                if up.kind == "state" and up.view.to_act == 0 and not turn_at:
                    turn_at.append(trio.current_time())
                if up.kind == "status":
                    statuses.append((trio.current_time(), up.text))
                if up.kind == "over":
                    finals["host"] = link.result
                    break

    async def joiner() -> None:
        rng = random.Random(2)
        async with open_link(
            b, joiner_session(rules), link_player(timeouts=T, record_path=tmp_path / "j.koikoi")
        ) as link:
            finals["joiner"] = await play_headless(
                link, lambda v: rng.choice(v.legal_actions), lambda e: None, in_thread=False
            )

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(absent_host)
            nursery.start_soon(joiner)
    warnings = [n for n in notes if n["event"] == "time_warning"]
    assert warnings[0]["seconds_left"] == 60, warnings
    assert "your time is running out: 60s left to act (120s per decision)" in warnings[0]["text"]
    timed_out = [n for n in notes if n["event"] == "time_out"]
    assert len(timed_out) == 1 and "your time ran out (120s per decision)" in timed_out[0]["text"]
    # the table's status line counts down: every 10 s, then every second
    texts = [t for _, t in statuses]
    for left in (50, 10, 5, 1):
        assert f"{left}s left to act" in texts, texts
    first = statuses[0][0]
    assert first - turn_at[0] == pytest.approx(LIMIT - 60, abs=0.01)
    host_final, joiner_final = finals["host"], finals["joiner"]
    assert host_final is not None and joiner_final is not None
    assert joiner_final["winner"] == "joiner"
    rec = decode_record((tmp_path / "h.koikoi").read_bytes())
    # the resignation says "time", signed by the host: both records say so
    at = max(i for i, a in enumerate(rec.actions) if not a.kind)  # (then the audits)
    assert rec.actions[at].action == "resign:time" and rec.actions[at].seat == 0
    assert [a.kind for a in rec.actions[at + 1 :]] == ([] if deal == "open" else ["audit"] * 2)
    assert rec.forfeit is None  # a resignation, signed by both: an ordinary end
    for side in ("h", "j"):
        report = verify_record(decode_record((tmp_path / f"{side}.koikoi").read_bytes()))
        assert report.ok and not report.lacks, report
        check = next(c for c in report.checks if c.name == "resigned by time")
        assert "the host (Alice) ran out of time (120s per decision)" in check.detail
    assert "Alice's time ran out" in joiner_final["forfeit"]
    # the reason is signed: a record that drops it no longer verifies
    plain = dataclasses.replace(rec.actions[at], action="resign")
    forged = dataclasses.replace(rec, actions=(*rec.actions[:at], plain, *rec.actions[at + 1 :]))
    assert not verify_record(forged).ok


async def stalling_joiner(stream: trio.abc.Stream, at_seq: int, got: list[bytes]) -> None:
    """A modified program: plays until its turn after ``at_seq`` actions, then only
    answers pings (and pings itself) and never moves; keeps what it reads."""
    s = joiner_session()
    rng = random.Random(3)
    await stream.send_all(s.data_to_send())
    stalled = False
    n = 0

    async def pinger() -> None:
        nonlocal n
        while True:
            await trio.sleep(2)  # well within the chatter budget
            if stalled and s.state is State.PLAY:
                n += 1
                await stream.send_all(s.send(Ping(n.to_bytes(8, "big"))))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pinger)
        while True:
            data = await stream.receive_some(65536)
            if not data:
                break
            if stalled:
                got.append(bytes(data))
            s.receive_data(bytes(data))
            try:
                while (ev := s.next_event()) is not NEED_DATA:
                    if isinstance(ev, Ping):
                        await stream.send_all(s.send(Pong(ev.nonce)))
            except Exception:
                break
            out = s.data_to_send()
            m = s.match
            if s.state is State.PLAY and m is not None and m.to_act == 1 and not stalled:
                if s.seq >= at_seq:
                    stalled = True
                else:
                    out += s.send(SendAction(rng.choice(m.legal_actions())))
            if out:
                await stream.send_all(out)
        nursery.cancel_scope.cancel()


async def test_a_peer_that_never_moves_forfeits_by_time_after_the_grace(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    a, b = trio.testing.memory_stream_pair()
    notes: list[Note] = []
    updates: list[Update] = []
    got: list[bytes] = []
    stalled_at: list[float] = []
    error: list[BaseException] = []
    path = tmp_path / "h.koikoi"

    async def host() -> None:
        rng = random.Random(1)
        try:
            async with open_link(
                a, host_session(), link_player(timeouts=T, record_path=path)
            ) as link:
                link._notify = notes.append
                async for up in link.updates:
                    updates.append(up)
                    if up.kind == "state" and up.view.to_act == 1 and link.session.seq >= 4:
                        stalled_at.append(trio.current_time())
                    if up.kind == "state" and up.view.to_act == 0 and up.view.legal_actions:
                        if not link.session.match or link.session.match.to_act != 0:
                            continue
                        await link.act(rng.choice(up.view.legal_actions))
        except TurnTimeoutError as exc:
            error.append(exc)

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stalling_joiner, b, 4, got)
            await host()
            nursery.cancel_scope.cancel()
    assert error, "the host waited forever"
    assert "Bob forfeits by time" in str(error[0]), error
    waited = trio.current_time() - stalled_at[-1]
    assert waited == pytest.approx(LIMIT + T.turn_grace, abs=0.01)
    assert updates[-1].kind == "over" and "forfeits by time" in updates[-1].text
    rec = decode_record(path.read_bytes())
    assert rec.forfeit is not None
    assert (rec.forfeit.seat, rec.forfeit.reason) == (1, TIME_FORFEIT)
    report = verify_record(rec)
    assert report.ok and not report.complete
    check = next(c for c in report.checks if c.name == "forfeit")
    assert check.status == "pass"
    assert "the joiner forfeits by time: the turn limit (120s) ran out" in check.detail
    assert "the host's claim: it rests on the host's signature alone" in check.detail
    assert "the joiner forfeited (time): one player's account" in report.lacks
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra")
    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "protocol" / "record.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(json.loads(encode_record(rec)))
    # the record round-trips, and the host's signature binds seat, reason and record
    assert decode_record(encode_record(rec)) == rec
    for bad in (
        dataclasses.replace(rec.forfeit, seat=0),
        dataclasses.replace(rec.forfeit, reason="walked away"),
        dataclasses.replace(rec.forfeit, sig=bytes(64)),
    ):
        forged = dataclasses.replace(rec, forfeit=bad)
        assert not verify_record(forged).ok, bad
    cut = dataclasses.replace(rec, actions=rec.actions[:-1])  # then it was the host's turn
    assert not verify_record(cut).ok
    assert not verify_record(dataclasses.replace(rec, turn_limit=0)).ok


def test_a_time_forfeit_needs_the_peers_turn() -> None:
    s = host_session()
    with pytest.raises(LocalProtocolError, match="peer's turn during play"):
        s.claim_time_forfeit()


def test_a_forfeit_record_without_a_signature_is_refused() -> None:
    rec = decode_record(encode_record(dataclasses.replace(_any_record(), forfeit=None)))
    text = encode_record(
        dataclasses.replace(rec, forfeit=ForfeitRecord(1, TIME_FORFEIT, bytes(64)))
    ).decode()
    broken = text.replace('"sig": "' + "00" * 64 + '"', '"sig": null')
    with pytest.raises(Exception, match="forfeit.sig"):
        decode_record(broken.encode())


def _any_record() -> Any:
    return host_session().record()


async def test_a_reconnect_does_not_restart_the_clock(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The connection breaks 20 s into the host's turn and both sides resume: the
    host's time still runs out 120 s after its turn began, not after the resume."""
    from test_reconnect import Net  # the in-memory network that can be cut

    from p2pkoikoi.transport.link.reconnect import Reconnect

    net = Net()
    timeouts = dataclasses.replace(T, reconnect_window=60, backoff_initial=0.5)
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)
    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=net.dial)
    a, b = net.pair()
    timed: list[tuple[float, Note]] = []
    turn_at: list[float] = []
    finals: dict[str, Any] = {}

    def note(n: Note) -> None:
        timed.append((trio.current_time(), n))

    async def cut_later() -> None:
        await trio.sleep(20)
        net.cut()

    async def absent_host(nursery: trio.Nursery) -> None:
        async with open_link(
            a,
            host_session(),
            link_player(timeouts=timeouts, record_path=tmp_path / "h.koikoi"),
            notify=note,
            reconnect=rc_h,
        ) as link:
            async for up in link.updates:
                if up.kind == "state" and up.view.to_act == 0 and not turn_at:
                    turn_at.append(trio.current_time())
                    nursery.start_soon(cut_later)
                if up.kind == "over":
                    finals["host"] = link.result
                    break

    async def joiner() -> None:
        rng = random.Random(2)
        async with open_link(
            b,
            joiner_session(),
            link_player(timeouts=timeouts, record_path=tmp_path / "j.koikoi"),
            reconnect=rc_j,
        ) as link:
            finals["joiner"] = await play_headless(
                link, lambda v: rng.choice(v.legal_actions), lambda e: None, in_thread=False
            )

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(absent_host, nursery)
            nursery.start_soon(joiner)
    kinds = [n["event"] for _, n in timed]
    assert "reconnected" in kinds, kinds
    resumed = next(t for t, n in timed if n["event"] == "reconnected")
    out = next(t for t, n in timed if n["event"] == "time_out")
    assert resumed - turn_at[0] == pytest.approx(20, abs=2)  # cut at 20 s, back soon after
    assert out - turn_at[0] == pytest.approx(LIMIT, abs=0.01)
    assert finals["joiner"]["winner"] == "joiner"
    rec = decode_record((tmp_path / "h.koikoi").read_bytes())
    assert rec.actions[-1].action == "resign:time" and verify_record(rec).ok
