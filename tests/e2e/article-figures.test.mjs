// The seed article's two figures (web/ui/article-figures.mjs, docs/page.md "The article's two figures") in
// Debian's headless Chromium: the exp-spectrum lesson shows them on the first screen, both charts drawn and
// taller than 150 px, their panel part's numbers those numpy computes from the same overlay σ (and from
// the CLI's Q, K by its own SVD: `make cli` first), the toggle
// and the link key agree, the text is at least 18 px in projector mode, and above n = 1024 (the top-k
// route) the bounds are marked.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, waitSettled } from './browser.mjs';

const ROOT = 'build/web';
const CLI = process.env.ATTNVIZ_CLI || new URL('../../build/native/attnviz', import.meta.url).pathname;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let server;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  if (!existsSync(CLI)) throw new Error('run `make cli` first');
  server = await serve(ROOT, 0);
});
afterAll(async () => { await server?.close(); });

/** The panel's part once exp(QKᵀ)'s curve (or the sentence that it has none) is in. */
async function articlePart(page) {
  await page.waitForFunction(() => { const p = window.attnviz.panels().article; return p && p.S && (p.E || p.overflow) && p.drawn; }, null, { timeout: 60000, polling: 100 });
  return page.evaluate(() => window.attnviz.panels().article);
}

/** σ², err(D) = Σ_{i>D} σᵢ² (or ‖M‖_F² − Σ_{i≤D} σ̂ᵢ² from the top k) and the rank, by numpy. */
function numpyCurves(parts) {
  const script = `
import json, sys
import numpy as np
out = {}
for name, p in json.load(sys.stdin).items():
    s = np.asarray(p['sv'], dtype=np.float64)
    sq = s * s
    if p['total'] is None:
        err = np.concatenate([np.cumsum(sq[::-1])[::-1], [0.0]])
    else:
        err = np.maximum(0.0, p['total'] - np.concatenate([[0.0], np.cumsum(sq)]))
    out[name] = {'err': err.tolist(), 'rank': int(np.sum(s > max(p['floor'], 1e-16 * s[0])))}
print(json.dumps(out))
`;
  const r = spawnSync('/usr/bin/python3', ['-c', script], { input: JSON.stringify(parts), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/** The two charts: canvas heights in CSS px and how many colours each holds (a blank canvas has one). */
const chartsDrawn = (page) => page.$$eval('#fig-article canvas', (cs) => cs.map((c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, set = new Set();
  for (let i = 0; i < d.length; i += 16) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2] | (d[i + 3] << 24));
  return { height: c.getBoundingClientRect().height, colours: set.size };
}));

describe("the seed article's two figures", () => {
  it('exp-spectrum at 1024×768: on the first screen, drawn, and numpy agrees with its numbers', async () => {
    const b = await launch({ width: 1024, height: 768 });
    try {
      const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=exp-spectrum' });
      const part = await articlePart(page);
      const box = await page.$eval('#fig-article', (f) => { const r = f.getBoundingClientRect(); return { hidden: f.hidden, hl: f.classList.contains('hl'), top: r.top, bottom: r.bottom }; });
      expect(box).toMatchObject({ hidden: false, hl: true });
      expect(box.top).toBeGreaterThanOrEqual(0);
      expect(box.bottom).toBeLessThanOrEqual(768);
      const charts = await chartsDrawn(page);
      expect(charts.length).toBe(2);
      for (const c of charts) { expect(c.height).toBeGreaterThan(150); expect(c.colours).toBeGreaterThan(3); }
      expect(await page.getAttribute('#figs-toggle', 'aria-pressed')).toBe('true');

      // the σ are the spectrum worker's overlays, as they are
      const ov = await page.evaluate(() => ({ S: Array.from(window.attnviz.view.overlay.S.sv), E: Array.from(window.attnviz.view.overlay.E.sv), floor: window.attnviz.view.overlay.S.floor }));
      expect(part.S.sv).toEqual(ov.S);
      expect(part.E.sv).toEqual(ov.E);
      const np = numpyCurves({ S: { sv: ov.S, total: null, floor: ov.floor }, E: { sv: ov.E, total: null, floor: 0 } });
      for (const k of ['S', 'E']) {
        expect(part[k].err.length).toBe(np[k].err.length);
        part[k].err.forEach((v, D) => expect(v).toBeCloseTo(np[k].err[D], 6 - Math.ceil(Math.log10(np[k].err[0]))));
        expect(part[k].partial).toBe(false);
      }
      // the article's claim in the page's numbers: QKᵀ has rank d and no error from D = d; exp(QKᵀ) does
      const d = 16;
      expect(part.rankS).toBe(d);
      expect(np.S.rank).toBe(d);
      expect(part.S.err[d] / part.S.fro2).toBeLessThan(1e-12);
      expect(part.E.err[d] / part.E.fro2).toBeGreaterThan(0.1);
      expect(part.E.sv.length).toBe(256);
      // and from the inputs themselves: the CLI's generator (the page's stream), numpy's SVD of
      // scale·QKᵀ and exp(scale·QKᵀ) (the factor e^{−max} cancels in the relative error)
      const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-article-'));
      try {
        execFileSync(CLI, ['generate', '--gen', 'gaussian', '--n', '256', '--d', '16', '--seed', '1', '-o', dir]);
        const r = spawnSync('/usr/bin/python3', ['-c', `
import json, sys
import numpy as np
q = np.load(sys.argv[1]).astype(np.float64); k = np.load(sys.argv[2]).astype(np.float64)
s = q @ k.T / np.sqrt(q.shape[1])
ss = np.linalg.svd(s, compute_uv=False); se = np.linalg.svd(np.exp(s - s.max()), compute_uv=False)
print(json.dumps({'s1': ss[0], 'rank': int(np.sum(ss > 1e-9 * ss[0])), 'rel16': float(np.sum(se[16:] ** 2) / np.sum(se ** 2))}))
`, join(dir, 'q.npy'), join(dir, 'k.npy')], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(r.stderr);
        const ref = JSON.parse(r.stdout);
        expect(ref.rank).toBe(16);
        expect(part.S.sv[0] / ref.s1).toBeCloseTo(1, 5);
        expect(part.E.err_rel[16]).toBeCloseTo(ref.rel16, 4);
      } finally { rmSync(dir, { recursive: true, force: true }); }
      expect(await page.textContent('#article-note')).toMatch(/QKᵀ has 16 nonzero σ \(d = 16\): its error is 0% from D = 16; exp\(QKᵀ\)'s error at D = 16 is \d+(\.\d+)?% /);

      // the toggle writes the link key, and the link key the toggle
      await page.click('#figs-toggle');
      await page.waitForFunction(() => document.getElementById('fig-article').hidden && !/figs=article/.test(location.hash));
      expect(await page.getAttribute('#figs-toggle', 'aria-pressed')).toBe('false');
      expect(await page.evaluate(() => window.attnviz.panels().article ?? null)).toBe(null);
      await page.evaluate(() => { location.hash = `${location.hash.slice(1).replace(/(^|&)figs=[^&]*/, '')}&figs=article`; });
      await page.waitForFunction(() => !document.getElementById('fig-article').hidden);
      await articlePart(page);
      expect(errors).toEqual([]);
    } finally { await b.close(); }
  });

  it('projector mode at 1920×1080, dark: every text of the figure at least 18 px, the charts drawn', async () => {
    const b = await launch({ width: 1920, height: 1080, colorScheme: 'dark' });
    try {
      const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=exp-spectrum&projector=1' });
      await articlePart(page);
      const small = await page.$$eval('#fig-article *', (els) => els.filter((e) => [...e.childNodes].some((t) => t.nodeType === 3 && t.textContent.trim()))
        .map((e) => ({ text: e.textContent.slice(0, 30), px: parseFloat(getComputedStyle(e).fontSize) })).filter((x) => x.px < 18));
      expect(small).toEqual([]);
      // the canvases' axis text is drawn at the charts' own font size (page.textPx())
      expect(await page.$eval('#chart-sq', (e) => parseFloat(getComputedStyle(e).fontSize))).toBeGreaterThanOrEqual(18);
      for (const c of await chartsDrawn(page)) { expect(c.height).toBeGreaterThan(150); expect(c.colours).toBeGreaterThan(3); }
      expect(errors).toEqual([]);
    } finally { await b.close(); }
  });

  it('a phone (390×844): the charts one under the other, full width, no sideways scrolling, no axe violation', async () => {
    const b = await launch({ width: 390, height: 844 });
    try {
      const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=exp-spectrum' });
      await articlePart(page);
      const m = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth, vw: innerWidth,
        boxes: ['chart-sq', 'chart-sqerr'].map((id) => { const r = document.getElementById(id).getBoundingClientRect(); return { w: r.width, top: r.top, bottom: r.bottom }; }),
      }));
      expect(m.scroll).toBeLessThanOrEqual(m.vw);
      for (const x of m.boxes) expect(x.w).toBeGreaterThan(300);
      expect(m.boxes[1].top).toBeGreaterThanOrEqual(m.boxes[0].bottom);
      for (const c of await chartsDrawn(page)) expect(c.height).toBeGreaterThan(150);
      await page.evaluate(AXE); // through the DevTools protocol: the page's CSP does not apply
      const found = await page.evaluate(() => window.axe.run(document.getElementById('fig-article').closest('section'), { resultTypes: ['violations'] }));
      expect(found.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
      expect(errors).toEqual([]);
    } finally { await b.close(); }
  });

  it('above n = 1024 exp(QKᵀ) has its top σ only: the error is an upper bound, marked and said', async () => {
    const b = await launch({ width: 1280, height: 800 });
    try {
      const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=exp-spectrum&n=2048' });
      await waitSettled(page, 60000);
      const part = await articlePart(page);
      expect(part.E.partial).toBe(true);
      expect(part.E).toMatchObject({ sq_bound: 'lower', err_bound: 'upper' });
      expect(part.E.sv.length).toBeLessThan(2048);
      const fro2 = await page.evaluate(() => window.attnviz.view.overlay.E.fro2);
      expect(part.E.fro2).toBe(fro2);
      const np = numpyCurves({ E: { sv: part.E.sv, total: fro2, floor: 0 } });
      part.E.err.forEach((v, D) => expect(v / fro2).toBeCloseTo(np.E.err[D] / fro2, 9));
      expect(part.S.partial).toBe(false); // QKᵀ is exact at every n (the factor route)
      expect(part.rankS).toBe(16);
      expect(await page.textContent('#article-note')).toMatch(/is ≤ \d+(\.\d+)?% .*top \d+ σ only: σ² lower bounds \(≥\), the error an upper bound \(≤\)/);
      expect(errors).toEqual([]);
    } finally { await b.close(); }
  });

  it('scores beyond float32 (own Q, K of size 1e19): QKᵀ drawn, no exp(QKᵀ) curve, and the note says why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-article-'));
    const b = await launch({ width: 1280, height: 800 });
    try {
      // q·k ≈ 1e38·d leaves float32's range: the library's exp(S − max) then has no spectrum
      let x = 1;
      const next = () => { x = (x * 48271) % 2147483647; return x / 2147483647 - 0.5; };
      const mat = (s) => Array.from({ length: 32 }, () => Array.from({ length: 8 }, () => s * next()));
      writeFileSync(join(dir, 'big.json'), JSON.stringify({ q: mat(4e19), k: mat(4e19), v: mat(1) }));
      const { page, errors } = await openLab(b.context, server.url, { hash: 'src=file&variant=softmax&figs=article' });
      await page.setInputFiles('#qkv-files', [join(dir, 'big.json')]);
      await page.waitForFunction(() => window.attnviz.state.n === 32, null, { timeout: 20000 });
      const part = await articlePart(page);
      expect(part.overflow).toBe(true);
      expect(part.E).toBe(null);
      expect(part.rankS).toBe(8);
      expect(await page.textContent('#article-note')).toMatch(/exp\(QKᵀ\) has no curve: its spectrum could not be computed/);
      expect(errors).toEqual([]);
    } finally { await b.close(); rmSync(dir, { recursive: true, force: true }); }
  });
});
