"""What the command line's help texts name, without importing the engine or the
network: building the parser for ``--help`` (or for any command) costs start-up
time, and the preset table alone pulls in the rule engine.

Each value mirrors the one of record elsewhere; tests/house/test_startup.py checks
that they are equal.
"""

from __future__ import annotations

#: p2pkoikoi.engine.presets.PRESETS, in its order
PRESET_NAMES = (
    "online",
    "nintendo",
    "rulebook",
    "vanikar",
    "traditions",
    "toraco",
    "fudawiki",
    "koikoijapan",
)
#: p2pkoikoi.engine.presets.DEFAULT_PRESET
DEFAULT_PRESET = "online"
#: p2pkoikoi.transport.open.addresses.DEFAULT_PORT
DEFAULT_PORT = 47474
