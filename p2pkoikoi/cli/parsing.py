"""The command line's argparse half: the parsers, built only when a command line needs them.

:func:`p2pkoikoi.cli.main` hands a command line here unless its command parses
it faster on its own (:data:`p2pkoikoi.cli.QUICK_ARGS`: ``verify``'s plain forms).  Everything argparse reports (usage errors,
``--help``, abbreviations) is said here, in one line with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from p2pkoikoi import HOME_URL, __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: command modules, in the order their commands appear in ``--help``
COMMAND_MODULES = (
    "p2pkoikoi.cli.play_cmds",
    "p2pkoikoi.cli.net_cmds",
    "p2pkoikoi.cli.id_cmd",
    "p2pkoikoi.cli.engine_cmds",
    "p2pkoikoi.cli.verify_cmd",
    "p2pkoikoi.cli.history_cmd",
    "p2pkoikoi.cli.replay_cmd",
    "p2pkoikoi.cli.selfplay_cmd",
)

#: the module of each command: a command line naming one builds only that module's
#: parsers (``verify`` need not import the engine commands' preset table nor the
#: network commands' defaults).  An unknown or absent command builds them all;
#: tests/house/test_startup.py checks this table against what each module registers.
COMMAND_MODULE = {
    "practice": "p2pkoikoi.cli.play_cmds",
    "host": "p2pkoikoi.cli.net_cmds",
    "join": "p2pkoikoi.cli.net_cmds",
    "resume": "p2pkoikoi.cli.net_cmds",
    "id": "p2pkoikoi.cli.id_cmd",
    "score": "p2pkoikoi.cli.engine_cmds",
    "cards": "p2pkoikoi.cli.engine_cmds",
    "deal": "p2pkoikoi.cli.engine_cmds",
    "rules": "p2pkoikoi.cli.engine_cmds",
    "bench": "p2pkoikoi.cli.engine_cmds",
    "verify": "p2pkoikoi.cli.verify_cmd",
    "history": "p2pkoikoi.cli.history_cmd",
    "replay": "p2pkoikoi.cli.replay_cmd",
    "selfplay": "p2pkoikoi.cli.selfplay_cmd",
}


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it (``COLUMNS``,
    then standard output's terminal, else 80), without importing ``shutil``: argparse
    makes a formatter for every argument it adds, and ``shutil`` (with the
    compression modules it imports) was a tenth of ``verify``'s start-up."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, but a web address stays whole on one line (argparse
    would break it at a hyphen or in the middle, and nobody could click or copy it)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _columns() - 2 if width is None else width
        )

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap  # only to show help

        return textwrap.wrap(
            " ".join(text.split()), width, break_long_words=False, break_on_hyphens=False
        )

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        return textwrap.fill(
            " ".join(text.split()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line with exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"p2pkoikoi: {message} (see p2pkoikoi {self._sub_name()}--help)\n")
        raise SystemExit(2)

    def _sub_name(self) -> str:
        parts = self.prog.split()[1:]
        return " ".join(parts) + " " if parts else ""


def build_parser(*, arguments: bool = True) -> argparse.ArgumentParser:
    """The whole program's parser, every command's (a named command is parsed by
    :func:`command_parser` alone).

    ``arguments=False`` leaves each command's parser empty, its name and one-line
    help alone (:class:`_CommandList`): what the whole program's ``--help``, an
    unknown command and the start screen need."""
    parser = _Parser(
        prog="p2pkoikoi",
        description="Peer-to-peer Koi-Koi for the terminal. With no command, opens the start screen.",
        epilog=f"Documentation: {HOME_URL}",
    )
    parser.add_argument("--version", action="version", version=f"p2pkoikoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a command group not built yet
                continue
            raise
        module.register(sub if arguments else _CommandList(sub))
    return parser


class _CommandList:
    """What a command module's ``register`` is handed when only the list of commands
    is wanted: ``add_parser`` makes the command's entry (its name and help) and hands
    back a stand-in that takes the command's arguments and drops them: the page
    shows none of them, so none are built.  tests/house/test_startup.py checks that the
    page, and the answer to an unknown command, are the same."""

    def __init__(self, subparsers: Any) -> None:
        self._subparsers = subparsers

    def add_parser(self, name: str, **kwargs: Any) -> _Dropped:
        self._subparsers.add_parser(name, help=kwargs.get("help"))
        return _DROPPED


class _Dropped:
    """A parser, an argument group or an action as a command's ``register`` uses them,
    doing nothing: every method it calls returns this object again."""

    def __getattr__(self, name: str) -> Any:
        return self._nothing

    def _nothing(self, *args: object, **kwargs: object) -> _Dropped:
        return self


_DROPPED = _Dropped()


class _OneCommand:
    """What a command module's ``register`` is handed when the command line names its
    command: ``add_parser`` makes each parser on its own, as ``p2pkoikoi NAME``, the
    parser the subparsers action would make, without building the whole program's
    parser and every other command's beside it."""

    def __init__(self) -> None:
        self.parsers: dict[str, argparse.ArgumentParser] = {}

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.pop("help", None)  # the whole program's list of commands shows it
        parser = _Parser(prog=f"p2pkoikoi {name}", **kwargs)
        self.parsers[name] = parser
        return parser


def command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of one known ``command`` (:data:`COMMAND_MODULE`), on its own: it
    parses the words after the command's name."""
    one = _OneCommand()
    importlib.import_module(COMMAND_MODULE[command]).register(one)
    return one.parsers[command]


def parse(argv: Sequence[str], command: str | None) -> argparse.Namespace:
    """``argv`` (the words after the program's name, naming ``command``: see
    :func:`p2pkoikoi.cli.command_of`) parsed; a usage error, an unknown word or
    ``--help`` ends the program here (exit status 2, or 0 for help)."""
    if command in COMMAND_MODULE:
        args, extra = command_parser(command).parse_known_args(argv[1:])
        args.command = command
    else:  # no command, or an unknown one: the whole program's parser says what it takes
        args, extra = build_parser(arguments=False).parse_known_args(argv)
    if extra:  # name the command whose --help lists what it takes
        command = getattr(args, "command", None)
        see = f"p2pkoikoi {command} --help" if command else "p2pkoikoi --help"
        sys.stderr.write(f"p2pkoikoi: unrecognized arguments: {' '.join(extra)} (see {see})\n")
        raise SystemExit(2)
    return args
