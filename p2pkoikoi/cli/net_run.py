"""``p2pkoikoi host``, ``join`` and ``resume``: running a match over the network.

Both open the terminal table unless ``--headless``, which lets a bot play and
prints JSON lines on stdout (see docs/network.md).  The same
:func:`~p2pkoikoi.transport.openers.open_host` / :func:`~p2pkoikoi.transport.openers.open_join`
serve both modes, so scripts test exactly what people use.  The parsers are in
:mod:`p2pkoikoi.cli.net_cmds`.
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import trio

from p2pkoikoi import doc_url
from p2pkoikoi.engine import Action, InputError, KoiKoiError, PlayerView, RuleSet
from p2pkoikoi.engine.presets import DEFAULT_PRESET, get_preset
from p2pkoikoi.session import RulesProposed
from p2pkoikoi.session.wire import MAX_NAME, MAX_TURN_LIMIT
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.headless import json_emitter, play_headless
from p2pkoikoi.transport.identity import (
    AskNewKey,
    KnownPeers,
    PeerCheck,
    PeerStatus,
    check_record_path,
    config_dir,
    load_or_create_identity,
    own_fingerprint,
)
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.match_link import NetworkLink
from p2pkoikoi.transport.notes import Note, describe_note
from p2pkoikoi.transport.openers import open_host, open_join

from .engine_cmds import rules_from_args

if TYPE_CHECKING:
    from p2pkoikoi.ui.app import LinkFactory


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"${name} must be a number of seconds, not {text!r}") from None
    if not value >= 0:
        raise InputError(f"${name} must be a number of seconds >= 0")
    return value


# ---------------------------------------------------------------------- helpers
_NAME_BAD = re.compile(r"[^\w .-]+")


def login_name() -> str:
    """The login name made safe for the protocol's name field ("player" if none)."""
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = ""
    clean = _NAME_BAD.sub("", login).strip()[:MAX_NAME].strip()
    return clean or "player"


def _name(args: argparse.Namespace) -> str:
    if args.name is not None:
        name = str(args.name)
        if (
            not name.strip()
            or name != name.strip()
            or len(name) > MAX_NAME
            or not name.isprintable()
        ):
            raise InputError(
                f"--name must be 1..{MAX_NAME} printable characters without surrounding spaces"
            )
        return name
    return login_name()


def _timeouts(args: argparse.Namespace) -> Timeouts:
    t = float(args.timeout)
    if not t > 0:
        raise InputError("--timeout must be a positive number of seconds")
    base = Timeouts()
    window = args.reconnect_window
    if window is None:
        window = _env_seconds("P2PKOIKOI_RECONNECT_WINDOW", base.reconnect_window)
    if not window >= 0:
        raise InputError("--reconnect-window must be a number of seconds >= 0")
    return Timeouts(
        handshake=t,
        reveal=t,
        reconnect_window=float(window),
        backoff_initial=_env_seconds("P2PKOIKOI_BACKOFF_INITIAL", base.backoff_initial) or 0.1,
        backoff_max=_env_seconds("P2PKOIKOI_BACKOFF_MAX", base.backoff_max) or 0.1,
        ping_interval=_env_seconds("P2PKOIKOI_PING_INTERVAL", base.ping_interval) or 1.0,
        silence_warn=_env_seconds("P2PKOIKOI_SILENCE_WARN", base.silence_warn) or 1.0,
        silence_fail=_env_seconds("P2PKOIKOI_SILENCE_FAIL", base.silence_fail) or 1.0,
        turn_grace=min(base.turn_grace, t),  # latency past the other's turn limit
    )


def _between_people(args: argparse.Namespace, rules: RuleSet) -> RuleSet:
    """A match between people deals hidden (mental poker, protocol/hidden-deal.md)
    unless ``--set deal=...`` says otherwise; practice, selfplay and bench stay open."""
    chosen = any(
        a.partition("=")[0].strip().replace("-", "_") == "deal" for a in args.settings or []
    )
    return rules if chosen else rules.with_settings(deal="hidden")


def _expected(args: argparse.Namespace) -> RuleSet | None:
    if args.expect_rules is None and not args.settings:
        return None
    rules = get_preset(args.expect_rules or DEFAULT_PRESET)
    for assignment in args.settings:
        rules = rules.apply_setting(assignment)
    return _between_people(args, rules)  # what a host deals unless told otherwise


def _own_fingerprint(args: argparse.Namespace) -> str:
    return own_fingerprint(load_or_create_identity(config_dir(args.config_dir or None)))


class _Player(NamedTuple):
    """The headless player: its bot's ``choose``, how to release it, and whether it
    runs in a worker thread (all but the instant bots: see ``RandomBot.instant``)."""

    choose: Callable[[PlayerView], Action]
    close: Callable[[], None]
    in_thread: bool


def _chooser(spec: str, seed: int | None) -> _Player:
    from p2pkoikoi.bots import close_bot, make_bot

    bot = make_bot(spec, seed if seed is not None else int.from_bytes(os.urandom(8), "big"))
    return _Player(bot.choose, lambda: close_bot(bot), not getattr(bot, "instant", False))


def _record(args: argparse.Namespace) -> Path | None:
    """``--record``, checked for writing now rather than when the match starts."""
    if not args.record:
        check_record_path(None)  # the default place
        return None
    path = Path(args.record).expanduser()
    check_record_path(path)
    if path.exists():  # an earlier match's record, or any other file: never overwrite it
        raise InputError(
            f"{path} already exists: give --record a new file name (an unfinished "
            f"match goes on with: p2pkoikoi resume {path})"
        )
    return path


AskRules = Callable[[RulesProposed, str, bool | None], Awaitable[bool]]
"""``ask(proposal, warning, seen_before)``: the person accepts the host's rules or not.
``warning`` is the known-peers warning for a changed identity ("" if none);
``seen_before`` whether this name is already known with this identity (None: no
known-peers file)."""


class Opener(Protocol):
    """``open_host``/``open_join`` with everything but the notify callback (and the
    joiner's question about the rules, asked only without ``--expect-rules``)."""

    def __call__(
        self,
        notify: Callable[[Note], None],
        ask_rules: AskRules | None = None,
        ask_key: AskNewKey | None = None,
    ) -> AbstractAsyncContextManager[NetworkLink]: ...


def _opener(args: argparse.Namespace, host: bool) -> Opener:
    """Everything but the notify callback: the same for headless and table."""
    directory = config_dir(args.config_dir or None)
    identity = load_or_create_identity(directory)
    known = KnownPeers.load(directory, accept_new_key=args.accept_new_key)
    name = _name(args)
    timeouts = _timeouts(args)
    record = _record(args)
    if host:
        rules = _between_people(args, rules_from_args(args))
        if not 0 <= args.port <= 65535:
            raise InputError(f"--port {args.port} is outside 0..65535")
        if not 0 <= args.turn_limit <= MAX_TURN_LIMIT:
            raise InputError(
                f"--turn-limit {args.turn_limit} is outside 0..{MAX_TURN_LIMIT} seconds"
            )

        def open_(
            notify: Callable[[Note], None],
            ask_rules: AskRules | None = None,
            ask_key: AskNewKey | None = None,
        ) -> AbstractAsyncContextManager[NetworkLink]:
            known.ask = ask_key  # the table asks about a changed key; headless decides
            return open_host(
                identity=identity,
                name=name,
                rules=rules,
                port=args.port,
                bind=args.bind,
                advertise=args.advertise,
                port_mapping=args.port_mapping,
                announce=args.announce,
                timeouts=timeouts,
                record_path=record,
                notify=notify,
                known_peers=known,
                turn_limit=args.turn_limit,
            )

        return open_
    expected = _expected(args)
    from p2pkoikoi.session import parse_join_target

    # a bad invite or code fails before any network use; a code finds its host on
    # this network by multicast DNS (transport/discovery.py)
    invite = parse_join_target(" ".join(args.invite))

    def open_j(
        notify: Callable[[Note], None],
        ask_rules: AskRules | None = None,
        ask_key: AskNewKey | None = None,  # the joiner's rules screen asks instead
    ) -> AbstractAsyncContextManager[NetworkLink]:
        decide = None
        if ask_rules is not None and expected is None:
            ask = ask_rules

            async def decide(proposal: RulesProposed) -> bool:
                check = known.check(proposal.peer_name, proposal.peer_fingerprint)
                seen = check.status is PeerStatus.KNOWN
                ok = await ask(proposal, check.warning, seen)
                if ok and check.warning:  # the person saw the changed key and accepted it
                    known.remember(proposal.peer_name, proposal.peer_fingerprint)
                return ok

        return open_join(
            invite,
            identity=identity,
            name=name,
            expected_rules=expected,
            decide_rules=decide,
            timeouts=timeouts,
            record_path=record,
            notify=notify,
            known_peers=known,
        )

    return open_j


# ---------------------------------------------------------------------- headless
async def _headless(opener: Opener, player: _Player, rematch: int = 0) -> int:
    """Play one match, then ``rematch`` more on the same connection (protocol
    section 13): each side offers at once, so two ``--rematch N`` players agree."""
    emit = json_emitter()
    final: dict[str, object] | None = None
    refused = ""
    async with opener(emit) as link:  # a link error is raised when the block ends
        for n in range(rematch + 1):
            if n and not await link.play_again(timeout=link.timeouts.rules_decision):
                why = link.rematch_declined or "it left or did not answer"
                refused = f"the other player did not play match {n + 1}: {why}"
                break
            final = await play_headless(link, player.choose, emit, in_thread=player.in_thread)
            if final is None:
                break
    if final is None:
        raise TransportError("the match ended unfinished")
    if refused:
        raise TransportError(refused)
    return 0


def run_match(args: argparse.Namespace, host: bool) -> int:
    opener = _opener(args, host)
    if not args.headless:
        return run_network_table(
            opener, ascii=args.ascii, me=_own_fingerprint(args), bell=not args.quiet
        )
    if not 0 <= args.rematch <= 99:
        raise InputError(f"--rematch {args.rematch} is outside 0..99")
    player = _chooser(args.bot, args.bot_seed)
    try:
        return trio.run(_headless, opener, player, args.rematch)
    finally:
        player.close()


def run_resume(args: argparse.Namespace) -> int:
    from p2pkoikoi.transport.openers import open_resume
    from p2pkoikoi.transport.record_files import read_record, sidecar_path

    path = Path(args.record).expanduser()
    record = read_record(path)  # the compact record, or a crashed match's journal
    if record.is_complete:
        sidecar_path(path).unlink(missing_ok=True)
        raise InputError(f"the match in {path} is over (both signed the result): nothing to resume")
    directory = config_dir(args.config_dir or None)
    identity = load_or_create_identity(directory)
    known = KnownPeers.load(directory, accept_new_key=args.accept_new_key)
    timeouts = _timeouts(args)

    def open_(
        notify: Callable[[Note], None],
        ask_rules: AskRules | None = None,
        ask_key: AskNewKey | None = None,
    ) -> AbstractAsyncContextManager[NetworkLink]:
        return open_resume(
            path, record, identity=identity, timeouts=timeouts, notify=notify, known_peers=known
        )

    if not args.headless:
        return run_network_table(
            open_, ascii=args.ascii, me=own_fingerprint(identity), bell=not args.quiet
        )
    player = _chooser(args.bot, args.bot_seed)
    try:
        return trio.run(_headless, open_, player)
    finally:
        player.close()


# ---------------------------------------------------------------------- table
def run_network_table(
    opener: Opener, *, ascii: bool = False, me: str = "", bell: bool = True
) -> int:
    """Open the terminal table on a network match (the UI's ``run_table`` entry point);
    ``me`` is the player's own fingerprint, shown beside the peer's; ``bell`` rings
    the terminal's bell when it becomes your turn."""
    from p2pkoikoi.ui.app import run_table

    return run_table(network_table_factory(opener, me), ascii=ascii, bell=bell)


def invite_lines(
    invite: str, port: int, code: str | None = None, reach: str = ""
) -> tuple[str, ...]:
    """The host's waiting screen: the command to type, the invite spaced for reading
    aloud, the short code for a friend on the same network, and how the host can be
    reached (``reach``, the port mapping's one line)."""
    from p2pkoikoi.ui.render import spaced_invite

    on_lan = (
        (
            "On the same network they can type the short code instead:",
            "",
            f"  p2pkoikoi join {code}",
            "",
        )
        if code
        else ()
    )
    return (
        "Give your friend this invite. They type (or paste):",
        "",
        f"  p2pkoikoi join {invite}",
        "",
        "To read it aloud (spaces and capitals do not matter):",
        "",
        f"  {spaced_invite(invite)}",
        "",
        *on_lan,
        *((reach[:1].upper() + reach[1:] + ".",) if reach else ()),
        f"TCP port {port}; for firewalls and routers see 'What works where' in",
        f"  {doc_url('docs/network.md#what-works-where')}",
        "(To copy with the mouse, hold Shift while selecting.)",
    )


def network_table_factory(opener: Opener, me: str = "") -> LinkFactory:
    """The table's link factory for a network match.

    The link lives in a task of the table's nursery that holds the
    ``open_host``/``open_join`` block open until the match ends.  A joiner is
    shown the host's name, identity and rules and accepts or declines them
    (unless ``--expect-rules`` decides).  Errors before the match starts
    (including a declined rules offer, on both sides) close the table and reach
    the CLI as one line; errors during play end the match with an ``over``
    update saying why (shown at the table).
    """
    from p2pkoikoi.transport.link import GameLink
    from p2pkoikoi.ui.app import TableContext

    mine = ("", f"Your identity: {me} (p2pkoikoi id shows it)") if me else ()

    async def factory(ctx: TableContext) -> GameLink:
        shown: dict[str, Any] = {}

        def notify(note: Note) -> None:
            kind = note.get("event")
            if kind in ("listening", "reachability"):
                shown[kind] = note
                first = shown.get("listening")
                if first is None:
                    return
                reach = shown.get("reachability", {}).get("text", "")
                ctx.waiting(
                    "Waiting for the other player",
                    *invite_lines(
                        str(first["invite"]),
                        int(first["port"]),
                        str(first["code"]) if first.get("code") else None,
                        str(reach),
                    ),
                    *mine,
                )
            elif kind == "connecting":
                ctx.waiting("Connecting...", f"to {note['host']} port {note['port']}", *mine)
            elif kind == "connected":
                # strangers may knock too: keep the invite on screen, say it below
                ctx.status(f"someone connected from {note['address']}: checking the invite")
            elif kind in ("rules_proposed", "chat"):
                pass  # the rules screen (ask_rules) shows them; chat comes as an update
            else:
                ctx.status(describe_note(note))

        async def ask(proposal: RulesProposed, warning: str, seen: bool | None) -> bool:
            return await ctx.ask_rules(
                proposal.peer_name,
                proposal.peer_fingerprint,
                proposal.rules,
                warning=warning,
                seen_before=seen,
                own_fingerprint=me,
                turn_limit=proposal.turn_limit,
            )

        async def ask_key(check: PeerCheck, rules: RuleSet) -> bool:
            """The host's question: a known name joins with a new key."""
            return await ctx.ask_rules(
                check.name,
                check.fingerprint,
                rules,
                warning=check.warning,
                seen_before=False,
                own_fingerprint=me,
                joining=True,
            )

        async def hold(
            task_status: trio.TaskStatus[NetworkLink] = trio.TASK_STATUS_IGNORED,
        ) -> None:
            started = False
            try:
                async with opener(notify, ask, ask_key) as link:
                    started = True
                    task_status.started(link)
                    # after a match the connection stays for "r: play again" until
                    # either player leaves the table (which cancels this task)
                    await link.wait_closed()
            except KoiKoiError:
                if not started:
                    raise
                # during play the link already told the table why it ended

        link: NetworkLink = await ctx.nursery.start(hold)
        return link

    return factory
