"""The words every part of the session machine shares: roles, phases, waits, names.

Theory of operation
-------------------
The :class:`~p2pkoikoi.session.session.Session` is a composition of parts, one
object per part of the protocol (the handshake, the commit-reveal, play, the
rematch, the resume, the hidden deal's card moves, the side channel), each in a
module of its own.  Each part needs to say whose seat a role is, which phase the
session is in and how a player name is checked; these values live here, below
all the parts, so that no part imports another (or ``session.py``) just to name
a phase.  ``session.py`` re-exports them: ``from p2pkoikoi.session.session
import Role, State`` still works.
"""

from __future__ import annotations

import enum
import unicodedata
from typing import Final

import p2pkoikoi.session.wire as wire
from p2pkoikoi.session.errors import ProtocolError

MIN_ENTROPY: Final = 64
#: unread bytes we hold at most; a well-behaved peer never comes close
MAX_BUFFER: Final = 4 * (wire.MAX_FRAME + wire.HEADER)
SECRET_MIN: Final = 16


class Role(enum.Enum):
    HOST = "host"
    JOINER = "joiner"

    # Members are equal only to themselves, so they may hash by identity too: Enum's
    # own hash is a Python call (the name's hash), and roles key the signature maps
    # that the record journal reads after every step.
    __hash__ = object.__hash__

    @property
    def seat(self) -> int:
        return 0 if self is Role.HOST else 1

    @property
    def other(self) -> Role:
        return Role.JOINER if self is Role.HOST else Role.HOST


class State(enum.Enum):
    HELLO = "hello"  # waiting for the peer's hello
    AUTH = "auth"  # waiting for the peer's auth
    RULES = "rules"  # waiting for the joiner's decision on the rules
    SEED = "seed"  # commit-reveal in progress
    RESUME = "resume"  # a resumed connection: waiting for the peer's resume message
    PLAY = "play"
    FINISH = "finish"  # the match is over; waiting for the peer's final signature
    DONE = "done"  # both final signatures exchanged
    CLOSED = "closed"
    ERROR = "error"


class WaitingFor(enum.Enum):
    """What the session waits for: the transport applies the matching deadline."""

    PEER_HELLO = "peer_hello"
    PEER_AUTH = "peer_auth"
    LOCAL_RULES_DECISION = "local_rules_decision"  # our user must accept or decline
    PEER_RULES_DECISION = "peer_rules_decision"
    COMMIT = "commit"  # the host's commitment
    JOINER_VALUE = "joiner_value"
    REVEAL = "reveal"  # the host's reveal: a missing reveal is suspicious
    PEER_RESUME = "peer_resume"  # a resumed connection's first encrypted message
    PEER_ACTION = "peer_action"
    PEER_CARDS = "peer_cards"  # the hidden deal: a move the peer's program owes, no person's
    LOCAL_ACTION = "local_action"
    PEER_FINAL = "peer_final"  # the peer's signature over the final transcript
    NOTHING = "nothing"


def sanitize(text: str) -> str:
    """Drop control, format and separator characters other than plain spaces."""
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            continue
        out.append(" " if cat == "Zs" else ch)
    return "".join(out)


def check_name(name: str, error: type[ProtocolError]) -> None:
    """The rule for a player name (protocol/README.md section 4): 1..32 characters,
    none of Unicode categories Cc, Cf, Cs, Co, Cn, Zl, Zp, no space other than
    U+0020, no leading or trailing space."""
    clean = sanitize(name).strip()
    if not clean or clean != name or len(name) > wire.MAX_NAME:
        raise error(
            f"player name must be 1..{wire.MAX_NAME} printable characters without "
            "leading or trailing spaces"
        )


#: the domain tag of the hidden deal's match secret (derived from the session's entropy)
TAG_HIDDEN_SECRET: Final = b"p2pkoikoi/v2/hidden/secret\x00"
