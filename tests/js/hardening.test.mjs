// hardening.test.mjs: the loader under hostile sizes and knobs. Sizes are checked
// before anything is allocated, a need beyond what wasm32 memory holds is AV_ERR_TOO_LARGE with its
// sentence (never a RangeError, "out of range" or a wrapped allocation), and short or fractional
// inputs are refused with a status.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadAttnviz, STATUS } from '../../web/wasm/attnviz.mjs';

const ROOT = new URL('../../', import.meta.url);
const SIMD_URL = new URL('build/wasm/attnviz.wasm', ROOT);
const HEADER = readFileSync(new URL('include/attnviz.h', ROOT), 'utf8');

// the status codes as the header spells them: enum av_status { AV_OK = 0, AV_ERR_NULL = -1, ... }
const H = Object.fromEntries([...HEADER.match(/enum av_status \{([^}]*)\}/)[1]
  .matchAll(/\bAV_(\w+)\s*=\s*(-?\d+)/g)].map(([, k, v]) => [k, Number(v)]));
const macro = (name) => Number(HEADER.match(new RegExp(`#define ${name} (\\d+)`))[1]);

const fresh = () => loadAttnviz({ source: SIMD_URL, simd: true });
const MiB = 2 ** 20;

describe('status codes are named constants that match the header', () => {
  it('STATUS holds every code of enum av_status with its number, from the registry', async () => {
    expect(Object.keys(H)).toContain('ERR_TOO_LARGE');
    const av = await fresh(); // STATUS is filled from the first module's registry
    expect(STATUS).toEqual(H);
    expect(Object.isFrozen(STATUS)).toBe(true);
    expect(av.STATUS).toEqual(STATUS);
    expect(Object.fromEntries(Object.entries(av.registry.status).map(([k, v]) => [k.replace(/^AV_/, ''), v]))).toEqual(H);
    expect(av.registry.limits).toEqual({ max_n: av.limits.maxN, max_d: av.limits.maxD, max_feature_dim: av.limits.maxFeatureDim });
    expect(av.statusString(STATUS.ERR_TOO_LARGE)).toMatch(/too large for this build/);
    expect(av.limits).toMatchObject({ maxN: macro('AV_MAX_N'), maxD: macro('AV_MAX_D'),
      maxFeatureDim: macro('AV_MAX_FEATURE_DIM'), statusMin: Math.min(...Object.values(H)), statusMax: Math.max(...Object.values(H)),
      sizeMax: 2 ** 32 - 1 });
    expect(av.limits.maxBytes).toBeLessThanOrEqual(2 ** 32);
  });
});

describe('sizes are checked before anything is allocated', () => {
  it('n beyond AV_MAX_N: every call is AV_ERR_SIZE with its sentence and memory does not grow', async () => {
    const av = await fresh();
    const before = av.memory.buffer.byteLength;
    const lab = av.lab(16385, 4);
    const size = { status: H.ERR_SIZE, message: av.statusString(H.ERR_SIZE) };
    expect(lab.status).toBe(H.ERR_SIZE);
    expect(lab.matrix({ variant: 'softmax' })).toEqual(size);
    expect(lab.reference({})).toEqual(size);
    expect(lab.attend({ variant: 'elu' })).toEqual(size);
    expect(lab.linear({ variant: 'elu' })).toEqual(size);
    expect(lab.scores(0, false)).toEqual(size);
    expect(lab.generate('gaussian', 1, 1)).toEqual(size);
    expect(lab.readouts({ variant: 'softmax' })).toMatchObject({ ...size, rank: null });
    expect(lab.Q.length).toBe(0); // no view onto memory the lab does not own
    expect(av.memory.buffer.byteLength).toBe(before);
    lab.free();
  });

  it('non-integer, non-finite, zero and too large n, d, dv are AV_ERR_SIZE, never truncated', async () => {
    const av = await fresh();
    const before = av.memory.buffer.byteLength;
    for (const [n, d, dv] of [[2.5, 4, 4], [16, 4.5, 4], [16, 4, 3.5], [NaN, 4, 4], [Infinity, 4, 4], [0, 4, 4],
      [16, 0, 4], [16, 4, -1], [16, 4097, 4], [16, 4, 4097], [1e12, 4096, 4096]]) {
      const lab = av.lab(n, d, dv);
      const r = lab.matrix({ variant: 'softmax' });
      expect(r.status, `${n} ${d} ${dv}`).toBe(H.ERR_SIZE);
      expect(r.message).toBe(av.statusString(H.ERR_SIZE));
      lab.free();
    }
    expect(av.memory.buffer.byteLength).toBe(before);
  });
});

describe('a need beyond wasm32 memory is AV_ERR_TOO_LARGE, said before allocating', () => {
  it('a workspace beyond 32-bit size_t (Performer, m = 65536, n = 16384)', async () => {
    const av = await fresh();
    const lab = av.lab(16384, 4);
    expect(lab.generate('gaussian', 1, 1).status).toBe(0);
    const before = av.memory.buffer.byteLength;
    const big = { variant: 'performer', m: 65536 };
    for (const r of [lab.matrix(big), lab.attend(big), lab.linear(big)]) {
      expect(r.status).toBe(H.ERR_TOO_LARGE);
      expect(r.message).toMatch(/too large for this build/);
    }
    expect(lab.has('M')).toBe(false);
    const f = lab.factorSpectrum(big); // L and R would be n×r floats: 4 GiB each
    expect(f.status).toBe(H.ERR_TOO_LARGE);
    expect(f.sv).toBeNull();
    expect(av.memory.buffer.byteLength - before).toBeLessThan(16 * MiB);
    lab.free();
  });

  it('buffers that fit size_t but not this build\'s memory (n = 16384: Performer\'s Φ_Q and Φ_K, 2 GiB each)', async () => {
    // the module's memory reaches 4 GB (emscripten.mk): M and its workspace at n = 16384 (2 GiB) now fit, so
    // the case is two buffers that each fit size_t and together pass 4 GiB
    const av = await fresh();
    const lab = av.lab(16384, 4);
    expect(lab.generate('gaussian', 1, 1).status).toBe(0);
    const before = av.memory.buffer.byteLength;
    const r = lab.features({ variant: 'performer', m: 32768 });
    expect(r.r).toBe(32768);
    expect(r.status).toBe(H.ERR_TOO_LARGE);
    expect(r.message).toBe(av.statusString(H.ERR_TOO_LARGE));
    expect(r.PhiQ).toBeNull();
    expect(av.memory.buffer.byteLength - before).toBeLessThan(16 * MiB);
    lab.free();
  });

  it('a byte count beyond wasm32 is never passed on wrapped to malloc', async () => {
    const av = await fresh();
    for (const bytes of [2 ** 32, 2 ** 32 + 8, 2 ** 40, -8, 1.5, NaN]) {
      let err;
      try { av.free(av.malloc(bytes)); } catch (e) { err = e; }
      expect(err, String(bytes)).toBeInstanceOf(RangeError);
      if (bytes > 0 && Number.isInteger(bytes)) {
        expect(err.status).toBe(H.ERR_TOO_LARGE);
        expect(err.message).toMatch(/too large for this build/);
      }
    }
    const lab = av.lab(16, 4);
    lab.generate('gaussian', 1, 1);
    expect(lab.matrix({ variant: 'softmax' }).status).toBe(0);
    const h = lab.entropyHistogram('M', 2 ** 30); // 4 GiB of counts
    expect(h.status).toBe(H.ERR_TOO_LARGE);
    expect(h.counts).toBeNull();
    for (const bins of [0, -3, 2.5]) expect(lab.entropyHistogram('M', bins).status, String(bins)).toBe(H.ERR_SIZE);
    expect(lab.entropyHistogram('M', 8).status).toBe(0); // the module is intact
    lab.free();
  });
});

describe('knobs that do not fit the problem are refused, nothing written', () => {
  it('hedgehog_w shorter than d×cols (or not a multiple of d) is AV_ERR_SIZE with a clear message', async () => {
    const av = await fresh();
    const lab = av.lab(8, 4);
    lab.generate('gaussian', 1, 3);
    expect(lab.matrix({ variant: 'hedgehog' }).status).toBe(0);
    const M = lab.M.slice();
    for (const [w, cols] of [[new Float32Array(7), 2], [new Float32Array(10), undefined], [[1, 0, 0], 1]]) {
      const r = lab.matrix({ variant: 'hedgehog', hedgehog_w: w, hedgehog_cols: cols });
      expect(r.status, `${w.length} ${cols}`).toBe(H.ERR_SIZE);
      expect(r.message).toMatch(/hedgehog_w holds \d+ values/);
      expect(lab.has('W')).toBe(false);
      expect(lab.M).toEqual(M);
    }
    for (const cols of [0, 1.5, 40000]) {
      const r = lab.matrix({ variant: 'hedgehog', hedgehog_w: new Float32Array(4 * 40000), hedgehog_cols: cols });
      expect(r.status, String(cols)).toBe(H.ERR_KNOB);
      expect(lab.has('W')).toBe(false);
    }
    const eye = Float32Array.of(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1);
    expect(lab.matrix({ variant: 'hedgehog', hedgehog_w: eye }).status).toBe(0);
    expect(lab.M).toEqual(M); // W = I is the default
    lab.free();
  });

  it('names that are not keys of the loader\'s tables are refused, not read off Object.prototype', async () => {
    const av = await fresh();
    const lab = av.lab(16, 4);
    lab.generate('gaussian', 1, 1);
    expect(lab.matrix({ variant: 'linformer', ef_kind: 'toString' }).status).toBe(H.ERR_KNOB);
    expect(lab.matrix({ variant: 'softmax' }).status).toBe(0);
    expect(lab.spectrum('M', 'constructor').status).toBe(H.ERR_VARIANT);
    expect(lab.spectrum('M', 'accurate').status).toBe(0);
    lab.free();
  });
});
