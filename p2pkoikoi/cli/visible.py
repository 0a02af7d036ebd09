"""Text from a record or a file name, made safe to print on a terminal.

A record is written by whoever sends it to you: its unsigned fields (``missing``,
a forfeit's reason) and even a file's name may hold terminal escapes that
rewrite what ``verify`` or ``history`` printed above them ("verified: ...").
:func:`visible` shows every control, format, private-use, unassigned or line
separator character as a Python-style escape (``\\x1b``, ``\\u202e``), so that
nothing a record holds can move the cursor, recolour or reorder the output,
and what was there can still be read.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final, TextIO

#: the categories that never print as themselves (the same set a name may not hold)
_HIDDEN: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape(ch: str) -> str:
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def visible(text: str) -> str:
    """``text`` with every character that does not print as itself escaped."""
    if text.isascii() and text.isprintable():
        return text  # the common case, fast (and without loading the Unicode database)
    import unicodedata

    return "".join(_escape(c) if unicodedata.category(c) in _HIDDEN else c for c in text)


def line_writer(stream: TextIO) -> Callable[[str], None]:
    """A ``write`` for one line at a time: the text is made :func:`visible` but for
    one newline at its end, so a record's own newlines print as ``\\x0a`` and it
    cannot add lines of its own (a second "verified: ..." line)."""

    def write(text: str) -> None:
        end = "\n" if text.endswith("\n") else ""
        stream.write(visible(text.removesuffix("\n")) + end)

    return write
