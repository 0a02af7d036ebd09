"""Wire format: length-prefixed frames, each carrying one msgpack map.

A frame is a 4-byte big-endian unsigned length ``L`` followed by ``L`` payload
bytes, ``1 <= L <= MAX_FRAME``.  The first frame each side sends (``hello``)
carries a plaintext msgpack message; every later frame's payload is
ChaCha20-Poly1305 ciphertext of one msgpack message (see ``crypto``).

Every message is a msgpack map with string keys; ``"type"`` names the message
and ``"v"`` is the protocol version.  Decoding uses explicit size limits,
rejects every extension type and non-string key, and checks the type of every
field before anything uses it.  See ``protocol/README.md`` for the prose.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from typing import Any, Final, TypeAlias

import msgpack  # type: ignore[import-untyped]

from p2pkoikoi.session.errors import RemoteProtocolError, VersionMismatchError

PROTOCOL_VERSION: Final = 3
MAX_FRAME: Final = 65536  # payload bytes, not counting the 4-byte length
HEADER: Final = 4
MAX_NAME: Final = 32  # characters in a player name
MAX_CHAT: Final = 200  # characters in a chat line
MAX_REASON: Final = 200  # characters in an abort / decline reason
MAX_PROGRAM: Final = 64  # characters in the program version string
MAX_ACTION: Final = 64  # characters in an action's text
MAX_RULES: Final = 8192  # bytes of the canonical rule set encoding
MAX_NONCE: Final = 32  # bytes in a ping / pong nonce
MAX_SEQ: Final = 2**31 - 1
MAX_CARD_DATA: Final = (
    16384  # bytes of a card move's deck or keys (deck2 with its proofs is 10,944)
)
CARD_KINDS: Final = ("deck1", "deck2", "deck3", "keys", "hand", "declare", "act", "draw", "audit")
MAX_TURN_LIMIT: Final = 86400  # seconds; 0: no limit
DEFAULT_TURN_LIMIT: Final = 600
PAKE_BYTES: Final = 33
VIAS: Final = ("code", "invite", "resume")

# Unpacker limits: nothing legal comes close to these.
_LIMITS: Final = {
    "max_str_len": MAX_RULES,
    "max_bin_len": MAX_CARD_DATA,  # the largest binary field (MAX_RULES for rules, checked below)
    "max_array_len": 8,
    "max_map_len": 16,
    "max_ext_len": 0,
}


# --------------------------------------------------------------------------- frames
def encode_frame(payload: bytes) -> bytes:
    """The 4-byte big-endian length then ``payload``."""
    if not 1 <= len(payload) <= MAX_FRAME:
        raise ValueError(f"frame payload of {len(payload)} bytes is outside 1..{MAX_FRAME}")
    return struct.pack(">I", len(payload)) + payload


def frame_length(header: bytes) -> int:
    """Check a 4-byte header and return the payload length it announces."""
    (length,) = struct.unpack(">I", header[:HEADER])
    if length == 0:
        raise RemoteProtocolError("bad frame from peer: empty frame")
    if length > MAX_FRAME:
        raise RemoteProtocolError(
            f"bad frame from peer: length {length} exceeds the maximum of {MAX_FRAME} bytes"
        )
    return int(length)


def decode_frame(data: bytes) -> tuple[bytes | None, bytes]:
    """Split one frame off ``data``: ``(payload, rest)``, or ``(None, data)`` if incomplete.

    An oversized or empty length raises as soon as the header is complete,
    before waiting for (or buffering) the payload.
    """
    if len(data) < HEADER:
        return None, data
    length = frame_length(data[:HEADER])
    if len(data) < HEADER + length:
        return None, data
    return data[HEADER : HEADER + length], data[HEADER + length :]


# --------------------------------------------------------------------------- messages
@dataclasses.dataclass(frozen=True, slots=True)
class HelloMsg:
    """Plaintext opening: who we are at the transport level and our ephemeral key."""

    role: str  # "host" or "joiner"
    program: str  # program version, informational
    eph: bytes  # X25519 ephemeral public key, 32 bytes
    pake: bytes  # SPAKE2 message (invite or resume password), 33 bytes
    pake_code: bytes | None = None  # host with a short code: SPAKE2 message for the code
    via: str | None = None  # joiner: "code", "invite" or "resume": the password it uses
    resume: bytes | None = None  # resuming: the match's session id (H0), 32 bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class AuthMsg:
    """First encrypted message: identity, signature over the handshake, host's rules."""

    name: str
    key: bytes  # Ed25519 public key, 32 bytes
    sig: bytes  # Ed25519 signature, 64 bytes
    rules: bytes | None = None  # host only: canonical rule set encoding
    fp: str | None = None  # host only: rules fingerprint (hex)
    rounds: int | None = None  # host only: number of rounds
    turn_limit: int | None = None  # host only: seconds a player may take per decision (0: none)
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class AcceptMsg:
    fp: str
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class DeclineMsg:
    reason: str
    expected: bytes | None = None  # the rules the joiner expected, if any
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class CommitMsg:
    c: bytes
    sig: bytes  # the host's signature over the transcript after the commit
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class ValueMsg:
    r: bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class RevealMsg:
    r: bytes
    sig: bytes  # the host's start signature over the transcript after the reveal
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class StartMsg:
    """The joiner's start signature over the transcript after the reveal."""

    sig: bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class ActionMsg:
    seq: int
    action: str
    hash: bytes
    sig: bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class CardMsg:
    """A move of the hidden deal (``protocol/hidden-deal.md``), signed like an action.

    ``hash`` is the hidden state hash *before* the move; ``kind`` says which of
    the optional fields it carries.
    """

    seq: int
    kind: str
    hash: bytes
    sig: bytes
    action: str | None = None
    pos: int | None = None
    deck: bytes | None = None
    keys: bytes | None = None
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class ResignMsg:
    seq: int
    sig: bytes
    reason: str | None = None  # "time": the sender's program resigned as its time ran out
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class OverMsg:
    hash: bytes  # final state hash
    tx: bytes  # final transcript hash
    scores: tuple[int, int]
    winner: int | None
    sig: bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class PingMsg:
    nonce: bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class PongMsg:
    nonce: bytes
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class ChatMsg:
    text: str
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class AbortMsg:
    reason: str
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class ByeMsg:
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class AgainMsg:
    """After both final signatures: offer (or accept) match ``n`` on this connection."""

    n: int  # the new match's number (the connection's first match is 1)
    tx: bytes  # the final transcript hash of the match just finished
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class NoAgainMsg:
    """Decline the other player's rematch offer."""

    reason: str
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class ResumeMsg:
    """First encrypted message of a resumed connection: where our record ends, signed."""

    seq: int  # the last action in our record (0: none yet)
    tx: bytes  # the transcript hash after it
    hash: bytes  # the state hash after it
    sig: bytes  # Ed25519 over the resume handshake (see crypto.resume_message)
    v: int = PROTOCOL_VERSION


@dataclasses.dataclass(frozen=True, slots=True)
class RefuseMsg:
    """Plaintext, instead of a hello: the host will not talk to this connection."""

    reason: str
    v: int = PROTOCOL_VERSION


Message: TypeAlias = (
    HelloMsg
    | AuthMsg
    | AcceptMsg
    | DeclineMsg
    | CommitMsg
    | ValueMsg
    | RevealMsg
    | StartMsg
    | ActionMsg
    | CardMsg
    | ResignMsg
    | OverMsg
    | PingMsg
    | PongMsg
    | ChatMsg
    | AbortMsg
    | ByeMsg
    | ResumeMsg
    | RefuseMsg
    | AgainMsg
    | NoAgainMsg
)

#: wire name of each message type
TYPE_NAMES: Final[dict[type, str]] = {
    HelloMsg: "hello",
    AuthMsg: "auth",
    AcceptMsg: "accept",
    DeclineMsg: "decline",
    CommitMsg: "commit",
    ValueMsg: "value",
    RevealMsg: "reveal",
    StartMsg: "start",
    ActionMsg: "action",
    CardMsg: "card",
    ResignMsg: "resign",
    OverMsg: "over",
    PingMsg: "ping",
    PongMsg: "pong",
    ChatMsg: "chat",
    AbortMsg: "abort",
    ByeMsg: "bye",
    ResumeMsg: "resume",
    RefuseMsg: "refuse",
    AgainMsg: "again",
    NoAgainMsg: "no_again",
}
_BY_NAME: Final = {name: cls for cls, name in TYPE_NAMES.items()}


_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A message class's field names, sorted with ``type`` (the map's key order)."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(sorted(["type", *(f.name for f in dataclasses.fields(cls))]))
    return names


_packb: Final = msgpack.Packer(use_bin_type=True, autoreset=True).pack


def encode_message(msg: Message) -> bytes:
    """msgpack bytes of ``msg``: a map with sorted keys; absent optional fields omitted."""
    cls = type(msg)
    out: dict[str, Any] = {}
    for name in _field_names(cls):
        value = TYPE_NAMES[cls] if name == "type" else getattr(msg, name)
        if value is None and name != "winner":
            continue
        if isinstance(value, tuple):
            value = list(value)
        out[name] = value
    packed = _packb(out)
    assert isinstance(packed, bytes)
    return packed


def _reject_ext(code: int, data: bytes) -> Any:
    raise RemoteProtocolError(f"bad message from peer: msgpack extension type {code} not allowed")


def unpack(payload: bytes) -> dict[str, Any]:
    """msgpack bytes -> a map with string keys, under the protocol's limits."""
    try:
        obj = msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            use_list=True,
            ext_hook=_reject_ext,
            timestamp=0,
            **_LIMITS,
        )
    except RemoteProtocolError:
        raise
    except msgpack.ExtraData:
        raise RemoteProtocolError(
            "bad message from peer: trailing bytes after the message"
        ) from None
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RemoteProtocolError(f"bad message from peer: not valid msgpack ({detail})") from None
    if not isinstance(obj, dict):
        raise RemoteProtocolError("bad message from peer: not a map")
    for key in obj:
        if not isinstance(key, str):
            raise RemoteProtocolError("bad message from peer: a map key is not a string")
    return obj


def _field(
    obj: dict[str, Any],
    mtype: str,
    name: str,
    check: Callable[[Any], bool],
    what: str,
    optional: bool = False,
) -> Any:
    if name not in obj:
        if optional:
            return None
        raise RemoteProtocolError(f"bad {mtype} message from peer: missing field {name!r}")
    value = obj[name]
    if optional and value is None:
        return None
    if not check(value):
        raise RemoteProtocolError(f"bad {mtype} message from peer: field {name!r} must be {what}")
    return value


def _is_int(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _is_bin(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, bytes) and lo <= len(v) <= hi


def _is_str(hi: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and len(v) <= hi


def _is_hex64(v: Any) -> bool:
    return isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v)


def _is_scores(v: Any) -> bool:
    return (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) and -(2**31) <= x < 2**31 for x in v)
    )


_B32 = _is_bin(32, 32)
_B64 = _is_bin(64, 64)
_SEQ = _is_int(1, MAX_SEQ)

# For each message type, its fields: (name, check, description, optional)
_SCHEMA: Final[dict[str, tuple[tuple[str, Callable[[Any], bool], str, bool], ...]]] = {
    "hello": (
        ("role", lambda v: v in ("host", "joiner"), '"host" or "joiner"', False),
        ("program", _is_str(MAX_PROGRAM), f"a string of at most {MAX_PROGRAM} characters", False),
        ("eph", _B32, "32 bytes", False),
        ("pake", _is_bin(PAKE_BYTES, PAKE_BYTES), f"{PAKE_BYTES} bytes", False),
        ("pake_code", _is_bin(PAKE_BYTES, PAKE_BYTES), f"{PAKE_BYTES} bytes", True),
        ("via", lambda v: v in VIAS, '"code", "invite" or "resume"', True),
        ("resume", _B32, "32 bytes", True),
    ),
    "auth": (
        ("name", _is_str(MAX_NAME), f"a string of at most {MAX_NAME} characters", False),
        ("key", _B32, "32 bytes", False),
        ("sig", _B64, "64 bytes", False),
        ("rules", _is_bin(2, MAX_RULES), f"2..{MAX_RULES} bytes", True),
        ("fp", _is_hex64, "64 lowercase hex digits", True),
        ("rounds", _is_int(1, 99), "a whole number 1..99", True),
        (
            "turn_limit",
            _is_int(0, MAX_TURN_LIMIT),
            f"a whole number 0..{MAX_TURN_LIMIT}",
            True,
        ),
    ),
    "accept": (("fp", _is_hex64, "64 lowercase hex digits", False),),
    "decline": (
        ("reason", _is_str(MAX_REASON), f"a string of at most {MAX_REASON} characters", False),
        ("expected", _is_bin(2, MAX_RULES), f"2..{MAX_RULES} bytes", True),  # as auth.rules
    ),
    "commit": (("c", _B32, "32 bytes", False), ("sig", _B64, "64 bytes", False)),
    "value": (("r", _B32, "32 bytes", False),),
    "reveal": (("r", _B32, "32 bytes", False), ("sig", _B64, "64 bytes", False)),
    "start": (("sig", _B64, "64 bytes", False),),
    "action": (
        ("seq", _SEQ, f"a whole number 1..{MAX_SEQ}", False),
        ("action", _is_str(MAX_ACTION), f"a string of at most {MAX_ACTION} characters", False),
        ("hash", _B32, "32 bytes", False),
        ("sig", _B64, "64 bytes", False),
    ),
    "card": (
        ("seq", _SEQ, f"a whole number 1..{MAX_SEQ}", False),
        ("kind", lambda v: v in CARD_KINDS, "a card move kind", False),
        ("hash", _B32, "32 bytes", False),
        ("sig", _B64, "64 bytes", False),
        ("action", _is_str(MAX_ACTION), f"a string of at most {MAX_ACTION} characters", True),
        ("pos", _is_int(0, 47), "a whole number 0..47", True),
        ("deck", _is_bin(1, MAX_CARD_DATA), f"1..{MAX_CARD_DATA} bytes", True),
        ("keys", _is_bin(1, MAX_CARD_DATA), f"1..{MAX_CARD_DATA} bytes", True),
    ),
    "resign": (
        ("seq", _SEQ, f"a whole number 1..{MAX_SEQ}", False),
        ("sig", _B64, "64 bytes", False),
        ("reason", lambda v: v == "time", '"time"', True),
    ),
    "over": (
        ("hash", _B32, "32 bytes", False),
        ("tx", _B32, "32 bytes", False),
        ("scores", _is_scores, "two whole numbers", False),
        (
            "winner",
            lambda v: v is None or v in (0, 1) and not isinstance(v, bool),
            "0, 1 or nil",
            False,
        ),
        ("sig", _B64, "64 bytes", False),
    ),
    "ping": (("nonce", _is_bin(0, MAX_NONCE), f"at most {MAX_NONCE} bytes", False),),
    "pong": (("nonce", _is_bin(0, MAX_NONCE), f"at most {MAX_NONCE} bytes", False),),
    "chat": (("text", _is_str(MAX_CHAT), f"a string of at most {MAX_CHAT} characters", False),),
    "abort": (
        ("reason", _is_str(MAX_REASON), f"a string of at most {MAX_REASON} characters", False),
    ),
    "bye": (),
    "resume": (
        ("seq", _is_int(0, MAX_SEQ), f"a whole number 0..{MAX_SEQ}", False),
        ("tx", _B32, "32 bytes", False),
        ("hash", _B32, "32 bytes", False),
        ("sig", _B64, "64 bytes", False),
    ),
    "refuse": (
        ("reason", _is_str(MAX_REASON), f"a string of at most {MAX_REASON} characters", False),
    ),
    "again": (
        ("n", _is_int(2, MAX_SEQ), f"a whole number 2..{MAX_SEQ}", False),
        ("tx", _B32, "32 bytes", False),
    ),
    "no_again": (
        ("reason", _is_str(MAX_REASON), f"a string of at most {MAX_REASON} characters", False),
    ),
}


#: the keys each message type may have (computed once: a message is decoded per action)
_ALLOWED: Final[dict[str, frozenset[str]]] = {
    mtype: frozenset({"type", "v", *(name for name, *_ in schema)})
    for mtype, schema in _SCHEMA.items()
}


def decode_message(payload: bytes) -> Message:
    """Parse and type-check one message; raises :class:`RemoteProtocolError` naming the fault."""
    obj = unpack(payload)
    if len(obj) == 6 and obj.get("type") == "action":
        # the message of every move, checked in one expression: exactly the fields
        # the schema below asks for, each of its type and size (anything else takes
        # the general path, which names the fault)
        v, seq, text = obj.get("v"), obj.get("seq"), obj.get("action")
        h, sig = obj.get("hash"), obj.get("sig")
        if (
            type(v) is int
            and v == PROTOCOL_VERSION
            and type(seq) is int
            and 1 <= seq <= MAX_SEQ
            and type(text) is str
            and len(text) <= MAX_ACTION
            and type(h) is bytes
            and len(h) == 32
            and type(sig) is bytes
            and len(sig) == 64
        ):
            return ActionMsg(seq=seq, action=text, hash=h, sig=sig, v=v)
    mtype = obj.get("type")
    if not isinstance(mtype, str):
        raise RemoteProtocolError("bad message from peer: missing or non-string 'type'")
    if mtype not in _SCHEMA:
        raise RemoteProtocolError(f"bad message from peer: unknown type {mtype[:40]!r}")
    version = obj.get("v")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RemoteProtocolError(f"bad {mtype} message from peer: missing or bad field 'v'")
    if version != PROTOCOL_VERSION:
        if mtype == "hello":
            raise VersionMismatchError(
                f"protocol version mismatch: the other player's program speaks version "
                f"{version}, this one speaks version {PROTOCOL_VERSION}; both players need a "
                f"release that speaks version {PROTOCOL_VERSION} (p2pkoikoi 0.2 or later: "
                "see docs/network.md)"
                if version < PROTOCOL_VERSION
                else f"protocol version mismatch: the other player's program speaks version "
                f"{version}, this one speaks version {PROTOCOL_VERSION}; update p2pkoikoi"
            )
        raise RemoteProtocolError(f"bad {mtype} message from peer: protocol version {version}")
    schema = _SCHEMA[mtype]
    extra = sorted(set(obj) - _ALLOWED[mtype])
    if extra:
        raise RemoteProtocolError(f"bad {mtype} message from peer: unknown field {extra[0][:40]!r}")
    kwargs: dict[str, Any] = {"v": version}
    for name, check, what, optional in schema:
        value = _field(obj, mtype, name, check, what, optional)
        kwargs[name] = tuple(value) if isinstance(value, list) else value
    cls = _BY_NAME[mtype]
    return cls(**kwargs)  # type: ignore[no-any-return]
