"""Test vectors of the hidden deal (``protocol/vectors/hidden.json``).

Built by ``python -m p2pkoikoi.session.vectors`` with the other vectors; every
value derives from fixed labels, so another implementation can check each step:
card points, the proof generators, secrets from a seed, the masked decks and
their proofs, opening a position, the state hash, one signed card move, and
every move of a whole first deal (with and without the hand swap).
"""

from __future__ import annotations

import hashlib
from typing import Any

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.engine import Action, get_preset
from p2pkoikoi.engine.rules import RuleSet
from p2pkoikoi.session.mental import proof
from p2pkoikoi.session.mental.deck import (
    DECK_LEN,
    HOST,
    JOINER,
    check_audit,
    host_lock,
    host_mask,
    joiner_mask,
    joiner_shuffle,
    open_position,
    rekey_factors,
    step1_message,
    step2_message,
    step3_message,
)
from p2pkoikoi.session.mental.group import CARD_POINTS, TAG_CARD, TAG_PERM, TAG_SCALAR
from p2pkoikoi.session.mental.play import (
    TAG_DEAL_SECRET,
    TAG_DECKS,
    TAG_STATE,
    HiddenMatch,
    deal_context,
    deal_secrets,
    public_encoding,
)
from p2pkoikoi.session.mental.table import FIELD_POSITIONS


def _label(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _first_deal(rules: RuleSet, seed: bytes, masters: tuple[bytes, bytes]) -> list[Any]:
    """Every move of the first deal between two reference sides, each choosing its first
    legal action, up to and with the deal's audits."""
    sides = [HiddenMatch(rules, seed, s, masters[s]) for s in (HOST, JOINER)]
    moves: list[dict[str, Any]] = []
    while not (sides[0].is_over and sides[1].is_over) and sides[0].audits == 0:
        moved = False
        for me in sides:
            while me.outbox:
                mv, before = me.outbox.pop(0)
                entry: dict[str, Any] = {"seat": mv.seat, "kind": mv.kind}
                if mv.action:
                    entry["action"] = mv.action
                if mv.pos >= 0:
                    entry["pos"] = mv.pos
                if mv.deck:
                    entry["deck"] = mv.deck.hex()
                if mv.keys:
                    entry["keys"] = mv.keys.hex()
                entry["state_hash_before"] = before.hex()
                moves.append(entry)
                sides[1 - me.seat].receive(mv)
                moved = True
        for me in sides:
            if me.my_turn():
                me.act(me.legal_actions()[0])
                moved = True
        if not moved:  # pragma: no cover - the deal always ends in an audit
            break
    return moves


def hidden_vectors() -> dict[str, Any]:
    rules = get_preset("online").with_settings(deal="hidden", rounds=1)
    seed = _label("vec/hidden/match-seed")
    masters = (_label("vec/hidden/host-secret"), _label("vec/hidden/joiner-secret"))
    hs = deal_secrets(HOST, masters[0], 1, 0)
    js = deal_secrets(JOINER, masters[1], 1, 0)
    d1 = host_mask(hs)
    d2 = joiner_mask(js, d1)
    d3 = host_lock(hs, d2)
    sigma = check_audit(d1, d2, d3, hs, js)
    opened = [
        {
            "position": p,
            "host_key": hs.keys[p].hex(),
            "joiner_key": js.keys[p].hex(),
            "card": open_position(d3, p, hs.keys[p], js.keys[p], JOINER),
        }
        for p in (FIELD_POSITIONS[0], 0, 24)
    ]
    moves = _first_deal(rules, seed, masters)
    swap_rules = get_preset("rulebook").with_settings(deal="hidden", rounds=1)
    swap_moves = _first_deal(swap_rules, seed, masters)
    initial_state = HiddenMatch(rules, seed, HOST, masters[0]).state
    ctx = deal_context(initial_state)
    e = joiner_shuffle(js, d1)
    m1 = step1_message(hs, ctx)[1]
    m2 = step2_message(js, d1, ctx)[1]
    m3 = step3_message(hs, d2, ctx)[1]
    initial = HiddenMatch(rules, seed, HOST, masters[0])
    t = crypto.absorb(bytes(32), "card", *crypto.card_entry_fields(
        7, 1, "act", str(Action.parse("play 1b")), 4, None, bytes(64), bytes(32)
    ))  # fmt: skip
    return {
        "description": "the hidden deal (protocol/hidden-deal.md, protocol version 3):"
        " ristretto255 (RFC 9496) through libsodium; points and scalars are 32 bytes"
        " (canonical encodings; scalars little-endian, reduced mod L), hex",
        "tags": {
            "card": TAG_CARD.hex(),
            "scalar": TAG_SCALAR.hex(),
            "perm": TAG_PERM.hex(),
            "deal_secret": TAG_DEAL_SECRET.hex(),
            "decks": TAG_DECKS.hex(),
            "state": TAG_STATE.hex(),
            "generator": proof.TAG_GEN.hex(),
            "shuffle_u": proof.TAG_U.hex(),
            "shuffle_e": proof.TAG_E.hex(),
            "rekey_e": proof.TAG_REKEY.hex(),
            "nonce": proof.TAG_NONCE.hex(),
        },
        "card_points": [p.hex() for p in CARD_POINTS],
        "generators": {
            "description": "H = from_hash(SHA-512(tag_generator || 'chain')),"
            " H_i = from_hash(SHA-512(tag_generator || u32 i)); G is ristretto255's"
            " standard generator",
            "chain_base": proof.CHAIN_BASE.hex(),
            "h": [p.hex() for p in proof.GENERATORS],
        },
        "deal_secret": {
            "description": "seed = SHA-256(tag_deal_secret || master || u16 round || u16 attempt)"
            " for round 1, attempt 0; then the scalar, permutation and keys derive from it",
            "host_master": masters[0].hex(),
            "joiner_master": masters[1].hex(),
            "host": {
                "scalar": hs.scalar.hex(),
                "perm": list(hs.perm),
                "keys": [k.hex() for k in hs.keys],
            },
            "joiner": {
                "scalar": js.scalar.hex(),
                "perm": list(js.perm),
                "keys": [k.hex() for k in js.keys],
            },
            "joiner_rekey_factors": [k.hex() for k in rekey_factors(js)],
            "host_rekey_factors": [k.hex() for k in rekey_factors(hs)],
        },
        "decks": {
            "d1": [p.hex() for p in d1],
            "e": [p.hex() for p in e],
            "d2": [p.hex() for p in d2],
            "d3": [p.hex() for p in d3],
            "dealt": list(sigma),
        },
        "proofs": {
            "description": "the round 1 deal's proofs (hidden-deal.md section 4): context ="
            " u16 round || u16 attempt || u8 dealer, then the step's number (1, 2, 3) appended",
            "context": ctx.hex(),
            "d1_shuffle": m1[DECK_LEN:].hex(),
            "e_shuffle": m2[2 * DECK_LEN : 2 * DECK_LEN + proof.SHUFFLE_PROOF_LEN].hex(),
            "d2_rekey": m2[2 * DECK_LEN + proof.SHUFFLE_PROOF_LEN :].hex(),
            "d3_rekey": m3[DECK_LEN:].hex(),
        },
        "opened": opened,
        "state": {
            "rules_fingerprint": rules.fingerprint(),
            "match_seed": seed.hex(),
            "public_encoding_at_start": public_encoding(initial.state).hex(),
            "state_hash_at_start": initial.initial_hash.hex(),
        },
        "card_entry": {
            "description": "transcript entry of a card move: entry('card', u64 seq, u64 seat,"
            " kind, action, u64 pos (255: none), deck, keys, state_hash_before); absorbed"
            " into T = 32 zero bytes here",
            "seq": 7,
            "seat": 1,
            "kind": "act",
            "action": "play 1b",
            "pos": 4,
            "keys": bytes(64).hex(),
            "state_hash_before": bytes(32).hex(),
            "transcript_after": t.hex(),
            "signed": crypto.sig_message(t).hex(),
            "signed_description": "what the mover signs (as for an action; the tag is still v2):"
            " 'p2pkoikoi/v2/sig' || 0x00 || transcript_after",
        },
        "first_deal": {
            "description": "every move of the first deal between two reference sides with"
            " the masters above, rules online + deal=hidden + rounds=1, each side playing"
            " its first legal action",
            "moves": moves,
        },
        "hand_swap_deal": {
            "description": "every move of the first deal, rules rulebook (hand_swap on) +"
            " deal=hidden + rounds=1, same masters and seed, each side playing its first"
            " legal action: deck1..keys, the non-dealer's act swap/keep, hand, hand,"
            " declare, declare, then play",
            "rules_fingerprint": swap_rules.fingerprint(),
            "moves": swap_moves,
        },
    }
