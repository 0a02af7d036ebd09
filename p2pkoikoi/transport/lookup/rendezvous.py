"""A short code across the internet: the DHT rendezvous (protocol/dht.md) on trio.

The host runs :func:`host_rendezvous` beside its listener while it waits: it
announces one :class:`~p2pkoikoi.session.codes.rendezvous.HostAttempt` at its
number, polls the attempt's inbox, answers the one item it finds (the invite,
sealed, or a counted refusal) and announces a fresh attempt.  The joiner runs
:func:`find_invite`: it reads the announcements at the code's number, seals
its payload to the first, waits for the reply and returns the host's invite,
with which it connects exactly as with a pasted one.

Wrong guesses count in the host's :class:`~p2pkoikoi.transport.open.gate.CodeGuard`,
the same three as over TCP on the LAN.  Times come from the
:class:`~p2pkoikoi.transport.lookup.dht.DhtConfig`; seconds since the epoch are the
items' ``seq`` (an announcement older than
:data:`~p2pkoikoi.session.codes.rendezvous.LIVE_FOR` is stale).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import trio

from p2pkoikoi.session.codes import rendezvous as rv
from p2pkoikoi.session.codes.code import ShortCode
from p2pkoikoi.session.errors import RemoteProtocolError
from p2pkoikoi.transport.errors import ConnectError
from p2pkoikoi.transport.link.notes import Notify
from p2pkoikoi.transport.lookup import krpc
from p2pkoikoi.transport.lookup.dht import DhtClient
from p2pkoikoi.transport.open.gate import CodeGuard


@dataclass(frozen=True, slots=True)
class Pace:
    """How often the two sides look at the DHT (seconds)."""

    poll: float = 1.0  #: the host's inbox, the joiner's reply
    republish: float = 30.0  #: the host's announcement, the joiner's inbox item (x 1/6)
    reply_wait: float = 20.0  #: a joiner's wait for the reply to one attempt
    answer_wait: float = 600.0  #: a host's wait for an accepted joiner's answer


#: how many numbers a host tries in each range before it grows the number
PROBES_PER_RANGE: Final = 4
#: the ranges a host's number comes from, in order (protocol/dht.md: the odds)
NUMBER_RANGES: Final = ((1, 99), (100, 999), (1000, 9999))


def item(pub: rv.Publish, seq: int) -> krpc.MutableItem:
    """The BEP 44 item of a rendezvous payload (``v`` is the payload as a byte string)."""
    return krpc.sign_item(pub.seed, pub.salt, seq, pub.payload)


def _now() -> int:
    return int(time.time())


async def live_announcements(dht: DhtClient, number: int) -> list[rv.Announcement]:
    """The announcements at ``number`` that say a host waits now, highest ``seq`` first."""
    out: list[rv.Announcement] = []
    for it in await dht.get(rv.PUBLIC_KEY, rv.announce_salt(number)):
        payload = it.decoded()
        if not isinstance(payload, bytes) or not rv.live(payload, it.seq, time.time()):
            continue
        try:
            ann = rv.parse_announcement(payload)
        except rv.RendezvousError:
            continue
        if ann is not None and ann not in out:
            out.append(ann)
    return out


async def choose_number(dht: DhtClient, bound: float = 4.0) -> int:
    """A number no host announces now: tried at random in 1..99, and only when
    :data:`PROBES_PER_RANGE` of those are taken, in 100..999, then 1000..9999.
    Within ``bound`` seconds: a DHT that does not answer leaves the last number tried."""
    n = 1 + secrets.randbelow(99)
    with trio.move_on_after(bound):
        for lo, hi in NUMBER_RANGES:
            for _ in range(PROBES_PER_RANGE):
                n = lo + secrets.randbelow(hi - lo + 1)
                if not await live_announcements(dht, n):
                    return n
    return n


AnswerSink = Callable[[str], None]


async def host_rendezvous(
    dht: DhtClient,
    code: ShortCode,
    invite: str,
    guard: CodeGuard,
    notify: Notify,
    pace: Pace | None = None,
    on_answer: AnswerSink | None = None,
) -> None:
    """Announce ``code`` and answer joiners until cancelled or the code is used up;
    the nameplate is left closed at the end (bounded, shielded).  A joiner that
    opened its reply may send its answer (the second round): ``on_answer`` gets it,
    as a pasted one would be taken."""
    pace = pace or Pace()
    seq = _now()
    salt = rv.announce_salt(code.number)

    async def next_seq() -> int:
        # above whatever holds the number now (a colliding host, a vandal, our last one)
        held = [it.seq for it in await dht.get(rv.PUBLIC_KEY, salt)]
        return max([seq + 1, _now(), *(s + 1 for s in held if s < 2**63 - 1)])

    async def answers(accepted: rv.Accepted) -> None:
        with trio.move_on_after(pace.answer_wait):
            while True:
                await trio.sleep(pace.poll)
                for it in await dht.get(rv.PUBLIC_KEY, accepted.answer_salt):
                    payload = it.decoded()
                    text = accepted.open_answer(payload) if isinstance(payload, bytes) else None
                    if text is not None:
                        notify({"event": "dht_answer", "answer": text})
                        if on_answer is not None:
                            on_answer(text)
                        return

    try:
        async with trio.open_nursery() as nursery:
            while guard.active:
                attempt = rv.HostAttempt(code, os.urandom(64))
                seq = await next_seq()
                stored = await dht.put(item(attempt.announce(), seq))
                notify({"event": "dht_announced", "number": code.number, "nodes": stored})
                if not stored:  # no node took it (offline?): quietly try again later
                    await trio.sleep(pace.republish)
                    continue
                result = await _one_attempt(dht, attempt, invite, guard, pace, next_seq)
                if isinstance(result, rv.Refused):
                    await dht.put(item(result.reply, 1))
                    notify(
                        {
                            "event": "warning",
                            "text": "a wrong guess of the code came through the DHT "
                            f"({guard.failed} of {guard.limit})",
                        }
                    )
                    if result.expired:
                        notify(
                            {
                                "event": "code_expired",
                                "code": str(code),
                                "failed": guard.failed,
                                "text": f"{guard.failed} wrong guesses of your code {code}: it "
                                "is no longer accepted. Make a new code (host again), or give "
                                "your friend the invite",
                            }
                        )
                elif isinstance(result, rv.Accepted):
                    try:
                        reply = item(result.reply, 1)
                    except ValueError:  # an invite too long for one DHT item
                        notify(
                            {
                                "event": "warning",
                                "text": "the invite is too long to go through the DHT: "
                                "give your friend the invite instead of the code",
                            }
                        )
                        nursery.cancel_scope.cancel()
                        return
                    await dht.put(reply)
                    notify({"event": "dht_answered", "number": code.number})
                    nursery.start_soon(answers, result)
            nursery.cancel_scope.cancel()
    finally:
        with trio.move_on_after(dht.config.lookup_timeout) as cs:
            cs.shield = True
            await dht.put(item(rv.Publish(rv.PUBLIC_SEED, salt, rv.closed()), await next_seq()))


async def _one_attempt(
    dht: DhtClient,
    attempt: rv.HostAttempt,
    invite: str,
    guard: CodeGuard,
    pace: Pace,
    next_seq: Callable[[], Awaitable[int]],
) -> rv.Accepted | rv.Refused | None:
    """Wait for the one inbox item of ``attempt`` and answer it (counted in ``guard``);
    None when the attempt ended without a guess (a malformed point) or the code died."""
    announced = trio.current_time()
    seen: set[bytes] = set()
    while guard.active:
        await trio.sleep(pace.poll)
        if trio.current_time() - announced >= pace.republish:
            await dht.put(item(attempt.announce(), await next_seq()))
            announced = trio.current_time()
        # the value most nodes hold first: one lying node does not get ahead
        for it in await dht.get(rv.PUBLIC_KEY, attempt.inbox_salt):
            payload = it.decoded()
            if not isinstance(payload, bytes) or payload in seen:
                continue
            seen.add(payload)
            if not guard.reserve():
                return None
            result = attempt.answer(payload, invite, guard.failed)
            guard.release(failed=isinstance(result, rv.Refused))
            if result is not None or attempt.used:
                return result
    return None


@dataclass
class Found:
    """What the DHT rendezvous gave a joiner: the host's invite, and the way to send
    it the answer (the second round) if the invite's addresses do not reach it."""

    invite: str
    attempt: rv.JoinerAttempt
    dht: DhtClient

    async def send_answer(self, text: str) -> int:
        """Put the sealed answer (again: the host polls for it); the nodes that took it."""
        return await self.dht.put(item(self.attempt.answer(text), _now()))


async def find_invite(
    dht: DhtClient,
    code: ShortCode,
    notify: Notify,
    pace: Pace | None = None,
    ready: Callable[[], Awaitable[None]] | None = None,
) -> Found:
    """The host's invite, through the DHT rendezvous at ``code``'s number; one line
    (:class:`ConnectError` or the host's refusal) when there is none.  ``ready`` is
    awaited after the announcements are read and before anything is put (what
    spends one of the host's attempts): the LAN's turn first."""
    pace = pace or Pace()
    notify({"event": "searching", "text": f"looking for the host of code {code.number} on the DHT"})
    tried: list[rv.Announcement] = []
    while len(tried) < rv.JOINER_ATTEMPTS:
        # read again each time: after a lost attempt the host announces a fresh one
        fresh = [a for a in await live_announcements(dht, code.number) if a not in tried]
        if not fresh:
            if tried:
                break
            raise ConnectError(
                f"no host is waiting with code {code.number}: neither on this network nor "
                "on the DHT (check the number; or ask the host for the koi2- invite)"
            )
        if ready is not None and not tried:
            await ready()
        ann = fresh[0]
        tried.append(ann)
        try:
            attempt = rv.JoinerAttempt(code, ann, os.urandom(32))
        except RemoteProtocolError:
            continue  # not a point: a forgery; try the next one
        invite = await _await_reply(dht, attempt, pace, code.number)
        if invite is not None:
            notify({"event": "dht_found", "number": code.number})
            return Found(invite, attempt, dht)
    raise ConnectError(
        f"the host of code {code.number} did not answer through the DHT ({len(tried)} "
        f"attempt{'s' if len(tried) > 1 else ''}): check the code, try again, or ask for the "
        "koi2- invite"
    )


async def _await_reply(
    dht: DhtClient, attempt: rv.JoinerAttempt, pace: Pace, number: int
) -> str | None:
    """Put the inbox item (again now and then) and wait for the reply: the invite, or
    None when none came in time, the announcement we answered is gone (the host
    answered someone else's item and announced afresh), or the reply was sealed
    under another key (an impostor announced); a refusal raises
    :class:`~p2pkoikoi.session.codes.rendezvous.CodeRefused`."""

    async def reply() -> str | None:
        """The invite; "": not for us (stop); None: nothing yet."""
        for it in await dht.get(attempt.reply_key, attempt.reply_salt):
            payload = it.decoded()
            if not isinstance(payload, bytes):
                continue
            invite = attempt.open_reply(payload)
            if invite is not None:
                return invite
            if payload.startswith(rv.SEALED):
                return ""  # signed by the announcement's key, sealed under another
        return None

    seq = _now()
    await dht.put(item(attempt.inbox, seq))
    started = put_at = trio.current_time()
    polls = 0
    while trio.current_time() - started < pace.reply_wait:
        await trio.sleep(pace.poll)
        got = await reply()
        if got is not None:
            return got or None
        polls += 1
        if polls % 3 == 0:
            live = await live_announcements(dht, number)
            # the host announced afresh: it answered another item, or ours just now.
            # Nothing found proves nothing: a lookup on a busy DHT can come back empty
            # (that ended a good attempt under load), and a closed code ends the wait anyway
            if live and attempt.announcement not in live:
                got = await reply()
                return got or None
        if trio.current_time() - put_at >= pace.republish / 6:
            seq = max(seq + 1, _now())
            await dht.put(item(attempt.inbox, seq))
            put_at = trio.current_time()
    return None
