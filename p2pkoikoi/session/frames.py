"""Frames in: from the bytes read to the part that handles each message, and the error path.

Theory of operation
-------------------
:meth:`Session.receive_data <p2pkoikoi.session.session.Session.receive_data>`
buffers what the transport read (:func:`receive`: at most
:data:`~p2pkoikoi.session.states.MAX_BUFFER` unread bytes, and never a frame
whose header is already bad); :meth:`Session.next_event` takes whole frames off
the buffer one at a time (:func:`next_event`), hands the first (the peer's
plaintext ``hello``) to the handshake and every later one, once decrypted, to
the handler for its message type (:func:`handle_frame`, :data:`HANDLERS`: one
function in each part's module).  Events queued by a handler come out before
the next frame is read, so the session never decodes past an error: the first
:class:`ProtocolError` fails the session for good (:func:`fail`: an ``abort``
to the peer, plaintext when the peer may not share our keys yet).  It is
separate because it is the one way in for every byte, and the rules above hold
for all the parts at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from p2pkoikoi.session import (
    commit_reveal,
    forfeits,
    handshake,
    hidden_session,
    play,
    rematch_session,
    resume_session,
    side_channel,
    wire,
)
from p2pkoikoi.session.errors import (
    LocalProtocolError,
    ProtocolError,
    RefusedError,
    RemoteProtocolError,
    RulesMismatchError,
)
from p2pkoikoi.session.events import NEED_DATA, ConnectionClosed, Event, NeedData
from p2pkoikoi.session.states import MAX_BUFFER, State, sanitize

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def receive(s: Session, data: bytes) -> None:
    """Bytes read from the peer; ``b""`` means the stream ended."""
    if s._eof:
        if data:
            raise LocalProtocolError("receive_data after end of stream")
        return
    if not data:
        s._eof = True
        return
    if s._state in (State.ERROR, State.CLOSED) or s._flooded:
        return  # nothing more is read
    s._in += data
    if len(s._in) >= wire.HEADER:
        try:
            wire.frame_length(bytes(s._in[: wire.HEADER]))
        except RemoteProtocolError:
            del s._in[wire.HEADER :]  # never buffer a frame we will reject
    if len(s._in) > MAX_BUFFER:
        # More unread bytes than a transport that drains events after each read
        # ever holds: a flood, however it is framed.  Keep none of it, and let
        # next_event refuse the peer (after the events already decoded).
        s._in.clear()
        s._flooded = True


def next_event(s: Session) -> Event | NeedData:
    while True:
        if s._events:
            return s._events.popleft()
        if s._state is State.CLOSED:
            return NEED_DATA
        if s._flooded:
            raise RemoteProtocolError("the peer sent too much data at once")
        if len(s._in) >= wire.HEADER:
            length = wire.frame_length(bytes(s._in[: wire.HEADER]))
            if len(s._in) >= wire.HEADER + length:
                payload = bytes(s._in[wire.HEADER : wire.HEADER + length])
                del s._in[: wire.HEADER + length]
                handle_frame(s, payload)
                continue
        if s._eof:
            if s._in:
                raise RemoteProtocolError("connection closed in the middle of a frame")
            clean = s._state is State.DONE
            forfeits.note_forfeit(s)
            s._state = State.CLOSED
            reason = "the connection ended" if clean else "the connection ended early"
            return ConnectionClosed(clean=clean, reason=reason)
        return NEED_DATA


# ------------------------------------------------------------------ frames
def handle_frame(s: Session, payload: bytes) -> None:
    if s._state is State.HELLO:
        msg = wire.decode_message(payload)
        if isinstance(msg, wire.RefuseMsg):
            reason = sanitize(msg.reason) or "no reason given"
            s._state = State.CLOSED
            raise RefusedError(f"the other side refused the connection: {reason}")
        if isinstance(msg, wire.AbortMsg):
            side_channel.on_abort(s, msg)
        if not isinstance(msg, wire.HelloMsg):
            raise RemoteProtocolError(
                f"bad message from peer: expected hello, got {wire.TYPE_NAMES[type(msg)]}"
            )
        handshake.on_hello(s, msg, payload)
        return
    if s._recv is None:  # we have not sent... (cannot happen: keys come with the hello)
        raise RemoteProtocolError("bad message from peer: nothing may follow the hello yet")
    if not s._confirmed:
        msg = handshake.first_frame(s, payload)
    else:
        msg = wire.decode_message(s._recv.open(payload))
    handler = HANDLERS.get(type(msg))
    if handler is None:  # a second hello, a refuse
        raise RemoteProtocolError(f"bad message from peer: unexpected {wire.TYPE_NAMES[type(msg)]}")
    handler(s, msg)


def fail(s: Session, exc: ProtocolError) -> None:
    if s._error is not None:
        return
    s._error = exc
    if (
        isinstance(exc, RemoteProtocolError)
        and not isinstance(exc, RulesMismatchError)
        and s._state is not State.CLOSED
    ):
        abort = wire.AbortMsg(reason=str(exc)[: wire.MAX_REASON])
        if s._send is not None and s._confirmed:
            s._queue(abort)
        else:  # the peer may not share our keys yet: say it in plaintext
            s._out += wire.encode_frame(wire.encode_message(abort))
    if s.forfeit is None:
        forfeits.note_forfeit(s)
    s._state = State.ERROR
    s._in.clear()


HANDLERS: Final[dict[type, Callable[[Session, Any], None]]] = {
    wire.AuthMsg: handshake.on_auth,
    wire.AcceptMsg: handshake.on_accept,
    wire.DeclineMsg: handshake.on_decline,
    wire.CommitMsg: commit_reveal.on_commit,
    wire.ValueMsg: commit_reveal.on_value,
    wire.RevealMsg: commit_reveal.on_reveal,
    wire.StartMsg: commit_reveal.on_start,
    wire.ActionMsg: play.on_action,
    wire.CardMsg: hidden_session.on_card,
    wire.ResignMsg: play.on_resign,
    wire.OverMsg: play.on_over,
    wire.PingMsg: side_channel.on_ping,
    wire.PongMsg: side_channel.on_pong,
    wire.ChatMsg: side_channel.on_chat,
    wire.AbortMsg: side_channel.on_abort,
    wire.ByeMsg: side_channel.on_bye,
    wire.ResumeMsg: resume_session.on_resume,
    wire.AgainMsg: rematch_session.on_again,
    wire.NoAgainMsg: rematch_session.on_no_again,
}
