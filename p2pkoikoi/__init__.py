"""p2pkoikoi: peer-to-peer Koi-Koi for the terminal.

Layers, each importing only the ones below it:

1. :mod:`p2pkoikoi.engine`    -- cards, rules, yaku, deal, round and match state machine (stdlib only)
2. :mod:`p2pkoikoi.session`   -- the wire protocol as a sans-I/O state machine
3. :mod:`p2pkoikoi.transport` -- trio streams, timeouts, the one writer task
4. :mod:`p2pkoikoi.ui` and :mod:`p2pkoikoi.cli` -- the prompt_toolkit table and the command line

:mod:`p2pkoikoi.bots` sits beside the interface and uses only the engine and a player's view.
"""

__version__ = "0.2.0"
