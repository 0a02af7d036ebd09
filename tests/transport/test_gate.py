"""Strangers cannot end or stall a host; short-code guesses are counted (issue 10: 1, 2;
issue 9: PAKE).

Against REAL ``p2pkoikoi host --headless`` processes over loopback TCP (through
``tests/hostile_peer.py``), plus the gate's code accounting in-process where the
order of many connections must be exact.
"""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
import trio.testing
from hostile_peer import (
    LIMIT,
    HonestProcess,
    HostilePeer,
    cli,
    env_for,
    polyglot_abort,
    start_join,
)

from p2pkoikoi.engine import KoiKoiError, get_preset
from p2pkoikoi.session import Role, Session, decode_code, wire
from p2pkoikoi.session.testing import det_bytes, det_key, drain
from p2pkoikoi.transport.open.gate import CodeGuard, Gate, GateLimits

RULES = get_preset("online").with_settings(rounds=1)


def host_process(
    tmp_path: Path, timeout: float, rounds: int = 1
) -> tuple[HonestProcess, dict[str, Any]]:
    proc = HonestProcess(
        cli(
            "host",
            "--headless",
            "--bot",
            "random",
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--name",
            "Alice",
            "--rounds",
            str(rounds),
            "--timeout",
            str(timeout),
            "--record",
            str(tmp_path / "host.koikoi"),
            "--set",
            "deal=open",  # the hostile peer speaks the open deal (the default is hidden)
        ),
        env_for(tmp_path, "host"),
    )
    return proc, proc.wait_event("listening")


def stranger(port: int, data: bytes, source: str = "127.0.0.1") -> bytes:
    """Connect from ``source``, send ``data``, read until the host closes; what it said."""
    with socket.socket() as s:
        s.settimeout(LIMIT)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(data)
        got = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := s.recv(65536):
                got += chunk
        return got


def frames(data: bytes) -> list[wire.Message]:
    out = []
    while data:
        payload, data = wire.decode_frame(data)
        assert payload is not None
        out.append(wire.decode_message(payload))
    return out


def play_the_real_joiner(tmp_path: Path, host: HonestProcess, invite: str) -> None:
    joiner = start_join(tmp_path, invite, tmp_path / "join.koikoi")
    h, j = host.wait_exit(), joiner.wait_exit()
    assert (h.code, j.code) == (0, 0), (h.stderr, j.stderr)
    assert h.events[-1]["event"] == j.events[-1]["event"] == "match_over"
    assert h.events[-1]["final_hash"] == j.events[-1]["final_hash"]


def warnings(proc: HonestProcess, n: int) -> list[str]:
    return [str(proc.wait_event("warning")["text"]) for _ in range(n)]


# ---------------------------------------------------------------------- finding 1
def test_strangers_before_authentication_cannot_end_the_host(tmp_path: Path) -> None:
    """A hello of another version, garbage, a plaintext abort: each drops only that
    connection, with a warning; the invite stays good and the real joiner plays."""
    host, listening = host_process(tmp_path, timeout=5)
    port = int(listening["port"])
    old = msgpack.packb(
        {"type": "hello", "v": 1, "role": "joiner", "program": "0.1.0", "eph": bytes(32)}
    )
    answer = frames(stranger(port, wire.encode_frame(old)))
    # the host's hello (so a version 1 program names both versions), then a plaintext abort
    v = wire.PROTOCOL_VERSION
    assert isinstance(answer[0], wire.HelloMsg) and answer[0].v == v
    assert isinstance(answer[-1], wire.AbortMsg)
    assert "version 1" in answer[-1].reason and f"version {v}" in answer[-1].reason
    newer = msgpack.packb({"type": "hello", "v": v + 1, "role": "joiner", "future": True})
    stranger(port, wire.encode_frame(newer))
    stranger(port, wire.encode_frame(b"\xc1 garbage"))
    abort = wire.encode_message(wire.AbortMsg(reason="changed my mind"))
    stranger(port, wire.encode_frame(abort))
    texts = warnings(host, 4)
    assert f"speaks version 1, this one speaks version {v}" in texts[0], texts
    assert f"speaks version {v + 1}" in texts[1], texts
    assert "not valid msgpack" in texts[2], texts
    assert "changed my mind" in texts[3], texts
    assert all(t.startswith("dropped a connection from 127.0.0.1") for t in texts)
    play_the_real_joiner(tmp_path, host, str(listening["invite"]))


# ---------------------------------------------------------------------- finding 2
def test_idle_connections_do_not_stall_the_host(tmp_path: Path) -> None:
    """Two idle sockets from the joiner's own address and seventeen from another: the
    real joiner authenticates at once, long before the idle ones time out."""
    host, listening = host_process(tmp_path, timeout=60)
    port = int(listening["port"])
    idle = []
    for source in ["127.0.0.1"] * 2 + ["127.0.0.2"] * 17:
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        idle.append(s)
    try:
        # 4 per source address at most: 13 of the 17 are refused at once, in one line each
        busy = [t for t in warnings(host, 13) if "too many at once" in t]
        assert len(busy) == 13 and all("127.0.0.2" in t for t in busy)
        start = time.monotonic()
        joiner = start_join(tmp_path, str(listening["invite"]), tmp_path / "join.koikoi")
        joiner.wait_event("handshake", timeout=LIMIT)
        took = time.monotonic() - start
        assert took < 20, f"the joiner needed {took:.1f}s"  # the idle ones wait 60 s
        h, j = host.wait_exit(), joiner.wait_exit()
        assert (h.code, j.code) == (0, 0), (h.stderr, j.stderr)
        assert h.events[-1]["final_hash"] == j.events[-1]["final_hash"]
    finally:
        for s in idle:
            s.close()


# ---------------------------------------------------------------------- PAKE: the code
def test_wrong_codes_are_counted_and_end_the_code(tmp_path: Path) -> None:
    host, listening = host_process(tmp_path, timeout=5)
    invite, code = str(listening["invite"]), decode_code(str(listening["code"]))
    words = list(code.words)
    words[1] = "zulu" if words[1] != "zulu" else "aardvark"
    wrong = "-".join((str(code.number), *words))
    for attempt in range(3):
        peer = HostilePeer.join(invite, code=wrong)
        peer.flush()
        with pytest.raises(KoiKoiError, match="the code does not match"):
            while peer.pump_once():
                pass
        peer.close()
        assert "the code does not match" in warnings(host, 1)[0]
        if attempt < 2:
            assert not any(e.get("event") == "code_expired" for e in host.seen)
    expired = next(e for e in host.seen if e["event"] == "code_expired")
    assert expired["code"] == str(code) and expired["failed"] == 3
    assert "make a new code" in expired["text"].lower()
    # now even the right code is refused, in one line naming what to do
    peer = HostilePeer.join(invite, code=str(code))
    peer.flush()
    with pytest.raises(KoiKoiError, match="does not accept a code now"):
        while peer.pump_once():
            pass
    peer.close()
    # the invite (128 bits, not counted) still works
    play_the_real_joiner(tmp_path, host, invite)


def test_the_right_code_plays(tmp_path: Path) -> None:
    host, listening = host_process(tmp_path, timeout=5)
    peer = HostilePeer.join(str(listening["invite"]), code=str(listening["code"]))
    peer.play_to_end()
    h = host.wait_exit()
    assert h.code == 0, h.stderr
    assert peer.session.via == "code"


# ---------------------------------------------------------------------- the gate, in-process
async def test_parallel_guesses_never_exceed_the_limit(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Five connections guess at once: only three guesses are ever answered."""
    code = decode_code("7-crossover-clockwork")
    notes: list[dict[str, Any]] = []

    def make(c: Any) -> Session:
        return Session(
            Role.HOST,
            identity_key=det_key("host"),
            invite_secret=bytes(16),
            name="Alice",
            entropy=det_bytes("gate-host"),
            rules=RULES,
            code=c,
        )

    gate = Gate(make, notes.append, limits=GateLimits(per_source=16), guard=CodeGuard(code))
    tx, rx = trio.open_memory_channel[trio.abc.Stream](16)
    guessers = [
        Session(
            Role.JOINER,
            identity_key=det_key(f"g{i}"),
            code=decode_code(f"7-crossover-{w}"),
            name="Eve",
            entropy=det_bytes(f"g{i}"),
        )
        for i, w in enumerate(["cobra", "concert", "cowbell", "crackdown", "cranky"])
    ]
    ends = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(gate.admit, rx)
        for g in guessers:  # every hello first: all five reach the host before any auth
            ours, theirs = trio.testing.memory_stream_pair()
            await tx.send(ours)
            await theirs.send_all(g.data_to_send())
            ends.append(theirs)
        await trio.testing.wait_all_tasks_blocked()
        for g, end in zip(guessers, ends, strict=True):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                g.receive_data(await end.receive_some(65536))  # the host's hello (or more)
                with contextlib.suppress(KoiKoiError):
                    drain(g)
                await end.send_all(g.data_to_send())  # the auth: one guess each
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    texts = [n["text"] for n in notes if n["event"] == "warning"]
    assert sum("the code does not match" in t for t in texts) == 3, texts
    assert sum("no longer accepted" in t for t in texts) == 2, texts
    assert [n["failed"] for n in notes if n["event"] == "code_expired"] == [3]
    assert gate.guard.failed == 3 and gate.guard.in_flight == 0 and not gate.guard.active


# ---------------------------------------------------------------------- finding 5
def test_reconnect_window_verifies_once_and_limits_each_source(tmp_path: Path) -> None:
    """While the host waits for its joiner to come back, strangers knocking from one
    address get their handshakes, then (after 10 failures) a refusal without any;
    the real joiner resumes and the match finishes."""
    # 12 rounds: a random match cannot end before the cut (a hand yaku ends a 1-round one)
    host, listening = host_process(tmp_path, timeout=5, rounds=12)
    invite = str(listening["invite"])
    peer = HostilePeer.join(invite)
    peer.play_honestly_until(lambda p: p.session.seq >= 3)
    ours, identity, secret = peer.session.record(), peer.identity, peer.session.resume_secret
    peer.close()
    host.wait_event("reconnecting")
    port = int(listening["port"])
    answers = [frames(stranger(port, b"\x00\x00\x00\x05junk!", "127.0.0.2")) for _ in range(12)]
    refused = [a for a in answers if a and isinstance(a[0], wire.RefuseMsg)]
    assert len(refused) == 2, answers  # the 11th and the 12th
    assert all("too many failed reconnection attempts" in a[0].reason for a in refused)
    assert identity is not None
    genuine = HostilePeer.resume_join(invite, ours, identity, secret)
    genuine.play_to_end()
    h = host.wait_exit()
    assert h.code == 0, h.stderr
    texts = [e["text"] for e in h.events if e.get("event") == "warning"]
    assert sum("refused a reconnection from 127.0.0.2: too many failed" in t for t in texts) == 2


def test_one_record_check_per_break(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reconnection attempt starts from the record verified once (not 40 ms each)."""
    from p2pkoikoi.session.records import resume as resume_module
    from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair
    from p2pkoikoi.transport.link.reconnect import Reconnect

    host, joiner = make_pair(RULES, label="once")
    run_pair(host, joiner)
    choose = random_chooser(1)
    for _ in range(6):
        m = host.match
        assert m is not None and m.to_act is not None
        sender, other = (host, joiner) if m.to_act == 0 else (joiner, host)
        other.receive_data(sender.send(choose_action(choose, m)))
        drain(other)
    calls: list[int] = []
    real = resume_module.verify_record

    def counting(record: Any, **options: Any) -> Any:
        calls.append(1)
        return real(record, **options)

    monkeypatch.setattr(resume_module, "verify_record", counting)
    rc = Reconnect(identity=det_key("hostonce"), secret=host.resume_secret)
    record = host.record()
    sessions = [rc.session(record, Role.HOST) for _ in range(5)]
    assert len(calls) == 1
    assert all(s.seq == host.seq for s in sessions)


def choose_action(choose: Any, m: Any) -> Any:
    from p2pkoikoi.session import SendAction

    return SendAction(choose(m))


# ---------------------------------------------------------------------- joining by code
async def test_open_join_with_a_code_and_the_hosts_address(tmp_path: Path) -> None:
    """What LAN discovery hands ``open_join``: the code the person typed and the address
    it found.  The match is played and both records verify."""
    from p2pkoikoi.cli.headless import play_headless
    from p2pkoikoi.session import decode_invite, decode_record
    from p2pkoikoi.session.verify.check import verify_record
    from p2pkoikoi.transport.open.host import open_host
    from p2pkoikoi.transport.open.join import open_join
    from p2pkoikoi.transport.open.options import HostOptions, JoinOptions
    from p2pkoikoi.transport.player import Player

    listening: list[dict[str, Any]] = []
    ready = trio.Event()
    finals: dict[str, Any] = {}

    def host_notes(note: dict[str, Any]) -> None:
        if note["event"] == "listening":
            listening.append(note)
            ready.set()

    async def host() -> None:
        async with open_host(
            Player(det_key("h"), "Alice", record_path=tmp_path / "h.koikoi"),
            HostOptions(RULES, port=0, bind="127.0.0.1"),
            notify=host_notes,
        ) as link:
            finals["host"] = await play_headless(link, random_choose(1), lambda _: None)

    async def joiner() -> None:
        await ready.wait()
        address = decode_invite(str(listening[0]["invite"])).addresses[0]
        async with open_join(
            decode_code(str(listening[0]["code"])),
            Player(det_key("j"), "Bob", record_path=tmp_path / "j.koikoi"),
            JoinOptions(address=address),
        ) as link:
            finals["joiner"] = await play_headless(link, random_choose(2), lambda _: None)

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(joiner)
    assert finals["host"]["final_hash"] == finals["joiner"]["final_hash"]
    for name in ("h.koikoi", "j.koikoi"):
        assert verify_record(decode_record((tmp_path / name).read_bytes())).complete


def random_choose(seed: int) -> Any:
    import random

    rng = random.Random(seed)
    return lambda view: rng.choice(view.legal_actions)


# ---------------------------------------------------------------------- issue 22, item 6
def _silent(port: int, sources: list[str]) -> list[socket.socket]:
    out = []
    for source in sources:
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        out.append(s)
    return out


def test_sixteen_silent_sockets_cannot_keep_a_friend_out(tmp_path: Path) -> None:
    """All 16 pre-authentication slots held by silent sockets from four addresses:
    on the old code the friend read "the host is busy" and gave up.  Now the host
    drops the oldest connection that sent no hello to make room, at once."""
    host, listening = host_process(tmp_path, timeout=60)
    port = int(listening["port"])
    sources = [f"127.0.0.{2 + i // 4}" for i in range(16)]
    idle = _silent(port, sources)
    try:
        for _ in range(16):  # the host accepted every one of them
            host.wait_event("connected")
        joiner = start_join(tmp_path, str(listening["invite"]), tmp_path / "join.koikoi")
        joiner.wait_event("handshake", timeout=LIMIT)
        h, j = host.wait_exit(), joiner.wait_exit()
        assert (h.code, j.code) == (0, 0), (h.stderr, j.stderr)
        # the joiner came in at once (the oldest silent one made room), or, on a slow
        # machine, after the silent ones' hello deadline: either way, never "busy"
        dropped = [
            e["text"]
            for e in h.events
            if e["event"] == "warning" and e["text"].startswith("dropped a connection from")
        ]
        assert any(
            "a newer connection needed room" in t or "no hello within 3s" in t for t in dropped
        ), dropped
        assert not any("too many at once" in e.get("text", "") for e in h.events)
    finally:
        for s in idle:
            s.close()


def test_a_connection_without_a_hello_is_dropped_after_the_hello_deadline(
    tmp_path: Path,
) -> None:
    """The hello has a short deadline of its own (3 s), shorter than the 60 s
    the connection would otherwise have to authenticate."""
    host, listening = host_process(tmp_path, timeout=60)
    (s,) = _silent(int(listening["port"]), ["127.0.0.3"])
    try:
        s.settimeout(LIMIT)
        got = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := s.recv(65536):  # the host's hello, then its abort and the close
                got += chunk
        answer = frames(got)
        assert isinstance(answer[-1], wire.AbortMsg) and answer[-1].reason == ("no hello within 3s")
        assert warnings(host, 1) == ["dropped a connection from 127.0.0.3: no hello within 3s"]
    finally:
        s.close()
        host.kill()


def test_ipv6_sources_count_per_64() -> None:
    from p2pkoikoi.transport.open.gate import source_of

    assert source_of("2001:db8:1:2:aaaa::1") == source_of("2001:db8:1:2:ffff::9")
    assert source_of("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert source_of("2001:db8:1:3::1") != source_of("2001:db8:1:2::1")
    assert source_of("::ffff:192.0.2.7") == "192.0.2.7"
    assert source_of("192.0.2.7") != source_of("192.0.2.8")
    assert source_of("fe80::1%eth0") == "fe80::/64"


def test_the_joiner_tries_a_busy_host_again(tmp_path: Path) -> None:
    """Sixteen strangers each send a valid hello and then stall: nothing can be
    dropped to make room, so the friend hears "busy".  It tries again with pauses
    of 1, 2, 4 s within its time-out, and plays once the strangers' deadline (the
    host's --timeout, 5 s) has dropped them.  On the old code it gave up at once."""
    import os

    from p2pkoikoi.session import decode_invite

    host, listening = host_process(tmp_path, timeout=5)
    port = int(listening["port"])
    inv = decode_invite(str(listening["invite"]))
    idle = _silent(port, [f"127.0.0.{2 + i // 4}" for i in range(16)])
    try:
        for s in idle:
            hello = Session(
                Role.JOINER,
                identity_key=det_key("stall"),
                invite_secret=inv.secret,
                name="Mallory",
                entropy=os.urandom(64),
            ).data_to_send()
            s.sendall(hello)
        for _ in range(16):
            host.wait_event("connected")
        joiner = start_join(tmp_path, str(listening["invite"]), tmp_path / "join.koikoi")
        h, j = host.wait_exit(), joiner.wait_exit()
        assert (h.code, j.code) == (0, 0), (h.stderr, j.stderr)
        refused = [e for e in h.events if "too many at once" in e.get("text", "")]
        assert refused, "the friend came in without being told the host was busy"
    finally:
        for s in idle:
            s.close()


# ---------------------------------------------------------------------- issue 22, item 1
def _polyglot_guess(invite: str, code: str) -> list[wire.Message | bytes]:
    """Join with ``code``, answer the host's hello with the polyglot frame under the
    key of that guess; what the host sent after its hello (plaintext messages, or the
    raw bytes of a frame that is not one)."""
    peer = HostilePeer.join(invite, code=code)
    peer.flush()  # our hello
    got = b""
    while peer.session._send is None:  # the host's hello gives us the keys
        data = peer.sock.recv(65536)
        assert data, "the host closed before its hello"
        got += data
        payload, rest = wire.decode_frame(got)
        if payload is not None:
            peer.session.receive_data(got[: len(got) - len(rest)])
            got = rest
            drain(peer.session)
    peer.session.data_to_send()  # our real auth: never sent
    frame = polyglot_abort(peer.session._send._aead)
    peer.send_raw(wire.encode_frame(frame))
    answer = got + peer.drain_until_closed()
    peer.close()
    out: list[wire.Message | bytes] = []
    while answer:
        payload, answer = wire.decode_frame(answer)
        assert payload is not None
        try:
            out.append(wire.decode_message(payload))
        except KoiKoiError:
            out.append(payload)  # encrypted: only a holder of the key reads it
    return out


def test_a_polyglot_abort_frame_is_a_counted_guess_and_says_nothing(tmp_path: Path) -> None:
    """The first frame after the hellos is both a plaintext ``abort`` map and a valid
    ciphertext under the guessed key.  On the old code a wrong guess parsed as an abort
    and was not counted (713 guesses, no ``code_expired``), and a right one drew an
    encrypted answer the guesser could read: an oracle.  Now each is a counted guess
    and both get the same answer."""
    host, listening = host_process(tmp_path, timeout=30)
    invite, code = str(listening["invite"]), decode_code(str(listening["code"]))
    words = list(code.words)
    words[1] = "zulu" if words[1] != "zulu" else "aardvark"
    wrong = "-".join((str(code.number), *words))
    right_answer = _polyglot_guess(invite, str(code))
    wrong_answer = _polyglot_guess(invite, wrong)
    assert right_answer == wrong_answer, (right_answer, wrong_answer)
    assert all(isinstance(m, wire.AbortMsg) for m in right_answer), right_answer
    assert not any(e.get("event") == "code_expired" for e in host.seen)
    _polyglot_guess(invite, wrong)
    expired = host.wait_event("code_expired")
    assert expired["failed"] == 3
    host.kill()
