"""``p2pkoikoi host``, ``join`` and ``resume``: the parsers.

What they run is :mod:`p2pkoikoi.cli.net_run`, imported only when one of them
runs: building the parser for any command (``--help``, ``score``) must not
load trio, the session or the cryptography (tests/house/test_startup.py).
"""

from __future__ import annotations

import argparse

from p2pkoikoi import doc_url
from p2pkoikoi.cli.facts import DEFAULT_PORT, DEFAULT_PRESET, PRESET_NAMES

from .engine_cmds import add_rules_options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the shortest turn limit a joiner accepts without a person's look
MIN_TURN_LIMIT = 10


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--headless", action="store_true", help="no table: a bot plays, JSON lines on stdout"
    )
    p.add_argument(
        "--my-bot",
        "--bot",
        dest="bot",
        default="random",
        metavar="SPEC",
        help="with --headless, the bot that plays for YOU: random, easy, medium, hard, "
        "cmd:COMMAND (default random)",
    )
    p.add_argument(
        "--bot-seed", type=int, metavar="N", help="seed the headless bot (default: random)"
    )
    p.add_argument(
        "--rematch",
        type=int,
        default=0,
        metavar="N",
        help="headless: play N more matches on the same connection after the first "
        "(the other side needs --rematch too, or a person who accepts; default 0)",
    )
    p.add_argument(
        "--name",
        metavar="NAME",
        help="your name as the other player sees it (default: config.toml's name, else your login)",
    )
    p.add_argument(
        "--record",
        metavar="PATH",
        help="where to write the match record (default: ~/.local/share/p2pkoikoi/records/)",
    )
    p.add_argument(
        "--config-dir",
        metavar="DIR",
        help="identity and known_peers (default: $P2PKOIKOI_CONFIG_DIR or ~/.config/p2pkoikoi)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="deadline for each handshake step and the reveal (default 30); also the "
        "grace for latency past the other player's turn limit (at most 10)",
    )
    _reconnect_option(p)
    _accept_new_key_option(p)
    _dht_options(p)
    p.add_argument(
        "--stun",
        action="append",
        default=None,
        metavar="HOST:PORT",
        help="a STUN server to learn your public UDP address from (repeatable; replaces "
        "the default list and the config file's); it learns your public address",
    )
    p.add_argument(
        "--no-stun",
        dest="no_stun",
        action="store_true",
        help="ask no STUN server (then only the invite's and answer's local addresses "
        "and the router's mapping are tried)",
    )
    p.add_argument("--ascii", action="store_true", help="table: plain ASCII drawing")
    _quiet_option(p)


def _dht_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dht-bootstrap",
        action="append",
        default=None,
        metavar="HOST:PORT",
        help="a BitTorrent DHT node to start from (repeatable; replaces the usual public "
        "ones); the DHT lets a short code work across the internet",
    )
    p.add_argument(
        "--no-dht",
        dest="dht",
        action="store_false",
        default=None,
        help="do not use the BitTorrent DHT: the short code then works on this network only",
    )


def _quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quiet",
        action="store_true",
        help="table: no terminal bell when it becomes your turn (it rings by default)",
    )


def _accept_new_key_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--accept-new-key",
        action="store_true",
        help="play even if a known name arrives with another identity key (a new computer; "
        "otherwise the match does not start, as ssh refuses a changed host key)",
    )


def _reconnect_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reconnect-window",
        type=float,
        metavar="SECONDS",
        help="after a lost connection, how long to reconnect before giving up "
        "(default $P2PKOIKOI_RECONNECT_WINDOW or 120; 0: never reconnect)",
    )


def register(sub: Any) -> None:
    h = sub.add_parser(
        "host",
        help="host a network match and print an invite for your friend",
        description="Listen for one player, print an invite to pass on, play the match. "
        f"The default port is {DEFAULT_PORT}; firewalls, port forwarding and the rest:"
        f" {doc_url('docs/network.md')}",
    )
    h.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    h.add_argument(
        "--bind",
        metavar="ADDR",
        help="listen on this address only (e.g. 127.0.0.1, ::1; default: all)",
    )
    h.add_argument(
        "--advertise",
        metavar="ADDR",
        help="an extra address written first into the invite (e.g. your DNS name); the "
        "invite lists this machine's LAN and IPv6 addresses and the router's anyway",
    )
    h.add_argument(
        "--no-port-mapping",
        dest="port_mapping",
        action="store_false",
        help="do not ask the router to open the port (UPnP, NAT-PMP, PCP): "
        "friends on this network only, or a port you forwarded by hand",
    )
    h.add_argument(
        "--no-announce",
        dest="announce",
        action="store_false",
        help="do not announce the waiting match on this network (multicast DNS); "
        "friends then need the invite, as the code is found by the announcement",
    )
    h.add_argument(
        "--turn-limit",
        type=int,
        default=600,
        metavar="SECONDS",
        help="seconds each player may take per decision (default 600; 0: no limit); a "
        "warning comes before it runs out, and running out forfeits the match",
    )
    add_rules_options(h, from_config=True)
    _common(h)
    h.set_defaults(func=run_host)

    j = sub.add_parser(
        "join",
        help="join a network match with the invite your friend gave you",
        description="Connect to the host in INVITE and play.  With --expect-rules the match "
        "starts only if the host's rules are exactly those.",
    )
    j.add_argument(
        "invite",
        nargs="*",
        metavar="INVITE_OR_CODE",
        help="the invite (koi2-...) or the code (like 7-crossover-clockwork) the host gave "
        "you; spaces, quotes and capitals, as when read aloud, do not matter.  Without it, "
        "join asks for it (Tab completes the code's words)",
    )
    j.add_argument(
        "--expect-rules", metavar="PRESET", help=f"insist on these rules: {', '.join(PRESET_NAMES)}"
    )
    j.add_argument(
        "--min-turn-limit",
        type=int,
        default=MIN_TURN_LIMIT,
        metavar="SECONDS",
        help=f"refuse a host's turn limit under this when the rules are accepted without "
        f"a look (headless or --expect-rules; default {MIN_TURN_LIMIT}: a bot that thinks "
        "like a person would lose by time)",
    )
    j.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        dest="settings",
        help="change one expected rule setting (repeatable; based on --expect-rules, default "
        + DEFAULT_PRESET
        + ")",
    )
    _common(j)
    j.set_defaults(func=run_join)

    r = sub.add_parser(
        "resume",
        help="continue a network match after a crash, from its record",
        description="Continue the unfinished match of RECORD: a host listens on the same port "
        "again, a joiner reconnects to the host (the secrets come from RECORD.resume, written "
        "beside the record).  The other player's program must still be waiting."
        f" More: {doc_url('docs/network.md#when-the-connection-drops')}",
    )
    r.add_argument("record", help="the match record (a .koikoi file)")
    r.add_argument(
        "--headless", action="store_true", help="no table: a bot plays, JSON lines on stdout"
    )
    r.add_argument(
        "--my-bot",
        "--bot",
        dest="bot",
        default="random",
        metavar="SPEC",
        help="with --headless, the bot that plays for YOU (default random)",
    )
    r.add_argument("--bot-seed", type=int, metavar="N", help="seed the headless bot")
    r.add_argument("--config-dir", metavar="DIR", help="where your identity is")
    r.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="handshake step deadline"
    )
    _reconnect_option(r)
    _accept_new_key_option(r)
    r.add_argument("--ascii", action="store_true", help="table: plain ASCII drawing")
    _quiet_option(r)
    r.set_defaults(func=run_resume)


def run_host(args: argparse.Namespace) -> int:
    from .net_run import run_match

    return run_match(args, host=True)


def run_join(args: argparse.Namespace) -> int:
    from p2pkoikoi.engine.errors import InputError

    from .net_run import run_match

    if not args.invite:
        if args.headless:
            raise InputError("join --headless needs the code or the invite: join CODE --headless")
        from p2pkoikoi.ui.code_prompt import ask_join_target

        args.invite = ask_join_target().split()

    return run_match(args, host=False)


def run_resume(args: argparse.Namespace) -> int:
    from .net_run import run_resume

    return run_resume(args)
