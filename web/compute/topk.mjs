// topk.mjs: the k largest singular values of a large n×n float32 matrix by randomized subspace
// iteration (Halko, Martinsson & Tropp 2011, Alg. 4.4), for spectra that must follow a drag at
// n > 1024 where the full O(n³) route takes seconds. Plain JS, float64 accumulation; no DOM.
// Cost: (2 + 2·iters)·n²·l multiply-adds, l = k + oversampling.

/** Y[n×l] = M[n×n]·X[n×l] (all row-major). */
function mulMX(M, X, n, l, Y) {
  Y.fill(0);
  for (let i = 0; i < n; i++) {
    const row = i * n, yo = i * l;
    for (let j = 0; j < n; j++) {
      const m = M[row + j];
      if (m === 0) continue;
      const xo = j * l;
      for (let c = 0; c < l; c++) Y[yo + c] += m * X[xo + c];
    }
  }
  return Y;
}

/** Z[n×l] = Mᵀ·Y. */
function mulMtY(M, Y, n, l, Z) {
  Z.fill(0);
  for (let i = 0; i < n; i++) {
    const row = i * n, yo = i * l;
    for (let j = 0; j < n; j++) {
      const m = M[row + j];
      if (m === 0) continue;
      const zo = j * l;
      for (let c = 0; c < l; c++) Z[zo + c] += m * Y[yo + c];
    }
  }
  return Z;
}

/** Orthonormalise the l columns of Y[n×l] in place (modified Gram–Schmidt, twice for stability). */
export function orthonormalise(Y, n, l) {
  for (let pass = 0; pass < 2; pass++) {
    for (let c = 0; c < l; c++) {
      for (let p = 0; p < c; p++) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += Y[i * l + c] * Y[i * l + p];
        for (let i = 0; i < n; i++) Y[i * l + c] -= dot * Y[i * l + p];
      }
      let nrm = 0;
      for (let i = 0; i < n; i++) nrm += Y[i * l + c] * Y[i * l + c];
      nrm = Math.sqrt(nrm);
      const inv = nrm > 1e-300 ? 1 / nrm : 0;
      for (let i = 0; i < n; i++) Y[i * l + c] *= inv;
    }
  }
}

/** Eigenvalues of a symmetric l×l matrix G (row-major, overwritten) by cyclic Jacobi, descending. */
export function symmetricEigenvalues(G, l) {
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0, diag = 0;
    for (let p = 0; p < l; p++) { diag += G[p * l + p] ** 2; for (let q = p + 1; q < l; q++) off += G[p * l + q] ** 2; }
    if (off <= 1e-30 * diag || off === 0) break;
    for (let p = 0; p < l; p++) {
      for (let q = p + 1; q < l; q++) {
        const apq = G[p * l + q];
        if (apq === 0) continue;
        const theta = (G[q * l + q] - G[p * l + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1), s = t * c;
        for (let k = 0; k < l; k++) { // rotate columns p, q
          const gkp = G[k * l + p], gkq = G[k * l + q];
          G[k * l + p] = c * gkp - s * gkq; G[k * l + q] = s * gkp + c * gkq;
        }
        for (let k = 0; k < l; k++) { // rotate rows p, q
          const gpk = G[p * l + k], gqk = G[q * l + k];
          G[p * l + k] = c * gpk - s * gqk; G[q * l + k] = s * gpk + c * gqk;
        }
      }
    }
  }
  const ev = new Float64Array(l);
  for (let p = 0; p < l; p++) ev[p] = G[p * l + p];
  return ev.sort().reverse();
}

/** A small seeded uniform stream (mulberry32) for the test matrix Ω: reproducible spectra. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

/**
 * The k largest singular values of M (n×n, row-major Float32Array or Float64Array), descending.
 * @param {number} k      how many (≤ n)
 * @param {number} iters  power iterations (0 while dragging, 1–2 for more accuracy)
 * @returns {{sv: Float64Array, fro2: number, sigma1Upper: number}} sv has k entries, each ≤ the true σᵢ
 *          (those of a projection QᵀM of M); fro2 = ‖M‖_F² (so that the truncated-SVD error curve is
 *          exact for r ≤ k); sigma1Upper ≥ σ₁ (as computed, in exact arithmetic)
 */
export function topSingularValues(M, n, k, iters = 1, seed = 12345) {
  const kk = Math.min(k, n);
  const l = Math.min(n, kk + 8);
  const rand = rng(seed);
  const X = new Float64Array(n * l);
  for (let i = 0; i < X.length; i++) X[i] = rand();
  const Y = new Float64Array(n * l);
  mulMX(M, X, n, l, Y);
  for (let it = 0; it < iters; it++) {
    orthonormalise(Y, n, l);
    mulMtY(M, Y, n, l, X);
    orthonormalise(X, n, l);
    mulMX(M, X, n, l, Y);
  }
  orthonormalise(Y, n, l);
  const Bt = mulMtY(M, Y, n, l, X); // Bᵀ = MᵀQ, n×l; σ(B) = √eig(BBᵀ) = √eig(BtᵀBt)
  const G = new Float64Array(l * l);
  for (let j = 0; j < n; j++) {
    const o = j * l;
    for (let a = 0; a < l; a++) {
      const v = Bt[o + a];
      if (v === 0) continue;
      for (let b = a; b < l; b++) G[a * l + b] += v * Bt[o + b];
    }
  }
  for (let a = 0; a < l; a++) for (let b = 0; b < a; b++) G[a * l + b] = G[b * l + a];
  const ev = symmetricEigenvalues(G, l);
  const sv = new Float64Array(kk);
  for (let i = 0; i < kk; i++) sv[i] = Math.sqrt(Math.max(0, ev[i]));
  let fro2 = 0, rowMax = 0, captured = 0;
  const colSum = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let row = 0;
    for (let j = 0, o = i * n; j < n; j++) { const m = M[o + j]; fro2 += m * m; row += Math.abs(m); colSum[j] += Math.abs(m); }
    rowMax = Math.max(rowMax, row);
  }
  let colMax = 0;
  for (let j = 0; j < n; j++) colMax = Math.max(colMax, colSum[j]);
  for (let a = 0; a < l; a++) captured += Math.max(0, ev[a]);
  // σ₁ ≤ each of these, so that counts against it are lower bounds (docs/readouts.md, "Bounds and
  // estimates"): ‖M‖_F; √(‖M‖₁‖M‖_∞); and with B = QᵀM, ‖M‖₂² ≤ ‖B‖₂² + ‖(I − QQᵀ)M‖_F², the latter ‖M‖_F² − ‖B‖_F²
  const sigma1Upper = Math.sqrt(Math.min(fro2, rowMax * colMax, Math.max(0, ev[0]) + Math.max(0, fro2 - captured)));
  return { sv, fro2, sigma1Upper };
}
