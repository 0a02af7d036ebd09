"""The link's side of the handshake: step deadlines, the joiner's rules decision, who plays.

A separate object because the handshake has its own lifetime, before each
match of a link (the first in :func:`~p2pkoikoi.transport.match_link.open_link`,
the next ones after a rematch): each step the session waits for runs under the
``trio.fail_after`` deadline that :func:`step_limit` names for it, and a host
that commits but never reveals forfeits (:class:`RevealTimeoutError`).  The
joiner's person decides about the host's rules in a task of its own while the
link keeps reading; the peer's name, key and the rules are taken over from
:class:`HandshakeComplete` and the key checked against the known peers
(:class:`~p2pkoikoi.transport.key_question.KeyQuestion`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from p2pkoikoi.session import AcceptRules, DeclineRules, HandshakeComplete, RulesProposed, State
from p2pkoikoi.transport.errors import DeclinedError, TransportError
from p2pkoikoi.transport.limits import step_limit

if TYPE_CHECKING:
    from p2pkoikoi.transport.match_link import NetworkLink

DecideRules = Callable[[RulesProposed], Awaitable[bool]]


async def accept_decision(proposal: RulesProposed) -> bool:
    """The default decision: the host's rules are accepted."""
    return True


class Handshake:
    """The handshake of a link's matches (``decide_rules``: the joiner's person)."""

    def __init__(self, link: NetworkLink, decide_rules: DecideRules) -> None:
        self._link = link
        self._decide_rules = decide_rules

    async def run(self) -> None:
        """Run until the match starts; each step under its own ``fail_after``."""
        link = self._link
        s = link.session
        while not link._started.is_set():
            if link.error is not None:
                raise link.error
            if link._stopped.is_set():
                raise TransportError("the connection closed during the handshake")
            step = s.waiting_for
            limit, error = step_limit(link.timeouts, step)
            try:
                with trio.fail_after(limit):
                    while (
                        s.waiting_for is step
                        and not link._started.is_set()
                        and not link._stopped.is_set()
                    ):
                        await link._progress.wait()
            except trio.TooSlowError:
                link._fail(error)
                raise error from None

    def on_rules(self, ev: RulesProposed) -> None:
        """The host proposes its rules: the joiner's person decides, in a task."""
        link = self._link
        link._notify(
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
        assert link._nursery is not None
        link._nursery.start_soon(self._decide, ev)

    async def _decide(self, proposal: RulesProposed) -> None:
        link = self._link
        ok = await self._decide_rules(proposal)
        if link._stopped.is_set() or link.session.state is not State.RULES:
            return
        if ok:
            link._write(link.session.send(AcceptRules()))
            link._process()
        else:
            link._write(link.session.send(DeclineRules("they chose Decline on the rules screen")))
            link._fail(DeclinedError("you declined the host's rules"))

    def on_complete(self, ev: HandshakeComplete) -> None:
        """Both sides proved who they are and agreed the rules: names, notes, known peers."""
        link = self._link
        s = link.session
        link.rules = ev.rules
        link.peer_fingerprint = ev.peer_fingerprint
        names = [s.name, s.name]
        names[1 - link.seat] = ev.peer_name
        link.names = (names[0], names[1])
        link._notify(
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
        if not link._keys.admit(ev):
            return
        link._save_record()
