// wasm.test.mjs: the real WebAssembly module (SIMD and scalar builds), loaded in node through the
// page's own loader, against the native library (through the CLI) on the same seeds.
import { describe, it, expect, beforeAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz, simdSupported } from '../../web/wasm/attnviz.mjs';
import { readNpy } from './npy.mjs';
import { HAVE_STORIES, STORIES, skipped } from './shared-data.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const SIMD_URL = new URL('build/wasm/attnviz.wasm', ROOT);
const SCALAR_URL = new URL('build/wasm/attnviz-scalar.wasm', ROOT);
const tmp = mkdtempSync(join(tmpdir(), 'attnviz-wasm-'));

function cli(...args) {
  return execFileSync(CLI, args.map(String), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function maxRelDiff(a, b) {
  let num = 0, den = 0;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return den ? num / den : num;
}

// knob sets written both as CLI flags and as loader knobs: these, and (below) every variant of the
// registry with its defaults, and causal where it has a causal form
const HAND_CASES = [
  ['softmax', {}, []],
  ['softmax', { causal: true }, ['--causal']],
  ['elu', {}, []],
  ['relu', { causal: true }, ['--causal']],
  ['exp', {}, []],
  ['efficient', {}, []],
  ['focused', { p: 3 }, ['--p', 3]],
  ['focused', { p: 6, dwc_kernel: 5, seed: 3 }, ['--p', 6, '--dwc-kernel', 5, '--seed', 3]],
  ['linformer', { s: 16, seed: 5 }, ['--s', 16, '--seed', 5]],
  ['linformer', { s: 9, ef_kind: 'mean' }, ['--s', 9, '--ef', 'mean']],
  ['performer', { m: 64, orthogonal: true, seed: 9 }, ['--m', 64, '--orthogonal', '--seed', 9]],
  ['performer', { m: 33, orthogonal: false, seed: 2, causal: true }, ['--m', 33, '--seed', 2, '--causal']],
  ['taylor', { order: 2 }, ['--order', 2]],
  ['explimit', { N: 3 }, ['--N', 3]],
  ['hedgehog', {}, []],
  ['nystrom', { landmarks: 10 }, ['--landmarks', 10]],
  ['cosformer', { causal: true }, ['--causal']],
];
const REGISTRY = (await loadAttnviz({ source: SIMD_URL })).registry;
const flagOf = (key) => REGISTRY.knobs.find((k) => k.key === key).flag;
const CASES = [...HAND_CASES];
for (const v of REGISTRY.variants) {
  for (const [knobs, flags] of [[{}, []], ...(v.causal ? [[{ causal: true }, [flagOf('causal')]]] : [])]) {
    if (!CASES.some(([name, k]) => name === v.name && JSON.stringify(k) === JSON.stringify(knobs))) CASES.push([v.name, knobs, flags]);
  }
}

for (const [build, url] of [['simd', SIMD_URL], ['scalar', SCALAR_URL]]) {
  describe(`wasm (${build} build) matches the native library`, () => {
    let av;
    const n = 37, d = 13;
    beforeAll(async () => {
      av = await loadAttnviz({ source: url, simd: build === 'simd' });
      cli('generate', '--gen', 'gaussian', '--n', n, '--d', d, '--std', 0.7, '--seed', 42, '-o', join(tmp, build));
    });

    it('loads and reports its names: the registry in enum order', () => {
      const names = [];
      for (let v = 0, p; (p = av.exports.av_variant_name(v)); v++) names.push(av.cstring(p));
      expect(av.variantNames).toEqual(names);
      expect(av.registry.variants.map((v) => v.name)).toEqual(names);
      expect(av.registry).toEqual(REGISTRY);
      for (const [i, name] of names.entries()) expect(av.variantId(name)).toBe(i);
      expect(av.generatorNames).toContain('sink');
      if (build === 'simd') expect(av.simd).toBe(simdSupported());
    });

    it('the random stream gives the same bits', () => {
      const ex = av.exports;
      const rng = av.malloc(32);
      ex.av_rng_seed(rng, 42n);
      const wasmDraws = [ex.av_rng_next(rng), ex.av_rng_next(rng)].map((x) => BigInt.asUintN(64, x));
      ex.av_rng_seed(rng, 42n);
      const u = ex.av_rng_uniform(rng);
      av.free(rng);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      expect(wasmDraws[0]).not.toBe(wasmDraws[1]);
      // splitmix64 + xoshiro256** computed independently in JS BigInt arithmetic
      const M = (1n << 64n) - 1n;
      let x = 42n;
      const sm = () => { x = (x + 0x9E3779B97F4A7C15n) & M; let z = x; z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M; z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M; return z ^ (z >> 31n); };
      const s = [sm(), sm(), sm(), sm()];
      const rotl = (v, k) => ((v << BigInt(k)) | (v >> BigInt(64 - k))) & M;
      const next = () => { const r = (rotl((s[1] * 5n) & M, 7) * 9n) & M; const t = (s[1] << 17n) & M; s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45); return r; };
      expect(wasmDraws).toEqual([next(), next()]);
    });

    it('generators give the same bits as the native build', () => {
      for (const gen of av.generatorNames) {
        const dir = join(tmp, `${build}-${gen}`);
        cli('generate', '--gen', gen, '--n', n, '--d', d, '--std', 1.3, '--seed', 7, '-o', dir);
        const lab = av.lab(n, d);
        expect(lab.generate(gen, 1.3, 7).status).toBe(0);
        for (const [name, view] of [['q', lab.Q], ['k', lab.K], ['v', lab.V]]) {
          const native = readNpy(join(dir, `${name}.npy`)).data;
          expect(Buffer.from(view.buffer, view.byteOffset, view.byteLength)
            .equals(Buffer.from(native.buffer))).toBe(true);
        }
        lab.free();
      }
    });

    for (const [variant, knobs, flags] of CASES) {
      it(`${variant} ${JSON.stringify(knobs)}: the matrix matches`, () => {
        const dir = join(tmp, build);
        const out = join(dir, `m-${variant}-${flags.join('_')}.npy`);
        cli('matrix', '--variant', variant, '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), ...flags, '-o', out);
        const native = readNpy(out).data;
        const lab = av.lab(n, d);
        lab.Q.set(readNpy(join(dir, 'q.npy')).data);
        lab.K.set(readNpy(join(dir, 'k.npy')).data);
        const r = lab.matrix({ variant, ...knobs });
        expect(r.status, r.message).toBeGreaterThanOrEqual(0);
        expect(maxRelDiff(lab.M, native)).toBeLessThan(2e-5);
        lab.free();
      });
    }

    // focused on a real head whose φ has entries far below 2^-63: row 0 of L1H3 (causal) is made of products
    // with one tiny factor only; the power-of-two row scalings of the gemm (src/attention.c) differ in no
    // p = 8: float32 φ underflows, so some row's products are all 0 although the true ones are positive;
    // the page's sentence is the library's, which says so (it once said the normaliser was ≤ 0)
    it('focused p = 8 on text128 L1H3: the underflow status and its sentence, as the CLI prints it', () => {
      if (!HAVE_STORIES) { skipped('wasm.test.mjs: focused p = 8 on text128 L1H3'); return; }
      const qf = join(STORIES, 'text128_q.npy'), kf = join(STORIES, 'text128_k.npy');
      const q = readNpy(qf), k = readNpy(kf);
      const [, H, len, hd] = q.shape, kvh = k.shape[1];
      const lab = av.lab(len, hd);
      lab.Q.set(q.data.subarray((1 * H + 3) * len * hd, (1 * H + 4) * len * hd));
      const kv = 1 * kvh + Math.floor(3 * kvh / H);
      lab.K.set(k.data.subarray(kv * len * hd, (kv + 1) * len * hd));
      const r = lab.matrix({ variant: 'focused', causal: true, p: 8 });
      expect(r.status).toBe(av.STATUS.WARN_UNDERFLOW_ROW);
      expect(r.message).toBe(av.statusString(r.status));
      expect(r.message).toMatch(/underflowed float32/);
      const native = JSON.parse(cli('readouts', '--variant', 'focused', '--p', 8, '--causal', '--layer', 1, '--head', 3, '--q', qf, '--k', kf));
      expect(native.status).toContain(`matrix: ${r.message}`);
    });

    // way that shows: every entry against the native matrix relative to itself, every row sum positive
    it('focused on text128 L1H3 (tiny φ): every entry matches the native matrix', () => {
      if (!HAVE_STORIES) { skipped('wasm.test.mjs: focused on text128 L1H3'); return; }
      const qf = join(STORIES, 'text128_q.npy'), kf = join(STORIES, 'text128_k.npy');
      const out = join(tmp, `${build}-focused-L1H3.npy`);
      cli('matrix', '--variant', 'focused', '--causal', '--layer', 1, '--head', 3, '--q', qf, '--k', kf, '-o', out);
      const native = readNpy(out).data, q = readNpy(qf), k = readNpy(kf);
      const [, H, len, hd] = q.shape, kvh = k.shape[1];
      const lab = av.lab(len, hd);
      lab.Q.set(q.data.subarray((1 * H + 3) * len * hd, (1 * H + 4) * len * hd));
      const kv = 1 * kvh + Math.floor(3 * kvh / H);
      lab.K.set(k.data.subarray(kv * len * hd, (kv + 1) * len * hd));
      const r = lab.matrix({ variant: 'focused', causal: true });
      expect(r.status, r.message).toBe(0);
      let worst = 0;
      for (let i = 0; i < len; i++) {
        let sum = 0;
        for (let j = 0; j <= i; j++) {
          const a = lab.M[i * len + j], b = native[i * len + j];
          sum += a;
          worst = Math.max(worst, Math.abs(a - b) / Math.max(Math.abs(b), 1e-30));
        }
        expect(sum, `row ${i}`).toBeGreaterThan(0);
      }
      expect(worst).toBeLessThan(2e-5);
      lab.free();
    });

    // the recurrent families' sequential forms (docs/recurrent.md): O by --path recurrent and chunkwise, natively
    // and in wasm, on the same inputs; and against the quadratic path
    for (const [variant, knobs, flags] of [
      ['retention', { decay: 0.9, chunk: 7 }, ['--decay', 0.9, '--chunk', 7]],
      ['deltanet', { beta: 1, decay: 0.8, chunk: 5 }, ['--beta', 1, '--decay', 0.8, '--chunk', 5]],
      ['softmax', { causal: true, window: 6, decay: 0.9, chunk: 4 }, ['--causal', '--window', 6, '--decay', 0.9, '--chunk', 4]],
      ['elu', { causal: true, decay: 0.85, chunk: 9 }, ['--causal', '--decay', 0.85, '--chunk', 9]],
    ]) {
      it(`${variant} ${JSON.stringify(knobs)}: the recurrent and chunkwise outputs match`, () => {
        const dir = join(tmp, build);
        const lab = av.lab(n, d);
        lab.Q.set(readNpy(join(dir, 'q.npy')).data);
        lab.K.set(readNpy(join(dir, 'k.npy')).data);
        lab.V.set(readNpy(join(dir, 'v.npy')).data);
        expect(lab.attend({ variant, ...knobs }).status).toBeGreaterThanOrEqual(0);
        const quad = lab.O.slice();
        for (const path of ['recurrent', 'chunkwise']) {
          const o = join(dir, `o-${variant}-${path}.npy`);
          cli('matrix', '--variant', variant, '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'),
            ...flags, '-o', join(dir, 'm-seq.npy'), '--out-o', o, '--path', path);
          const r = lab[path]({ variant, ...knobs });
          expect(r.status, r.message).toBeGreaterThanOrEqual(0);
          expect(maxRelDiff(lab.O, readNpy(o).data), path).toBeLessThan(2e-6);
          expect(maxRelDiff(lab.O, quad), path).toBeLessThan(1e-5);
        }
        expect(lab.chunkwise({ variant, ...knobs, causal: false }).status).toBe(av.STATUS.ERR_NEEDS_CAUSAL);
        lab.free();
      });
    }

    it('readouts match the native CLI', () => {
      const dir = join(tmp, build);
      const json = JSON.parse(cli('readouts', '--variant', 'elu', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'),
        '--v', join(dir, 'v.npy')));
      const lab = av.lab(n, d);
      lab.Q.set(readNpy(join(dir, 'q.npy')).data);
      lab.K.set(readNpy(join(dir, 'k.npy')).data);
      lab.V.set(readNpy(join(dir, 'v.npy')).data);
      expect(lab.matrix({ variant: 'elu' }).status).toBe(0);
      const ro = lab.readouts({ variant: 'elu' });
      for (const key of ['rank', 'rank_rel_1e-3', 'rank_energy_99', 'sparsity_lt_0.01', 'keys_for_90']) {
        expect(ro[key], key).toBe(json[key]);
      }
      for (const key of ['effective_rank', 'stable_rank', 'row_entropy_mean', 'error_fro_rel', 'row_kl_mean',
        'output_error_rel']) {
        expect(ro[key], key).toBeCloseTo(json[key], 4);
      }
      expect(ro.rank).toBeLessThanOrEqual(d); // non-causal kernel attention: rank ≤ feature dim
      for (let i = 0; i < 10; i++) expect(ro.singular_values[i]).toBeCloseTo(json.singular_values[i], 5);
      lab.free();
    });

    it('bad input gets a status, never a trap', () => {
      const lab = av.lab(8, 4);
      lab.generate('gaussian', 1, 1);
      expect(lab.matrix({ variant: 'linformer', causal: true }).status).toBe(-5);
      expect(lab.matrix({ variant: 'focused', p: 0.5 }).status).toBe(-3);
      expect(lab.matrix({ variant: 'taylor', order: 9 }).status).toBe(-3);
      lab.Q[3] = NaN;
      const r = lab.matrix({ variant: 'softmax' });
      expect(r.status).toBe(-6);
      expect(r.message).toMatch(/NaN/);
      expect(() => lab.matrix({ variant: 'nope' })).toThrow(/unknown variant/);
      lab.free();
    });

    it('views stay valid across memory growth (n = 1024)', () => {
      const lab = av.lab(1024, 64);
      expect(lab.generate('gaussian', 1, 3).status).toBe(0);
      expect(lab.matrix({ variant: 'softmax' }).status).toBe(0);
      const M = lab.M;
      let rowsum = 0;
      for (let j = 0; j < 1024; j++) rowsum += M[517 * 1024 + j];
      expect(rowsum).toBeCloseTo(1, 5);
      lab.free();
    });
  });
}

describe('readouts without a spectrum', () => {
  it('sv: null gives the non-spectral readouts and null spectral ones with a reason', async () => {
    const av = await loadAttnviz({ source: SIMD_URL });
    const lab = av.lab(40, 8);
    lab.generate('clustered', 1, 5);
    expect(lab.matrix({ variant: 'relu' }).status).toBeGreaterThanOrEqual(0);
    const full = lab.readouts({ variant: 'relu' });
    const part = lab.readouts({ variant: 'relu' }, { sv: null });
    expect(part.rank).toBeNull();
    expect(part.rank_reason).toMatch(/\w/);
    expect(part.singular_values).toBeNull();
    for (const key of ['sparsity_lt_0.01', 'keys_for_90', 'row_entropy_mean', 'error_fro_rel']) {
      expect(part[key], key).toBe(full[key]);
    }
    lab.free();
  });
});

describe('failures leave nothing stale behind', () => {
  it('a failed spectrum returns no σ, not the previous matrix\'s', async () => {
    const av = await loadAttnviz({ source: SIMD_URL });
    const lab = av.lab(32, 4);
    lab.generate('gaussian', 1, 2);
    expect(lab.matrix({ variant: 'softmax' }).status).toBe(0);
    expect(lab.spectrum('M', 'fast').sv[0]).toBeGreaterThan(0);
    lab.M[5] = Infinity; // as after an overflow (av_matrix returns AV_WARN_OVERFLOW and M holds Inf)
    const s = lab.spectrum('M', 'fast');
    expect(s.status).toBe(-6);
    expect(s.sv).toBeNull();
    const r = lab.readouts({ variant: 'softmax' });
    expect(r.rank).toBeNull();
    expect(r.singular_values).toBeNull();
    lab.free();
  });

  it('.npy shapes beyond 32 bits are refused in wasm32, not trapped on', async () => {
    const av = await loadAttnviz({ source: SIMD_URL });
    const enc = new TextEncoder();
    for (const shape of ['(4294967296,)', '(3, 4294967296)', '(4294967297, 1)']) {
      let dict = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
      dict = dict.padEnd(64 - 11, ' ') + '\n';
      const bytes = new Uint8Array(10 + dict.length + 16);
      bytes.set([0x93, ...enc.encode('NUMPY'), 1, 0, dict.length, 0]);
      bytes.set(enc.encode(dict), 10);
      const buf = av.malloc(bytes.length), info = av.malloc(256);
      new Uint8Array(av.memory.buffer, buf, bytes.length).set(bytes);
      expect(av.exports.av_npy_parse(info, buf, bytes.length), shape).toBe(-10);
      expect(av.cstring(av.exports.av_npy_error())).toMatch(/absurdly large|truncated/);
      av.free(buf); av.free(info);
    }
  });
});
