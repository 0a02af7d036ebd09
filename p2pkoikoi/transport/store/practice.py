"""A record for a practice match, in the same format (and as verifiable) as a network one.

Theory of operation: a practice match has no peer, but its record should still
prove what a network record proves, so ``p2pkoikoi verify`` and ``p2pkoikoi
history`` treat both alike.  :class:`PracticeRecorder` runs the real protocol
in memory: two :class:`~p2pkoikoi.session.Session` objects, the host being you
(your identity key) and the joiner the computer (a fresh key for this match),
with bytes shuttled between them.  The handshake and the commit-reveal give
the match seed (so a practice match's seed is drawn as fairly as a network
one's); every move the table plays is then sent by the session of the seat
that made it, and the host's record is rewritten after each step.

A seed chosen with ``practice --seed`` cannot be recorded this way (the seed
comes from the commit-reveal), so such a match keeps no record.

Undo and resume.  Every random byte the two sessions draw comes from one
*stream seed* (SHAKE-256 of it, :class:`ByteStream`), so the same seed, the same
identity and the same moves make the same record.  :meth:`PracticeRecorder.rebuild`
uses that to take moves back (the practice table's undo: the record then holds
the match as finally played), and the stream seed is kept beside the record
(the sidecar file, 0600, with the computer's level) until the match ends, so
``practice --resume`` can rebuild the match from the record and play on.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import Action, RuleSet
from p2pkoikoi.session import NeedData, Resign, SendAction, Session
from p2pkoikoi.session.session import State
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.store.records import RecordKeeper, sidecar_path

#: what the sidecar of a practice record says it is
PRACTICE_SIDECAR = "p2pkoikoi-practice"


class ByteStream:
    """Bytes drawn from SHAKE-256 of a seed: the same seed, the same bytes, in order."""

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self._drawn = 0

    def __call__(self, n: int) -> bytes:
        out = hashlib.shake_256(self.seed).digest(self._drawn + n)[self._drawn :]
        self._drawn += n
        return out


#: a move as the recorder replays it: (seat, action), or (seat, None) for a resignation
Move = tuple[int, Action | None]


def sidecar_of(path: Path) -> Path:
    """Where a practice record's resume file lies (beside it)."""
    return sidecar_path(path)


def read_practice_sidecar(path: Path) -> dict[str, str] | None:
    """The stream seed and level kept beside a practice record (None: none, or not one)."""
    try:
        body = json.loads(sidecar_of(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or not isinstance(body.get(PRACTICE_SIDECAR), dict):
        return None
    got = body[PRACTICE_SIDECAR]
    if not all(isinstance(got.get(k), str) for k in ("stream", "level")):
        return None
    return {"stream": got["stream"], "level": got["level"]}


class PracticeRecorder:
    """Both sides of the protocol in one process, recording a practice match."""

    def __init__(
        self,
        rules: RuleSet,
        identity: Ed25519PrivateKey,
        names: tuple[str, str],
        path: Path | None = None,
        random_bytes: Callable[[int], bytes] | None = None,
        *,
        stream_seed: bytes | None = None,
        level: str = "",
    ) -> None:
        """``random_bytes`` draws the invite secret, both entropies and the computer's
        key: a test passes a seeded source to get a chosen deal (with the identity).
        Without it they come from ``stream_seed`` (random when not given), which the
        sidecar keeps with ``level`` so that the match can be rebuilt (undo, resume)."""
        self.stream_seed = stream_seed if stream_seed is not None else os.urandom(32)
        self.level = level
        self._args = (rules, identity, names)
        if random_bytes is None:
            random_bytes = ByteStream(self.stream_seed)
        self.moves: list[Move] = []
        # one program deals both hands: the hidden deal gains nothing here, and the
        # table (LocalLink) plays the open deal, so the record must too
        rules = rules.with_open_deal()
        secret = random_bytes(16)
        self.sessions = (
            Session(
                "host",
                identity_key=identity,
                invite_secret=secret,
                name=names[0],
                entropy=random_bytes(64),
                rules=rules,
                turn_limit=0,  # no clock against the computer
            ),
            Session(
                "joiner",
                identity_key=Ed25519PrivateKey.from_private_bytes(random_bytes(32)),
                invite_secret=secret,
                name=names[1],
                entropy=random_bytes(64),
                expected_rules=rules,
            ),
        )
        self.keeper = RecordKeeper(path)
        self.failed = ""  # why recording stopped (a full disk): the match goes on
        self._shuttle()
        match = self.sessions[0].match  # may be over already: a dealt hand yaku, 1 round
        if match is None:
            raise RuntimeError("the in-memory handshake did not start the match")
        self.match_seed: bytes = match.match_seed
        if level and self.keeper.path is not None and self.sessions[0].state is not State.DONE:
            self._write_sidecar()

    def _write_sidecar(self) -> None:
        try:
            self.keeper.write_sidecar(
                {PRACTICE_SIDECAR: {"stream": self.stream_seed.hex(), "level": self.level}}
            )
        except OSError as exc:
            self.failed = f"cannot write the resume file: {exc}"

    def rebuild(self, moves: Sequence[Move]) -> None:
        """The record made again from the start with only ``moves`` (an undo takes the
        last ones back; a resume replays the record's): same seed, same signatures."""
        fresh = PracticeRecorder(
            *self._args, self.keeper.path, stream_seed=self.stream_seed, level=self.level
        )
        for seat, action in moves:
            if action is None:
                fresh.resign(seat)
            else:
                fresh.action(seat, action)
        self.sessions, self.keeper, self.failed = fresh.sessions, fresh.keeper, fresh.failed
        self.moves = list(fresh.moves)

    @property
    def path(self) -> Path | None:
        return None if self.failed else self.keeper.path

    def _shuttle(self, first: bytes = b"", sender: int = 0) -> None:
        pending = [b"", b""]
        pending[sender] = first
        for _ in range(10_000):
            for s in (0, 1):
                pending[s] += self.sessions[s].data_to_send()
            if not pending[0] and not pending[1]:
                break
            for s in (0, 1):
                if pending[s]:
                    self.sessions[1 - s].receive_data(pending[s])
                    pending[s] = b""
            for sess in self.sessions:
                while not isinstance(sess.next_event(), NeedData):
                    pass
        if self.failed:
            return
        try:
            self.keeper.save(self.sessions[0])
        except TransportError as exc:  # a practice match is not worth stopping for it
            self.failed = str(exc)

    def action(self, seat: int, action: Action) -> None:
        """The seat's move, signed by its session and recorded."""
        self.moves.append((seat, action))
        self._shuttle(self.sessions[seat].send(SendAction(action)), seat)
        if self.sessions[0].state is State.DONE:
            self.keeper.drop_sidecar()

    def resign(self, seat: int) -> bool:
        """The seat resigns; False when the protocol cannot say it (not its turn: the
        record then ends where the match stood)."""
        sess = self.sessions[seat]
        match = sess.match
        if match is None or match.to_act != seat or sess.state is not State.PLAY:
            return False
        self.moves.append((seat, None))
        self._shuttle(sess.send(Resign()), seat)
        if self.sessions[0].state is State.DONE:
            self.keeper.drop_sidecar()
        return True
