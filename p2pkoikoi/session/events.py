"""Session events: what :meth:`Session.next_event` returns and what :meth:`Session.send` takes.

All are frozen dataclasses.  ``Ping`` and ``Pong`` go both ways, like h11's events.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from p2pkoikoi.engine import Action, RuleSet
from p2pkoikoi.engine import Event as EngineEvent


class NeedData:
    """Sentinel type of :data:`NEED_DATA`: no complete frame is buffered yet."""

    _instance: NeedData | None = None

    def __new__(cls) -> NeedData:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = NeedData()


# --------------------------------------------------------------------------- received
@dataclasses.dataclass(frozen=True, slots=True)
class RulesProposed:
    """Joiner without expected rules: the host proposes these; answer with
    :class:`AcceptRules` or :class:`DeclineRules`."""

    rules: RuleSet
    fingerprint: str
    rounds: int
    peer_name: str
    peer_key: bytes
    peer_fingerprint: str
    turn_limit: int = 0  #: seconds per decision the host proposes (0: none)


@dataclasses.dataclass(frozen=True, slots=True)
class HandshakeComplete:
    """Both identities are proven and the rules are agreed."""

    peer_name: str
    peer_key: bytes
    peer_fingerprint: str
    rules: RuleSet


@dataclasses.dataclass(frozen=True, slots=True)
class MatchStarted:
    """The seed is fixed; ``session.match`` is the first state."""

    seed: bytes
    first_dealer: int  # seat: 0 = host, 1 = joiner
    events: tuple[EngineEvent, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class ActionReceived:
    """The peer's action, checked and applied; ``events`` are the engine's.

    ``seat`` is the actor: the peer's seat, or ours for an action of ours the
    peer re-sent after a resume because our record had lost it.
    """

    seq: int
    action: Action
    events: tuple[EngineEvent, ...]
    seat: int


@dataclasses.dataclass(frozen=True, slots=True)
class HiddenProgress:
    """Hidden deal: the table moved on without a decision of the peer to report (a deal
    was opened, or our own play completed when the peer's key for our draw came);
    ``events`` are the engine's, ``actor`` whose decision it was (None: nobody's)."""

    seq: int
    actor: int | None
    events: tuple[EngineEvent, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Checking:
    """Hidden deal: the session queued its answer to a masking step and has that step's
    proof still to check (``protocol/hidden-deal.md`` section 7).  Send what it queued,
    then call ``next_event`` again: it checks the proof before anything else, so the
    check runs while the other side works on our answer."""

    seq: int


@dataclasses.dataclass(frozen=True, slots=True)
class PeerResigned:
    seq: int
    seat: int
    events: tuple[EngineEvent, ...]
    reason: str = ""  # "time": the peer's program resigned as its turn limit ran out


@dataclasses.dataclass(frozen=True, slots=True)
class ChatReceived:
    text: str  # already sanitized of control characters


@dataclasses.dataclass(frozen=True, slots=True)
class MatchOver:
    """Both sides signed the same final transcript and state."""

    scores: tuple[int, int]
    winner: int | None
    final_hash: bytes  # the final state hash
    transcript_hash: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer said goodbye or the stream ended; ``clean`` when after a finished match."""

    clean: bool
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class Resumed:
    """A resumed connection is authenticated: the same peer, the same match.

    ``our_seq`` and ``peer_seq`` are where each record ended; the side that is
    ahead re-sends the missing signed actions, which arrive as ordinary
    :class:`ActionReceived` events after this one.
    """

    our_seq: int
    peer_seq: int


@dataclasses.dataclass(frozen=True, slots=True)
class RematchOffered:
    """The other player offers to play match ``match_number`` on this connection:
    answer with :class:`OfferRematch` (accept) or :class:`DeclineRematch`."""

    match_number: int


@dataclasses.dataclass(frozen=True, slots=True)
class RematchDeclined:
    """The other player declined our rematch offer (the connection stays open)."""

    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class RematchStarted:
    """Both players want match ``match_number``: its commit-reveal runs now (a
    :class:`MatchStarted` follows).  The previous match's record is final: from
    here ``session.record()`` is the new match's record."""

    match_number: int
    previous: bytes  # the previous match's final transcript hash


# --------------------------------------------------------------------------- both ways
@dataclasses.dataclass(frozen=True, slots=True)
class Ping:
    nonce: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class Pong:
    nonce: bytes


# --------------------------------------------------------------------------- sent
@dataclasses.dataclass(frozen=True, slots=True)
class AcceptRules:
    """Joiner: the person accepts the proposed rules."""


@dataclasses.dataclass(frozen=True, slots=True)
class DeclineRules:
    """Joiner: the person declines the proposed rules."""

    reason: str = "the other player declined the rules"


@dataclasses.dataclass(frozen=True, slots=True)
class SendAction:
    """Our action (an :class:`Action` or its text) when it is our turn."""

    action: Action | str


@dataclasses.dataclass(frozen=True, slots=True)
class Resign:
    """Give up the match: with the open deal at any time during play, on the other
    player's turn too (a move of theirs that crosses it wins, and the session resigns
    again after it: protocol/README.md section 9.1); with the hidden deal on our turn.

    ``reason`` ``"time"``: our program resigns for us because our turn limit ran
    out (signed, so the record says so); ``""``: we chose to."""

    reason: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class SendChat:
    text: str


@dataclasses.dataclass(frozen=True, slots=True)
class OfferRematch:
    """After both final signatures: offer a new match on this connection, or accept
    the other player's offer.  ``entropy``: 32 fresh random bytes, our value for the
    new commit-reveal (the host's committed value, the joiner's value)."""

    entropy: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class DeclineRematch:
    """Decline the other player's rematch offer (the connection stays open)."""

    reason: str = "the other player does not want to play again"


@dataclasses.dataclass(frozen=True, slots=True)
class Goodbye:
    """Close politely; after this the session sends nothing more.

    ``reason``: why, for the other player to read (sent as an ``abort`` with that
    reason instead of a ``bye``: a refused identity is not "the other player left")."""

    reason: str = ""


Event = (
    RulesProposed
    | HandshakeComplete
    | MatchStarted
    | ActionReceived
    | HiddenProgress
    | Checking
    | PeerResigned
    | ChatReceived
    | MatchOver
    | ConnectionClosed
    | Resumed
    | RematchOffered
    | RematchDeclined
    | RematchStarted
    | Ping
    | Pong
)
SendEvent = (
    AcceptRules
    | DeclineRules
    | SendAction
    | Resign
    | SendChat
    | Ping
    | Pong
    | Goodbye
    | OfferRematch
    | DeclineRematch
)
