"""``p2pkoikoi replay RECORD``: step through a recorded match on the table, read-only."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="step through a recorded match on the table, forwards and backwards",
        description="Show the match in RECORD on the table, read-only: Left/Right step by "
        "turn, ',' and '.' by move, Up/Down by round.  Once the record holds the result, both "
        "hands are shown, so you can study the match and see for yourself that the deal "
        "follows the seed (p2pkoikoi verify checks it all).",
    )
    p.add_argument(
        "record",
        help="the match record: a .koikoi file, or its number in p2pkoikoi history "
        "(N, or last: the newest)",
    )
    p.add_argument(
        "--dir",
        metavar="DIR",
        help="where a number N or last looks (default: the records directory)",
    )
    p.add_argument(
        "--config-dir",
        metavar="DIR",
        help="whose side to show: the identity in DIR (default: your own; else the host's)",
    )
    p.add_argument("--ascii", action="store_true", help="draw with plain ASCII characters only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from p2pkoikoi.session.records.journal import decode_record
    from p2pkoikoi.session.verify.check import verify_record
    from p2pkoikoi.ui.app import require_terminal
    from p2pkoikoi.ui.replay import Replay, positions, replay_app

    from .history_list import _own_key
    from .record_list import resolve
    from .verify_cmd import read_record_bytes

    record = decode_record(read_record_bytes(resolve(args.record, args.dir)))
    moves = positions(record)
    own = _own_key(args.config_dir)
    seat = 1 if own is not None and record.joiner is not None and record.joiner.key == own else 0
    failure = verify_record(record).first_failure
    note = f"does not verify: {failure.name}" if failure is not None else ""
    require_terminal("to check a record without one: p2pkoikoi verify RECORD")
    rp = Replay(record, seat, moves, ascii=args.ascii, note=note)
    rp.index = 0
    code = replay_app(rp).run()
    return int(code) if isinstance(code, int) else 0
