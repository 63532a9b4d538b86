// height=auto (web/io/auto-height.mjs, docs/embedding.md "Auto-height"): where the height goes for each
// host=, when it is sent (only in an embed asking for it, once per height), and the link key itself.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema, listOf } from '../../web/state/state.mjs';
import { heightTargets, watchHeight } from '../../web/io/auto-height.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);

describe('height=auto', () => {
  it('goes to any origin without host=, to the origins host= names, to none when host= is invalid', () => {
    expect(heightTargets([])).toEqual(['*']);
    expect(heightTargets(['https://blog.example/', 'HTTPS://BLOG.EXAMPLE', 'http://127.0.0.1:8080'])).toEqual(['https://blog.example', 'http://127.0.0.1:8080']);
    expect(heightTargets(['https://blog.example', '*'])).toEqual([]);
    expect(heightTargets(['https://blog.example/post'])).toEqual([]);
  });

  it('posts the content height to the parent when on, once per height', () => {
    const got = [];
    let height = 300, on = true, host = '';
    let observed = null;
    const win = {
      parent: { postMessage: (m, origin) => got.push([m.type, m.height, origin]) },
      document: { documentElement: { getBoundingClientRect: () => ({ height }) } },
      ResizeObserver: class { constructor(fn) { observed = fn; } observe() {} },
    };
    const w = watchHeight(win, { on: () => on, origins: () => listOf(host) });
    observed();
    w.changed(); // the same height: not sent again
    height = 412.2;
    observed();
    host = 'https://blog.example';
    height = 500;
    w.changed();
    on = false; height = 600;
    w.changed();
    expect(got).toEqual([['attnviz:height', 300, '*'], ['attnviz:height', 413, '*'], ['attnviz:height', 500, 'https://blog.example']]);
    // a top-level page (no parent) sends nothing
    const top = { document: win.document, ResizeObserver: win.ResizeObserver };
    top.parent = top;
    watchHeight(top, { on: () => true, origins: () => [] }).changed();
    expect(got.length).toBe(3);
  });

  it('is a link key left out of the snapshot, its value auto or empty', () => {
    const { state, problems } = schema.fromHash('v=1&embed=heatmap&height=auto');
    expect(problems).toEqual([]);
    expect(state.height).toBe('auto');
    expect(schema.toHash(state)).toMatch(/&height=auto/);
    expect(schema.toHash(state, { complete: true })).not.toMatch(/height=/);
    expect(schema.toHash(schema.fromHash('v=1&embed=heatmap').state)).not.toMatch(/height=/);
    expect(schema.fromHash('v=1&height=400').problems[0]).toMatch(/^height: "400" is not one of/);
  });
});
