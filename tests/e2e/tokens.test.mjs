// Token labels at any length (issue 28) in Debian's headless Chromium: own 4-D Q, K, V of n = 265 with a
// tokens.json beside them; M, A and M − A one size with the same axes; labels thinned so that none
// overlaps, the hovered token always labelled; the hover naming a downsampled block's tokens; the zoom
// cutting any token range from the full matrix at full resolution, in the link, by keyboard, with a reset.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, exportItem, measureSvg, svgTextProblems } from './browser.mjs';
import { execFileSync } from 'node:child_process';
import { npyBytes } from '../../web/io/export.mjs';

const ROOT = 'build/web';
const N = 265, D = 16;
let server, browser, files, pieces, Q, K;

/** Deterministic pseudo-random float32 (an LCG: the test's inputs, not the library's generators). */
function fill(len, seed) {
  const a = new Float32Array(len);
  let x = seed >>> 0;
  for (let i = 0; i < len; i++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; a[i] = (x / 2 ** 32 - 0.5) * 2; }
  return a;
}

beforeAll(async () => {
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
  const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-tokens-'));
  // a capture's 4-D layout: Q (1 layer, 2 heads, n, d), K and V (1, 1 KV head, n, d)
  const q = fill(2 * N * D, 1), k = fill(N * D, 2), v = fill(N * D, 3);
  Q = q.subarray(0, N * D); K = k;
  const words = [' the', ' light', ' fell', ' on', ' a', ' quiet', ' town', '.', '\n', ' and'];
  pieces = ['<s>', ...Array.from({ length: N - 1 }, (_, i) => `${words[i % words.length]}${i}`)];
  files = {
    q: join(dir, 'cap_q.npy'), k: join(dir, 'cap_k.npy'), v: join(dir, 'cap_v.npy'),
    tokens: join(dir, 'tokens.json'), short: join(dir, 'short', 'tokens.json'),
  };
  writeFileSync(files.q, npyBytes(q, [1, 2, N, D]));
  writeFileSync(files.k, npyBytes(k, [1, 1, N, D]));
  writeFileSync(files.v, npyBytes(v, [1, 1, N, D]));
  writeFileSync(files.tokens, JSON.stringify({ ids: pieces.map((_, i) => i), pieces, text: pieces.join('') }));
  mkdirSync(join(dir, 'short')); // a tokens.json one piece short, in a folder of its own
  writeFileSync(files.short, JSON.stringify({ pieces: pieces.slice(0, N - 1) }));
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const snapshot = (page) => page.evaluate(() => window.attnviz.snapshot());

/** The lab on the own files (with `tok`, a tokens.json) as ELU, non-causal. */
async function withFiles(tok = files.tokens, hash = 'src=file&variant=elu&causal=0') {
  const { page, errors } = await openLab(browser.context, server.url, { hash });
  await page.setInputFiles('#qkv-files', [files.q, files.k, files.v, tok].filter(Boolean));
  await page.waitForFunction((n) => window.attnviz.state.n === n, N);
  return { page, errors };
}

/** ELU-linear attention's M[i][j] in float64 from the test's own Q, K (layer 0, head 0; non-causal). */
function eluM(i, j) {
  const phi = (x) => (x > 0 ? x + 1 : Math.exp(x));
  const dot = (a, b) => { let s = 0; for (let t = 0; t < D; t++) s += phi(Q[a * D + t]) * phi(K[b * D + t]); return s; };
  let sum = 0;
  for (let c = 0; c < N; c++) sum += dot(i, c);
  return dot(i, j) / (sum + 1e-6);
}

/** Rectangles of the label spans of one axis box. */
const rects = (page, sel) => page.$$eval(`${sel} span`, (els) => els.map((e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, text: e.textContent, token: Number(e.dataset.token), hot: e.classList.contains('hot') }; }));

/** Whether consecutive labels along `a`..`b` (top/bottom or left/right) overlap. */
function overlaps(list, a, b) {
  const s = [...list].sort((x, y) => x[a] - y[a]);
  return s.some((r, i) => i > 0 && r[a] < s[i - 1][b] - 0.5);
}

describe('token labels at n = 265 (own 4-D inputs with a tokens.json)', () => {
  it('M, A and M − A have one size and the same labelled axes, thinned so that no two labels overlap', async () => {
    const { page, errors } = await withFiles();
    const snap = await snapshot(page);
    expect(snap.tokens).toEqual(pieces);
    const boxes = await page.$$eval('.heat canvas.hm', (els) => els.map((c) => { const r = c.getBoundingClientRect(); return { w: r.width, h: r.height, top: r.top }; }));
    expect(boxes).toHaveLength(3);
    for (const b of boxes.slice(1)) expect([b.w, b.h, b.top]).toEqual([boxes[0].w, boxes[0].h, boxes[0].top]);
    for (const fig of ['#fig-M', '#fig-A', '#fig-D']) {
      const rows = await rects(page, `${fig} .tok-rows`), cols = await rects(page, `${fig} .tok-cols`);
      expect(rows.length).toBeGreaterThan(4);
      expect(cols.length).toBeGreaterThan(4);
      expect(overlaps(rows, 'top', 'bottom')).toBe(false);
      expect(overlaps(cols, 'left', 'right')).toBe(false);
      expect(rows.map((r) => r.text)).toEqual(rows.map((r) => pieces[r.token].replace(/\n/g, '⏎').replace(/^ /, '␣')));
    }
    // the same labels on the three
    const texts = await page.$$eval('.tok-rows', (els) => els.map((e) => e.textContent));
    expect(new Set(texts).size).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the hover names a block\'s tokens and always labels the hovered one', async () => {
    const { page, errors } = await withFiles();
    await snapshot(page);
    const hm = await page.$eval('#hm-M', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    // the block of rows 238–239 and columns 132–133 (n = 265 shows as 133×133 blocks of 2)
    await page.mouse.move(hm.x + (133.5 / 265) * hm.w, hm.y + (238.5 / 265) * hm.h);
    const text = await page.textContent('#hover');
    const q = (i) => `“${pieces[i].replace(/\n/g, '⏎')}”`;
    expect(text).toContain(`rows 238–239 (${q(238)} … ${q(239)})`);
    expect(text).toContain(`cols 132–133 (${q(132)} … ${q(133)})`);
    const rows = await rects(page, '#fig-M .tok-rows'), cols = await rects(page, '#fig-M .tok-cols');
    expect(rows.find((r) => r.hot)?.token).toBe(238);
    expect(cols.find((r) => r.hot)?.token).toBe(132);
    expect(overlaps(rows, 'top', 'bottom')).toBe(false);
    expect(overlaps(cols, 'left', 'right')).toBe(false);
    // the keyboard cursor labels its tokens the same way, and says them
    await page.focus('#hm-D');
    await page.keyboard.press('ArrowDown');
    expect(await page.textContent('#cell-say')).toContain(`rows 2–3 (${q(2)} … ${q(3)}), cols 0–1 (${q(0)} … ${q(1)})`);
    expect((await rects(page, '#fig-A .tok-rows')).find((r) => r.hot)?.token).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a zoom shows any token range from the full matrix at full resolution, in the link, with a reset', async () => {
    const { page, errors } = await withFiles();
    await snapshot(page);
    // by keyboard: the inputs, then Enter
    await page.fill('#zoom-box .z-r0', '100');
    await page.fill('#zoom-box .z-r1', '139');
    await page.fill('#zoom-box .z-c0', '20');
    await page.fill('#zoom-box .z-c1', '59');
    await page.press('#zoom-box .z-c1', 'Enter');
    const snap = await snapshot(page);
    expect(snap.state.zoom).toBe('100-139,20-59');
    expect(await page.evaluate(() => location.hash)).toContain('zoom=100-139,20-59');
    // one canvas pixel per token (n = 265 whole is 133 blocks of 2): the three alike
    expect(await page.$$eval('.heat canvas.hm', (els) => els.map((c) => [c.width, c.height]))).toEqual([[40, 40], [40, 40], [40, 40]]);
    // a cell is one token, and its value the full matrix's entry
    const hm = await page.$eval('#hm-M', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    await page.mouse.move(hm.x + (7.5 / 40) * hm.w, hm.y + (5.5 / 40) * hm.h);
    const text = await page.textContent('#hover');
    expect(text).toMatch(new RegExp(`^row 105 “${pieces[105]}”, col 27 “${pieces[27]}”: M `));
    const m = Number(/M ([-0-9.e]+) ·/.exec(text)[1]);
    expect(Math.abs(m - eluM(105, 27)) / eluM(105, 27)).toBeLessThan(2e-3);
    // every token of the window labelled when it fits (40 tokens over the heatmap's side)
    const rows = await rects(page, '#fig-A .tok-rows');
    expect(rows[0].token).toBe(100);
    expect(overlaps(rows, 'top', 'bottom')).toBe(false);
    // the reset shows the whole matrix again
    await page.click('#zoom-box .z-reset');
    const back = await snapshot(page);
    expect(back.state.zoom).toBe('');
    expect(await page.$eval('#hm-M', (c) => c.width)).toBe(133);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a tokens.json of another length is set aside with a one-sentence notice; the inputs load', async () => {
    const { page } = await withFiles(files.short);
    const snap = await snapshot(page);
    expect(snap.tokens).toBe(null);
    expect(snap.readouts.n).toBe(N);
    const said = await page.textContent('#notice');
    expect(said).toMatch(/tokens\.json: 264 pieces for n = 265 tokens/);
    expect(said.length).toBeLessThanOrEqual(200);
    await page.close();
  });
});

describe('tokens in every export', () => {
  it('state.json, the labelled CSV, the .zip\'s tokens.json and script, and the figures\' axes', async () => {
    const { page, errors } = await withFiles();
    const snap = await snapshot(page);
    const state = JSON.parse((await exportItem(page, 'state.json')).bytes.toString());
    expect(state.tokens).toEqual(snap.tokens);
    const csv = (await exportItem(page, 'M.csv')).bytes.toString();
    expect(csv.startsWith(`"","<s>","${pieces[1]}",`)).toBe(true);
    expect(csv).toContain(`\n"${pieces[1]}",`); // row 1 begins with its token (a piece may hold a newline: quoted)
    const zip = await exportItem(page, 'bundle.zip');
    const out = execFileSync('/usr/bin/python3', ['-c', `
import sys, zipfile, json
z = zipfile.ZipFile(sys.argv[1])
name = [n for n in z.namelist() if n.endswith('/tokens.json')][0]
print(json.dumps(json.loads(z.read(name))["pieces"]))
print(b"tokens.json" in z.read([n for n in z.namelist() if n.endswith('/recompute.py')][0]))`, zip.path]).toString().split('\n');
    expect(JSON.parse(out[0])).toEqual(pieces);
    expect(out[1]).toBe('True');
    // the figure's axes carry the tokens, thinned as on the page, and the zoom's window when one is shown
    const svg = (await exportItem(page, 'M.svg')).bytes.toString();
    const labels = [...svg.matchAll(/class="tok">([^<]*)</g)].map((m) => m[1]);
    expect(labels.length).toBeGreaterThan(8);
    expect(labels[0]).toBe('&lt;s&gt;');
    // the M | A | M − A figure: the same token labels on each of its three panels, no two texts overlapping
    const trio = (await exportItem(page, 'trio.svg')).bytes.toString();
    const trioLabels = [...trio.matchAll(/class="tok">([^<]*)</g)].map((m) => m[1]);
    expect(trioLabels.length % 3).toBe(0);
    expect(trioLabels.slice(0, trioLabels.length / 3)).toEqual(trioLabels.slice(trioLabels.length / 3, 2 * trioLabels.length / 3));
    expect(trioLabels[0]).toBe('&lt;s&gt;');
    expect(svgTextProblems(await measureSvg(page, trio))).toEqual([]);
    expect(svgTextProblems(await measureSvg(page, svg))).toEqual([]);
    mkdirSync('build/e2e', { recursive: true });
    writeFileSync('build/e2e/export-trio-tokens.png', (await exportItem(page, 'trio.png')).bytes);
    await page.click('#export > summary'); // the menu, open since the first export, covers the zoom's button
    await page.fill('#zoom-box .z-r0', '100');
    await page.fill('#zoom-box .z-r1', '119');
    await page.fill('#zoom-box .z-c0', '0');
    await page.fill('#zoom-box .z-c1', '19');
    await page.click('#zoom-box .z-show');
    await snapshot(page);
    const zoomed = (await exportItem(page, 'A.svg')).bytes.toString();
    expect(zoomed).toContain('data-cells="20"');
    expect(zoomed.replace(/<[^>]+>/g, '')).toContain('rows 100–119, cols 0–19 of n = 265 at full resolution');
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('a zoom link above the page\'s own n (the frame worker cuts the window)', () => {
  it('opens at full resolution and follows a knob', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'n=512&variant=elu&zoom=10-41,300-331' });
    const snap = await snapshot(page);
    expect(snap.state.zoom).toBe('10-41,300-331');
    expect(await page.$$eval('.heat canvas.hm', (els) => els.map((c) => [c.width, c.height]))).toEqual([[32, 32], [32, 32], [32, 32]]);
    // indices label the axes when the inputs have no tokens
    const rows = await rects(page, '#fig-M .tok-rows');
    expect(rows.map((r) => r.token)[0]).toBe(10);
    expect(overlaps(rows, 'top', 'bottom')).toBe(false);
    // another variant: the window is cut again from the new matrix
    const before = await page.$eval('#hm-M', (c) => c.toDataURL());
    await page.selectOption('#k-variant', 'relu');
    expect((await snapshot(page)).state.variant).toBe('relu');
    expect(await page.$eval('#hm-M', (c) => [c.width, c.height])).toEqual([32, 32]);
    expect(await page.$eval('#hm-M', (c) => c.toDataURL())).not.toBe(before);
    expect(errors).toEqual([]);
    await page.close();
  });
});
