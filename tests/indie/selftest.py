"""python -m indie.selftest: this implementation against protocol/vectors (no network)."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from . import engine, group, proofs, rules, secrets, wire
from .group import CARD_POINTS, mul


def _vec(name: str) -> Any:
    return json.loads((rules.VECTORS / name).read_text())


def check_proofs() -> None:
    d = _vec("hidden.json")
    assert [p.hex() for p in CARD_POINTS] == d["card_points"], "card points"
    assert group.H_CHAIN.hex() == d["generators"]["chain_base"], "generator H"
    assert [p.hex() for p in group.H_GEN] == d["generators"]["h"], "generators H_i"
    ds = d["deal_secret"]
    hs = secrets.derive(bytes.fromhex(ds["host_master"]), 1, 0)
    js = secrets.derive(bytes.fromhex(ds["joiner_master"]), 1, 0)
    assert (
        list(hs.perm) == ds["host"]["perm"]
        and [k.to_bytes(32, "little").hex() for k in js.keys] == ds["joiner"]["keys"]
    )
    ctx = bytes.fromhex(d["proofs"]["context"])
    d1 = [mul(hs.scalar, CARD_POINTS[hs.perm[j]]) for j in range(48)]
    e = [mul(js.scalar, d1[js.perm[j]]) for j in range(48)]
    d2 = [mul(k, e[j]) for j, k in enumerate(js.rekey)]
    d3 = [mul(k, d2[j]) for j, k in enumerate(hs.rekey)]
    for name, mine in (("d1", d1), ("e", e), ("d2", d2), ("d3", d3)):
        assert [x.hex() for x in mine] == d["decks"][name], name
    made = {
        "d1_shuffle": proofs.shuffle_prove(ctx + b"\1", CARD_POINTS, d1, hs.scalar, list(hs.perm)),
        "e_shuffle": proofs.shuffle_prove(ctx + b"\2", d1, e, js.scalar, list(js.perm)),
        "d2_rekey": proofs.rekey_prove(ctx + b"\2", e, d2, js.rekey),
        "d3_rekey": proofs.rekey_prove(ctx + b"\3", d2, d3, hs.rekey),
    }
    for name, proof in made.items():
        assert proof.hex() == d["proofs"][name], name
    assert proofs.shuffle_verify(ctx + b"\1", CARD_POINTS, d1, made["d1_shuffle"])
    assert proofs.shuffle_verify(ctx + b"\2", d1, e, made["e_shuffle"])
    assert not proofs.shuffle_verify(ctx + b"\2", d1, e, made["d1_shuffle"])
    assert proofs.rekey_verify(ctx + b"\3", d2, d3, made["d3_rekey"])
    assert not proofs.rekey_verify(ctx + b"\3", d2, d3, made["d2_rekey"])


def check_engine() -> None:
    _replay("hand_swap_deal", "rulebook")
    _replay("first_deal", "online")


def _replay(name: str, preset: str) -> None:
    """Replays one of hidden.json's deals and compares every state hash."""
    d = _vec("hidden.json")
    h = d[name]
    r = rules.preset(preset)
    r["deal"], r["rounds"] = "hidden", 1
    fp = rules.fingerprint(rules.encode(r))
    assert fp.hex() == h.get("rules_fingerprint", fp.hex()), "rules fingerprint"
    e = engine.Engine.start(r, fp, bytes.fromhex(d["state"]["match_seed"]))
    dealt = d["decks"]["dealt"]
    hands: dict[int, list[int]] = {0: [], 1: []}
    field: list[int] = []
    for j in range(24):
        k = j % 6
        (hands[e.nondealer] if k < 2 else field if k < 4 else hands[e.dealer]).append(dealt[j])
    stock = dealt[24:]
    chain = hashlib.sha256(b"p2pkoikoi/v2/hidden/decks\0").digest()
    play: tuple[int, str] | None = None
    for i, m in enumerate(h["moves"]):
        assert e.hidden_hash(chain).hex() == m["state_hash_before"], f"{name}: move {i} {m['kind']}"
        k = m["kind"]
        if k.startswith("deck"):
            chain = hashlib.sha256(chain + bytes.fromhex(m["deck"])).digest()
        elif k == "keys" and r["hand_swap"]:
            e.deal_known([[], []], [8, 8], field)
        elif k == "act" and m["action"].startswith("play"):
            play = (m["seat"], m["action"])
        elif k == "act":
            e.apply_decision(m["seat"], m["action"])
        elif k == "draw":
            assert play is not None
            e.apply_play(play[0], play[1], stock[24 - e.stock])
        elif k == "declare" and m["seat"] == 1:
            if not r["hand_swap"]:
                e.deal_known([[], []], [8, 8], field)
            mine = [hands[1], hands[0]] if e.swap_decision == "swap" else [hands[0], hands[1]]
            e.known = [engine.mask(mine[0]), engine.mask(mine[1])]
            e.after_declarations([None, None])
    assert e.phase == engine.OVER


def check_open_engine() -> None:
    """Replays transcript.json's record (the open deal, online) and compares every state hash."""
    rec = _vec("transcript.json")["record"]
    r = rec["rules"]
    fp = rules.fingerprint(rules.encode(r))
    assert fp.hex() == rec["rules_fingerprint"], "rules fingerprint"
    e = engine.Engine.start(r, fp, bytes.fromhex(rec["match_seed"]))
    for a in rec["actions"]:
        assert a["seat"] == e.to_act or a["action"] == "resign", a
        if a["action"] == "resign":
            e.resign(a["seat"])
        elif a["action"].startswith("play"):
            e.apply_play(a["seat"], a["action"], -1)
        else:
            e.apply_decision(a["seat"], a["action"])
        assert e.open_state_hash().hex() == a["state_hash"], (
            f"open deal: seq {a['seq']} {a['action']}"
        )
    assert e.open_state_hash().hex() == rec["result"]["final_state_hash"]


def check_wire() -> None:
    for v in _vec("invite.json")["valid"]:
        addrs, secret = wire.parse_invite(v["invite"])
        assert secret.hex() == v["secret"]
        assert (
            wire.make_invite([(a["host"], a["port"]) for a in v["addresses"]], secret)
            == v["invite"]
        )
    ks = _vec("crypto.json")["key_schedule"]
    h0 = wire.handshake_hash(
        bytes.fromhex(ks["host_hello_payload"]), bytes.fromhex(ks["joiner_hello_payload"])
    )
    assert h0.hex() == ks["h0"]
    k = wire.derive_keys(bytes.fromhex(ks["pake_key"]), bytes.fromhex(ks["x25519_shared"]), h0)
    assert (k[0].hex(), k[1].hex()) == (ks["key_host_to_joiner"], ks["key_joiner_to_host"])
    for m in _vec("messages.json")["messages"]:
        f = {
            key: bytes.fromhex(val["hex"]) if isinstance(val, dict) else val
            for key, val in m["fields"].items()
        }
        assert wire.pack(f).hex() == m["msgpack"], m["fields"]["type"]
    for p in _vec("rules.json")["presets"]:
        r = rules.preset(p["name"])
        assert (
            rules.encode(r).decode() == p["encoding"]
            and rules.fingerprint(rules.encode(r)).hex() == p["fingerprint"]
        )


def main() -> int:
    for f in (check_wire, check_proofs, check_engine, check_open_engine):
        f()
        print("ok", f.__name__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
