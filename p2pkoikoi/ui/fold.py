"""A prompt_toolkit control whose text is made for the size it is drawn at.

The event log shows its newest rows folded to the window's width; how many
rows fit is known only when prompt_toolkit draws the window, so the text
function gets ``(width, height)`` (a ``FormattedTextControl`` gets neither).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text.utils import split_lines
from prompt_toolkit.layout import Dimension, Window
from prompt_toolkit.layout.controls import FormattedTextControl, UIContent, UIControl


class SizedText(UIControl):
    """``fn(width, height)`` -> formatted text, drawn from its first line (no mouse)."""

    def __init__(self, fn: Callable[[int, int], StyleAndTextTuples]) -> None:
        self.fn = fn

    def create_content(self, width: int, height: int) -> UIContent:
        lines = list(split_lines(self.fn(width, height)))
        return UIContent(get_line=lambda i: lines[i], line_count=len(lines))


#: the table's side panel width, and the most the cards' part takes (a wider
#: terminal leaves the rest empty rather than putting the panel far from the cards)
SIDE, BOARD_MAX = 22, 72
#: from this many rows the captures show as whole tiles, a line per kind
TALL = 36


def board_width(columns: int) -> int:
    """The cards' part of a table ``columns`` wide: what the side panel leaves."""
    return max(20, min(columns - SIDE - 1, BOARD_MAX))


def folded_window(
    fn: Callable[[], StyleAndTextTuples], width: Callable[[], int], **control: Any
) -> Window:
    """A window of ``fn()`` folded to ``width()``, exactly as tall as the folded text."""
    from p2pkoikoi.ui.render import fold, join_lines

    def lines() -> list[StyleAndTextTuples]:
        return fold(fn(), width())

    return Window(
        FormattedTextControl(lambda: join_lines(lines()), **control),
        height=lambda: Dimension.exact(max(1, len(lines()))),
        wrap_lines=False,
    )
