// spectrum.mjs: the singular-value routes in WASM SIMD (node) against numpy on OpenBLAS with one thread
// (its svd, and its own Gram route eigvalsh(A·Aᵀ)), ml-matrix's SVD and the same C built natively
// (gcc -O3 -march=native), in one run, on the same softmax matrices (d = 64).
//
// Honest by construction (docs/performance.md, "Baselines"):
// - numpy runs in a child process (bench/numpy_side.py) with OPENBLAS_NUM_THREADS=1, and the BLAS/LAPACK
//   it actually loaded is read from its memory map and recorded; `make bench` installs OpenBLAS first.
// - WASM and numpy alternate, in rounds of a few calls each, side order rotated per round, so drift on a
//   shared machine hits both; each figure is the median of all its samples after a warm-up.
// - Each route is also reported as a fraction of the WASM limit: the flop rate of the spectrum's own
//   float64 SIMD128 product (bench/spectrum_gemm.c) measured in the same run, the routes counted at their
//   minimal flops (fast: n³ for the Gram matrix + 4n³/3 to tridiagonalise; accurate: 8n³/3 to bidiagonalise).
// - The cost of where the caller's buffers land: the fast route with the workspace and the input at
//   8-byte offsets from 64-byte alignment, against aligned.
// Prints a table and appends records {name, n, d, ms, baseline, baseline_ms} to build/bench.json, with one
// record carrying the machine and numpy's configuration. Figures are printed, never asserted.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { appendRecords, medianMs } from './common.mjs';

const ROOT = new URL('../', import.meta.url);
const path = (p) => new URL(p, ROOT).pathname;
const D = 64;
const SIZES = [256, 512, 1024];
const PYTHON = '/usr/bin/python3';
// rounds × calls per side and round, by n: every side gets rounds·calls samples
const PLAN = { 256: { rounds: 6, calls: 8 }, 512: { rounds: 5, calls: 3 }, 1024: { rounds: 4, calls: 1 } };

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };

// --- native: bench/spectrum_native.c against the library sources (the Makefile builds it) ----------------
function nativeTimings() {
  const exe = path('build/native/spectrum_native');
  if (!existsSync(exe)) {
    console.log('native: build/native/spectrum_native missing (make bench builds it)');
    return new Map();
  }
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

function check(status, what) {
  if (status < 0) throw new Error(`${what}: ${av.statusString(status)}`);
  return status;
}

/** The softmax matrix of gaussian Q, K (n×D, std 1, seed 1) in wasm memory, at byte offset `skew` past a
 * 64-byte boundary: {ptr, base}. */
function softmaxMatrix(n, skew = 0) {
  const Q = av.malloc(4 * n * D), K = av.malloc(4 * n * D), V = av.malloc(4 * n * D);
  const base = av.malloc(4 * n * n + 128), M = ((base + 63) & ~63) + skew;
  const prm = av.malloc(ex.av_params_size());
  ex.av_params_default(prm, 0);
  check(ex.av_generate(Q, K, V, n, D, 0, 1.0, 1), 'av_generate');
  const wb = ex.av_matrix_work(prm, n, D) >>> 0, w = av.malloc(wb);
  check(ex.av_matrix(M, Q, K, n, D, prm, w, wb), 'av_matrix');
  for (const p of [Q, K, V, prm, w]) av.free(p);
  return { ptr: M, base };
}

/** A route on M: {call(), sv(), free()}; the workspace at byte offset `skew` past a 64-byte boundary. */
function route(M, n, which, skew = 0) {
  const bytes = ex.av_svd_work(n, which) >>> 0, base = av.malloc(bytes + 128), w = ((base + 63) & ~63) + skew;
  const sv = av.malloc(8 * n + 8);
  return {
    call: () => check(ex.av_singular_values(sv, sv + 8 * n, M, n, which, w, bytes), 'av_singular_values'),
    sv: () => Float64Array.from(f64(sv, n)),
    free: () => { av.free(base); av.free(sv); },
  };
}

function samplesOf(fn, calls) {
  const out = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out;
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

// --- the WASM limit: the spectrum's own float64 product (bench/spectrum_gemm.c) -------------------------------
async function gemmRate(n) {
  const file = path('build/wasm/spectrum_gemm.wasm');
  if (!existsSync(file)) return null;
  const module = await WebAssembly.compile(readFileSync(file));
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) (imports[imp.module] ??= {})[imp.name] = () => 0;
  const { exports } = await WebAssembly.instantiate(module, imports);
  exports._initialize?.();
  if (exports.gemm_setup(n) !== 0) return null;
  const ms = medianMs(() => exports.gemm_run(), { minCalls: 5, budgetMs: 600, warmup: 3 });
  return { ms, gflops: (n ** 3) / ms / 1e6 };
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
  if (n <= 256) new mlMatrix.SVD(A, opts); // warm-up: let V8 optimise ml-matrix's loops first
  return { ms: median(samplesOf(() => new mlMatrix.SVD(A, opts), calls)) };
}

// --- numpy in a child process, driven line by line ------------------------------------------------------
function numpySide() {
  if (!existsSync(PYTHON)) return null;
  const child = spawn(PYTHON, [path('bench/numpy_side.py')], {
    env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let dead = null;
  child.on('error', (e) => { dead = e; });
  return {
    async ask(cmd) {
      if (dead) throw dead;
      child.stdin.write(`${JSON.stringify(cmd)}\n`);
      const { value, done } = await lines.next();
      if (done) throw new Error('numpy side exited');
      const out = JSON.parse(value);
      if (out.error) throw new Error(out.error);
      return out;
    },
    close() { child.stdin.end(); },
  };
}

// --- the run ----------------------------------------------------------------------------------------------
const native = nativeTimings();
let np = numpySide(), npInfo = null;
try { npInfo = np && await np.ask({ cmd: 'info' }); } catch (e) { console.log(`numpy: unavailable (${e.message})`); np = null; }
if (npInfo && npInfo.blas_lapack !== 'OpenBLAS') {
  console.log(`numpy: runs on ${npInfo.blas_lapack} (${npInfo.libraries.join(', ')}), not OpenBLAS: ` +
    'apt-get install libopenblas0-pthread (make bench does) for the baseline people use');
}
const tmp = join(tmpdir(), `attnviz-spectrum-${process.pid}`);
mkdirSync(tmp, { recursive: true });
const rows = [];
for (const n of SIZES) {
  const { ptr: M, base } = softmaxMatrix(n);
  const fast = route(M, n, 0), acc = route(M, n, 1);
  for (let i = 0; i < 3; i++) { fast.call(); acc.call(); } // Liftoff → TurboFan
  const Mf32 = Float32Array.from(new Float32Array(av.memory.buffer, M, n * n));
  const file = join(tmp, `M${n}.f32`);
  writeFileSync(file, Buffer.from(Mf32.buffer));
  let npSv = null;
  if (np) npSv = (await np.ask({ cmd: 'load', n, file })).sv;
  // alternate the sides in rounds, rotating which goes first
  const sides = [['fast', async (k) => samplesOf(fast.call, k)], ['acc', async (k) => samplesOf(acc.call, k)]];
  if (np) {
    sides.push(['svd', async (k) => (await np.ask({ cmd: 'time', n, what: 'svd', calls: k })).ms]);
    sides.push(['eigvalsh', async (k) => (await np.ask({ cmd: 'time', n, what: 'eigvalsh', calls: k })).ms]);
  }
  const samples = Object.fromEntries(sides.map(([name]) => [name, []]));
  const { rounds, calls } = PLAN[n];
  for (let r = 0; r < rounds; r++) {
    for (let s = 0; s < sides.length; s++) {
      const [name, run] = sides[(s + r) % sides.length];
      samples[name].push(...await run(calls));
    }
  }
  const ms = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const out = { n, ms, svFast: fast.sv(), svAcc: acc.sv(), npSv, samples: rounds * calls };
  fast.free(); acc.free(); av.free(base);
  out.ml = mlMatrix ? timeMlMatrix(Mf32, n) : null;
  rows.push(out);
}
np?.close();
rmSync(tmp, { recursive: true, force: true });

// where the buffers land: the fast route at n = 512 with workspace and input skewed by 8 and 24 bytes
const skews = [];
{
  const n = 512;
  for (const skew of [0, 8, 24]) {
    const { ptr: M, base } = softmaxMatrix(n, skew);
    const r = route(M, n, 0, skew);
    r.call();
    skews.push({ skew, ms: medianMs(r.call, { minCalls: 5, budgetMs: 500, warmup: 2 }) });
    r.free(); av.free(base);
  }
}
const factor = timeFactor(4096);
const gemm = {};
for (const n of SIZES) gemm[n] = await gemmRate(n);

const maxRelDiff = (a, b) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m / a[0];
};
const fmt = (x, w = 9) => (x == null ? '—' : x.toFixed(x < 10 ? 2 : 1)).padStart(w);
const ratio = (a, b, w = 8) => (a == null || b == null ? '—' : `${(a / b).toFixed(2)}×`).padStart(w);
const pct = (x) => (x == null ? '—' : `${Math.round(100 * x)}%`).padStart(6);

const cpu = cpus()[0]?.model ?? 'unknown cpu';
console.log(`spectrum on ${cpu} (${cpus().length} cores), node ${process.versions.node}; numpy ${npInfo?.numpy ?? '—'} on ` +
  `${npInfo?.blas_lapack ?? '—'}, OPENBLAS_NUM_THREADS=${npInfo?.OPENBLAS_NUM_THREADS ?? '—'}; WASM and numpy alternating`);
console.log('    n | wasm fast  wasm acc | numpy svd  eigvalsh(AAᵀ) | svd/acc  eigvalsh/fast | native fast  acc | ml-matrix | ' +
  'gemm GF/s  fast  acc of limit | max|Δσ|/σ₁ vs numpy (fast, acc)');
const records = [];
for (const { n, ms, svFast, svAcc, npSv, ml, samples } of rows) {
  const nf = native.get(`spectrum/fast/native@${n}`), na = native.get(`spectrum/accurate/native@${n}`);
  const g = gemm[n];
  const limFast = g ? ((n ** 3 + 4 * n ** 3 / 3) / ms.fast / 1e6) / g.gflops : null;
  const limAcc = g ? ((8 * n ** 3 / 3) / ms.acc / 1e6) / g.gflops : null;
  const dF = npSv ? maxRelDiff(npSv, svFast).toExponential(1) : '—';
  const dA = npSv ? maxRelDiff(npSv, svAcc).toExponential(1) : '—';
  console.log(`${String(n).padStart(5)} |${fmt(ms.fast)}${fmt(ms.acc, 10)} |${fmt(ms.svd, 10)}${fmt(ms.eigvalsh, 15)} |` +
    `${ratio(ms.svd, ms.acc)}${ratio(ms.eigvalsh, ms.fast, 15)} |${fmt(nf, 12)}${fmt(na, 6)} |${fmt(ml?.ms, 10)} |` +
    `${fmt(g?.gflops, 10)}${pct(limFast)}${pct(limAcc)}         | ${dF}, ${dA}`);
  const base = { n, d: D, samples };
  records.push({ name: 'spectrum/fast/wasm-simd', ...base, ms: ms.fast, baseline: 'native gcc -O3 -march=native', baseline_ms: nf });
  records.push({ name: 'spectrum/accurate/wasm-simd', ...base, ms: ms.acc, baseline: 'native gcc -O3 -march=native', baseline_ms: na });
  if (ms.svd != null) {
    records.push({ name: 'spectrum/accurate/wasm-simd-vs-numpy-svd', ...base, ms: ms.acc, baseline: 'numpy.linalg.svd (OpenBLAS, 1 thread)', baseline_ms: ms.svd });
    records.push({ name: 'spectrum/fast/wasm-simd-vs-numpy-svd', ...base, ms: ms.fast, baseline: 'numpy.linalg.svd (OpenBLAS, 1 thread)', baseline_ms: ms.svd });
    records.push({ name: 'spectrum/fast/wasm-simd-vs-numpy-eigvalsh', ...base, ms: ms.fast, baseline: 'numpy.linalg.eigvalsh(A @ A.T) (OpenBLAS, 1 thread)', baseline_ms: ms.eigvalsh });
  }
  if (ml) {
    records.push({ name: 'spectrum/fast/wasm-simd-vs-ml-matrix', ...base, ms: ms.fast, baseline: 'ml-matrix SVD', baseline_ms: ml.ms });
    records.push({ name: 'spectrum/accurate/wasm-simd-vs-ml-matrix', ...base, ms: ms.acc, baseline: 'ml-matrix SVD', baseline_ms: ml.ms });
  }
  if (g) {
    // the WASM limit: the route's minimal flops at the gemm's rate, as the baseline time
    records.push({ name: 'spectrum/fast/wasm-simd-vs-wasm-limit', ...base, ms: ms.fast, baseline: `(n³ + 4n³/3) flops at the WASM f64x2 gemm rate (${g.gflops.toFixed(1)} GFLOP/s)`, baseline_ms: (n ** 3 + 4 * n ** 3 / 3) / g.gflops / 1e6 });
    records.push({ name: 'spectrum/accurate/wasm-simd-vs-wasm-limit', ...base, ms: ms.acc, baseline: `8n³/3 flops at the WASM f64x2 gemm rate (${g.gflops.toFixed(1)} GFLOP/s)`, baseline_ms: (8 * n ** 3 / 3) / g.gflops / 1e6 });
  }
}
const nfac = native.get('spectrum/factor/native@4096');
console.log(`factor route n = 4096, r = ${factor.r}: wasm ${factor.ms.toFixed(2)} ms, native ${nfac?.toFixed(2)} ms (${ratio(factor.ms, nfac).trim()})`);
console.log(`alignment, fast route n = 512: ${skews.map((s) => `${s.skew ? `+${s.skew} B` : 'aligned'} ${s.ms.toFixed(1)} ms`).join(', ')} ` +
  `(worst ${ratio(Math.max(...skews.map((s) => s.ms)), skews[0].ms).trim()} of aligned)`);
records.push({ name: 'spectrum/factor/wasm-simd', n: 4096, d: D, ms: factor.ms, baseline: 'native gcc -O3 -march=native', baseline_ms: nfac });
for (const s of skews.slice(1)) {
  records.push({ name: `spectrum/fast/wasm-simd-buffers-skewed-${s.skew}B`, n: 512, d: D, ms: s.ms, baseline: 'the same, 64-byte aligned', baseline_ms: skews[0].ms });
}
records.push({ name: 'spectrum/machine', n: 0, d: 0, ms: 0, baseline: 'configuration', baseline_ms: 0,
  cpu, cores: cpus().length, node: process.versions.node, numpy: npInfo, wasm_gemm_gflops: Object.fromEntries(SIZES.map((n) => [n, gemm[n]?.gflops ?? null])) });
appendRecords(records);
