"""The host's gate: handshakes before authentication, many at once, none able to stop hosting.

Theory of operation
-------------------
Until a joiner has proved it holds the code or invite (its first encrypted
frame decrypts) and its identity (its auth signature verifies), it is a
stranger, and nothing a stranger sends may end or stall the host.  So each accepted connection gets its own task here:

* the host's hello goes out at once;
* the task feeds the session **one frame at a time** (it splits frames itself),
  so it can act between the joiner's hello and its auth, and so that nothing
  after the auth is consumed: leftover bytes go to the link with the session;
* each task has a short deadline (:attr:`GateLimits.deadline`), and a shorter
  one for the joiner's hello (:attr:`GateLimits.hello_deadline`); at most
  :attr:`GateLimits.total` run at once, at most :attr:`GateLimits.per_source`
  from one source (an IPv4 address, or an IPv6 /64: one host holds a whole /64);
  more from one source get a plaintext ``refuse``.  When all slots are taken,
  the oldest connection that has not sent a valid hello is dropped to make room
  for the newcomer (a stranger holding silent sockets cannot keep a friend out);
  only when every slot has said hello is the newcomer told the host
  is busy, and the joiner tries again (transport/open/dialer.py);
* any failure (garbage, another version, a wrong code, silence) drops that
  connection with a ``warning`` note; hosting goes on;
* the first connection whose joiner authenticates wins; the others are closed.
  It *claims* the win before the host's own auth goes out, so the host's auth
  goes out on one connection only: a joiner that races several addresses of
  this host (transport/open/dialer.py) therefore completes the handshake on exactly
  the connection the host chose, never on another one that is then aborted.

Short codes (:class:`CodeGuard`): a code has 16 secret bits, so wrong guesses
are counted.  A connection that says ``via = "code"`` reserves one attempt
before the host answers anything keyed; a wrong guess uses it up, a success
or a connection that ends without an answer gives it back.  So guesses whose
outcome an attacker can learn never exceed :data:`MAX_FAILED_ATTEMPTS`, even
with many connections at once; then the code is no longer accepted and the
host's user is told to make a new one (a ``code_expired`` note).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from typing import Final

import trio

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import NEED_DATA, ConnectionClosed, Session, ShortCode, wire
from p2pkoikoi.session.codes.code import MAX_FAILED_ATTEMPTS
from p2pkoikoi.session.errors import RemoteProtocolError, WrongSecretError
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.limits import RECEIVE_SIZE
from p2pkoikoi.transport.link.notes import Notify
from p2pkoikoi.transport.open.strangers import peer_address

BUSY_REASON: Final = "the host is busy with other connections: try again in a moment"
WON_REASON: Final = "the host is playing a match with someone else"


@dataclasses.dataclass(frozen=True)
class GateLimits:
    """How much a host spends on strangers."""

    total: int = 16  #: handshakes before authentication at once
    per_source: int = 4  #: ... from one source (an IPv4 address, an IPv6 /64)
    deadline: float = 10.0  #: seconds from accept to the joiner's verified auth
    hello_deadline: float = 3.0  #: seconds from accept to the joiner's valid hello


def source_of(address: str) -> str:
    """What the per-source limit counts: an IPv4 address (an IPv4-mapped IPv6 one
    too), or the /64 of an IPv6 address, since one machine is given a whole /64 and
    may use any address in it; a name that is no address counts as itself."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class CodeGuard:
    """The host's short code and the wrong guesses against it."""

    def __init__(self, code: ShortCode | None, limit: int = MAX_FAILED_ATTEMPTS) -> None:
        self.code = code
        self.limit = limit
        self.failed = 0
        self.in_flight = 0

    @property
    def active(self) -> bool:
        return self.code is not None and self.failed < self.limit

    def reserve(self) -> bool:
        """One guess may be answered; False when none is left."""
        if not self.active or self.failed + self.in_flight >= self.limit:
            return False
        self.in_flight += 1
        return True

    def release(self, *, failed: bool) -> bool:
        """The guess was answered (``failed``: wrongly) or not; True when the code just died."""
        self.in_flight -= 1
        if not failed:
            return False
        self.failed += 1
        return self.failed >= self.limit


@dataclasses.dataclass(eq=False)
class _Ticket:
    """One connection in the gate: its source, whether its hello came, its claim on a
    code guess (see :class:`CodeGuard`) and the scope that ends it early (no hello
    in time, or dropped to make room)."""

    source: str = ""
    reserved: bool = False
    hello: bool = False
    evicted: bool = False
    scope: trio.CancelScope = dataclasses.field(default_factory=trio.CancelScope)


@dataclasses.dataclass
class Admitted:
    """A connection whose joiner proved the secret and its identity."""

    stream: trio.abc.Stream
    session: Session
    address: str


class _NoHello(Exception):
    """The joiner sent no valid hello in time, or was dropped to make room."""


class _Beaten(Exception):
    """Another connection claimed the win first (see the theory of operation)."""


class Gate:
    """Runs strangers' handshakes concurrently until one authenticates (:meth:`admit`)."""

    def __init__(
        self,
        make_session: Callable[[ShortCode | None], Session],
        notify: Notify,
        *,
        limits: GateLimits | None = None,
        guard: CodeGuard | None = None,
        session_for: Callable[[trio.abc.Stream], Session | None] | None = None,
    ) -> None:
        self._make = make_session
        #: a session of its own for some streams (QUIC over a punched path: the answer's
        #: secret, transport/nat/punch.py); None: ``make_session``
        self._session_for = session_for
        self._notify = notify
        self.limits = limits or GateLimits()
        self.guard = guard or CodeGuard(None)
        self._sources: Counter[str] = Counter()
        #: the connections in the gate, oldest first
        self._live: dict[_Ticket, None] = {}
        self._winner: Admitted | None = None
        self._claim: _Ticket | None = None  # the connection whose auth goes out

    async def admit(self, incoming: trio.MemoryReceiveChannel[trio.abc.Stream]) -> Admitted:
        """The first connection from ``incoming`` whose joiner authenticates."""
        async with trio.open_nursery() as nursery:
            async for stream in incoming:
                address = peer_address(stream)[0]
                path = "udp" if getattr(stream, "peer_address", None) else "tcp"
                self._notify({"event": "connected", "address": address, "path": path})
                source = source_of(address)
                full = len(self._live) >= self.limits.total
                if self._sources[source] >= self.limits.per_source or (
                    full and not self._make_room()
                ):
                    self._notify(
                        {
                            "event": "warning",
                            "text": f"refused a connection from {address}: too many at once",
                        }
                    )
                    nursery.start_soon(_say_and_close, stream, wire.RefuseMsg(reason=BUSY_REASON))
                    continue
                ticket = _Ticket(source)
                ticket.scope.deadline = trio.current_time() + self.limits.hello_deadline
                self._live[ticket] = None
                self._sources[source] += 1
                nursery.start_soon(self._handshake, stream, address, nursery.cancel_scope, ticket)
        if self._winner is None:  # the channel closed: the caller stopped hosting
            raise TransportError("stopped hosting before anybody joined")
        return self._winner

    def _make_room(self) -> bool:
        """Drop the oldest connection that has not sent a valid hello; False if none."""
        victim = next((t for t in self._live if not t.hello), None)
        if victim is None:
            return False
        self._forget(victim)
        victim.evicted = True
        victim.scope.cancel()
        return True

    def _forget(self, ticket: _Ticket) -> None:
        if ticket in self._live:
            del self._live[ticket]
            self._sources[ticket.source] -= 1

    async def _handshake(
        self,
        stream: trio.abc.Stream,
        address: str,
        everyone: trio.CancelScope,
        ticket: _Ticket,
    ) -> None:
        special = self._session_for(stream) if self._session_for is not None else None
        session = special or self._make(self.guard.code if self.guard.active else None)
        keep = False
        why = ""
        try:
            with trio.fail_after(self.limits.deadline):
                leftover = None
                with ticket.scope:  # until the hello: its deadline, or dropped for room
                    await stream.send_all(session.data_to_send())  # our hello, at once
                    leftover = await self._until_authenticated(stream, session, ticket)
                if leftover is None:
                    raise _NoHello()
            if self._winner is not None:  # somebody else was quicker
                await _say_and_close(stream, wire.AbortMsg(reason=WON_REASON))
                return
            if leftover:  # for the link: read already, not processed yet
                session.receive_data(leftover)
            self._winner = Admitted(stream, session, address)
            keep = True
            everyone.cancel()
        except _Beaten:  # another connection (often this joiner's own, by another address)
            await _say_and_close(stream, wire.AbortMsg(reason=WON_REASON))
            keep = True  # closed already
            return
        except _NoHello:
            if ticket.evicted:
                why = "the host needed its place for a newer connection"
                self._dropped(address, "it had not said hello, and a newer connection needed room")
            else:
                why = f"no hello within {self.limits.hello_deadline:g}s"
                self._dropped(address, why)
        except WrongSecretError as exc:
            if ticket.reserved and exc.via == "code":
                ticket.reserved = False
                if self.guard.release(failed=True):
                    self._code_expired()
            self._dropped(address, str(exc))
        except trio.TooSlowError:
            why = f"no authentication within {self.limits.deadline:g}s"
            self._dropped(address, f"it did not authenticate within {self.limits.deadline:g}s")
        except (KoiKoiError, OSError, trio.BrokenResourceError) as exc:
            why = str(exc) or type(exc).__name__
            self._dropped(address, why)
        finally:
            if ticket.reserved:  # answered rightly, or never answered: the guess comes back
                self.guard.release(failed=False)
            if self._claim is ticket and not keep:  # the claimer failed: others may win
                self._claim = None
            self._forget(ticket)
            if not keep:
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await _flush_and_close(stream, session, why)

    async def _until_authenticated(
        self, stream: trio.abc.Stream, session: Session, ticket: _Ticket
    ) -> bytes:
        """Feed the session frame by frame until the joiner's auth has verified.

        Returns the bytes read past that frame (the link reads them next)."""
        buf = b""
        hello_seen = False
        while session.peer_key is None:
            payload, rest = wire.decode_frame(buf)  # raises on an impossible length
            if payload is None:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    raise TransportError("the connection closed before the joiner authenticated")
                buf += bytes(data)
                continue
            buf = rest
            session.receive_data(wire.encode_frame(payload))
            ev = session.next_event()
            out = session.data_to_send()
            if session.peer_key is not None:  # the joiner's auth verified: claim the win
                if self._claim is not None or self._winner is not None:
                    raise _Beaten()  # our auth (in ``out``) never goes out on this one
                self._claim = ticket
            if out:
                await stream.send_all(out)
            if isinstance(ev, ConnectionClosed):
                raise TransportError(ev.reason)
            if ev is not NEED_DATA:
                raise RemoteProtocolError("unexpected message from the joiner before its auth")
            if not hello_seen and session.connection_id is not None:
                hello_seen = True
                ticket.hello = True  # a valid hello: no longer the first to make room
                ticket.scope.deadline = math.inf
                if session.via == "code":
                    ticket.reserved = self.guard.reserve()
                if session.via == "code" and not ticket.reserved:
                    raise RemoteProtocolError(
                        "this code is no longer accepted (too many wrong guesses): ask the "
                        "host for a new code, or for the invite"
                    )
        return buf

    def _code_expired(self) -> None:
        code = self.guard.code
        self._notify(
            {
                "event": "code_expired",
                "code": str(code) if code is not None else None,
                "failed": self.guard.failed,
                "text": f"{self.guard.failed} wrong guesses of your code {code}: it is no "
                "longer accepted. Make a new code (host again), or give your friend the invite",
            }
        )

    def _dropped(self, address: str, why: str) -> None:
        self._notify({"event": "warning", "text": f"dropped a connection from {address}: {why}"})


async def _flush_and_close(stream: trio.abc.Stream, session: Session, why: str) -> None:
    """Say what the session still has to say (its plaintext abort; or ``why``, when the
    gate itself gave up on a session that did not fail), then close."""
    with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError, KoiKoiError):
        out = session.data_to_send()
        if session.error is None and why:
            abort = wire.AbortMsg(reason=why[: wire.MAX_REASON])
            out += wire.encode_frame(wire.encode_message(abort))
        if out:
            await stream.send_all(out)
    await trio.aclose_forcefully(stream)


async def _say_and_close(stream: trio.abc.Stream, msg: wire.Message) -> None:
    """One plaintext frame (``refuse`` or ``abort``), then close."""
    with (
        trio.move_on_after(2),
        suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
    ):
        await stream.send_all(wire.encode_frame(wire.encode_message(msg)))
    await trio.aclose_forcefully(stream)
