"""Each command imports what it needs: the engine commands never load the network stack.

Checked in a fresh interpreter (a subprocess) by looking at ``sys.modules``
after the command ran: a fact about imports, not a timing.  How long start-up
takes is measured by ``p2pkoikoi bench`` (``startup_*`` figures).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.engine.values import replace
from p2pkoikoi.session import encode_record
from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair

HEAVY = ("trio", "cryptography", "prompt_toolkit", "msgpack")
ROOT = Path(__file__).resolve().parents[2]

# The probe runs with ``-S``: the site's start-up hooks (``.pth`` files, which on some
# machines import ``typing`` or ``dataclasses`` before any program runs) stay out, so
# ``sys.modules`` holds what the command itself loaded.  The tree and the installed
# packages' folders go on the path by hand, without running their ``.pth`` files.
PROBE = """
import sys
sys.path[:0] = [ROOT]
sys.path.extend(SITE_DIRS)
import contextlib, io
from p2pkoikoi.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(repr({"code": code, "modules": sorted(sys.modules), "out": out.getvalue()}))
"""


def site_dirs() -> list[str]:
    """The installed packages' folders, as this interpreter's site found them."""
    import site

    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return [d for d in dirs if Path(d).is_dir()]


def run_probe(*argv: str) -> dict[str, object]:
    probe = PROBE.replace("SITE_DIRS", repr(site_dirs())).replace("ROOT", repr(str(ROOT)))
    proc = subprocess.run(
        [sys.executable, "-S", "-c", probe, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = ast.literal_eval(proc.stdout.splitlines()[-1])
    return result


def loaded(modules: object, name: str) -> bool:
    assert isinstance(modules, list)
    return any(m == name or m.startswith(name + ".") for m in modules)


def record_file(tmp_path: Path, seed: int) -> Path:
    """A finished online match's record, played by random choices from ``seed``."""
    path = tmp_path / "m.koikoi"
    host, joiner = make_pair(get_preset("online"))
    run_pair(host, joiner, random_chooser(seed))
    path.write_bytes(encode_record(host.record()))
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["score", "--rules", "online", "1b", "3b"],
        ["score", "--json", "crane", "curtain", "moon", "rain-man", "phoenix"],
        ["deal", "--match-seed", "00" * 32],
        ["rules"],
        ["rules", "nintendo", "--json"],
        ["rules", "--diff", "online", "nintendo"],
        ["host", "--help"],
        ["selfplay", "--help"],
    ],
    ids=lambda a: " ".join(a)[:30],
)
def test_engine_commands_do_not_import_the_network_stack(argv: list[str]) -> None:
    result = run_probe(*argv)
    assert result["code"] == 0, result
    assert result["out"]
    for name in HEAVY:
        assert not loaded(result["modules"], name), f"{' '.join(argv)} imported {name}"
    # nor the session machine, nor the bots (but selfplay's help lists them)
    for name in (
        "p2pkoikoi.session.session",
        "p2pkoikoi.session.wire",
        "p2pkoikoi.session.crypto",
        "p2pkoikoi.transport.link.network",
        *(() if argv[0] == "selfplay" else ("p2pkoikoi.bots",)),
    ):
        assert not loaded(result["modules"], name), f"{' '.join(argv)} imported {name}"


def test_help_imports_no_engine_session_or_transport() -> None:
    """``--help`` (every command's parser) names presets and ports from cli/facts.py:
    it loads no part of the engine, the session or the network."""
    result = run_probe("--help")
    assert result["code"] == 0 and "verify" in str(result["out"])
    for name in ("p2pkoikoi.engine", "p2pkoikoi.session", "p2pkoikoi.transport", "p2pkoikoi.ui"):
        assert not loaded(result["modules"], name), f"--help imported {name}"


def test_the_help_texts_facts_are_the_engines() -> None:
    from p2pkoikoi.cli import facts
    from p2pkoikoi.engine.presets import DEFAULT_PRESET, PRESETS
    from p2pkoikoi.transport.open.addresses import DEFAULT_PORT

    assert tuple(PRESETS) == facts.PRESET_NAMES
    assert facts.DEFAULT_PRESET == DEFAULT_PRESET and facts.DEFAULT_PORT == DEFAULT_PORT


def test_score_and_rules_do_not_load_the_match_engine() -> None:
    for argv in (["score", "1b", "3b"], ["rules"], ["--help"]):
        result = run_probe(*argv)
        assert not loaded(result["modules"], "p2pkoikoi.engine.match"), argv


def test_verify_loads_the_checks_but_not_the_network(tmp_path: Path) -> None:
    path = record_file(tmp_path, 2)
    result = run_probe("verify", str(path))
    assert result["code"] == 0, result
    modules = result["modules"]
    assert loaded(modules, "nacl")  # the signatures need it
    for name in (
        "trio",
        "prompt_toolkit",
        "zeroconf",
        "msgpack",
        "cryptography",  # keys, key exchange, cipher: the network's, not the checks'
        "p2pkoikoi.session.session",
        "p2pkoikoi.session.verify.hidden",  # an open deal's record: no hidden-deal checks
        "p2pkoikoi.session.records.writer",  # verify reads records, it writes none
        "p2pkoikoi.session.mental",
    ):
        assert not loaded(modules, name), f"verify imported {name}"


def test_each_command_is_built_from_the_module_that_registers_it() -> None:
    """``main`` builds only the named command's module (``COMMAND_MODULE``): that
    table must name, for every command, the module that registers it."""
    import argparse
    import importlib

    from p2pkoikoi.cli import command_of
    from p2pkoikoi.cli.parsing import COMMAND_MODULE, COMMAND_MODULES, command_parser

    registered: dict[str, str] = {}
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(sub)
        for command in sub.choices:
            registered[command] = name
    # a new command needs its line in COMMAND_MODULE (without it, it still works,
    # but builds every command's parser)
    assert registered == COMMAND_MODULE
    for command in COMMAND_MODULE:
        assert command_parser(command).prog == f"p2pkoikoi {command}"
    assert command_of(["--version"]) is None
    assert command_of(["verify", "x.koikoi"]) == "verify"
    assert command_of(["-h", "score", "1b"]) is None  # the whole help


def test_verify_builds_no_other_command(tmp_path: Path) -> None:
    path = record_file(tmp_path, 3)
    result = run_probe("verify", str(path))
    assert result["code"] == 0, result
    for name in (
        "p2pkoikoi.cli.engine_cmds",
        "p2pkoikoi.cli.net_cmds",
        "p2pkoikoi.engine.presets",
        "p2pkoikoi.transport",
    ):
        assert not loaded(result["modules"], name), f"verify imported {name}"


def test_the_program_exits_without_the_last_collection(tmp_path: Path) -> None:
    """``entry`` (the script and ``python -m p2pkoikoi``) freezes the objects before the
    interpreter's exit, and a one-shot command (``verify``) runs without the cycle
    collector; both then exit normally: ``atexit`` handlers run (the probe's prints a
    line) after every line of the report.  A fact about the process's exit, not a
    timing."""
    path = record_file(tmp_path, 4)
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('gc', gc.isenabled(), gc.get_freeze_count() > 0))\n"
        "from p2pkoikoi.cli import entry\n"
        "sys.argv = ['p2pkoikoi', *sys.argv[1:]]\n"
        "entry()\n"
    )
    verify = subprocess.run([sys.executable, "-c", probe, "verify", str(path)],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)  # fmt: skip
    assert verify.returncode == 0, verify.stderr
    *report, last = verify.stdout.splitlines()
    assert report[-1].startswith("verified: "), verify.stdout
    assert last == "gc False True"  # a one-shot command: no collector, objects frozen
    rules = subprocess.run([sys.executable, "-c", probe, "rules"], capture_output=True,
                           text=True, timeout=120, cwd=ROOT)  # fmt: skip
    assert rules.returncode == 0, rules.stderr
    assert rules.stdout.splitlines()[-1] == "gc True True"


def test_a_named_command_is_parsed_by_its_own_parser_alone() -> None:
    """``main`` parses a named command with that command's parser alone
    (``command_parser``): the same parser, usage and help as the whole program's
    subparser, without making the whole program's."""
    from p2pkoikoi.cli.parsing import COMMAND_MODULE, build_parser, command_parser

    whole = build_parser()
    subparsers = whole._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for command in COMMAND_MODULE:
        alone = command_parser(command)
        assert alone.prog == f"p2pkoikoi {command}"
        assert alone.format_help() == subparsers[command].format_help(), command
    args, extra = command_parser("score").parse_known_args(["--rules", "online", "1b"])
    assert (args.rules, args.cards, extra) == ("online", ["1b"], [])


def test_verify_loads_no_parser_library(tmp_path: Path) -> None:
    """``verify RECORD`` parses its plain command lines itself
    (``verify_cmd.quick_args``) and leaves the rest to argparse."""
    path = record_file(tmp_path, 3)
    result = run_probe("verify", str(path))
    assert result["code"] == 0, result
    assert not loaded(result["modules"], "argparse")
    result = run_probe("verify", "--json", str(path))
    assert result["code"] == 0 and '"ok": true' in str(result["out"]), result
    assert not loaded(result["modules"], "argparse")
    # a command line quick_args leaves to argparse still works, through argparse
    result = run_probe("verify", "--js", str(path))
    assert result["code"] == 0 and loaded(result["modules"], "argparse"), result


QUICK_FORMS = [
    ["r.koikoi"],
    ["--json", "r.koikoi"],
    ["r.koikoi", "--json"],
    ["--dir", "/tmp/x", "last"],
    ["3", "--dir=/tmp/x"],
    ["--dir=", "last"],
    ["--json", "--dir", "d", "7"],
    ["-"],  # argparse's "-" is a value, not an option: left to it
    ["--js", "r.koikoi"],  # an abbreviation: argparse's
    ["--help"],
    ["-h"],
    ["--", "-r.koikoi"],
    ["-r.koikoi"],
    ["--json", "--json", "r.koikoi"],
    ["--dir", "a", "--dir", "b", "r"],
    ["--dir", "-x", "r"],
    ["--dir"],
    ["r.koikoi", "s.koikoi"],
    [],
    ["--jsonx", "r"],
    ["--dir=a", "--dir", "b", "r"],
]


@pytest.mark.parametrize("words", QUICK_FORMS, ids=lambda w: " ".join(w) or "(none)")
def test_verify_quick_args_agree_with_argparse(words: list[str]) -> None:
    """Every command line ``quick_args`` parses gives argparse's namespace; what it
    leaves (None) argparse parses or refuses as before."""
    from p2pkoikoi.cli import verify_cmd
    from p2pkoikoi.cli.parsing import command_parser

    quick = verify_cmd.quick_args(words)
    if quick is None:
        return
    args, extra = command_parser("verify").parse_known_args(words)
    assert extra == []
    assert vars(quick) == {**vars(args), "command": "verify"}


def test_verify_quick_args_take_only_the_plain_forms() -> None:
    from p2pkoikoi.cli import verify_cmd

    taken = [w for w in QUICK_FORMS if verify_cmd.quick_args(w) is not None]
    assert taken == QUICK_FORMS[:7]


def test_a_one_shot_command_keeps_its_exit_status_and_output(tmp_path: Path) -> None:
    """``verify``'s status (3 for an incomplete record, 2 for a file that is not a
    record) and every line reach the caller, through a pipe as to a file."""
    host, joiner = make_pair(get_preset("online"))
    run_pair(host, joiner, random_chooser(2))
    unfinished = tmp_path / "u.koikoi"  # the same match, its final signatures missing
    unfinished.write_bytes(encode_record(replace(host.record(), final_sigs=(None, None))))
    junk = tmp_path / "junk.koikoi"
    junk.write_text("not a record")
    me = [sys.executable, "-m", "p2pkoikoi", "verify"]
    proc = subprocess.run([*me, str(unfinished)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "INCOMPLETE" in proc.stdout and proc.stdout.endswith("\n")
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        proc = subprocess.run([*me, "--json", str(junk)], stdout=f, stderr=subprocess.PIPE,
                              text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2
    assert '"exit_status": 2' in out.read_text() and proc.stderr.startswith("p2pkoikoi: ")


def test_the_list_of_commands_is_the_whole_parsers(capsys: pytest.CaptureFixture[str]) -> None:
    """``main`` answers ``--help``, an unknown command and no command with the whole
    program's parser without the commands' arguments (``build_parser(arguments=False)``):
    the same page, the same choices, the same answer to a mistake."""
    from p2pkoikoi.cli.parsing import build_parser

    whole, listing = build_parser(), build_parser(arguments=False)
    assert listing.format_help() == whole.format_help()
    assert listing.format_usage() == whole.format_usage()
    assert vars(listing.parse_known_args([])[0]) == vars(whole.parse_known_args([])[0])
    answers = []
    for argv in (["nosuch"], ["--name", "x"]):
        for parser in (whole, listing):
            with pytest.raises(SystemExit) as ended:
                parser.parse_known_args(argv)
            answers.append((ended.value.code, capsys.readouterr().err))
    assert answers[0] == answers[1] and answers[2] == answers[3]
    assert answers[0][0] == 2 and "invalid choice: 'nosuch'" in answers[0][1]
