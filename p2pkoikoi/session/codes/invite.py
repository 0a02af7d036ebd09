"""Invites: the long, copyable form of "come and play": every address and a 128-bit secret.

Format (protocol/README.md section 2; case, spaces and quotes do not matter)::

    koi2-<address>[+<address>...]-<secret>-<check>
    address = <host>_<port>  |  s<ip>_<port>

An ``s`` entry (protocol section 2.3, :mod:`p2pkoikoi.session.codes.answer`) is the
host's reflexive UDP address as a STUN server saw it; the other entries are
TCP addresses whose UDP port (the match over QUIC) is the same.

``host`` is an IPv4 address, an IPv6 address (canonical RFC 5952 text, with its
colons, no brackets) or a DNS name; ``port`` is decimal 1..65535.  An invite
carries 1..:data:`MAX_ADDRESSES` addresses (LAN IPv4s, global IPv6s, the
router's external address with its mapped port); a joiner may try them all at
once.  ``secret`` is the 16-byte secret in lowercase RFC 4648 base32 without
padding (26 characters); ``check`` is the first 4 base32 characters of
SHA-256("p2pkoikoi/v2/invite\\0" || the text before the last hyphen).

Why this shape: it is plain text a person can check (the addresses are
readable), every character is safe unquoted in a shell (no brackets, no
colons next to a port), and hyphens only separate the fields, so the text
splits from the right (host names may contain hyphens).  A short code
(:mod:`p2pkoikoi.session.codes.code`) is the form for reading aloud.

Parsing order (so that a typo is reported as such): remove whitespace and
quotes, lowercase; refuse non-ASCII; check the prefix (``koi1-`` is an older
release's invite: refused, saying to update); split off the check at the last
hyphen and the secret at the one before (both must be non-empty, as must the
addresses); verify the check; then each field.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import ipaddress
import re
from collections.abc import Iterable
from typing import Final

from p2pkoikoi.session.codes.answer import (
    UdpCandidate,
    decode_candidate,
    is_typed_candidate,
    looks_like_answer,
)
from p2pkoikoi.session.codes.code import ShortCode, decode_code, looks_like_code, strip_typing
from p2pkoikoi.session.errors import InviteError

INVITE_PREFIX: Final = "koi2"
OLD_PREFIXES: Final = ("koi1",)
SECRET_BYTES: Final = 16
#: at most this many addresses in one invite (and what an encoder accepts)
MAX_ADDRESSES: Final = 8
#: the longest invite text a decoder reads (8 long DNS names would not fit: none needs to)
MAX_INVITE_CHARS: Final = 1000
_TAG: Final = b"p2pkoikoi/v2/invite\x00"
_HOSTNAME: Final = re.compile(
    r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*"
    r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
)
_ALLOWED: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.:_+")
EXAMPLE: Final = "koi2-192.0.2.7_47474-SECRET-CHECK"


@dataclasses.dataclass(frozen=True, slots=True)
class Address:
    """One place a joiner may reach the host: an IP address or DNS name, and a TCP port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}_{self.port}"

    @property
    def display(self) -> str:
        """``192.0.2.7:47474`` / ``[2001:db8::1]:47474``, as people write them."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclasses.dataclass(frozen=True, slots=True)
class Invite:
    addresses: tuple[Address, ...]
    secret: bytes
    #: the host's reflexive UDP candidates (``s`` entries, protocol section 2.3)
    udp: tuple[UdpCandidate, ...] = ()

    def __str__(self) -> str:
        return encode_invite(self.addresses, self.secret, udp=self.udp)


def _check(body: str) -> str:
    digest = hashlib.sha256(_TAG + body.encode("ascii")).digest()
    return base64.b32encode(digest).decode("ascii")[:4].lower()


def normal_host(host: str) -> str:
    """The canonical text of an IP address or DNS name; :class:`InviteError` otherwise."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    # a DNS name's last label is never all digits (RFC 3696), so 192.0.2.300 is a typo
    if ":" in host or not _HOSTNAME.match(host) or host.rsplit(".", 1)[-1].isdigit():
        raise InviteError(f"invite: {host!r} is not an IP address or host name")
    return host


def _address(host: str, port: int) -> Address:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise InviteError(f"invite: port {port} is outside 1..65535")
    return Address(normal_host(host), port)


def encode_invite(
    addresses: Iterable[Address | tuple[str, int]],
    secret: bytes,
    *,
    udp: Iterable[UdpCandidate] = (),
) -> str:
    """The invite text for ``addresses`` (in the order given), the host's reflexive UDP
    candidates ``udp`` (after them) and a 16-byte ``secret``."""
    addrs = [_address(*a) if isinstance(a, tuple) else _address(a.host, a.port) for a in addresses]
    extra = [str(decode_candidate(str(c))) for c in udp]
    if not addrs:
        raise InviteError("invite: at least one address is needed")
    if len(addrs) + len(extra) > MAX_ADDRESSES:
        raise InviteError(
            f"invite: at most {MAX_ADDRESSES} addresses, not {len(addrs) + len(extra)}"
        )
    if len(secret) != SECRET_BYTES:
        raise InviteError(f"invite: the secret must be {SECRET_BYTES} bytes")
    text = base64.b32encode(secret).decode("ascii").rstrip("=").lower()
    body = f"{INVITE_PREFIX}-{'+'.join([str(a) for a in addrs] + extra)}-{text}"
    return f"{body}-{_check(body)}"


def decode_address(text: str) -> Address:
    """One ``HOST_PORT`` address, as in an invite."""
    host, sep, port = text.rpartition("_")
    if not sep or not host:
        raise InviteError(f"invite: address {text!r} lacks its port (HOST_PORT)")
    if not port.isdigit() or not 1 <= int(port) <= 65535 or len(port) > 5:
        raise InviteError(f"invite: port {port!r} of {host} is not a number 1..65535")
    return Address(normal_host(host), int(port))


def decode_invite(text: str) -> Invite:
    """Parse an invite as typed or pasted; raises :class:`InviteError` with a one-line reason."""
    s = "".join(strip_typing(text).split())  # copying may add line breaks, spaces or quotes
    if len(s) > MAX_INVITE_CHARS:
        raise InviteError(f"invite: longer than {MAX_INVITE_CHARS} characters: not an invite")
    if not s.isascii():
        odd = next(c for c in s if not c.isascii())
        raise InviteError(
            f"invite: {odd!r} cannot appear in an invite (letters, digits, - . : _ +)"
        )
    prefix = s.split("-", 1)[0]
    if prefix in OLD_PREFIXES:
        raise InviteError(
            f"this is an invite from an older release ({prefix}-): both players need "
            "p2pkoikoi with protocol version 2 or later (invites start with koi2-): update, then "
            "ask the host for a new invite"
        )
    if not s.startswith(INVITE_PREFIX + "-"):
        raise InviteError(f"not an invite: it should start with {INVITE_PREFIX}-")
    bad = next((c for c in s if c not in _ALLOWED), None)
    if bad is not None:
        raise InviteError(
            f"invite: {bad!r} cannot appear in an invite (letters, digits, - . : _ +)"
        )
    parts = s[len(INVITE_PREFIX) + 1 :].rsplit("-", 2)
    if len(parts) != 3 or not all(parts):
        raise InviteError("invite is incomplete: expected koi2-ADDRESSES-SECRET-CHECK")
    addr_text, secret_text, check = parts
    if check != _check(s.rsplit("-", 1)[0]):
        raise InviteError("invite checksum does not match: it was mistyped or cut short")
    items = addr_text.split("+")
    if len(items) > MAX_ADDRESSES:
        raise InviteError(f"invite: {len(items)} addresses, at most {MAX_ADDRESSES} are allowed")
    udp = tuple(decode_candidate(a) for a in items if is_typed_candidate(a))
    addresses = tuple(decode_address(a) for a in items if not is_typed_candidate(a))
    if not addresses:
        raise InviteError("invite: it lists no TCP address (every entry is a UDP candidate)")
    if len(secret_text) != 26:
        raise InviteError("invite: the secret should be 26 characters")
    wrong = [c for c in secret_text if c not in "abcdefghijklmnopqrstuvwxyz234567"]
    if wrong:
        raise InviteError(f"invite: {wrong[0]!r} cannot appear in the secret (base32: a-z, 2-7)")
    try:
        secret = base64.b32decode(secret_text.upper() + "======")
    except ValueError:
        raise InviteError("invite: the secret is not valid base32") from None
    return Invite(addresses, secret, udp)


def spaced_invite(invite: str) -> str:
    """The invite for reading aloud: addresses, then the secret in groups of four.

    No group starts with a hyphen (a shell would take it for an option): each
    group that needs one ends with it.  :func:`decode_invite` ignores the spaces::

        koi2-192.0.2.7_7777- aaaq eaye audo cajb ifqy diob 4- eybt
    """
    s = "".join(strip_typing(invite).split())
    head, sep, check = s.rpartition("-")
    body, sep2, secret = head.rpartition("-")
    if not sep or not sep2 or not body:
        return invite
    addrs = body.replace("+", "+ ")
    groups = [secret[i : i + 4] for i in range(0, len(secret), 4)]
    return f"{addrs}- {' '.join(groups)}- {check}"


def parse_join_target(text: str) -> Invite | ShortCode:
    """What ``join`` was given: a long invite (``koi2-...``) or a short code (``7-...``)."""
    s = strip_typing(text).strip()
    if looks_like_code(s):
        return decode_code(s)
    if looks_like_answer(s):
        raise InviteError(
            "this is an answer (koia-), not an invite: the host pastes it into its waiting "
            'screen (or sends it as {"answer": TEXT} to a headless host)'
        )
    if s.startswith("koi"):
        return decode_invite(s)
    if not s:
        raise InviteError("no invite or code given")
    raise InviteError(
        "not an invite or a code: an invite starts with koi2-, a code looks like "
        "7-crossover-clockwork"
    )
