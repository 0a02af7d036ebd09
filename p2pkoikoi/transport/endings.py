"""Why a link ended, in one line: the error a failure is raised as, and its linger.

A link that fails keeps one :class:`KoiKoiError`, the line a person reads and a
script catches.  :func:`failure` tells the session the other player is gone
(who owes the next step forfeits) and words the error with what follows from it:
who forfeits and why, and, for a host whose reveal the joiner never confirmed,
that the joiner's record may count the end as the host's forfeit.  The kind of
error stays the same (callers and tests tell them apart).  :func:`linger`
says how long the ending connection waits for the other side's end.
"""

from __future__ import annotations

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import Session
from p2pkoikoi.session.forfeits import HOST_STOPPED
from p2pkoikoi.session.record import TIME_FORFEIT
from p2pkoikoi.transport.errors import (
    PeerFloodError,
    PeerSilentError,
    PeerTimeoutError,
    TransportError,
    TurnTimeoutError,
)
from p2pkoikoi.transport.limits import Timeouts


def failure(exc: KoiKoiError, session: Session, seat: int, names: tuple[str, str]) -> KoiKoiError:
    """The error a link that stops for good with ``exc`` keeps, once ``session``
    knows the other player is gone (``seat`` is ours, ``names`` both players')."""
    session.peer_gone()  # between the joiner's value and the reveal: host forfeits
    if isinstance(exc, PeerSilentError | PeerFloodError):
        # it left (or flooded us off) and did not come back within the window
        session.peer_left()
        left = session.forfeit
        if left is not None and left.seat != seat and left.reason != TIME_FORFEIT:
            who = names[left.seat]
            # a forfeit is the end: no "continue it later with p2pkoikoi resume"
            text = str(exc).split("; the match is unfinished")[0]
            exc = _reworded(exc, f"{text}: {who} forfeits the match ({left.reason})")
    forfeit = session.forfeit
    if forfeit is not None and forfeit.seat != seat and "forfeits" not in str(exc):
        who = "the host" if forfeit.seat == 0 else "the joiner"
        exc = _reworded(
            exc,
            f"{forfeit.reason} ({exc}): {who} forfeits the match"
            if forfeit.reason == HOST_STOPPED
            else f"{exc}: {who} forfeits the match ({forfeit.reason})",
        )
    if seat == 0 and session.match is not None and not session.joiner_started:
        # we revealed, but the joiner never confirmed it: if the reveal was lost on
        # the way, the joiner's program counts the end as our forfeit (protocol 8)
        exc = _reworded(
            exc,
            f"{exc} (before the joiner confirmed your reveal: if it never arrived, "
            "the joiner's record counts this as your forfeit)",
        )
    return exc


def linger(error: KoiKoiError | None, timeouts: Timeouts) -> float:
    """How long the ending connection waits for the other side's end (see
    :func:`~p2pkoikoi.transport.connection.close_gracefully`): not at all for a
    peer that fell silent, flooded us or let a handshake step run out."""
    if isinstance(error, PeerSilentError | PeerFloodError) or (
        isinstance(error, PeerTimeoutError) and not isinstance(error, TurnTimeoutError)
    ):
        return 0.0
    return timeouts.linger


def _reworded(exc: KoiKoiError, text: str) -> KoiKoiError:
    """The same kind of error (callers and tests tell them apart) with more to say."""
    try:
        new = type(exc)(text)
    except TypeError:
        return TransportError(text)
    return new if isinstance(new, KoiKoiError) else TransportError(text)
