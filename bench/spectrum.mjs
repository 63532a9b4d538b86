// spectrum.mjs: the singular-value routes in WASM SIMD (node) against ml-matrix's SVD, numpy's svd
// (a child process, same matrices) and the same C built natively (gcc -O3 -march=native), in one run.
// Prints a table with ratios and appends records {name, n, d, ms, baseline, baseline_ms} to
// build/bench.json (both routes against native, numpy and ml-matrix). Figures are printed, never
// asserted (docs/performance.md: fast route n = 256 ≤ 6 ms, 512 ≤ 40 ms, 1024 ≤ 400 ms; factor route
// n = 4096, r = 64 < 30 ms; ≥ 25× faster than ml-matrix).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz } from '../web/attnviz.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const path = (p) => new URL(p, ROOT).pathname;
const D = 64;
const SIZES = [256, 512, 1024];
const PYTHON = '/usr/bin/python3';

// --- native: build bench/spectrum_native.c against the library sources, run it once -----------------
function nativeTimings() {
  const exe = path('build/native/spectrum_native');
  mkdirSync(path('build/native'), { recursive: true });
  const srcs = execFileSync('bash', ['-c', 'ls src/*.c'], { cwd: path('.'), encoding: 'utf8' }).trim().split('\n');
  execFileSync('gcc', ['-O3', '-march=native', '-std=c11', '-ffp-contract=off', '-Wall', '-Wextra', '-Werror',
    '-Wno-unused-function', '-Iinclude', '-Isrc', 'bench/spectrum_native.c', ...srcs, '-lm', '-o', exe],
  { cwd: path('.'), stdio: 'inherit' });
  const out = execFileSync(exe, SIZES.map(String), { encoding: 'utf8' });
  const byKey = new Map();
  for (const line of out.trim().split('\n')) {
    const r = JSON.parse(line);
    byKey.set(`${r.name}@${r.n}`, r.ms);
  }
  return byKey;
}

// --- wasm: low-level calls through av.exports on wasm memory -------------------------------------------
const WASM = process.env.ATTNVIZ_WASM ? new URL(`file://${process.env.ATTNVIZ_WASM}`) : new URL('build/wasm/attnviz.wasm', ROOT);
const av = await loadAttnviz({ source: WASM, simd: true });
const ex = av.exports;
const f64 = (p, len) => new Float64Array(av.memory.buffer, p, len);

/** The softmax matrix of gaussian Q, K (n×D, std 1, seed 1) in wasm memory: {ptr, free()}. */
function softmaxMatrix(n) {
  const Q = av.malloc(4 * n * D), K = av.malloc(4 * n * D), V = av.malloc(4 * n * D), M = av.malloc(4 * n * n);
  const prm = av.malloc(ex.av_params_size());
  ex.av_params_default(prm, 0);
  check(ex.av_generate(Q, K, V, n, D, 0, 1.0, 1), 'av_generate');
  const wb = ex.av_matrix_work(prm, n, D) >>> 0, w = av.malloc(wb);
  check(ex.av_matrix(M, Q, K, n, D, prm, w, wb), 'av_matrix');
  for (const p of [Q, K, V, prm, w]) av.free(p);
  return M;
}

function check(status, what) {
  if (status < 0) throw new Error(`${what}: ${av.statusString(status)}`);
  return status;
}

/** Median ms of one route on M (wasm pointer); returns {ms, sv (a copy)}. */
function timeRoute(M, n, route) {
  const bytes = ex.av_svd_work(n, route) >>> 0, w = av.malloc(bytes), sv = av.malloc(8 * n + 8);
  const call = () => check(ex.av_singular_values(sv, sv + 8 * n, M, n, route, w, bytes), 'av_singular_values');
  call(); // Liftoff → TurboFan: the medianMs warm-up does the rest
  const ms = medianMs(call, { minCalls: 3, budgetMs: n >= 1024 ? 1500 : 400, warmup: 2 });
  const out = Float64Array.from(f64(sv, n));
  av.free(w); av.free(sv);
  return { ms, sv: out };
}

function timeFactor(n) {
  const Q = av.malloc(4 * n * D), K = av.malloc(4 * n * D), V = av.malloc(4 * n * D), prm = av.malloc(ex.av_params_size());
  ex.av_params_default(prm, 1); // elu: L = D⁻¹φ(Q), R = φ(K), r = d
  check(ex.av_generate(Q, K, V, n, D, 0, 1.0, 1), 'av_generate');
  const rp = av.malloc(8);
  check(ex.av_factor_rank(rp, prm, n, D), 'av_factor_rank');
  const r = new Int32Array(av.memory.buffer, rp, 1)[0]; // long is 32-bit in wasm32
  const L = av.malloc(4 * n * r), R = av.malloc(4 * n * r);
  const wf = ex.av_factors_work(prm, n, D) >>> 0, w1 = av.malloc(wf);
  check(ex.av_factors(L, R, Q, K, n, D, prm, w1, wf), 'av_factors');
  const ws = ex.av_lowrank_svd_work(n, r) >>> 0, w2 = av.malloc(ws), sv = av.malloc(8 * n + 8);
  const call = () => check(ex.av_lowrank_singular_values(sv, sv + 8 * n, L, R, n, r, w2, ws), 'av_lowrank_singular_values');
  call();
  const ms = medianMs(call, { minCalls: 3, budgetMs: 400, warmup: 2 });
  for (const p of [Q, K, V, prm, rp, L, R, w1, w2, sv]) av.free(p);
  return { ms, r };
}

// --- ml-matrix (the library a web developer would reach for) --------------------------------------------
let mlMatrix = null;
try { mlMatrix = await import('ml-matrix'); } catch { console.log('ml-matrix: not installed (npm i -D ml-matrix)'); }

function timeMlMatrix(Mf32, n) {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(Array.from(Mf32.subarray(i * n, (i + 1) * n)));
  const A = new mlMatrix.Matrix(rows);
  const opts = { computeLeftSingularVectors: false, computeRightSingularVectors: false, autoTranspose: false };
  const calls = n >= 1024 ? 1 : n >= 512 ? 2 : 3; // ml-matrix takes seconds from n = 512
  const samples = [];
  let sv = null;
  if (n <= 256) new mlMatrix.SVD(A, opts); // warm-up: let V8 optimise ml-matrix's loops first
  for (let c = 0; c < calls; c++) {
    const t0 = performance.now();
    sv = new mlMatrix.SVD(A, opts).diagonal;
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { ms: samples[samples.length >> 1], sv };
}

// --- numpy in a child process on the same matrices ---------------------------------------------------------
function numpyTimings(files) {
  const script = `
import json, sys, time
import numpy as np
out = {}
for n, f in json.loads(sys.argv[1]):
    M = np.fromfile(f, dtype=np.float32).reshape(n, n).astype(np.float64)
    s = np.linalg.svd(M, compute_uv=False)
    reps, t = 0, []
    while reps < 3 or (sum(t) < 1.0 and reps < 50):
        t0 = time.perf_counter(); np.linalg.svd(M, compute_uv=False); t.append(time.perf_counter() - t0); reps += 1
    t.sort()
    out[str(n)] = {"ms": 1e3 * t[len(t) // 2], "sv": s.tolist()}
print(json.dumps(out))
`;
  try {
    return JSON.parse(execFileSync(PYTHON, ['-c', script, JSON.stringify(files)], { encoding: 'utf8', maxBuffer: 1 << 26 }));
  } catch (e) {
    console.log(`numpy: unavailable (${String(e.message).split('\n')[0]})`);
    return null;
  }
}

// --- the run ----------------------------------------------------------------------------------------------
const native = nativeTimings();
const tmp = join(tmpdir(), `attnviz-spectrum-${process.pid}`);
mkdirSync(tmp, { recursive: true });
const rows = [];
const files = [];
for (const n of SIZES) {
  const M = softmaxMatrix(n);
  const fast = timeRoute(M, n, 0), acc = timeRoute(M, n, 1);
  const Mf32 = Float32Array.from(new Float32Array(av.memory.buffer, M, n * n));
  av.free(M);
  const file = join(tmp, `M${n}.f32`);
  writeFileSync(file, Buffer.from(Mf32.buffer));
  files.push([n, file]);
  const ml = mlMatrix ? timeMlMatrix(Mf32, n) : null;
  rows.push({ n, fast, acc, ml });
}
const np = existsSync(PYTHON) ? numpyTimings(files) : null;
rmSync(tmp, { recursive: true, force: true });
const factor = timeFactor(4096);

const maxRelDiff = (a, b) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m / a[0];
};
const fmt = (x, w = 9) => (x == null ? '—' : x.toFixed(x < 10 ? 2 : 1)).padStart(w);
const ratio = (a, b) => (a == null || b == null ? '—' : `${(a / b).toFixed(1)}×`).padStart(8);

console.log(`spectrum: WASM SIMD (node ${process.versions.node}) vs native gcc -O3 -march=native, numpy svd, ml-matrix SVD`);
console.log('    n | wasm fast  native  numpy   ml-matrix | wasm acc  native | fast/native  numpy/fast  ml/fast | numpy/acc  ml/acc | max|Δσ|/σ₁ vs numpy (fast, acc)');
const records = [];
for (const { n, fast, acc, ml } of rows) {
  const nf = native.get(`spectrum/fast/native@${n}`), na = native.get(`spectrum/accurate/native@${n}`);
  const npy = np?.[String(n)];
  const dF = npy ? maxRelDiff(npy.sv, fast.sv).toExponential(1) : '—';
  const dA = npy ? maxRelDiff(npy.sv, acc.sv).toExponential(1) : '—';
  console.log(`${String(n).padStart(5)} |${fmt(fast.ms)}${fmt(nf, 8)}${fmt(npy?.ms, 8)}${fmt(ml?.ms, 11)} |${fmt(acc.ms)}${fmt(na, 8)} |` +
    `${ratio(fast.ms, nf)}${ratio(npy?.ms, fast.ms).padStart(12)}${ratio(ml?.ms, fast.ms).padStart(9)} |` +
    `${ratio(npy?.ms, acc.ms).padStart(10)}${ratio(ml?.ms, acc.ms)} | ${dF}, ${dA}`);
  records.push({ name: 'spectrum/fast/wasm-simd', n, d: D, ms: fast.ms, baseline: 'native gcc -O3 -march=native', baseline_ms: nf });
  records.push({ name: 'spectrum/accurate/wasm-simd', n, d: D, ms: acc.ms, baseline: 'native gcc -O3 -march=native', baseline_ms: na });
  if (npy) records.push({ name: 'spectrum/fast/wasm-simd-vs-numpy', n, d: D, ms: fast.ms, baseline: 'numpy.linalg.svd', baseline_ms: npy.ms });
  if (ml) records.push({ name: 'spectrum/fast/wasm-simd-vs-ml-matrix', n, d: D, ms: fast.ms, baseline: 'ml-matrix SVD', baseline_ms: ml.ms });
  if (npy) records.push({ name: 'spectrum/accurate/wasm-simd-vs-numpy', n, d: D, ms: acc.ms, baseline: 'numpy.linalg.svd', baseline_ms: npy.ms });
  if (ml) records.push({ name: 'spectrum/accurate/wasm-simd-vs-ml-matrix', n, d: D, ms: acc.ms, baseline: 'ml-matrix SVD', baseline_ms: ml.ms });
}
const nfac = native.get('spectrum/factor/native@4096');
console.log(`factor route n = 4096, r = ${factor.r}: wasm ${factor.ms.toFixed(2)} ms, native ${nfac?.toFixed(2)} ms (${ratio(factor.ms, nfac).trim()})`);
records.push({ name: 'spectrum/factor/wasm-simd', n: 4096, d: D, ms: factor.ms, baseline: 'native gcc -O3 -march=native', baseline_ms: nfac });
appendRecords(records);
