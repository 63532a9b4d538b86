// web/io/own-inputs.mjs: the reader's own Q, K, V (three .npy files or one JSON), with the real wasm
// module's .npy reader: 2-D and 4-D inputs, float64, and one clear sentence for each problem.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { ownTensors, roleOf } from '../../web/io/own-inputs.mjs';
import { npyBytes } from '../../web/io/export.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const arr = (len, f = (i) => Math.sin(i)) => Float32Array.from({ length: len }, (_, i) => f(i));
const npy = (name, data, shape) => ({ name, bytes: npyBytes(data, shape) });
const trio = (n, d, prefix = '') => [npy(`${prefix}q.npy`, arr(n * d), [n, d]), npy(`${prefix}k.npy`, arr(n * d, Math.cos), [n, d]),
  npy(`${prefix}v.npy`, arr(n * d, (i) => i % 3), [n, d])];

describe('own Q, K, V', () => {
  it('reads three 2-D .npy files in any order, told apart by name', () => {
    const files = trio(5, 3, 'head0_');
    const got = ownTensors([files[2], files[0], files[1]], av);
    expect(got.error).toBeUndefined();
    expect(got.tensors).toMatchObject({ layers: 1, heads: 1, kvHeads: 1, n: 5, d: 3 });
    expect([...got.tensors.K]).toEqual([...arr(15, Math.cos)]);
    expect(roleOf('text128_q.npy')).toBe('Q');
    expect(roleOf('K.NPY')).toBe('K');
    expect(roleOf('seq.npy')).toBe(null);
  });

  it('reads a 4-D capture (layers, heads, n, d) with fewer KV heads, and float64', () => {
    const q = new Float64Array(2 * 4 * 6 * 2).map((_, i) => i / 10), k = arr(2 * 2 * 6 * 2), v = arr(2 * 2 * 6 * 2);
    const got = ownTensors([npy('q.npy', q, [2, 4, 6, 2]), npy('k.npy', k, [2, 2, 6, 2]), npy('v.npy', v, [2, 2, 6, 2])], av);
    expect(got.tensors).toMatchObject({ layers: 2, heads: 4, kvHeads: 2, n: 6, d: 2 });
    expect(got.tensors.Q[7]).toBeCloseTo(0.7, 6);
  });

  it('reads JSON {"q", "k", "v"}', () => {
    const rows = [[1, 2], [3, 4], [5, 6]];
    const got = ownTensors([{ name: 'mine.json', bytes: new TextEncoder().encode(JSON.stringify({ q: rows, k: rows, v: rows })) }], av);
    expect(got.tensors).toMatchObject({ n: 3, d: 2 });
    expect([...got.tensors.V]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('says what is wrong, naming the file', () => {
    const [q, k, v] = trio(4, 2);
    const json = (o) => ({ name: 'x.json', bytes: new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o)) });
    const cases = [
      [[q, k], /no V: give three \.npy files/],
      [[q, k, { ...v, name: 'values.npy' }], /values\.npy: name the \.npy files so that each ends in q\.npy, k\.npy or v\.npy/],
      [[q, k, v, { ...v, name: 'other_v.npy' }], /are both V/],
      [[q, npy('k.npy', arr(10), [5, 2]), v], /k\.npy: shape \(5, 2\) does not match Q's \(4, 2\)/],
      [[q, k, npy('v.npy', arr(12), [4, 3])], /v\.npy: shape \(4, 3\) does not match Q's/],
      [[npy('q.npy', arr(8), [8]), k, v], /q\.npy: shape \(8\) is neither \(n, d\) nor \(layers, heads, n, d\)/],
      [[q, npy('k.npy', arr(8, (i) => (i === 5 ? NaN : i)), [4, 2]), v], /k\.npy: entry 5 is NaN/],
      [[{ name: 'q.npy', bytes: new Uint8Array([0x93, 78, 85, 77, 80, 89, 1, 0, 4, 0, 120, 120, 120, 10]) }, k, v], /^q\.npy: /],
      [[npy('q.npy', arr(2 * 300), [2, 300]), npy('k.npy', arr(600), [2, 300]), npy('v.npy', arr(600), [2, 300])], /d = 300, outside 1\.\.256/],
      [[json('{"q": [[1]], ')], /x\.json: not JSON/],
      [[json({ q: [[1, 2], [3]], k: [[1, 2], [3, 4]], v: [[1, 2], [3, 4]] })], /"q" row 1 has 1 entries, not 2 \(ragged rows\)/],
      [[json({ q: [[1, 2]], k: [[1, 'a']], v: [[1, 2]] })], /"k"\[0\]\[1\] is "a", not a finite number/],
      [[json({ q: [[1e300]], k: [[1]], v: [[1]] })], /does not fit a float32/],
      [[json({ q: [[1, 2]], v: [[1, 2]] })], /"k" is missing/],
      [[json({ q: [[1, 2]], k: [[1, 2]], v: [[1, 2]] }), q], /one JSON file .* not both/],
      [[], /no file given/],
    ];
    for (const [files, want] of cases) expect(ownTensors(files, av).error, String(want)).toMatch(want);
  });

  it('describes a bad JSON value by its kind or shape, never by quoting it (one short sentence)', () => {
    const json = (o) => ({ name: 'x.json', bytes: new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o)) });
    // a capture's (layers, heads, n, d) = (2, 2, 64, 16) as nested lists: 41,085 characters of notice before
    let t = 0;
    const nest = (shape) => (shape.length ? Array.from({ length: shape[0] }, () => nest(shape.slice(1))) : Math.sin(t++));
    const four = { q: nest([2, 2, 64, 16]), k: nest([2, 2, 64, 16]), v: nest([2, 2, 64, 16]) };
    const long = 'x'.repeat(5000), big = Array.from({ length: 3000 }, (_, i) => i / 7);
    const cases = [
      [json(four), /^x\.json: "q" is 4-D \(2, 2, 64, 16\), but JSON takes n rows of d numbers; give a 4-D capture as three \.npy files$/],
      [json({ q: [1, 2, 3], k: [[1]], v: [[1]] }), /"q" is 1-D \(3\)/],
      [json({ q: [[1, 2], [3, big]], k: [[1, 2], [3, 4]], v: [[1, 2], [3, 4]] }), /"q"\[1\]\[1\] is a list of 3000 entries, not a finite number$/],
      [json({ q: [[1, 2]], k: [[1, long]], v: [[1, 2]] }), /"k"\[0\]\[1\] is a string of 5000 characters/],
      [json({ q: [[1, 2]], k: [[1, { a: big }]], v: [[1, 2]] }), /"k"\[0\]\[1\] is an object/],
      [json('{"q": [[1, 1e999]], "k": [[1, 2]], "v": [[1, 2]]}'), /"q"\[0\]\[1\] is Infinity/],
    ];
    for (const [file, want] of cases) {
      const { error } = ownTensors([file], av);
      expect(error, String(want)).toMatch(want);
      expect(error.length, String(want)).toBeLessThanOrEqual(200);
    }
  });
});

describe("own gates beside Q, K, V (the gated families' inputs, docs/gated.md)", () => {
  const [q, k, v] = trio(4, 2);
  const g = (data, shape = [data.length]) => npy('gates.npy', Float32Array.from(data), shape);
  it('reads gates.npy (n) or (n, d), betas.npy (n), and a.npy with b.npy', () => {
    let got = ownTensors([q, k, v, g([-0.1, 0, -30, -1]), npy('betas.npy', Float32Array.from([0.5, 2, 1, 0.01]), [4])], av);
    expect(got.error).toBeUndefined();
    expect(got.tensors.gates).toMatchObject({ channels: 1, a: null, b: null });
    expect([...got.tensors.gates.g]).toEqual([-0.1, 0, -30, -1].map(Math.fround));
    expect([...got.tensors.gates.beta]).toEqual([0.5, 2, 1, 0.01].map(Math.fround));
    got = ownTensors([q, k, v, g(new Array(8).fill(-0.2), [4, 2]), npy('run_a.npy', arr(8), [4, 2]), npy('run_b.npy', arr(8), [4, 2])], av);
    expect(got.tensors.gates.channels).toBe(2);
    expect(got.tensors.gates.a).toHaveLength(8);
    expect(ownTensors([q, k, v], av).tensors.gates).toBeNull();
  });

  it('refuses, in one sentence naming the file, a shape, a gate above 0, a β outside (0, 2], a without b', () => {
    const cases = [
      [g([-0.1, -0.1, -0.1]), /^gates\.npy: shape \(3,\) is neither \(n,\) nor \(n, d\) for Q's n = 4, d = 2/],
      [g(new Array(12).fill(-0.1), [4, 3]), /^gates\.npy: shape \(4, 3\) is neither/],
      [g([-0.1, 0.2, -0.1, -0.1]), /^gates\.npy: entry 1 is 0\.2\d*, above 0: a log-gate g is ≤ 0/],
      [g([-0.1, NaN, -0.1, -0.1]), /^gates\.npy: entry 1 is NaN/],
      [npy('betas.npy', Float32Array.from([0.5, 0, 1, 1]), [4]), /^betas\.npy: entry 1 is 0, outside \(0, 2\]/],
      [npy('betas.npy', Float32Array.from([0.5, 2.5, 1, 1]), [4]), /^betas\.npy: entry 1 is 2\.5, outside/],
      [npy('betas.npy', arr(8), [4, 2]), /^betas\.npy: shape \(4, 2\) is not \(n,\)/],
      [npy('a.npy', arr(8), [4, 2]), /^a\.npy without b\.npy: give dplr's a\.npy and b\.npy together/],
      [npy('b.npy', arr(6), [3, 2]), /^b\.npy without a\.npy/],
    ];
    for (const [file, re] of cases) {
      const got = ownTensors([q, k, v, file], av);
      expect(got.error, file.name).toMatch(re);
      expect(got.error).not.toMatch(/\n/);
      expect(got.tensors).toBeUndefined();
    }
  });
});
