"""Settings for every test: no test may reach the public BitTorrent DHT.

A ``p2pkoikoi host`` or ``join`` uses the usual public bootstrap nodes unless told
otherwise; every process a test starts inherits this environment, so the DHT is
off unless the test names its own nodes (``--dht-bootstrap``, the lab's).
"""

from __future__ import annotations

import os

os.environ["P2PKOIKOI_DHT"] = "off"
