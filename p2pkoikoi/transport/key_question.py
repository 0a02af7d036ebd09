"""Who the other player is: the known-peers check of a link's handshake.

A separate object because the host's question about a changed key has its own
lifetime: asked once, before the deal, while the link processes nothing else.
The host's gate hands the link over once the joiner's auth has verified: its
name and key are known, while the joiner's person still reads the rules.  A
known name with a new key is asked about then (the table's question; headless
hosts decide in :meth:`KeyQuestion.admit`), and until the answer nothing more
is processed: the joiner's acceptance waits in the session's buffer, so no
commitment leaves and nobody sees a card.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

import trio

from p2pkoikoi.session import Goodbye, HandshakeComplete, ProtocolError, Role, State, fingerprint
from p2pkoikoi.transport.errors import ConfigError, IdentityChangedError
from p2pkoikoi.transport.identity import KnownPeers, PeerCheck, PeerStatus
from p2pkoikoi.transport.limits import KEY_QUESTION_SHARE

if TYPE_CHECKING:
    from p2pkoikoi.transport.match_link import NetworkLink


class KeyQuestion:
    """The known-peers check of one link (``known=None``: nobody is checked)."""

    def __init__(self, link: NetworkLink, known: KnownPeers | None, role: Role) -> None:
        self._link = link
        self._known = known
        #: the host asks about a changed key: nothing is processed meanwhile
        self.asking = False
        # only a host with a person to ask ever asks (decided here: the link processes per event)
        self._asked = known is None or known.ask is None or role is not Role.HOST

    def start(self) -> bool:
        """Ask now if a changed key needs asking about (True: processing pauses)."""
        if self._asked:
            return False
        check = self._question()
        if check is None:
            return False
        self.asking = True
        assert self._link._nursery is not None
        self._link._nursery.start_soon(self._ask, check)
        return True

    def _question(self) -> PeerCheck | None:
        """The host's question about a changed key, asked once, before the deal."""
        s = self._link.session
        known = self._known
        if s.state is not State.RULES or s.peer_name is None or s.peer_key is None:
            return None  # not yet: asked once the joiner's auth has verified
        self._asked = True
        if known is None or known.ask is None:
            return None
        check = known.check(s.peer_name, fingerprint(s.peer_key))
        return check if check.status is PeerStatus.CHANGED else None

    async def _ask(self, check: PeerCheck) -> None:
        link = self._link
        known = self._known
        assert known is not None and known.ask is not None and link.session.rules is not None
        ok = False
        # the joiner waits for our commitment a handshake step at most: answer before
        with trio.move_on_after(KEY_QUESTION_SHARE * link.timeouts.handshake):
            ok = await known.ask(check, link.session.rules)
        if link._stopped.is_set():
            return
        if not ok:
            with suppress(ProtocolError):
                link._write(link.session.send(Goodbye()))
            link._fail(
                IdentityChangedError(
                    f"{check.warning}: you did not accept the new key, so the match does "
                    "not start (no card was dealt)"
                )
            )
            return
        with suppress(ConfigError):
            known.remember(check.name, check.fingerprint)
        self.asking = False
        link._last_rx = trio.current_time()  # what arrived meanwhile is processed now
        link._process()

    def admit(self, ev: HandshakeComplete) -> bool:
        """The handshake named the other player: admit it (False: the link failed)."""
        if self._known is None:
            return True
        link = self._link
        try:
            check = self._known.admit(ev.peer_name, ev.peer_fingerprint)
        except IdentityChangedError as exc:  # before the deal: nobody has seen a card
            with suppress(ProtocolError):
                link._write(link.session.send(Goodbye()))
            link._fail(exc)
            return False
        except ConfigError as exc:  # known_peers cannot be written: play on, say so
            link._notify({"event": "warning", "text": str(exc)})
        else:
            if check.warning:
                link._notify({"event": "warning", "text": check.warning})
        return True
