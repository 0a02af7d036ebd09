"""A short code's rendezvous through the BitTorrent DHT (protocol/dht.md), sans I/O.

Theory of operation
-------------------
Magic-wormhole's reasoning, without its mailbox server: the code's public
number (the *nameplate*) names a place everybody can find, and the code's
words are the password of a PAKE whose two first messages travel through that
place.  Everything after them is encrypted under the PAKE's key.  The place is
three BEP 44 mutable items (the DHT stores them; :mod:`p2pkoikoi.transport.lookup.dht`
moves them):

1. the **announcement**, at the nameplate's salt under a *public* key (its
   private seed is in protocol/dht.md, so anybody can write there): the host's
   SPAKE2 message and a fresh Ed25519 key of the host's for this attempt;
2. the joiner's **inbox** item, at a salt derived from the announcement, under
   the same public key: the joiner's SPAKE2 message and a key confirmation
   (an empty payload sealed under the key);
3. the host's **reply**, at a salt derived from both SPAKE2 messages, signed
   with the host's fresh key: the host's invite (its addresses and a 128-bit
   secret) sealed under the key, or a refusal when the joiner's payload did not
   open (a wrong code: counted, :data:`~p2pkoikoi.session.codes.code.MAX_FAILED_ATTEMPTS`).

The joiner then connects with that invite exactly as if it had been pasted:
the TCP handshake (protocol/README.md section 5) is unchanged.  When none of
the invite's addresses answers, a second round carries what a person would
otherwise send back by hand, the NAT traversal's *answer*: sealed under the
key at a salt of both SPAKE2 messages (:meth:`JoinerAttempt.answer`,
:meth:`Accepted.open_answer`).

Why this is as strong as the code on a LAN:

* SPAKE2's messages alone let nobody test a guess, and the host sends nothing
  that depends on the key before the joiner's sealed payload has opened (key
  confirmation, as in the TCP handshake).  So a writer of the DHT playing the
  joiner gets one guess per attempt, counted; one playing the host (it
  overwrote the announcement) gets one guess per attempt of the joiner, which
  gives up after :data:`JOINER_ATTEMPTS`.
* Each announcement is used for one attempt: after it the host draws fresh
  SPAKE2 randomness and a fresh reply key, and announces again.
* Addresses travel only sealed; an item that is forged, replayed or
  overwritten either fails to open (a retry, or one line) or is a refusal from
  whoever wrote the announcement; it never names another host.

Everything here is pure: randomness comes in as seeds, time as numbers, and the
items go out as :class:`Publish` values for the transport to sign and put.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any, Final

import msgpack  # type: ignore[import-untyped]
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from p2pkoikoi.session.codes.code import MAX_FAILED_ATTEMPTS, ShortCode
from p2pkoikoi.session.codes.pake import MESSAGE_BYTES, Pake
from p2pkoikoi.session.errors import ProtocolError, RemoteProtocolError

VERSION: Final = 3
#: the seed of the public key that signs announcements and inbox items: public on
#: purpose (everybody must be able to write there); SHA-256 of a fixed tag
PUBLIC_SEED: Final = hashlib.sha256(b"p2pkoikoi/v3/dht/public-key\x00").digest()
PASSWORD_TAG: Final = b"p2pkoikoi/v3/dht/code\x00"
TRANSCRIPT_TAG: Final = b"p2pkoikoi/v3/dht/transcript\x00"
INBOX_TAG: Final = b"p2pkoikoi/v3/dht/inbox\x00"
REPLY_TAG: Final = b"p2pkoikoi/v3/dht/reply\x00"
KEY_J2H: Final = b"p2pkoikoi/v3/dht/joiner-to-host\x00"
KEY_H2J: Final = b"p2pkoikoi/v3/dht/host-to-joiner\x00"
KEY_ANSWER: Final = b"p2pkoikoi/v3/dht/answer\x00"
ANSWER_TAG: Final = b"p2pkoikoi/v3/dht/answer-salt\x00"
#: the first bytes of each kind of payload
ANNOUNCE: Final = b"koi3a"
CLOSED: Final = b"koi3c"
JOIN: Final = b"koi3j"
SEALED: Final = b"koi3h"
REFUSED: Final = b"koi3x"
ANSWERED: Final = b"koi3b"
#: the longest answer (the NAT traversal's ``koia-`` text) the second round carries
MAX_ANSWER: Final = 600
#: an announcement whose ``seq`` (seconds since the epoch) is older than this is stale
LIVE_FOR: Final = 120
#: attempts a joiner makes with one code before it gives up (each may be an
#: impostor's one guess)
JOINER_ATTEMPTS: Final = 3
_ZERO_NONCE: Final = bytes(12)


def _public(seed: bytes) -> bytes:
    pub = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    return pub.public_bytes(Encoding.Raw, PublicFormat.Raw)


PUBLIC_KEY: Final = _public(PUBLIC_SEED)


class RendezvousError(ProtocolError):
    """An item that cannot be part of a rendezvous (malformed, or from elsewhere)."""


class CodeRefused(RemoteProtocolError):
    """The announcement's author refused our payload: the code is wrong (or it lies)."""


@dataclass(frozen=True, slots=True)
class Publish:
    """An item to put: sign ``payload`` (the bencoded ``v`` is this byte string) with
    the Ed25519 key of ``seed`` under ``salt``."""

    seed: bytes
    salt: bytes
    payload: bytes

    @property
    def key(self) -> bytes:
        return _public(self.seed)


def password(code: ShortCode) -> bytes:
    return PASSWORD_TAG + str(code).encode("ascii")


def announce_salt(number: int) -> bytes:
    """Where the host of ``number`` announces itself (under :data:`PUBLIC_KEY`)."""
    return b"koi3/n/" + str(number).encode("ascii")


def inbox_salt(announcement: bytes) -> bytes:
    return b"koi3/j/" + hashlib.sha256(INBOX_TAG + announcement).digest()[:16]


def _lp(b: bytes) -> bytes:
    return struct.pack(">I", len(b)) + b


def transcript(announcement: bytes, joiner_message: bytes) -> bytes:
    return hashlib.sha256(TRANSCRIPT_TAG + _lp(announcement) + _lp(joiner_message)).digest()


def reply_salt(th: bytes) -> bytes:
    return b"koi3/h/" + hashlib.sha256(REPLY_TAG + th).digest()[:16]


def answer_salt(th: bytes) -> bytes:
    return b"koi3/b/" + hashlib.sha256(ANSWER_TAG + th).digest()[:16]


def _key(pake_key: bytes, th: bytes, label: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=pake_key, info=label).derive(th)


def _seal(key: bytes, th: bytes, body: dict[str, Any]) -> bytes:
    return ChaCha20Poly1305(key).encrypt(_ZERO_NONCE, msgpack.packb(body), th)


def _open(key: bytes, th: bytes, sealed: bytes, kind: str) -> dict[str, Any] | None:
    try:
        plain = ChaCha20Poly1305(key).decrypt(_ZERO_NONCE, sealed, th)
    except InvalidTag:
        return None
    try:
        body = msgpack.unpackb(plain, raw=False, strict_map_key=True)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        raise RemoteProtocolError(f"the other side's {kind} payload is not msgpack") from None
    if not isinstance(body, dict) or body.get("type") != kind or body.get("v") != VERSION:
        raise RemoteProtocolError(f"the other side's {kind} payload is not one")
    return body


@dataclass(frozen=True, slots=True)
class Announcement:
    """A host's announcement, parsed."""

    reply_key: bytes  # the host's Ed25519 key for this attempt's reply
    message: bytes  # its SPAKE2 message

    @property
    def payload(self) -> bytes:
        return ANNOUNCE + self.reply_key + self.message


def parse_announcement(payload: bytes) -> Announcement | None:
    """An announcement, or None for a closed one; anything else is a RendezvousError."""
    if payload == CLOSED:
        return None
    if len(payload) != len(ANNOUNCE) + 32 + MESSAGE_BYTES or not payload.startswith(ANNOUNCE):
        raise RendezvousError("not a p2pkoikoi announcement")
    body = payload[len(ANNOUNCE) :]
    return Announcement(body[:32], body[32:])


# ------------------------------------------------------------------ host
@dataclass(frozen=True, slots=True)
class Accepted:
    """The joiner knew the code: the reply to publish, and where its answer may come
    (the second round, when the invite's addresses do not reach the host)."""

    reply: Publish
    answer_salt: bytes
    _answer_key: bytes
    _th: bytes

    def open_answer(self, payload: bytes) -> str | None:
        """The joiner's answer text from an item at :attr:`answer_salt`; None when the
        item is not one that opens (anybody can write there: ignore it)."""
        if not payload.startswith(ANSWERED):
            return None
        try:
            body = _open(self._answer_key, self._th, payload[len(ANSWERED) :], "dht_answer")
        except RemoteProtocolError:
            return None
        answer = None if body is None else body.get("answer")
        return answer if isinstance(answer, str) and 0 < len(answer) <= MAX_ANSWER else None


@dataclass(frozen=True, slots=True)
class Refused:
    """A wrong guess (counted): the refusal to publish; ``expired`` once the code is used up."""

    reply: Publish
    expired: bool


class HostAttempt:
    """One announcement and the one inbox item it answers.  ``seed`` is 64 random
    bytes: the SPAKE2 randomness and the reply key's seed."""

    def __init__(self, code: ShortCode, seed: bytes) -> None:
        if len(seed) != 64:
            raise ValueError("a host attempt needs 64 bytes of randomness")
        self.code = code
        self._pake = Pake("host", password(code), seed[:32], dht=True)
        self.reply_seed = seed[32:]
        self.announcement = Announcement(_public(self.reply_seed), self._pake.message)
        self.used = False

    def announce(self) -> Publish:
        return Publish(PUBLIC_SEED, announce_salt(self.code.number), self.announcement.payload)

    @property
    def inbox_salt(self) -> bytes:
        return inbox_salt(self.announcement.payload)

    def answer(self, inbox: bytes, invite: str, failed_before: int) -> Accepted | Refused | None:
        """Take the joiner's inbox payload.  None: not one (malformed: ignore it; the
        attempt stays open unless :attr:`used`).  ``failed_before``: wrong guesses
        of this code so far (all ways: TCP too), for the refusal's count."""
        if self.used:
            raise ValueError("an attempt answers one inbox item")
        if not inbox.startswith(JOIN) or len(inbox) < len(JOIN) + MESSAGE_BYTES + 16:
            return None
        message = inbox[len(JOIN) : len(JOIN) + MESSAGE_BYTES]
        sealed = inbox[len(JOIN) + MESSAGE_BYTES :]
        self.used = True
        try:
            k = self._pake.finish(message)
        except RemoteProtocolError:
            return None  # not a point: no guess was made; the caller starts a new attempt
        th = transcript(self.announcement.payload, message)
        salt = reply_salt(th)
        try:
            body = _open(_key(k, th, KEY_J2H), th, sealed, "dht_join")
        except RemoteProtocolError:
            body = None
        if body is None:
            failed = failed_before + 1
            left = max(0, MAX_FAILED_ATTEMPTS - failed)
            why = f"the code does not match ({failed} wrong of {MAX_FAILED_ATTEMPTS}; " + (
                f"{left} left)" if left else "the host must make a new code)"
            )
            return Refused(Publish(self.reply_seed, salt, REFUSED + why.encode()), left == 0)
        sealed_reply = _seal(
            _key(k, th, KEY_H2J), th, {"invite": invite, "type": "dht_host", "v": VERSION}
        )
        return Accepted(
            Publish(self.reply_seed, salt, SEALED + sealed_reply),
            answer_salt(th),
            _key(k, th, KEY_ANSWER),
            th,
        )


def closed() -> bytes:
    """The payload a host leaves at its nameplate when it stops waiting."""
    return CLOSED


# ------------------------------------------------------------------ joiner
class JoinerAttempt:
    """The joiner's side of one announcement: :attr:`inbox` to publish, then
    :meth:`open_reply` on what appears at (:attr:`reply_key`, :attr:`reply_salt`)."""

    def __init__(self, code: ShortCode, announcement: Announcement, seed: bytes) -> None:
        pake = Pake("joiner", password(code), seed, dht=True)
        k = pake.finish(announcement.message)  # a bad point: RemoteProtocolError
        self.announcement = announcement
        th = transcript(announcement.payload, pake.message)
        self._th = th
        self._k_h2j = _key(k, th, KEY_H2J)
        self._k_answer = _key(k, th, KEY_ANSWER)
        sealed = _seal(_key(k, th, KEY_J2H), th, {"type": "dht_join", "v": VERSION})
        self.inbox = Publish(
            PUBLIC_SEED, inbox_salt(announcement.payload), JOIN + pake.message + sealed
        )
        self.reply_key = announcement.reply_key
        self.reply_salt = reply_salt(th)

    def answer(self, text: str) -> Publish:
        """The second round: the joiner's answer (the NAT traversal's ``koia-`` text),
        sealed for the host, once the invite's addresses did not reach it."""
        if not 0 < len(text) <= MAX_ANSWER:
            raise ValueError(f"an answer has 1..{MAX_ANSWER} characters")
        body = {"answer": text, "type": "dht_answer", "v": VERSION}
        return Publish(
            PUBLIC_SEED, answer_salt(self._th), ANSWERED + _seal(self._k_answer, self._th, body)
        )

    def open_reply(self, payload: bytes) -> str | None:
        """The host's invite text from its reply; None when the reply is not for us
        (it does not open: whoever announced does not share our key); raises
        :class:`CodeRefused` with the host's reason for a refusal."""
        if payload.startswith(REFUSED):
            reason = payload[len(REFUSED) :][:200].decode("utf-8", "replace")
            raise CodeRefused(f"the host refused the code: {reason}")
        if not payload.startswith(SEALED):
            return None
        body = _open(self._k_h2j, self._th, payload[len(SEALED) :], "dht_host")
        if body is None:
            return None
        invite = body.get("invite")
        if not isinstance(invite, str) or len(invite) > 1000:
            raise RemoteProtocolError("the host's reply carries no invite")
        return invite


def live(payload: bytes, seq: int, now: float) -> bool:
    """Whether an announcement item says a host is waiting now (not closed, not stale)."""
    return payload != CLOSED and seq >= int(now) - LIVE_FOR
