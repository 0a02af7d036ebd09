"""The commit-reveal that makes the match seed, and the start of the match (section 8).

Theory of operation
-------------------
After the rules are agreed the host commits to a random value (signed:
:func:`send_commit`), the joiner answers with its own value
(:func:`on_commit`), the host reveals (:func:`on_value`, with its start
signature), the joiner checks the reveal against the commitment and signs the
start too (:func:`on_reveal`; :func:`on_start` on the host).  Neither side can
choose the seed, and the host cannot change its value once it saw the joiner's:
a reveal that does not open the commitment is a :class:`CheatingError`.
:func:`start_match` derives the seed and starts the engine (or, with the hidden
deal, the mental-poker table).  A rematch runs the same steps again on the same
keys (:mod:`p2pkoikoi.session.rematch_session`).  It is separate because these
few messages decide who wins the coin toss of the whole match; the functions
are the :class:`~p2pkoikoi.session.session.Session`'s own methods (``s`` is the
session), kept in a module of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkoikoi.engine import MatchState
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session import crypto, wire
from p2pkoikoi.session.errors import CheatingError, RemoteProtocolError
from p2pkoikoi.session.events import MatchStarted
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.states import Role, State

if TYPE_CHECKING:
    from p2pkoikoi.session.session import Session


def send_commit(s: Session) -> None:
    s._host_value = s._my_value
    s._commitment = crypto.commitment(s._t_commit, s._host_value)
    s._transcript = crypto.absorb(s._transcript, "commit", s._commitment)
    # signed, so the joiner holds evidence of it if the host walks away before revealing
    s._commit_sig = crypto.sign(s._key, crypto.commit_sig_message(s._transcript))
    s._queue(wire.CommitMsg(c=s._commitment, sig=s._commit_sig))


def on_commit(s: Session, msg: wire.CommitMsg) -> None:
    if s._state is not State.SEED or s.role is not Role.JOINER or s._commitment:
        raise s._unexpected("commit")
    assert s.peer_key is not None
    t = crypto.absorb(s._transcript, "commit", msg.c)
    if not crypto.verify_sig(s.peer_key, msg.sig, crypto.commit_sig_message(t)):
        raise CheatingError("the host's signature on its commitment is invalid (forged)")
    s._commitment, s._commit_sig, s._transcript = msg.c, msg.sig, t
    s._joiner_value = s._my_value
    s._queue(wire.ValueMsg(r=s._joiner_value))
    s._transcript = crypto.absorb(s._transcript, "value", s._joiner_value)


def on_value(s: Session, msg: wire.ValueMsg) -> None:
    if s._state is not State.SEED or s.role is not Role.HOST or s._joiner_value:
        raise s._unexpected("value")
    assert s._host_value is not None
    s._joiner_value = msg.r
    s._transcript = crypto.absorb(s._transcript, "value", msg.r)
    s._transcript = crypto.absorb(s._transcript, "reveal", s._host_value)
    s._t_reveal = s._transcript
    sig = crypto.sign(s._key, crypto.start_message(s._transcript))
    s._start_sigs[Role.HOST] = sig
    s._queue(wire.RevealMsg(r=s._host_value, sig=sig))
    s._start_match()


def on_reveal(s: Session, msg: wire.RevealMsg) -> None:
    if s._state is not State.SEED or s.role is not Role.JOINER or not s._joiner_value:
        raise s._unexpected("reveal")
    if crypto.commitment(s._t_commit, msg.r) != s._commitment:
        raise CheatingError(
            "the host's reveal does not open its commitment: the host tried to "
            "change its random value (cheating) - the match is void"
        )
    assert s.peer_key is not None
    t = crypto.absorb(s._transcript, "reveal", msg.r)
    if not crypto.verify_sig(s.peer_key, msg.sig, crypto.start_message(t)):
        raise CheatingError("the host's start signature is invalid (forged)")
    s._host_value, s._transcript, s._t_reveal = msg.r, t, t
    s._start_sigs[Role.HOST] = msg.sig
    mine = crypto.sign(s._key, crypto.start_message(t))
    s._start_sigs[Role.JOINER] = mine
    s._queue(wire.StartMsg(sig=mine))  # before any action of ours
    s._start_match()


def on_start(s: Session, msg: wire.StartMsg) -> None:
    """The joiner's signature over the transcript after the reveal (host side)."""
    if s.role is not Role.HOST or s._state not in (State.PLAY, State.FINISH, State.DONE):
        raise s._unexpected("start")
    have = s._start_sigs.get(Role.JOINER)
    if have is not None:
        if have != msg.sig:
            raise RemoteProtocolError("the joiner sent a different start signature")
        return  # sent again after a resume
    assert s.peer_key is not None
    if not crypto.verify_sig(s.peer_key, msg.sig, crypto.start_message(s._t_reveal)):
        raise CheatingError("the joiner's start signature is invalid (forged)")
    s._start_sigs[Role.JOINER] = msg.sig


def start_match(s: Session) -> None:
    assert s.rules and s._host_value and s._joiner_value
    s.seed = crypto.derive_seed(s._host_value, s._joiner_value, s._t_commit)
    if s.rules.deal is DealMode.HIDDEN:
        s._hidden = HiddenMatch(s.rules, s.seed, s.our_seat, s.hidden_secret)
        s._match = s._hidden.state
        s._hidden_seen = (len(s._hidden.events), 0)
        s._tx_at, s._hash_at = [s._transcript], [s._hidden.initial_hash]
        s._state = State.PLAY
        s._events.append(MatchStarted(s.seed, s._match.dealer, tuple(s._hidden.events)))
        s._pump_hidden()
        return
    s._match, events = MatchState.start(s.rules, s.seed)
    s._tx_at, s._hash_at = [s._transcript], [s._match.state_hash()]
    s._state = State.PLAY
    s._events.append(MatchStarted(s.seed, s._match.dealer, events))
    if s._match.is_over:  # a one-round match whose deal gives a hand yaku
        s._finish()
