"""Hostile peers against REAL headless processes over loopback TCP.

Each test starts an honest ``p2pkoikoi host --headless`` (or ``join``), lets a
:class:`~tests.hostile_peer.HostilePeer` speak the genuine protocol up to a
point, then misbehaves once.  For each attack the honest process must

* stop that connection with a specific one-line message on stderr, exit 1,
* within a bounded time of the attack,
* with its peak memory (``ru_maxrss`` from ``wait4``) under :data:`MEMORY_MB`,
* leaving a record that ``p2pkoikoi verify`` accepts as valid but incomplete (exit 3)
  (every check that applies passes; the match is reported unfinished) and that
  holds every action played before the attack.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import select
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hostile_peer import (
    HonestProcess,
    HostileHost,
    HostilePeer,
    Outcome,
    start_host,
    start_join,
)
from test_transport import link_player

from p2pkoikoi.cli import main as cli_main
from p2pkoikoi.engine import Action, IllegalActionError, KoiKoiError, get_preset
from p2pkoikoi.session import NEED_DATA, Role, SendAction, Session, State, crypto, wire
from p2pkoikoi.session.records.journal import decode_record
from p2pkoikoi.transport.errors import PeerSilentError
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.store.records import sidecar_path

MEMORY_MB = 200.0  # peak RSS bound for an honest process under attack
QUICK = 10.0  # seconds from an attack to the honest process's exit (detection is immediate)
STEP = 2.0  # the honest side's --timeout (each handshake step, the reveal)
# 12 rounds: a random match cannot end (a hand yaku, a knockout) before the attack point.
RULES_ARGS = ("--rounds", "12", "--timeout", str(STEP))


# ---------------------------------------------------------------------- helpers
def verify_json(path: Path) -> dict[str, Any]:
    """``p2pkoikoi verify --json PATH`` in this process (the real command)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["verify", "--json", str(path)])
    report: dict[str, Any] = json.loads(out.getvalue())
    report["exit_code"] = code
    return report


def check_stopped(outcome: Outcome, attack_at: float, expect: str, bound: float = QUICK) -> str:
    line = outcome.error_line
    assert outcome.code == 1, (outcome.code, outcome.stderr)
    assert expect in line, line
    assert not any(e.get("event") == "match_over" for e in outcome.events)
    assert outcome.ended_at - attack_at < bound, f"took {outcome.ended_at - attack_at:.1f}s"
    assert outcome.peak_rss_mb < MEMORY_MB, f"peak RSS {outcome.peak_rss_mb:.0f} MB"
    return line


def check_record(path: Path, actions: int) -> dict[str, Any]:
    """The record verifies up to the attack: every applicable check passes, unfinished."""
    report = verify_json(path)
    assert report["exit_code"] == 3 and report["ok"], report  # valid, incomplete
    assert report["complete"] is False
    # mid-match the file is a journal (protocol/records.md): decode_record reads both
    assert len(decode_record(path.read_bytes()).actions) == actions
    # unfinished: it holds the match seed, so only its owner may read it
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return report


@pytest.fixture
def host(tmp_path: Path) -> Any:
    record = tmp_path / "host.koikoi"
    proc, invite, port = start_host(tmp_path, record, *RULES_ARGS)
    try:
        yield proc, invite, port, record
    finally:
        proc.kill()


def mid_match(invite: str, after: int = 3) -> HostilePeer:
    """A hostile joiner that played honestly until its turn after ``after`` actions."""
    peer = HostilePeer.join(invite)
    peer.play_honestly_until(lambda p: p.session.seq >= after)
    return peer


def our_legal(peer: HostilePeer) -> tuple[Action, bytes]:
    """A legal action for us now and the state hash after it."""
    m = peer.session.match
    assert m is not None
    action = peer.rng.choice(m.legal_actions())
    return action, m.apply(action)[0].state_hash()


def signed_action(
    peer: HostilePeer, seq: int, text: str, h: bytes, key: Ed25519PrivateKey
) -> bytes:
    t = crypto.absorb(peer.session.transcript_hash, "action", seq, peer.session.our_seat, text, h)
    sig = crypto.sign(key, crypto.sig_message(t))
    return peer.seal(wire.ActionMsg(seq=seq, action=text, hash=h, sig=sig))


# ---------------------------------------------------------------------- framing attacks
def check_dropped(proc: HonestProcess, attack_at: float, expect: str, bound: float = QUICK) -> str:
    """Before the match the host drops the stranger's connection and keeps hosting."""
    note = proc.wait_event("warning", bound)
    text = str(note["text"])
    assert text.startswith("dropped a connection from 127.0.0.1: "), text
    assert expect in text, text
    assert time.monotonic() - attack_at < bound
    assert proc.proc.poll() is None, "the host gave up instead of dropping one connection"
    return text


def finish_killed(proc: HonestProcess) -> None:
    """Stop a host that is still waiting; its whole-life peak memory stays bounded."""
    proc.proc.kill()  # no reaping here: wait_exit reads the usage from wait4
    out = proc.wait_exit()
    assert out.peak_rss_mb < MEMORY_MB, f"peak RSS {out.peak_rss_mb:.0f} MB"


def test_garbage_instead_of_hello_then_a_real_match(host: Any, tmp_path: Path) -> None:
    """Garbage is dropped; the friend who joins next plays the whole match undisturbed."""
    proc, invite, port, record = host
    with socket.create_connection(("127.0.0.1", port)) as s:
        at = time.monotonic()
        s.sendall(wire.encode_frame(os.urandom(200)))
        check_dropped(proc, at, "bad message from peer")
    joiner = start_join(tmp_path, invite, tmp_path / "joiner.koikoi")
    try:
        j, h = joiner.wait_exit(), proc.wait_exit()
    finally:
        joiner.kill()
    assert h.code == 0 and j.code == 0, (h.stderr, j.stderr)
    assert h.events[-1]["event"] == j.events[-1]["event"] == "match_over"
    assert h.events[-1]["final_hash"] == j.events[-1]["final_hash"]
    assert verify_json(record)["complete"] is True
    assert stat.S_IMODE(record.stat().st_mode) == 0o644  # over: shareable
    assert h.peak_rss_mb < MEMORY_MB


def test_garbage_instead_of_auth(host: Any) -> None:
    """A genuine hello, then garbage: dropped; any record left behind verifies so far."""
    proc, invite, _, record = host
    peer = HostilePeer.join(invite)
    peer.send_raw(peer.session.data_to_send())  # our hello, not our auth
    assert peer.sock.recv(65536)  # the host's hello (maybe its auth): read, never answered
    at = time.monotonic()
    peer.send_raw(wire.encode_frame(os.urandom(150)))
    check_dropped(proc, at, "does not hold this invite's secret")
    if record.exists():
        report = verify_json(record)
        assert report["exit_code"] in (0, 3) and report["ok"] and not report["complete"], report
    finish_killed(proc)
    peer.close()


def test_oversized_length_is_refused_before_buffering(host: Any) -> None:
    proc, _, port, _ = host
    with socket.create_connection(("127.0.0.1", port)) as s:
        at = time.monotonic()
        s.sendall(b"\xff\xff\xff\xff")
        with contextlib.suppress(OSError):  # the host hangs up while we push 8 MiB
            s.sendall(bytes(8 << 20))
        text = check_dropped(proc, at, "exceeds the maximum of 65536 bytes")
    assert "length 4294967295" in text
    finish_killed(proc)


def test_slowloris_hello_hits_the_handshake_deadline(host: Any) -> None:
    """One byte of a valid hello at a time, never the last: the hello deadline ends it."""
    proc, _, port, _ = host
    hello = Session(
        Role.JOINER,
        identity_key=Ed25519PrivateKey.generate(),
        invite_secret=os.urandom(16),
        name="Mallory",
        entropy=os.urandom(64),
    ).data_to_send()
    with socket.create_connection(("127.0.0.1", port)) as s:
        at = time.monotonic()
        closed = False
        for byte in hello[:-1]:  # pace by waiting on the socket: leave as soon as it closes
            with contextlib.suppress(OSError):
                s.sendall(bytes([byte]))
            ready, _, _ = select.select([s], [], [], 0.25)
            if ready:
                try:
                    closed = not s.recv(65536)
                except OSError:
                    closed = True
            if closed:
                break
        assert closed, "the host kept a byte-at-a-time hello open"
        check_dropped(proc, at, f"it did not authenticate within {STEP:g}s")
    finish_killed(proc)


def test_garbage_frame_mid_match(host: Any) -> None:
    proc, invite, _, record = host
    peer = mid_match(invite)
    at = time.monotonic()
    peer.send_raw(wire.encode_frame(os.urandom(200)))
    check_stopped(proc.wait_exit(), at, "frame failed authentication")
    check_record(record, peer.session.seq)
    peer.close()


def test_truncated_frame_then_close(host: Any) -> None:
    """Half a frame, then the stream ends: a broken connection, so the host waits for the
    joiner to come back (reconnect window) with its record saved up to the cut."""
    proc, invite, _, record = host
    peer = mid_match(invite)
    action, h = our_legal(peer)
    frame = signed_action(peer, peer.session.seq + 1, str(action), h, Ed25519PrivateKey.generate())
    at = time.monotonic()
    peer.send_raw(frame[: len(frame) // 2])
    peer.sock.shutdown(socket.SHUT_WR)
    note = proc.wait_event("reconnecting", QUICK)
    assert time.monotonic() - at < QUICK
    assert "the connection" in str(note.get("reason", note.get("text"))), note
    check_record(record, peer.session.seq)
    finish_killed(proc)
    peer.close()


def test_replayed_frame(host: Any) -> None:
    proc, invite, _, record = host
    peer = mid_match(invite)
    at = time.monotonic()
    peer.send_raw(peer.sent_frames[-1])  # our last action, again
    check_stopped(proc.wait_exit(), at, "frame failed authentication")
    check_record(record, peer.session.seq)
    peer.close()


def test_reordered_frames(host: Any) -> None:
    proc, invite, _, record = host
    peer = mid_match(invite)
    first = peer.seal(wire.ChatMsg(text="first"))
    second = peer.seal(wire.ChatMsg(text="second"))
    at = time.monotonic()
    peer.send_raw(second + first)
    check_stopped(proc.wait_exit(), at, "frame failed authentication")
    check_record(record, peer.session.seq)
    peer.close()


def test_flood_of_frames(host: Any) -> None:
    """Pings as fast as we can seal them, never reading the pongs."""
    proc, invite, _, record = host
    peer = mid_match(invite, after=1)
    ping = wire.PingMsg(nonce=b"x" * 32)
    sent = 0
    stop = threading.Event()

    def flood() -> None:
        nonlocal sent
        try:
            while not stop.is_set():
                peer.send_raw(b"".join(peer.seal(ping) for _ in range(256)))
                sent += 256
        except OSError:
            return

    t = threading.Thread(target=flood, daemon=True)
    at = time.monotonic()
    t.start()
    try:
        check_stopped(proc.wait_exit(), at, "flood")
    finally:
        stop.set()
        t.join(30)
    assert sent >= 256
    check_record(record, peer.session.seq)
    peer.close()


# ---------------------------------------------------------------------- game attacks
@pytest.mark.parametrize("which", ["auth", "accept", "decline"])
def test_rules_switch_after_the_handshake(host: Any, which: str) -> None:
    proc, invite, _, record = host
    peer = mid_match(invite, after=1)
    other = get_preset("nintendo").with_settings(rounds=1)
    key = Ed25519PrivateKey.generate()
    msg: wire.Message
    if which == "auth":
        msg = wire.AuthMsg(
            name="Mallory",
            key=crypto.public_bytes(key),
            sig=bytes(64),
            rules=other.encode(),
            fp=other.fingerprint(),
            rounds=1,
        )
    elif which == "accept":
        msg = wire.AcceptMsg(fp=other.fingerprint())
    else:
        msg = wire.DeclineMsg(reason="I want other rules", expected=other.encode())
    at = time.monotonic()
    peer.send_raw(peer.seal(msg))
    check_stopped(proc.wait_exit(), at, f"unexpected {which} message from peer during play")
    check_record(record, peer.session.seq)
    peer.close()


def test_illegal_action(host: Any) -> None:
    proc, invite, _, record = host
    peer = mid_match(invite)
    m = peer.session.match
    assert m is not None
    legal = {str(a) for a in m.legal_actions()}
    text = next(t for t in ("koikoi", "stop", "swap", "keep") if t not in legal)
    with pytest.raises(IllegalActionError):  # really illegal here
        m.apply(Action.parse(text))
    at = time.monotonic()
    seq = peer.session.seq + 1
    peer.send_raw(signed_action(peer, seq, text, bytes(32), Ed25519PrivateKey.generate()))
    check_stopped(proc.wait_exit(), at, f"the other player sent an illegal action {seq}")
    check_record(record, peer.session.seq)
    # a cheat ends the match for good: the invite secret to resume it is deleted
    assert not sidecar_path(record).exists()
    peer.close()


def test_action_out_of_turn(host: Any) -> None:
    """Our genuine action, then in the same write another one while the host is to act."""
    proc, invite, _, record = host

    def hands_over(p: HostilePeer) -> bool:
        m = p.session.match
        assert m is not None
        return p.session.seq >= 2 and any(
            m.apply(a)[0].to_act != p.session.our_seat for a in m.legal_actions()
        )

    peer = mid_match(invite, after=0)
    peer.play_honestly_until(hands_over)
    m = peer.session.match
    assert m is not None
    action = next(a for a in m.legal_actions() if m.apply(a)[0].to_act != peer.session.our_seat)
    genuine_bytes = peer.session.send(SendAction(action))
    after = peer.session.match
    assert after is not None and after.to_act != peer.session.our_seat
    seq = peer.session.seq + 1
    rogue = signed_action(peer, seq, "stop", bytes(32), Ed25519PrivateKey.generate())
    at = time.monotonic()
    peer.send_raw(genuine_bytes + rogue)
    check_stopped(proc.wait_exit(), at, f"the other player sent action {seq} out of turn")
    check_record(record, peer.session.seq)  # our genuine action is in the host's record
    peer.close()


def test_wrong_state_hash(host: Any) -> None:
    proc, invite, _, record = host
    peer = mid_match(invite)
    action, h = our_legal(peer)
    wrong = bytes(b ^ 0xFF for b in h)
    seq = peer.session.seq + 1
    at = time.monotonic()
    peer.send_raw(signed_action(peer, seq, str(action), wrong, Ed25519PrivateKey.generate()))
    check_stopped(proc.wait_exit(), at, f"state hash mismatch after action {seq}")
    check_record(record, peer.session.seq)
    peer.close()


def test_forged_signature(host: Any) -> None:
    """Legal action, right hash, signed by a key that is not the joiner's."""
    proc, invite, _, record = host
    peer = mid_match(invite)
    action, h = our_legal(peer)
    seq = peer.session.seq + 1
    at = time.monotonic()
    peer.send_raw(signed_action(peer, seq, str(action), h, Ed25519PrivateKey.generate()))
    check_stopped(proc.wait_exit(), at, f"the signature on action {seq} is invalid (forged)")
    check_record(record, peer.session.seq)
    peer.close()


# ---------------------------------------------------------------------- a hostile host
def hostile_host_until_value(tmp_path: Path) -> tuple[HostilePeer, HonestProcess, Path]:
    """The hostile side hosts; an honest ``p2pkoikoi join`` connects; we stop at its value."""
    hh = HostileHost(get_preset("online").with_settings(rounds=1))
    record = tmp_path / "joiner.koikoi"
    joiner = start_join(tmp_path, hh.invite, record, "--timeout", str(STEP))
    peer = hh.accept()
    return peer, joiner, record


def test_wrong_commitment_reveal(tmp_path: Path) -> None:
    peer, joiner, record = hostile_host_until_value(tmp_path)
    try:
        s = peer.session
        peer.pump_until(lambda: s.state is State.SEED and s._commitment is not None)
        s._host_value = os.urandom(32)  # reveal a value other than the committed one
        at = time.monotonic()
        peer.pump_until(lambda: s.state is not State.SEED)
        line = check_stopped(joiner.wait_exit(), at, "reveal does not open its commitment")
        assert "cheating" in line
        report = verify_json(record)
        assert report["exit_code"] == 3 and report["complete"] is False
        assert json.loads(record.read_text())["commitment"] is not None
    finally:
        joiner.kill()
        peer.close()


@pytest.mark.parametrize("how", ["silence", "close", "abort"])
def test_walking_away_after_the_value_is_the_hosts_forfeit(tmp_path: Path, how: str) -> None:
    """Issue 10.4: with the joiner's value the host knows the deal before revealing.
    Silence, a closed connection or an abort then: the host forfeits, on the joiner's
    table and in its record, with the host's signed commitment as evidence."""
    peer, joiner, record = hostile_host_until_value(tmp_path)
    try:
        s = peer.session
        peer.pump_until(lambda: s.state is State.SEED and s._commitment is not None)
        # read the joiner's value, then walk away: the reveal is never sent
        at = time.monotonic()
        while s._joiner_value is None:
            data = peer.sock.recv(65536)
            assert data, "the joiner closed before sending its value"
            s.receive_data(data)
            while s._joiner_value is None and s.next_event() is not NEED_DATA:
                pass
        s.data_to_send()  # the reveal, never sent
        if how == "close":
            peer.sock.close()
        elif how == "abort":
            peer.send_raw(peer.seal(wire.AbortMsg(reason="my program stopped")))
            peer.sock.close()
        bound = QUICK + (STEP if how == "silence" else 0)
        line = check_stopped(joiner.wait_exit(), at, "the host forfeits", bound=bound)
        assert "\n" not in line
        saved = json.loads(record.read_text())
        assert saved["forfeit"]["seat"] == 0, saved["forfeit"]
        assert saved["commit_sig"] is not None and saved["host_value"] is None
        report = verify_json(record)
        assert report["exit_code"] == 3 and report["ok"] and report["complete"] is False
        assert any("the host forfeited" in lack for lack in report["lacks"]), report
        assert any(c["name"] == "forfeit" and c["status"] == "pass" for c in report["checks"])
    finally:
        joiner.kill()
        peer.close()


# ---------------------------------------------------------------------- part A
def test_resume_by_a_different_identity_is_refused(host: Any) -> None:
    """The joiner's connection drops; someone holding the invite and the joiner's record
    (but not its identity key) tries to resume: refused, and the host keeps waiting for
    the real joiner, who then resumes and finishes the match."""
    proc, invite, _, record = host
    peer = mid_match(invite)
    ours = peer.session.record()
    assert peer.identity is not None
    peer.close()  # between frames: a lost connection
    proc.wait_event("reconnecting", QUICK)
    imposter = HostilePeer.resume_join(invite, ours, peer.identity, peer.session.resume_secret)
    imposter.session._key = Ed25519PrivateKey.generate()  # signs its resume with another key
    at = time.monotonic()
    with contextlib.suppress(KoiKoiError, OSError):
        imposter.flush()  # its hello
        while imposter.pump_once(QUICK):  # until the host hangs up
            pass
    note = proc.wait_event("warning", QUICK)
    assert time.monotonic() - at < QUICK
    assert "refused a reconnection" in note["text"], note
    assert "not the one this match was played with" in note["text"], note
    assert imposter.session.state is not State.PLAY
    imposter.close()
    check_record(record, peer.session.seq)
    genuine = HostilePeer.resume_join(invite, ours, peer.identity, peer.session.resume_secret)
    genuine.play_to_end()
    h = proc.wait_exit()
    assert h.code == 0, h.stderr
    assert h.events[-1]["event"] == "match_over"
    final = genuine.session.record().result
    assert final is not None and h.events[-1]["final_hash"] == final.final_state_hash.hex()
    assert verify_json(record)["complete"] is True
    genuine.close()


# ---------------------------------------------------------------------- in memory, mock clock
async def test_slowloris_frame_during_play_hits_the_silence_bound(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """After the handshake, one byte of a frame per second, never the last one.

    Bytes that never make a message do not prove the peer alive: the silence
    bound (``silence_fail``) ends the match, which a byte-counting heartbeat
    would never do.
    """
    t = Timeouts(handshake=10, reveal=10, ping_interval=5, silence_warn=15, silence_fail=60)
    rules = get_preset("online").with_settings(rounds=1)
    # seeded keys and entropy: a deal that is played (a random one-round deal is decided
    # by a dealt hand yaku about once in a hundred, and never reaches PLAY)
    rng = random.Random(504)
    secret = rng.randbytes(16)
    host = Session(
        Role.HOST,
        identity_key=Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)),
        invite_secret=secret,
        name="Alice",
        entropy=rng.randbytes(64),
        rules=rules,
    )
    joiner = Session(
        Role.JOINER,
        identity_key=Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)),
        invite_secret=secret,
        name="Mallory",
        entropy=rng.randbytes(64),
        expected_rules=rules,
    )
    a, b = trio.testing.memory_stream_pair()
    error: list[BaseException] = []

    async def trickler() -> None:
        await b.send_all(joiner.data_to_send())
        while joiner.state is not State.PLAY:
            joiner.receive_data(bytes(await b.receive_some(65536)))
            while joiner.next_event() is not NEED_DATA:
                pass
            await b.send_all(joiner.data_to_send())
        frame = wire.encode_frame(bytes(1000))
        for byte in frame[:-1]:
            await b.send_all(bytes([byte]))
            await trio.sleep(1)  # mock clock: the attacker's pace, not a wait
        await trio.sleep_forever()

    start = trio.current_time()
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trickler)
            try:
                async with open_link(
                    a, host, link_player(timeouts=t, record_path=tmp_path / "h.koikoi")
                ) as link:
                    await link.wait_ended()
            except KoiKoiError as exc:
                error.append(exc)
            nursery.cancel_scope.cancel()
    assert len(error) == 1 and isinstance(error[0], PeerSilentError), error
    assert t.silence_fail <= trio.current_time() - start <= t.silence_fail + 2 * t.ping_interval
    assert verify_json(tmp_path / "h.koikoi")["ok"]


# ---------------------------------------------------------------------- turn limit (10.6)
TURN = 3  # the host's --turn-limit in these tests (seconds)


def ping_until_closed(peer: HostilePeer, bound: float) -> bytes:
    """At our turn, never act: ping twice a second (well within the rate limit) until
    the honest side closes the connection; returns everything it sent meanwhile."""
    got = bytearray()
    deadline = time.monotonic() + bound
    n, next_ping = 0, time.monotonic()
    while (now := time.monotonic()) < deadline:
        if now >= next_ping:  # two a second, however often the host writes
            n, next_ping = n + 1, now + 0.5
            with contextlib.suppress(OSError):
                peer.send_raw(peer.seal(wire.PingMsg(nonce=n.to_bytes(8, "big"))))
        # read what comes until the next ping is due (the attacker's pace, not a wait)
        ready, _, _ = select.select([peer.sock], [], [], max(0.0, next_ping - now))
        if ready:
            try:
                data = peer.sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            got += data
    return bytes(got)


def test_a_peer_that_pings_but_never_acts_forfeits_by_time(tmp_path: Path) -> None:
    """Issue 10.6: a joiner whose turn it is keeps pinging within the rate limit and
    never moves.  After the turn limit plus the grace the host ends the match as the
    joiner's forfeit by time, says so, and records it signed by the host."""
    record = tmp_path / "host.koikoi"
    proc, invite, _ = start_host(tmp_path, record, *RULES_ARGS, "--turn-limit", str(TURN))
    peer = HostilePeer.join(invite)
    try:
        peer.play_honestly_until(lambda p: p.session.seq >= 3)
        assert peer.session.turn_limit == TURN  # agreed in the handshake
        at = time.monotonic()
        got = ping_until_closed(peer, TURN + STEP + QUICK)
        out = proc.wait_exit()
        line = check_stopped(out, at, "forfeits by time", bound=TURN + STEP + QUICK)
        assert "Mallory did not move within the turn limit (3s per decision" in line, line
        assert time.monotonic() - at >= TURN  # not before the limit
        # the last thing the host said was why (an abort naming the time)
        peer.session.receive_data(got)
        with pytest.raises(Exception, match="your time ran out"):
            while peer.session.next_event() is not NEED_DATA:
                pass
        saved = json.loads(record.read_text())
        assert saved["forfeit"]["seat"] == 1 and saved["forfeit"]["reason"] == "time"
        report = verify_json(record)
        assert report["exit_code"] == 3 and report["ok"] and report["complete"] is False
        forfeit = [c for c in report["checks"] if c["name"] == "forfeit"]
        assert forfeit and forfeit[0]["status"] == "pass", report
        assert "by time" in forfeit[0]["detail"] and "host's claim" in forfeit[0]["detail"]
        assert any("the joiner forfeited (time)" in lack for lack in report["lacks"]), report
    finally:
        proc.kill()
        peer.close()


def test_a_hung_bot_is_warned_then_resigns_on_its_own_behalf(tmp_path: Path) -> None:
    """Issue 10.6, the honest side: the host's engine hangs at its turn.  A
    ``time_warning`` comes before the limit, then the host's program resigns for it
    (``time_out``); the match ends normally, signed by both."""
    record = tmp_path / "host.koikoi"
    proc, invite, _ = start_host(
        tmp_path, record, *RULES_ARGS, "--turn-limit", str(TURN), "--bot", "cmd:sleep 600"
    )
    peer = HostilePeer.join(invite)
    try:
        peer.play_to_end()
        warning = proc.wait_event("time_warning")
        assert 0 < warning["seconds_left"] < TURN, warning  # half the limit, rounded up
        assert "your time is running out" in warning["text"]
        timeout = proc.wait_event("time_out")
        assert "your time ran out (3s per decision)" in timeout["text"]
        over = proc.wait_event("match_over")
        assert over["winner"] == "joiner" and "your time ran out" in over["forfeit"]
        names = [e.get("event") for e in proc.seen]
        assert names.index("time_warning") < names.index("time_out")
        saved = decode_record(record.read_bytes())
        assert saved.actions[-1].action == "resign:time" and saved.actions[-1].seat == 0
        report = verify_json(record)
        assert report["exit_code"] == 0, report
        assert any(c["name"] == "resigned by time" for c in report["checks"]), report
    finally:
        proc.kill()
        peer.close()
