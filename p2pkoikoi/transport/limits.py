"""The bounds the network transport applies: every timeout, and the read size.

Times are parameters (:class:`Timeouts`) and all waiting uses trio's clock,
so tests run whole matches under ``MockClock(autojump_threshold=0)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: the most bytes one read takes from a stream
RECEIVE_SIZE: Final = 65536


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
