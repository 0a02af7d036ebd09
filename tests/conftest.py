"""Settings for every test: no test may reach a public STUN server or the public
BitTorrent DHT.

The CLI reads ``$P2PKOIKOI_STUN`` when neither ``--stun`` nor ``--no-stun`` is
given, and ``$P2PKOIKOI_DHT`` when neither ``--dht-bootstrap`` nor ``--no-dht``
is; the processes tests spawn inherit both from this environment, so STUN and
the DHT are off unless a test names its own servers and nodes (the lab's)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ["P2PKOIKOI_STUN"] = "none"
os.environ["P2PKOIKOI_DHT"] = "off"


@pytest.fixture
def terms() -> Iterator[list[Any]]:
    """The pseudo-terminals a test starts (tests/pty_terminal.py's ``spawn``), each
    closed afterwards, even when the test fails."""
    made: list[Any] = []
    yield made
    for t in made:
        t.close()
