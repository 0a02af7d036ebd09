"""The hidden deal's crypto core: masking, opening, keys, audit, and every cheat caught."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hidden_helpers import Snoop, d2_sum_attack, deal_pair, forged_step, open_deal, play_round, seed

from p2pkoikoi.engine.cards import parse_cards
from p2pkoikoi.engine.presets import get_preset
from p2pkoikoi.session.mental import (
    BadPointError,
    BrokenAuditError,
    DuplicateCardError,
    FalseClaimError,
    NotACardError,
    SwappedCardError,
    WithheldKeyError,
    WrongMaskingError,
    check_audit,
)
from p2pkoikoi.session.mental.claims import check_declared, check_undeclared, must_declare
from p2pkoikoi.session.mental.deck import (
    HOST,
    JOINER,
    DeckSecrets,
    decode_deck,
    encode_deck,
    host_lock,
    host_mask,
    joiner_mask,
)
from p2pkoikoi.session.mental.errors import BadProofError
from p2pkoikoi.session.mental.group import (
    CARD_POINTS,
    GROUP_ORDER,
    check_point,
    derive_scalar,
    mul,
)
from p2pkoikoi.session.mental.table import FIELD_POSITIONS, HiddenTable, dealt_owner


def mask_of(codes: str) -> int:
    m = 0
    for c in parse_cards(codes.split()):
        m |= c.bit
    return m


def test_card_points_are_distinct_valid_and_not_small_multiples_of_the_base() -> None:
    assert len(set(CARD_POINTS)) == 48
    for p in CARD_POINTS:
        assert check_point(p) == p
    from p2pkoikoi.session.mental.group import ibase

    small = {ibase(i) for i in range(1, 100)}
    assert not small & set(CARD_POINTS)


def test_masking_commutes_and_unmasks() -> None:
    a = derive_scalar(seed("a"), b"x", 0)
    b = derive_scalar(seed("b"), b"x", 0)
    p = CARD_POINTS[7]
    assert mul(a, mul(b, p)) == mul(b, mul(a, p))
    assert int.from_bytes(a, "little") < GROUP_ORDER


def test_a_deal_opens_every_position_to_each_card_once() -> None:
    host, joiner = deal_pair(dealer=1)
    open_deal(host, joiner)
    # the field is open to both and the same; each side sees its own hand only
    for p in FIELD_POSITIONS:
        assert host.cards[p] == joiner.cards[p]
    assert set(host.cards) == set(FIELD_POSITIONS) | set(host.hand_positions(HOST))
    assert set(joiner.cards) == set(FIELD_POSITIONS) | set(joiner.hand_positions(JOINER))
    assert all(dealt_owner(p, 1) == JOINER for p in joiner.hand_positions(JOINER))
    play_round(host, joiner, random.Random(1))
    sigma_h = host.on_audit(joiner.audit())
    sigma_j = joiner.on_audit(host.audit())
    assert sigma_h == sigma_j and sorted(sigma_h) == list(range(48))
    for p, c in host.cards.items():
        assert sigma_h[p] == c
    # a verifier, trusting nobody, gets the same deck
    d1, d2, d3 = host.decks
    assert check_audit(d1, d2, d3, host.secrets, joiner.secrets) == sigma_h


def test_two_deals_differ() -> None:
    a, _ = deal_pair(label="one")
    b, _ = deal_pair(label="two")
    assert a.decks[2] != b.decks[2]


def test_the_modified_client_never_names_a_hidden_card() -> None:
    """Both sides snoop at every step of a whole round; neither can open a hidden position."""
    host, joiner = deal_pair(dealer=0, label="snoop")
    spies = (Snoop(host), Snoop(joiner))
    for spy in spies:
        spy.held.extend(encode_deck(d) for d in spy.table.decks)

    def check() -> None:
        spies[0].try_to_read(joiner.secrets)
        spies[1].try_to_read(host.secrets)

    check()
    hp = host.deal_keys()
    joiner.on_keys(hp, spies[1].keep(spies[0].keep(host.keys_for(hp))))
    check()
    jp = joiner.deal_keys()
    host.on_keys(jp, spies[0].keep(spies[1].keep(joiner.keys_for(jp))))
    check()
    tables = (host, joiner)
    rng = random.Random(5)
    seat = 0
    while host.hand_positions(0) or host.hand_positions(1):
        me, peer = tables[seat], tables[1 - seat]
        card = me.cards[rng.choice(me.hand_positions(seat))]
        pos, key = me.reveal(card)
        share = me.draw_share()
        for msg in (key, share):
            spies[0].keep(msg), spies[1].keep(msg)
        peer.on_reveal(card, pos, key)
        peer.on_draw_share(share)
        check()  # the drawer has not got the other share yet: its draw is still hidden from it
        back = peer.draw_share()
        spies[0].keep(back), spies[1].keep(back)
        me.on_draw_share(back)
        me.drawn()
        peer.drawn()
        check()
        seat = 1 - seat
    # after 16 turns: the 8 stock cards left are hidden from both
    assert len(host.hidden_from_me()) == 8 and len(joiner.hidden_from_me()) == 8
    assert spies[0].attempts > 1000


# ---------------------------------------------------------------------- cheats


STEPS = [(1, HOST), (2, JOINER), (22, JOINER), (3, HOST)]


@pytest.mark.parametrize(("step", "cheater"), STEPS, ids=["D1", "E", "D2", "D3"])
def test_a_step_with_sums_of_its_inputs_is_refused_on_receipt_naming_its_sender(
    step: int, cheater: int
) -> None:
    """The D2 sum attack (sums of input points at the cheater's own hand positions) and
    the same attack on every other step: the proof does not hold, the step is refused
    before anything of the deal opens."""
    hs = DeckSecrets.derive(HOST, seed("sh"))
    js = DeckSecrets.derive(JOINER, seed("sj"))
    host = HiddenTable(HOST, 0, hs, b"ctx")
    joiner = HiddenTable(JOINER, 0, js, b"ctx")
    hand = tuple(p for p in range(24) if dealt_owner(p, 0) == cheater)
    sums = d2_sum_attack(hand)
    m1 = host.step1()
    if step == 1:
        bad = forged_step(1, hs, (), b"ctx", sums)
        with pytest.raises(BadProofError) as exc:
            joiner.on_step1(bad)
        assert exc.value.seat == HOST and "shuffle proof" in str(exc.value)
        return
    m2 = joiner.on_step1(m1)
    if step in (2, 22):
        bad = forged_step(step, js, joiner.decks[0], b"ctx", sums)
        with pytest.raises(BadProofError) as exc:
            host.on_step2(bad)
        want = "shuffle proof" if step == 2 else "re-keying proof"
        assert exc.value.seat == JOINER and want in str(exc.value)
        assert not host.cards and len(host.decks) == 1  # refused: no D3, no key went out
        return
    host.on_step2(m2)
    bad = forged_step(3, hs, host.decks[1], b"ctx", sums)
    with pytest.raises(BadProofError) as exc:
        joiner.on_step3(bad)
    assert exc.value.seat == HOST and "re-keying proof" in str(exc.value)


def test_an_honest_deal_with_another_context_is_refused() -> None:
    """A proof is bound to its deal: replayed into another deal it does not hold."""
    host = HiddenTable(HOST, 0, DeckSecrets.derive(HOST, seed("ch")), b"round 1")
    joiner = HiddenTable(JOINER, 0, DeckSecrets.derive(JOINER, seed("cj")), b"round 2")
    with pytest.raises(BadProofError):
        joiner.on_step1(host.step1())


def test_the_audit_still_recomputes_every_step_naming_the_host() -> None:
    """A third party's check of a deal (what ``verify`` runs) with decks no proof vouches for."""
    hs = DeckSecrets.derive(HOST, seed("ah"))
    js = DeckSecrets.derive(JOINER, seed("aj"))
    d1 = host_mask(hs)
    d2 = joiner_mask(js, d1)
    d3 = list(host_lock(hs, d2))
    d3[40] = mul(derive_scalar(seed("bad"), b"x", 0), d3[40])
    with pytest.raises(WrongMaskingError) as exc:
        check_audit(d1, d2, tuple(d3), hs, js)
    assert exc.value.seat == HOST and "step 3" in str(exc.value)
    perm = list(js.perm)
    perm[1] = perm[0]  # the same D1 card twice
    dup = tuple(mul(js.keys[j], d1[perm[j]]) for j in range(48))
    with pytest.raises(WrongMaskingError) as exc2:
        check_audit(d1, dup, host_lock(hs, dup), hs, js)
    assert exc2.value.seat == JOINER and "step 2" in str(exc2.value)


def test_a_wrong_key_opens_no_card() -> None:
    host, joiner = deal_pair()
    hp = host.deal_keys()
    keys = bytearray(host.keys_for(hp))
    keys[:32] = derive_scalar(seed("bad"), b"x", 0)
    with pytest.raises(NotACardError) as exc:
        joiner.on_keys(hp, bytes(keys))
    assert exc.value.seat == HOST


def test_a_deck_with_a_repeated_point_or_a_bad_point_is_refused_at_once() -> None:
    host, _ = deal_pair()
    d1 = encode_deck(host.decks[0])
    with pytest.raises(DuplicateCardError) as exc:
        decode_deck(d1[:32] + d1[:32] + d1[64:], HOST, 1)
    assert exc.value.seat == HOST
    with pytest.raises(BadPointError):
        decode_deck(bytes(32) + d1[32:], HOST, 1)  # the identity: small order
    off_curve = bytes([2]) + bytes(31)
    with pytest.raises(BadPointError):
        decode_deck(off_curve + d1[32:], HOST, 1)
    with pytest.raises(BadPointError):
        decode_deck(d1[:-1], HOST, 1)


def test_playing_a_card_one_does_not_hold_is_a_swapped_card() -> None:
    host, joiner = deal_pair(dealer=0)
    open_deal(host, joiner)
    pos = host.hand_positions(HOST)[0]
    real = host.cards[pos]
    fake = next(c for c in range(48) if c not in host.cards.values())
    _, key = host.reveal(real)
    with pytest.raises(SwappedCardError) as exc:
        joiner.on_reveal(fake, pos, key)  # claims another card with the real key
    assert exc.value.seat == HOST
    with pytest.raises(SwappedCardError):
        joiner.on_reveal(real, FIELD_POSITIONS[0], key)  # a position not in its hand


def test_a_withheld_or_garbage_draw_key_is_caught() -> None:
    host, joiner = deal_pair(dealer=0)
    open_deal(host, joiner)
    card = host.cards[host.hand_positions(HOST)[0]]
    pos, key = host.reveal(card)
    joiner.on_reveal(card, pos, key)
    joiner.on_draw_share(host.draw_share())
    with pytest.raises(WithheldKeyError) as exc:
        host.on_draw_share(b"")  # no key at all
    assert exc.value.seat == JOINER
    assert isinstance(host.withheld("its draw key"), WithheldKeyError)
    garbage = derive_scalar(seed("g"), b"x", 0)
    with pytest.raises(NotACardError) as exc2:
        host.on_draw_share(garbage)
    assert exc2.value.seat == JOINER


def test_false_hand_claims_are_caught() -> None:
    rules = get_preset("online")
    teshi = mask_of("1b 1r 1c1 1c2 2a 3b 4a 5a")
    plain = mask_of("1b 2a 3b 4a 5a 6a 7a 8a")
    assert must_declare(teshi, rules) and not must_declare(plain, rules)
    check_declared(0, teshi, rules)
    with pytest.raises(FalseClaimError) as exc:
        check_declared(1, plain, rules)  # a claim the hand does not bear out
    assert exc.value.seat == 1
    check_undeclared(0, plain, rules)
    with pytest.raises(FalseClaimError) as exc2:
        check_undeclared(0, teshi, rules)  # a hand yaku kept quiet, found at the audit
    assert exc2.value.seat == 0
    lucky = rules.with_settings(teshi=0, kuttsuki=0, redeal_hand_four_of_month=True)
    assert must_declare(teshi, lucky)


def test_an_audit_that_disagrees_with_keys_sent_during_the_round_is_broken() -> None:
    host, joiner = deal_pair()
    open_deal(host, joiner)
    s = host.secrets
    keys = list(s.keys)
    keys[FIELD_POSITIONS[0]] = derive_scalar(seed("other"), b"x", 0)
    forged = DeckSecrets(s.seat, s.scalar, s.perm, tuple(keys)).encode()
    with pytest.raises(BrokenAuditError) as exc:
        joiner.on_audit(forged)
    assert exc.value.seat == HOST


def test_a_malformed_audit_is_broken() -> None:
    host, joiner = deal_pair()
    audit = host.audit()
    with pytest.raises(BrokenAuditError):
        joiner.on_audit(audit[:-1])
    perm_at = 32
    not_perm = audit[:perm_at] + bytes(48) + audit[perm_at + 48 :]
    with pytest.raises(BrokenAuditError):
        joiner.on_audit(not_perm)
    unreduced = audit[: perm_at + 48] + b"\xff" * 32 + audit[perm_at + 80 :]
    with pytest.raises(BrokenAuditError):
        joiner.on_audit(unreduced)
    # an audit with the wrong length
    with pytest.raises(BrokenAuditError):
        host.on_audit(audit + b"\x00")


def test_secrets_encode_and_decode() -> None:
    for seat in (HOST, JOINER):
        s = DeckSecrets.derive(seat, seed(f"s{seat}"))
        assert DeckSecrets.decode(seat, s.encode()) == s


def test_the_snoop_would_notice_a_leaked_key() -> None:
    """The modified-client check can fail: hand it the peer's key for a stock position."""
    host, joiner = deal_pair(label="leak")
    open_deal(host, joiner)
    spy = Snoop(joiner)
    spy.keep(host.secrets.keys[30])
    with pytest.raises(AssertionError, match="leaked"):
        spy.try_to_read(host.secrets)


def test_the_hidden_vectors_check_independently() -> None:
    """protocol/vectors/hidden.json, recomputed with libsodium (rbcl) and hashlib directly;
    the proofs checked by the verifier against the vectors' decks."""
    import hashlib
    import json
    from pathlib import Path

    import rbcl  # type: ignore[import-untyped]

    from p2pkoikoi.session.mental.proof import verify_rekey, verify_shuffle

    v = json.loads(
        (Path(__file__).resolve().parents[2] / "protocol/vectors/hidden.json").read_text()
    )
    tag = bytes.fromhex(v["tags"]["card"])
    assert tag == b"p2pkoikoi/v3/hidden/card\x00"
    for i, hexpt in enumerate(v["card_points"]):
        r = hashlib.sha512(tag + bytes([i])).digest()
        assert rbcl.crypto_core_ristretto255_from_hash(r).hex() == hexpt
    gtag = bytes.fromhex(v["tags"]["generator"])
    for i, hexpt in enumerate(v["generators"]["h"]):
        r = hashlib.sha512(gtag + i.to_bytes(4, "big")).digest()
        assert rbcl.crypto_core_ristretto255_from_hash(r).hex() == hexpt
    decks = {k: [bytes.fromhex(p) for p in v["decks"][k]] for k in ("d1", "e", "d2", "d3")}
    d1, e, d2, d3 = decks["d1"], decks["e"], decks["d2"], decks["d3"]
    host, joiner = v["deal_secret"]["host"], v["deal_secret"]["joiner"]
    a = bytes.fromhex(host["scalar"])
    b = bytes.fromhex(joiner["scalar"])
    pts = [bytes.fromhex(p) for p in v["card_points"]]
    mul = rbcl.crypto_scalarmult_ristretto255
    smul = rbcl.crypto_core_ristretto255_scalar_mul
    inv = rbcl.crypto_core_ristretto255_scalar_invert
    for j in (0, 17, 47):
        assert mul(a, pts[host["perm"][j]]) == d1[j]
        assert mul(b, d1[joiner["perm"][j]]) == e[j]
        bj = bytes.fromhex(joiner["keys"][j])
        assert mul(smul(bj, inv(b)), e[j]) == d2[j]
        assert mul(bj, d1[joiner["perm"][j]]) == d2[j]
        aj = bytes.fromhex(host["keys"][j])
        assert mul(smul(aj, inv(a)), d2[j]) == d3[j]
        assert v["decks"]["dealt"][j] == host["perm"][joiner["perm"][j]]
    for case in v["opened"]:
        k = smul(bytes.fromhex(case["host_key"]), bytes.fromhex(case["joiner_key"]))
        assert mul(k, pts[case["card"]]) == d3[case["position"]]
    pr = {k: bytes.fromhex(x) for k, x in v["proofs"].items() if k != "description"}
    ctx = pr["context"]
    verify_shuffle(ctx + b"\x01", pts, d1, pr["d1_shuffle"], "the host", 0)
    verify_shuffle(ctx + b"\x02", d1, e, pr["e_shuffle"], "the joiner", 1)
    verify_rekey(ctx + b"\x02", e, d2, pr["d2_rekey"], "the joiner", 1)
    verify_rekey(ctx + b"\x03", d2, d3, pr["d3_rekey"], "the host", 0)
    first = v["first_deal"]["moves"]
    assert bytes.fromhex(first[0]["deck"]) == b"".join(d1) + pr["d1_shuffle"]
    assert bytes.fromhex(first[1]["deck"]) == b"".join(d2 + e) + pr["e_shuffle"] + pr["d2_rekey"]
    assert bytes.fromhex(first[2]["deck"]) == b"".join(d3) + pr["d3_rekey"]
    swap = [m["kind"] for m in v["hand_swap_deal"]["moves"]]
    assert swap[:9] == ["deck1", "deck2", "deck3", "keys", "act", "hand", "hand", "declare",
                        "declare"]  # fmt: skip
    kinds = [m["kind"] for m in v["first_deal"]["moves"]]
    assert kinds[:4] == ["deck1", "deck2", "deck3", "keys"] and kinds[-2:] == ["audit", "audit"]
    # a card move's transcript entry, and what its v2 signature covers
    ce = v["card_entry"]

    def lp(b: bytes) -> bytes:
        return len(b).to_bytes(4, "big") + b

    def u64(n: int) -> bytes:
        return n.to_bytes(8, "big")

    entry = b"".join(
        lp(f)
        for f in (
            b"card",
            u64(ce["seq"]),
            u64(ce["seat"]),
            ce["kind"].encode(),
            ce["action"].encode(),
            u64(ce["pos"]),
            b"",  # no deck
            bytes.fromhex(ce["keys"]),
            bytes.fromhex(ce["state_hash_before"]),
        )
    )
    t = hashlib.sha256(bytes(32) + entry).digest()
    assert t.hex() == ce["transcript_after"]
    assert ce["signed"] == (b"p2pkoikoi/v2/sig\x00" + t).hex()


def test_the_proofs_in_the_vectors_verify_as_hidden_deal_md_specifies_them() -> None:
    """An independent verifier written from protocol/hidden-deal.md section 3a alone
    (rbcl and hashlib, no p2pkoikoi code) accepts the vectors' four proofs, and refuses
    a proof for a deck with one point changed."""
    import hashlib
    import json
    from pathlib import Path

    import rbcl  # type: ignore[import-untyped]

    v = json.loads(
        (Path(__file__).resolve().parents[2] / "protocol/vectors/hidden.json").read_text()
    )
    order = 2**252 + 27742317777372353535851937790883648493

    def hs(data: bytes) -> int:
        return int.from_bytes(hashlib.sha512(data).digest(), "little") % order

    def lp(b: bytes) -> bytes:
        return len(b).to_bytes(4, "big") + b

    def mul(n: int, p: bytes) -> bytes:
        n %= order
        return (
            bytes(32)
            if n == 0
            else rbcl.crypto_scalarmult_ristretto255(n.to_bytes(32, "little"), p)
        )

    def add(*ps: bytes) -> bytes:
        acc = bytes(32)
        for p in ps:
            acc = rbcl.crypto_core_ristretto255_add(acc, p)
        return acc

    def neg(p: bytes) -> bytes:
        return rbcl.crypto_core_ristretto255_sub(bytes(32), p)

    g = rbcl.crypto_scalarmult_ristretto255_base((1).to_bytes(32, "little"))
    tag = {k: bytes.fromhex(x) for k, x in v["tags"].items()}
    chain = bytes.fromhex(v["generators"]["chain_base"])
    gens = [bytes.fromhex(p) for p in v["generators"]["h"]]

    def shuffle_ok(ctx: bytes, xs: list[bytes], ys: list[bytes], proof: bytes) -> bool:
        n = 48
        c = [proof[32 * i : 32 * i + 32] for i in range(n)]
        ch = [proof[32 * (n + i) : 32 * (n + i) + 32] for i in range(n)]
        sc = [int.from_bytes(proof[32 * (2 * n + i) : 32 * (2 * n + i + 1)], "little")
              for i in range(2 * n + 5)]  # fmt: skip
        e, s1, s2, s3, s4 = sc[:5]
        sh, sp = sc[5 : 5 + n], sc[5 + n :]
        seed = hashlib.sha512(
            lp(tag["shuffle_u"]) + lp(ctx) + lp(b"".join(xs)) + lp(b"".join(ys)) + lp(b"".join(c))
        ).digest()
        u = [hs(seed + j.to_bytes(4, "big")) for j in range(n)]
        prod = 1
        for x in u:
            prod = prod * x % order
        a = add(*(mul(u[j], xs[j]) for j in range(n)))
        cbar = add(*c, *(neg(h) for h in gens))
        chat = add(ch[-1], neg(mul(prod, chain)))
        ctil = add(*(mul(u[j], c[j]) for j in range(n)))
        t1 = add(mul(e, cbar), mul(s1, g))
        t2 = add(mul(e, chat), mul(s2, g))
        t3 = add(mul(e, ctil), mul(s3, g), *(mul(sp[i], gens[i]) for i in range(n)))
        t4 = add(*(mul(sp[i], ys[i]) for i in range(n)), neg(mul(s4, a)))
        th = [add(mul(e, ch[i]), mul(sh[i], g), mul(sp[i], ch[i - 1] if i else chain))
              for i in range(n)]  # fmt: skip
        return e == hs(
            lp(tag["shuffle_e"]) + lp(seed) + lp(b"".join(ch)) + lp(t1 + t2 + t3 + t4)
            + lp(b"".join(th))
        )  # fmt: skip

    def rekey_ok(ctx: bytes, xs: list[bytes], ys: list[bytes], proof: bytes) -> bool:
        e = int.from_bytes(proof[:32], "little")
        s = [int.from_bytes(proof[32 * (i + 1) : 32 * (i + 2)], "little") for i in range(48)]
        rs = [add(mul(s[i], xs[i]), neg(mul(e, ys[i]))) for i in range(48)]
        return e == hs(
            lp(tag["rekey_e"]) + lp(ctx) + lp(b"".join(xs)) + lp(b"".join(ys))
            + lp(b"".join(rs))
        )  # fmt: skip

    decks = {k: [bytes.fromhex(p) for p in v["decks"][k]] for k in ("d1", "e", "d2", "d3")}
    pts = [bytes.fromhex(p) for p in v["card_points"]]
    pr = {k: bytes.fromhex(x) for k, x in v["proofs"].items() if k != "description"}
    ctx = pr["context"]
    assert shuffle_ok(ctx + b"\x01", pts, decks["d1"], pr["d1_shuffle"])
    assert shuffle_ok(ctx + b"\x02", decks["d1"], decks["e"], pr["e_shuffle"])
    assert rekey_ok(ctx + b"\x02", decks["e"], decks["d2"], pr["d2_rekey"])
    assert rekey_ok(ctx + b"\x03", decks["d2"], decks["d3"], pr["d3_rekey"])
    summed = list(decks["e"])
    summed[0] = add(summed[0], summed[1])  # the sum attack on E
    assert not shuffle_ok(ctx + b"\x02", decks["d1"], summed, pr["e_shuffle"])


def test_dealing_hidden_leaves_no_copy_of_libsodium_in_the_temporary_folder(
    tmp_path: Path,
) -> None:
    """rbcl writes its libsodium to a new temporary file on every import; the group
    module removes it once loaded (each hidden-deal process left 2.7 MB in /tmp)."""
    import subprocess
    import sys

    probe = (
        "from p2pkoikoi.session.mental.group import CARD_POINTS, mul_many\n"
        "print(len(mul_many([(5, CARD_POINTS[1]), (7, None)])))\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "2", proc.stderr
    assert list(tmp_path.iterdir()) == []
