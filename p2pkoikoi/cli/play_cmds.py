"""``p2pkoikoi practice`` and the start screen (``p2pkoikoi`` with no command)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from p2pkoikoi import doc_url
from p2pkoikoi.cli.engine_cmds import add_rules_options, parse_seed_hex, rules_from_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    # pathlib only where a path is made: --help builds this module's parser, and a
    # normal install's interpreter has not loaded pathlib (with urllib.parse and
    # ipaddress, about 5 ms, a seventh of --help's start-up above python -c pass)
    from pathlib import Path

    from p2pkoikoi.cli.practice_options import PracticeOptions
    from p2pkoikoi.engine import Action, PlayerView, RuleSet
    from p2pkoikoi.transport.store.practice import PracticeRecorder


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "practice",
        help="play a local match against the computer (no network)",
        description="Play a local match against a built-in bot in the terminal table.",
    )
    p.add_argument(
        "--opponent",
        "--ai",
        dest="ai",
        default="medium",
        metavar="LEVEL",
        help="your opponent, the computer player (default medium): random, easy, medium, hard, or"
        f" cmd:COMMAND for an engine of your own, specified in {doc_url('docs/engine-protocol.md')}",
    )
    add_rules_options(p, from_config=True)
    p.add_argument("--seed", metavar="HEX", help="the match seed, 64 hex digits (default: random)")
    p.add_argument("--ascii", action="store_true", help="draw with plain ASCII characters only")
    p.add_argument(
        "--record",
        metavar="PATH",
        help="where to write the match record (default: the records directory, "
        "~/.local/share/p2pkoikoi/records/; see p2pkoikoi history)",
    )
    p.add_argument(
        "--no-record",
        action="store_true",
        help="keep no record of this match (a match with --seed never has one)",
    )
    p.add_argument(
        "--resume",
        nargs="?",
        const="last",
        metavar="RECORD",
        help="play on with a practice match left unfinished (its record; default: the"
        " latest one in the records directory)",
    )
    p.add_argument(
        "--tutorial",
        action="store_true",
        help="a guided first round that explains matching, captures, yaku and koi-koi",
    )
    p.set_defaults(func=run)


def parse_seed(text: str | None) -> bytes:
    if text is None:
        return os.urandom(32)
    return parse_seed_hex(text, "--seed")


def first_run() -> bool:
    """True once: the first practice match on this account is offered the guide
    (a marker file in the config directory remembers the offer)."""
    from p2pkoikoi.transport.store.identity import config_dir

    marker = config_dir(None) / "guide-offered"
    if marker.exists():
        return False
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("the guided first round was offered; practice --tutorial shows it\n")
    except OSError:
        return False  # no place to remember it: do not offer it every time
    return True


def make_opponent(level: str, seed: int) -> tuple[Callable[[PlayerView], Action], str]:
    """The bot's ``choose`` and its display name (``make_bot`` rejects an unknown spec)."""
    from p2pkoikoi.bots import make_bot

    bot = make_bot(level, seed)
    return bot.choose, level


def _recorder(
    rules: RuleSet, level: str, path: Path | None, name: str | None = None
) -> PracticeRecorder:
    """The in-memory protocol that records this practice match (its seed comes from it)."""
    from p2pkoikoi.cli.net_run import login_name
    from p2pkoikoi.engine.errors import InputError
    from p2pkoikoi.transport.store.identity import (
        check_record_path,
        config_dir,
        default_record_path,
        load_or_create_identity,
    )
    from p2pkoikoi.transport.store.practice import PracticeRecorder

    check_record_path(path)
    if path is None:
        path = default_record_path(f"practice-{level.split(':')[0]}")
    elif path.exists():
        raise InputError(f"{path} already exists: give --record a new file name")
    identity = load_or_create_identity(config_dir(None))
    opponent = f"Computer ({level})"[:32] if len(level) < 20 else "Computer"
    return PracticeRecorder(rules, identity, (name or login_name(), opponent), path, level=level)


def practice(
    rules: RuleSet,
    match_seed: bytes | None,
    options: PracticeOptions,
    resumed: PracticeRecorder | None = None,
) -> int:
    """A practice match.  Without ``match_seed`` the seed comes from the in-memory
    commit-reveal that records the match (``options.keep_record``), else from
    os.urandom; ``resumed`` plays on an unfinished one."""
    o = options
    level, bot_seed, record, name = o.level, o.bot_seed, o.record, o.name
    from p2pkoikoi.transport.link.contract import GameLink, LocalLink
    from p2pkoikoi.ui.app import TableContext, require_terminal, run_table

    # everything that can refuse the match does so before its record is begun: a
    # start that fails (an unknown or missing computer player, no terminal) leaves none
    if bot_seed is None:  # without --seed, the match seed comes from the record, later
        bot_seed = int.from_bytes(
            match_seed[:8] if match_seed is not None else os.urandom(8), "big"
        )
    choose, kind = make_opponent(level, bot_seed)
    require_terminal(PRACTICE_ADVICE)
    recorder = resumed
    if recorder is None and match_seed is None and o.keep_record:
        recorder = _recorder(rules, level, record, name)
    if recorder is not None:
        match_seed = recorder.match_seed
    seed = match_seed if match_seed is not None else os.urandom(32)
    moves = list(resumed.moves) if resumed is not None else []

    async def factory(ctx: TableContext) -> GameLink:
        link = LocalLink(
            rules,
            seed,
            choose,
            names=("You", "Computer"),
            recorder=recorder,
            moves=moves,
            resumed=resumed is not None,
        )
        ctx.state.log.append(("class:dim", f"Practice against the {kind} computer player."))
        if o.tutorial:
            ctx.state.start_tutorial()
        ctx.nursery.start_soon(link.run)
        return link

    code = run_table(factory, ascii=o.ascii)
    if recorder is not None and recorder.failed:
        sys.stderr.write(f"p2pkoikoi: the practice record stopped: {recorder.failed}\n")
    return code


def resume_record(which: str) -> PracticeRecorder:
    """The unfinished practice match ``which`` names (a record's path, or ``last``),
    made again from its record and resume file, ready to play on."""
    from p2pkoikoi.engine import Action
    from p2pkoikoi.engine.errors import InputError, KoiKoiError
    from p2pkoikoi.session.crypto import fingerprint
    from p2pkoikoi.session.records.journal import decode_record
    from p2pkoikoi.transport.store.identity import (
        config_dir,
        load_or_create_identity,
        own_fingerprint,
    )
    from p2pkoikoi.transport.store.practice import PracticeRecorder, read_practice_sidecar

    if which == "last":
        from p2pkoikoi.transport.store.identity import records_dir

        kept = sorted(
            (p for p in records_dir().glob("*-practice-*.koikoi") if read_practice_sidecar(p)),
            key=lambda p: p.stat().st_mtime,
        )
        if not kept:
            raise InputError("no practice match is waiting to be resumed")
        path = kept[-1]
    else:
        from pathlib import Path

        path = Path(which).expanduser()
    side = read_practice_sidecar(path)
    if side is None:
        raise InputError(
            f"{path}: no practice match to resume there (finished, or not a practice record)"
        )
    try:
        record = decode_record(path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    identity = load_or_create_identity(config_dir(None))
    if record.rules is None or record.host is None or record.joiner is None:
        raise InputError(f"{path}: the record stops before the match began")
    if fingerprint(record.host.key) != own_fingerprint(identity):
        raise InputError(f"{path}: recorded with another identity than yours")
    try:
        stream = bytes.fromhex(side["stream"])
        moves = [
            (a.seat, None if a.action == "resign" else Action.parse(a.action))
            for a in record.actions
        ]
    except (ValueError, KoiKoiError) as exc:
        raise InputError(f"{path}: cannot be resumed: {exc}") from None
    names = (record.host.name, record.joiner.name)
    recorder = PracticeRecorder(
        record.rules, identity, names, path, stream_seed=stream, level=side["level"]
    )
    if recorder.match_seed != record.match_seed:
        raise InputError(f"{path}: its resume file belongs to another match")
    recorder.rebuild(moves)
    return recorder


#: what to use instead of practice without a terminal (practice has no --headless)
PRACTICE_ADVICE = (
    "practice has no --headless: for scripts use p2pkoikoi selfplay, "
    "or host --headless with join --headless --bot LEVEL"
)


def run(args: argparse.Namespace) -> int:
    from p2pkoikoi.cli.config_file import load_config
    from p2pkoikoi.engine.errors import InputError
    from p2pkoikoi.ui.app import require_terminal

    if args.resume is not None:
        require_terminal(PRACTICE_ADVICE)  # before the record is made again
        resumed = resume_record(args.resume)
        rules = resumed.sessions[0].rules
        if rules is None:
            raise InputError("the resumed record has no rules")
        from p2pkoikoi.cli.practice_options import PracticeOptions

        options = PracticeOptions(resumed.level or "medium", ascii=args.ascii)
        return practice(rules, None, options, resumed)
    config = load_config()
    rules = rules_from_args(args, config)
    seed = parse_seed(args.seed) if args.seed is not None else None
    if args.seed is not None and args.record:
        raise InputError(
            "--record cannot go with --seed: a record proves the seed came from a fair draw"
        )
    from pathlib import Path

    record = Path(args.record).expanduser() if args.record else None
    from p2pkoikoi.cli.practice_options import PracticeOptions

    options = PracticeOptions(
        args.ai,
        ascii=args.ascii,
        record=record,
        keep_record=not args.no_record,
        tutorial=args.tutorial or first_run(),
        name=config.name,
    )
    return practice(rules, seed, options)


def _network_command(argv: list[str]) -> int | None:
    """Run ``p2pkoikoi host`` / ``join`` if the network commands are installed; else ``None``."""
    from p2pkoikoi.cli.parsing import build_parser

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        return None
    func = getattr(args, "func", None)
    if func is None:
        return None
    return int(func(args))


def run_start_screen(args: argparse.Namespace) -> int:
    """The start screen, given what its choices run (the interface does not import the CLI)."""
    from p2pkoikoi.ui.start import start_screen

    ascii = bool(getattr(args, "ascii", False))

    def practise(rules: RuleSet, level: str) -> int:
        from p2pkoikoi.cli.config_file import load_config

        name = load_config().name  # the menu chose the rules; config.toml gives the name
        from p2pkoikoi.cli.practice_options import PracticeOptions

        options = PracticeOptions(level, ascii=ascii, tutorial=first_run(), name=name)
        return practice(rules, None, options)

    return start_screen(practice=practise, network=_network_command, ascii=ascii)
