"""The side channel: ping, pong, chat, and the peer's ``abort`` or ``bye`` (section 10).

Theory of operation
-------------------
These messages may come in any phase once the keys exist and change nothing of
the match: a ping is answered by the transport (it measures the round trip),
chat is shown after it is cleaned of control characters, and ``abort`` or
``bye`` end the connection (an end that is the host's forfeit is noted as
such).  No state check here: they arrive only through the keyed channel (after
the hello), and nothing is decoded after an error or a close (``_next_event``
stops first).  It is separate because none of it touches the match state; the
functions are the :class:`~p2pkoikoi.session.session.Session`'s own methods
(``s`` is the session), kept in a module of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkoikoi.session import forfeits, wire
from p2pkoikoi.session.errors import LocalProtocolError, RemoteProtocolError
from p2pkoikoi.session.events import ChatReceived, ConnectionClosed, Ping, Pong
from p2pkoikoi.session.states import State, sanitize

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def on_ping(s: Session, msg: wire.PingMsg) -> None:
    s._events.append(Ping(msg.nonce))


def on_pong(s: Session, msg: wire.PongMsg) -> None:
    s._events.append(Pong(msg.nonce))


def on_chat(s: Session, msg: wire.ChatMsg) -> None:
    text = sanitize(msg.text).strip()
    if text:
        s._events.append(ChatReceived(text))


def on_abort(s: Session, msg: wire.AbortMsg) -> None:
    reason = sanitize(msg.reason) or "no reason given"
    forfeits.note_forfeit(s)
    s._state = State.CLOSED  # no abort back
    raise RemoteProtocolError(f"the other player's program stopped: {reason}")


def on_bye(s: Session, msg: wire.ByeMsg) -> None:
    forfeits.note_forfeit(s)
    clean = s._state is State.DONE
    s._state = State.CLOSED
    reason = "the other player left" + ("" if clean else " before the match ended")
    s._events.append(ConnectionClosed(clean=clean, reason=reason))


def send_chat(s: Session, text: str) -> None:
    if not s._sent_first:
        raise LocalProtocolError("cannot chat before the handshake")
    clean = sanitize(text).strip()
    if not clean:
        raise LocalProtocolError("empty chat message")
    if len(clean) > wire.MAX_CHAT:
        raise LocalProtocolError(f"chat messages are at most {wire.MAX_CHAT} characters")
    s._queue(wire.ChatMsg(text=clean))


def send_ping(s: Session, event: Ping | Pong) -> None:
    if not s._sent_first:
        raise LocalProtocolError("cannot ping before the handshake")
    if len(event.nonce) > wire.MAX_NONCE:
        raise LocalProtocolError(f"a ping nonce is at most {wire.MAX_NONCE} bytes")
    cls = wire.PingMsg if isinstance(event, Ping) else wire.PongMsg
    s._queue(cls(nonce=event.nonce))
