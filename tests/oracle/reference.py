"""Independent numpy references for attnviz's attention matrices, written from docs/variant-formulas.md and docs/conventions.md
(Conventions) and not from the C code. Everything is float64; inputs are the float32 values the CLI
reads, widened. Every function returns the n×n matrix M (masked entries 0 when causal)."""
import math

import numpy as np

# ---------------------------------------------------------------------------------------------------
# helpers


def causal_mask(n):
    """True where row i may see key j (j <= i, inclusive)."""
    return np.tril(np.ones((n, n), dtype=bool))


def normalise(K, causal, eps=0.0, clamp=None):
    """Row-normalise a kernel matrix: K / (rowsum + eps), or K / max(rowsum, clamp)."""
    if causal:
        K = np.where(causal_mask(K.shape[0]), K, 0.0)
    den = K.sum(axis=1, keepdims=True)
    den = np.maximum(den, clamp) if clamp is not None else den + eps
    return K / den


def log_normalise(logK, causal):
    """exp(logK) row-normalised, computed in log space (for the exp-based kernels)."""
    if causal:
        logK = np.where(causal_mask(logK.shape[0]), logK, -np.inf)
    m = logK.max(axis=1, keepdims=True)
    E = np.exp(logK - m)
    return E / E.sum(axis=1, keepdims=True)


def default_scale(d, scale):
    return 1.0 / math.sqrt(d) if scale is None else scale


def segments(n, m):
    """Segment lengths for m segment means over n tokens (docs/variant-formulas.md, nystrom): g = n // m; the first
    (g+1)·m − n segments hold g tokens, the rest g+1."""
    g = n // m
    small = (g + 1) * m - n
    return [g] * small + [g + 1] * (m - small)


def segment_mean_matrix(n, m):
    """P (m×n) with P @ X = the segment means of the rows of X."""
    P = np.zeros((m, n))
    start = 0
    for t, length in enumerate(segments(n, m)):
        P[t, start:start + length] = 1.0 / length
        start += length
    assert start == n
    return P


def row_softmax(S):
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------------------
# the variants


def softmax(Q, K, causal=False, scale=None):
    return log_normalise(default_scale(Q.shape[1], scale) * Q @ K.T, causal)


def elu(Q, K, causal=False):
    phi = lambda x: np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    return normalise(phi(Q) @ phi(K).T, causal, eps=1e-6)


def relu(Q, K, causal=False):
    return normalise(np.maximum(Q, 0) @ np.maximum(K, 0).T, causal, eps=1e-6)


def exp_kernel(Q, K, causal=False):
    """φ = exp elementwise; the stabilisers cancel and ε = 0, so M_ij ∝ Σ_f exp(q_if + k_jf)."""
    Z = Q[:, None, :] + K[None, :, :]
    zmax = Z.max(axis=2, keepdims=True)
    logK = (zmax + np.log(np.exp(Z - zmax).sum(axis=2, keepdims=True)))[:, :, 0]
    return log_normalise(logK, causal)


def efficient(Q, K):
    """softmax of each query over its features × softmax of each key feature over positions."""
    rq = np.exp(Q - Q.max(axis=1, keepdims=True))
    rq /= rq.sum(axis=1, keepdims=True)
    rk = np.exp(K - K.max(axis=0, keepdims=True))
    rk /= rk.sum(axis=0, keepdims=True)
    return rq @ rk.T


def focused(Q, K, p=3.0, causal=False):
    """φ = f_p((relu(x) + 1e-6)/ln 2), f_p(y) = ‖y‖·y^p/‖y^p‖; ε = n·1e-6 added to the normaliser."""
    def phi(X):
        Y = (np.maximum(X, 0.0) + 1e-6) / math.log(2.0)
        Yp = Y ** p
        return np.linalg.norm(Y, axis=1, keepdims=True) * Yp / np.linalg.norm(Yp, axis=1, keepdims=True)
    return normalise(phi(Q) @ phi(K).T, causal, eps=Q.shape[0] * 1e-6)


def cosformer(Q, K, causal=False):
    """relu(q)·relu(k)·cos(π(i−j)/(2n)), positions from 1 (only i − j matters), clamp at 1e-6."""
    n = Q.shape[0]
    i = np.arange(1, n + 1)
    C = np.cos(np.pi * (i[:, None] - i[None, :]) / (2.0 * n))
    return normalise((np.maximum(Q, 0) @ np.maximum(K, 0).T) * C, causal, clamp=1e-6)


def taylor(Q, K, order=2, causal=False, scale=None):
    S = default_scale(Q.shape[1], scale) * Q @ K.T
    T = sum(S ** r / math.factorial(r) for r in range(order + 1))
    return normalise(T, causal)


def explimit(Q, K, N=2, causal=False, scale=None):
    S = default_scale(Q.shape[1], scale) * Q @ K.T
    return normalise((1.0 + S / N) ** N, causal)


def hedgehog(Q, K, W=None, causal=False):
    """φ(x) = [exp(Wᵀx), exp(−Wᵀx)] (stabilisers cancel, ε = 0); W defaults to the identity."""
    if W is None:
        W = np.eye(Q.shape[1])
    U, V = Q @ W, K @ W
    plus = U[:, None, :] + V[None, :, :]
    Z = np.concatenate([plus, -plus], axis=2)
    zmax = Z.max(axis=2, keepdims=True)
    logK = (zmax + np.log(np.exp(Z - zmax).sum(axis=2, keepdims=True)))[:, :, 0]
    return log_normalise(logK, causal)


def nystrom(Q, K, landmarks, iters=6, scale=None):
    """F·Z·B with segment-mean landmarks and Z from `iters` steps of
    Z ← ¼Z(13I − AZ(15I − AZ(7I − AZ))), Z₀ = Aᵀ / (max column sum of A); m = n is exact softmax."""
    n, d = Q.shape
    s = default_scale(d, scale)
    if landmarks == n:
        return softmax(Q, K, scale=s)
    P = segment_mean_matrix(n, landmarks)
    Ql, Kl = P @ Q, P @ K
    F = row_softmax(s * Q @ Kl.T)
    A = row_softmax(s * Ql @ Kl.T)
    B = row_softmax(s * Ql @ K.T)
    Z = A.T / A.sum(axis=0).max()
    I = np.eye(landmarks)
    for _ in range(iters):
        AZ = A @ Z
        Z = 0.25 * Z @ (13 * I - AZ @ (15 * I - AZ @ (7 * I - AZ)))
    return F @ Z @ B


def linformer_mean(Q, K, s, scale=None):
    """softmax(scale·Q(EK)ᵀ)·F with E = F the s×n segment-mean matrix (`--ef mean`)."""
    E = segment_mean_matrix(Q.shape[0], s)
    P = row_softmax(default_scale(Q.shape[1], scale) * Q @ (E @ K).T)
    return P @ E
