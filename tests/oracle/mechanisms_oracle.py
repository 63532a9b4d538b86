#!/usr/bin/python3
"""Oracle: `attnviz recall` (memory collisions) and `attnviz distill` (Hedgehog's W by Adam) against numpy.

usage: /usr/bin/python3 tests/oracle/mechanisms_oracle.py build/native/attnviz

Everything on the numpy side is float64 and written from the definitions, not from the C code.

recall (--k K.npy --v V.npy: N pairs, written in order, every key read back from the FINAL memory as the
query; err_i = ||o_i − v_i|| / ||v_i||; --scale is absolute, default 1):
  softmax:   o_i = Σ_j softmax_j(scale·k_i·k_j + (N−1−j)·ln γ) v_j over the stored pairs (--window W: j ≥ N−W)
  retention: S = Σ_j γ^{N−1−j} k_j v_jᵀ, o_i = Sᵀ(scale·k_i)             (default γ = 1 − 2⁻⁵)
  deltanet:  unit keys k̂; S ← αS; u = β(v_t − Sᵀk̂_t); S += k̂_t uᵀ; o_i = Sᵀ(scale·k̂_i)   (β 0.5, α 1)
  elu/relu:  S = Σ γ^{N−1−j} φ(k_j)v_jᵀ, z = Σ γ^{N−1−j} φ(k_j), o = Sᵀφ(k_i) / (φ(k_i)·z + 1e-6)
recall (--pairs N --d D --seeds S: the tool's own draws of unit keys and N(0, I) values): statistics only.
distill: A = softmax(scale·QKᵀ) over allowed j (causal: j ≤ i; scale default 1/√d); Hedgehog's
  φ(x) = exp([Wᵀx, −Wᵀx]), H_ij = φ(q_i)·φ(k_j) / Σ_{allowed l} φ(q_i)·φ(k_l);
  loss = (1/n) Σ_i Σ_{allowed j} A_ij (ln A_ij − ln H_ij); Adam (0.9, 0.999, 1e-8, bias-corrected, lr 0.05)
  from the identity (or --hedgehog-w); the gradient analytic, itself checked by central differences;
  kl_elu: the same KL with elu+1 linear attention's rows.
Each check prints one line; the last line is 'N checks, worst error E' (E: the largest error of a CLI
number against numpy, in each check's own relative measure), preceded by the worst error per group (there
'stats' is the largest relative distance of a drawn mean from √((N−1)/d) and 'self' numpy's own gradient
check); the exit status is 1 when any check failed.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from shared_data import skipped, stories_dir

TOL_RECALL = 1e-4      # |e − e_ref| / max(e_ref, 1e-2), per pair
TOL_EXACT = 1e-5       # orthonormal keys: the recall is exact, errors below this
TOL_TRAJ = 1e-6        # distill loss trajectory, relative
TOL_W32 = 1e-4         # loss at the float32 W the CLI wrote, relative
TOL_SELF = 1e-6        # numpy analytic gradient against central differences, relative to max |g|
TOL_LAW = 0.05         # retention's mean recall error against sqrt((N − 1)/d)
RETENTION_GAMMA = 1.0 - 2.0 ** -5
STORIES = stories_dir()


# ---------------------------------------------------------------------------------------------------
# numpy references: recall


def phi(x, kind):
    if kind == "elu":
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    return np.maximum(x, 0.0)


def unit_rows(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def recall_softmax(K, V, scale, g=1.0, window=0):
    N = K.shape[0]
    j = np.arange(N)
    L = scale * (K @ K.T) + ((N - 1 - j) * math.log(g))[None, :]
    if window:
        L = np.where((j >= N - window)[None, :], L, -np.inf)
    E = np.exp(L - L.max(axis=1, keepdims=True))
    return (E / E.sum(axis=1, keepdims=True)) @ V


def recall_retention(K, V, scale, g):
    S = np.zeros((K.shape[1], V.shape[1]))
    for t in range(K.shape[0]):                       # written in order: S ← γS + k vᵀ
        S = g * S + np.outer(K[t], V[t])
    return (scale * K) @ S


def recall_deltanet(K, V, scale, beta, alpha):
    k = unit_rows(K)
    S = np.zeros((K.shape[1], V.shape[1]))
    for t in range(K.shape[0]):
        S = alpha * S
        u = beta * (V[t] - S.T @ k[t])
        S = S + np.outer(k[t], u)
    return (scale * k) @ S


def recall_kernel(K, V, kind, g=1.0, eps=1e-6):
    f = phi(K, kind)
    S = np.zeros((K.shape[1], V.shape[1]))
    z = np.zeros(K.shape[1])
    for t in range(K.shape[0]):
        S = g * S + np.outer(f[t], V[t])
        z = g * z + f[t]
    return (f @ S) / (f @ z + eps)[:, None]


def recall_errors(O, V):
    return np.linalg.norm(O - V, axis=1) / np.linalg.norm(V, axis=1)


# ---------------------------------------------------------------------------------------------------
# numpy references: distill


def allowed(n, causal):
    return np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)


def target(Q, K, scale, causal):
    L = np.where(allowed(Q.shape[0], causal), scale * (Q @ K.T), -np.inf)
    E = np.exp(L - L.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def row_kl(A, logH, ok):
    """(1/n) Σ_i Σ_{allowed j} A_ij (ln A_ij − ln H_ij), 0·ln 0 = 0."""
    pos = ok & (A > 0)
    terms = np.zeros_like(A)
    terms[pos] = A[pos] * (np.log(A[pos]) - logH[pos])
    return terms.sum() / A.shape[0]


def hedgehog_loss(W, Q, K, A, causal, grad=False):
    """The mean row KL of Hedgehog against A, and (grad=True) its analytic gradient in W."""
    n = Q.shape[0]
    ok = allowed(n, causal)
    X = (Q @ W)[:, None, :] + (K @ W)[None, :, :]          # u_i + w_j, n × n × cols
    m = np.abs(X).max(axis=2, keepdims=True)
    ep, em = np.exp(X - m), np.exp(-X - m)
    loga = m[:, :, 0] + np.log((ep + em).sum(axis=2))      # ln φ(q_i)·φ(k_j) = ln Σ_c 2 cosh(u_ic + w_jc)
    la = np.where(ok, loga, -np.inf)
    mx = la.max(axis=1, keepdims=True)
    logs = mx + np.log(np.exp(la - mx).sum(axis=1, keepdims=True))
    logH = loga - logs
    loss = row_kl(A, logH, ok)
    if not grad:
        return loss
    H = np.where(ok, np.exp(logH), 0.0)
    R = (ep - em) / (ep + em).sum(axis=2, keepdims=True)   # 2 sinh(X_ijc) / a_ij
    D = ((np.where(ok, H - A, 0.0) / n)[:, :, None]) * R   # dL/dX_ijc
    G = Q.T @ D.sum(axis=1) + K.T @ D.sum(axis=0)
    return loss, G


def fd_grad(W, Q, K, A, causal, h=1e-6):
    G = np.zeros_like(W)
    for idx in np.ndindex(*W.shape):
        Wp, Wm = W.copy(), W.copy()
        Wp[idx] += h
        Wm[idx] -= h
        G[idx] = (hedgehog_loss(Wp, Q, K, A, causal) - hedgehog_loss(Wm, Q, K, A, causal)) / (2 * h)
    return G


def adam(W0, Q, K, A, causal, steps, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
    W = W0.copy()
    m, v = np.zeros_like(W), np.zeros_like(W)
    losses = []
    for t in range(1, steps + 1):
        loss, g = hedgehog_loss(W, Q, K, A, causal, grad=True)
        losses.append(loss)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        W = W - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    losses.append(hedgehog_loss(W, Q, K, A, causal))
    return np.array(losses), W


def kl_elu(Q, K, A, causal):
    ok = allowed(Q.shape[0], causal)
    a = np.where(ok, phi(Q, "elu") @ phi(K, "elu").T, 0.0)
    with np.errstate(divide="ignore"):
        logH = np.log(a / a.sum(axis=1, keepdims=True))
    return row_kl(A, logH, ok)


# ---------------------------------------------------------------------------------------------------
# the CLI


def strict_json(text):
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


class Oracle:
    def __init__(self, cli, tmp):
        self.cli, self.tmp = cli, tmp
        self.count = self.failed = 0
        self.worst = 0.0
        self.groups = {}
        self.files = 0

    def report(self, ok, group, line, err=None, cli=True):
        """err: this check's error; cli=False: not a CLI-against-numpy error (numpy against numpy, or a
        statistical distance), kept in its group's worst but out of the overall worst."""
        self.count += 1
        self.failed += not ok
        if err is not None:
            e = err if np.isfinite(err) else np.inf
            if cli:
                self.worst = max(self.worst, e)
            self.groups[group] = max(self.groups.get(group, 0.0), e)
        else:
            self.groups.setdefault(group, 0.0)
        print(("PASS  " if ok else "FAIL  ") + f"{group:9s} " + line, flush=True)

    def save(self, X, name=None):
        self.files += 1
        path = os.path.join(self.tmp, name or f"in{self.files}.npy")
        np.save(path, np.asarray(X, dtype=np.float32))
        return path, np.load(path).astype(np.float64)

    def run(self, args):
        p = subprocess.run([self.cli, *args], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip()}")
        return strict_json(p.stdout), p.stderr.strip()

    # recall on files: the per-pair errors
    def check_recall(self, label, kpath, vpath, args, ref, tag):
        head = f"{label:44s} [{tag}]"
        try:
            r, warn = self.run(["recall", *args, "--k", kpath, "--v", vpath])
        except (RuntimeError, ValueError) as exc:
            return self.report(False, "recall", f"{head}  {exc}", np.inf)
        got = np.array(r.get("errors", []), dtype=np.float64)
        if got.shape != ref.shape:
            return self.report(False, "recall", f"{head}  {got.shape[0]} errors, expected {ref.shape[0]}", np.inf)
        err = float((np.abs(got - ref) / np.maximum(ref, 1e-2)).max())
        mean_err = abs(r.get("recall_error_mean", np.nan) - ref.mean()) / max(ref.mean(), 1e-2)
        ok = bool(np.isfinite(got).all() and err <= TOL_RECALL and mean_err <= TOL_RECALL and r.get("pairs") == len(ref))
        self.report(ok, "recall", f"{head}  mean {ref.mean():.4g}, per-pair err {err:.2e}, mean err {mean_err:.2e}"
                    + (f"  ({warn})" if warn else ""), max(err, mean_err))

    def check_exact(self, label, kpath, vpath, args, ref, tag):
        head = f"{label:44s} [{tag}]"
        try:
            r, _ = self.run(["recall", *args, "--k", kpath, "--v", vpath])
        except (RuntimeError, ValueError) as exc:
            return self.report(False, "exact", f"{head}  {exc}", np.inf)
        got = np.array(r.get("errors", []), dtype=np.float64)
        worst = float(got.max()) if got.size == ref.size else np.inf
        ok = bool(worst < TOL_EXACT and ref.max() < 1e-6)     # numpy: exact up to the float32 rounding of the keys
        self.report(ok, "exact", f"{head}  CLI max error {worst:.2e}, numpy {ref.max():.1e}", worst)

    def drawn(self, variant, N, d, S, extra=()):
        r, _ = self.run(["recall", "--variant", variant, "--pairs", str(N), "--d", str(d), "--seeds", str(S), *extra])
        return r

    # distill
    def distill(self, qpath, kpath, args):
        wpath = os.path.join(self.tmp, "W.npy")
        if os.path.exists(wpath):
            os.remove(wpath)
        r, warn = self.run(["distill", "--q", qpath, "--k", kpath, *args, "-o", wpath])
        W = np.load(wpath)
        return r, W, warn

    def refusal(self, label, args):
        p = subprocess.run([self.cli, *args], capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        ok = p.returncode == 2 and len(lines) == 1 and lines[0].startswith("attnviz: ") and p.stdout == ""
        self.report(bool(ok), "refusal", f"{label:44s}  exit {p.returncode}, stderr {lines[:1] if lines else '(none)'}"
                    + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""))


# ---------------------------------------------------------------------------------------------------
# the cases


def run_recall_files(o):
    rng = np.random.default_rng(20240601)
    d = 16
    for N in (8, 40):
        tag = f"N={N} d={d}"
        kraw, K = o.save(rng.standard_normal((N, d)))                 # |k|² ≈ d
        kn, Kn = o.save(rng.standard_normal((N, d)) / math.sqrt(d))    # |k| ≈ 1
        vp, V = o.save(rng.standard_normal((N, d)))
        E = lambda O: recall_errors(O, V)
        # softmax
        for scale in (1.0, 4.0, 30.0):
            o.check_recall(f"softmax |k|≈1 scale {scale:g}", kn, vp, ["--variant", "softmax", "--scale", str(scale)],
                           E(recall_softmax(Kn, V, scale)), tag)
        o.check_recall("softmax |k|≈1 default scale (1)", kn, vp, ["--variant", "softmax"], E(recall_softmax(Kn, V, 1.0)), tag)
        o.check_recall("softmax raw scale 0.25", kraw, vp, ["--variant", "softmax", "--scale", "0.25"],
                       E(recall_softmax(K, V, 0.25)), tag)
        o.check_recall("softmax |k|≈1 scale 4 γ 0.9", kn, vp, ["--variant", "softmax", "--scale", "4", "--decay", "0.9"],
                       E(recall_softmax(Kn, V, 4.0, 0.9)), tag)
        o.check_recall("softmax raw scale 0.25 γ 0.7", kraw, vp,
                       ["--variant", "softmax", "--scale", "0.25", "--decay", "0.7"], E(recall_softmax(K, V, 0.25, 0.7)), tag)
        o.check_recall("softmax |k|≈1 scale 8 W 5", kn, vp, ["--variant", "softmax", "--scale", "8", "--window", "5"],
                       E(recall_softmax(Kn, V, 8.0, 1.0, 5)), tag)
        o.check_recall("softmax |k|≈1 scale 8 γ 0.9 W 5", kn, vp,
                       ["--variant", "softmax", "--scale", "8", "--decay", "0.9", "--window", "5"],
                       E(recall_softmax(Kn, V, 8.0, 0.9, 5)), tag)
        o.check_recall(f"softmax |k|≈1 W {N + 3} (≥ N: no window)", kn, vp, ["--variant", "softmax", "--window", str(N + 3)],
                       E(recall_softmax(Kn, V, 1.0)), tag)
        # retention
        o.check_recall("retention raw γ 1", kraw, vp, ["--variant", "retention", "--decay", "1"],
                       E(recall_retention(K, V, 1.0, 1.0)), tag)
        o.check_recall("retention |k|≈1 γ 1", kn, vp, ["--variant", "retention", "--decay", "1"],
                       E(recall_retention(Kn, V, 1.0, 1.0)), tag)
        o.check_recall("retention |k|≈1 γ default (1 − 2⁻⁵)", kn, vp, ["--variant", "retention"],
                       E(recall_retention(Kn, V, 1.0, RETENTION_GAMMA)), tag)
        o.check_recall("retention |k|≈1 γ 0.8 scale 1.5", kn, vp,
                       ["--variant", "retention", "--decay", "0.8", "--scale", "1.5"], E(recall_retention(Kn, V, 1.5, 0.8)), tag)
        # deltanet
        for beta, alpha in ((1.0, 1.0), (0.5, 1.0), (1.0, 0.9), (0.5, 0.8)):
            o.check_recall(f"deltanet raw β {beta:g} α {alpha:g}", kraw, vp,
                           ["--variant", "deltanet", "--beta", str(beta), "--decay", str(alpha)],
                           E(recall_deltanet(K, V, 1.0, beta, alpha)), tag)
        o.check_recall("deltanet raw defaults (β 0.5, α 1)", kraw, vp, ["--variant", "deltanet"],
                       E(recall_deltanet(K, V, 1.0, 0.5, 1.0)), tag)
        o.check_recall("deltanet raw β 1.5 α 0.95 scale 0.7", kraw, vp,
                       ["--variant", "deltanet", "--beta", "1.5", "--decay", "0.95", "--scale", "0.7"],
                       E(recall_deltanet(K, V, 0.7, 1.5, 0.95)), tag)
        # kernel variants
        for kind, g in (("elu", 1.0), ("relu", 1.0), ("elu", 0.9), ("relu", 0.8)):
            args = ["--variant", kind] + (["--decay", str(g)] if g != 1.0 else [])
            o.check_recall(f"{kind} raw" + (f" γ {g:g}" if g != 1 else ""), kraw, vp, args, E(recall_kernel(K, V, kind, g)), tag)
        o.check_recall("elu |k|≈1 γ 0.9", kn, vp, ["--variant", "elu", "--decay", "0.9"],
                       E(recall_kernel(Kn, V, "elu", 0.9)), tag)

    # orthonormal keys: deltanet at β = 1 and retention at γ = 1 recall exactly (N ≤ d)
    Qo, _ = np.linalg.qr(rng.standard_normal((d, d)))
    for N in (8, 16):
        tag = f"N={N} d={d} orthonormal"
        kp, Ko = o.save(Qo[:N])
        vp, V = o.save(rng.standard_normal((N, d)))
        o.check_exact("deltanet β 1 α 1", kp, vp, ["--variant", "deltanet", "--beta", "1", "--decay", "1"],
                      recall_errors(recall_deltanet(Ko, V, 1.0, 1.0, 1.0), V), tag)
        o.check_exact("retention γ 1", kp, vp, ["--variant", "retention", "--decay", "1"],
                      recall_errors(recall_retention(Ko, V, 1.0, 1.0), V), tag)
    # the overwrite: the same key written twice with β = 1 returns the newest value
    N = 6
    kp, Ko = o.save(np.vstack([Qo[:5], Qo[2:3]]))
    vp, V = o.save(rng.standard_normal((N, d)))
    ref = recall_errors(recall_deltanet(Ko, V, 1.0, 1.0, 1.0), V)
    o.check_recall("deltanet β 1, key 2 rewritten (overwrite)", kp, vp,
                   ["--variant", "deltanet", "--beta", "1", "--decay", "1"], ref, "N=6 d=16 orthonormal")
    o.report(bool(abs(ref[5]) < 1e-12 and ref[2] > 0.5), "exact",
             f"{'numpy: rewritten key returns the newest value':44s}  err(new) {ref[5]:.1e}, err(old) {ref[2]:.3f}")


def mc_retention_mean(N, d, draws, rng):
    """Monte Carlo of retention γ = 1 recall with unit keys, N(0, I) values: E[mean_i err_i]."""
    total = 0.0
    for _ in range(draws):
        K = unit_rows(rng.standard_normal((N, d)))
        V = rng.standard_normal((N, d))
        total += recall_errors(K @ (K.T @ V), V).mean()
    return total / draws


def run_recall_drawn(o):
    rng = np.random.default_rng(7)
    S = 50
    for N, d in ((32, 64), (256, 64), (64, 16)):
        head = f"{'retention γ 1 drawn, S = 50':44s} [N={N} d={d}]"
        try:
            r = o.drawn("retention", N, d, S, ["--decay", "1"])
        except (RuntimeError, ValueError) as exc:
            o.report(False, "stats", f"{head}  {exc}", np.inf)
            continue
        per = np.array(r["recall_error"])
        mean = r["recall_error_mean"]
        law = math.sqrt((N - 1) / d)
        rel = abs(mean - law) / law
        se = per.std(ddof=1) / math.sqrt(S)
        mc = mc_retention_mean(N, d, 400 if N <= 64 else 100, rng)
        sd = r["recall_error_std"]
        std_ok = any(abs(np.std(per, ddof=dof) - sd) <= 1e-9 * sd for dof in (0, 1))   # population or sample
        consistent = bool(len(per) == S and abs(per.mean() - mean) <= 1e-12 * mean and std_ok
                          and per.min() == r["recall_error_min"] and per.max() == r["recall_error_max"])
        ok = rel <= TOL_LAW and abs(mean - mc) <= 5 * se + 0.01 * mc and consistent
        o.report(bool(ok), "stats", f"{head}  mean {mean:.4f}, √((N−1)/d) {law:.4f} (off {rel * 100:.2f}%), numpy MC {mc:.4f}"
                 f" (|Δ| {abs(mean - mc):.4f}, CLI s.e. {se:.4f}), min/max/std consistent: {consistent}", rel, cli=False)
    d, S = 64, 5
    for N in (2, 8, 32, 128, 512):
        head = f"{'deltanet β 1 α 1 < retention γ 1, S = 5':44s} [N={N} d={d}]"
        try:
            ret = o.drawn("retention", N, d, S, ["--decay", "1"])["recall_error_mean"]
            dn = o.drawn("deltanet", N, d, S, ["--beta", "1", "--decay", "1"])["recall_error_mean"]
        except (RuntimeError, ValueError) as exc:
            o.report(False, "stats", f"{head}  {exc}", np.inf)
            continue
        o.report(bool(dn < ret), "stats", f"{head}  deltanet {dn:.4f}, retention {ret:.4f}")
    head = f"{'softmax scale 30, S = 5':44s} [N=256 d=64]"
    try:
        r = o.drawn("softmax", 256, 64, 5, ["--scale", "30"])
        sm = r["recall_error_mean"]
        o.report(bool(sm < 1e-3 and r["scale"] == 30), "stats", f"{head}  mean {sm:.2e} (< 1e-3)")
    except (RuntimeError, ValueError) as exc:
        o.report(False, "stats", f"{head}  {exc}", np.inf)


def check_distill(o, label, qpath, kpath, Q, K, causal, steps, scale=None, lr=None, W0=None, w0path=None):
    """(a) the loss trajectory against numpy Adam, (b) loss_end at the written W, (c) kl_elu."""
    n, d = Q.shape
    sc = scale if scale is not None else 1.0 / math.sqrt(d)
    W0 = np.eye(d) if W0 is None else W0
    args = ["--steps", str(steps)] + (["--causal"] if causal else []) + (["--scale", repr(scale)] if scale else []) \
        + (["--lr", repr(lr)] if lr else []) + (["--hedgehog-w", w0path] if w0path else [])
    head = f"{label:44s} [n={n} d={d} cols={W0.shape[1]}{' causal' if causal else ''}]"
    try:
        r, W, warn = o.distill(qpath, kpath, args)
    except (RuntimeError, ValueError, OSError) as exc:
        return o.report(False, "distill", f"{head}  {exc}", np.inf)
    A = target(Q, K, sc, causal)
    # the gradient, analytic against central differences, at W0 and at a perturbed W
    for Wt, where in ((W0, "W0"), (W0 + 0.3 * np.random.default_rng(1).standard_normal(W0.shape), "W0 + noise")):
        _, G = hedgehog_loss(Wt, Q, K, A, causal, grad=True)
        Gfd = fd_grad(Wt, Q, K, A, causal)
        gerr = np.abs(G - Gfd).max() / np.abs(G).max()
        o.report(bool(gerr <= TOL_SELF), "self", f"{head}  numpy gradient at {where}: analytic vs central diff {gerr:.2e}",
                 gerr, cli=False)
    ref, Wref = adam(W0, Q, K, A, causal, steps, lr if lr else 0.05)
    loss = np.array(r.get("loss", []), dtype=np.float64)
    shape_ok = (loss.shape == (steps + 1,) and r.get("loss_start") == loss[0] and r.get("loss_end") == loss[-1]
                and r.get("cols") == W0.shape[1] and W.shape == W0.shape and W.dtype == np.float32
                and abs(r.get("scale", np.nan) - sc) <= 1e-12 * sc and r.get("causal") == causal)
    if loss.shape != ref.shape:
        return o.report(False, "distill", f"{head}  loss has {loss.size} entries, expected {steps + 1}", np.inf)
    err = float((np.abs(loss - ref) / np.abs(ref)).max())
    o.report(bool(err <= TOL_TRAJ and shape_ok), "traj", f"{head}  loss {ref[0]:.6f} → {ref[-1]:.6f}, trajectory rel err "
             f"{err:.2e}, fields/shape/dtype ok: {shape_ok}" + (f"  ({warn})" if warn else ""), err)
    werr = np.abs(W.astype(np.float64) - Wref).max() / np.abs(Wref).max()
    o.report(bool(werr <= 1e-5), "W", f"{head}  written W vs numpy Adam's W: rel err {werr:.2e}", werr)
    Lw = hedgehog_loss(W.astype(np.float64), Q, K, A, causal)
    e_end = abs(r["loss_end"] - Lw) / abs(Lw)
    o.report(bool(e_end <= TOL_W32), "loss_end", f"{head}  loss_end {r['loss_end']:.8f}, numpy at float32 W {Lw:.8f}, "
             f"rel {e_end:.2e}", e_end)
    kl = kl_elu(Q, K, A, causal)
    e_kl = abs(r.get("kl_elu", np.nan) - kl) / abs(kl)
    o.report(bool(e_kl <= TOL_TRAJ), "kl_elu", f"{head}  kl_elu {r.get('kl_elu')}, numpy {kl:.8f}, rel {e_kl:.2e}", e_kl)
    return r


def run_distill(o):
    rng = np.random.default_rng(99)
    n, d = 12, 4
    qp, Q = o.save(rng.standard_normal((n, d)))
    kp, K = o.save(rng.standard_normal((n, d)))
    for causal in (False, True):
        check_distill(o, "identity start, 5 steps", qp, kp, Q, K, causal, 5)
    check_distill(o, "identity start, 5 steps, scale 0.9, lr 0.02", qp, kp, Q, K, True, 5, scale=0.9, lr=0.02)
    check_distill(o, "identity start, 40 steps", qp, kp, Q, K, False, 40)
    check_distill(o, "identity start, 0 steps", qp, kp, Q, K, True, 0)
    # (d) a W0 with cols ≠ d
    cols = 6
    w0p, W0 = o.save(0.7 * rng.standard_normal((d, cols)))
    for causal in (False, True):
        r = check_distill(o, "--hedgehog-w (4 × 6) start, 5 steps", qp, kp, Q, K, causal, 5, W0=W0, w0path=w0p)
        if r:
            first = hedgehog_loss(W0, Q, K, target(Q, K, 0.5, causal), causal)
            e = abs(r["loss"][0] - first) / first
            o.report(bool(e <= TOL_TRAJ), "hh-w", f"{'--hedgehog-w first loss':44s} [cols={cols}{' causal' if causal else ''}]"
                     f"  CLI {r['loss'][0]:.10f}, numpy {first:.10f}, rel {e:.2e}", e)
    # (e) a real model's head
    qf, kf = os.path.join(STORIES, "text128_q.npy"), os.path.join(STORIES, "text128_k.npy")
    if not (os.path.exists(qf) and os.path.exists(kf)):
        skipped("oracle mechanisms_oracle.py: Hedgehog distillation of stories260K L1H3")
        return
    L, Hq = 1, 3
    Q4, K4 = np.load(qf), np.load(kf)
    Qh = Q4[L, Hq].astype(np.float64)
    Kh = K4[L, Hq * K4.shape[1] // Q4.shape[1]].astype(np.float64)
    head = f"{'stories260K L1 H3 causal, 300 steps':44s} [n={Qh.shape[0]} d={Qh.shape[1]}]"
    wpath = os.path.join(o.tmp, "W_stories.npy")
    try:
        r, warn = o.run(["distill", "--q", qf, "--k", kf, "--layer", str(L), "--head", str(Hq), "--causal",
                         "--steps", "300", "-o", wpath])
        W = np.load(wpath).astype(np.float64)
    except (RuntimeError, ValueError, OSError) as exc:
        return o.report(False, "stories", f"{head}  {exc}", np.inf)
    ls, le, ke = r["loss_start"], r["loss_end"], r["kl_elu"]
    o.report(bool(le < 0.5 * ls and le < ke), "stories", f"{head}  loss {ls:.4f} → {le:.4f}, kl_elu {ke:.4f}")
    sc = 1.0 / math.sqrt(Qh.shape[1])
    A = target(Qh, Kh, sc, True)
    l0 = hedgehog_loss(np.eye(Qh.shape[1]), Qh, Kh, A, True)
    kl = kl_elu(Qh, Kh, A, True)
    lw = hedgehog_loss(W, Qh, Kh, A, True)
    e0, ek, ew = abs(ls - l0) / l0, abs(ke - kl) / kl, abs(le - lw) / lw
    o.report(bool(e0 <= TOL_TRAJ), "stories", f"{head}  loss_start vs numpy {l0:.8f}: rel {e0:.2e}", e0)
    o.report(bool(ek <= TOL_TRAJ), "stories", f"{head}  kl_elu vs numpy {kl:.8f}: rel {ek:.2e}", ek)
    o.report(bool(ew <= TOL_W32), "stories", f"{head}  loss_end vs numpy at the written W {lw:.8f}: rel {ew:.2e}", ew)


def run_refusals(o):
    kp, _ = o.save(np.random.default_rng(3).standard_normal((8, 16)), "rk.npy")
    vp, _ = o.save(np.random.default_rng(4).standard_normal((8, 16)), "rv.npy")
    qp, _ = o.save(np.random.default_rng(5).standard_normal((12, 4)), "dq.npy")
    k4, _ = o.save(np.random.default_rng(6).standard_normal((12, 4)), "dk.npy")
    w = os.path.join(o.tmp, "refused.npy")
    o.refusal("recall --variant linformer", ["recall", "--variant", "linformer", "--k", kp, "--v", vp])
    o.refusal("recall --variant softmax --causal", ["recall", "--variant", "softmax", "--causal", "--k", kp, "--v", vp])
    o.refusal("distill without -o", ["distill", "--q", qp, "--k", k4, "--steps", "3"])
    o.refusal("distill --steps -1", ["distill", "--q", qp, "--k", k4, "--steps", "-1", "-o", w])


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cli = os.path.abspath(sys.argv[1])
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="attnviz-mechanisms-oracle-") as tmp:
        o = Oracle(cli, tmp)
        run_recall_files(o)
        run_recall_drawn(o)
        run_distill(o)
        run_refusals(o)
    print("worst per group: " + ", ".join(f"{g} {e:.2e}" for g, e in o.groups.items()) + f"; {time.time() - t0:.1f} s")
    print(f"{o.count} checks, worst error {o.worst:.2e}" + (f", {o.failed} FAILED" if o.failed else ""))
    return 1 if o.failed else 0


if __name__ == "__main__":
    sys.exit(main())
