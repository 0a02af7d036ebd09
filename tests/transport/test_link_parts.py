"""The link's parts seen from the other end of the wire, in memory under trio's mock
clock: the heartbeat's pings, pongs, silence warnings and flood bound; the turn
clock's deadline; what the host's link says when it fails before the joiner
confirmed its reveal.  A raw :class:`Session` plays the other side, so every byte
the link sends is seen and nothing it does not send is made up."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio
import trio.testing
from test_transport import RULES, T, host_session, joiner_session, link_player

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import NEED_DATA, Ping, Pong, Session, State
from p2pkoikoi.session.events import Event
from p2pkoikoi.transport.errors import PeerFloodError
from p2pkoikoi.transport.limits import CHATTER_BURST
from p2pkoikoi.transport.link.lifetime import open_link
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Note


class RawPeer:
    """The other side: a session fed by hand over one end of a memory stream."""

    def __init__(self, stream: trio.abc.Stream, session: Session) -> None:
        self.stream = stream
        self.s = session
        self.events: list[Event] = []

    async def flush(self) -> None:
        out = self.s.data_to_send()
        if out:
            await self.stream.send_all(out)

    async def read_once(self) -> bool:
        data = await self.stream.receive_some(65536)
        if not data:
            return False
        self.s.receive_data(bytes(data))
        while (ev := self.s.next_event()) is not NEED_DATA:
            self.events.append(ev)
        return True

    async def handshake(self) -> None:
        """Answer everything until the match is in play."""
        await self.flush()
        while self.s.state is not State.PLAY:
            assert await self.read_once()
            await self.flush()

    async def listen(self, seconds: float) -> None:
        """Read (and say nothing) for ``seconds``."""
        with trio.move_on_after(seconds):
            while await self.read_once():
                pass

    async def until_closed(self) -> None:
        while await self.read_once():
            pass


async def test_the_heartbeat_pings_answers_warns_and_ends_a_flood(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A quiet link pings every ``ping_interval`` with 8-byte counting nonces; a peer
    silent past ``silence_warn`` is reported once, and "back" once when it talks
    again (each time); its ping gets a pong with the same nonce; a burst of pings past
    the chatter budget ends the match as a flood."""
    a, b = trio.testing.memory_stream_pair()
    peer = RawPeer(b, joiner_session(RULES))
    notes: list[Note] = []
    error: list[KoiKoiError] = []

    async def host() -> None:
        try:
            async with open_link(
                a,
                host_session(),
                link_player(timeouts=T, record_path=tmp_path / "h.k"),
                notify=notes.append,
            ) as link:
                async for _ in link.updates:  # the host never moves: it only listens
                    pass
        except KoiKoiError as exc:
            error.append(exc)

    async def other() -> None:
        await peer.handshake()
        await peer.listen(T.silence_warn + 4.3)
        await peer.stream.send_all(peer.s.send(Ping(b"peer-one")))
        await peer.listen(1)
        await peer.listen(T.silence_warn + 4.3)
        await peer.stream.send_all(peer.s.send(Ping(b"peer-two")))
        await peer.listen(1)
        with contextlib.suppress(trio.BrokenResourceError):  # the host hangs up mid-flood
            for i in range(CHATTER_BURST + 5):
                await peer.stream.send_all(peer.s.send(Ping(i.to_bytes(8, "big"))))
            await peer.until_closed()

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(other)
    pings = [ev.nonce for ev in peer.events if isinstance(ev, Ping)]
    assert len(pings) >= 4, pings  # about one per ping_interval of our silence
    assert pings == [n.to_bytes(8, "big") for n in range(1, len(pings) + 1)]
    pongs = [ev.nonce for ev in peer.events if isinstance(ev, Pong)]
    assert pongs[:2] == [b"peer-one", b"peer-two"], pongs
    statuses = [n["text"] for n in notes if n["event"] == "status"]
    assert [t.split(" for ")[0] for t in statuses] == [
        "opponent silent",
        "the opponent is back",
        "opponent silent",
        "the opponent is back",
    ], statuses
    assert len(error) == 1 and isinstance(error[0], PeerFloodError), error
    assert "pings or chats at once" in str(error[0])


async def test_the_turn_deadline_is_ours_only(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """``turn_deadline`` is the end of our own decision (a headless player stops waiting
    for its bot then), and infinite while the other player decides."""
    from test_turn_limit import LIMIT
    from test_turn_limit import host_session as timed_host
    from test_turn_limit import joiner_session as timed_joiner

    a, b = trio.testing.memory_stream_pair()
    seen: dict[str, list[float]] = {"ours": [], "theirs": []}

    async def side(stream: trio.abc.Stream, session: Session, path: Path) -> None:
        with contextlib.suppress(KoiKoiError):  # the other side leaves first: not the subject
            await decide(stream, session, path)

    async def decide(stream: trio.abc.Stream, session: Session, path: Path) -> None:
        async with open_link(stream, session, link_player(timeouts=T, record_path=path)) as link:
            async for up in link.updates:
                if up.kind != "state" or link.session.match is None:
                    continue
                m = link.session.match
                if m.is_over:
                    continue
                if m.to_act == link.seat:
                    seen["ours"].append(link.turn_deadline() - trio.current_time())
                    if len(seen["ours"]) >= 6:
                        return
                    await link.act(up.view.legal_actions[0])
                else:
                    seen["theirs"].append(link.turn_deadline())

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(side, a, timed_host(), tmp_path / "h.k")
            nursery.start_soon(side, b, timed_joiner(), tmp_path / "j.k")
    assert len(seen["ours"]) >= 6 and seen["theirs"]
    assert all(0 < left <= LIMIT for left in seen["ours"]), seen
    assert all(d == math.inf for d in seen["theirs"]), seen


async def test_play_again_is_refused_during_a_match_and_after_the_other_left(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A rematch is offered only once both signed the result: during the match
    ``play_again`` says so, and once the link has failed it raises the link's error."""
    from p2pkoikoi.engine import IllegalActionError

    a, b = trio.testing.memory_stream_pair()
    said: dict[str, str] = {}

    async def host() -> None:
        async with open_link(
            a, host_session(), link_player(timeouts=T, record_path=tmp_path / "h.k")
        ) as link:
            assert link.rematch_declined is None and not link.rematch_offered
            try:
                await link.play_again(timeout=5)
            except IllegalActionError as exc:
                said["during"] = str(exc)
            await link.wait_closed()  # the joiner leaves at once
            try:
                await link.play_again(timeout=5)
            except KoiKoiError as exc:  # the link's own error, raised again
                assert exc is link.error
                said["closed"] = str(exc)

    async def joiner() -> None:
        async with open_link(
            b, joiner_session(), link_player(timeouts=T, record_path=tmp_path / "j.k")
        ):
            pass  # leaves the table as soon as the match started

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_quietly, host)
            nursery.start_soon(_quietly, joiner)
    assert said == {
        "during": "a rematch can be offered once both players signed the result",
        # issue 22: leaving during play, with no reconnect to wait for, is a forfeit
        "closed": "the other player left before the match ended: the joiner forfeits the"
        " match (left)",
    }, said


async def test_play_again_returns_once_the_next_match_is_dealt(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Both want another match: ``play_again`` returns True as soon as the new match's
    commit-reveal is done (the match is in play), not at its ``timeout``."""
    from test_rematch_link import _pair

    took: dict[str, float] = {}
    original = NetworkLink.play_again

    async def timed(self: NetworkLink, *, timeout: float = math.inf) -> bool:
        start = trio.current_time()
        ok = await original(self, timeout=timeout)
        took[self.session.role.value] = trio.current_time() - start
        assert ok and self.session.state is State.PLAY and self.session.match is not None
        assert self.session.match_number == 2
        return ok

    NetworkLink.play_again = timed  # type: ignore[method-assign]
    try:
        h, j, results = await _pair(tmp_path, True, True)
    finally:
        NetworkLink.play_again = original  # type: ignore[method-assign]
    assert h.error is None and j.error is None, (h.error, j.error)
    assert results == {"host": True, "joiner": True}
    assert set(took) == {"host", "joiner"} and max(took.values()) < 30, took


async def _quietly(fn: Callable[[], Awaitable[None]]) -> None:
    with contextlib.suppress(KoiKoiError):
        await fn()


async def test_leaving_keeps_the_first_reason_the_signature_is_missing(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The opponent's program goes away right after our resignation, while we wait
    for its signature: the record says the connection broke, the reason the
    signature is missing, not that we left first."""
    from test_leave import leaver

    from p2pkoikoi.session import decode_record

    a, b = trio.testing.memory_stream_pair()

    async def joiner_that_vanishes() -> None:
        async with open_link(
            b, joiner_session(), link_player(timeouts=T, record_path=tmp_path / "j.k")
        ) as link:
            async for upd in link.updates:
                if any(type(e).__name__ == "Resigned" for e in upd.events):
                    await b.aclose()  # gone before it signs the result
                    return
                view = upd.view
                if view.to_act == link.seat and view.legal_actions and upd.kind == "state":
                    await link.act(view.legal_actions[0])

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_quietly, lambda: leaver(a, tmp_path / "h.koikoi", 2))
            nursery.start_soon(_quietly, joiner_that_vanishes)
    rec = decode_record((tmp_path / "h.koikoi").read_bytes())
    assert rec.final_sigs[0] is not None and rec.final_sigs[1] is None
    assert rec.missing == "the connection ended early", rec.missing


async def test_a_host_cut_off_before_the_joiner_confirmed_its_reveal_is_told_the_risk(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The joiner's program goes away with the host's reveal in hand but before its
    start signature leaves: the host's error says the joiner's record may count the
    end as the host's forfeit (protocol section 8)."""
    a, b = trio.testing.memory_stream_pair()
    peer = RawPeer(b, joiner_session(RULES))
    error: list[KoiKoiError] = []

    async def host() -> None:
        try:
            async with open_link(
                a, host_session(), link_player(timeouts=T, record_path=tmp_path / "h.k")
            ) as link:
                await link.wait_closed()
        except KoiKoiError as exc:
            error.append(exc)

    async def other() -> None:
        await peer.flush()
        while peer.s.state is not State.PLAY:
            assert await peer.read_once()
            if peer.s.state is not State.PLAY:
                await peer.flush()
        await b.aclose()  # the reveal arrived; our start signature never leaves

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(other)
    assert len(error) == 1, error
    assert "before the joiner confirmed your reveal" in str(error[0]), error[0]
    assert "the joiner's record counts this as your forfeit" in str(error[0])


async def test_each_reconnect_attempt_after_the_first_says_why_the_last_one_failed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The joiner redials a host it cannot reach: from the second attempt on, each
    ``reconnecting`` note carries the last attempt's error (a person sees why)."""
    from test_reconnect import SECRET as RSECRET
    from test_reconnect import Net, Reconnect, det_key, play, sessions
    from test_reconnect import Side as RSide

    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=RSECRET, incoming=net.incoming)

    async def unreachable() -> trio.abc.Stream:
        raise OSError("network is unreachable")

    rc_j = Reconnect(identity=det_key("joiner"), secret=RSECRET, dial=unreachable)
    a, b = net.pair()
    h, j = RSide(), RSide()
    cut_once = net.cut_after(10)

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 5)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 6, cut_once)
    notes = [n for n in j.notes if n["event"] == "reconnecting"]
    assert len(notes) >= 3, notes
    assert "last_error" not in notes[0]
    for n in notes[1:]:
        assert "network is unreachable" in n["last_error"], n


async def test_only_the_host_asks_its_person_about_a_changed_key(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A joiner's known peers may have a person to ask too: the joiner still refuses a
    changed host key before the deal (its rules screen is where a person decides), and
    nobody is asked."""
    from test_transport import run_match

    from p2pkoikoi.engine import RuleSet
    from p2pkoikoi.transport.errors import IdentityChangedError
    from p2pkoikoi.transport.store.identity import KnownPeers, PeerCheck

    known = KnownPeers(tmp_path / "known_peers", {"aaaa-bbbb-cccc-dddd": "Alice"})
    asked: list[PeerCheck] = []

    async def ask(check: PeerCheck, rules: RuleSet) -> bool:
        asked.append(check)
        return True

    known.ask = ask
    h, j = await run_match(tmp_path, known=known)
    assert asked == []
    assert isinstance(j.error, IdentityChangedError), j.error


async def test_a_cut_between_the_last_move_and_the_signatures_ends_the_match_on_resume(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The connection breaks after the last move, before the final signatures crossed:
    the sides resume only to sign, and the match ends there (an ``over`` update, the
    result and a complete record on both sides)."""
    from test_reconnect import SECRET as RSECRET
    from test_reconnect import Net, Reconnect, assert_one_match, det_key, play, sessions
    from test_reconnect import Side as RSide

    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=RSECRET, incoming=net.incoming)
    rc_j = Reconnect(identity=det_key("joiner"), secret=RSECRET, dial=net.dial)
    a, b = net.pair()
    h, j = RSide(), RSide()
    cut: list[int] = []

    def cut_at_the_end(obj: dict[str, object]) -> None:
        link = j.link
        if not cut and link is not None and link.session.state is State.FINISH:
            cut.append(link.session.seq)
            net.cut()

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 1)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 2, cut_at_the_end)
    assert cut, "the joiner never waited for the final signature"
    assert_one_match(tmp_path, h, j)
    for side in (h, j):
        assert side.link is not None and side.link.result is not None
        assert [n["event"] for n in side.notes].count("reconnected") == 1


async def test_a_source_whose_connections_ended_gets_its_whole_allowance_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The gate counts connections per source while they last: once one from an
    address has ended, that address may again hold ``per_source`` at once, and no
    more."""
    from p2pkoikoi.session import Role
    from p2pkoikoi.session.testing import SECRET as GSECRET
    from p2pkoikoi.session.testing import det_bytes, det_key
    from p2pkoikoi.transport.open.gate import Gate, GateLimits

    notes: list[Note] = []

    def make(code: object) -> Session:
        return Session(
            Role.HOST,
            identity_key=det_key("host"),
            invite_secret=GSECRET,
            name="Alice",
            entropy=det_bytes("gate-host"),
            rules=RULES,
        )

    gate = Gate(make, notes.append, limits=GateLimits(per_source=2, deadline=30))
    tx, rx = trio.open_memory_channel[trio.abc.Stream](16)

    def refusals() -> int:
        return sum("too many at once" in str(n.get("text", "")) for n in notes)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(gate.admit, rx)
        ours, theirs = trio.testing.memory_stream_pair()
        await tx.send(ours)
        await theirs.send_all(b"\xff" * 64)  # not a frame: this connection is dropped
        await trio.testing.wait_all_tasks_blocked()
        assert [str(n.get("text", "")).startswith("dropped a connection") for n in notes] == [
            False,  # connected
            True,
        ], notes
        idle = []
        for _ in range(3):  # three at once from the same source: the third is refused
            ours, theirs = trio.testing.memory_stream_pair()
            idle.append(theirs)
            await tx.send(ours)
            await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert refusals() == 1, notes


async def test_a_failed_redial_closes_its_stream_and_the_next_one_resumes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The joiner's first redial reaches something that answers garbage: the joiner
    closes that stream (its far end sees the end) and resumes on the next dial."""
    from test_reconnect import SECRET as RSECRET
    from test_reconnect import Net, Reconnect, assert_one_match, det_key, play, sessions
    from test_reconnect import Side as RSide

    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=RSECRET, incoming=net.incoming)
    closed: list[bool] = []
    nurseries: list[trio.Nursery] = []

    async def impostor(end: trio.abc.Stream) -> None:
        await end.receive_some(65536)  # the joiner's resume hello
        await end.send_all(b"\xff" * 64)  # not a frame
        with trio.move_on_after(60):
            while await end.receive_some(65536):
                pass
            closed.append(True)

    tried: list[bool] = []

    async def dial() -> trio.abc.Stream:
        if not tried:  # the first redial
            tried.append(True)
            ours, far = trio.testing.memory_stream_pair()
            nurseries[0].start_soon(impostor, far)
            return ours
        return await net.dial()

    rc_j = Reconnect(identity=det_key("joiner"), secret=RSECRET, dial=dial)
    a, b = net.pair()
    h, j = RSide(), RSide()
    cut_once = net.cut_after(10)

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nurseries.append(nursery)
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 7)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 8, cut_once)
    assert closed == [True]
    assert_one_match(tmp_path, h, j)


async def test_the_host_numbers_each_reconnection_candidate_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """After a break the host says "reconnecting (attempt 1)" once, then one attempt
    more per candidate after a failed one: garbage first, then the real joiner."""
    from test_reconnect import SECRET as RSECRET
    from test_reconnect import Net, Reconnect, assert_one_match, det_key, play, sessions
    from test_reconnect import Side as RSide

    net = Net()
    hs, js = sessions()
    rc_h = Reconnect(identity=det_key("host"), secret=RSECRET, incoming=net.incoming)
    tried: list[bool] = []

    async def dial() -> trio.abc.Stream:
        if not tried:  # the first redial: a stranger reaches the host first, with garbage
            tried.append(True)
            h_end, stranger = net.pair()
            net.to_host.send_nowait(h_end)
            await stranger.send_all(b"\xff" * 64)
            await stranger.aclose()
            raise OSError("no route to host")
        return await net.dial()

    rc_j = Reconnect(identity=det_key("joiner"), secret=RSECRET, dial=dial)
    a, b = net.pair()
    h, j = RSide(), RSide()
    cut_once = net.cut_after(10)

    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, h, a, hs, rc_h, tmp_path / "h.koikoi", 9)
            nursery.start_soon(play, j, b, js, rc_j, tmp_path / "j.koikoi", 10, cut_once)
    assert_one_match(tmp_path, h, j)
    attempts = [n["attempt"] for n in h.notes if n["event"] == "reconnecting"]
    assert attempts == [1, 2], attempts
    assert sum("refused a reconnection" in str(n.get("text", "")) for n in h.notes) == 1


async def test_a_link_made_for_a_resumed_session_knows_who_plays_before_reconnecting(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """``p2pkoikoi resume`` makes a link with no stream: its names, rules and the
    other player's fingerprint come from the resumed record, before any connection."""
    from p2pkoikoi.session import fingerprint
    from p2pkoikoi.session.testing import make_pair, play_until_cut, random_chooser, resumed
    from p2pkoikoi.transport.limits import Timeouts
    from p2pkoikoi.transport.link.handshake import accept_decision
    from p2pkoikoi.transport.link.notes import nop

    host, joiner = make_pair(RULES)
    # (a cut mid-match: where it falls depends on the seed, and so on the protocol version)
    assert not play_until_cut(host, joiner, random_chooser(3), 4000)
    for old, names in ((joiner, ("Alice", "Bob")), (host, ("Alice", "Bob"))):
        again = resumed(old, "again")
        link = NetworkLink(
            None,
            again,
            link_player(timeouts=Timeouts(), record_path=None, known_peers=None),
            notify=nop,
            decide_rules=accept_decision,
        )
        assert link.names == names
        assert link.rules == RULES
        assert old.peer_key is not None
        assert link.peer_fingerprint == fingerprint(old.peer_key)


async def test_a_stalled_reveal_is_recorded_as_the_hosts_forfeit(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The host never reveals after the joiner's value: the joiner's record holds the
    host's forfeit, signed by the joiner (protocol section 8), not only an error."""
    from test_transport import Side, bare_peer, play_side, random_choose

    from p2pkoikoi.session import decode_record
    from p2pkoikoi.transport.errors import RevealTimeoutError

    a, b = trio.testing.memory_stream_pair()
    j = Side("joiner")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bare_peer, a, host_session(), lambda s: s.state is State.PLAY)
        await play_side(j, b, joiner_session(RULES), random_choose(2), tmp_path / "j.koikoi")
        nursery.cancel_scope.cancel()
    assert isinstance(j.error, RevealTimeoutError), j.error
    rec = decode_record((tmp_path / "j.koikoi").read_bytes())
    assert rec.forfeit is not None and rec.forfeit.seat == 0, rec.forfeit
