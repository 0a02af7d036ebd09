"""Invites: a short copyable string with the host's address, port and a 128-bit secret.

Format (case-insensitive, surrounding whitespace ignored)::

    koi1-<host>-<port>-<secret>-<check>

``host`` is an IPv4 address, an IPv6 address (plain, with colons) or a DNS
name; ``port`` is decimal 1..65535; ``secret`` is the 16-byte secret in
lowercase RFC 4648 base32 without padding (26 characters); ``check`` is the
first 4 base32 characters of SHA-256("p2pkoikoi/v1/invite\\0" || the text
before the last hyphen, lowercased).  The fields are split from the right,
so host names may contain hyphens.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import ipaddress
import re
from typing import Final

from p2pkoikoi.session.errors import InviteError

INVITE_PREFIX: Final = "koi1"
SECRET_BYTES: Final = 16
_TAG: Final = b"p2pkoikoi/v1/invite\x00"
_HOSTNAME: Final = re.compile(
    r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*"
    r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
)


@dataclasses.dataclass(frozen=True, slots=True)
class Invite:
    host: str
    port: int
    secret: bytes


def _check(body: str) -> str:
    digest = hashlib.sha256(_TAG + body.encode("ascii")).digest()
    return base64.b32encode(digest).decode("ascii")[:4].lower()


def _normal_host(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if ":" in host or not _HOSTNAME.match(host):
        raise InviteError(f"invite: {host!r} is not an IP address or host name")
    return host


def encode_invite(host: str, port: int, secret: bytes) -> str:
    """The invite string for ``host``:``port`` with a 16-byte ``secret``."""
    if len(secret) != SECRET_BYTES:
        raise InviteError(f"invite: the secret must be {SECRET_BYTES} bytes")
    if isinstance(port, bool) or not 1 <= port <= 65535:
        raise InviteError(f"invite: port {port} is outside 1..65535")
    text = base64.b32encode(secret).decode("ascii").rstrip("=").lower()
    body = f"{INVITE_PREFIX}-{_normal_host(host)}-{port}-{text}"
    return f"{body}-{_check(body)}"


def decode_invite(text: str) -> Invite:
    """Parse an invite; raises :class:`InviteError` with a one-line reason."""
    s = "".join(text.split()).lower()  # copying may add line breaks or spaces
    if not s.startswith(INVITE_PREFIX + "-"):
        raise InviteError(f"not an invite: it should start with {INVITE_PREFIX}-")
    if not s.isascii():
        odd = next(c for c in s if not c.isascii())
        raise InviteError(f"invite: {odd!r} cannot appear in an invite (letters, digits, - . :)")
    parts = s[len(INVITE_PREFIX) + 1 :].rsplit("-", 3)
    if len(parts) != 4 or not all(parts):
        raise InviteError("invite is incomplete: expected koi1-HOST-PORT-SECRET-CHECK")
    host, port_text, secret_text, check = parts
    body = s.rsplit("-", 1)[0]
    if check != _check(body):
        raise InviteError("invite checksum does not match: it was mistyped or cut short")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise InviteError(f"invite: port {port_text!r} is not a number 1..65535")
    if len(secret_text) != 26:
        raise InviteError("invite: the secret should be 26 characters")
    bad = [c for c in secret_text if c not in "abcdefghijklmnopqrstuvwxyz234567"]
    if bad:
        raise InviteError(f"invite: {bad[0]!r} cannot appear in the secret (base32: a-z, 2-7)")
    try:
        secret = base64.b32decode(secret_text.upper() + "======")
    except ValueError:
        raise InviteError("invite: the secret is not valid base32") from None
    return Invite(_normal_host(host), int(port_text), secret)
