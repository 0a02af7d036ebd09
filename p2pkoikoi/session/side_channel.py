"""The side channel: ping, pong, chat, and the peer's ``abort`` or ``bye`` (section 10).

Theory of operation
-------------------
These messages may come in any phase once the keys exist and change nothing of
the match: a ping is answered by the transport (it measures the round trip),
chat is shown after it is cleaned of control characters, and ``abort`` or
``bye`` end the connection (an end that is the host's forfeit is noted as
such, through the ``note_forfeit`` the session hands in).  No state check
here: they arrive only through the keyed channel (after the hello), and
nothing is decoded after an error or a close (the session stops first).  It is
separate because none of it touches the match state: :class:`SideChannel`
holds no state of its own, only the phase, the outbox and the event queue.
"""

from __future__ import annotations

from collections.abc import Callable

import p2pkoikoi.session.wire as wire
from p2pkoikoi.session.errors import LocalProtocolError, RemoteProtocolError
from p2pkoikoi.session.events import ChatReceived, ConnectionClosed, Ping, Pong
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.states import State, sanitize


class SideChannel(Part):
    """Ping, pong, chat, abort and bye, in and out."""

    __slots__ = ("_emit", "_note_forfeit", "_outbox", "_phase", "_queue")

    def __init__(
        self,
        ctx: PartContext,
        note_forfeit: Callable[[], None],
    ) -> None:
        super().__init__(ctx)
        self._note_forfeit = note_forfeit

    def __repr__(self) -> str:
        return f"SideChannel({self._phase!r})"

    def on_ping(self, msg: wire.PingMsg) -> None:
        self._emit(Ping(msg.nonce))

    def on_pong(self, msg: wire.PongMsg) -> None:
        self._emit(Pong(msg.nonce))

    def on_chat(self, msg: wire.ChatMsg) -> None:
        text = sanitize(msg.text).strip()
        if text:
            self._emit(ChatReceived(text))

    def on_abort(self, msg: wire.AbortMsg) -> None:
        reason = sanitize(msg.reason) or "no reason given"
        self._note_forfeit()
        self._phase.go(State.CLOSED)  # no abort back
        raise RemoteProtocolError(f"the other player's program stopped: {reason}")

    def on_bye(self, msg: wire.ByeMsg) -> None:
        self._note_forfeit()
        clean = self._phase.state is State.DONE
        self._phase.go(State.CLOSED)
        reason = "the other player left" + ("" if clean else " before the match ended")
        self._emit(ConnectionClosed(clean=clean, reason=reason))

    def send_chat(self, text: str) -> None:
        if not self._outbox.sent_first:
            raise LocalProtocolError("cannot chat before the handshake")
        clean = sanitize(text).strip()
        if not clean:
            raise LocalProtocolError("empty chat message")
        if len(clean) > wire.MAX_CHAT:
            raise LocalProtocolError(f"chat messages are at most {wire.MAX_CHAT} characters")
        self._queue(wire.ChatMsg(text=clean))

    def send_ping(self, event: Ping | Pong) -> None:
        if not self._outbox.sent_first:
            raise LocalProtocolError("cannot ping before the handshake")
        if len(event.nonce) > wire.MAX_NONCE:
            raise LocalProtocolError(f"a ping nonce is at most {wire.MAX_NONCE} bytes")
        cls = wire.PingMsg if isinstance(event, Ping) else wire.PongMsg
        self._queue(cls(nonce=event.nonce))
