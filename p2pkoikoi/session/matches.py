"""The matches of one connection: the parts of the current match, and how each is built.

Theory of operation
-------------------
A match is a set of parts that belong to it alone (:class:`MatchParts`): its
:class:`~p2pkoikoi.session.forfeits.Forfeits`, its
:class:`~p2pkoikoi.session.commit_reveal.CommitReveal` (from the agreed rules),
its :class:`~p2pkoikoi.session.play.Play` and, with the hidden deal, its
:class:`~p2pkoikoi.session.mental.session_part.HiddenPlay` (from the seed), and the
:class:`~p2pkoikoi.session.rematch_session.Rematch` offers that follow it.
:class:`Matches` builds them: the first match's commit-reveal once the
handshake agreed (:meth:`Matches.agreed`), the play once the seed is known
(:meth:`Matches.start_match`), the next match as new parts when both want a
rematch (:meth:`Matches.begin_rematch`: nothing is reset, the old parts are
dropped), and a match restored from our record for a resumed connection
(:meth:`Matches.restore`).  It reads what the connection agreed from the
:class:`~p2pkoikoi.session.handshake.Handshake` it is handed, and writes the
record of the current match (:meth:`Matches.record`).  It is separate so that
what one match is, and when its parts come to be, reads in one place.
"""

from __future__ import annotations

from collections.abc import Callable

from p2pkoikoi.engine import MatchState
from p2pkoikoi.engine.rules import DealMode
from p2pkoikoi.session.commit_reveal import CommitReveal
from p2pkoikoi.session.events import MatchStarted, RematchStarted
from p2pkoikoi.session.forfeits import Forfeits
from p2pkoikoi.session.handshake import Handshake
from p2pkoikoi.session.mental.play import HiddenMatch
from p2pkoikoi.session.mental.session_part import HiddenPlay
from p2pkoikoi.session.part import Part, PartContext
from p2pkoikoi.session.play import Play
from p2pkoikoi.session.records.record import ForfeitRecord, PlayerRecord, Record, ResultRecord
from p2pkoikoi.session.records.resume import ResumePoint
from p2pkoikoi.session.rematch_session import Rematch
from p2pkoikoi.session.resume_session import ResumeExchange
from p2pkoikoi.session.states import Role, State


class MatchParts:
    """The parts of one match of the connection, built together; a rematch builds new ones."""

    __slots__ = ("forfeits", "hidden", "number", "play", "previous", "rematch", "seed")

    def __init__(
        self, number: int, previous: bytes | None, forfeits: Forfeits, rematch: Rematch
    ) -> None:
        self.number = number
        self.previous = previous  # the previous match's final transcript
        self.forfeits = forfeits
        self.rematch = rematch
        self.seed: CommitReveal | None = None  # once the rules are agreed
        self.play: Play | None = None  # once the seed is known
        self.hidden: HiddenPlay | None = None  # with the hidden deal

    def __repr__(self) -> str:
        return f"MatchParts({self.number}, seed={self.seed!r}, play={self.play!r})"


class Matches(Part):
    """The current match of a connection, and the making of the next."""

    def __init__(
        self,
        ctx: PartContext,
        *,
        handshake: Handshake,
        my_value: bytes,
        hidden_secret: bytes,
        on_seed: Callable[[], None],
    ) -> None:
        super().__init__(ctx)
        self._handshake = handshake
        self._my_value = my_value  # the first match's commit/joiner value
        # the hidden deal's match secret: never sent, never in the record (the .resume file)
        self._hidden_secret = hidden_secret
        self._on_seed = on_seed  # the seed is known (the session's hook: start_match)
        self._m = self._new_match(1, None)

    def __repr__(self) -> str:
        return f"Matches({self._m!r})"

    @property
    def current(self) -> MatchParts:
        return self._m

    @property
    def hidden_secret(self) -> bytes:
        return self._hidden_secret

    @property
    def transcript(self) -> bytes:
        """The current match's transcript so far (the handshake's before the accept)."""
        m = self._m
        if m.play is not None:
            return m.play.transcript
        if m.seed is not None:
            return m.seed.transcript
        return self._handshake.transcript

    @property
    def result(self) -> ResultRecord | None:
        play = self._m.play
        return None if play is None else play.result

    # ------------------------------------------------------------------ building the parts
    def _new_match(self, number: int, previous: bytes | None) -> MatchParts:
        forfeits = Forfeits(self._me, lambda: self.transcript)
        rematch = Rematch(
            self._ctx,
            number=number,
            result=lambda: self.result,
            begin=self.begin_rematch,
        )
        return MatchParts(number, previous, forfeits, rematch)

    def _new_seed(self, t_commit: bytes, my_value: bytes) -> CommitReveal:
        peer_key = self._handshake.peer_key
        assert peer_key is not None
        return CommitReveal(
            self._ctx,
            peer_key=peer_key,
            t_commit=t_commit,
            my_value=my_value,
            on_seed=self._on_seed,
        )

    def _new_play(
        self, match: MatchState, transcript: bytes, initial_hash: bytes, table: HiddenMatch | None
    ) -> Play:
        m = self._m
        seed, peer_key = m.seed, self._handshake.peer_key
        assert seed is not None and peer_key is not None
        play = m.play = Play(
            self._ctx,
            peer_key=peer_key,
            match=match,
            transcript=transcript,
            initial_hash=initial_hash,
            table=table,
            joiner_started=lambda: seed.joiner_started,
            pump=self.pump_hidden,
        )
        if table is not None:
            m.hidden = HiddenPlay(
                self._ctx,
                play=play,
                table=table,
                peer_key=peer_key,
                joiner_started=lambda: seed.joiner_started,
                forfeits=m.forfeits,
            )
        return play

    def pump_hidden(self) -> None:
        assert self._m.hidden is not None
        self._m.hidden.pump()

    def agreed(self, t_commit: bytes) -> None:
        """The handshake agreed the rules: the first match's commit-reveal starts."""
        seed = self._m.seed = self._new_seed(t_commit, self._my_value)
        if self._me.is_host:
            seed.send_commit()

    def start_match(self) -> None:
        """The seed is known: the match starts (the engine, or the hidden deal's table)."""
        seed, rules = self._m.seed, self._handshake.rules
        assert seed is not None and seed.seed is not None and rules is not None
        if rules.deal is DealMode.HIDDEN:
            table = HiddenMatch(
                rules, seed.seed, self._me.seat, self._hidden_secret, check_later=True
            )
            self._new_play(table.state, seed.transcript, table.initial_hash, table)
            self._phase.go(State.PLAY)
            self._emit(MatchStarted(seed.seed, table.state.dealer, tuple(table.events)))
            self.pump_hidden()
            return
        match, events = MatchState.start(rules, seed.seed)
        play = self._new_play(match, seed.transcript, match.state_hash(), None)
        self._phase.go(State.PLAY)
        self._emit(MatchStarted(seed.seed, match.dealer, events))
        if match.is_over:  # a one-round match whose deal gives a hand yaku
            play.finish()

    def begin_rematch(self, my_value: bytes) -> None:
        """Both want the next match: a fresh commit-reveal on the same keys, the same
        players in the same roles, the same rules; a new transcript chained to the
        last one (so each match has its own record, unspliceable)."""
        result = self.result
        assert result is not None
        previous = result.transcript_hash
        number = self._m.number + 1
        t_commit = self._handshake.match_transcript(number, previous)
        self._m = self._new_match(number, previous)
        seed = self._m.seed = self._new_seed(t_commit, my_value)
        self._phase.go(State.SEED)
        self._emit(RematchStarted(number, previous))
        if self._me.is_host:
            seed.send_commit()

    def restore(
        self, point: ResumePoint, secret: bytes, hidden_secret: bytes | None
    ) -> ResumeExchange:
        """The parts of a resumed match, from our record (``Session.resume``), and the
        exchange of ``resume`` messages that continues it."""
        r = point.record
        assert r.session_id is not None and r.rules is not None
        assert r.host is not None and r.joiner is not None
        peer = r.joiner if self._me.is_host else r.host
        players = ((Role.HOST, r.host), (Role.JOINER, r.joiner))
        self._handshake.restore(
            session_id=r.session_id,
            resume_secret=secret,
            rules=r.rules,
            turn_limit=r.turn_limit,
            peer_name=peer.name,
            peer_key=peer.key,
            auth_sigs={rl: p.auth_sig for rl, p in players if p.auth_sig is not None},
        )
        m = self._m = self._new_match(r.match_number, r.previous)
        seed = m.seed = self._new_seed(point.t_commit, self._my_value)
        seed.restore(
            commitment=r.commitment,
            commit_sig=r.commit_sig,
            host_value=r.host_value,
            joiner_value=r.joiner_value,
            seed=r.match_seed,
            t_reveal=point.t_reveal,
            start_sigs={rl: p.start_sig for rl, p in players if p.start_sig is not None},
        )
        table = None
        if r.rules.deal is DealMode.HIDDEN:
            assert hidden_secret is not None and r.match_seed is not None
            self._hidden_secret = bytes(hidden_secret)
            table = HiddenMatch(
                r.rules, r.match_seed, self._me.seat, self._hidden_secret, check_later=True
            )
            play = self._new_play(table.state, point.t_reveal, table.initial_hash, table)
            assert m.hidden is not None
            m.hidden.rebuild(r)  # every card move again, committed one by one
        else:
            play = self._new_play(point.match, point.tx_at[-1], point.hash_at[0], None)
            play.restore(actions=r.actions, tx_at=point.tx_at, hash_at=point.hash_at)
        continue_in = State.PLAY
        if r.result is not None:
            play.restore_end(r.result, r.final_sigs)
            continue_in = State.DONE if r.is_complete else State.FINISH
        elif table.is_over if table is not None else point.match.is_over:
            # we crashed between the last action and our final signature
            play.sign_result()  # the over message goes out after the resume handshake
            continue_in = State.FINISH
        return ResumeExchange(
            self._ctx,
            session_id=r.session_id,
            peer_key=peer.key,
            seed=seed,
            play=play,
            continue_in=continue_in,
            pump=self.pump_hidden if table is not None else None,
        )

    # ------------------------------------------------------------------ the record
    def signatures(
        self,
    ) -> tuple[tuple[bytes | None, bytes | None], tuple[bytes | None, bytes | None]]:
        """((host's, joiner's) start signature, (host's, joiner's) final signature)."""
        seed, play = self._m.seed, self._m.play
        starts = (
            (None, None)
            if seed is None
            else (seed.start_sig(Role.HOST), seed.start_sig(Role.JOINER))
        )
        finals = (
            (None, None)
            if play is None
            else (play.final_sig(Role.HOST), play.final_sig(Role.JOINER))
        )
        return starts, finals

    def record(self) -> Record:
        """The verifiable record of the current match so far (finished or not)."""
        hs, m, me = self._handshake, self._m, self._me
        seed, play = m.seed, m.play
        starts, finals = self.signatures()
        players: list[PlayerRecord | None] = [None, None]
        for role in Role:
            auth, start = hs.auth_sig(role), starts[role.seat]
            if role is me.role:
                players[role.seat] = PlayerRecord(me.name, me.pub, auth, start)
            elif hs.peer_key is not None:
                assert hs.peer_name is not None  # both come with the peer's auth (or resume)
                players[role.seat] = PlayerRecord(hs.peer_name, hs.peer_key, auth, start)
        f = m.forfeits.forfeit
        return Record(
            session_id=hs.session_id,
            rules=hs.rules if hs.rules_bytes else None,
            host=players[0],
            joiner=players[1],
            accepted=hs.accepted,
            commitment=None if seed is None else seed.commitment,
            joiner_value=None if seed is None else seed.joiner_value,
            host_value=seed.host_value if seed is not None and seed.seed is not None else None,
            match_seed=None if seed is None else seed.seed,
            actions=() if play is None else tuple(play.actions),
            result=None if play is None else play.result,
            final_sigs=finals,
            turn_limit=hs.turn_limit if hs.rules_bytes else 0,
            commit_sig=None if seed is None else seed.commit_sig,
            forfeit=None if f is None else ForfeitRecord(f.seat, f.reason, f.sig),
            missing=m.forfeits.missing,
            evidence=None if m.hidden is None else m.hidden.evidence,
            match_number=m.number,
            previous=m.previous,
        )
