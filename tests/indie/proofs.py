"""The shuffle and re-keying proofs of hidden-deal.md section 3a."""

from __future__ import annotations

import hashlib
import os
import struct

from .group import (
    H_CHAIN,
    H_GEN,
    IDENTITY,
    G,
    L,
    add,
    base,
    hscalar,
    lp,
    msum,
    mul,
    sb,
    sub,
    valid_point,
)

N = 48
TAGU = b"p2pkoikoi/v3/hidden/shuffle-u\0"
TAGE = b"p2pkoikoi/v3/hidden/shuffle-e\0"
TAGR = b"p2pkoikoi/v3/hidden/rekey-e\0"
TAGN = b"p2pkoikoi/v3/hidden/nonce\0"


def ctx_bytes(rnd: int, attempt: int, dealer: int, step: int) -> bytes:
    return struct.pack(">HHBB", rnd, attempt, dealer, step)


class Nonces:
    def __init__(self, witness: bytes, ctx: bytes, xs: bytes, ys: bytes) -> None:
        self.seed = hashlib.sha512(lp(TAGN) + witness + lp(ctx) + lp(xs) + lp(ys)).digest()
        if os.environ.get("INDIE_NONCES") == "random":  # to test "any secret uniform nonces verify"
            self.seed = os.urandom(64)

    def get(self, label: bytes, i: int) -> int:
        return hscalar(self.seed + label + struct.pack(">I", i))


def _u(seed: bytes) -> list[int]:
    return [hscalar(seed + struct.pack(">I", j)) for j in range(N)]


def shuffle_prove(ctx: bytes, x: list[bytes], y: list[bytes], s: int, psi: list[int]) -> bytes:
    xs, ys = b"".join(x), b"".join(y)
    witness = lp(sb(s)) + lp(bytes(psi))
    nn = Nonces(witness, ctx, xs, ys)
    r = [nn.get(b"r", j) for j in range(N)]
    rh = [nn.get(b"rhat", i) for i in range(N)]
    w = [nn.get(b"w", k) for k in range(4)]
    wh = [nn.get(b"what", i) for i in range(N)]
    wp = [nn.get(b"wp", i) for i in range(N)]
    psi_inv = [0] * N
    for i, p in enumerate(psi):
        psi_inv[p] = i
    c = [add(base(r[j]), H_GEN[psi_inv[j]]) for j in range(N)]
    cs = b"".join(c)
    seed = hashlib.sha512(lp(TAGU) + lp(ctx) + lp(xs) + lp(ys) + lp(cs)).digest()
    u = _u(seed)
    up = [u[psi[i]] for i in range(N)]
    ch: list[bytes] = []
    prev = H_CHAIN
    for i in range(N):
        cur = add(base(rh[i]), mul(up[i], prev))
        ch.append(cur)
        prev = cur
    a_pt = msum([(u[j], x[j]) for j in range(N)])
    t1 = base(w[0])
    t2 = base(w[1])
    t3 = add(base(w[2]), msum([(wp[i], H_GEN[i]) for i in range(N)]))
    t4 = sub(msum([(wp[i], y[i]) for i in range(N)]), mul(w[3], a_pt))
    th = []
    prev = H_CHAIN
    for i in range(N):
        th.append(add(base(wh[i]), mul(wp[i], prev)))
        prev = ch[i]
    e = hscalar(lp(TAGE) + lp(seed) + lp(b"".join(ch)) + lp(t1 + t2 + t3 + t4) + lp(b"".join(th)))
    v = [0] * N
    v[N - 1] = 1
    for i in range(N - 2, -1, -1):
        v[i] = up[i + 1] * v[i + 1] % L
    s1 = (w[0] - e * sum(r)) % L
    s2 = (w[1] - e * sum(rh[i] * v[i] for i in range(N))) % L
    s3 = (w[2] - e * sum(r[j] * u[j] for j in range(N))) % L
    s4 = (w[3] - e * s) % L
    sh = [(wh[i] - e * rh[i]) % L for i in range(N)]
    sp = [(wp[i] - e * up[i]) % L for i in range(N)]
    return (
        cs
        + b"".join(ch)
        + sb(e)
        + sb(s1)
        + sb(s2)
        + sb(s3)
        + sb(s4)
        + b"".join(sb(q) for q in sh)
        + b"".join(sb(q) for q in sp)
    )


SHUFFLE_PROOF_LEN = 32 * (48 * 4 + 5)


def _scalars(b: bytes) -> list[int]:
    out = []
    for k in range(0, len(b), 32):
        v = int.from_bytes(b[k : k + 32], "little")
        if v >= L:
            raise ValueError("scalar out of range")
        out.append(v)
    return out


def shuffle_verify(ctx: bytes, x: list[bytes], y: list[bytes], proof: bytes) -> bool:
    if len(proof) != SHUFFLE_PROOF_LEN:
        return False
    c = [proof[32 * j : 32 * j + 32] for j in range(N)]
    ch = [proof[32 * (N + i) : 32 * (N + i) + 32] for i in range(N)]
    if not all(valid_point(p) for p in c + ch):
        return False
    try:
        sc = _scalars(proof[32 * 2 * N :])
    except ValueError:
        return False
    e, s1, s2, s3, s4 = sc[:5]
    sh = sc[5 : 5 + N]
    sp = sc[5 + N :]
    xs, ys, cs = b"".join(x), b"".join(y), b"".join(c)
    seed = hashlib.sha512(lp(TAGU) + lp(ctx) + lp(xs) + lp(ys) + lp(cs)).digest()
    u = _u(seed)
    a_pt = msum([(u[j], x[j]) for j in range(N)])
    cbar = IDENTITY
    for j in range(N):
        cbar = add(cbar, c[j])
    for i in range(N):
        cbar = sub(cbar, H_GEN[i])
    prod = 1
    for q in u:
        prod = prod * q % L
    chat = sub(ch[N - 1], mul(prod, H_CHAIN))
    ctil = msum([(u[j], c[j]) for j in range(N)])
    t1 = add(mul(e, cbar), base(s1))
    t2 = add(mul(e, chat), base(s2))
    t3 = add(add(mul(e, ctil), base(s3)), msum([(sp[i], H_GEN[i]) for i in range(N)]))
    t4 = sub(msum([(sp[i], y[i]) for i in range(N)]), mul(s4, a_pt))
    th = []
    prev = H_CHAIN
    for i in range(N):
        th.append(add(add(mul(e, ch[i]), base(sh[i])), mul(sp[i], prev)))
        prev = ch[i]
    e2 = hscalar(lp(TAGE) + lp(seed) + lp(b"".join(ch)) + lp(t1 + t2 + t3 + t4) + lp(b"".join(th)))
    return e2 == e


def rekey_prove(ctx: bytes, x: list[bytes], y: list[bytes], k: list[int]) -> bytes:
    xs, ys = b"".join(x), b"".join(y)
    nn = Nonces(lp(b"".join(sb(q) for q in k)), ctx, xs, ys)
    w = [nn.get(b"w", i) for i in range(N)]
    rs = b"".join(mul(w[i], x[i]) for i in range(N))
    e = hscalar(lp(TAGR) + lp(ctx) + lp(xs) + lp(ys) + lp(rs))
    return sb(e) + b"".join(sb(w[i] + e * k[i]) for i in range(N))


REKEY_PROOF_LEN = 32 * 49


def rekey_verify(ctx: bytes, x: list[bytes], y: list[bytes], proof: bytes) -> bool:
    if len(proof) != REKEY_PROOF_LEN:
        return False
    try:
        sc = _scalars(proof)
    except ValueError:
        return False
    e, s = sc[0], sc[1:]
    rl = [sub(mul(s[i], x[i]), mul(e, y[i])) for i in range(N)]
    if any(r == IDENTITY for r in rl):
        return False
    xs, ys = b"".join(x), b"".join(y)
    return hscalar(lp(TAGR) + lp(ctx) + lp(xs) + lp(ys) + lp(b"".join(rl))) == e


_ = G
