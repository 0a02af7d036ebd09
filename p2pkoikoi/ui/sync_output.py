"""Synchronized output: each frame is drawn between "begin" and "end synchronized update".

Why: a full-screen frame is written row by row, and a page change rewrites all 24 of
them; a terminal that reads the bytes as they come shows half a frame for a moment.
Terminals with synchronized output (DEC private mode 2026: kitty, WezTerm, foot,
iTerm2, Windows Terminal, Alacritty, tmux 3.4) hold the screen until the frame ends;
the others ignore the mode.  The same marks tell a program reading the terminal's
bytes where each frame ends: the pseudo-terminal tests (``tests/pty_terminal.py``)
read only whole frames, so they never act on a screen that is half the old page.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.output.vt100 import Vt100_Output

BEGIN = "\x1b[?2026h"
END = "\x1b[?2026l"


def synchronize_output(app: Application[Any]) -> None:
    """Bracket every frame ``app`` draws with :data:`BEGIN` and :data:`END`."""
    output = app.output
    if not isinstance(output, Vt100_Output):  # a Windows console, or a dummy in tests
        return

    def begin(_: object) -> None:
        output.write_raw(BEGIN)  # buffered: it leaves with the frame's first bytes

    def end(_: object) -> None:
        output.write_raw(END)
        output.flush()

    app.before_render += begin
    app.after_render += end
