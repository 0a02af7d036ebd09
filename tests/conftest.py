"""Settings for every test: no test may reach a public STUN server or the public
BitTorrent DHT.

The CLI reads ``$P2PKOIKOI_STUN`` when neither ``--stun`` nor ``--no-stun`` is
given, and ``$P2PKOIKOI_DHT`` when neither ``--dht-bootstrap`` nor ``--no-dht``
is; the processes tests spawn inherit both from this environment, so STUN and
the DHT are off unless a test names its own servers and nodes (the lab's)."""

from __future__ import annotations

import os

os.environ["P2PKOIKOI_STUN"] = "none"
os.environ["P2PKOIKOI_DHT"] = "off"
