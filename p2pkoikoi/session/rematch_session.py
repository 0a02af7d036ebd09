"""The rematch: another match on the same connection (protocol/README.md section 13).

Theory of operation
-------------------
Once both players signed the result (``DONE``), either side may offer the next
match (``again``: :func:`send_again`, :func:`on_again`); the other accepts with
its own ``again`` or declines (``no_again``: :func:`send_no_again`,
:func:`on_no_again`).  Offers may cross: once a side has both sent and received
``again``, :func:`begin_rematch` resets the per-match state and runs the
commit-reveal (:mod:`p2pkoikoi.session.commit_reveal`) again on the same keys,
with a transcript that starts from the session id, the match number and the
previous match's final transcript, so each match has a record of its own that
cannot be spliced into another.  It is separate because it is the one path
that takes a finished session back to an earlier phase, and what it resets
must be read in one place; the functions are the
:class:`~p2pkoikoi.session.session.Session`'s own methods (``s`` is the
session), kept in a module of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkoikoi.session import commit_reveal, crypto, wire
from p2pkoikoi.session.errors import LocalProtocolError, RemoteProtocolError
from p2pkoikoi.session.events import (
    DeclineRematch,
    OfferRematch,
    RematchDeclined,
    RematchOffered,
    RematchStarted,
)
from p2pkoikoi.session.states import Role, State, sanitize

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def on_again(s: Session, msg: wire.AgainMsg) -> None:
    if s._state is not State.DONE or s._again_peer:
        raise s._unexpected("again")
    assert s._result is not None
    if msg.n != s.match_number + 1:
        raise RemoteProtocolError(
            f"the other player offers match {msg.n} of this connection; the next is "
            f"{s.match_number + 1}"
        )
    if msg.tx != s._result.transcript_hash:
        raise RemoteProtocolError(
            "the other player's rematch offer follows another match (final transcripts differ)"
        )
    s._again_peer = True
    if s._again_value is not None:  # our offer, answered (or crossed): play
        begin_rematch(s)
    else:
        s._events.append(RematchOffered(msg.n))


def on_no_again(s: Session, msg: wire.NoAgainMsg) -> None:
    if s._state is not State.DONE or s._again_value is None:
        raise s._unexpected("no_again")
    s._again_value = None
    reason = sanitize(msg.reason).strip() or "no reason given"
    s._events.append(RematchDeclined(reason))


def send_again(s: Session, event: OfferRematch) -> None:
    if s._state is not State.DONE:
        raise LocalProtocolError("a rematch can be offered once both players signed the result")
    if s._again_value is not None:
        raise LocalProtocolError("the rematch is offered already: waiting for the answer")
    if len(event.entropy) < 32:
        raise LocalProtocolError("a rematch needs 32 random bytes")
    assert s._result is not None
    s._again_value = bytes(event.entropy[:32])
    s._queue(wire.AgainMsg(n=s.match_number + 1, tx=s._result.transcript_hash))
    if s._again_peer:
        begin_rematch(s)


def send_no_again(s: Session, event: DeclineRematch) -> None:
    if s._state is not State.DONE or not s._again_peer:
        raise LocalProtocolError("there is no rematch offer to decline")
    s._again_peer = False
    reason = sanitize(event.reason)[: wire.MAX_REASON] or "declined"
    s._queue(wire.NoAgainMsg(reason=reason))


def begin_rematch(s: Session) -> None:
    """Both want the next match: a fresh commit-reveal on the same keys, the same
    players in the same roles, the same rules; a new transcript chained to the
    last one (so each match has its own record, unspliceable)."""
    assert s._result is not None and s._again_value is not None
    assert s.session_id is not None and s.peer_name is not None
    previous = s._result.transcript_hash
    s.match_number += 1
    s._previous = previous
    s._my_value, s._again_value, s._again_peer = s._again_value, None, False
    s._start_sigs = {}
    s._commitment = s._commit_sig = None
    s._host_value = s._joiner_value = s.seed = None
    s._match = None
    s._seq = 0
    s._actions = []
    s._final_sigs = {}
    s._result = None
    s.forfeit = None
    s.missing = None
    s.last_local_events = ()
    s._tx_at, s._hash_at = [], []
    host = s.role is Role.HOST
    names = (s.name, s.peer_name) if host else (s.peer_name, s.name)
    assert s.peer_key is not None
    keys = (s._pub, s.peer_key) if host else (s.peer_key, s._pub)
    assert s.rules is not None
    t = crypto.rematch_start(s.session_id, s.match_number, previous)
    t = crypto.absorb(t, "auth", "host", names[0], keys[0], s._rules_bytes, s.turn_limit)
    t = crypto.absorb(t, "auth", "joiner", names[1], keys[1], b"", 0)
    s._transcript = crypto.absorb(t, "accept", s.rules.fingerprint())
    s._t_commit = s._transcript
    s._t_reveal = b""
    s._state = State.SEED
    s._events.append(RematchStarted(s.match_number, previous))
    if host:
        commit_reveal.send_commit(s)
