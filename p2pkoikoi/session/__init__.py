"""The p2pkoikoi wire protocol as a sans-I/O state machine (layer 2).

Bytes in, events out; events in, bytes out.  No sockets, no clock, no
randomness of its own.  See :mod:`p2pkoikoi.session.session` for the theory of
operation and ``protocol/README.md`` for the specification.
"""

from p2pkoikoi.session.crypto import fingerprint
from p2pkoikoi.session.errors import (
    CheatingError,
    InviteError,
    LocalProtocolError,
    ProtocolError,
    RecordError,
    RefusedError,
    RemoteProtocolError,
    ResumeError,
    RulesMismatchError,
    VersionMismatchError,
)
from p2pkoikoi.session.events import (
    NEED_DATA,
    AcceptRules,
    ActionReceived,
    ChatReceived,
    ConnectionClosed,
    DeclineRules,
    Event,
    Goodbye,
    HandshakeComplete,
    MatchOver,
    MatchStarted,
    NeedData,
    PeerResigned,
    Ping,
    Pong,
    Resign,
    Resumed,
    RulesProposed,
    SendAction,
    SendChat,
    SendEvent,
)
from p2pkoikoi.session.invite import Invite, decode_invite, encode_invite
from p2pkoikoi.session.record import (
    ActionRecord,
    PlayerRecord,
    Record,
    ResultRecord,
    decode_record,
    encode_record,
)
from p2pkoikoi.session.session import Role, Session, State, WaitingFor
from p2pkoikoi.session.wire import MAX_FRAME, PROTOCOL_VERSION

__all__ = [
    "MAX_FRAME",
    "NEED_DATA",
    "PROTOCOL_VERSION",
    "AcceptRules",
    "ActionReceived",
    "ActionRecord",
    "ChatReceived",
    "CheatingError",
    "ConnectionClosed",
    "DeclineRules",
    "Event",
    "Goodbye",
    "HandshakeComplete",
    "Invite",
    "InviteError",
    "LocalProtocolError",
    "MatchOver",
    "MatchStarted",
    "NeedData",
    "PeerResigned",
    "Ping",
    "PlayerRecord",
    "Pong",
    "ProtocolError",
    "Record",
    "RecordError",
    "RefusedError",
    "RemoteProtocolError",
    "ResumeError",
    "Resign",
    "Resumed",
    "ResultRecord",
    "Role",
    "RulesMismatchError",
    "RulesProposed",
    "SendAction",
    "SendChat",
    "SendEvent",
    "Session",
    "State",
    "VersionMismatchError",
    "WaitingFor",
    "decode_invite",
    "decode_record",
    "encode_invite",
    "encode_record",
    "fingerprint",
]
