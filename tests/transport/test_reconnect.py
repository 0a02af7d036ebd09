"""Reconnecting links in memory under a mock clock: the stream is cut mid-match
(more than once), both sides resume, and the match ends as one match; an impostor
cannot take the seat; a peer that never comes back ends the match after the
reconnect window.  Plus, over real loopback TCP in one process: strangers and a
second joiner are turned away while the match goes on."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from test_transport import link_player

from p2pkoikoi.cli.headless import play_headless
from p2pkoikoi.engine import Action, PlayerView, get_preset
from p2pkoikoi.session import RefusedError, Role, Session, decode_invite, decode_record
from p2pkoikoi.session.testing import SECRET, det_bytes, det_key
from p2pkoikoi.session.verify.check import verify_record
from p2pkoikoi.transport.errors import PeerSilentError
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Note
from p2pkoikoi.transport.link.reconnect import Reconnect, resume_handshake
from p2pkoikoi.transport.open.host import open_host
from p2pkoikoi.transport.open.join import open_join
from p2pkoikoi.transport.open.options import HostOptions
from p2pkoikoi.transport.player import Player

RULES = get_preset("online").with_settings(rounds=2)
T = Timeouts(handshake=10, reveal=10, silence_fail=30, reconnect_window=60, backoff_initial=0.5)


class Cuttable(trio.abc.Stream):
    """A stream whose "network" can fail: after ``cut()`` reads see EOF, writes break."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.dead = trio.Event()

    def cut(self) -> None:
        self.dead.set()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.dead.is_set():
            raise trio.BrokenResourceError("cut")
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        pass

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        got: list[bytes] = []
        async with trio.open_nursery() as nursery:

            async def read() -> None:
                got.append(bytes(await self.inner.receive_some(max_bytes)))
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                await self.dead.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(read)
            nursery.start_soon(watch)
        if self.dead.is_set():
            return b""
        return got[0]

    async def aclose(self) -> None:
        self.dead.set()
        await self.inner.aclose()


class Net:
    """Connections between the two sides; ``cut()`` breaks the current one."""

    def __init__(self) -> None:
        self.pairs: list[tuple[Cuttable, Cuttable]] = []
        self.to_host, self.incoming = trio.open_memory_channel[trio.abc.Stream](math.inf)

    def pair(self) -> tuple[Cuttable, Cuttable]:
        a, b = trio.testing.memory_stream_pair()
        p = (Cuttable(a), Cuttable(b))
        self.pairs.append(p)
        return p

    async def dial(self) -> trio.abc.Stream:
        h, j = self.pair()
        self.to_host.send_nowait(h)
        return j

    def cut(self) -> None:
        for a, b in self.pairs:
            a.cut()
            b.cut()

    def cut_after(self, moves: int) -> Callable[[dict[str, Any]], None]:
        """A side's event hook that cuts the link once, at its ``moves``-th move event
        (an event with a ``by``)."""
        seen = [0]

        def hook(obj: dict[str, Any]) -> None:
            if "by" in obj:
                seen[0] += 1
                if seen[0] == moves:
                    self.cut()

        return hook


def choose_random(seed: int) -> Callable[[PlayerView], Action]:
    rng = random.Random(seed)
    return lambda view: rng.choice(view.legal_actions)


class Side:
    def __init__(self) -> None:
        self.notes: list[Note] = []
        self.events: list[dict[str, Any]] = []
        self.final: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.link: NetworkLink | None = None


async def play(
    side: Side,
    stream: trio.abc.Stream | None,
    session: Session,
    rc: Reconnect,
    record: Path,
    seed: int,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    def emit(obj: dict[str, Any]) -> None:
        side.events.append(obj)
        if on_event is not None:
            on_event(obj)

    try:
        async with open_link(
            stream,
            session,
            link_player(timeouts=T, record_path=record),
            notify=side.notes.append,
            reconnect=rc,
        ) as link:
            side.link = link
            side.final = await play_headless(link, choose_random(seed), emit, in_thread=False)
    except Exception as exc:  # the test inspects it
        side.error = exc


def sessions() -> tuple[Session, Session]:
    host = Session(
        "host",
        identity_key=det_key("host"),
        invite_secret=SECRET,
        name="Alice",
        entropy=det_bytes("entropy/host"),
        rules=RULES,
    )
    joiner = Session(
        "joiner",
        identity_key=det_key("joiner"),
        invite_secret=SECRET,
        name="Bob",
        entropy=det_bytes("entropy/joiner"),
        expected_rules=RULES,
    )
    return host, joiner


def assert_one_match(tmp_path: Path, h: Side, j: Side) -> None:
    assert h.error is None and j.error is None, (h.error, j.error)
    assert h.final is not None and j.final is not None
    assert h.final["final_hash"] == j.final["final_hash"]
    rh = decode_record((tmp_path / "h.koikoi").read_bytes())
    rj = decode_record((tmp_path / "j.koikoi").read_bytes())
    assert rh.actions == rj.actions and rh.is_complete and rj.is_complete
    assert [a.seq for a in rh.actions] == list(range(1, len(rh.actions) + 1))
    assert verify_record(rh).ok and verify_record(rj).ok
    for name in ("h.koikoi.resume", "j.koikoi.resume"):
        assert not (tmp_path / name).exists()


async def test_cut_three_times_mid_match_both_resume(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)
    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=net.dial, sidecar={"x": 1})
    a, b = net.pair()
    h, j = Side(), Side()
    count = [0]
    # The match's length follows from its seed, which follows from the rules encoding:
    # a new RuleSet field changes it (34 actions since the koikoijapan settings).
    cuts = {9, 20, 30}

    def maybe_cut(obj: dict[str, Any]) -> None:
        if "by" in obj:
            count[0] += 1
            if count[0] == 9:
                assert (tmp_path / "j.koikoi.resume").stat().st_mode & 0o777 == 0o600
            if count[0] in cuts:
                net.cut()

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 1)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 2, maybe_cut)
    assert_one_match(tmp_path, h, j)
    assert count[0] > max(cuts), f"the match had only {count[0]} actions: move the cuts"
    for side in (h, j):
        kinds = [n["event"] for n in side.notes]
        assert kinds.count("reconnected") == 3, kinds
        assert "reconnecting" in kinds
    assert any("reconnecting (attempt 1)" in n.get("text", "") for n in j.notes)
    assert h.link is not None and h.link.reconnects == 3


async def test_an_impostor_is_refused_and_the_real_player_resumes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)
    impostor_result: list[BaseException] = []

    async def dial_after_impostor() -> trio.abc.Stream:
        if not impostor_result:  # first, someone with the invite but another key
            h_end, fake_end = net.pair()
            net.to_host.send_nowait(h_end)
            # it holds the joiner's record and resume secret, but not its identity key
            fake = Reconnect(identity=det_key("joiner"), secret=js.resume_secret).session(
                decode_record((tmp_path / "j.koikoi").read_bytes()), Role.JOINER
            )
            fake._key = det_key("mallory")  # noqa: SLF001 - it signs with its own key
            try:
                await resume_handshake(fake_end, fake, 10)
                # its side of the handshake completes; the host's does not: it hangs up
                assert await fake_end.receive_some(65536) == b""
                impostor_result.append(EOFError("the host hung up"))
            except Exception as exc:
                impostor_result.append(exc)
        return await net.dial()

    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=dial_after_impostor)
    a, b = net.pair()
    h, j = Side(), Side()
    cut_once = net.cut_after(20)

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 3)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 4, cut_once)
    assert impostor_result
    refusals = [n["text"] for n in h.notes if "refused a reconnection" in n.get("text", "")]
    assert len(refusals) == 1 and "identity signature fails" in refusals[0], refusals
    assert_one_match(tmp_path, h, j)


async def test_a_peer_that_never_returns_ends_the_match_after_the_window(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=SECRET, incoming=net.incoming)

    async def unreachable() -> trio.abc.Stream:
        raise OSError("network is unreachable")

    rc_j = Reconnect(identity=det_key("joiner"), secret=SECRET, dial=unreachable, sidecar={})
    a, b = net.pair()
    h, j = Side(), Side()
    cut_once = net.cut_after(10)

    start = trio.current_time()
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 5)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 6, cut_once)
    for side in (h, j):
        assert isinstance(side.error, PeerSilentError), side.error
        assert "did not come back within 60s" in str(side.error)
        # issue 22: who does not come back within the window forfeits; each side can
        # only see that the other did not (each record holds its own claim)
        assert "forfeits the match (left)" in str(side.error), side.error
    assert trio.current_time() - start < T.reconnect_window + 10
    attempts = [n["attempt"] for n in j.notes if n["event"] == "reconnecting"]
    # exponential backoff: 0.5, 1, 2, 4, 8, 10, 10, ... seconds within 60 s
    assert 6 <= len(attempts) <= 12, attempts
    # the records stay valid, each with the other's forfeit; nothing is left to resume
    for name, seat in (("h.koikoi", 1), ("j.koikoi", 0)):
        rec = decode_record((tmp_path / name).read_bytes())
        assert verify_record(rec).ok
        assert rec.forfeit is not None and (rec.forfeit.seat, rec.forfeit.reason) == (seat, "left")
    assert not (tmp_path / "j.koikoi.resume").exists()


async def test_strangers_and_a_second_joiner_are_turned_away_over_tcp(tmp_path: Path) -> None:
    notes: list[Note] = []
    h, j = Side(), Side()
    invite: list[str] = []
    ready = trio.Event()
    refused: list[BaseException] = []

    def host_notify(note: Note) -> None:
        notes.append(note)
        if note["event"] == "listening":
            invite.append(str(note["invite"]))
            ready.set()

    async def host() -> None:
        try:
            async with open_host(
                Player(det_key("host"), "Alice", record_path=tmp_path / "h.koikoi", timeouts=T),
                HostOptions(RULES, port=0, bind="127.0.0.1"),
                notify=host_notify,
            ) as link:
                h.link = link
                h.final = await play_headless(link, choose_random(1), h.events.append)
        except Exception as exc:
            h.error = exc

    async def joiner(secret_ok: bool = True) -> None:
        text = invite[0]
        try:
            async with open_join(
                text,
                Player(det_key("joiner"), "Bob", record_path=tmp_path / "j.koikoi", timeouts=T),
                notify=j.notes.append,
            ) as link:
                j.link = link

                def second(obj: dict[str, Any]) -> None:
                    j.events.append(obj)
                    if len([e for e in j.events if "by" in e]) == 6 and "by" in obj:
                        nursery.start_soon(second_joiner)

                async with trio.open_nursery() as nursery:
                    j.final = await play_headless(link, choose_random(2), second)
        except Exception as exc:
            j.error = exc

    async def second_joiner() -> None:
        try:
            async with open_join(invite[0], Player(det_key("carol"), "Carol", record_path=tmp_path / "c.koikoi", timeouts=T)):  # fmt: skip
                pass
        except Exception as exc:
            refused.append(exc)

    async def garbage(secret: bytes | None) -> None:
        port = decode_invite(invite[0]).addresses[0].port
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        if secret is None:
            await stream.send_all(b"\x00\x00\x00\x05hello")
        else:  # a proper hello, then an auth under the wrong secret
            s = Session("joiner", identity_key=det_key("eve"), invite_secret=secret,
                        name="Eve", entropy=det_bytes("eve"), expected_rules=RULES)  # fmt: skip
            await stream.send_all(s.data_to_send())
            s.receive_data(await stream.receive_some(65536))
            s.next_event()
            await stream.send_all(s.data_to_send())
        await stream.receive_some(65536)  # until the host closes it
        await stream.aclose()

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            await ready.wait()
            await garbage(None)
            await garbage(bytes(16))
            nursery.start_soon(joiner)
    assert h.error is None and j.error is None, (h.error, j.error)
    assert h.final is not None and j.final is not None
    assert h.final["final_hash"] == j.final["final_hash"]
    dropped = [n for n in notes if n["event"] == "warning" and "dropped" in n["text"]]
    assert len(dropped) == 2, notes
    assert len(refused) == 1 and isinstance(refused[0], RefusedError), refused
    assert "playing a match with someone else" in str(refused[0])


@pytest.fixture(autouse=True)
def _no_real_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
