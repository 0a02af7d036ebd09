"""Errors of the transport layer; each message is one line the user reads.

They derive from :class:`KoiKoiError` so the CLI dispatcher prints them and
exits with their ``exit_code`` without a traceback.
"""

from __future__ import annotations

import os
from typing import NoReturn

from p2pkoikoi.engine.errors import KoiKoiError


class TransportError(KoiKoiError):
    """Base of the network errors: the connection, not the game, went wrong."""

    exit_code = 1


class ConnectError(TransportError):
    """We could not reach the other player (refused, unreachable, no listener)."""


class PeerTimeoutError(TransportError):
    """A handshake step took longer than its deadline."""


class TurnTimeoutError(PeerTimeoutError):
    """The other player let the agreed turn limit pass (plus a grace for latency):
    it forfeits by time, recorded so and signed by us."""


class RevealTimeoutError(PeerTimeoutError):
    """The host committed to a value but never revealed it: the host forfeits."""


class PeerSilentError(TransportError):
    """The peer stopped answering heartbeats for longer than the hard bound."""


class ListenAddressError(ConnectError):
    """``--bind`` names an address this machine does not have, or no address at all."""

    exit_code = 2


class IdentityChangedError(TransportError):
    """A known name arrived with another key, and the user did not accept it."""


class DeclinedError(TransportError):
    """This player chose not to play (Decline on the rules screen): an answer, not a fault."""


class ConfigError(TransportError):
    """The identity or known-peers file cannot be read or written."""

    exit_code = 2


class PeerFloodError(TransportError):
    """The peer sent pings or chats far faster than any honest program does."""


def os_reason(exc: OSError) -> str:
    """The reason an OS error gives, looking inside trio's "all attempts to
    connect ... failed", whose cause holds each address's own error."""
    if exc.strerror:
        return exc.strerror
    cause = exc.__cause__
    inner = list(cause.exceptions) if isinstance(cause, BaseExceptionGroup) else [cause]
    reasons = []
    for err in inner:
        if isinstance(err, OSError) and (err.errno or err.strerror):
            reason = os.strerror(err.errno) if err.errno else str(err.strerror)
            if reason not in reasons:
                reasons.append(reason)
    return "; ".join(reasons) or str(exc)


def raise_single(group: BaseExceptionGroup[BaseException]) -> NoReturn:
    """Raise the one error inside ``group`` by itself (see :func:`leaves`), or the
    group when it holds several."""
    errs = leaves(group)
    if len(errs) == 1:
        raise errs[0] from None
    raise group


def leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The errors inside nested exception groups (a nursery wraps even one error in a
    group; callers and the CLI want the one error itself, with its one-line message)."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(leaves(exc))
        else:
            out.append(exc)
    return out
