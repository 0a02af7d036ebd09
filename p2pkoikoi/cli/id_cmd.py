"""``p2pkoikoi id``: your own identity, to compare with a friend out of band.

Every move is signed with the key in the config directory; the fingerprint is
what the other player's table shows for you.  Comparing it once over another
channel (phone, in person) is what makes "known peer" mean something, so this
command shows it without having to dig in a record.

Which directories it creates an identity in: the default config directory on
first use (as ``host``, ``join`` and ``practice`` do), or any directory with
``--new``.  A directory named by ``--config-dir`` or ``$P2PKOIKOI_CONFIG_DIR``
that does not exist is refused in one line (a typo must not quietly make a new
identity that no friend knows); ``--new`` never replaces an existing key.
"""

from __future__ import annotations

import argparse
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "id",
        help="show your identity's fingerprint, to compare with a friend",
        description="Show the fingerprint of your identity key, as the other player's table "
        "shows it.  Read it to your friend over another channel once: if it matches what "
        "their table shows, nobody is in the middle.  The default config directory gets an "
        "identity on first use; another directory only with --new.",
    )
    p.add_argument(
        "--config-dir",
        metavar="DIR",
        help="where your identity is (default: $P2PKOIKOI_CONFIG_DIR or ~/.config/p2pkoikoi); "
        "it must exist, unless --new",
    )
    p.add_argument(
        "--new",
        action="store_true",
        help="create an identity (and the directory) where there is none yet; never replaces one",
    )
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run_id)


def run_id(args: argparse.Namespace) -> int:
    import json

    from p2pkoikoi.engine.errors import InputError
    from p2pkoikoi.transport.store.identity import (
        IDENTITY_FILE,
        config_dir,
        load_or_create_identity,
        own_fingerprint,
        spoken_fingerprint,
    )

    directory = config_dir(args.config_dir or None)
    path = directory / IDENTITY_FILE
    named = bool(args.config_dir) or bool(os.environ.get("P2PKOIKOI_CONFIG_DIR"))
    exists = path.exists()
    if args.new and exists:
        raise InputError(
            f"{path} already holds an identity; --new never replaces one (move it away first)"
        )
    if named and not args.new and not directory.is_dir():
        where = "--config-dir" if args.config_dir else "$P2PKOIKOI_CONFIG_DIR"
        raise InputError(
            f"no such directory: {directory} ({where}); "
            "to make a new identity there: p2pkoikoi id --new"
        )
    fp = own_fingerprint(load_or_create_identity(directory))
    spoken = spoken_fingerprint(fp)
    if args.json:
        print(
            json.dumps(
                {"fingerprint": fp, "spoken": spoken, "key_file": str(path), "created": not exists}
            )
        )
        return 0
    if not exists:
        print(f"A new identity was created in {directory}.")
    print(f"fingerprint  {fp}")
    print(f"read aloud   {spoken}")
    print(f"key file     {path}")
    return 0
