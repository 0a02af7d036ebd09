"""The command line: one dispatcher, one module per group of commands.

Every command module has ``register(subparsers)``, which adds its parsers and
sets ``func`` to a ``run(args) -> int``.  :func:`main` parses, runs, and is the
one place that turns a :class:`~p2pkoikoi.engine.errors.KoiKoiError` into a
one-line message on stderr and its exit status: no traceback reaches a user.

Parsing is argparse's (:mod:`p2pkoikoi.cli.parsing`, imported only when needed),
except for a command in :data:`QUICK_ARGS`, whose module parses its plain command
lines itself and hands anything else to argparse: ``verify RECORD`` starts without
importing argparse at all.
"""

from __future__ import annotations

import gc
import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import NoReturn


def load(name: str) -> ModuleType:
    """The module ``name``, imported: commands' modules load only when they run."""
    return importlib.import_module(name)


def command_of(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word, unless that is an option
    (``-h score`` shows the whole help, so everything is built)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


#: commands whose module parses their plain command lines without argparse
#: (``quick_args(words)``: a namespace, or None to leave it to argparse), so the
#: common case skips importing argparse and building a parser
QUICK_ARGS = {"verify": "p2pkoikoi.cli.verify_cmd"}


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
        import warnings

        warnings.filterwarnings(
            "ignore", message="coroutine .* was never awaited", category=RuntimeWarning
        )
    # the parser names no engine module: --help and a usage error start without it
    command = command_of(argv)
    args = None
    if command in QUICK_ARGS:
        args = load(QUICK_ARGS[command]).quick_args(argv[1:])
    if args is None:
        from p2pkoikoi.cli.parsing import parse

        args = parse(argv, command)
    func = getattr(args, "func", None)
    try:
        if func is None:
            start = load("p2pkoikoi.cli.play_cmds").run_start_screen
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
#: ``MAX_RECORD_BYTES``), so the little cyclic garbage they make goes with the process
ONE_SHOT = frozenset({"verify"})


def entry() -> NoReturn:
    """The program (``p2pkoikoi`` and ``python -m p2pkoikoi``): :func:`main`, then exit.

    The command is over when :func:`main` returns, and has closed what it wrote
    (records are written and closed by their keepers, never left to a finaliser).
    The interpreter's last garbage collection would then only walk every object of
    every module loaded to free memory that the process gives back anyway:
    :func:`gc.freeze` leaves those objects out of it; ``atexit`` handlers and the
    flush of the standard streams run as usual.  Tests call :func:`main`, which
    freezes nothing.  A command in :data:`ONE_SHOT` runs without the cycle collector.
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
