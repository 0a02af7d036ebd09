"""Finding a waiting host on the same network: DNS-SD over multicast DNS.

Theory of operation
-------------------
A host waiting for its friend announces one DNS-SD service of type
``_p2pkoikoi._tcp.local.`` (protocol/discovery.md has the TXT record).  It
carries **no secret**: the host's name, the rules preset and the short code's
*number* (the part before the words, public like a table number).  A joiner
with ``7-crossover-clockwork`` browses for services whose number is 7 and
dials the addresses the service record gives; the words then secure the
connection (the PAKE), exactly as if the addresses had been typed.

The ``zeroconf`` library is asyncio-based and runs its own event loop in a
thread of its own when used through its synchronous API.  That is the API we
use, never from the trio loop itself: registering blocks for the probes
(about a second), so :class:`Announcer` registers in a thread of its own while
the host already accepts connections, and unregisters (the goodbye) from a trio
worker thread; the browser calls us back on its thread, from where updates
cross into trio with ``trio.from_thread.run_sync`` (:func:`browse`) or into
the start screen's prompt_toolkit loop (:class:`Browser`).  Nothing asyncio
touches the trio loop, and the engine and session layers never see any of it
(this is transport).

The announcement lives exactly as long as the :func:`announce` block: the
host leaves it when the match starts or hosting stops (an error or Ctrl-C
included: the goodbye is sent under a shielded bound).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, Final

import trio

SERVICE: Final = "_p2pkoikoi._tcp.local."
TXT_VERSION: Final = "1"
#: bytes of a DNS label: the instance name is cut to fit
_LABEL: Final = 63


@dataclass(frozen=True, slots=True)
class Waiting:
    """A host waiting on this network, as its announcement describes it."""

    service: str  # the DNS-SD instance name (unique on the link)
    name: str  # the host player's name
    rules: str  # the rules preset
    number: int  # the short code's number
    addresses: tuple[str, ...]
    port: int


def txt_record(name: str, rules: str, number: int) -> dict[str, str]:
    """The TXT keys of an announcement (protocol/discovery.md)."""
    return {"txtvers": TXT_VERSION, "name": name, "rules": rules, "code": str(number)}


def decode_txt(props: dict[bytes, bytes | None]) -> tuple[str, str, int] | None:
    """(name, rules, number) from a TXT record, or None if it is not one of ours."""

    def get(key: str) -> str:
        raw = props.get(key.encode())
        return raw.decode("utf-8", "replace") if raw else ""

    if get("txtvers") != TXT_VERSION or not get("code").isdigit():
        return None
    return get("name"), get("rules"), int(get("code"))


def instance_name(name: str, number: int) -> str:
    """``NAME (NUMBER)``, cut to one DNS label; zeroconf renames it on a clash."""
    suffix = f" ({number})"
    text = "".join(c for c in name if c.isprintable() and c != ".") or "p2pkoikoi"
    while len((text + suffix).encode("utf-8")) > _LABEL:
        text = text[:-1]
    return f"{text}{suffix}.{SERVICE}"


def _waiting(info: Any) -> Waiting | None:
    fields = decode_txt(info.properties or {})
    if fields is None or not info.port:
        return None
    name, rules, number = fields
    addrs = tuple(a for a in info.parsed_scoped_addresses() if "%" not in a)
    return Waiting(info.name, name, rules, number, addrs, int(info.port))


# ------------------------------------------------------------------ hosting
class Announcer:
    """One announcement, registered in a thread of its own so that the host accepts
    connections at once (mDNS probing takes about a second); :meth:`stop` sends the
    goodbye.  Nothing here raises: where multicast DNS cannot run, nothing is announced."""

    def __init__(self, *, name: str, rules: str, number: int, port: int, addresses: list[str]):
        self.name = instance_name(name, number)
        self._args = (name, rules, number, port, addresses)
        self._zc: Any = None
        self._info: Any = None
        self._thread: threading.Thread | None = None
        self.registered = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._register, daemon=True, name="mdns")
        self._thread.start()

    def _register(self) -> None:
        name, rules, number, port, addresses = self._args
        try:
            import zeroconf

            packed = []
            for a in addresses:
                with suppress(OSError):
                    packed.append(
                        socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a)
                    )
            self._info = zeroconf.ServiceInfo(
                SERVICE,
                self.name,
                addresses=packed,
                port=port,
                properties=txt_record(name, rules, number),
            )
            self._zc = zeroconf.Zeroconf()
            self._zc.register_service(self._info, allow_name_change=True)
            self.name = str(self._info.name)
            self.registered.set()
        except Exception:  # no zeroconf, no multicast here: not announced
            self._close()

    def _close(self) -> None:
        with suppress(Exception):
            if self._zc is not None and self.registered.is_set():
                self._zc.unregister_service(self._info)
        with suppress(Exception):
            if self._zc is not None:
                self._zc.close()
        self._zc = None

    async def stop(self) -> None:
        """Withdraw the announcement (the goodbye), waiting at most 3 s; shielded."""

        def stop_sync() -> None:
            if self._thread is not None:
                self._thread.join(2)
            self._close()

        with trio.move_on_after(3) as cs:
            cs.shield = True
            await trio.to_thread.run_sync(stop_sync, abandon_on_cancel=True)


@asynccontextmanager
async def announce(
    *, name: str, rules: str, number: int, port: int, addresses: list[str]
) -> AsyncIterator[Announcer]:
    """Announce a waiting host for the block (registering goes on in the background;
    ``registered`` says when it is done)."""
    ann = Announcer(name=name, rules=rules, number=number, port=port, addresses=addresses)
    ann.start()
    try:
        yield ann
    finally:
        await ann.stop()


# ------------------------------------------------------------------ joining
@dataclass(frozen=True, slots=True)
class Gone:
    """A host stopped announcing (its match started, or it stopped)."""

    service: str


@asynccontextmanager
async def browse() -> AsyncIterator[trio.MemoryReceiveChannel[Waiting | Gone]]:
    """Watch this network for waiting hosts for the block: a channel of
    :class:`Waiting` (new or changed) and :class:`Gone` updates.  Where
    multicast DNS cannot run the channel stays empty."""
    tx, rx = trio.open_memory_channel[Waiting | Gone](64)
    try:
        import zeroconf
    except ImportError:
        yield rx
        return
    token = trio.lowlevel.current_trio_token()

    def push(item: Waiting | Gone) -> None:
        with suppress(trio.RunFinishedError, trio.WouldBlock, trio.ClosedResourceError):
            trio.from_thread.run_sync(tx.send_nowait, item, trio_token=token)

    def changed(zeroconf: Any, service_type: str, name: str, state_change: Any, **_: Any) -> None:
        # called on the browser's own thread, where blocking lookups are allowed
        if state_change.name == "Removed":
            push(Gone(name))
            return
        info = zeroconf.get_service_info(service_type, name, timeout=2000)
        w = _waiting(info) if info is not None else None
        if w is not None:
            push(w)

    def start() -> tuple[Any, Any]:
        zc = zeroconf.Zeroconf()
        try:
            return zc, zeroconf.ServiceBrowser(zc, SERVICE, handlers=[changed])
        except BaseException:
            zc.close()
            raise

    try:
        zc, browser = await trio.to_thread.run_sync(start, abandon_on_cancel=True)
    except (OSError, zeroconf.Error):
        yield rx
        return
    try:
        yield rx
    finally:

        def stop() -> None:
            with suppress(Exception):
                browser.cancel()
            zc.close()

        with trio.move_on_after(3) as cs:
            cs.shield = True
            await trio.to_thread.run_sync(stop, abandon_on_cancel=True)
            tx.close()


async def find_host(number: int, timeout: float = 3.0) -> list[Waiting]:
    """The hosts on this network announcing code ``number``, waiting up to ``timeout``
    seconds for the first (then a short moment for others answering alike)."""
    found: dict[str, Waiting] = {}
    async with browse() as updates:
        with trio.move_on_after(timeout) as scope:
            async for item in updates:
                if isinstance(item, Waiting) and item.number == number:
                    found[item.service] = item
                    scope.deadline = min(scope.deadline, trio.current_time() + 0.3)
                elif isinstance(item, Gone):
                    found.pop(item.service, None)
    return list(found.values())


class Browser:
    """Watch this network for waiting hosts, for a program that is not trio (the
    start screen runs prompt_toolkit's asyncio loop): zeroconf's own threads
    call ``on_change`` with the current list whenever it changes."""

    def __init__(self, on_change: Callable[[list[Waiting]], None]) -> None:
        self._on_change = on_change
        self._lock = threading.Lock()
        self._hosts: dict[str, Waiting] = {}
        self._zc: Any = None
        self._browser: Any = None

    @property
    def hosts(self) -> list[Waiting]:
        with self._lock:
            return sorted(self._hosts.values(), key=lambda w: (w.name.lower(), w.number))

    def start(self) -> bool:
        """Start browsing; False when multicast DNS cannot run here."""
        try:
            import zeroconf

            self._zc = zeroconf.Zeroconf()
            self._browser = zeroconf.ServiceBrowser(self._zc, SERVICE, handlers=[self._changed])
        except Exception:  # no zeroconf, no multicast here: the list stays empty
            self.stop()
            return False
        return True

    def _changed(self, zeroconf: Any, service_type: str, name: str, state_change: Any) -> None:
        if state_change.name == "Removed":
            with self._lock:
                self._hosts.pop(name, None)
        else:
            info = zeroconf.get_service_info(service_type, name, timeout=2000)
            w = _waiting(info) if info is not None else None
            if w is None:
                return
            with self._lock:
                self._hosts[name] = w
        self._on_change(self.hosts)

    def stop(self) -> None:
        """Stop browsing (sends nothing: a browser has nothing to withdraw)."""
        with suppress(Exception):
            if self._browser is not None:
                self._browser.cancel()
        with suppress(Exception):
            if self._zc is not None:
                self._zc.close()
        self._browser = self._zc = None
