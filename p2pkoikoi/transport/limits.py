"""The bounds the network transport applies: timeouts, the read size, the chatter budget.

Times are parameters (:class:`Timeouts`) and all waiting uses trio's clock,
so tests run whole matches under ``MockClock(autojump_threshold=0)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from p2pkoikoi.engine import KoiKoiError
from p2pkoikoi.session import WaitingFor
from p2pkoikoi.transport.errors import PeerTimeoutError, RevealTimeoutError

#: the most bytes one read takes from a stream
RECEIVE_SIZE: Final = 65536
#: pings, pongs and chats a peer may send in a burst, and per second after it; an
#: honest peer pings every few seconds and people chat far slower
CHATTER_BURST: Final = 64
CHATTER_RATE: Final = 16.0
#: the most bytes waiting for the writer: a peer that stops reading while we
#: still have things to say (our moves, chat) is cut off here instead of growing
#: our memory without bound; a whole match is far smaller
OUTGOING_LIMIT: Final = 256 * 1024
#: what a closing connection reads and discards, at most, while it waits for the
#: other side's end (a peer that keeps sending is not waited for)
LINGER_BYTES: Final = 256 * 1024
#: the host's person answers a changed-key question within this share of a handshake
#: step: the joiner waits that long for the commitment once it has accepted the rules
KEY_QUESTION_SHARE: Final = 0.6


@dataclass(frozen=True)
class Timeouts:
    """Every bound the transport applies, in seconds of trio's clock."""

    handshake: float = 30.0  #: each handshake step (hello, auth, commit, value, final signature)
    reveal: float = 30.0  #: the host's reveal after our value; missing = the host forfeits
    rules_decision: float = 300.0  #: a person reading the proposed rules
    connect: float = 15.0  #: the joiner's TCP connect
    ping_interval: float = 5.0  #: ping when we sent nothing for this long
    silence_warn: float = 15.0  #: a silent peer is reported after this long
    silence_fail: float = 30.0  #: ... and the connection counts as lost after this long
    #: after a lost connection: how long the joiner redials / the host waits for it
    reconnect_window: float = 120.0
    backoff_initial: float = 1.0  #: the joiner's first pause between redials (doubles)
    backoff_max: float = 10.0  #: ... up to this pause
    #: the joiner's Happy Eyeballs delay between starting two addresses (RFC 8305: 250 ms)
    stagger: float = 0.25
    #: the turn limit is agreed in the handshake; the waiting side adds this much for
    #: latency before it ends the match as the other player's forfeit by time
    turn_grace: float = 10.0
    #: a link that ends waits this long for the other side to end too, so that what
    #: it sent last is not lost to a reset (:func:`~p2pkoikoi.transport.link.connection.close_gracefully`)
    linger: float = 3.0


def turn_warning(limit: float) -> float:
    """Seconds before its turn limit runs out that the player to act is warned
    (a minute, or half the limit when that is shorter)."""
    return min(60.0, limit / 2)


def step_limit(t: Timeouts, step: WaitingFor) -> tuple[float, KoiKoiError]:
    """How long a handshake step may take, and the error (one line) when it takes longer."""
    if step is WaitingFor.REVEAL:
        return t.reveal, RevealTimeoutError(
            f"the host committed to its random value but did not reveal it within "
            f"{t.reveal:g}s: the host forfeits the match"
        )
    if step in (WaitingFor.LOCAL_RULES_DECISION, WaitingFor.PEER_RULES_DECISION):
        who = "you" if step is WaitingFor.LOCAL_RULES_DECISION else "the other player"
        return t.rules_decision, PeerTimeoutError(
            f"{who} did not accept or decline the rules within {t.rules_decision:g}s"
        )
    what = step.value.replace("_", " ")
    return t.handshake, PeerTimeoutError(
        f"timed out after {t.handshake:g}s waiting for the {what} (handshake step)"
    )


class ChatterBudget:
    """A token bucket for the pings, pongs and chats a peer sends: a flood ends the link.

    Full at :data:`CHATTER_BURST`; refills at :data:`CHATTER_RATE` a second of
    trio's clock (the caller passes ``now``).
    """

    def __init__(self, now: float) -> None:
        self._tokens = float(CHATTER_BURST)
        self._at = now

    def take(self, now: float) -> bool:
        """Count one message; False when the budget is spent (a flood)."""
        self._tokens = min(float(CHATTER_BURST), self._tokens + (now - self._at) * CHATTER_RATE)
        self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False
