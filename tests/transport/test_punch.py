"""The punched UDP path over loopback: checks, QUIC, the session inside one QUIC stream.

A joiner whose invite's TCP address is dead but whose ``s`` (reflexive UDP)
entry points at the host's match socket plays a whole match over QUIC, with
the same final hash on both sides; checks without the invite's key get no
answer at all; an answer pasted at the host makes the host check back."""

from __future__ import annotations

import random
import socket
from pathlib import Path
from typing import Any

import trio

from p2pkoikoi.cli.headless import play_headless
from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import Invite, decode_invite
from p2pkoikoi.session.codes.answer import UdpCandidate, check_key
from p2pkoikoi.session.codes.invite import Address
from p2pkoikoi.session.testing import det_key
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.nat import stun
from p2pkoikoi.transport.nat.checks import check_request
from p2pkoikoi.transport.nat.udp import UdpEndpoint, open_socket
from p2pkoikoi.transport.open.host import open_host
from p2pkoikoi.transport.open.join import open_join
from p2pkoikoi.transport.open.options import HostOptions
from p2pkoikoi.transport.player import Player

RULES = get_preset("online").with_settings(rounds=1)


def chooser(seed: int) -> Any:
    rng = random.Random(seed)
    return lambda view: rng.choice(view.legal_actions)


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def play(tmp_path: Path, *, tcp_alive: bool) -> tuple[dict[str, Any], list[Any], list[Any]]:
    notes: list[dict[str, Any]] = []
    jnotes: list[dict[str, Any]] = []
    ready = trio.Event()
    finals: dict[str, Any] = {}

    def host_notes(note: dict[str, Any]) -> None:
        notes.append(note)
        if note["event"] == "listening":
            ready.set()

    async def host() -> None:
        async with open_host(
            Player(det_key("h"), "Alice", record_path=tmp_path / "h.koikoi"),
            HostOptions(RULES, port=0, bind="127.0.0.1", port_mapping=False),
            notify=host_notes,
        ) as link:
            finals["host"] = await play_headless(link, chooser(1), lambda _: None)

    async def joiner() -> None:
        await ready.wait()
        inv = decode_invite(str(next(n for n in notes if n["event"] == "listening")["invite"]))
        port = inv.addresses[0].port
        tcp = port if tcp_alive else dead_port()
        udp = (UdpCandidate("s", "127.0.0.1", port),)
        async with open_join(
            Invite((Address("127.0.0.1", tcp),), inv.secret, udp),
            Player(
                det_key("j"), "Bob", record_path=tmp_path / "j.koikoi", timeouts=Timeouts(connect=5)
            ),
            notify=jnotes.append,
        ) as link:
            finals["joiner"] = await play_headless(link, chooser(2), lambda _: None)

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            nursery.start_soon(joiner)
    return finals, notes, jnotes


def test_a_match_over_quic_when_tcp_is_dead(tmp_path: Path) -> None:
    finals, notes, jnotes = trio.run(lambda: play(tmp_path, tcp_alive=False))
    assert finals["host"]["final_hash"] == finals["joiner"]["final_hash"]
    connected = [n["path"] for n in notes if n["event"] == "connected"]
    assert connected == ["udp"], notes
    from p2pkoikoi.cli import main as cli_main

    assert cli_main(["verify", str(tmp_path / "h.koikoi")]) == 0
    assert cli_main(["verify", str(tmp_path / "j.koikoi")]) == 0


def test_a_check_without_the_invite_key_gets_no_answer() -> None:
    async def main() -> None:
        async with open_host(
            Player(det_key("h"), "Alice"),
            HostOptions(RULES, port=0, bind="127.0.0.1", port_mapping=False, accept_timeout=30),
            notify=got.append,
        ):
            pass

    got: list[dict[str, Any]] = []

    async def probe() -> None:
        while not any(n["event"] == "listening" for n in got):
            await trio.sleep(0.01)
        inv = decode_invite(next(n for n in got if n["event"] == "listening")["invite"])
        port = inv.addresses[0].port
        ep = UdpEndpoint(open_socket(0, "127.0.0.1"))
        async with trio.open_nursery() as n:
            await n.start(ep.run)
            # a plain STUN binding request (a reflector scan) and a check keyed wrongly
            tid, raw = stun.binding_request()
            assert await ep.transact(raw, tid, ("127.0.0.1", port), 1.0) is None
            tid, raw = check_request(bytes(10), b"\x01" * 16, controlling=True)
            assert await ep.transact(raw, tid, ("127.0.0.1", port), 1.0) is None
            # the right key is answered
            tid, raw = check_request(bytes(10), inv.secret, controlling=True)
            ok = await ep.transact(raw, tid, ("127.0.0.1", port), 2.0)
            assert ok is not None
            stun.decode(ok[1], key=check_key(inv.secret, bytes(10)))
            n.cancel_scope.cancel()
        ep.close()
        cancel.cancel()

    cancel = trio.CancelScope()

    async def both() -> None:
        with cancel:
            async with trio.open_nursery() as n:
                n.start_soon(main)
                n.start_soon(probe)

    trio.run(both)
