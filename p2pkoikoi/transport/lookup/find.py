"""Where the host of a short code is: this network first, then the DHT.

:func:`find_host_of` asks this network by multicast DNS
(:func:`~p2pkoikoi.transport.lookup.mdns.find_host`) and, when a DHT is
configured, reads the DHT rendezvous (:func:`~p2pkoikoi.transport.lookup.rendezvous.find_invite`)
at once; nothing is put on the DHT before the network has been silent for
:data:`LAN_FIRST`, and whichever finds the host first wins.  The network gives
addresses to dial (screened: a few hosts, no loopback); the DHT gives the host's
invite, and :func:`answer_back` sends the joiner's answer back the same way.
"""

from __future__ import annotations

import contextlib
from typing import Final

import trio

from p2pkoikoi.session.codes.code import (
    ShortCode,
)
from p2pkoikoi.session.codes.invite import MAX_ADDRESSES
from p2pkoikoi.session.errors import ProtocolError
from p2pkoikoi.transport.errors import ConnectError
from p2pkoikoi.transport.link.notes import Note, Notify
from p2pkoikoi.transport.lookup.dht import DhtConfig, open_dht
from p2pkoikoi.transport.lookup.mdns import find_host
from p2pkoikoi.transport.lookup.rendezvous import (
    Found,
    find_invite,
)
from p2pkoikoi.transport.open.addresses import (
    MAX_MDNS_ADDRESSES,
    MAX_MDNS_HOSTS,
    Candidate,
    dedupe,
    local_kind,
)

#: how long ``join CODE`` looks for the host on this network
DISCOVERY_WAIT: Final = 3.0
#: how long the network may stay silent before ``join CODE`` asks the DHT too
LAN_FIRST: Final = 1.0


async def find_host_of(
    code: ShortCode, notify: Notify, dht: DhtConfig | None, stack: contextlib.AsyncExitStack
) -> list[Candidate] | Found:
    """The hosts of ``code`` on this network (multicast DNS), or, when none answers
    within :data:`LAN_FIRST` and the DHT finds one first, what the DHT rendezvous
    gave (its client stays open in ``stack``, for the answer).  The DHT is read at
    once; nothing is put there before the LAN has had its turn."""
    if dht is None:
        return await _discover(code, notify)
    client = await stack.enter_async_context(open_dht(dht))
    out: list[list[Candidate] | Found] = []
    lan_error: list[ConnectError] = []
    net_error: list[BaseException] = []
    lan_done = trio.Event()

    async def lan(cancel: trio.CancelScope) -> None:
        try:
            out.append(await _discover(code, notify))
            cancel.cancel()
        except ConnectError as exc:
            lan_error.append(exc)
        finally:
            lan_done.set()

    async def lan_first() -> None:
        with trio.move_on_after(LAN_FIRST):
            await lan_done.wait()
        if out:  # the LAN found the host (and cancels us): put nothing on the DHT
            await trio.sleep_forever()

    async def net(cancel: trio.CancelScope) -> None:
        try:
            out.append(await find_invite(client, code, notify, ready=lan_first))
            cancel.cancel()
        except (ConnectError, ProtocolError) as exc:
            net_error.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lan, nursery.cancel_scope)
        nursery.start_soon(net, nursery.cancel_scope)
    if out:
        return out[0]
    raise (net_error or lan_error)[0]


async def _discover(code: ShortCode, notify: Notify) -> list[Candidate]:
    """The addresses of every host on this network announcing ``code``'s number."""
    notify({"event": "searching", "text": f"looking for the host of code {code.number} here"})
    found = await find_host(code.number, DISCOVERY_WAIT)
    if not found:
        raise ConnectError(
            f"no host on this network is waiting with code {code.number} (looked for "
            f"{DISCOVERY_WAIT:g}s): check the number, or ask the host for the koi2- invite "
            "(a code finds hosts on the same network only)"
        )
    if len(found) > MAX_MDNS_HOSTS:  # anybody here may announce: dial only a few
        notify(
            {
                "event": "warning",
                "text": f"{len(found)} hosts here announce code {code.number}: trying"
                f" {MAX_MDNS_HOSTS} of them (one may be flooding the network)",
            }
        )
        found = found[:MAX_MDNS_HOSTS]
    out = [Candidate(a, w.port, "mdns") for w in found for a in w.addresses[:MAX_ADDRESSES]]
    # a host never announces loopback (bound to it, it does not announce at all): one
    # that does points us at our own machine's services
    looped = [c for c in out if local_kind(c.address) == "loopback"]
    if looped:
        notify(
            {
                "event": "warning",
                "text": f"a host here announces {looped[0]}, an address on this computer"
                " itself: not dialed",
            }
        )
        out = [c for c in out if c not in looped]
    if not out:
        raise ConnectError(
            f"the hosts here announcing code {code.number} give no address to dial: ask the"
            " host for the koi2- invite"
        )
    notify({"event": "found", "hosts": [{"name": w.name, "rules": w.rules} for w in found]})
    return dedupe(out)[:MAX_MDNS_ADDRESSES]


async def answer_back(found: Found, notify: Notify, stack: contextlib.AsyncExitStack) -> Notify:
    """A notify that also sends an ``answer`` note's text to the host through the DHT
    (the rendezvous's second round), put again every 5 s for a minute, from a
    nursery that lives in ``stack``."""
    nursery = await stack.enter_async_context(trio.open_nursery())
    stack.callback(nursery.cancel_scope.cancel)

    async def send(text: str) -> None:
        for _ in range(12):
            await found.send_answer(text)
            await trio.sleep(5)

    def wrapped(note: Note) -> None:
        if note.get("event") == "answer" and isinstance(note.get("answer"), str):
            nursery.start_soon(send, str(note["answer"]))
            note = {**note, "dht": True}
        notify(note)

    return wrapped
