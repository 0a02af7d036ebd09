"""The command line: one dispatcher, one module per group of commands.

Every command module has ``register(subparsers)``, which adds its parsers and
sets ``func`` to a ``run(args) -> int``.  :func:`main` parses, runs, and is the
one place that turns a :class:`~p2pkoikoi.engine.errors.KoiKoiError` into a
one-line message on stderr and its exit status: no traceback reaches a user.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

from p2pkoikoi import HOME_URL, __version__

# ``typing.TYPE_CHECKING`` without importing ``typing``: the command line's modules
# (every one of them, for ``--help``) use it for annotations only, and in a normal
# install (no editable-install hook at start-up) importing it was about a ninth of
# ``--help``'s instructions (issue 25).  Type checkers read any ``TYPE_CHECKING`` as
# true.  The cli modules ``--help`` builds do the same; tests/test_startup.py checks.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

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
#: tests/test_startup.py checks this table against what each module registers.
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


def command_of(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word, unless that is an option
    (``-h score`` shows the whole help, so everything is built)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def build_parser() -> argparse.ArgumentParser:
    """The whole program's parser, every command's (a named command is parsed by
    :func:`command_parser` alone)."""
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
        module.register(sub)
    return parser


class _OneCommand:
    """What a command module's ``register`` is handed when the command line names its
    command: ``add_parser`` makes each parser on its own, as ``p2pkoikoi NAME``, the
    parser the subparsers action would make.  Hanging them under the whole program's
    parser cost ``verify`` a third of its parsing (every ``ArgumentParser`` looks its
    texts up with ``gettext``, a file system look-up each; issue 25)."""

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


def _tolerant_output() -> None:
    """Let a terminal or pipe that cannot encode a character (an ASCII or
    Latin-1 locale, ``PYTHONIOENCODING=ascii``) show a replacement instead of
    ending the command with a UnicodeEncodeError: names such as Gokō (五光), or
    a file name that is not UTF-8."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure) and getattr(stream, "errors", None) == "strict":
            try:  # noqa: SIM105 (contextlib.suppress: --help would import contextlib)
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def protect_read_aloud(argv: Sequence[str]) -> list[str]:
    """``join``'s words as read aloud may start with a hyphen (``-eybt``, an old
    display's last group): argparse would take them for options.  Such a word
    (a hyphen then a letter or digit, after ``join``) gets a leading space, which
    argparse does not see as an option and the invite parser ignores."""
    out = list(argv)
    if "join" not in out:
        return out
    for i in range(out.index("join") + 1, len(out)):
        word = out[i]
        dashed = len(word) > 1 and word[0] == "-" and word[1].isalnum() and word != "-h"
        if dashed and out[i - 1] not in _JOIN_VALUE_OPTIONS:
            out[i] = " " + word
    return out


#: options of ``join`` (and the common ones) that take a value: the next word is theirs
_JOIN_VALUE_OPTIONS = frozenset(
    (
        "--expect-rules",
        "--set",
        "--bot",
        "--bot-seed",
        "--name",
        "--record",
        "--config-dir",
        "--timeout",
        "--reconnect-window",
    )
)


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_output()
    argv = protect_read_aloud(sys.argv[1:] if argv is None else argv)
    if command_of(argv) not in NO_COROUTINES:
        # Ctrl-C lands wherever trio happens to be; a coroutine it had created but not
        # yet started is then dropped, and Python would print a warning below our one
        # line.  (The filter compiles its pattern: a one-shot command skips it.)
        warnings.filterwarnings(
            "ignore", message="coroutine .* was never awaited", category=RuntimeWarning
        )
    # the parser names no engine module: --help and a usage error start without it
    command = command_of(argv)
    if command in COMMAND_MODULE:
        args, extra = command_parser(command).parse_known_args(argv[1:])
        args.command = command
    else:  # no command, or an unknown one: the whole program's parser says what it takes
        args, extra = build_parser().parse_known_args(argv)
    if extra:  # name the command whose --help lists what it takes
        command = getattr(args, "command", None)
        see = f"p2pkoikoi {command} --help" if command else "p2pkoikoi --help"
        sys.stderr.write(f"p2pkoikoi: unrecognized arguments: {' '.join(extra)} (see {see})\n")
        raise SystemExit(2)
    func = getattr(args, "func", None)
    try:
        if func is None:
            start = importlib.import_module("p2pkoikoi.cli.play_cmds").run_start_screen
            return int(start(args))
        return int(func(args))
    except KeyboardInterrupt:
        sys.stderr.write("p2pkoikoi: interrupted\n")
        return 130
    except Exception as exc:
        return _report(exc)


#: commands that run no trio (no coroutine to drop on Ctrl-C)
NO_COROUTINES = frozenset({"verify", "score", "cards", "deal", "rules", "id", "history"})

#: commands that :func:`entry` runs without the cycle collector (each ends within a
#: fraction of a second, its work bounded by its input: ``verify`` reads at most
#: ``MAX_RECORD_BYTES``)
ONE_SHOT = frozenset({"verify"})


def entry() -> NoReturn:
    """The program (``p2pkoikoi`` and ``python -m p2pkoikoi``): :func:`main`, then exit.

    The command is over when :func:`main` returns, and has closed what it wrote
    (records are written and closed by their keepers, never left to a finaliser).
    The interpreter's last garbage collection would then only walk every object
    of every module loaded to free memory that the process gives back anyway: a
    tenth of ``p2pkoikoi verify``'s CPU time (issue 25).  :func:`gc.freeze` leaves
    those objects out of it; ``atexit`` handlers and the flush of the standard
    streams run as before.  Tests call :func:`main`, which freezes nothing.

    A command in :data:`ONE_SHOT` (a bounded job: read, check, print, exit) runs
    without the cycle collector at all: its collections while the modules load
    cost it another 5 ms, and what little cyclic garbage it makes goes with the
    process a moment later.
    """
    if command_of(sys.argv[1:]) in ONE_SHOT:
        gc.disable()
    code = main()
    gc.freeze()
    raise SystemExit(code)


def _report(exc: Exception) -> int:
    """The one line and exit status for an error a command raised (re-raises a bug)."""
    from p2pkoikoi.engine.errors import KoiKoiError

    if isinstance(exc, KoiKoiError):
        sys.stderr.write(f"p2pkoikoi: {exc}\n")
        return exc.exit_code
    if isinstance(exc, BrokenPipeError):
        return 1
    if isinstance(exc, OSError):
        sys.stderr.write(
            f"p2pkoikoi: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}\n"
        )
        return 1
    raise exc
