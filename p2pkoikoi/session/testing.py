"""In-memory helpers: two sessions wired back to back, for tests, vectors and bots.

Deterministic throughout: keys and entropy derive from a label.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import p2pkoikoi.session.wire as wire
from p2pkoikoi.engine import Action, MatchState, RuleSet
from p2pkoikoi.session.events import Event, NeedData, Resign, SendAction
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
    channel = sender._send  # noqa: SLF001  a test helper: the sender's own AEAD channel
    assert channel is not None
    return wire.encode_frame(channel.seal(wire.encode_message(msg)))


def rewrite_queue(s: Session, change: Callable[[wire.Message], wire.Message]) -> None:
    """Make ``s`` pass every message it sends through ``change`` (a modified program)."""
    queue = s._queue  # noqa: SLF001  a test helper: a modified program's own queue
    s._queue = lambda msg: queue(change(msg))  # type: ignore[method-assign]  # noqa: SLF001  (the same)


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


def resumed(
    old: Session, label: str, *, key: str | None = None, hidden_secret: bytes | None = None
) -> Session:
    """``old``'s match resumed on a new connection from ``old``'s own record, by the
    same player (identity ``det_key(key)``, by default its role's) with entropy
    ``det_bytes("entropy/" + label)``; a hidden-deal match with ``old``'s deal
    secret, or ``hidden_secret`` (an open deal ignores it)."""
    return Session.resume(
        old.record(),
        old.role,
        identity_key=det_key(old.role.value if key is None else key),
        # (None before the hello: then the record itself is refused, as tests check)
        resume_secret=old.resume_secret,  # type: ignore[arg-type]
        entropy=det_bytes("entropy/" + label),
        hidden_secret=old.hidden_secret if hidden_secret is None else hidden_secret,
    )


class FrameLog:
    """Two sessions back to back, every frame either writes recorded as the protocol's
    vectors list them (``frames``): ``from``, the first frame of each side (its
    hello) in ``plaintext``, every later one with its AEAD ``counter``, and the
    ``frame`` as written.

    ``fields`` lead each entry from now on (rematch.json's ``part``);
    ``frame_second`` puts ``frame`` right after ``from``, the key order of
    transcript.json (the vector files are a contract: their bytes stay).
    """

    def __init__(self, sides: Sequence[Session], *, frame_second: bool = False) -> None:
        self.sides = sides
        self.frames: list[dict[str, Any]] = []
        self.fields: dict[str, Any] = {}
        self._frame_second = frame_second
        self._counters = [0, 0]

    def deliver(self, sender: int, data: bytes) -> None:
        """Record ``data``'s frames, then hand it all to the other side (``b""`` is the
        end of the stream there) and take its events."""
        rest = data
        while rest:
            payload, rest = wire.decode_frame(rest)
            assert payload is not None
            who = ("host", "joiner")[sender]
            entry: dict[str, Any] = {**self.fields, "from": who}
            if self._frame_second:
                entry["frame"] = None  # (its place in the key order)
            if not any(f["from"] == who for f in self.frames):
                entry["plaintext"] = payload.hex()
            else:
                entry["counter"] = self._counters[sender]
                self._counters[sender] += 1
            entry["frame"] = wire.encode_frame(payload).hex()
            self.frames.append(entry)
        self.sides[1 - sender].receive_data(data)
        drain(self.sides[1 - sender])

    def settle(self, rounds: int) -> None:
        """Up to ``rounds`` rounds of delivering what each side has to send."""
        for _ in range(rounds):
            for s in (0, 1):
                data = self.sides[s].data_to_send()
                if data:
                    self.deliver(s, data)

    def handshake(self, rounds: int) -> None:
        """Both hellos (the host's first), then ``rounds`` rounds of replies."""
        self.deliver(0, self.sides[0].data_to_send())
        self.deliver(1, self.sides[1].data_to_send())
        self.settle(rounds)

    def play(self, n_actions: int, seed: int, *, rounds: int) -> None:
        """``n_actions`` random actions, then the player to act resigns; ``rounds``
        rounds of replies (both final signatures)."""
        host = self.sides[0]
        choose = random_chooser(seed)
        for _ in range(n_actions):
            m = host.match
            assert m is not None and m.to_act is not None
            self.deliver(m.to_act, self.sides[m.to_act].send(SendAction(choose(m))))
        m = host.match
        assert m is not None and m.to_act is not None
        self.deliver(m.to_act, self.sides[m.to_act].send(Resign()))
        self.settle(rounds)
