"""Cheats in a whole hidden-deal match: each caught with its own error, naming the cheater."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest
from hidden_helpers import seed

from p2pkoikoi.engine.cards import MONTH_OF
from p2pkoikoi.engine.deal import coin
from p2pkoikoi.engine.presets import PRESETS
from p2pkoikoi.engine.rules import RuleSet
from p2pkoikoi.session.mental import (
    BrokenAuditError,
    FalseClaimError,
    HiddenDealError,
    WithheldKeyError,
    WrongMaskingError,
)
from p2pkoikoi.session.mental.deck import DeckSecrets
from p2pkoikoi.session.mental.errors import IllegalHiddenPlayError, NotACardError
from p2pkoikoi.session.mental.play import CardMove, HiddenMatch, deal_secrets
from p2pkoikoi.session.mental.table import dealt_owner

ONLINE = PRESETS["online"].with_settings(deal="hidden", rounds=2)
Tamper = Callable[[CardMove], CardMove | None]


def play(
    rules: RuleSet,
    *,
    secrets: tuple[bytes, bytes] = (seed("hs"), seed("js")),
    match_seed: bytes = seed("match"),
    cheater: int = 1,
    tamper: Tamper = lambda m: m,
    cheater_rules: RuleSet | None = None,
    choose: Callable[[HiddenMatch], object] | None = None,
) -> tuple[HiddenMatch, HiddenMatch]:
    """Run a match; ``tamper`` rewrites (or drops, returning None) the cheater's moves."""
    sides = [
        HiddenMatch(rules if s != cheater else (cheater_rules or rules), match_seed, s, secrets[s])
        for s in (0, 1)
    ]
    rng = random.Random(7)
    while not (sides[0].is_over and sides[1].is_over):
        for me in sides:
            other = sides[1 - me.seat]
            while me.outbox:
                mv: CardMove | None = me.outbox.pop(0)[0]
                if me.seat == cheater:
                    mv = tamper(mv)  # type: ignore[arg-type]
                if mv is not None:
                    other.receive(mv)
        for me in sides:
            if me.my_turn():
                pick = choose(me) if (choose and me.seat == cheater) else None
                me.act(pick or rng.choice(me.legal_actions()))  # type: ignore[arg-type]
    return sides[0], sides[1]


def hand_yaku_secrets(rules: RuleSet, holder: int) -> tuple[bytes, bytes]:
    """Secrets whose first deal gives seat ``holder`` a Teshi (found from the permutations
    alone, which is cheap), with no four of a month on the field."""
    dealer = coin(seed("match"), 0)
    hs = seed("hs")
    host_perm = deal_secrets(0, hs, 1, 0).perm
    for k in range(200_000):
        js = seed(f"js{k}")
        jp = deal_secrets(1, js, 1, 0).perm
        sigma = [host_perm[jp[j]] for j in range(48)]
        months: dict[int, int] = {}
        field: dict[int, int] = {}
        for p in range(24):
            owner = dealt_owner(p, dealer)
            target = months if owner == holder else field if owner is None else None
            if target is not None:
                m = MONTH_OF[sigma[p]]
                target[m] = target.get(m, 0) + 1
        if 4 in months.values() and 4 not in field.values():
            return hs, js
    raise AssertionError("no Teshi deal found")  # pragma: no cover


def test_a_false_hand_yaku_claim_is_caught_at_once() -> None:
    class Claimer(HiddenMatch):
        def _declare(self) -> None:  # declares whatever the hand
            own = self.table.hand_positions(self.seat)
            self._send(CardMove("declare", self.seat, keys=self.table.keys_for(own)))

    h = HiddenMatch(ONLINE, seed("match"), 0, seed("hs"))
    j = Claimer(ONLINE, seed("match"), 1, seed("js"))
    with pytest.raises(FalseClaimError) as exc:
        for _ in range(20):
            for me, other in ((h, j), (j, h)):
                while me.outbox:
                    other.receive(me.outbox.pop(0)[0])
    assert exc.value.seat == 1 and "claimed" in str(exc.value)


def test_a_hand_yaku_kept_quiet_is_caught_at_the_audit() -> None:
    rules = ONLINE
    secrets = hand_yaku_secrets(rules, holder=1)
    # honest play declares it: the round ends with the hand yaku
    h, j = play(rules, secrets=secrets)
    assert h.state.results[0].reason == "hand_yaku" and h.state.results[0].winner == 1

    # a modified client whose engine ignores hand yaku declares nothing and plays on
    quiet = rules.with_settings(teshi=0, kuttsuki=0)
    with pytest.raises(FalseClaimError) as exc:
        play(rules, secrets=secrets, cheater_rules=quiet)
    assert exc.value.seat == 1 and "did not declare" in str(exc.value)


def test_ignoring_forced_capture_is_caught() -> None:
    """A modified client plays by rules without forced capture; its peer enforces them."""
    strict = PRESETS["online"].with_settings(deal="hidden", rounds=3, forced_capture=True)
    loose = strict.with_settings(forced_capture=False)

    def avoid_captures(me: HiddenMatch) -> object:
        field = me.state.field.mask
        from p2pkoikoi.engine.cards import SAME_MONTH

        plays = [a for a in me.legal_actions() if a.card is not None and a.kind.value == "play"]
        quiet = [a for a in plays if not field & SAME_MONTH[a.card.id]]  # type: ignore[union-attr]
        return quiet[0] if quiet and len(quiet) < len(plays) else None

    with pytest.raises(IllegalHiddenPlayError) as exc:
        play(strict, cheater_rules=loose, choose=avoid_captures)
    assert exc.value.seat == 1


def test_a_withheld_draw_key_is_caught() -> None:
    def withhold(mv: CardMove) -> CardMove:
        if mv.kind == "draw":
            return CardMove("act", mv.seat, "koikoi")  # anything but the key
        return mv

    with pytest.raises(WithheldKeyError) as exc:
        play(ONLINE, tamper=withhold)
    assert exc.value.seat == 1


def test_a_garbage_draw_key_opens_no_card() -> None:
    bad = DeckSecrets.derive(1, seed("garbage")).keys[0]

    def garble(mv: CardMove) -> CardMove:
        return dataclasses.replace(mv, keys=bad) if mv.kind == "draw" else mv

    with pytest.raises(NotACardError) as exc:
        play(ONLINE, tamper=garble)
    assert exc.value.seat == 1


def test_a_broken_audit_is_caught() -> None:
    def forge(mv: CardMove) -> CardMove:
        if mv.kind != "audit":
            return mv
        d = bytearray(mv.deck)
        d[32 + 48 + 2 * 32] ^= 1  # the key for position 2 (a field card, opened during the round)
        return dataclasses.replace(mv, deck=bytes(d))

    with pytest.raises(HiddenDealError) as exc:
        play(ONLINE, tamper=forge)
    assert isinstance(exc.value, BrokenAuditError) and exc.value.seat == 1

    def forge_unrevealed(mv: CardMove) -> CardMove:
        if mv.kind != "audit":
            return mv
        d = bytearray(mv.deck)
        d[-32] ^= 1  # the key for position 47, never opened: the recomputed deck differs
        return dataclasses.replace(mv, deck=bytes(d))

    with pytest.raises(WrongMaskingError) as exc2:
        play(ONLINE, tamper=forge_unrevealed)
    assert exc2.value.seat == 1


def test_a_missing_audit_is_caught() -> None:
    def drop_audit(mv: CardMove) -> CardMove:
        return CardMove("act", mv.seat, "stop") if mv.kind == "audit" else mv

    with pytest.raises(BrokenAuditError) as exc:
        play(ONLINE, tamper=drop_audit)
    assert exc.value.seat == 1


def test_garbled_moves_are_refused_with_a_protocol_error_never_a_crash() -> None:
    """Every move of a whole match, garbled one field at a time, at the point it arrives."""
    from p2pkoikoi.session.errors import ProtocolError

    rng = random.Random(11)
    sides = [HiddenMatch(ONLINE, seed("g"), s, seed(f"g{s}")) for s in (0, 1)]
    play_rng = random.Random(2)
    refused = 0
    while not (sides[0].is_over and sides[1].is_over):
        for me in sides:
            other = sides[1 - me.seat]
            while me.outbox:
                mv = me.outbox.pop(0)[0]
                # a garbled copy goes to a throw-away replica of the receiver first
                import copy

                replica = copy.deepcopy(other)
                field = rng.choice(["kind", "action", "pos", "deck", "keys"])
                if field == "kind":
                    bad = dataclasses.replace(mv, kind=rng.choice(["act", "draw", "audit", "keys"]))
                elif field == "action":
                    bad = dataclasses.replace(
                        mv, action=rng.choice(["play 1b", "take 8a", "x", ""])
                    )
                elif field == "pos":
                    bad = dataclasses.replace(mv, pos=rng.randrange(-1, 48))
                elif field == "deck":
                    d = bytearray(mv.deck or b"\x00")
                    d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
                    bad = dataclasses.replace(mv, deck=bytes(d[: rng.choice([len(d), 32, 1])]))
                else:
                    k = bytearray(mv.keys or b"\x00")
                    k[rng.randrange(len(k))] ^= 1 << rng.randrange(8)
                    bad = dataclasses.replace(mv, keys=bytes(k))
                if bad != mv:
                    try:
                        replica.receive(bad)
                    except ProtocolError:
                        refused += 1
                other.receive(mv)
        for me in sides:
            if me.my_turn():
                me.act(play_rng.choice(me.legal_actions()))
    assert refused > 20


# ---------------------------------------------------------------------- against real processes
def cheater_cli(attack: str) -> Callable[..., list[str]]:
    """The command line of the modified program (tests/hidden_cheater.py) for ``attack``."""
    import sys
    from pathlib import Path

    script = str(Path(__file__).resolve().parents[1] / "hidden_cheater.py")
    return lambda *args: [sys.executable, script, attack, *args]


PROCESS_ATTACKS = [
    # attack, cheating seat, the card move it is refused at, what the refusal names
    ("d1-sums", 0, "deck1", "the host's shuffle proof does not hold"),
    ("e-sums", 1, "deck2", "the joiner's shuffle proof does not hold"),
    ("d2-sums", 1, "deck2", "the joiner's re-keying proof does not hold"),
    ("d3-sums", 0, "deck3", "the host's re-keying proof does not hold"),
]


@pytest.mark.parametrize(
    ("attack", "cheater", "kind", "named"), PROCESS_ATTACKS, ids=[a[0] for a in PROCESS_ATTACKS]
)
def test_a_step_with_sums_is_refused_at_once_between_real_processes(
    tmp_path: object, attack: str, cheater: int, kind: str, named: str
) -> None:
    """The D2 sum attack of the security review (sums of D1 entries at the joiner's own hand
    positions, which let it read 6 of the host's cards), and the same attack on every other
    masking step: the honest program refuses the step where it arrives, before any card of
    the deal opens, and its record names the cheater as a forfeit, with evidence, which
    ``verify`` confirms."""
    import json
    from pathlib import Path

    from procs import cli, finish, run_join, start_host, verify

    tmp = Path(str(tmp_path))
    hrec, jrec = tmp / "host.koikoi", tmp / "joiner.koikoi"
    common = ("--set", "deal=hidden", "--rounds", "2")
    host, first = start_host(
        tmp, "--bind", "127.0.0.1", *common, "--record", str(hrec),
        command=cheater_cli(attack) if cheater == 0 else cli,
    )  # fmt: skip
    joined = run_join(
        tmp, first["invite"], "--record", str(jrec),
        command=cheater_cli(attack) if cheater == 1 else cli,
    )  # fmt: skip
    code, _, herr = finish(host)
    honest_err = joined.stderr if cheater == 0 else herr
    honest_code = joined.returncode if cheater == 0 else code
    assert honest_code != 0 and named in honest_err, honest_err
    assert "Traceback" not in honest_err
    record = json.loads((jrec if cheater == 0 else hrec).read_text())
    assert record["forfeit"]["seat"] == cheater and named in record["forfeit"]["reason"]
    assert record["evidence"]["seat"] == 1 - cheater
    kinds = [a.get("kind") for a in record["actions"] if a.get("kind")]
    # nothing opened after the forged step: it is the last card move, except that the
    # joiner answers the host's D1 with its own masking step before it checks D1's
    # proof (hidden-deal.md section 7: a step may go out unchecked, a key may not)
    after = kinds[kinds.index(kind) + 1 :]
    assert after == (["deck2"] if kind == "deck1" else []), kinds
    honest = [a for a in record["actions"] if a.get("kind") and a["seat"] != cheater]
    assert not any(a.get("keys") for a in honest)  # the honest side opened nothing
    result = verify(jrec if cheater == 0 else hrec)
    assert result.returncode != 0
    assert f"seat {cheater} cheated" in result.stdout and named in result.stdout, result.stdout


@pytest.mark.parametrize("cheater", [0, 1], ids=["host", "joiner"])
def test_a_forged_audit_answered_before_it_is_checked_is_refused_between_real_processes(
    tmp_path: object, cheater: int
) -> None:
    """A live side answers the other's audit of a finished deal before it checks it (the
    joiner with its own audit, the host with the next deal's deck1: hidden-deal.md
    section 5).  A forged audit is still refused before any key of the next deal goes
    out, and the honest record names the forger as a forfeit, which verify confirms."""
    import json
    from pathlib import Path

    from procs import cli, finish, run_join, start_host, verify

    tmp = Path(str(tmp_path))
    hrec, jrec = tmp / "host.koikoi", tmp / "joiner.koikoi"
    common = ("--set", "deal=hidden", "--rounds", "3", "--set", "knockout=false")
    host, first = start_host(
        tmp, "--bind", "127.0.0.1", *common, "--record", str(hrec),
        command=cheater_cli("forged-audit") if cheater == 0 else cli,
    )  # fmt: skip
    joined = run_join(
        tmp, first["invite"], "--record", str(jrec),
        command=cheater_cli("forged-audit") if cheater == 1 else cli,
    )  # fmt: skip
    code, _, herr = finish(host)
    honest_err = joined.stderr if cheater == 0 else herr
    honest_code = joined.returncode if cheater == 0 else code
    named = "audit key for position 2 is not the key it sent"
    assert honest_code != 0 and named in honest_err, honest_err
    assert "Traceback" not in honest_err
    record = json.loads((jrec if cheater == 0 else hrec).read_text())
    assert record["forfeit"]["seat"] == cheater and named in record["forfeit"]["reason"]
    kinds = [a.get("kind") for a in record["actions"] if a.get("kind")]
    first_audit = kinds.index("audit")
    # answered, not yet checked: the joiner's own audit, or the host's next deck1
    assert kinds[first_audit:] == (
        ["audit", "audit"] if cheater == 0 else ["audit", "audit", "deck1"]
    )
    result = verify(jrec if cheater == 0 else hrec)
    assert result.returncode != 0
    assert f"seat {cheater} cheated" in result.stdout, result.stdout


def test_leaving_mid_deal_is_a_forfeit_in_the_other_sides_record(tmp_path: object) -> None:
    """The joiner's program ends after its masking step, owing the deal keys: once the
    host gives up on it (here at once: no reconnect window), its record holds the
    joiner's forfeit, signed by the host, and says so."""
    import json
    from pathlib import Path

    from procs import finish, run_join, start_host, verify

    tmp = Path(str(tmp_path))
    hrec = tmp / "host.koikoi"
    host, first = start_host(
        tmp, "--bind", "127.0.0.1", "--set", "deal=hidden", "--reconnect-window", "0",
        "--record", str(hrec),
    )  # fmt: skip
    run_join(tmp, first["invite"], command=cheater_cli("leave-mid-deal"))
    code, _, err = finish(host)
    assert code != 0 and "the joiner forfeits" in err, err
    record = json.loads(hrec.read_text())
    assert (
        record["forfeit"]["seat"] == 1
        and "left during the hidden deal" in (record["forfeit"]["reason"])
    )
    kinds = [a.get("kind") for a in record["actions"]]
    assert kinds[-1] == "deck3"  # the host's step; the joiner's keys never came
    result = verify(hrec)
    assert result.returncode == 3 and "forfeit" in result.stdout, result.stdout
