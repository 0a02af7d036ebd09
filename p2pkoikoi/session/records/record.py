"""Match records: everything needed to verify a match afterwards, in one JSON file.

A record is UTF-8 JSON (:func:`~p2pkoikoi.session.records.writer.encode_record`
writes it; this module holds the values and reads them back).  While a match is played its file
is a journal that grows by appending (:mod:`p2pkoikoi.session.records.journal`); the
transport writes the compact record (atomically: a temporary file, then a
rename) when the match ends.  Byte strings are lowercase hex.  ``decode_compact_record`` validates
every field and raises :class:`RecordError` with a one-line reason.  What the
signatures cover is defined in ``protocol/README.md`` ("Transcript");
:func:`p2pkoikoi.session.verify.check.verify_record` checks all of it.
"""

from __future__ import annotations

from p2pkoikoi.engine import InputError, RuleSet
from p2pkoikoi.engine.jsontext import loads, syntax_error
from p2pkoikoi.engine.values import make, value
from p2pkoikoi.session.crypto import fingerprint
from p2pkoikoi.session.errors import RecordError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

RECORD_FORMAT: Final = "p2pkoikoi-record"
RECORD_VERSION: Final = 2
PROTOCOL: Final = 3  # the wire protocol a record's signatures follow
#: the oldest protocol whose records this release still verifies (version 3 changed only
#: the hidden deal: an open-deal record of version 2 verifies as before)
OLDEST_PROTOCOL: Final = 2
MAX_RECORD_BYTES: Final = 16 * 1024 * 1024
#: the reason of a forfeit by time: the player to act let the turn limit pass
TIME_FORFEIT: Final = "time"
#: the reason of a forfeit by abandonment: the player left during play (a ``bye``,
#: a closed connection) and did not come back within the reconnect window
LEFT_FORFEIT: Final = "left"
#: a resignation in a record's actions, by its reason ("": the player chose it;
#: TIME_FORFEIT: the player's own program resigned when its turn limit ran out)
RESIGN_TEXTS: Final = {"": "resign", TIME_FORFEIT: "resign:time"}


def resign_reason(text: str) -> str | None:
    """The reason of a recorded resignation (``""`` for a plain one), or None for
    an ordinary action."""
    return _RESIGN_REASONS.get(text)


_RESIGN_REASONS: Final = {text: reason for reason, text in RESIGN_TEXTS.items()}


@value
class PlayerRecord:
    """A player of the record: name, Ed25519 key and its handshake signature."""

    name: str
    key: bytes  # Ed25519 public key
    auth_sig: bytes | None  # signature over the handshake (see protocol/README.md)
    start_sig: bytes | None = None  # signature over the transcript after the reveal


@value
class ActionRecord:
    """One signed action of the record (or a hidden deal's card move)."""

    seq: int
    seat: int
    action: str  # canonical action text, or a resignation (RESIGN_TEXTS); "" or a decision for a card move
    state_hash: bytes  # the state hash after it (a card move: the hidden state hash before it)
    sig: bytes  # the actor's signature over the transcript hash after it
    #: a move of the hidden deal (protocol/hidden-deal.md): its kind and data; "" otherwise
    kind: str = ""
    pos: int | None = None
    deck: bytes = b""
    keys: bytes = b""


@value
class ResultRecord:
    """The result both players sign: scores, winner and the final hashes."""

    scores: tuple[int, int]
    winner: int | None
    final_state_hash: bytes
    transcript_hash: bytes


@value
class Evidence:
    """The deck secrets of the side that caught a cheat in a hidden deal (its own, for
    the deal the cheat was in), so that ``verify`` can re-run the check that failed."""

    seat: int
    round: int
    attempt: int
    secrets: bytes  # DeckSecrets.encode()


@value
class ForfeitRecord:
    """The match ended because ``seat`` walked away: one player's account, signed by
    that player (``sig``, the other seat's key) and not by the one who forfeits
    (the host stopped between the joiner's value and its reveal; ``reason``
    ``"time"``: the player to act let the turn limit pass; the hidden deal: a
    program withheld a move it owed past its deadline)."""

    seat: int
    reason: str
    sig: bytes  # the recording player's signature (protocol/record-format.md)


@value
class Record:
    """A match record: everything :func:`~p2pkoikoi.session.verify.check.verify_record` checks."""

    session_id: bytes | None  # H0, the hash of both hellos
    rules: RuleSet | None
    host: PlayerRecord | None
    joiner: PlayerRecord | None
    accepted: bool
    commitment: bytes | None
    joiner_value: bytes | None
    host_value: bytes | None  # the reveal
    match_seed: bytes | None
    actions: tuple[ActionRecord, ...]
    result: ResultRecord | None
    final_sigs: tuple[bytes | None, bytes | None]  # (host, joiner)
    protocol: int = PROTOCOL
    turn_limit: int = 0  # seconds per decision agreed in the handshake (0: none)
    commit_sig: bytes | None = None  # the host's signature over its commitment
    forfeit: ForfeitRecord | None = None
    #: why a final signature is missing, in the words of the record's writer
    missing: str | None = None
    #: hidden deal: a side that caught a cheat publishes its own secrets for that deal
    evidence: Evidence | None = None
    #: which match of its connection (1: the first; a rematch is 2, 3, ...)
    match_number: int = 1
    #: a rematch: the final transcript hash of the connection's match before it
    previous: bytes | None = None

    @property
    def is_complete(self) -> bool:
        """The match is over and both players signed its result."""
        return self.result is not None and None not in self.final_sigs


# --------------------------------------------------------------------------- decode
def _fail(msg: str) -> RecordError:
    return RecordError(f"malformed record: {msg}")


def _get(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(f"{where} lacks {key!r}")
    return obj[key]


def _bytes(value: Any, n: int, where: str, optional: bool = True) -> bytes | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) != 2 * n:
        raise _fail(f"{where} must be {2 * n} hex digits")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise _fail(f"{where} must be {2 * n} hex digits") from None


def _req_bytes(value: Any, n: int, where: str) -> bytes:
    b = _bytes(value, n, where, optional=False)
    assert b is not None
    return b


def _int(value: Any, where: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise _fail(f"{where} must be a whole number {lo}..{hi}")
    return value


def _map(value: Any, where: str, keys: set[str] | frozenset[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"{where} must be an object")
    extra = sorted(set(value) - keys)
    if extra:
        raise _fail(f"{where} has an unknown field {extra[0]!r}")
    return value


#: the categories a player name may not hold (the wire's rule, states.check_name;
#: not imported from there: verify does not load the network's modules)
_NOT_IN_NAMES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _wire_name(name: str) -> bool:
    """protocol/README.md section 4: no character of those categories, no space but
    U+0020, none leading or trailing."""
    if name != name.strip(" ") or name.strip() != name:
        return False
    if name.isascii():  # the common case, without loading the Unicode database
        return name.isprintable()  # ASCII's only hidden category is Cc; its only Zs, " "
    import unicodedata

    for ch in name:
        cat = unicodedata.category(ch)
        if cat in _NOT_IN_NAMES or (cat == "Zs" and ch != " "):
            return False
    return True


def _decode_player(value: Any, where: str) -> PlayerRecord | None:
    if value is None:
        return None
    obj = _map(value, where, {"name", "identity_key", "fingerprint", "auth_sig", "start_sig"})
    name = _get(obj, "name", where)
    if not isinstance(name, str) or not 1 <= len(name) <= 32 or not _wire_name(name):
        # the wire's rule for a name (states.check_name): a record's name is printed
        raise _fail(
            f"{where}.name must be 1..32 printable characters without leading or trailing"
            " spaces (protocol/README.md section 4)"
        )
    key = _req_bytes(_get(obj, "identity_key", where), 32, f"{where}.identity_key")
    if "fingerprint" in obj and obj["fingerprint"] != fingerprint(key):
        raise _fail(f"{where}.fingerprint does not match its identity_key")
    sig = _bytes(obj.get("auth_sig"), 64, f"{where}.auth_sig")
    start = _bytes(obj.get("start_sig"), 64, f"{where}.start_sig")
    return PlayerRecord(name, key, sig, start)


_TOP_KEYS: Final = {
    "format",
    "version",
    "protocol",
    "session_id",
    "rules",
    "rules_fingerprint",
    "turn_limit",
    "host",
    "joiner",
    "accepted",
    "commitment",
    "commit_sig",
    "joiner_value",
    "host_value",
    "match_seed",
    "actions",
    "result",
    "final_sigs",
    "forfeit",
    "missing",
    "evidence",
    "match",
    "previous",
}
_CARD_KINDS: Final = ("deck1", "deck2", "deck3", "keys", "hand", "declare", "act", "draw", "audit")


def _hexdata(value: Any, where: str) -> bytes:
    if not isinstance(value, str) or len(value) % 2 or len(value) > 2 * 16384:
        raise _fail(f"{where} must be hex digits (at most 16384 bytes)")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise _fail(f"{where} must be hex digits") from None


_ACTION_KEYS: Final = frozenset(
    {"seq", "seat", "action", "state_hash", "sig", "kind", "pos", "deck", "keys"}
)


def _decode_action(a: Any, i: int) -> ActionRecord:
    """``actions[i]``, validated.  A record holds a few hundred: the key check that
    passes is a subset test (the sorted difference only names a failure)."""
    where = f"actions[{i}]"
    if type(a) is not dict or not _ACTION_KEYS.issuperset(a):
        a = _map(a, where, _ACTION_KEYS)  # names what is wrong
    text = _get(a, "action", where)
    kind = a.get("kind", "")
    if kind:
        if kind not in _CARD_KINDS:
            raise _fail(f"{where}.kind must be one of {', '.join(_CARD_KINDS)}")
    elif "pos" in a or "deck" in a or "keys" in a:
        raise _fail(f"{where} has card move data (pos, deck, keys) but no kind")
    if not isinstance(text, str) or not (0 if kind else 1) <= len(text) <= 64:
        raise _fail(f"{where}.action must be a string of 1..64 characters")
    pos, deck, keys = a.get("pos"), a.get("deck", ""), a.get("keys", "")
    # every field checked just above: made without __init__ (a record holds hundreds)
    return make(
        ActionRecord,
        _int(_get(a, "seq", where), f"{where}.seq", 1, 2**31 - 1),
        _int(_get(a, "seat", where), f"{where}.seat", 0, 1),
        text,
        _req_bytes(_get(a, "state_hash", where), 32, f"{where}.state_hash"),
        _req_bytes(_get(a, "sig", where), 64, f"{where}.sig"),
        kind,
        None if pos is None else _int(pos, f"{where}.pos", 0, 47),
        b"" if deck == "" else _hexdata(deck, f"{where}.deck"),
        b"" if keys == "" else _hexdata(keys, f"{where}.keys"),
    )


def _check_text(obj: Any) -> None:
    """Refuse a record holding a string that is not Unicode text: a lone surrogate
    (JSON's ``"\\ud800"`` escape decodes to one) cannot be encoded, signed or printed.
    Iterative, so a deeply nested value cannot exhaust the stack."""
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and not _is_text(value):
            raise _fail("a string holds a lone surrogate (\\ud800-\\udfff): not Unicode text")


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def record_from_dict(obj: Any, *, raw: bytes | None = None) -> Record:
    """The record a decoded JSON value holds, validated.

    ``raw``: the UTF-8 bytes ``obj`` was parsed from.  A lone surrogate can only
    come from a ``\\uD800``-``\\uDFFF`` escape there (UTF-8 itself cannot hold
    one), so bytes without ``\\ud``/``\\uD`` skip the walk over every string.
    """
    if raw is None or b"\\ud" in raw or b"\\uD" in raw:
        _check_text(obj)
    top = _map(obj, "the record", _TOP_KEYS)
    if top.get("format") != RECORD_FORMAT:
        raise _fail(f"'format' must be {RECORD_FORMAT!r}: is this a p2pkoikoi record?")
    if top.get("version") == 1 or top.get("protocol") == 1:
        raise _fail(
            "this record is from protocol version 1 (p2pkoikoi 0.1.x), whose signatures, seed"
            " and moves this release cannot check: verify it with p2pkoikoi 0.1"
        )
    if top.get("version") != RECORD_VERSION:
        raise _fail(f"unsupported record version {top.get('version')!r} (this program reads 2)")
    protocol = _int(_get(top, "protocol", "the record"), "protocol", OLDEST_PROTOCOL, PROTOCOL)
    turn_limit = _int(top.get("turn_limit", 0), "turn_limit", 0, 86400)
    forfeit: ForfeitRecord | None = None
    if top.get("forfeit") is not None:
        f = _map(top["forfeit"], "forfeit", {"seat", "reason", "sig"})
        reason = _get(f, "reason", "forfeit")
        if not isinstance(reason, str) or len(reason) > 200:
            raise _fail("forfeit.reason must be a string of at most 200 characters")
        forfeit = ForfeitRecord(
            _int(_get(f, "seat", "forfeit"), "forfeit.seat", 0, 1),
            reason,
            _req_bytes(_get(f, "sig", "forfeit"), 64, "forfeit.sig"),
        )
    missing = top.get("missing")
    if missing is not None and (not isinstance(missing, str) or len(missing) > 200):
        raise _fail("'missing' must be a string of at most 200 characters")
    rules: RuleSet | None = None
    if top.get("rules") is not None:
        try:
            rules = RuleSet.from_dict(top["rules"])
        except InputError as exc:
            raise _fail(f"rules: {exc}") from None
    actions: list[ActionRecord] = []
    raw_actions = _get(top, "actions", "the record")
    if not isinstance(raw_actions, list):
        raise _fail("'actions' must be a list")
    for i, a in enumerate(raw_actions):
        actions.append(_decode_action(a, i))
    result: ResultRecord | None = None
    if top.get("result") is not None:
        r = _map(
            top["result"], "result", {"scores", "winner", "final_state_hash", "transcript_hash"}
        )
        scores = _get(r, "scores", "result")
        if not isinstance(scores, list) or len(scores) != 2:
            raise _fail("result.scores must be a list of two whole numbers")
        winner = _get(r, "winner", "result")
        result = ResultRecord(
            scores=(
                _int(scores[0], "result.scores[0]", -(2**31), 2**31 - 1),
                _int(scores[1], "result.scores[1]", -(2**31), 2**31 - 1),
            ),
            winner=None if winner is None else _int(winner, "result.winner", 0, 1),
            final_state_hash=_req_bytes(
                _get(r, "final_state_hash", "result"), 32, "result.final_state_hash"
            ),
            transcript_hash=_req_bytes(
                _get(r, "transcript_hash", "result"), 32, "result.transcript_hash"
            ),
        )
    fs = _map(
        top.get("final_sigs", {"host": None, "joiner": None}), "final_sigs", {"host", "joiner"}
    )
    evidence: Evidence | None = None
    if top.get("evidence") is not None:
        e = _map(top["evidence"], "evidence", {"seat", "round", "attempt", "secrets"})
        evidence = Evidence(
            seat=_int(_get(e, "seat", "evidence"), "evidence.seat", 0, 1),
            round=_int(_get(e, "round", "evidence"), "evidence.round", 1, 99),
            attempt=_int(_get(e, "attempt", "evidence"), "evidence.attempt", 0, 0xFFFF),
            secrets=_hexdata(_get(e, "secrets", "evidence"), "evidence.secrets"),
        )
    match_number = _int(top.get("match", 1), "match", 1, 2**31 - 1)
    previous = _bytes(top.get("previous"), 32, "previous")
    if (match_number > 1) != (previous is not None):
        raise _fail("'match' above 1 (a rematch) and 'previous' go together")
    accepted = top.get("accepted", False)
    if not isinstance(accepted, bool):
        raise _fail("'accepted' must be true or false")
    return Record(
        session_id=_bytes(top.get("session_id"), 32, "session_id"),
        rules=rules,
        host=_decode_player(top.get("host"), "host"),
        joiner=_decode_player(top.get("joiner"), "joiner"),
        accepted=accepted,
        commitment=_bytes(top.get("commitment"), 32, "commitment"),
        commit_sig=_bytes(top.get("commit_sig"), 64, "commit_sig"),
        joiner_value=_bytes(top.get("joiner_value"), 32, "joiner_value"),
        host_value=_bytes(top.get("host_value"), 32, "host_value"),
        match_seed=_bytes(top.get("match_seed"), 32, "match_seed"),
        actions=tuple(actions),
        result=result,
        final_sigs=(
            _bytes(fs.get("host"), 64, "final_sigs.host"),
            _bytes(fs.get("joiner"), 64, "final_sigs.joiner"),
        ),
        protocol=protocol,
        turn_limit=turn_limit,
        forfeit=forfeit,
        missing=missing,
        evidence=evidence,
        match_number=match_number,
        previous=previous,
    )


def decode_compact_record(data: bytes) -> Record:
    """Parse and validate a compact record file's bytes (the JSON form).

    :func:`p2pkoikoi.session.records.journal.decode_record` reads either form of a
    record file (a journal too); this is its compact half.
    """
    if len(data) > MAX_RECORD_BYTES:
        raise _fail(f"larger than {MAX_RECORD_BYTES} bytes")
    try:
        obj = loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _fail("not UTF-8 text") from None
    except ValueError as exc:  # json.JSONDecodeError or a number too long: see jsontext
        where = syntax_error(exc)
        if where is not None:
            raise _fail(f"not valid JSON ({where})") from None
        # a number too long to convert (over 4300 digits)
        raise _fail(
            "a number is too long (no field of a record needs more than 20 digits)"
        ) from None
    except RecursionError:
        raise _fail("nested too deeply") from None
    return record_from_dict(obj, raw=data)
