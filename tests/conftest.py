"""Every test: no STUN server unless the test names one (never the public defaults).

The CLI reads ``$P2PKOIKOI_STUN`` when neither ``--stun`` nor ``--no-stun`` is
given; the processes tests spawn inherit it from this environment."""

from __future__ import annotations

import os

os.environ["P2PKOIKOI_STUN"] = "none"
