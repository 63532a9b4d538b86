// wasm-row-kl.test.mjs: the page's row_kl_mean where a decayed softmax's far weights underflow float32.
// av_readouts sees M alone and cannot tell such a 0 (the KL is finite) from a true one (+∞); the lab's
// readouts() then asks av_row_kl, so the snapshot, the readouts table, the overview and the exports carry
// the true KL. Real wasm (SIMD and scalar builds) against a JS float64 computation of the definition
// (docs/readouts.md) and against the CLI on the same inputs.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { readNpy } from './npy.mjs';
import { HAVE_STORIES, STORIES, skipped } from './shared-data.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const ZERO_WHERE_POSITIVE = 'the matrix is zero where the softmax reference is positive';
const cli = (...args) => execFileSync(CLI, args.map(String), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** ln of row i's causal softmax of scale·q_i·k_j + (i − j)·ln γ over j ≤ i, in float64 (M is never formed). */
function logRow(Q, K, d, scale, i, gamma) {
  const l = new Float64Array(i + 1);
  for (let j = 0; j <= i; j++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += Q[i * d + c] * K[j * d + c];
    l[j] = scale * s + (i - j) * Math.log(gamma);
  }
  let top = -Infinity, z = 0;
  for (const x of l) top = Math.max(top, x);
  for (const x of l) z += Math.exp(x - top);
  return l.map((x) => x - top - Math.log(z));
}
/** KL(A ‖ M), the mean over rows of Σ_j A_ij (ln A_ij − ln M_ij): A the causal softmax, M the decayed one. */
function trueKl(Q, K, n, d, scale, gamma) {
  let kl = 0, zeros = 0;
  for (let i = 0; i < n; i++) {
    const la = logRow(Q, K, d, scale, i, 1), lm = logRow(Q, K, d, scale, i, gamma);
    for (let j = 0; j <= i; j++) {
      kl += Math.exp(la[j]) * (la[j] - lm[j]);
      zeros += Math.fround(Math.exp(lm[j])) === 0;
    }
  }
  return { kl: kl / n, zeros };
}

const tmp = mkdtempSync(join(tmpdir(), 'attnviz-wasm-kl-'));
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

for (const build of ['simd', 'scalar']) {
  describe(`the page's row KL where M underflowed (${build} build)`, () => {
    const n = 200, d = 8, scale = 0.3, gamma = 0.5;
    let av, Q, K, want, native;
    const knobs = { variant: 'softmax', causal: true, scale, decay: gamma };
    beforeAll(async () => {
      av = await loadAttnviz({ source: new URL(`build/wasm/attnviz${build === 'simd' ? '' : '-scalar'}.wasm`, ROOT), simd: build === 'simd' });
      const dir = join(tmp, build);
      cli('generate', '--gen', 'gaussian', '--n', n, '--d', d, '--seed', 3, '-o', dir);
      [Q, K] = ['q', 'k'].map((t) => readNpy(join(dir, `${t}.npy`)).data);
      want = trueKl(Q, K, n, d, scale, gamma);
      native = JSON.parse(cli('readouts', '--variant', 'softmax', '--causal', '--scale', scale, '--decay', gamma,
        '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'))).row_kl_mean;
    });
    const lab = () => {
      const l = av.lab(n, d);
      l.Q.set(Q);
      l.K.set(K);
      return l;
    };

    it('readouts(): the float64 KL and the CLI\'s, not null', () => {
      expect(want.zeros).toBeGreaterThan(0); // the case does underflow
      const l = lab();
      expect(l.matrix(knobs).status).toBe(0);
      const r = l.readouts(knobs, { sv: null });
      expect(r.row_kl_mean_reason).toBeUndefined();
      // M's zeros and subnormals (few true bits) come from the log domain
      expect(Math.abs(r.row_kl_mean - want.kl)).toBeLessThanOrEqual(1e-6 * want.kl);
      expect(Math.abs(r.row_kl_mean - native)).toBeLessThanOrEqual(1e-6 * native);
      l.free();
    });

    it('the same with the reference computed first and its summary kept (the page\'s own call)', () => {
      const l = lab();
      expect(l.reference(knobs).status).toBe(0);
      expect(l.matrix(knobs).status).toBe(0);
      const first = l.readouts(knobs, { sv: null });
      const kept = l.readouts(knobs, { sv: null, reference: false, summary: 'k', rows: true });
      expect(kept.row_kl_mean).toBe(first.row_kl_mean);
      expect(Math.abs(kept.row_kl_mean - native)).toBeLessThanOrEqual(1e-6 * native);
      l.free();
    });

    it('a window keeps the null: its zeros are true ones (the KL is +∞)', () => {
      const l = lab(), w = { variant: 'softmax', causal: true, scale, window: 16 };
      expect(l.matrix(w).status).toBe(0);
      const r = l.readouts(w, { sv: null });
      expect(r.row_kl_mean).toBeNull();
      expect(r.row_kl_mean_reason).toBe(ZERO_WHERE_POSITIVE);
      l.free();
    });

    it('the engine: the readouts table and the overview\'s KL are that number', () => {
      const schema = buildSchema(av.registry);
      const req = schema.requestOf(schema.fromHash('variant=softmax&n=200&d=8&causal=1&decay=0.5&seed=3').state);
      const engine = new Engine(av);
      const table = engine.frame(req, { readouts: true }).readouts;
      const head = engine.headSummary(req);
      const { kl, zeros } = trueKl(engine.lab.Q, engine.lab.K, n, d, req.knobs.scale, gamma);
      engine.free();
      expect(zeros).toBeGreaterThan(0);
      expect(table.row_kl_mean_reason).toBeUndefined();
      expect(Math.abs(table.row_kl_mean - kl)).toBeLessThanOrEqual(1e-6 * kl);
      expect(head.values.row_kl_mean).toBe(table.row_kl_mean);
      expect(head.reasons.row_kl_mean).toBeUndefined();
    });

    it('stories260K text128 L1H3, causal, decay 0.9: the float64 KL (null before)', () => {
      if (!HAVE_STORIES) { skipped('wasm-row-kl.test.mjs: decayed softmax on text128 L1H3'); return; }
      const q = readNpy(join(STORIES, 'text128_q.npy')), k = readNpy(join(STORIES, 'text128_k.npy'));
      const [, H, len, hd] = q.shape, kvh = k.shape[1], kv = 1 * kvh + Math.floor(3 * kvh / H);
      const l = av.lab(len, hd);
      l.Q.set(q.data.subarray((1 * H + 3) * len * hd, (1 * H + 4) * len * hd));
      l.K.set(k.data.subarray(kv * len * hd, (kv + 1) * len * hd));
      const kn = { variant: 'softmax', causal: true, decay: 0.9 };
      expect(l.matrix(kn).status).toBe(0);
      const r = l.readouts(kn, { sv: null });
      const ref = trueKl(l.Q, l.K, len, hd, 1 / Math.sqrt(hd), 0.9);
      l.free();
      expect(ref.zeros).toBeGreaterThan(0);
      expect(Math.abs(r.row_kl_mean - ref.kl)).toBeLessThanOrEqual(1e-5 * ref.kl);
    });
  });
}
