"""``p2pkoikoi host``, ``join`` and ``resume``: running a match over the network.

Both open the terminal table unless ``--headless``, which lets a bot play and
prints JSON lines on stdout (see docs/network.md).  The same
:func:`~p2pkoikoi.transport.open.host.open_host` / :func:`~p2pkoikoi.transport.open.join.open_join`
serve both modes, so scripts test exactly what people use.  The parsers are in
:mod:`p2pkoikoi.cli.net_cmds`.
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import re
import signal
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import trio

from p2pkoikoi import doc_url
from p2pkoikoi.cli.headless import json_emitter, play_headless
from p2pkoikoi.engine import Action, InputError, KoiKoiError, PlayerView, RuleSet
from p2pkoikoi.engine.presets import DEFAULT_PRESET, get_preset
from p2pkoikoi.session import RulesProposed
from p2pkoikoi.session.wire import MAX_NAME, MAX_TURN_LIMIT
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.link.network import NetworkLink
from p2pkoikoi.transport.link.notes import Note, describe_note
from p2pkoikoi.transport.lookup.dht import DhtConfig
from p2pkoikoi.transport.open.host import AnswerSource, open_host
from p2pkoikoi.transport.open.join import open_join
from p2pkoikoi.transport.open.options import HostOptions, JoinOptions
from p2pkoikoi.transport.player import Player
from p2pkoikoi.transport.store.identity import (
    AskNewKey,
    KnownPeers,
    PeerCheck,
    PeerStatus,
    check_record_path,
    config_dir,
    load_or_create_identity,
    own_fingerprint,
)

from .config_file import Config, load_config
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


def _name(args: argparse.Namespace, config: Config | None = None) -> str:
    if args.name is None and config is not None and config.name is not None:
        return config.name  # checked as it was read
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


def stun_servers(args: argparse.Namespace, directory: Path) -> list[tuple[str, int]]:
    """Which STUN servers to ask: ``--no-stun``; else ``--stun`` (repeatable); else
    ``$P2PKOIKOI_STUN`` (comma-separated, ``none`` for none); else the config file's
    ``stun = [...]`` (``network.toml`` in the config directory); else the defaults."""
    import tomllib

    from p2pkoikoi.transport.nat.gather import DEFAULT_STUN, parse_stun

    if getattr(args, "no_stun", False):
        return []
    given: list[str] | None = getattr(args, "stun", None)
    if given is None and (env := os.environ.get("P2PKOIKOI_STUN")) is not None:
        given = [] if env.strip().lower() in ("", "none") else env.split(",")
    if given is None:
        path = directory / "network.toml"
        if path.exists():
            try:
                listed = tomllib.loads(path.read_text("utf-8")).get("stun")
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise InputError(f"{path}: {exc}") from None
            if listed is not None:
                if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
                    raise InputError(f'{path}: stun must be a list of "HOST:PORT" strings')
                given = list(listed)
    if given is None:
        given = list(DEFAULT_STUN)
    try:
        return [parse_stun(x) for x in given if x.strip()]
    except KoiKoiError as exc:
        raise InputError(str(exc)) from None


async def stdin_answer() -> str | None:
    """The next answer a headless host reads: a line ``{"answer": TEXT}`` (or the bare
    text) on standard input; None at its end."""
    import json
    import sys

    while True:
        line: str = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            return None
        line = line.strip()
        if not line:
            continue
        try:
            got = json.loads(line)
        except ValueError:
            return line
        if isinstance(got, dict) and isinstance(got.get("answer"), str):
            return str(got["answer"])
        return line


def between_people(args: argparse.Namespace, rules: RuleSet, config: Config | None) -> RuleSet:
    """A match between people deals hidden (mental poker, protocol/hidden-deal.md: no
    modified client can read a card before the rules show it) unless ``--set deal=...``
    or config.toml's ``deal`` says otherwise; practice, selfplay and bench stay open."""
    chosen = config is not None and config.deal is not None
    for assignment in getattr(args, "settings", None) or []:
        chosen = chosen or assignment.partition("=")[0].strip().replace("-", "_") == "deal"
    return rules if chosen else rules.with_settings(deal="hidden")


def _expected(args: argparse.Namespace) -> RuleSet | None:
    if args.expect_rules is None and not args.settings:
        return None
    rules = get_preset(args.expect_rules or DEFAULT_PRESET)
    for assignment in args.settings:
        rules = rules.apply_setting(assignment)
    return between_people(args, rules, None)  # what a host deals unless told otherwise


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


def _dht(args: argparse.Namespace) -> DhtConfig | None:
    """The DHT to use, or None: ``--no-dht`` > ``--dht-bootstrap`` > $P2PKOIKOI_DHT
    (``off``, or ``HOST:PORT,...``) > network.toml's keys ``dht`` and ``dht_bootstrap``
    (in the config directory, beside ``stun``) > the usual public bootstrap nodes."""
    if args.dht is False:
        return None
    given: list[str] | None = args.dht_bootstrap
    source = "--dht-bootstrap"
    if given is None:
        env = os.environ.get("P2PKOIKOI_DHT", "").strip()
        if env.lower() in ("off", "no", "0", "false"):
            return None
        if env:
            given, source = [x for x in env.split(",") if x.strip()], "$P2PKOIKOI_DHT"
    if given is None:
        table = _network_config(args)
        if table.get("dht") is False:
            return None
        listed = table.get("dht_bootstrap")
        if listed is not None:
            if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
                raise InputError('network.toml: dht_bootstrap must be a list of "HOST:PORT"')
            given, source = listed, "network.toml dht_bootstrap"
    if given is None:
        return DhtConfig()
    nodes = []
    for text in given:
        host, sep, port = text.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise InputError(f"{source} {text!r}: expected HOST:PORT, like 192.0.2.7:6881")
        nodes.append((host.strip("[]"), int(port)))
    return DhtConfig(bootstrap=tuple(nodes))


def _network_config(args: argparse.Namespace) -> dict[str, Any]:
    """network.toml in the config directory (empty if none)."""
    import tomllib

    path = config_dir(args.config_dir or None) / "network.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML ({exc})") from None


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
        answers: AnswerSource | None = None,
    ) -> AbstractAsyncContextManager[NetworkLink]: ...


def _opener(args: argparse.Namespace, host: bool) -> Opener:
    """Everything but the notify callback: the same for headless and table."""
    config = load_config(args.config_dir)  # a mistake in it stops here, before any network
    directory = config_dir(args.config_dir or None)
    identity = load_or_create_identity(directory)
    known = KnownPeers.load(directory, accept_new_key=args.accept_new_key)
    player = Player(
        identity,
        _name(args, config),
        known_peers=known,
        record_path=_record(args),
        timeouts=_timeouts(args),
    )
    dht = _dht(args)
    stun = tuple(stun_servers(args, directory))
    if host:
        rules = between_people(args, rules_from_args(args, config), config)
        if not 0 <= args.port <= 65535:
            raise InputError(f"--port {args.port} is outside 0..65535")
        if not 0 <= args.turn_limit <= MAX_TURN_LIMIT:
            raise InputError(
                f"--turn-limit {args.turn_limit} is outside 0..{MAX_TURN_LIMIT} seconds"
            )
        hosting = HostOptions(
            rules,
            port=args.port,
            bind=args.bind,
            advertise=args.advertise,
            port_mapping=args.port_mapping,
            announce=args.announce,
            turn_limit=args.turn_limit,
            stun=stun,
            dht=dht,
        )

        def open_(
            notify: Callable[[Note], None],
            ask_rules: AskRules | None = None,
            ask_key: AskNewKey | None = None,
            answers: AnswerSource | None = None,
        ) -> AbstractAsyncContextManager[NetworkLink]:
            known.ask = ask_key  # the table asks about a changed key; headless decides
            return open_host(
                player,
                hosting,
                notify=notify,
                answers=answers or (stdin_answer if args.headless else None),
            )

        return open_
    expected = _expected(args)
    from p2pkoikoi.session import parse_join_target

    # a bad invite or code fails before any network use; a code finds its host on
    # this network by multicast DNS (transport/lookup/mdns.py)
    invite = parse_join_target(" ".join(args.invite))

    def open_j(
        notify: Callable[[Note], None],
        ask_rules: AskRules | None = None,
        ask_key: AskNewKey | None = None,  # the joiner's rules screen asks instead
        answers: AnswerSource | None = None,  # a joiner is not given answers
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

        joining = JoinOptions(
            expected_rules=expected,
            dht=dht,
            stun=stun,
            screen=True,  # an invite from a person: loopback addresses are warned about
            # the rules accepted without a person's look (headless, --expect-rules):
            # a turn limit under the floor only when asked for explicitly
            min_turn_limit=args.min_turn_limit if decide is None else 0,
        )
        return open_join(invite, player, joining, notify=notify, decide_rules=decide)

    return open_j


# ---------------------------------------------------------------------- headless
async def _headless(opener: Opener, player: _Player, rematch: int = 0) -> int:
    """Play one match, then ``rematch`` more on the same connection (protocol
    section 13): each side offers at once, so two ``--rematch N`` players agree.

    Ctrl-C (SIGINT) during a match leaves the table as ``q`` does at the table: the
    resignation goes at once, on the other player's turn too, the
    result is signed, and the program exits 130 within a few seconds."""
    emit = json_emitter()
    final: dict[str, object] | None = None
    refused = ""
    left = False
    async with opener(emit) as link:  # a link error is raised when the block ends
        play_scope = trio.CancelScope()

        async def play(nursery: trio.Nursery) -> None:
            nonlocal final, refused
            with play_scope:
                for n in range(rematch + 1):
                    if n and not await link.play_again(timeout=link.timeouts.rules_decision):
                        why = link.rematch_declined or "it left or did not answer"
                        refused = f"the other player did not play match {n + 1}: {why}"
                        break
                    final = await play_headless(
                        link, player.choose, emit, in_thread=player.in_thread
                    )
                    if final is None:
                        break
            nursery.cancel_scope.cancel()  # the Ctrl-C watcher too

        async def leave_on_ctrl_c(task_status: trio.TaskStatus[None]) -> None:
            nonlocal left
            if threading.current_thread() is not threading.main_thread():
                task_status.started()
                return  # (signals reach the main thread only: an embedding caller's)
            with trio.open_signal_receiver(signal.SIGINT) as signals:
                task_status.started()
                async for _ in signals:
                    left = True
                    play_scope.cancel()
                    return  # a second Ctrl-C interrupts the leaving itself

        async with trio.open_nursery() as nursery:
            # Ctrl-C is ours before the first move: play may make it (a queued update,
            # a quick bot) and send it without yielding, and a Ctrl-C landing there
            # would be trio's KeyboardInterrupt, leaving without the resignation
            await nursery.start(leave_on_ctrl_c)
            nursery.start_soon(play, nursery)
        if left:
            await link.leave()  # resign now (off-turn too) and wait briefly for the signature
    if left:
        raise KeyboardInterrupt
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
    from p2pkoikoi.transport.open.resume import open_resume
    from p2pkoikoi.transport.store.records import read_record, sidecar_path

    path = Path(args.record).expanduser()
    record = read_record(path)  # the compact record, or a crashed match's journal
    if record.is_complete:
        sidecar_path(path).unlink(missing_ok=True)
        raise InputError(f"the match in {path} is over (both signed the result): nothing to resume")
    directory = config_dir(args.config_dir or None)
    identity = load_or_create_identity(directory)
    known = KnownPeers.load(directory, accept_new_key=args.accept_new_key)
    me = Player(identity, "", known_peers=known, record_path=path, timeouts=_timeouts(args))

    def open_(
        notify: Callable[[Note], None],
        ask_rules: AskRules | None = None,
        ask_key: AskNewKey | None = None,
        answers: AnswerSource | None = None,
    ) -> AbstractAsyncContextManager[NetworkLink]:
        return open_resume(record, me, notify=notify)

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
    invite: str,
    port: int,
    code: str | None = None,
    reach: str = "",
    answers: bool = False,
    dht: bool = False,
) -> tuple[str, ...]:
    """The host's waiting screen: the command to type, the invite spaced for reading
    aloud, the short code (for a friend on the same network; anywhere with ``dht``),
    and how the host can be reached (``reach``, the port mapping's one line)."""
    from p2pkoikoi.ui.render import spaced_invite

    where = (
        "Or they type just the short code (found on this network, or anywhere through "
        "the BitTorrent DHT):"
        if dht
        else "On the same network they can type the short code instead:"
    )
    on_lan = (
        (
            where,
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
        *(
            ("If their program shows an answer (koia-...), press p, paste it, Enter.",)
            if answers
            else ()
        ),
        f"TCP port {port}; for firewalls and routers see 'What works where' in",
        f"  {doc_url('docs/network.md')}",  # the section is named above: the line fits 80
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
    from p2pkoikoi.transport.link.contract import GameLink
    from p2pkoikoi.ui.app import TableContext
    from p2pkoikoi.ui.state import make_offer

    mine = ("", f"Your identity: {me} (p2pkoikoi id shows it)") if me else ()

    async def factory(ctx: TableContext) -> GameLink:
        shown: dict[str, Any] = {}

        def notify(note: Note) -> None:
            kind = note.get("event")
            if kind in ("listening", "reachability"):
                if kind == "listening" and "nat" in note:  # a host with a match socket
                    ctx.accept_answers(give)
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
                        dht=bool(first.get("dht")),
                        answers="nat" in first,
                    ),
                    *mine,
                )
            elif kind == "connecting":
                ctx.waiting("Connecting...", f"to {note['host']} port {note['port']}", *mine)
            elif kind == "answer":
                ctx.waiting(
                    "Send this answer back to your friend",
                    "The invite alone does not reach the host. Send them this line (chat, mail):",
                    "",
                    f"  {note['answer']}",
                    "",
                    "They paste it into their waiting screen (press p there). The match starts",
                    "here as soon as a path opens (this screen waits up to 10 minutes).",
                    "(To copy with the mouse, hold Shift while selecting.)",
                    *mine,
                )
            elif kind == "connected":
                # strangers may knock too: keep the invite on screen, say it below
                ctx.status(f"someone connected from {note['address']}: checking the invite")
            elif kind in ("rules_proposed", "chat"):
                pass  # the rules screen (ask_rules) shows them; chat comes as an update
            else:
                ctx.status(describe_note(note))

        async def ask(proposal: RulesProposed, warning: str, seen: bool | None) -> bool:
            offer = make_offer(proposal.peer_name, proposal.peer_fingerprint, proposal.rules)
            return await ctx.ask_rules(
                dataclasses.replace(
                    offer,
                    warning=warning,
                    seen_before=seen,
                    own_fingerprint=me,
                    turn_limit=proposal.turn_limit,
                )
            )

        async def ask_key(check: PeerCheck, rules: RuleSet) -> bool:
            """The host's question: a known name joins with a new key."""
            offer = make_offer(check.name, check.fingerprint, rules)
            return await ctx.ask_rules(
                dataclasses.replace(
                    offer,
                    warning=check.warning,
                    seen_before=False,
                    own_fingerprint=me,
                    joining=True,
                )
            )

        pasted_tx, pasted_rx = trio.open_memory_channel[str](16)

        async def give(text: str) -> None:
            await pasted_tx.send(text)

        async def next_answer() -> str | None:
            return await pasted_rx.receive()

        async def hold(
            task_status: trio.TaskStatus[NetworkLink] = trio.TASK_STATUS_IGNORED,
        ) -> None:
            started = False
            try:
                async with opener(notify, ask, ask_key, next_answer) as link:
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
