// lab-generate.test.mjs: Lab.generate with dv ≠ d on the real wasm module. av_generate writes V as n×d, so a
// lab whose V is n×dv draws into a scratch block and keeps dv columns (once, the n×d draw overran V's buffer).
import { describe, it, expect, beforeAll } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

let av;
beforeAll(async () => { av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) }); });

describe('Lab.generate', () => {
  it('keeps the first dv columns of the n×d draw when dv < d, and Q, K the same draw', () => {
    const full = av.lab(40, 8, 8), narrow = av.lab(40, 8, 3);
    expect(full.generate('clustered', 1.1, 5).status).toBe(0);
    expect(narrow.generate('clustered', 1.1, 5).status).toBe(0);
    expect(Array.from(narrow.Q)).toEqual(Array.from(full.Q));
    expect(Array.from(narrow.K)).toEqual(Array.from(full.K));
    const V = full.V, want = [];
    for (let i = 0; i < 40; i++) want.push(...V.subarray(i * 8, i * 8 + 3));
    expect(Array.from(narrow.V)).toEqual(want);
    // the matrix path still runs on the narrow V (its buffers were not overrun)
    expect(narrow.attend({ variant: 'softmax' }).status).toBe(0);
  });
  it('refuses dv > d with a sentence and leaves V as it was', () => {
    const lab = av.lab(20, 4, 6);
    const before = Array.from(lab.V);
    const r = lab.generate('gaussian', 1, 1);
    expect(r.status).toBeLessThan(0);
    expect(r.message).toMatch(/dv = 6/);
    expect(Array.from(lab.V)).toEqual(before);
  });
});
