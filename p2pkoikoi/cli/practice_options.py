"""A practice match's options as one value (:class:`PracticeOptions`), built once by
the command line or the start screen and read by
:func:`~p2pkoikoi.cli.play_cmds.practice`.  A module of its own so that
``--help``, which builds ``play_cmds``' parser, does not load ``dataclasses``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PracticeOptions:
    """How a practice match is played: the computer's ``level`` (and ``bot_seed``),
    the table's look, the record (``record`` path, or none unless ``keep_record``),
    the tutorial, and the player's ``name`` on the table and in the record."""

    level: str
    ascii: bool = False
    bot_seed: int | None = None
    record: Path | None = None
    keep_record: bool = True
    tutorial: bool = False
    name: str | None = None
