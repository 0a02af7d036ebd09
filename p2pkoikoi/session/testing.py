"""In-memory helpers: two sessions wired back to back, for tests, vectors and bots.

Deterministic throughout: keys and entropy derive from a label.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import Action, MatchState, RuleSet
from p2pkoikoi.session import wire
from p2pkoikoi.session.events import Event, NeedData, SendAction
from p2pkoikoi.session.session import Session, State, WaitingFor


def det_bytes(label: str, n: int = 64) -> bytes:
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.sha256(f"{label}/{i}".encode()).digest()
        i += 1
    return out[:n]


def det_key(label: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(det_bytes("key/" + label, 32))


SECRET = det_bytes("invite-secret", 16)


def make_pair(
    rules: RuleSet,
    *,
    expected: RuleSet | None = None,
    auto_accept: bool = True,
    label: str = "",
    secret: bytes = SECRET,
    joiner_secret: bytes | None = None,
    turn_limit: int = wire.DEFAULT_TURN_LIMIT,
) -> tuple[Session, Session]:
    host = Session(
        "host",
        identity_key=det_key("host" + label),
        invite_secret=secret,
        name="Alice",
        entropy=det_bytes("entropy/host" + label),
        rules=rules,
        turn_limit=turn_limit,
    )
    joiner = Session(
        "joiner",
        identity_key=det_key("joiner" + label),
        invite_secret=secret if joiner_secret is None else joiner_secret,
        name="Bob",
        entropy=det_bytes("entropy/joiner" + label),
        expected_rules=expected if expected is not None else (rules if auto_accept else None),
    )
    return host, joiner


def until_the_joiners_value(host: Session, joiner: Session) -> None:
    """Deliver frames both ways until the joiner has sent its value (and the host has
    not yet read it): the moment between the commitment and the reveal."""
    for _ in range(10):
        joiner.receive_data(host.data_to_send())
        drain(joiner)
        if joiner.record().joiner_value is not None:
            return
        host.receive_data(joiner.data_to_send())
        drain(host)
    raise AssertionError("the joiner never sent its value")


def drain(session: Session) -> list[Event]:
    """Every event available now (raises what next_event raises)."""
    out: list[Event] = []
    while True:
        ev = session.next_event()
        if isinstance(ev, NeedData):
            return out
        out.append(ev)


def forge(sender: Session, msg: wire.Message) -> bytes:
    """An encrypted frame as ``sender`` would write it (advancing its counter): what a
    modified peer sends, for tests of how the other side refuses it."""
    assert sender._send is not None
    return wire.encode_frame(sender._send.seal(wire.encode_message(msg)))


def rewrite_queue(s: Session, change: Callable[[wire.Message], wire.Message]) -> None:
    """Make ``s`` pass every message it sends through ``change`` (a modified program)."""
    queue = s._queue
    s._queue = lambda msg: queue(change(msg))  # type: ignore[method-assign]


Chooser = Callable[[MatchState], Action]


def random_chooser(seed: int) -> Chooser:
    rng = random.Random(seed)
    return lambda m: rng.choice(m.legal_actions())


def play_until_cut(
    host: Session,
    joiner: Session,
    choose: Chooser,
    budget: int,
    boundaries: list[int] | None = None,
) -> bool:
    """Shuttle bytes until ``budget`` bytes were delivered; the rest is lost (a
    connection cut there).

    Returns True when the match ended before the cut.  ``boundaries`` collects
    the byte counts at which a whole chunk had been delivered (where a cut
    leaves no message half-sent)."""
    sides = (host, joiner)
    pending = [host.data_to_send(), joiner.data_to_send()]
    delivered = 0
    for _ in range(100_000):
        moved = False
        for s in (0, 1):
            if pending[s]:
                chunk, pending[s] = pending[s], b""
                room = budget - delivered
                sides[1 - s].receive_data(chunk[:room])
                delivered += min(room, len(chunk))
                drain(sides[1 - s])
                if boundaries is not None:
                    boundaries.append(delivered)
                if delivered >= budget:
                    return False
                moved = True
        for s in (0, 1):
            sess = sides[s]
            drain(sess)
            pending[s] += sess.data_to_send()
            m = sess.match
            if sess.waiting_for is WaitingFor.LOCAL_ACTION and m is not None:
                pending[s] += sess.send(SendAction(choose(m)))
                moved = True
        if not moved:
            return True
    raise AssertionError("did not settle")


def run_pair(
    host: Session,
    joiner: Session,
    choose: Chooser | None = None,
    *,
    max_steps: int = 1_000_000,
    tap: Callable[[int, bytes], bytes] | None = None,
) -> tuple[list[Event], list[Event]]:
    """Shuttle bytes between the two until neither moves; both play with ``choose``.

    ``tap(sender_seat, data)`` may inspect or rewrite bytes in flight.
    """
    sides = (host, joiner)
    events: tuple[list[Event], list[Event]] = ([], [])
    pending = [host.data_to_send(), joiner.data_to_send()]
    for _ in range(max_steps):
        moved = False
        for s in (0, 1):
            if pending[s]:
                data = tap(s, pending[s]) if tap else pending[s]
                pending[s] = b""
                sides[1 - s].receive_data(data)
                moved = True
        for s in (0, 1):
            sess = sides[s]
            events[s].extend(drain(sess))
            pending[s] += sess.data_to_send()
            m = sess.match
            if (
                choose
                and sess.state is State.PLAY
                and m is not None
                and sess.waiting_for is WaitingFor.LOCAL_ACTION  # to_act == s, or the hidden turn
                and not sess.catching_up  # our lost actions are on their way back
            ):
                pending[s] += sess.send(SendAction(choose(m)))
                moved = True
        if not moved and not any(pending):  # replies to bytes the caller delivered
            return events
    raise AssertionError("the sessions did not settle")
