#!/usr/bin/python3
"""Oracle: the recurrent families (decay, window, retention, deltanet) of `attnviz` against numpy.

usage: /usr/bin/python3 tests/oracle/recurrent_oracle.py build/native/attnviz

Everything on the numpy side is float64 and written from the conventions (causal = inclusive, masked
entries exactly 0), not from the C code:
  --decay γ on elu / relu (causal):  M_ij = γ^{i−j} φ(q_i)·φ(k_j) / (Σ_{l≤i} γ^{i−l} φ(q_i)·φ(k_l) + 1e-6),
      φ = elu + 1 or relu; recurrent S_t = γS + φ(k_t)v_tᵀ, z_t = γz + φ(k_t), o_t = S_tᵀφ(q_t)/(φ(q_t)·z_t + ε)
  softmax --decay γ: row softmax over j ≤ i of scale·q_i·k_j + (i−j)·ln γ
  softmax --window W: row i sees keys with |i − j| < W (and j ≤ i when causal)
  retention: M = (scale·QKᵀ) ⊙ γ^{i−j} (j ≤ i), unnormalised, default γ = 1 − 2⁻⁵;
      recurrent S_t = γS + k_t v_tᵀ, o_t = S_tᵀ(scale·q_t)
  deltanet: unit q and k, scale on q; S_t = αS; u_t = β(v_t − S_tᵀk_t); S_t += k_t u_tᵀ; o_t = S_tᵀq_t,
      matrix form M = β (tril(QKᵀ) ⊙ Γ)(I + stril(β KKᵀ ⊙ Γ))⁻¹, Γ_ij = α^{i−j}
  semiseparable_rank: numerical rank of M[h:n, 0:h], h = ⌊n/2⌋, at tolerance σ₁(M)·n·2⁻²³.
Checks: (1) `attnviz matrix` M against the numpy M (deltanet: by the recurrence with V = I and by the matrix
form, which must agree to 1e-10); (2) O by --path recurrent and --path chunkwise (--chunk 7 and a chunk that
divides n) against the numpy recurrence; (3) `attnviz readouts` semiseparable_rank against numpy's SVD rank
and the structural facts (window W: W − 1; retention: d; deltanet β = 1: d − 1; decayed elu: d).
Each check prints one line; the last line is 'N checks, worst error E' (E: the largest relative error of a
CLI M or O against numpy, max |X − X_ref| / max |X_ref|); the exit status is 1 when any check failed.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-5          # CLI (float32) against numpy (float64), relative to max |X_ref|
TOL_SELF = 1e-10    # numpy against numpy (recurrence against matrix form)
FLT_EPSILON = 2.0 ** -23
RETENTION_GAMMA = 1.0 - 2.0 ** -5


# ---------------------------------------------------------------------------------------------------
# numpy references (float64)


def lower(n, strict=False):
    return np.tril(np.ones((n, n), dtype=bool), -1 if strict else 0)


def decay_matrix(n, g):
    """γ^{i−j} for j ≤ i, 0 above the diagonal."""
    i, j = np.indices((n, n))
    return np.where(j <= i, float(g) ** np.maximum(i - j, 0), 0.0)


def phi(x, kind):
    if kind == "elu":
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    return np.maximum(x, 0.0)


def kernel_decayed_M(Q, K, kind, g, eps=1e-6):
    A = (phi(Q, kind) @ phi(K, kind).T) * decay_matrix(Q.shape[0], g)
    return A / (A.sum(axis=1, keepdims=True) + eps)


def kernel_decayed_O(Q, K, V, kind, g, eps=1e-6):
    fq, fk = phi(Q, kind), phi(K, kind)
    S = np.zeros((Q.shape[1], V.shape[1]))
    z = np.zeros(Q.shape[1])
    O = np.zeros((Q.shape[0], V.shape[1]))
    for t in range(Q.shape[0]):
        S = g * S + np.outer(fk[t], V[t])
        z = g * z + fk[t]
        O[t] = S.T @ fq[t] / (fq[t] @ z + eps)
    return O


def softmax_allowed(n, causal, window):
    i, j = np.indices((n, n))
    ok = np.ones((n, n), dtype=bool)
    if causal:
        ok &= j <= i
    if window:
        ok &= np.abs(i - j) < window
    return ok


def softmax_M(Q, K, scale, causal=True, g=1.0, window=0):
    n = Q.shape[0]
    i, j = np.indices((n, n))
    L = scale * (Q @ K.T) + (i - j) * math.log(g)
    ok = softmax_allowed(n, causal, window)
    L = np.where(ok, L, -np.inf)
    E = np.exp(L - L.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def softmax_O(Q, K, V, scale, g=1.0, window=0):
    """Token by token with a key/value cache (causal): o_t = softmax over the cached keys the window keeps."""
    O = np.zeros((Q.shape[0], V.shape[1]))
    cache = []  # (position, k, v)
    for t in range(Q.shape[0]):
        cache.append((t, K[t], V[t]))
        if window:
            cache = cache[-window:]
        logits = np.array([scale * (Q[t] @ k) + (t - p) * math.log(g) for p, k, _ in cache])
        w = np.exp(logits - logits.max())
        O[t] = (w / w.sum()) @ np.array([v for _, _, v in cache])
    return O


def retention_M(Q, K, scale, g):
    return scale * (Q @ K.T) * decay_matrix(Q.shape[0], g)


def retention_O(Q, K, V, scale, g):
    S = np.zeros((Q.shape[1], V.shape[1]))
    O = np.zeros((Q.shape[0], V.shape[1]))
    for t in range(Q.shape[0]):
        S = g * S + np.outer(K[t], V[t])
        O[t] = S.T @ (scale * Q[t])
    return O


def unit_rows(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def deltanet_qk(Q, K, scale):
    return scale * unit_rows(Q), unit_rows(K)


def deltanet_O(Q, K, V, scale, beta, alpha):
    q, k = deltanet_qk(Q, K, scale)
    S = np.zeros((k.shape[1], V.shape[1]))
    O = np.zeros((Q.shape[0], V.shape[1]))
    for t in range(Q.shape[0]):
        S = alpha * S
        u = beta * (V[t] - S.T @ k[t])
        S = S + np.outer(k[t], u)
        O[t] = S.T @ q[t]
    return O


def deltanet_M_formula(Q, K, scale, beta, alpha):
    q, k = deltanet_qk(Q, K, scale)
    n = Q.shape[0]
    G = decay_matrix(n, alpha)
    A = np.tril(q @ k.T) * G
    B = np.eye(n) + np.tril(beta * (k @ k.T) * G, -1)
    return beta * np.linalg.solve(B.T, A.T).T   # β A B⁻¹


def semiseparable_rank(M):
    n = M.shape[0]
    h = n // 2
    s1 = np.linalg.svd(M, compute_uv=False)[0]
    tol = s1 * n * FLT_EPSILON
    sv = np.linalg.svd(M[h:, :h], compute_uv=False)
    r = int((sv > tol).sum())
    # the margin: how far the nearest singular value lies from the tolerance (a ratio; 1 would be a tie)
    above = sv[sv > tol]
    below = sv[sv <= tol]
    margin = min(above.min() / tol if above.size else np.inf, tol / below.max() if below.size and below.max() > 0
                 else np.inf)
    return r, margin


# ---------------------------------------------------------------------------------------------------
# the CLI


class Oracle:
    def __init__(self, cli, tmp):
        self.cli, self.tmp = cli, tmp
        self.count = self.failed = 0
        self.worst = 0.0
        self.sets = {}

    def report(self, ok, line, err=None):
        self.count += 1
        self.failed += not ok
        if err is not None and np.isfinite(err):
            self.worst = max(self.worst, err)
        elif err is not None:
            self.worst = np.inf
        print(("PASS  " if ok else "FAIL  ") + line, flush=True)

    def make_set(self, n, d, seed, std=1.0):
        name = f"{n}x{d}"
        folder = os.path.join(self.tmp, name)
        subprocess.run([self.cli, "generate", "--gen", "gaussian", "--n", str(n), "--d", str(d), "--std", str(std),
                        "--seed", str(seed), "-o", folder], check=True, capture_output=True)
        s = {"name": name, "n": n, "d": d}
        for key in "qkv":
            s[key] = os.path.join(folder, f"{key}.npy")
            s[key.upper()] = np.load(s[key]).astype(np.float32).astype(np.float64)
        self.sets[name] = s
        return s

    def make_np_set(self, name, n, d, shift, spread, seed):
        """Inputs numpy writes itself (float32): shift + spread·N(0, 1), for normalisers as small as ε."""
        rng = np.random.default_rng(seed)
        s = {"name": name, "n": n, "d": d}
        for key in "qkv":
            x = (shift if key != "v" else 0.0) + (spread if key != "v" else 1.0) * rng.standard_normal((n, d))
            s[key] = os.path.join(self.tmp, f"{key}_{name}.npy")
            np.save(s[key], x.astype(np.float32))
            s[key.upper()] = np.load(s[key]).astype(np.float64)
        self.sets[name] = s
        return s

    def matrix(self, s, args, path=None, chunk=None):
        """Run `attnviz matrix`; returns (M, O or None, stderr) or raises RuntimeError."""
        m_out, o_out = os.path.join(self.tmp, "M.npy"), os.path.join(self.tmp, "O.npy")
        for f in (m_out, o_out):
            if os.path.exists(f):
                os.remove(f)
        cmd = [self.cli, "matrix", *args, "--q", s["q"], "--k", s["k"], "--v", s["v"], "-o", m_out]
        if path:
            cmd += ["--out-o", o_out, "--path", path]
        if chunk:
            cmd += ["--chunk", str(chunk)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip()}")
        M = np.load(m_out).astype(np.float64)
        O = np.load(o_out).astype(np.float64) if path else None
        return M, O, p.stderr.strip()

    def readouts(self, s, args):
        cmd = [self.cli, "readouts", *args, "--q", s["q"], "--k", s["k"]]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip()}")
        return json.loads(p.stdout, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))

    # (1) the matrix
    def check_matrix(self, label, s, args, R):
        head = f"M  {label:42s} [{s['name']}]"
        try:
            M, _, warn = self.matrix(s, args)
        except RuntimeError as exc:
            return self.report(False, f"{head}  {exc}", np.inf)
        if M.shape != R.shape:
            return self.report(False, f"{head}  shape {M.shape}, expected {R.shape}", np.inf)
        err = np.abs(M - R).max() / max(np.abs(R).max(), 1e-300)
        masked = R == 0.0                              # the references hold exact zeros only where masked
        leak = np.abs(M[masked]).max() if masked.any() else 0.0
        ok = bool(np.isfinite(M).all() and err <= TOL and leak == 0.0)
        extra = f", masked entries max |M| {leak:.1e}" if leak else ""
        self.report(ok, f"{head}  rel err {err:.2e}{extra}" + (f"  ({warn})" if warn else ""), err)

    # numpy against numpy
    def check_self(self, label, s, A, B, what):
        err = np.abs(A - B).max() / max(np.abs(B).max(), 1e-300)
        self.report(bool(err <= TOL_SELF), f"=  {label:42s} [{s['name']}]  {what}: rel diff {err:.2e}")

    # (2) the output by one path
    def check_output(self, label, s, args, path, chunk, RO):
        tag = f"{label} {path}" + (f" C={chunk}" if chunk else "")
        head = f"O  {tag:42s} [{s['name']}]"
        try:
            _, O, warn = self.matrix(s, args, path, chunk)
        except RuntimeError as exc:
            return self.report(False, f"{head}  {exc}", np.inf)
        if O.shape != RO.shape:
            return self.report(False, f"{head}  shape {O.shape}, expected {RO.shape}", np.inf)
        err = np.abs(O - RO).max() / max(np.abs(RO).max(), 1e-300)
        ok = bool(np.isfinite(O).all() and err <= TOL)
        self.report(ok, f"{head}  rel err {err:.2e}" + (f"  ({warn})" if warn else ""), err)

    # (3) the semiseparable rank
    def check_rank(self, label, s, args, R, fact=None):
        head = f"R  {label:42s} [{s['name']}]"
        try:
            r = self.readouts(s, args)
        except (RuntimeError, ValueError) as exc:
            return self.report(False, f"{head}  {exc}")
        mine, margin = semiseparable_rank(R)
        got, ceiling = r.get("semiseparable_rank"), r.get("semiseparable_ceiling")
        ok = got == mine and (fact is None or got == fact) and (ceiling is None or got <= ceiling)
        fact_s = f", structural {fact}" if fact is not None else ""
        self.report(bool(ok), f"{head}  CLI {got}, numpy {mine} (margin ×{margin:.1e}){fact_s}, ceiling {ceiling}")


# ---------------------------------------------------------------------------------------------------
# the cases


def run_set(o, s, chunks):
    Q, K, V = s["Q"], s["K"], s["V"]
    n, d = s["n"], s["d"]
    sc = 1.0 / math.sqrt(d)
    I = np.eye(n)

    # (1) matrices
    o.check_matrix("retention γ default", s, ["--variant", "retention"], retention_M(Q, K, sc, RETENTION_GAMMA))
    o.check_matrix("retention γ 0.8", s, ["--variant", "retention", "--decay", "0.8"], retention_M(Q, K, sc, 0.8))
    o.check_matrix("retention γ 0.9 --scale 0.3", s, ["--variant", "retention", "--decay", "0.9", "--scale", "0.3"],
                   retention_M(Q, K, 0.3, 0.9))
    for beta, alpha, extra, scale in ((0.5, 1.0, [], sc), (1.0, 0.9, ["--beta", "1", "--decay", "0.9"], sc),
                                      (2.0, 1.0, ["--beta", "2"], sc),
                                      (0.7, 0.95, ["--beta", "0.7", "--decay", "0.95", "--scale", "0.6"], 0.6)):
        label = f"deltanet β {beta:g} α {alpha:g}" + (f" scale {scale:g}" if scale != sc else "")
        Mrec = deltanet_O(Q, K, I, scale, beta, alpha)      # the recurrence with V = I writes M
        Mform = deltanet_M_formula(Q, K, scale, beta, alpha)
        o.check_self(label, s, Mrec, Mform, "recurrence (V = I) vs matrix form")
        o.check_matrix(label, s, ["--variant", "deltanet", *extra], Mform)
    o.check_matrix("softmax causal γ 0.9", s, ["--variant", "softmax", "--causal", "--decay", "0.9"],
                   softmax_M(Q, K, sc, True, 0.9))
    o.check_matrix("softmax causal W 5", s, ["--variant", "softmax", "--causal", "--window", "5"],
                   softmax_M(Q, K, sc, True, 1.0, 5))
    o.check_matrix("softmax non-causal W 5", s, ["--variant", "softmax", "--window", "5"],
                   softmax_M(Q, K, sc, False, 1.0, 5))
    o.check_matrix("softmax causal γ 0.9 W 5", s, ["--variant", "softmax", "--causal", "--decay", "0.9", "--window", "5"],
                   softmax_M(Q, K, sc, True, 0.9, 5))
    for kind in ("elu", "relu"):
        R = kernel_decayed_M(Q, K, kind, 0.85)
        o.check_self(f"{kind} causal γ 0.85", s, kernel_decayed_O(Q, K, I, kind, 0.85), R,
                     "recurrence (V = I) vs matrix form")
        o.check_matrix(f"{kind} causal γ 0.85", s, ["--variant", kind, "--causal", "--decay", "0.85"], R)

    # (2) outputs by the recurrent and chunkwise paths, against the numpy recurrences
    outs = [
        ("retention γ default", ["--variant", "retention"], retention_O(Q, K, V, sc, RETENTION_GAMMA),
         retention_M(Q, K, sc, RETENTION_GAMMA)),
        ("deltanet β 0.5 α 1", ["--variant", "deltanet"], deltanet_O(Q, K, V, sc, 0.5, 1.0),
         deltanet_M_formula(Q, K, sc, 0.5, 1.0)),
        ("deltanet β 1 α 0.9", ["--variant", "deltanet", "--beta", "1", "--decay", "0.9"],
         deltanet_O(Q, K, V, sc, 1.0, 0.9), deltanet_M_formula(Q, K, sc, 1.0, 0.9)),
        ("elu causal γ 0.85", ["--variant", "elu", "--causal", "--decay", "0.85"],
         kernel_decayed_O(Q, K, V, "elu", 0.85), kernel_decayed_M(Q, K, "elu", 0.85)),
        ("softmax causal γ 0.9 W 5", ["--variant", "softmax", "--causal", "--decay", "0.9", "--window", "5"],
         softmax_O(Q, K, V, sc, 0.9, 5), softmax_M(Q, K, sc, True, 0.9, 5)),
    ]
    for label, args, RO, RM in outs:
        o.check_self(label, s, RO, RM @ V, "recurrence O vs M V")
        o.check_output(label, s, args, "recurrent", None, RO)
        for c in chunks:
            o.check_output(label, s, args, "chunkwise", c, RO)


def run_eps(o, s, kind, chunks):
    """Decayed elu / relu where ε = 1e-6 is comparable to the normaliser, so that its placement shows."""
    Q, K, V = s["Q"], s["K"], s["V"]
    n = s["n"]
    label = f"{kind} causal γ 0.85, ε matters"
    R = kernel_decayed_M(Q, K, kind, 0.85)
    with np.errstate(invalid="ignore", divide="ignore"):
        R0 = kernel_decayed_M(Q, K, kind, 0.85, eps=0.0)   # rows whose normaliser is 0 are NaN here: skipped
    sens = np.nanmax(np.abs(R - R0)) / np.abs(R).max()
    o.report(bool(sens > 100 * TOL), f"=  {label:42s} [{s['name']}]  ε = 1e-6 vs ε = 0 references differ by {sens:.2e}"
             " (must exceed 100·tolerance)")
    o.check_self(label, s, kernel_decayed_O(Q, K, np.eye(n), kind, 0.85), R, "recurrence (V = I) vs matrix form")
    args = ["--variant", kind, "--causal", "--decay", "0.85"]
    o.check_matrix(label, s, args, R)
    RO = kernel_decayed_O(Q, K, V, kind, 0.85)
    o.check_output(label, s, args, "recurrent", None, RO)
    for c in chunks:
        o.check_output(label, s, args, "chunkwise", c, RO)


def run_ranks(o, s):
    Q, K = s["Q"], s["K"]
    n, d = s["n"], s["d"]
    sc = 1.0 / math.sqrt(d)
    for W in (4, 8):
        o.check_rank(f"softmax causal W {W}", s, ["--variant", "softmax", "--causal", "--window", str(W)],
                     softmax_M(Q, K, sc, True, 1.0, W), W - 1 if W - 1 <= n // 2 else None)
    o.check_rank("retention γ default", s, ["--variant", "retention"], retention_M(Q, K, sc, RETENTION_GAMMA),
                 d if d <= n // 2 else None)
    o.check_rank("deltanet β 1", s, ["--variant", "deltanet", "--beta", "1"], deltanet_M_formula(Q, K, sc, 1.0, 1.0),
                 d - 1 if d <= n // 2 else None)
    o.check_rank("deltanet β 0.5 α 0.9", s, ["--variant", "deltanet", "--decay", "0.9"],
                 deltanet_M_formula(Q, K, sc, 0.5, 0.9))
    o.check_rank("elu causal γ 0.85", s, ["--variant", "elu", "--causal", "--decay", "0.85"],
                 kernel_decayed_M(Q, K, "elu", 0.85), d if d <= n // 2 else None)
    o.check_rank("softmax causal γ 0.9 W 5", s, ["--variant", "softmax", "--causal", "--decay", "0.9", "--window", "5"],
                 softmax_M(Q, K, sc, True, 0.9, 5), 4)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cli = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attnviz-recurrent-oracle-") as tmp:
        o = Oracle(cli, tmp)
        s23 = o.make_set(23, 5, seed=11)
        s64 = o.make_set(64, 16, seed=12)
        s6 = o.make_set(64, 6, seed=13)
        run_set(o, s23, chunks=(7, 1))     # 23 is prime: 1 is the only chunk below n that divides it
        run_set(o, s64, chunks=(7, 16))
        run_eps(o, o.make_np_set("elu-11", 23, 7, -11.0, 1.0, 5), "elu", chunks=(7, 23))
        run_eps(o, o.make_np_set("relu1e-3", 24, 7, 0.0, 1e-3, 6), "relu", chunks=(7, 8))
        for s in (s6, s64, s23):
            run_ranks(o, s)
    print(f"{o.count} checks, worst error {o.worst:.2e}" + (f", {o.failed} FAILED" if o.failed else ""))
    return 1 if o.failed else 0


if __name__ == "__main__":
    sys.exit(main())
