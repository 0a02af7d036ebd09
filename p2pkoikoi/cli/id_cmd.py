"""``p2pkoikoi id``: your own identity, to compare with a friend out of band.

Every move is signed with the key in the config directory; the fingerprint is
what the other player's table shows for you.  Comparing it once over another
channel (phone, in person) is what makes "known peer" mean something, so this
command shows it without having to dig in a record.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "id",
        help="show your identity's fingerprint, to compare with a friend",
        description="Show the fingerprint of your identity key (created on first use), as "
        "the other player's table shows it.  Read it to your friend over another channel "
        "once: if it matches what their table shows, nobody is in the middle.",
    )
    p.add_argument(
        "--config-dir",
        metavar="DIR",
        help="where your identity is (default: $P2PKOIKOI_CONFIG_DIR or ~/.config/p2pkoikoi)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run_id)


def run_id(args: argparse.Namespace) -> int:
    from p2pkoikoi.transport.identity import (
        IDENTITY_FILE,
        config_dir,
        load_or_create_identity,
        own_fingerprint,
        spoken_fingerprint,
    )

    directory = config_dir(args.config_dir or None)
    fp = own_fingerprint(load_or_create_identity(directory))
    spoken = spoken_fingerprint(fp)
    path = directory / IDENTITY_FILE
    if args.json:
        print(json.dumps({"fingerprint": fp, "spoken": spoken, "key_file": str(path)}))
        return 0
    print(f"fingerprint  {fp}")
    print(f"read aloud   {spoken}")
    print(f"key file     {path}")
    return 0
