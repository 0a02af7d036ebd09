"""Answers and UDP candidates: what a joiner sends back when the invite alone cannot work.

Format (protocol/README.md section 2.3; case, spaces and quotes do not matter)::

    koia-<candidate>[+<candidate>...]-<nat>-<for>-<nonce>-<check>
    candidate = <kind><ip>_<port>       kind: h (host), m (router mapping), s (STUN reflexive)

* ``candidate``: where the joiner's match socket (UDP) may be reached, best
  first, at most :data:`MAX_CANDIDATES`; ``0`` when it has none.  ``ip`` is an
  IPv4 or IPv6 address (RFC 5952 text); names are not allowed here.
* ``nat``: one letter for what the joiner learnt about its own NAT:
  ``o`` none (a host candidate is public), ``e`` endpoint-independent mapping
  (two STUN servers saw the same port), ``d`` destination-dependent
  ("symmetric": they saw different ports), ``u`` unknown (no STUN server
  answered: UDP may be blocked), ``n`` not asked (``--no-stun``).
* ``for``: the first 4 base32 characters of
  SHA-256("p2pkoikoi/v3/answer-for\\0" || invite secret): which invite this
  answers (20 bits: says "another invite" without helping anyone guess it).
* ``nonce``: 10 fresh random bytes, base32 (16 characters).
* ``check``: the first 4 base32 characters of
  SHA-256("p2pkoikoi/v3/answer\\0" || the text before the last hyphen).

The nonce is bound into everything the answer leads to: the session over the
punched path uses :func:`answered_secret` (not the invite secret) for its
SPAKE2 password, and the connectivity checks are keyed with :func:`check_key`.

The same candidate syntax (``s`` entries) carries the host's reflexive UDP
address in an invite; an invite's entries without a letter are TCP addresses
whose UDP port is the same.

Pairing (:func:`pair_order`): candidate priorities as RFC 8445 section 5.1.2
(type preference host 126, mapping 110, reflexive 100; IPv6 before IPv4 among
host candidates), pairs of one address family only, ordered by the pair
priority of section 6.1.2.3 with the joiner controlling.  This module is
sans-I/O: no socket, no clock, no randomness (the caller passes the nonce).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import ipaddress
from collections.abc import Iterable, Sequence
from typing import Final

from p2pkoikoi.session.codes.code import strip_typing
from p2pkoikoi.session.errors import InviteError

ANSWER_PREFIX: Final = "koia"
NONCE_BYTES: Final = 10
MAX_CANDIDATES: Final = 8
MAX_ANSWER_CHARS: Final = 600
KINDS: Final = {"h": "host", "m": "mapped", "s": "reflexive"}
NAT_KINDS: Final = {
    "o": "no NAT",
    "e": "endpoint-independent mapping",
    "d": "symmetric (destination-dependent mapping)",
    "u": "unknown (no STUN server answered)",
    "n": "not asked",
}
TYPE_PREFERENCE: Final = {"h": 126, "m": 110, "s": 100}
#: the most candidate pairs one side checks
MAX_PAIRS: Final = 24
_ALLOWED: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.:_+")


class AnswerError(InviteError):
    """A mistyped, cut or foreign answer: one line, before anything touches the network."""


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class UdpCandidate:
    """Where one side's match socket may be reached: ``kind`` h, m or s (module doc)."""

    kind: str
    ip: str
    port: int

    def __str__(self) -> str:
        return f"{self.kind}{self.ip}_{self.port}"

    @property
    def version(self) -> int:
        return ipaddress.ip_address(self.ip).version

    @property
    def display(self) -> str:
        return f"[{self.ip}]:{self.port}" if ":" in self.ip else f"{self.ip}:{self.port}"


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    candidates: tuple[UdpCandidate, ...]
    nat: str
    for_tag: str
    nonce: bytes


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").rstrip("=").lower()


def _digest4(tag: bytes, data: bytes) -> str:
    return _b32(hashlib.sha256(tag + data).digest())[:4]


def for_tag(invite_secret: bytes) -> str:
    """Which invite an answer answers (module doc)."""
    return _digest4(b"p2pkoikoi/v3/answer-for\x00", invite_secret)


def answered_secret(invite_secret: bytes, nonce: bytes) -> bytes:
    """The 16-byte secret the session uses over a path that the answer's nonce opened:
    SHA-256("p2pkoikoi/v3/answered\\0" || invite secret || nonce), first 16 bytes."""
    return hashlib.sha256(b"p2pkoikoi/v3/answered\x00" + invite_secret + nonce).digest()[:16]


def check_key(invite_secret: bytes, nonce: bytes) -> bytes:
    """The MESSAGE-INTEGRITY key of the connectivity checks:
    SHA-256("p2pkoikoi/v3/checks\\0" || invite secret || nonce)."""
    return hashlib.sha256(b"p2pkoikoi/v3/checks\x00" + invite_secret + nonce).digest()


def _check(body: str) -> str:
    return _digest4(b"p2pkoikoi/v3/answer\x00", body.encode("ascii"))


def candidate(kind: str, ip: str, port: int) -> UdpCandidate:
    """A checked candidate (:class:`AnswerError` otherwise)."""
    if kind not in KINDS:
        raise AnswerError(f"answer: unknown candidate kind {kind!r} (h, m or s)")
    try:
        addr = ipaddress.ip_address(ip.strip("[]"))
    except ValueError:
        raise AnswerError(f"answer: {ip!r} is not an IP address") from None
    if isinstance(port, bool) or not 1 <= port <= 65535:
        raise AnswerError(f"answer: port {port} is outside 1..65535")
    return UdpCandidate(kind, str(addr), port)


def decode_candidate(text: str) -> UdpCandidate:
    """``s203.0.113.7_40001``: one candidate (its kind letter first)."""
    kind, rest = text[:1], text[1:]
    host, sep, port = rest.rpartition("_")
    if not sep or not host:
        raise AnswerError(f"answer: candidate {text!r} lacks its port (KIND IP _ PORT)")
    if not port.isdigit() or len(port) > 5:
        raise AnswerError(f"answer: port {port!r} of {host} is not a number 1..65535")
    return candidate(kind, host, int(port))


def is_typed_candidate(text: str) -> bool:
    """Whether an invite entry is a kind-lettered UDP candidate (``s1.2.3.4_5``), not a
    TCP address: the letter is followed by an IP literal (never a valid host name)."""
    if text[:1] not in KINDS:
        return False
    try:
        ipaddress.ip_address(text[1:].rpartition("_")[0])
    except ValueError:
        return False
    return True


def encode_candidates(cands: Iterable[UdpCandidate]) -> str:
    items = [str(candidate(c.kind, c.ip, c.port)) for c in cands]
    if len(items) > MAX_CANDIDATES:
        raise AnswerError(f"answer: at most {MAX_CANDIDATES} candidates, not {len(items)}")
    return "+".join(items) or "0"


def decode_candidates(text: str) -> tuple[UdpCandidate, ...]:
    if text == "0":
        return ()
    items = text.split("+")
    if len(items) > MAX_CANDIDATES:
        raise AnswerError(f"answer: {len(items)} candidates, at most {MAX_CANDIDATES}")
    return tuple(decode_candidate(i) for i in items)


def encode_answer(answer: Answer) -> str:
    """The answer's text (module doc)."""
    if answer.nat not in NAT_KINDS:
        raise AnswerError(f"answer: unknown NAT kind {answer.nat!r}")
    if len(answer.nonce) != NONCE_BYTES:
        raise AnswerError(f"answer: the nonce must be {NONCE_BYTES} bytes")
    if len(answer.for_tag) != 4:
        raise AnswerError("answer: the invite tag is 4 characters")
    body = (
        f"{ANSWER_PREFIX}-{encode_candidates(answer.candidates)}-{answer.nat}-"
        f"{answer.for_tag}-{_b32(answer.nonce)}"
    )
    return f"{body}-{_check(body)}"


def make_answer(
    candidates: Sequence[UdpCandidate], nat: str, invite_secret: bytes, nonce: bytes
) -> str:
    """The joiner's answer to the invite with ``invite_secret``."""
    return encode_answer(Answer(tuple(candidates), nat, for_tag(invite_secret), nonce))


def looks_like_answer(text: str) -> bool:
    return "".join(strip_typing(text).split()).startswith(ANSWER_PREFIX + "-")


def decode_answer(text: str, invite_secret: bytes | None = None) -> Answer:
    """Parse an answer as typed or pasted; with ``invite_secret``, also refuse an answer
    to another invite.  :class:`AnswerError` with a one-line reason."""
    s = "".join(strip_typing(text).split())
    if len(s) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer: longer than {MAX_ANSWER_CHARS} characters: not an answer")
    if not s.startswith(ANSWER_PREFIX + "-"):
        if s.startswith("koi"):
            raise AnswerError(
                "this is an invite, not an answer: an answer starts with koia- (the joiner "
                "shows it when the invite alone does not reach you)"
            )
        raise AnswerError(f"not an answer: it should start with {ANSWER_PREFIX}-")
    bad = next((c for c in s if c not in _ALLOWED), None)
    if bad is not None:
        raise AnswerError(
            f"answer: {bad!r} cannot appear in an answer (letters, digits, - . : _ +)"
        )
    parts = s.split("-")
    if len(parts) != 6 or not all(parts):
        raise AnswerError("answer is incomplete: expected koia-CANDIDATES-NAT-FOR-NONCE-CHECK")
    _, cands, nat, tag, nonce_text, check = parts
    if check != _check(s.rsplit("-", 1)[0]):
        raise AnswerError("answer checksum does not match: it was mistyped or cut short")
    if nat not in NAT_KINDS:
        raise AnswerError(f"answer: unknown NAT kind {nat!r}")
    if len(nonce_text) != 16 or any(
        c not in "abcdefghijklmnopqrstuvwxyz234567" for c in nonce_text
    ):
        raise AnswerError("answer: the nonce should be 16 base32 characters")
    nonce = base64.b32decode(nonce_text.upper())
    if invite_secret is not None and tag != for_tag(invite_secret):
        raise AnswerError(
            "this answer is for another invite: ask your friend to join with the invite "
            "shown now and send the answer it gives"
        )
    return Answer(decode_candidates(cands), nat, tag, nonce)


def priority(c: UdpCandidate, index: int = 0) -> int:
    """RFC 8445 section 5.1.2.1 with component 1; IPv6 first among equal kinds, then the
    order given (``index``)."""
    local = 65535 - min(index, 32767) - (0 if c.version == 6 else 32768)
    return (TYPE_PREFERENCE[c.kind] << 24) + (local << 8) + 255


def pair_priority(controlling: int, controlled: int) -> int:
    """RFC 8445 section 6.1.2.3; the joiner is controlling."""
    g, d = controlling, controlled
    return (min(g, d) << 32) + 2 * max(g, d) + (1 if g > d else 0)


def pair_order(
    local: Sequence[UdpCandidate], remote: Sequence[UdpCandidate], *, controlling: bool
) -> list[tuple[UdpCandidate, UdpCandidate]]:
    """The (local, remote) pairs to check, best first, at most :data:`MAX_PAIRS`: one
    address family per pair; pairs with the same remote address once (one socket sends
    them all); highest pair priority first."""
    out: dict[tuple[str, int], tuple[int, UdpCandidate, UdpCandidate]] = {}
    for i, mine in enumerate(local):
        for j, theirs in enumerate(remote):
            if mine.version != theirs.version:
                continue
            a, b = priority(mine, i), priority(theirs, j)
            p = pair_priority(a, b) if controlling else pair_priority(b, a)
            key = (theirs.ip, theirs.port)
            if key not in out or out[key][0] < p:
                out[key] = (p, mine, theirs)
    ranked = sorted(out.values(), key=lambda t: (-t[0], t[2]))
    return [(m, t) for _, m, t in ranked[:MAX_PAIRS]]
