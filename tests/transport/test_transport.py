"""The trio transport in memory: whole matches, deadlines, heartbeats, the one writer.

Every test runs under ``MockClock(autojump_threshold=0)`` (pytest-trio's
``autojump_clock`` fixture): timeouts of minutes take no real time, and no
test sleeps to wait for something.
"""

from __future__ import annotations

import json
import random
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from p2pkoikoi.cli.headless import play_headless
from p2pkoikoi.engine import Action, InputError, KoiKoiError, PlayerView, RuleSet, get_preset
from p2pkoikoi.session import (
    NEED_DATA,
    Ping,
    RulesMismatchError,
    Session,
    State,
    decode_record,
)
from p2pkoikoi.session.testing import SECRET, det_bytes, det_key
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.errors import (
    ConfigError,
    IdentityChangedError,
    PeerFloodError,
    PeerSilentError,
    PeerTimeoutError,
    RevealTimeoutError,
)
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.connection import Connection
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Note
from p2pkoikoi.transport.player import Player
from p2pkoikoi.transport.store.identity import (
    KnownPeers,
    PeerCheck,
    PeerStatus,
    atomic_write,
    config_dir,
    default_record_path,
    load_or_create_identity,
)

RULES = get_preset("online").with_settings(rounds=2)
T = Timeouts(handshake=10, reveal=10, ping_interval=5, silence_warn=15, silence_fail=60)


def link_player(
    *,
    timeouts: Timeouts | None = None,
    record_path: Path | None = None,
    known_peers: KnownPeers | None = None,
) -> Player:
    """What ``open_link`` reads of the player for a session made by hand (the key and
    name are the session's own; the link reads the rest)."""
    return Player(
        det_key("link"),
        "",
        known_peers=known_peers,
        record_path=record_path,
        timeouts=timeouts or Timeouts(),
    )


def host_session(rules: RuleSet = RULES, label: str = "") -> Session:
    return Session(
        "host",
        identity_key=det_key("host" + label),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("entropy/host" + label),
        rules=rules,
    )


def joiner_session(expected: RuleSet | None = None, label: str = "") -> Session:
    return Session(
        "joiner",
        identity_key=det_key("joiner" + label),
        invite_secret=SECRET,
        name="Bob",
        entropy=det_bytes("entropy/joiner" + label),
        expected_rules=expected,
    )


def random_choose(seed: int) -> Callable[[PlayerView], Action]:
    rng = random.Random(seed)
    return lambda view: rng.choice(view.legal_actions)


class Side:
    """One player's run: its notes, events, final line and error."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.notes: list[Note] = []
        self.events: list[dict[str, Any]] = []
        self.final: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.link: NetworkLink | None = None


async def play_side(
    side: Side,
    stream: trio.abc.Stream,
    session: Session,
    choose: Callable[[PlayerView], Action],
    record: Path,
    *,
    timeouts: Timeouts = T,
    known: KnownPeers | None = None,
    during: Callable[[NetworkLink, trio.Nursery], None] | None = None,
) -> None:
    try:
        async with open_link(
            stream,
            session,
            link_player(timeouts=timeouts, record_path=record, known_peers=known),
            notify=side.notes.append,
        ) as link:
            side.link = link
            async with trio.open_nursery() as nursery:
                if during is not None:
                    during(link, nursery)
                side.final = await play_headless(link, choose, side.events.append, in_thread=False)
    except Exception as exc:  # the test inspects it
        side.error = exc


async def run_match(
    tmp_path: Path,
    *,
    host: Session | None = None,
    joiner: Session | None = None,
    joiner_stream: Callable[[trio.abc.Stream], trio.abc.Stream] = lambda s: s,
    **kw: Any,
) -> tuple[Side, Side]:
    a, b = trio.testing.memory_stream_pair()
    h, j = Side("host"), Side("joiner")
    with trio.fail_after(3600):  # mock clock: bounds the test, costs nothing
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                play_side, h, a, host or host_session(), random_choose(1), tmp_path / "h.koikoi"
            )
            nursery.start_soon(
                lambda: play_side(
                    j,
                    joiner_stream(b),
                    joiner or joiner_session(),
                    random_choose(2),
                    tmp_path / "j.koikoi",
                    **kw,
                )
            )
    return h, j


def verified(path: Path) -> bool:
    return verify_record(decode_record(path.read_bytes())).ok


# ---------------------------------------------------------------------- whole matches
async def test_two_links_play_to_the_end(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    h, j = await run_match(tmp_path)
    assert h.error is None and j.error is None, (h.error, j.error)
    assert h.final is not None and j.final is not None
    assert h.final["final_hash"] == j.final["final_hash"]
    assert h.final["scores"] == j.final["scores"]
    assert h.final["you"] == "host" and j.final["you"] == "joiner"
    for path in (tmp_path / "h.koikoi", tmp_path / "j.koikoi"):
        rec = decode_record(path.read_bytes())
        assert rec.is_complete
        assert verify_record(rec).ok
    # the joiner accepted the host's rules after a rules_proposed note
    kinds = [n["event"] for n in j.notes]
    assert "rules_proposed" in kinds and "handshake" in kinds
    assert any(e["event"] == "match_ended" for e in h.events)


async def test_over_a_socket_bytes_leave_at_once_and_only_after_the_record_has_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over a socket a link sends from the task that made the bytes (no writer
    task in between); whatever it sends during play, the record on disk already
    holds every action the session has, and our final signature once made."""
    from p2pkoikoi.session.records.journal import decode_record_file

    checked = {"sends": 0}
    original = Connection._send_now

    h, j = Side("host"), Side("joiner")
    a, b = trio.socket.socketpair()
    sa, sb = trio.SocketStream(a), trio.SocketStream(b)
    side_of = {id(sa): h, id(sb): j}  # a connection's stream names its side

    def send_now(conn: Connection, data: bytes) -> int:
        sent = original(conn, data)
        link = side_of[id(conn.stream)].link
        if link is None:  # still in the handshake: no move to check yet
            return sent
        s = link.session
        path = link.record_path
        if sent and s.match is not None and path is not None and path.exists():
            record, _ = decode_record_file(path.read_bytes())
            assert len(record.actions) == len(s.recorded_actions)
            mine = s.final_signatures[link.seat]
            assert mine is None or record.final_sigs[link.seat] == mine
            checked["sends"] += 1
        return sent

    monkeypatch.setattr(Connection, "_send_now", send_now)
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                play_side,
                h,
                sa,
                host_session(),
                random_choose(1),
                tmp_path / "h.koikoi",
            )
            nursery.start_soon(
                play_side,
                j,
                sb,
                joiner_session(),
                random_choose(2),
                tmp_path / "j.koikoi",
            )
    assert h.error is None and j.error is None, (h.error, j.error)
    assert h.final is not None and j.final is not None
    assert h.final["final_hash"] == j.final["final_hash"]
    assert checked["sends"] > 20  # every move went out directly, checked each time
    assert verified(tmp_path / "h.koikoi") and verified(tmp_path / "j.koikoi")


async def test_chooser_failure_forfeits_by_resigning(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    a, b = trio.testing.memory_stream_pair()
    h, j = Side("host"), Side("joiner")

    def broken(view: PlayerView) -> Action:
        raise InputError("the engine crashed (exit status 3)")

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_side, h, a, host_session(), broken, tmp_path / "h.koikoi")
            nursery.start_soon(
                play_side, j, b, joiner_session(), random_choose(2), tmp_path / "j.koikoi"
            )
    assert h.error is None and j.error is None
    assert h.final is not None and j.final is not None
    assert h.final["winner"] == "joiner" == j.final["winner"]
    assert "engine crashed" in h.final["forfeit"]
    assert any(e["event"] == "forfeit" for e in h.events)
    assert verified(tmp_path / "h.koikoi") and verified(tmp_path / "j.koikoi")


# ---------------------------------------------------------------------- the one writer
class ChunkyStream(trio.abc.Stream):
    """Sends in 7-byte pieces with a checkpoint between them.

    Two concurrent ``send_all`` calls on a memory stream raise
    ``BusyResourceError``; with pieces and checkpoints any second writer would
    be caught in the act.
    """

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.writes = 0

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.writes += 1
        view = bytes(data)
        for i in range(0, len(view), 7):
            await self.inner.send_all(view[i : i + 7])
            await trio.sleep(0)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_writer_task_keeps_frames_whole_and_in_order(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    sent: list[str] = []

    async def say(link: NetworkLink, text: str) -> None:
        sent.append(text)  # chat() queues without a checkpoint: this is the wire order
        await link.chat(text)

    def chatter(link: NetworkLink, nursery: trio.Nursery) -> None:
        for i in range(30):
            nursery.start_soon(say, link, f"message {i}")

    chunky: list[ChunkyStream] = []

    def wrap(s: trio.abc.Stream) -> trio.abc.Stream:
        chunky.append(ChunkyStream(s))
        return chunky[0]

    h, j = await run_match(tmp_path, joiner_stream=wrap, during=chatter)
    assert h.error is None and j.error is None, (h.error, j.error)
    got = [n["text"] for n in h.notes if n["event"] == "chat"]
    assert got == sent
    assert sorted(got) == sorted(f"message {i}" for i in range(30))
    assert chunky[0].writes > 30
    assert h.final is not None and j.final is not None
    assert h.final["final_hash"] == j.final["final_hash"]


# ---------------------------------------------------------------------- a bare peer
async def bare_peer(
    stream: trio.abc.Stream, session: Session, stop: Callable[[Session], bool]
) -> None:
    """Drive a session by hand until ``stop(session)``; then withhold everything, forever."""
    await stream.send_all(session.data_to_send())
    while True:
        data = await stream.receive_some(65536)
        session.receive_data(bytes(data))
        while session.next_event() is not NEED_DATA:
            pass
        out = session.data_to_send()
        if stop(session):
            break
        if out:
            await stream.send_all(out)
    await trio.sleep_forever()


async def test_a_host_that_stalls_its_reveal_forfeits(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    a, b = trio.testing.memory_stream_pair()
    j = Side("joiner")
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        # the host has received the value (it is in PLAY, its reveal queued) but never sends it
        nursery.start_soon(bare_peer, a, host_session(), lambda s: s.state is State.PLAY)
        await play_side(j, b, joiner_session(RULES), random_choose(2), tmp_path / "j.koikoi")
        nursery.cancel_scope.cancel()
    assert isinstance(j.error, RevealTimeoutError)
    assert "forfeits" in str(j.error)
    assert trio.current_time() - start == pytest.approx(T.reveal, abs=0.5)
    rec = decode_record((tmp_path / "j.koikoi").read_bytes())
    assert rec.commitment is not None and rec.joiner_value is not None
    assert rec.host_value is None and rec.match_seed is None


async def test_a_silent_peer_is_reported_then_ends_the_match(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    a, b = trio.testing.memory_stream_pair()
    h = Side("host")
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        # the joiner completes the handshake, then never says another word
        nursery.start_soon(bare_peer, b, joiner_session(RULES), lambda s: s.state is State.PLAY)
        await play_side(h, a, host_session(), random_choose(1), tmp_path / "h.koikoi")
        nursery.cancel_scope.cancel()
    assert isinstance(h.error, PeerSilentError), h.error
    assert "silent" in str(h.error)
    statuses = [n["text"] for n in h.notes if n["event"] == "status"]
    assert any(s.startswith("opponent silent for 15s") for s in statuses), statuses
    elapsed = trio.current_time() - start
    assert T.silence_fail <= elapsed <= T.silence_fail + 2 * T.ping_interval
    assert verify_record(decode_record((tmp_path / "h.koikoi").read_bytes())).ok


async def test_a_peer_that_never_says_hello_times_out(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    a, b = trio.testing.memory_stream_pair()
    h = Side("host")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep_forever)
        await play_side(h, a, host_session(), random_choose(1), tmp_path / "h.koikoi")
        nursery.cancel_scope.cancel()
    assert isinstance(h.error, PeerTimeoutError)
    assert "peer hello" in str(h.error)
    assert not (tmp_path / "h.koikoi").exists()  # nothing happened worth recording
    del b


async def test_a_peer_that_pings_but_never_reads_gets_no_pongs_and_a_bounded_queue(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A joiner that completes the handshake, then stops reading but keeps pinging
    within the rate limit: nothing piles up for it, and our own chatter is cut off
    at the outgoing bound instead of growing without end."""
    a, b = trio.testing.lockstep_stream_pair()  # send_all waits until the peer reads
    h = Side("host")
    peer = joiner_session(RULES)
    pinged = trio.Event()
    cut_after: list[int] = []

    async def pinger() -> None:
        await b.send_all(peer.data_to_send())
        while peer.state is not State.PLAY:
            peer.receive_data(bytes(await b.receive_some(65536)))
            while peer.next_event() is not NEED_DATA:
                pass
            out = peer.data_to_send()
            if out:
                await b.send_all(out)
        for i in range(100):  # one every 2 s: well within the chatter budget
            await b.send_all(peer.send(Ping(i.to_bytes(8, "big"))))
            await trio.sleep(2)
        pinged.set()
        await trio.sleep_forever()

    async def watch(link: NetworkLink) -> None:
        await pinged.wait()
        queued = link._conn.out_rx.statistics().current_buffer_used
        assert queued <= 1, f"{queued} frames wait for a peer that does not read"
        with pytest.raises(KoiKoiError):
            for i in range(5000):  # far past the outgoing bound
                await link.chat(f"{i:04d} " + "x" * 190)
        cut_after.append(i)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pinger)
        await play_side(
            h,
            a,
            host_session(),
            random_choose(1),
            tmp_path / "h.koikoi",
            during=lambda link, n: n.start_soon(watch, link),
        )
        nursery.cancel_scope.cancel()
    assert isinstance(h.error, PeerFloodError), h.error
    assert "stopped reading" in str(h.error)
    assert len(cut_after) == 1 and 0 < cut_after[0] < 2000, cut_after


async def test_rules_mismatch_fails_both_sides_naming_the_settings(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    h, j = await run_match(tmp_path, joiner=joiner_session(get_preset("nintendo")))
    for side in (h, j):
        assert isinstance(side.error, RulesMismatchError), side.error
        assert "koikoi_multiplier" in str(side.error) or ":" in str(side.error)
    diff = [name for name, _, _ in RULES.diff(get_preset("nintendo"))]
    assert any(name in str(j.error) for name in diff)
    assert any(name in str(h.error) for name in diff)


async def test_changed_key_of_a_known_peer_stops_the_match_before_the_deal(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    known = KnownPeers(tmp_path / "known_peers", {"aaaa-bbbb-cccc-dddd": "Alice"})
    h, j = await run_match(tmp_path, known=known)
    assert isinstance(j.error, IdentityChangedError), j.error
    assert "Alice's identity changed" in str(j.error) and "--accept-new-key" in str(j.error)
    assert h.error is not None  # the host learns the joiner left before any card was dealt
    assert decode_record((tmp_path / "j.koikoi").read_bytes()).match_seed is None
    assert known.peers == {"aaaa-bbbb-cccc-dddd": "Alice"}  # not overwritten silently


async def test_changed_key_accepted_with_accept_new_key_is_warned_and_remembered(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    known = KnownPeers(
        tmp_path / "known_peers", {"aaaa-bbbb-cccc-dddd": "Alice"}, accept_new_key=True
    )
    h, j = await run_match(tmp_path, known=known)
    assert j.error is None and h.error is None
    warnings = [n for n in j.notes if n["event"] == "warning"]
    assert len(warnings) == 1 and "Alice's identity changed" in warnings[0]["text"]
    assert len(known.fingerprints_of("Alice")) == 2
    again = KnownPeers.load(tmp_path)
    assert again.check("Alice", known.fingerprints_of("Alice")[0]).status is PeerStatus.KNOWN


async def host_asked_about_a_new_key(
    tmp_path: Path, answer: Callable[[], Awaitable[bool]]
) -> tuple[Side, Side, KnownPeers, list[PeerCheck]]:
    """A host whose known_peers has "Bob" under another key, with a person to ask."""
    known = KnownPeers(tmp_path / "known_peers", {"aaaa-bbbb-cccc-dddd": "Bob"})
    asked: list[PeerCheck] = []

    async def ask(check: PeerCheck, rules: RuleSet) -> bool:
        asked.append(check)
        assert rules == RULES  # the host's own rules, shown beside the question
        return await answer()

    known.ask = ask
    a, b = trio.testing.memory_stream_pair()
    h, j = Side("host"), Side("joiner")
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: play_side(
                    h, a, host_session(), random_choose(1), tmp_path / "h.koikoi", known=known
                )
            )
            nursery.start_soon(
                play_side, j, b, joiner_session(), random_choose(2), tmp_path / "j.koikoi"
            )
    return h, j, known, asked


async def test_the_hosts_person_accepts_a_changed_key_and_the_match_is_played(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def yes() -> bool:
        await trio.sleep(5)  # a person reads the question meanwhile
        return True

    h, j, known, asked = await host_asked_about_a_new_key(tmp_path, yes)
    assert h.error is None and j.error is None, (h.error, j.error)
    assert [c.status for c in asked] == [PeerStatus.CHANGED]
    assert asked[0].previous == ("aaaa-bbbb-cccc-dddd",)
    assert sorted(known.peers) == sorted(["aaaa-bbbb-cccc-dddd", asked[0].fingerprint])
    assert h.final is not None and j.final is not None
    assert h.final["final_hash"] == j.final["final_hash"]


async def test_the_hosts_person_refuses_a_changed_key_before_any_card_is_dealt(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def no() -> bool:
        return False

    h, j, known, asked = await host_asked_about_a_new_key(tmp_path, no)
    assert isinstance(h.error, IdentityChangedError), h.error
    assert "you did not accept the new key" in str(h.error)
    assert j.error is not None  # the joiner learns the host left
    for name in ("h.koikoi", "j.koikoi"):  # no commitment left, so no seed anywhere
        path = tmp_path / name
        assert not path.exists() or decode_record(path.read_bytes()).match_seed is None
    assert list(known.peers) == ["aaaa-bbbb-cccc-dddd"]  # not remembered


async def test_an_unanswered_key_question_ends_before_the_joiner_gives_up(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def never() -> bool:
        await trio.sleep_forever()
        return True

    start = trio.current_time()
    h, j, _, asked = await host_asked_about_a_new_key(tmp_path, never)
    assert len(asked) == 1
    assert isinstance(h.error, IdentityChangedError), h.error
    assert trio.current_time() - start < T.handshake  # within the joiner's step deadline


# ---------------------------------------------------------------------- files
def test_identity_is_created_private_and_reloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("P2PKOIKOI_CONFIG_DIR", str(tmp_path / "cfg"))
    d = config_dir()
    assert d == tmp_path / "cfg"
    assert config_dir(tmp_path / "other") == tmp_path / "other"
    key = load_or_create_identity(d)
    mode = stat.S_IMODE((d / "identity.key").stat().st_mode)
    assert mode == 0o600
    again = load_or_create_identity(d)
    assert again.private_bytes_raw() == key.private_bytes_raw()
    assert [p.name for p in d.iterdir()] == ["identity.key"]  # no temporary left behind


def test_known_peers_round_trip(tmp_path: Path) -> None:
    kp = KnownPeers.load(tmp_path)
    assert kp.check("Bob", "abcd-efgh-ijkl-mnop").status is PeerStatus.NEW
    kp.remember("Bob", "abcd-efgh-ijkl-mnop")
    again = KnownPeers.load(tmp_path)
    assert again.peers == {"abcd-efgh-ijkl-mnop": "Bob"}
    assert again.check("Bob", "abcd-efgh-ijkl-mnop").status is PeerStatus.KNOWN
    # the same key under another name is the same person (the name is a label)
    assert again.check("Robert", "abcd-efgh-ijkl-mnop").status is PeerStatus.KNOWN
    changed = again.check("Bob", "zzzz-zzzz-zzzz-zzzz")
    assert changed.status is PeerStatus.CHANGED
    assert changed.previous == ("abcd-efgh-ijkl-mnop",)
    assert "abcd-efgh-ijkl-mnop" in changed.warning and "zzzz-zzzz-zzzz-zzzz" in changed.warning
    assert again.check("Carol", "zzzz-zzzz-zzzz-zzzz").warning == ""
    assert json.loads((tmp_path / "known_peers").read_text()) == {
        "version": 2,
        "peers": {"abcd-efgh-ijkl-mnop": {"name": "Bob"}},
    }


def test_known_peers_of_the_first_release_are_read_by_fingerprint(tmp_path: Path) -> None:
    (tmp_path / "known_peers").write_text('{"Bob": "abcd-efgh-ijkl-mnop"}')
    kp = KnownPeers.load(tmp_path)
    assert kp.peers == {"abcd-efgh-ijkl-mnop": "Bob"}
    assert kp.check("Bob", "zzzz-zzzz-zzzz-zzzz").status is PeerStatus.CHANGED


@pytest.mark.parametrize("text", ["[]", '{"version": 2}', '{"version": 2, "peers": {"x": 1}}'])
def test_a_broken_known_peers_file_is_one_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "known_peers").write_text(text)
    with pytest.raises(ConfigError, match="is not a known-peers file"):
        KnownPeers.load(tmp_path)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_an_identity_key_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    load_or_create_identity(tmp_path)
    key = tmp_path / "identity.key"
    key.chmod(mode)
    with pytest.raises(ConfigError, match=r"can be read by other users .*chmod 600"):
        load_or_create_identity(tmp_path)
    key.chmod(0o600)
    load_or_create_identity(tmp_path)


def test_atomic_write_and_default_record_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a" / "b.koikoi"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["b.koikoi"]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    p1 = default_record_path("Bob/../x")
    assert p1.parent == tmp_path / "data" / "p2pkoikoi" / "records"
    assert p1.suffix == ".koikoi" and "/" not in p1.name[:-7].replace(str(p1.parent), "")
    atomic_write(p1, b"x")
    p2 = default_record_path("Bob/../x")
    assert p2 != p1


async def test_resign_off_turn_waits_for_our_turn(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    def resign_now(link: NetworkLink, nursery: trio.Nursery) -> None:
        nursery.start_soon(link.resign)

    h, j = await run_match(tmp_path, during=resign_now)
    assert h.error is None and j.error is None, (h.error, j.error)
    assert h.final is not None and j.final is not None
    assert h.final["winner"] == "host" == j.final["winner"]
    assert any(e["event"] == "resigned" for e in h.events)
    assert verified(tmp_path / "h.koikoi") and verified(tmp_path / "j.koikoi")
