"""The link's side of the handshake: step deadlines, the joiner's rules decision, who plays.

A separate object because the handshake has its own lifetime, before each
match of a link (the first in :func:`~p2pkoikoi.transport.link.lifetime.open_link`,
the next ones after a rematch): each step the session waits for runs under the
``trio.fail_after`` deadline that :func:`step_limit` names for it, and a host
that commits but never reveals forfeits (:class:`RevealTimeoutError`).  The
joiner's person decides about the host's rules in a task of its own while the
link keeps reading; the peer's name, key and the rules are taken over from
:class:`HandshakeComplete` and the key checked against the known peers
(:class:`~p2pkoikoi.transport.link.key_question.KeyQuestion`).

The handshake owns who plays: :attr:`HandshakeDriver.names`, :attr:`HandshakeDriver.rules`
and :attr:`HandshakeDriver.peer_fingerprint` (set from the session when it is
resumed, else by :meth:`HandshakeDriver.on_complete`).  It reads the session and
acts through :class:`LinkContext`, and waits on the link's :class:`Pulse`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from p2pkoikoi.engine import RuleSet
from p2pkoikoi.session import (
    AcceptRules,
    DeclineRules,
    HandshakeComplete,
    RulesProposed,
    Session,
    State,
    fingerprint,
)
from p2pkoikoi.transport.errors import DeclinedError, TransportError
from p2pkoikoi.transport.limits import step_limit
from p2pkoikoi.transport.link.context import LinkContext

DecideRules = Callable[[RulesProposed], Awaitable[bool]]


async def accept_decision(proposal: RulesProposed) -> bool:
    """The default decision: the host's rules are accepted."""
    return True


class HandshakeDriver:
    """The handshake of a link's matches (``decide_rules``: the joiner's person)."""

    rules: RuleSet  # agreed in the handshake (or taken from a resumed session)

    def __init__(
        self,
        session: Session,
        decide_rules: DecideRules,
        ctx: LinkContext,
        *,
        admit: Callable[[HandshakeComplete], bool],
    ) -> None:
        self._decide_rules = decide_rules
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._ctx = ctx
        self._admit = admit  # the known-peers check (False: failed)
        self._seat = seat = session.our_seat
        self.names = (session.name, "?") if seat == 0 else ("?", session.name)
        self.peer_fingerprint = ""
        if session.peer_name is not None and session.rules is not None:  # a resumed session
            self.rules = session.rules
            names = [session.name, session.name]
            names[1 - seat] = session.peer_name
            self.names = (names[0], names[1])
            assert session.peer_key is not None
            self.peer_fingerprint = fingerprint(session.peer_key)

    async def run(self) -> None:
        """Run until the match starts; each step under its own ``fail_after``."""
        ctx, pulse = self._ctx, self._pulse
        s = ctx.session()
        while not ctx.run().started.is_set():
            failed = ctx.error()
            if failed is not None:
                raise failed
            if pulse.is_stopped:
                raise TransportError("the connection closed during the handshake")
            step = s.waiting_for
            limit, error = step_limit(self._timeouts, step)
            try:
                with trio.fail_after(limit):
                    while (
                        s.waiting_for is step
                        and not ctx.run().started.is_set()
                        and not pulse.is_stopped
                    ):
                        await pulse.changed()
            except trio.TooSlowError:
                ctx.fail(error)
                raise error from None

    def on_rules(self, ev: RulesProposed) -> None:
        """The host proposes its rules: the joiner's person decides, in a task."""
        ctx = self._ctx
        ctx.notify(
            {
                "event": "rules_proposed",
                "peer_name": ev.peer_name,
                "peer_fingerprint": ev.peer_fingerprint,
                "rules_fingerprint": ev.fingerprint,
                "rounds": ev.rounds,
                "rules": ev.rules.to_dict(),
                "turn_limit": ev.turn_limit,
            }
        )
        nursery = ctx.nursery()
        assert nursery is not None
        nursery.start_soon(self._decide, ev)

    async def _decide(self, proposal: RulesProposed) -> None:
        ctx = self._ctx
        ok = await self._decide_rules(proposal)
        s = ctx.session()
        if self._pulse.is_stopped or s.state is not State.RULES:
            return
        if ok:
            ctx.write(s.send(AcceptRules()))
            ctx.process()
        else:
            ctx.write(s.send(DeclineRules("they chose Decline on the rules screen")))
            ctx.fail(DeclinedError("you declined the host's rules"))

    def on_complete(self, ev: HandshakeComplete) -> None:
        """Both sides proved who they are and agreed the rules: names, notes, known peers."""
        ctx = self._ctx
        s = ctx.session()
        self.rules = ev.rules
        self.peer_fingerprint = ev.peer_fingerprint
        names = [s.name, s.name]
        names[1 - self._seat] = ev.peer_name
        self.names = (names[0], names[1])
        ctx.notify(
            {
                "event": "handshake",
                "peer_name": ev.peer_name,
                "peer_fingerprint": ev.peer_fingerprint,
                "peer_role": s.role.other.value,
                "rules_fingerprint": ev.rules.fingerprint(),
                "rules": ev.rules.to_dict(),
                "turn_limit": s.turn_limit,
            }
        )
        if not self._admit(ev):
            return
        ctx.save_record()
