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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine import Action, RuleSet
from p2pkoikoi.session import NeedData, Resign, SendAction, Session
from p2pkoikoi.session.session import State
from p2pkoikoi.transport.errors import TransportError
from p2pkoikoi.transport.record_files import RecordKeeper


class PracticeRecorder:
    """Both sides of the protocol in one process, recording a practice match."""

    def __init__(
        self,
        rules: RuleSet,
        identity: Ed25519PrivateKey,
        names: tuple[str, str],
        path: Path | None = None,
        random_bytes: Callable[[int], bytes] = os.urandom,
    ) -> None:
        """``random_bytes`` draws the invite secret, both entropies and the computer's
        key: a test passes a seeded source to get a chosen deal (with the identity)."""
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
        self._shuttle(sess.send(Resign()), seat)
        return True
