"""Zero-knowledge proofs that a masking step is a masked permutation of its input.

Theory of operation
-------------------
Every masking step of the hidden deal (:mod:`.deck`) is one of two relations
between an input deck ``X`` and an output deck ``Y`` of ``N = 48`` points:

* a **shuffle under one mask**: ``Y[i] = b·X[ψ(i)]`` for a secret permutation
  ``ψ`` and a secret scalar ``b`` (the host's ``D1`` from the card points, the
  joiner's intermediate deck ``E`` from ``D1``);
* a **re-keying**: ``Y[i] = k_i·X[i]`` for secret scalars ``k_i`` (the joiner's
  ``D2`` from ``E``, the host's ``D3`` from ``D2``).

In a group of prime order every point is a multiple of every other, so the
statements "``Y[i]`` is a multiple of ``X[i]``" or "of some ``X[j]``" are true of
*any* deck and prove nothing.  What the proofs show is **knowledge**: the
prover knows ``ψ`` and ``b`` (resp. the ``k_i``) linking its output to its input.
A cheater who puts ``D1[i] + D1[i']`` at a position cannot know such a scalar
(it would need the discrete logarithm of one masked card to another), so it
cannot make the proof.

:func:`prove_shuffle` / :func:`verify_shuffle` are the proof of a shuffle of
Terelius and Wikström ("Proofs of restricted shuffles", AFRICACRYPT 2010; the
variant in Haenni, Locher, Koenig and Dubuis, "Pseudo-code algorithms for
verifiable re-encryption mix-nets", FC 2017, which is followed step for step),
made non-interactive by Fiat-Shamir, with its re-encryption relation replaced
by the exponentiation relation ``Σ u'_i·Y[i] = b·Σ u_j·X[j]``:

1. the prover commits to the permutation matrix, column by column:
   ``c_j = r_j·G + H_{ψ⁻¹(j)}`` (Pedersen commitments under independent
   generators ``H_0..H_{N-1}``, hashed to the group so nobody knows their
   logarithms);
2. challenges ``u_j`` from a hash of the statement and ``c``; ``u'_i = u_{ψ(i)}``;
3. a commitment chain ``ĉ_i = r̂_i·G + u'_i·ĉ_{i-1}`` (``ĉ_{-1} = H``), which
   shows ``Π u'_i = Π u_i``; with ``Σ c_j = (Σ r_j)·G + Σ H_i`` this makes the
   committed matrix a permutation matrix;
4. a Schnorr-style proof of knowledge of all openings, of ``b``, and that
   ``Σ u'_i·Y[i] - b·Σ u_j·X[j] = 0``.

:func:`prove_rekey` / :func:`verify_rekey` prove knowledge of each ``k_i`` with
one Schnorr proof per position under a common challenge.

Soundness: a false statement passes with probability about ``N/L < 2^-246``
per proof (Schwartz-Zippel over the challenges; the Fiat-Shamir hashes are
SHA-512), far below the 2^-40 asked of a cut-and-choose proof.

Nonces are derived from the witness and the statement (as EdDSA does), so a
proof is a function of the prover's secrets: a verifier with the audited
secrets makes the same bytes, and no randomness is needed at this layer.

Wire encoding (``protocol/hidden-deal.md`` section 3b): a shuffle proof is
``c_0..c_{N-1} || ĉ_0..ĉ_{N-1} || e || s1 || s2 || s3 || s4 || ŝ_0..ŝ_{N-1} ||
s'_0..s'_{N-1}`` (``32·(4N+5)`` bytes, 6,304 for a deck); a re-keying proof is
``e || s_0..s_{N-1}`` (1,568 bytes).  The verifier recomputes every
commitment ``t`` from the responses and checks that they hash to ``e``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

from p2pkoikoi.session.mental.errors import BadProofError
from p2pkoikoi.session.mental.group import (
    DECK_SIZE,
    GROUP_ORDER,
    IDENTITY,
    POINT_LEN,
    SCALAR_LEN,
    Point,
    Term,
    combine_many,
    hash_point,
    is_point,
    mul_many,
    psub,
    psum,
    reduce_wide,
    scalar_bytes,
)

TAG_GEN: Final = b"p2pkoikoi/v3/hidden/generator\x00"
TAG_U: Final = b"p2pkoikoi/v3/hidden/shuffle-u\x00"
TAG_E: Final = b"p2pkoikoi/v3/hidden/shuffle-e\x00"
TAG_REKEY: Final = b"p2pkoikoi/v3/hidden/rekey-e\x00"
TAG_NONCE: Final = b"p2pkoikoi/v3/hidden/nonce\x00"

L: Final = GROUP_ORDER
#: ``H`` (the chain's base) and ``H_0..H_47`` (the permutation commitment's generators)
CHAIN_BASE: Final = hash_point(TAG_GEN, b"chain")
GENERATORS: Final[tuple[Point, ...]] = tuple(
    hash_point(TAG_GEN, i.to_bytes(4, "big")) for i in range(DECK_SIZE)
)
_SUM_GENERATORS: Final = psum(GENERATORS)

SHUFFLE_PROOF_LEN: Final = (4 * DECK_SIZE + 5) * 32
REKEY_PROOF_LEN: Final = (DECK_SIZE + 1) * 32


def _h(*parts: bytes) -> bytes:
    h = hashlib.sha512()
    for p in parts:
        h.update(len(p).to_bytes(4, "big"))
        h.update(p)
    return h.digest()


def _scalar(b: bytes) -> int:
    return int.from_bytes(b, "little")


class _Nonces:
    """Deterministic nonces: ``SHA-512(tag || seed || label || u32 i)`` mod ``L``."""

    def __init__(self, *parts: bytes) -> None:
        self.seed = _h(TAG_NONCE, *parts)

    def __call__(self, label: bytes, i: int = 0) -> int:
        return reduce_wide(hashlib.sha512(self.seed + label + i.to_bytes(4, "big")).digest())


def _challenges(
    context: bytes, xs: Sequence[Point], ys: Sequence[Point], c: Sequence[Point]
) -> tuple[bytes, list[int]]:
    seed = _h(TAG_U, context, b"".join(xs), b"".join(ys), b"".join(c))
    u = [reduce_wide(hashlib.sha512(seed + i.to_bytes(4, "big")).digest()) for i in range(len(xs))]
    return seed, u


def _challenge_e(
    seed: bytes, chat: Sequence[Point], t: Sequence[Point], that: Sequence[Point]
) -> int:
    return reduce_wide(_h(TAG_E, seed, b"".join(chat), b"".join(t), b"".join(that)))


# ---------------------------------------------------------------------- shuffle under one mask
# Every combination of a step is independent of the others once its inputs are
# known, so each phase hands all of them to :func:`combine_many` at once.
def prove_shuffle(
    context: bytes,
    xs: Sequence[Point],
    ys: Sequence[Point],
    perm: Sequence[int],
    b: bytes,
) -> bytes:
    """The proof that ``ys[i] = b·xs[perm[i]]`` for all ``i``, by someone who knows
    ``perm`` and ``b`` (``context`` binds the proof to one step of one deal)."""
    n = len(xs)
    assert len(ys) == n == len(perm) == len(GENERATORS)
    bs = _scalar(b)
    nonce = _Nonces(b, bytes(perm), context, b"".join(xs), b"".join(ys))
    r = [nonce(b"r", j) for j in range(n)]
    inv_perm = [0] * n
    for i, j in enumerate(perm):
        inv_perm[j] = i
    c = combine_many([((r[j], None), (1, GENERATORS[inv_perm[j]])) for j in range(n)])
    seed, u = _challenges(context, xs, ys, c)
    up = [u[perm[i]] for i in range(n)]
    rhat = [nonce(b"rhat", i) for i in range(n)]
    # the chain in closed form: ch_i = alpha_i*G + beta_i*H
    alpha, beta, a_acc, b_acc = [], [], 0, 1
    for i in range(n):
        a_acc = (rhat[i] + up[i] * a_acc) % L
        b_acc = b_acc * up[i] % L
        alpha.append(a_acc)
        beta.append(b_acc)
    w1, w2, w3, w4 = (nonce(b"w", k) for k in range(4))
    what = [nonce(b"what", i) for i in range(n)]
    wp = [nonce(b"wp", i) for i in range(n)]
    groups: list[Sequence[Term]] = [
        ((x, None), (y, CHAIN_BASE)) for x, y in zip(alpha, beta, strict=True)
    ]
    groups.append([*zip(wp, GENERATORS, strict=True), (w3, None)])  # t3
    # t4 = sum(wp_i*Y_i) - w4*sum(u_j*X_j), and Y_i = b*X[psi(i)]: one term per X_j
    groups.append([((bs * wp[inv_perm[j]] - w4 * u[j]) % L, xs[j]) for j in range(n)])
    groups += [((w1, None),), ((w2, None),)]  # t1, t2
    *chat, t3, t4, t1, t2 = combine_many(groups)
    prev = [CHAIN_BASE, *chat[:-1]]
    that = combine_many([((what[i], None), (wp[i], prev[i])) for i in range(n)])
    e = _challenge_e(seed, chat, (t1, t2, t3, t4), that)
    rbar = sum(r) % L
    v = [1] * n
    for i in range(n - 2, -1, -1):
        v[i] = up[i + 1] * v[i + 1] % L
    rhat_sum = sum(x * y for x, y in zip(rhat, v, strict=True)) % L
    rtilde = sum(x * y for x, y in zip(r, u, strict=True)) % L
    s = [(w1 - e * rbar), (w2 - e * rhat_sum), (w3 - e * rtilde), (w4 - e * bs)]
    shat = [what[i] - e * rhat[i] for i in range(n)]
    sp = [wp[i] - e * up[i] for i in range(n)]
    return (
        b"".join(c)
        + b"".join(chat)
        + scalar_bytes(e)
        + b"".join(scalar_bytes(x) for x in s + shat + sp)
    )


def _split(data: bytes, at: int, count: int, size: int) -> list[bytes]:
    return [data[at + k * size : at + (k + 1) * size] for k in range(count)]


def verify_shuffle(
    context: bytes, xs: Sequence[Point], ys: Sequence[Point], proof: bytes, who: str, seat: int
) -> None:
    """Raise :class:`BadProofError` (naming ``who``) unless ``proof`` shows that its maker
    knows a permutation ``ψ`` and a scalar ``b`` with ``ys[i] = b·xs[ψ(i)]``.

    ``xs`` and ``ys`` must already be checked group elements.
    """
    n = len(xs)
    if not isinstance(proof, bytes) or len(proof) != (4 * n + 5) * 32:
        raise BadProofError(f"{who}'s shuffle proof has the wrong length", seat)
    c = _split(proof, 0, n, POINT_LEN)
    chat = _split(proof, n * POINT_LEN, n, POINT_LEN)
    scal = [_scalar(x) for x in _split(proof, 2 * n * POINT_LEN, 2 * n + 5, SCALAR_LEN)]
    if not all(is_point(p) for p in c + chat) or any(x >= L for x in scal):
        raise BadProofError(f"{who}'s shuffle proof holds a value outside the group", seat)
    e, s1, s2, s3, s4 = scal[:5]
    shat, sp = scal[5 : 5 + n], scal[5 + n :]
    seed, u = _challenges(context, xs, ys, c)
    uprod = 1
    for x in u:
        uprod = uprod * x % L
    prev = [CHAIN_BASE, *chat[:-1]]
    # t1 = e*cbar + s1*G, cbar = sum(c_j) - sum(H_i); t2 = e*(ch_47 - prod(u)*H) + s2*G;
    # t3 = e*sum(u_j*c_j) + s3*G + sum(sp_i*H_i); t4 = sum(sp_i*Y_i) - s4*sum(u_j*X_j);
    # th_i = e*ch_i + sh_i*G + sp_i*ch_(i-1)
    groups: list[Sequence[Term]] = [[(1, x) for x in c]]  # sum(c_j)
    groups.append(
        [(e * x % L, p) for x, p in zip(u, c, strict=True)]
        + [*zip(sp, GENERATORS, strict=True), (s3, None)]
    )
    groups.append([*zip(sp, ys, strict=True), *((-s4 * x, p) for x, p in zip(u, xs, strict=True))])
    groups.append(((e, chat[-1]), (-e * uprod, CHAIN_BASE), (s2, None)))
    groups += [((e, chat[i]), (shat[i], None), (sp[i], prev[i])) for i in range(n)]
    csum, t3, t4, t2, *that = combine_many(groups)
    cbar = psub(csum, _SUM_GENERATORS)
    t1 = combine_many([((e, cbar), (s1, None))])[0]
    if _challenge_e(seed, chat, (t1, t2, t3, t4), that) != e:
        raise BadProofError(
            f"{who}'s shuffle proof does not hold: its masked deck is not a shuffle of the"
            " deck it received under one mask",
            seat,
        )


# ---------------------------------------------------------------------- re-keying each position
def prove_rekey(
    context: bytes, xs: Sequence[Point], ys: Sequence[Point], keys: Sequence[bytes]
) -> bytes:
    """The proof that ``ys[i] = keys[i]·xs[i]`` for all ``i``, by someone who knows the keys."""
    n = len(xs)
    nonce = _Nonces(b"".join(keys), context, b"".join(xs), b"".join(ys))
    w = [nonce(b"w", i) for i in range(n)]
    rs = mul_many(list(zip(w, xs, strict=True)))
    e = reduce_wide(_h(TAG_REKEY, context, b"".join(xs), b"".join(ys), b"".join(rs)))
    s = [(w[i] + e * _scalar(keys[i])) % L for i in range(n)]
    return scalar_bytes(e) + b"".join(scalar_bytes(x) for x in s)


def verify_rekey(
    context: bytes, xs: Sequence[Point], ys: Sequence[Point], proof: bytes, who: str, seat: int
) -> None:
    """Raise :class:`BadProofError` unless ``proof`` shows knowledge of every ``k_i`` with
    ``ys[i] = k_i·xs[i]`` (``xs``, ``ys`` already checked group elements)."""
    n = len(xs)
    if not isinstance(proof, bytes) or len(proof) != (n + 1) * SCALAR_LEN:
        raise BadProofError(f"{who}'s re-keying proof has the wrong length", seat)
    scal = [_scalar(x) for x in _split(proof, 0, n + 1, SCALAR_LEN)]
    if any(x >= L for x in scal):
        raise BadProofError(f"{who}'s re-keying proof holds a value outside the group", seat)
    e, s = scal[0], scal[1:]
    rs = combine_many([((s[i], xs[i]), (-e, ys[i])) for i in range(n)])
    if IDENTITY in rs or (
        reduce_wide(_h(TAG_REKEY, context, b"".join(xs), b"".join(ys), b"".join(rs))) != e
    ):
        raise BadProofError(
            f"{who}'s re-keying proof does not hold: a position of its masked deck is not"
            " its input position under a key it knows",
            seat,
        )
