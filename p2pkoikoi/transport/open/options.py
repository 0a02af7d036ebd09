"""A host's and a joiner's options as values: :class:`HostOptions`, :class:`JoinOptions`.

The command line (and a test, a benchmark) builds one of these once from its
arguments and config; :func:`~p2pkoikoi.transport.open.host.open_host` and
:func:`~p2pkoikoi.transport.open.join.open_join` read it where they need it.  A
new option is a field here and a read there, not a parameter threaded through
every function between the two.  Callbacks (``notify``, the answers a host is
given, the joiner's question about the rules) are not options: they stay
parameters of the openers.  Both values are frozen and their repr is pasteable
Python (every field's own repr is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from p2pkoikoi.engine import RuleSet
from p2pkoikoi.session.codes.code import ShortCode
from p2pkoikoi.session.codes.invite import Address
from p2pkoikoi.session.wire import DEFAULT_TURN_LIMIT
from p2pkoikoi.transport.lookup.dht import DhtConfig
from p2pkoikoi.transport.open.addresses import DEFAULT_PORT
from p2pkoikoi.transport.open.gate import GateLimits

#: how long a joiner that showed its answer waits for the host to use it
ANSWER_WAIT: Final = 600.0


@dataclass(frozen=True)
class HostOptions:
    """How a host offers its match (see :func:`~p2pkoikoi.transport.open.host.open_host`).

    ``code``: True makes a fresh short code, a :class:`ShortCode` uses that one,
    False/None none.  ``port=0`` picks a free port.  ``stun``: the servers asked
    for the match socket's reflexive address (none unless named).  ``dht``: the
    code also works across the internet.  ``accept_timeout``: None waits forever.
    ``gate_limits``: None bounds a stranger by the handshake step's time.
    """

    rules: RuleSet
    port: int = DEFAULT_PORT
    bind: str | None = None
    advertise: str | None = None
    accept_timeout: float | None = None
    code: ShortCode | None | bool = True
    gate_limits: GateLimits | None = None
    port_mapping: bool = True
    announce: bool = True
    turn_limit: int = DEFAULT_TURN_LIMIT
    stun: Sequence[tuple[str, int]] = ()
    udp: bool = True
    dht: DhtConfig | None = None


@dataclass(frozen=True)
class JoinOptions:
    """How a joiner looks for and accepts a host (see :func:`~p2pkoikoi.transport.open.join.open_join`).

    ``address``: tried instead of looking (a code) or first (an invite).
    ``expected_rules``: accept exactly these (else the joiner's question decides).
    ``screen``: the invite came from a person, so its loopback and link-local
    addresses are warned about.  ``min_turn_limit``: a host's turn limit under it
    is declined.  ``answer_wait``: how long a shown answer waits for the host.
    """

    address: Address | None = None
    expected_rules: RuleSet | None = None
    stun: Sequence[tuple[str, int]] = ()
    udp: bool = True
    answer_wait: float = ANSWER_WAIT
    screen: bool = False
    min_turn_limit: int = 0
    dht: DhtConfig | None = None
