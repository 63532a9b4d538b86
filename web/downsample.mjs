// downsample.mjs: the n×n matrices shrunk by blocks for the heatmaps (to at most 256 cells per side:
// HEATMAP_CAP in web/engine.mjs). Part of the compute layer (the engine runs it on the page's thread or in
// a worker); pure, no DOM. Matrices are flat row-major Float32Arrays.

/** Block size so that an n×n matrix shows in at most `cap` cells per side. */
export function blockSize(n, cap = 256) {
  return Math.max(1, Math.ceil(n / cap));
}

/**
 * Downsample an n×n matrix by b×b blocks (the last block may be smaller) into out[c×c], c = ⌈n/b⌉.
 * mode 'mean' (mass-preserving average) or 'max' (largest entry: spikes stay visible).
 * A NaN/Inf entry makes its block non-finite (overflow is never averaged away).
 */
export function downsample(src, n, b, mode = 'mean', out = null) {
  const c = Math.ceil(n / b);
  const dst = out && out.length >= c * c ? out : new Float32Array(c * c);
  if (b === 1) { dst.set(src.subarray(0, n * n)); return dst; }
  const isMax = mode === 'max';
  dst.fill(isMax ? -Infinity : 0);
  for (let i = 0; i < n; i++) {
    const bi = ((i / b) | 0) * c;
    const row = i * n;
    for (let bj = 0, j = 0; bj < c; bj++) { // one block of up to b entries of row i
      const end = Math.min(n, j + b), k = bi + bj;
      if (!isMax) {
        let sum = 0;
        for (; j < end; j++) sum += src[row + j];
        dst[k] += sum;
      } else {
        let mx = dst[k];
        for (; j < end; j++) { const v = src[row + j]; if (v !== v) mx = NaN; else if (v > mx) mx = v; }
        dst[k] = mx;
      }
    }
  }
  if (!isMax) {
    for (let bi = 0; bi < c; bi++) {
      const h = Math.min(b, n - bi * b);
      for (let bj = 0; bj < c; bj++) dst[bi * c + bj] /= h * Math.min(b, n - bj * b);
    }
  }
  return dst;
}

/**
 * Downsampled difference M − A: block mean of the difference, or in 'max' mode the entry of largest
 * magnitude (with its sign), so that a single large error is not hidden.
 */
export function downsampleDiff(M, A, n, b, mode = 'mean', out = null) {
  const c = Math.ceil(n / b);
  const dst = out && out.length >= c * c ? out : new Float32Array(c * c);
  if (b === 1) { for (let k = 0; k < n * n; k++) dst[k] = M[k] - A[k]; return dst; }
  if (mode !== 'max') {
    dst.fill(0);
    for (let i = 0; i < n; i++) {
      const bi = ((i / b) | 0) * c, r = i * n;
      for (let bj = 0, j = 0; bj < c; bj++) {
        const end = Math.min(n, j + b);
        let sum = 0;
        for (; j < end; j++) sum += M[r + j] - A[r + j];
        dst[bi + bj] += sum;
      }
    }
    for (let bi = 0; bi < c; bi++) {
      const h = Math.min(b, n - bi * b);
      for (let bj = 0; bj < c; bj++) dst[bi * c + bj] /= h * Math.min(b, n - bj * b);
    }
    return dst;
  }
  dst.fill(0);
  for (let i = 0; i < n; i++) {
    const bi = ((i / b) | 0) * c;
    for (let j = 0, r = i * n; j < n; j++) {
      const v = M[r + j] - A[r + j];
      const k = bi + ((j / b) | 0);
      if (!(Math.abs(v) <= Math.abs(dst[k]))) dst[k] = v; // also takes NaN
    }
  }
  return dst;
}
