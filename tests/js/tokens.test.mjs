// web/state/tokens.mjs (issue 28, token labels at any length): which labels fit on an axis, a block named by
// its tokens, a tokens.json beside own Q, K, V (through web/io/own-inputs.mjs too), the zoom's link value
// and its round trip through the state, and the zoom window cut from the full matrix.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { ownTensors } from '../../web/io/own-inputs.mjs';
import { npyBytes, csvText, stateJson, tokensJson, heatmapSvg, numpySnippet, exportName } from '../../web/io/export.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { colorTable } from '../../web/render/colormap.mjs';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  thinTicks, spanName, spanText, parseTokensJson, zoomValue, clampZoom, windowCells, gridOf, cellTokens, gridCellAt,
} from '../../web/state/tokens.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const json = (x) => new TextEncoder().encode(JSON.stringify(x));

describe('a tokens.json problem in the reader\'s language', () => {
  it('is English data, said in Chinese on the Chinese page by its template', async () => {
    const { said } = await import('../../web/state/notice.mjs');
    const bad = [['[1]', 3], ['{}', 3], ['["a"]', 2], ['nope', 1]].map(([text, n]) => parseTokensJson('tok.json', new TextEncoder().encode(text), n).error);
    expect(bad.every((e) => /^tok\.json: .*so the tokens are not shown$/.test(e))).toBe(true);
    for (const e of bad) expect(said(e, 'zh'), e).toMatch(/^tok\.json：.*所以不显示 token$/);
  });
});

describe('thinTicks: the labels that fit', () => {
  it('labels every token when each has room, and every k-th (1, 2, 5, 10, …) when not', () => {
    expect(thinTicks(0, 9, 200, 14)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // 265 tokens over 256 px, 15-px labels: 0.97 px a token, so every 20th
    const t = thinTicks(0, 264, 256, 15);
    expect(t).toEqual([0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 220, 240, 260]);
    // a window starts at its own first multiple of k
    expect(thinTicks(103, 142, 160, 15)).toEqual([105, 110, 115, 120, 125, 130, 135, 140]);
  });

  it('never puts two labels closer than a label, the hovered one included', () => {
    for (const [n, px, lab] of [[265, 256, 15], [4096, 400, 13], [37, 120, 14], [1000, 1000, 11]]) {
      for (const h of [null, 0, 7, 133, n - 1]) {
        const t = thinTicks(0, n - 1, px, lab, h);
        const per = px / n;
        for (let i = 1; i < t.length; i++) expect((t[i] - t[i - 1]) * per).toBeGreaterThanOrEqual(lab - 1e-9);
        if (h !== null && h < n) expect(t).toContain(h);
      }
    }
  });

  it('leaves a hovered token outside the axis out', () => {
    expect(thinTicks(10, 19, 200, 14, 3)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(thinTicks(0, 0, 0, 14)).toEqual([]);
  });
});

describe('a block named by its tokens', () => {
  const pieces = ['<s>', ' the', ' light', '\n', ' fell'];
  it('names one token or the first and last of a span', () => {
    expect(spanName(pieces, 1, 2)).toBe('“ the” … “ light”');
    expect(spanText(pieces, 1, 2)).toBe('1–2 (“ the” … “ light”)');
    expect(spanText(pieces, 3, 3)).toBe('3 “⏎”');
    expect(spanText(null, 238, 239)).toBe('238–239');
    expect(spanText(null, 4, 4)).toBe('4');
  });

  it('finds the tokens under a cell of the whole matrix by blocks and of a zoom window', () => {
    const frame = { size: 133, b: 2, n: 265, M: null, A: null, D: null, mode: 'mean' };
    const g = gridOf(frame);
    expect(cellTokens(g, { row: 119, col: 66 })).toEqual({ rows: [238, 239], cols: [132, 133] });
    expect(cellTokens(g, { row: 132, col: 132 })).toEqual({ rows: [264, 264], cols: [264, 264] }); // the last block is one token
    const w = gridOf(frame, { zoom: { r0: 100, r1: 139, c0: 20, c1: 59 }, rows: 40, cols: 40, b: 1 });
    expect(cellTokens(w, { row: 5, col: 7 })).toEqual({ rows: [105, 105], cols: [27, 27] });
    expect(gridCellAt(w, 79.9, 10, 80, 80)).toEqual({ row: 5, col: 39 });
    expect(gridCellAt(w, 80, 10, 80, 80)).toBe(null);
  });
});

describe('tokens.json beside own Q, K, V', () => {
  it('takes {"pieces"} as attnviz capture writes it, or a list of strings', () => {
    expect(parseTokensJson('tokens.json', json({ ids: [1, 2], pieces: ['<s>', ' a'], text: ' a' }), 2)).toEqual({ pieces: ['<s>', ' a'] });
    expect(parseTokensJson('t.json', json(['x', 'y', 'z']), 3)).toEqual({ pieces: ['x', 'y', 'z'] });
  });

  it('says in one sentence, without quoting the file, why the tokens are set aside', () => {
    const cases = [
      [json({ pieces: ['a'] }), 2, 'tokens.json: 1 pieces for n = 2 tokens, so the tokens are not shown'],
      [json({ pieces: ['a', 7] }), 2, 'tokens.json: piece 1 is not a string, so the tokens are not shown'],
      [json({ ids: [1, 2] }), 2, 'tokens.json: expected {"pieces": [...]} or a list of strings, so the tokens are not shown'],
      [new TextEncoder().encode('{"pieces": [' + '"x",'.repeat(5000)), 2, 'tokens.json: not JSON, so the tokens are not shown'],
    ];
    for (const [bytes, n, said] of cases) {
      const got = parseTokensJson('tokens.json', bytes, n);
      expect(got).toEqual({ error: said });
      expect(got.error.length).toBeLessThanOrEqual(200);
    }
  });

  it('loads the tensors with their pieces, or without them and a notice when the file does not fit', () => {
    const n = 4, d = 2, a = Float32Array.from({ length: n * d }, (_, i) => Math.sin(i));
    const trio = ['q', 'k', 'v'].map((r) => ({ name: `cap_${r}.npy`, bytes: npyBytes(a, [1, 1, n, d]) }));
    const good = ownTensors([...trio, { name: 'tokens.json', bytes: json({ pieces: ['<s>', ' a', ' b', ' c'] }) }], av);
    expect(good.notice).toBe(null);
    expect(good.tensors.pieces).toEqual(['<s>', ' a', ' b', ' c']);
    const bad = ownTensors([...trio, { name: 'text_tokens.json', bytes: json({ pieces: ['<s>'] }) }], av);
    expect(bad.tensors.n).toBe(4);
    expect(bad.tensors.pieces).toBe(null);
    expect(bad.notice).toBe('text_tokens.json: 1 pieces for n = 4 tokens, so the tokens are not shown');
    expect(ownTensors(trio, av).tensors.pieces).toBe(null);
    const two = ownTensors([...trio, { name: 'tokens.json', bytes: json(['a']) }, { name: 'b_tokens.json', bytes: json(['a']) }], av);
    expect(two.error).toMatch(/^2 token files given/);
  });
});

describe('the zoom', () => {
  it('reads rows,cols as a-b,c-d and says when a value is not one', () => {
    expect(zoomValue('40-80,0-63')).toEqual({ value: '40-80,0-63', problem: null });
    expect(zoomValue('80–40, 63-0')).toEqual({ value: '40-80,0-63', problem: null });
    expect(zoomValue('')).toEqual({ value: '', problem: null });
    expect(zoomValue('40-80').value).toBe('');
    expect(zoomValue('40-80').problem).toMatch(/^zoom: "40-80" is not rows,cols/);
  });

  it('keeps the window within the matrix, or none when it lies outside', () => {
    expect(clampZoom('250-300,0-10', 265)).toEqual({ r0: 250, r1: 264, c0: 0, c1: 10 });
    expect(clampZoom('300-310,0-10', 265)).toBe(null);
    expect(clampZoom('', 265)).toBe(null);
  });

  it('round-trips through the link and the snapshot\'s complete state', () => {
    const schema = buildSchema(av.registry);
    const st = { ...schema.defaults(), zoom: '100-139,20-59' };
    const hash = schema.toHash(st);
    expect(hash).toContain('&zoom=100-139,20-59&');
    expect(schema.fromHash(hash)).toEqual({ state: st, problems: [] });
    expect(schema.toHash(schema.defaults())).not.toContain('zoom=');
    expect(schema.toHash(schema.defaults(), { complete: true })).toContain('&zoom=&');
    const bad = schema.fromHash('zoom=1-2');
    expect(bad.state.zoom).toBe('');
    expect(bad.problems).toHaveLength(1);
    expect(schema.firstDirtyStage(['zoom'])).toBe('display'); // no matrix or readout is computed again
  });

  it('cuts the window from the full matrix at full resolution, and by blocks only past the cap', () => {
    const n = 11, M = Float32Array.from({ length: n * n }, (_, i) => i), A = Float32Array.from({ length: n * n }, (_, i) => (i % 7) / 2);
    const z = { r0: 2, r1: 5, c0: 7, c1: 10 };
    const w = windowCells(M, A, n, z);
    expect([w.rows, w.cols, w.b]).toEqual([4, 4, 1]);
    for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) {
      const k = (2 + i) * n + 7 + j;
      expect([w.M[i * 4 + j], w.A[i * 4 + j], w.D[i * 4 + j]]).toEqual([M[k], A[k], Math.fround(M[k] - A[k])]);
    }
    // a 10 × 7 window with a cap of 4: blocks of 3 within the window (the last ones smaller)
    const big = windowCells(M, A, n, { r0: 0, r1: 9, c0: 4, c1: 10 }, 4, 'mean');
    expect([big.rows, big.cols, big.b]).toEqual([4, 3, 3]);
    const mean = (i0, i1, j0, j1) => { let s = 0; for (let i = i0; i <= i1; i++) for (let j = j0; j <= j1; j++) s += M[i * n + j]; return s / ((i1 - i0 + 1) * (j1 - j0 + 1)); };
    expect(big.M[0]).toBeCloseTo(mean(0, 2, 4, 6), 4);
    expect(big.M[3 * 3 + 2]).toBeCloseTo(mean(9, 9, 10, 10), 4);
    const mx = windowCells(M, A, n, { r0: 0, r1: 9, c0: 4, c1: 10 }, 4, 'max');
    expect(mx.M[0]).toBe(M[2 * n + 6]);
  });
});

describe('tokens in the exports', () => {
  const pieces = ['<s>', ' say "hi"', ',\n'];
  it('CSV: a labelled table with the tokens quoted, the numbers unchanged; numbers only without tokens', () => {
    const m = Float32Array.from([0.5, 0.25, 0.25, 1, 0, 0, 0.1, 0.2, 0.7]);
    expect(csvText(m, 3, 3, pieces)).toBe([
      '"","<s>"," say ""hi""",",', '"',
      '"<s>",0.5,0.25,0.25',
      '" say ""hi""",1,0,0',
      '",', '",0.100000001,0.200000003,0.699999988', ''].join('\n'));
    expect(csvText(m, 3)).toBe('0.5,0.25,0.25\n1,0,0\n0.100000001,0.200000003,0.699999988\n');
    expect(() => csvText(m, 3, 3, pieces.slice(1))).toThrow(RangeError);
  });

  it('state.json carries the tokens when the inputs have them; tokens.json has capture\'s keys', () => {
    const snap = { state: { v: '1' }, readouts: { n: 3 }, tokens: pieces };
    expect(JSON.parse(stateJson(snap)).tokens).toEqual(pieces);
    expect(JSON.parse(stateJson({ ...snap, tokens: null }))).not.toHaveProperty('tokens');
    expect(JSON.parse(tokensJson(pieces, [1, 5, 9]))).toEqual({ ids: [1, 5, 9], pieces, text: pieces.join('') });
    expect(JSON.parse(tokensJson(pieces))).toEqual({ pieces, text: pieces.join('') });
  });

  it('a heatmap figure labels its axes with the tokens given, escaped, the caption still last', () => {
    const base = { png: 'data:image/png;base64,iVBORw0KGgo=', cells: 3, table: colorTable('viridis'), lo: 0, hi: 1, ticks: [], title: 'M', caption: 'cap' };
    const svg = heatmapSvg({ ...base, axes: { rows: [{ at: 0.5, text: '<s>' }], cols: [{ at: 0.25, text: ' a&b' }] } });
    expect(svg).toContain('class="tok">&lt;s&gt;</text>');
    expect(svg).toContain('class="tok"> a&amp;b</text>');
    expect(svg.lastIndexOf('class="tok"')).toBeLessThan(svg.indexOf('class="caption"'));
    expect(heatmapSvg(base)).not.toContain('class="tok"');
  });

  const hasNumpy = (() => { try { execFileSync('/usr/bin/python3', ['-c', 'import numpy']); return true; } catch { return false; } })();
  it.skipIf(!hasNumpy || !existsSync('/usr/bin/python3'))('the numpy script names the tokens of its largest difference from tokens.json', () => {
    const schema = buildSchema(av.registry), engine = new Engine(av);
    const state = { ...schema.defaults(), gen: 'clustered', n: 24, d: 8, seed: 3, variant: 'elu' };
    const request = schema.requestOf(state);
    const got = engine.exportArrays(request);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-tokens-'));
    for (const { what, data, shape } of got.files) writeFileSync(join(dir, exportName(state, what, 'npy')), npyBytes(data, shape));
    writeFileSync(join(dir, 'tokens.json'), tokensJson(Array.from({ length: 24 }, (_, i) => ` w${i}`)));
    writeFileSync(join(dir, 'snippet.py'), numpySnippet({ state, request, tokens: true }));
    const out = execFileSync('/usr/bin/python3', [join(dir, 'snippet.py')]).toString();
    expect(out).toMatch(/max \|numpy - exported M\| = /);
    const m = /at query (\d+) ' w(\d+)' and key (\d+) ' w(\d+)'/.exec(out);
    expect([m[1], m[3]]).toEqual([m[2], m[4]]);
    expect(numpySnippet({ state, request })).not.toContain('tokens.json');
  });
});
