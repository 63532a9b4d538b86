// cli-reference.test.mjs: the reference A is plain softmax (the variant's scale and mask, no decay, no
// window), so a decayed or windowed softmax is compared with it like any variant (issue 28, second item).
// The expected numbers are computed here in float64 from the definitions (docs/readouts.md,
// docs/recurrent.md) on the float32 inputs, not from the kernels.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = process.env.ATTNVIZ_CLI || new URL('build/native/attnviz', ROOT).pathname;
const N = 40, D = 8, SCALE = 0.3;

let tmp, files, Q, K, V;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'attnviz-reference-'));
  const g = spawnSync(CLI, ['generate', '--gen', 'gaussian', '--n', String(N), '--d', String(D), '-o', join(tmp, 'g')], { encoding: 'utf8' });
  if (g.status !== 0) throw new Error(g.stderr);
  files = ['--q', join(tmp, 'g', 'q.npy'), '--k', join(tmp, 'g', 'k.npy'), '--v', join(tmp, 'g', 'v.npy')];
  [Q, K, V] = ['q', 'k', 'v'].map((t) => readNpy(join(tmp, 'g', `${t}.npy`)).data);
});
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

function cli(...args) {
  const p = spawnSync(CLI, [...args, ...files, '--scale', String(SCALE)], { encoding: 'utf8' });
  if (p.status !== 0) throw new Error(p.stderr);
  return JSON.parse(p.stdout);
}

/** The causal softmax over the keys row i sees (window W: i − j < W; 0: all j ≤ i), with the logits
 *  scale·q_i·k_j + (i − j)·ln γ (the forgetting softmax), as n×n float64 rows. */
function softmaxRows({ gamma = 1, W = 0 } = {}) {
  const M = [];
  for (let i = 0; i < N; i++) {
    const row = new Float64Array(N), lo = W > 0 ? Math.max(0, i - W + 1) : 0;
    let mx = -Infinity;
    for (let j = lo; j <= i; j++) {
      let s = 0;
      for (let c = 0; c < D; c++) s += Q[i * D + c] * K[j * D + c];
      row[j] = SCALE * s + (i - j) * Math.log(gamma);
      mx = Math.max(mx, row[j]);
    }
    let z = 0;
    for (let j = lo; j <= i; j++) z += (row[j] = Math.exp(row[j] - mx));
    for (let j = lo; j <= i; j++) row[j] /= z;
    M.push(row);
  }
  return M;
}

/** error_fro_rel, row_kl_mean (Infinity where M is 0 where A > 0) and output_error_rel of M against A. */
function against(M, A) {
  let e = 0, a = 0, kl = 0, oe = 0, oa = 0;
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      e += (M[i][j] - A[i][j]) ** 2;
      a += A[i][j] ** 2;
      if (A[i][j] > 0) kl += A[i][j] * Math.log(A[i][j] / M[i][j]);
    }
    for (let c = 0; c < D; c++) {
      let dm = 0, da = 0;
      for (let j = 0; j < N; j++) { dm += (M[i][j] - A[i][j]) * V[j * D + c]; da += A[i][j] * V[j * D + c]; }
      oe += dm * dm;
      oa += da * da;
    }
  }
  return { error_fro_rel: Math.sqrt(e / a), row_kl_mean: kl / N, output_error_rel: Math.sqrt(oe / oa) };
}

const close = (got, want) => expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-5 * Math.abs(want));

describe('a decayed or windowed softmax is compared with plain softmax', () => {
  it('readouts --decay 0.9 --causal: error, KL and output error against plain softmax', () => {
    const r = cli('readouts', '--variant', 'softmax', '--decay', '0.9', '--causal');
    const want = against(softmaxRows({ gamma: 0.9 }), softmaxRows());
    for (const key of ['error_fro_rel', 'row_kl_mean', 'output_error_rel']) close(r[key], want[key]);
    expect(r.status.filter((s) => s.startsWith('softmax reference'))).toEqual([]);
  });

  it('readouts --window 16 --causal: error and output error finite; KL infinite, so null with its reason', () => {
    const r = cli('readouts', '--variant', 'softmax', '--window', '16', '--causal');
    const want = against(softmaxRows({ W: 16 }), softmaxRows());
    close(r.error_fro_rel, want.error_fro_rel);
    close(r.output_error_rel, want.output_error_rel);
    // the window zeroes keys A weighs, so Σ A ln(A/M) is +∞ (the definition, not a missing reference)
    expect(want.row_kl_mean).toBe(Infinity);
    expect(r.row_kl_mean).toBeNull();
    expect(r.row_kl_mean_reason).toBe('the matrix is zero where the softmax reference is positive');
  });

  it('sweep --knob decay and --knob window give numbers; γ = 1 is plain softmax again', () => {
    const d = cli('sweep', '--variant', 'softmax', '--causal', '--knob', 'decay', '--values', '0.5,0.9,1', '--readout', 'row_kl_mean');
    close(d.mean[0], against(softmaxRows({ gamma: 0.5 }), softmaxRows()).row_kl_mean);
    close(d.mean[1], against(softmaxRows({ gamma: 0.9 }), softmaxRows()).row_kl_mean);
    expect(d.mean[2]).toBeNull();
    const w = cli('sweep', '--variant', 'softmax', '--causal', '--knob', 'window', '--values', '4,16', '--readout', 'error_fro_rel');
    close(w.mean[0], against(softmaxRows({ W: 4 }), softmaxRows()).error_fro_rel);
    close(w.mean[1], against(softmaxRows({ W: 16 }), softmaxRows()).error_fro_rel);
  });

  it('plain softmax (γ = 1 given or not, no window) is the reference itself: null with its reason', () => {
    for (const extra of [[], ['--decay', '1']]) {
      const r = cli('readouts', '--variant', 'softmax', '--causal', ...extra);
      for (const key of ['error_fro_rel', 'row_kl_mean', 'output_error_rel']) {
        expect(r[key]).toBeNull();
        expect(r[`${key}_reason`]).toMatch(/^no softmax reference \(the variant is plain softmax itself/);
      }
    }
  });
});

// Far enough back (i − j ≥ 150 at γ = 0.5) a decayed softmax's weight falls below float32's range and M
// holds 0 where A > 0. The KL is finite there (M is not 0, only too small to store): readouts, table and
// sweep take those cells' logarithms from the log domain (av_row_kl) instead of printing null.
describe('a decayed softmax whose far weights underflow float32 has its true, finite KL', () => {
  const n = 200, d = 8, gamma = 0.5, scale = 0.3;
  let dir, args, q, k;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'attnviz-underflow-'));
    const g = spawnSync(CLI, ['generate', '--gen', 'gaussian', '--n', String(n), '--d', String(d), '--seed', '3', '-o', dir], { encoding: 'utf8' });
    if (g.status !== 0) throw new Error(g.stderr);
    args = ['--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--scale', String(scale), '--causal', '--decay', String(gamma)];
    [q, k] = ['q', 'k'].map((t) => readNpy(join(dir, `${t}.npy`)).data);
  });
  afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

  /** ln of row i's causal softmax of scale·q_i·k_j + (i − j)·ln g, j ≤ i, in float64 (never exp'd to M). */
  function logRow(i, g) {
    const l = new Float64Array(i + 1);
    for (let j = 0; j <= i; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += q[i * d + c] * k[j * d + c];
      l[j] = scale * s + (i - j) * Math.log(g);
    }
    const top = Math.max(...l);
    let z = 0;
    for (const x of l) z += Math.exp(x - top);
    return l.map((x) => x - top - Math.log(z));
  }
  /** KL(A ‖ M) of the definition: the mean over rows of Σ_j A_ij (ln A_ij − ln M_ij). */
  function trueKl() {
    let kl = 0;
    for (let i = 0; i < n; i++) {
      const la = logRow(i, 1), lm = logRow(i, gamma);
      for (let j = 0; j <= i; j++) kl += Math.exp(la[j]) * (la[j] - lm[j]);
    }
    return kl / n;
  }
  const run = (...a) => {
    const p = spawnSync(CLI, [...a, ...args], { encoding: 'utf8' });
    if (p.status !== 0) throw new Error(p.stderr);
    return p.stdout;
  };

  it('the case does underflow: M holds 0 where A > 0', () => {
    let zeros = 0;
    for (let i = 0; i < n; i++) zeros += logRow(i, gamma).filter((x) => Math.fround(Math.exp(x)) === 0).length;
    expect(zeros).toBeGreaterThan(0);
  });

  it('readouts, table and sweep print the float64 KL, the same number each', () => {
    const want = trueKl();
    const r = JSON.parse(run('readouts', '--variant', 'softmax'));
    expect(r.row_kl_mean_reason).toBeUndefined();
    // the zeros and the subnormals (few true bits) of M both come from the log domain
    expect(Math.abs(r.row_kl_mean - want)).toBeLessThanOrEqual(1e-6 * want);
    const rows = run('table', '--variants', 'softmax', '--readouts', 'row_kl_mean').trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1].split(',')[5]).not.toBe('');
    expect(Number(rows[1].split(',')[5])).toBe(r.row_kl_mean);
    const s = JSON.parse(run('sweep', '--variant', 'softmax', '--knob', 'decay', '--values', String(gamma), '--readout', 'row_kl_mean'));
    expect(s.mean[0]).toBe(r.row_kl_mean);
  });
});
