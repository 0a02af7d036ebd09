"""Who the other player is: the known-peers check of a link's handshake.

A separate object because the host's question about a changed key has its own
lifetime: asked once, before the deal, while the link processes nothing else.
The host's gate hands the link over once the joiner's auth has verified: its
name and key are known, while the joiner's person still reads the rules.  A
known name with a new key is asked about then (the table's question; headless
hosts decide in :meth:`KeyQuestion.admit`), and until the answer nothing more
is processed: the joiner's acceptance waits in the session's buffer, so no
commitment leaves and nobody sees a card.

The question owns whether it is asking (:attr:`KeyQuestion.asking`) and
whether it asked; it reads the session and acts through :class:`LinkContext`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

import trio

from p2pkoikoi.session import (
    Goodbye,
    HandshakeComplete,
    ProtocolError,
    Role,
    State,
    fingerprint,
)
from p2pkoikoi.transport.errors import ConfigError, IdentityChangedError
from p2pkoikoi.transport.limits import KEY_QUESTION_SHARE
from p2pkoikoi.transport.link.context import LinkContext
from p2pkoikoi.transport.store.identity import KnownPeers, PeerCheck, PeerStatus


def refused_identity(role: Role) -> str:
    """What the other player reads when ``role`` refuses its identity (no forfeit: no
    card was dealt, no commitment sent)."""
    return (
        f"the {role.value} does not accept your identity: it knows your name with another"
        f" key (if you have a new key, the {role.value} can play with --accept-new-key)"
    )


class KeyQuestion:
    """The known-peers check of one link (``known=None``: nobody is checked)."""

    def __init__(
        self,
        known: KnownPeers | None,
        role: Role,
        ctx: LinkContext,
        *,
        resume: Callable[[], None],
    ) -> None:
        self._timeouts = ctx.timeouts
        self._pulse = ctx.pulse
        self._ctx = ctx
        self._resume = resume  # answered yes: what arrived meanwhile is processed now
        self._known = known
        #: the host asks about a changed key: nothing is processed meanwhile
        self.asking = False
        # only a host ever asks (decided here: the link processes per event); a headless
        # host decides at the same moment, before any commitment
        self._asked = known is None or role is not Role.HOST

    def start(self) -> bool:
        """Ask now if a changed key needs asking about (True: processing pauses)."""
        if self._asked:
            return False
        check = self._question()
        if check is None:
            return False
        assert self._known is not None
        if self._known.ask is None:  # headless: nobody to ask
            if self._known.accept_new_key:
                return False  # admitted with a warning at the handshake's end
            self._refuse(check)
            return True
        self.asking = True
        nursery = self._ctx.nursery()
        assert nursery is not None
        nursery.start_soon(self._ask, check)
        return True

    def _question(self) -> PeerCheck | None:
        """The host's question about a changed key, asked once, before the deal."""
        s = self._ctx.session()
        known = self._known
        if s.state is not State.RULES or s.peer_name is None or s.peer_key is None:
            return None  # not yet: asked once the joiner's auth has verified
        self._asked = True
        if known is None:
            return None
        check = known.check(s.peer_name, fingerprint(s.peer_key))
        return check if check.status is PeerStatus.CHANGED else None

    async def _ask(self, check: PeerCheck) -> None:
        ctx = self._ctx
        known = self._known
        rules = ctx.session().rules
        assert known is not None and known.ask is not None and rules is not None
        ok = False
        # the joiner waits for our commitment a handshake step at most: answer before
        with trio.move_on_after(KEY_QUESTION_SHARE * self._timeouts.handshake):
            ok = await known.ask(check, rules)
        if self._pulse.is_stopped:
            return
        if not ok:
            with suppress(ProtocolError):
                ctx.write(ctx.session().send(Goodbye()))
            ctx.fail(
                IdentityChangedError(
                    f"{check.warning}: you did not accept the new key, so the match does "
                    "not start (no card was dealt)"
                )
            )
            return
        with suppress(ConfigError):
            known.remember(check.name, check.fingerprint)
        self.asking = False
        self._resume()  # what arrived meanwhile is processed now

    def _refuse(self, check: PeerCheck) -> None:
        """A headless host refuses a changed key: before the commitment, so this is no
        forfeit; the joiner reads why (an abort with the reason, not "left")."""
        ctx = self._ctx
        with suppress(ProtocolError):
            ctx.write(ctx.session().send(Goodbye(refused_identity(Role.HOST))))
        ctx.fail(
            IdentityChangedError(
                f"{check.warning}: not playing (if they really have a new key, play again "
                "with --accept-new-key)"
            )
        )

    def admit(self, ev: HandshakeComplete) -> bool:
        """The handshake named the other player: admit it (False: the link failed)."""
        if self._known is None:
            return True
        ctx = self._ctx
        try:
            check = self._known.admit(ev.peer_name, ev.peer_fingerprint)
        except IdentityChangedError as exc:  # before the deal: nobody has seen a card
            with suppress(ProtocolError):
                s = ctx.session()
                ctx.write(s.send(Goodbye(refused_identity(s.role))))
            ctx.fail(exc)
            return False
        except ConfigError as exc:  # known_peers cannot be written: play on, say so
            ctx.notify({"event": "warning", "text": str(exc)})
        else:
            if check.warning:
                ctx.notify({"event": "warning", "text": check.warning})
            elif check.status is PeerStatus.NEW:
                # a name never seen: its fingerprint beside it, so a look-alike of a
                # friend's name shows a fingerprint that is not the friend's
                ctx.notify(
                    {
                        "event": "new_peer",
                        "peer_name": check.name,
                        "peer_fingerprint": check.fingerprint,
                        "text": f"{check.name} ({check.fingerprint}) is new to you: compare"
                        " the fingerprint with them once",
                    }
                )
        return True
