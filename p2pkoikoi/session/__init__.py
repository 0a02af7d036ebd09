"""The p2pkoikoi wire protocol as a sans-I/O state machine (layer 2).

Bytes in, events out; events in, bytes out.  No sockets, no clock, no
randomness of its own.  See :mod:`p2pkoikoi.session.session` for the theory of
operation and ``protocol/README.md`` for the specification.
"""

import importlib

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
    WrongSecretError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from p2pkoikoi.session.codes.code import ShortCode, decode_code, encode_code
    from p2pkoikoi.session.codes.invite import (
        Address,
        Invite,
        decode_invite,
        encode_invite,
        parse_join_target,
        spaced_invite,
    )
    from p2pkoikoi.session.crypto import fingerprint
    from p2pkoikoi.session.events import (
        NEED_DATA,
        AcceptRules,
        ActionReceived,
        ChatReceived,
        Checking,
        ConnectionClosed,
        DeclineRematch,
        DeclineRules,
        Event,
        Goodbye,
        HandshakeComplete,
        HiddenProgress,
        MatchOver,
        MatchStarted,
        NeedData,
        OfferRematch,
        PeerResigned,
        Ping,
        Pong,
        RematchDeclined,
        RematchOffered,
        RematchStarted,
        Resign,
        Resumed,
        RulesProposed,
        SendAction,
        SendChat,
        SendEvent,
    )
    from p2pkoikoi.session.records.journal import decode_record
    from p2pkoikoi.session.records.record import (
        TIME_FORFEIT,
        ActionRecord,
        PlayerRecord,
        Record,
        ResultRecord,
    )
    from p2pkoikoi.session.records.writer import encode_record
    from p2pkoikoi.session.session import Role, Session, State, WaitingFor
    from p2pkoikoi.session.wire import MAX_FRAME, PROTOCOL_VERSION

_LAZY: dict[str, str] = {
    "fingerprint": "p2pkoikoi.session.crypto",
    "NEED_DATA": "p2pkoikoi.session.events",
    "AcceptRules": "p2pkoikoi.session.events",
    "ActionReceived": "p2pkoikoi.session.events",
    "ChatReceived": "p2pkoikoi.session.events",
    "ConnectionClosed": "p2pkoikoi.session.events",
    "DeclineRules": "p2pkoikoi.session.events",
    "Event": "p2pkoikoi.session.events",
    "Goodbye": "p2pkoikoi.session.events",
    "DeclineRematch": "p2pkoikoi.session.events",
    "OfferRematch": "p2pkoikoi.session.events",
    "RematchDeclined": "p2pkoikoi.session.events",
    "RematchOffered": "p2pkoikoi.session.events",
    "RematchStarted": "p2pkoikoi.session.events",
    "HandshakeComplete": "p2pkoikoi.session.events",
    "HiddenProgress": "p2pkoikoi.session.events",
    "Checking": "p2pkoikoi.session.events",
    "MatchOver": "p2pkoikoi.session.events",
    "MatchStarted": "p2pkoikoi.session.events",
    "NeedData": "p2pkoikoi.session.events",
    "PeerResigned": "p2pkoikoi.session.events",
    "Ping": "p2pkoikoi.session.events",
    "Pong": "p2pkoikoi.session.events",
    "Resign": "p2pkoikoi.session.events",
    "Resumed": "p2pkoikoi.session.events",
    "RulesProposed": "p2pkoikoi.session.events",
    "SendAction": "p2pkoikoi.session.events",
    "SendChat": "p2pkoikoi.session.events",
    "SendEvent": "p2pkoikoi.session.events",
    "ShortCode": "p2pkoikoi.session.codes.code",
    "decode_code": "p2pkoikoi.session.codes.code",
    "encode_code": "p2pkoikoi.session.codes.code",
    "Address": "p2pkoikoi.session.codes.invite",
    "parse_join_target": "p2pkoikoi.session.codes.invite",
    "spaced_invite": "p2pkoikoi.session.codes.invite",
    "Invite": "p2pkoikoi.session.codes.invite",
    "decode_invite": "p2pkoikoi.session.codes.invite",
    "encode_invite": "p2pkoikoi.session.codes.invite",
    "ActionRecord": "p2pkoikoi.session.records.record",
    "PlayerRecord": "p2pkoikoi.session.records.record",
    "Record": "p2pkoikoi.session.records.record",
    "ResultRecord": "p2pkoikoi.session.records.record",
    "TIME_FORFEIT": "p2pkoikoi.session.records.record",
    "decode_record": "p2pkoikoi.session.records.journal",
    "encode_record": "p2pkoikoi.session.records.writer",
    "Role": "p2pkoikoi.session.session",
    "Session": "p2pkoikoi.session.session",
    "State": "p2pkoikoi.session.session",
    "WaitingFor": "p2pkoikoi.session.session",
    "MAX_FRAME": "p2pkoikoi.session.wire",
    "PROTOCOL_VERSION": "p2pkoikoi.session.wire",
}


def __getattr__(name: str) -> object:
    """Import the submodule that defines ``name`` on first use (PEP 562): ``verify``
    needs the record and the checks, not the wire codec or the session machine."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Address",
    "ShortCode",
    "WrongSecretError",
    "decode_code",
    "encode_code",
    "parse_join_target",
    "spaced_invite",
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
    "DeclineRematch",
    "OfferRematch",
    "RematchDeclined",
    "RematchOffered",
    "RematchStarted",
    "HandshakeComplete",
    "HiddenProgress",
    "Checking",
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
    "TIME_FORFEIT",
    "decode_record",
    "encode_invite",
    "encode_record",
    "fingerprint",
]
