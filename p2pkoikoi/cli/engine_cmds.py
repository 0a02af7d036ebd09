"""Engine commands: ``score``, ``deal``, ``rules`` and ``bench``.

They need only the engine; each prints text for people or, with ``--json``,
one JSON document for scripts.  Each ``run_*`` imports the part of the engine it
uses, so that ``--help``, ``score``, ``deal`` and ``rules`` start at once (the
parser is built from this module, ``net_cmds`` and the others for every
command; tests/house/test_startup.py checks what they import).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from p2pkoikoi.cli.facts import DEFAULT_PRESET, PRESET_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from p2pkoikoi.cli.config_file import Config
    from p2pkoikoi.engine.rules import RuleSet


def add_rules_options(
    parser: argparse.ArgumentParser, *, rounds: bool = True, from_config: bool = False
) -> None:
    """``--rules PRESET``, ``--set KEY=VALUE`` (repeatable) and ``--rounds N``; see
    :func:`rules_from_args`.  ``from_config``: the defaults come from config.toml
    (``--rules`` and ``--rounds`` are None unless given)."""
    default = f"config.toml's rules, else {DEFAULT_PRESET}" if from_config else DEFAULT_PRESET
    parser.add_argument(
        "--rules",
        metavar="PRESET",
        default=None if from_config else DEFAULT_PRESET,
        help=f"rule preset: {', '.join(PRESET_NAMES)} (default {default})",
    )
    parser.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        dest="settings",
        help="change one rule setting (repeatable); see 'p2pkoikoi rules'",
    )
    if rounds:
        parser.add_argument("--rounds", type=int, metavar="N", help="rounds in the match (1-99)")


def rules_from_args(args: argparse.Namespace, config: Config | None = None) -> RuleSet:
    """The rules the options give; what they leave out comes from ``config``
    (config.toml: rules, deal, rounds), then the built-in defaults."""
    from p2pkoikoi.engine.errors import InputError
    from p2pkoikoi.engine.presets import get_preset

    preset = args.rules if args.rules is not None else config.rules if config else None
    rules = get_preset(preset or DEFAULT_PRESET)
    if config is not None and config.deal is not None:
        rules = rules.apply_setting(f"deal={config.deal}")
    for assignment in getattr(args, "settings", []) or []:
        rules = rules.apply_setting(assignment)
    n = getattr(args, "rounds", None)
    if n is None and config is not None:
        n = config.rounds
    if n is not None:
        if not 1 <= n <= 99:
            raise InputError(f"--rounds must be between 1 and 99, not {n}")
        rules = rules.with_settings(rounds=n)
    return rules


def parse_seed_hex(text: str, option: str = "--match-seed") -> bytes:
    """A 32-byte seed from 64 hex digits, or :class:`InputError` naming ``option``
    (one wording for ``practice --seed`` and ``deal --match-seed``)."""
    from p2pkoikoi.engine.errors import InputError

    try:
        seed = bytes.fromhex(text.strip())
    except ValueError:
        raise InputError(f"{option} must be 64 hex digits (0-9, a-f), not {text!r}") from None
    if len(seed) != 32:
        raise InputError(f"{option} must be 64 hex digits (32 bytes), not {2 * len(seed)} digits")
    return seed


def _print_json(obj: Any) -> None:
    import json

    print(json.dumps(obj, ensure_ascii=False, indent=None))


# ---------------------------------------------------------------------- score
def run_score(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine.cards import CardSet, parse_cards
    from p2pkoikoi.engine.errors import InputError
    from p2pkoikoi.engine.yaku import YAKU_INFO, evaluate, score

    rules = rules_from_args(args)
    if args.calls_self < 0 or args.calls_opponent < 0:
        raise InputError("koi-koi calls cannot be negative")
    cards = parse_cards(args.cards, unique=True)
    mask = CardSet(cards).mask
    yaku = evaluate(mask, rules, called=args.calls_self > 0)
    breakdown = score(yaku, rules, args.calls_self, args.calls_opponent)
    if args.json:
        _print_json(
            {
                "yaku": [{"id": y.id, "points": y.points} for y in yaku],
                "base": breakdown.base,
                "multipliers": [
                    {"factor": m.factor, "reason": m.reason} for m in breakdown.multipliers
                ],
                "bonus": breakdown.bonus,
                "score": breakdown.score,
            }
        )
        return 0
    if not yaku:
        print("No yaku: stopping is not possible with these cards.")
        return 0
    for y in yaku:
        english, romaji, japanese = YAKU_INFO[y.id]
        print(f"  {romaji} ({japanese}, {english}): {y.points}")
    print(f"Base: {breakdown.base}")
    if breakdown.bonus:
        n = breakdown.bonus
        print(f"  +{n}  for {n} koi-koi call{'' if n == 1 else 's'} of your own")
    for m in breakdown.multipliers:
        print(f"  x{m.factor}  {m.reason}")
    print(f"Score: {breakdown.score}")
    return 0


# ---------------------------------------------------------------------- cards
def run_cards(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine.cards import CARDS, MONTHS, table_label, variety

    if args.json:
        _print_json(
            [
                {
                    "id": c.id,
                    "code": c.code,
                    "month": c.month,
                    "kind": c.kind.label,
                    "variety": variety(c),
                    "label": table_label(c),
                    "label_ascii": table_label(c, ascii=True),
                    "english": c.english,
                    "romaji": c.romaji,
                    "japanese": c.japanese,
                    "aliases": list(dict.fromkeys(c.aliases)),
                }
                for c in CARDS
            ]
        )
        return 0
    print(f"{'code':5} {'table':6} {'ascii':6} {'name':26} romaji (Japanese)")
    month = 0
    for c in CARDS:
        if c.month != month:
            month = c.month
            flower, romaji, japanese = MONTHS[month]
            print(f"-- {month}: {flower} ({romaji}, {japanese})")
        print(
            f"{c.code:5} {table_label(c):6} {table_label(c, ascii=True):6} {c.english:26} "
            f"{c.romaji} ({c.japanese})"
        )
        print(f"{'':20}also {', '.join(dict.fromkeys(c.aliases))}")
    print(
        "\nEach of these names a card on the command line: the code, the table's label\n"
        "(Unicode or ASCII; a month's chaff share one, and the first not yet named is\n"
        "taken), the English, romaji or Japanese name (quote one of several words:\n"
        '"sake cup"), or an alias.'
    )
    return 0


# ---------------------------------------------------------------------- deal
def run_deal(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine.deal import deal
    from p2pkoikoi.engine.errors import InputError

    seed = parse_seed_hex(args.match_seed)
    if not 1 <= args.round <= 0xFFFF:
        raise InputError("--round must be between 1 and 65535")
    if not 0 <= args.attempt <= 0xFFFF:
        raise InputError("--attempt must be between 0 and 65535")
    d = deal(seed, args.round, args.attempt).to_dict()
    if args.json:
        _print_json(d)
        return 0
    for key in ("nondealer_hand", "field", "dealer_hand", "stock"):
        print(f"{key.replace('_', ' '):15} {' '.join(d[key])}")
    return 0


# ---------------------------------------------------------------------- rules
def run_rules(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine.presets import PRESET_SOURCES, PRESETS, describe_setting, get_preset

    if args.diff:
        a_name, b_name = args.diff
        a, b = get_preset(a_name), get_preset(b_name)
        diffs = a.diff(b)
        if args.json:
            _print_json([{"setting": k, a_name: x, b_name: y} for k, x, y in diffs])
            return 0
        if not diffs:
            print(f"{a_name} and {b_name} are the same rules.")
            return 0
        width = max(len(k) for k, _, _ in diffs)
        print(f"{'setting':{width}}  {a_name:>16}  {b_name:>16}")
        for k, x, y in diffs:
            print(f"{k:{width}}  {_show(x):>16}  {_show(y):>16}")
        return 0
    if args.preset is None and not args.settings:
        if args.json:
            _print_json({name: PRESETS[name].to_dict() for name in PRESETS})
            return 0
        for name in PRESETS:
            print(f"{name:11} {PRESET_SOURCES.get(name, '')}")
        print("\nShow one with 'p2pkoikoi rules PRESET'; compare with --diff A B.")
        return 0
    rules = get_preset(args.preset or DEFAULT_PRESET)
    for assignment in args.settings:
        rules = rules.apply_setting(assignment)
    if args.json:
        _print_json({"rules": rules.to_dict(), "fingerprint": rules.fingerprint()})
        return 0
    data = rules.to_dict()
    width = max(len(k) for k in data)
    for k, v in data.items():
        print(f"{k:{width}}  {_show(v):16}  {describe_setting(k)}")
    print(f"\nfingerprint {rules.fingerprint()}")
    return 0


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(value) or "-"
    return str(value)


# ---------------------------------------------------------------------- bench
def bench_figures(seconds: float, seed: int = 1, slices: int = 5) -> dict[str, float]:
    """Random-playout speed on this core: rounds/s of the search core (``Playout``,
    a cheap shuffle per deal), of the match engine with and without events, matches/s.

    Each figure is measured in ``slices`` equal slices of ``seconds`` of this
    process's CPU time (``time.process_time``: time the process waits for a shared
    core does not count) and the best slice is reported (as ``timeit`` reports the
    minimum): other load only ever slows a slice down, through caches and memory.
    ``*_median`` keys give the median slice too.
    """
    import functools
    import random
    import time

    from p2pkoikoi.engine.match import new_match
    from p2pkoikoi.engine.playout import DONE, Playout, quick_deck
    from p2pkoikoi.engine.presets import get_preset

    rules = get_preset(DEFAULT_PRESET)
    long_rules = rules.with_settings(rounds=12, scoring="sum")  # no knockouts: full rounds
    rng = random.Random(seed)

    def rate(match_rules: RuleSet, with_events: bool, per_round: bool, span: float) -> float:
        """Random matches played for ``span`` seconds: rounds (or matches) per second."""
        count = 0
        start = time.process_time()
        deadline = start + span
        while time.process_time() < deadline:
            m = new_match(match_rules.with_open_deal(), rng.randbytes(32))
            while not m.is_over:
                acts = m.legal_actions()
                a = acts[rng.randrange(len(acts))]
                m = m.apply(a)[0] if with_events else m.after(a)
            count += len(m.results) if per_round else 1
        return count / (time.process_time() - start)

    def core_rate(span: float) -> float:
        """Random rounds through the search core (deal to round end) for ``span`` seconds."""
        count = 0
        deck = functools.partial(quick_deck, rng)
        start = time.process_time()
        deadline = start + span
        while time.process_time() < deadline:
            for dealer in (0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1):
                p = Playout.deal(long_rules, deck, dealer)
                while p.phase != DONE:
                    moves = p.moves()
                    p.do(moves[rng.randrange(len(moves))])
            count += 12
        return count / (time.process_time() - start)

    span = seconds / slices
    figures: dict[str, float] = {}
    measures: tuple[tuple[str, Callable[[], float]], ...] = (
        ("playout_rounds_per_second", lambda: core_rate(span)),
        ("rounds_per_second", lambda: rate(long_rules, False, True, span)),
        ("rounds_per_second_with_events", lambda: rate(long_rules, True, True, span)),
        ("matches_per_second", lambda: rate(rules, True, False, span)),
    )
    for name, measure in measures:
        rates = sorted(measure() for _ in range(slices))
        figures[name] = rates[-1]
        figures[name + "_median"] = rates[len(rates) // 2]
    return figures


def run_bench(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine.errors import InputError

    if not 0 < args.seconds <= 600:
        raise InputError("--seconds must be more than 0 and at most 600")
    if not 0 <= args.startup_runs <= 100:
        raise InputError("--startup-runs must be between 0 and 100")
    import shutil

    from p2pkoikoi.cli.bench_protocol import protocol_figures, startup_figures

    figures = bench_figures(args.seconds)
    more, record = protocol_figures()
    try:
        if args.startup_runs:
            more.update(startup_figures(record, args.startup_runs))
    finally:
        shutil.rmtree(record.parent, ignore_errors=True)
    if args.json:
        out = {k: round(v, 1) for k, v in figures.items()}
        out.update({k: round(v, 3) for k, v in more.items()})
        _print_json(out)
        return 0
    print("Best and median of five slices of CPU time, on one core:")
    for key, label in (
        ("playout_rounds_per_second", "random-playout rounds/s (search core)"),
        ("rounds_per_second", "random-playout rounds/s (after)"),
        ("rounds_per_second_with_events", "random-playout rounds/s (apply, events)"),
        ("matches_per_second", f"full {DEFAULT_PRESET} matches/s (apply)"),
    ):
        print(f"  {label:42} {figures[key]:8.0f}  (median {figures[key + '_median']:.0f})")
    print(
        f"Protocol, two sessions in this process, records on disk "
        f"({more['protocol_actions']:.0f} actions):"
    )
    print(
        f"  {'CPU per action per side (ms)':42} {more['protocol_cpu_ms_per_action_per_side']:8.3f}"
    )
    print(f"  {'wall time per action (ms)':42} {more['protocol_wall_ms_per_action']:8.3f}")
    if args.startup_runs:
        print(
            f"Start-up, fastest of {args.startup_runs} new processes side by side, "
            "wall and CPU time (ms), and their ratio to python -c pass (target: 3 or less):"
        )
        for name, label in (
            ("python", "python -c pass"),
            ("help", "p2pkoikoi --help"),
            ("score", "p2pkoikoi score"),
            ("rules", "p2pkoikoi rules"),
            ("verify", "p2pkoikoi verify (12 rounds)"),
        ):
            wall, cpu = more[f"startup_{name}_ms"], more[f"startup_{name}_cpu_ms"]
            line = f"  {label:32} wall {wall:5.0f}"
            if name != "python":
                line += f" ({more[f'startup_{name}_ratio']:.1f} x)"
            line += f"   CPU {cpu:5.0f}"
            if name != "python":
                line += f" ({more[f'startup_{name}_cpu_ratio']:.1f} x)"
            print(line)
        if not more["startup_bytecode"]:
            print(
                "  note: p2pkoikoi's modules have no bytecode here, and none is written\n"
                "  (PYTHONDONTWRITEBYTECODE is set; an editable install has none of its own):\n"
                "  each start compiles their source, which python -c pass never does.\n"
                "  An installed copy (pip install ., pipx) is compiled once, when installed."
            )
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "score",
        help="the yaku in a captured pile and what stopping is worth",
        description="Name the yaku that a pile of captured cards makes under a rule set, and "
        "what stopping with them is worth after the given koi-koi calls.",
    )
    add_rules_options(p, rounds=False)
    p.add_argument(
        "--calls-self", type=int, default=0, metavar="N", help="koi-koi calls by the scorer"
    )
    p.add_argument(
        "--calls-opponent", type=int, default=0, metavar="N", help="koi-koi calls by the opponent"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument(
        "cards",
        nargs="+",
        metavar="CARD",
        help="card codes (1b, 9a), names (crane, 'sake cup') or the table's labels (3Chy★); "
        "see 'p2pkoikoi cards'",
    )
    p.set_defaults(func=run_score)

    p = sub.add_parser(
        "cards",
        help="the 48 cards: codes, names and the table's labels",
        description="List every card with its code, its table label (Unicode and --ascii), "
        "its English, romaji and Japanese names and the other names the commands accept.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON array instead of text")
    p.set_defaults(func=run_cards)

    p = sub.add_parser(
        "deal",
        help="the deal a match seed gives (to check a shuffle by hand)",
        description="Print the hands, field and stock that a match seed deals for a round, "
        "as both programs compute them: check a recorded shuffle by hand.",
    )
    p.add_argument(
        "--match-seed", required=True, metavar="HEX", help="the match seed: 64 hex digits"
    )
    p.add_argument("--round", type=int, default=1, metavar="N", help="the round (default 1)")
    p.add_argument(
        "--attempt", type=int, default=0, metavar="K", help="0 for the first deal, +1 per redeal"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run_deal)

    p = sub.add_parser(
        "rules",
        help="show a rule preset, or compare two",
        description="With no PRESET, list the presets and where their rules come from; with "
        "one, every setting and what it means; --diff A B shows where two presets differ.",
    )
    p.add_argument("preset", nargs="?", metavar="PRESET", help=f"one of {', '.join(PRESET_NAMES)}")
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        dest="settings",
        help="change one setting of PRESET (repeatable)",
    )
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), help="compare two presets")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run_rules)

    p = sub.add_parser(
        "bench",
        help="engine speed on one core, the protocol's cost per move, start-up time",
        description="Measure random-playout speed of the engine on one core (best and median "
        "of five slices), the protocol's cost per move and the start-up time: figures to "
        "compare machines and versions, not a test.",
    )
    p.add_argument(
        "--seconds", type=float, default=5.0, metavar="S", help="time per figure (default 5)"
    )
    p.add_argument(
        "--startup-runs",
        type=int,
        default=5,
        metavar="N",
        help="new processes per start-up figure, the fastest counts (default 5; 0 skips)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run_bench)
