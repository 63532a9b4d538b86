// The overview of every layer and head (issue 28) in Debian's headless Chromium, on a real model's
// capture (stories260K from ../shared, else the tiny checkpoint model.test.mjs writes): the metric picked
// recolours every tile on one shared scale whose legend shows its ends; the CSV holds the values the page
// reports for a head when it is opened; every '—' (tiles, readout rows, CSV) carries its reason; the
// text the tiles are computed on is named.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';
import { STORIES, skipped } from '../js/shared-data.mjs';
import { tinyFiles } from './tiny-model.mjs';

const ROOT = 'build/web';
const CLI = 'build/native/attnviz';
const HAVE = existsSync(join(STORIES, 'stories260K.bin'));
const TEXT = HAVE ? 'Once upon a time, there was a little dog named Max. He liked to run.' : 'a a a';
let server, browser, files;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  if (!existsSync(CLI)) throw new Error('run `make cli` first');
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
  files = HAVE ? { model: join(STORIES, 'stories260K.bin'), tok: join(STORIES, 'tok512.bin') } : tinyFiles(mkdtempSync(join(tmpdir(), 'attnviz-e2e-ov-')));
  if (!HAVE) skipped('e2e overview.test.mjs: the page on stories260K; a tiny checkpoint stands in');
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const TOTAL = HAVE ? 40 : 8;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations inside the overview (as a11y.test.mjs, for the page). */
async function axeProblems(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => window.axe.run('#overview', { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

/** The lab in model mode on TEXT with the overview open and complete; returns the page and its overview(). */
async function openOverview(hash) {
  const { page, errors } = await openLab(browser.context, server.url, { hash });
  await page.setInputFiles('#model-files', [files.tok, files.model]);
  await page.waitForFunction(() => !document.querySelector('#model-text').disabled && !document.querySelector('#model-text').hidden, null, { timeout: 30000 });
  await page.fill('#model-text', TEXT);
  await page.evaluate(() => window.attnviz.snapshot());
  await page.click('#overview > summary');
  const ov = await page.evaluate(() => window.attnviz.overview());
  return { page, errors, ov };
}

const tiles = (page) => page.$$eval('.ov-cell', (els) => els.map((b) => ({
  layer: Number(b.dataset.layer), head: Number(b.dataset.head), text: b.querySelector('.ov-cap').textContent, bg: getComputedStyle(b).backgroundColor,
  title: b.title, label: b.querySelector('.sr-only').textContent.trim(),
})));

/** The overview's CSV, through its export button. */
async function csvOf(page) {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.click('[data-ov-export="csv"]')]);
  const path = join(mkdtempSync(join(tmpdir(), 'attnviz-dl-')), dl.suggestedFilename());
  await dl.saveAs(path);
  const [header, ...lines] = readFileSync(path, 'utf8').trimEnd().split('\n');
  // the reason, the last field, is quoted when it holds a comma or a quote
  const unquote = (f) => (f.startsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f);
  return { name: dl.suggestedFilename(), header, rows: lines.map((l) => {
    const [layer, head, metric, value, ...reason] = l.split(',');
    return { layer: Number(layer), head: Number(head), metric, value, reason: unquote(reason.join(',')) };
  }) };
}

const close = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

describe('the overview of every layer and head: a metric, one scale, its exports', () => {
  it('recolours every tile by the metric picked, on one scale whose legend shows its min and max', async () => {
    const { page, errors, ov } = await openOverview('src=model&variant=elu');
    expect(ov.open && ov.done).toBe(true);
    expect(ov.metric).toBe('error_fro_rel');
    expect(ov.rows.length).toBe(TOTAL);
    // the metric picker is labelled and in the link (snapshot().state)
    expect(await page.$eval('label[for="k-ov_metric"]', (l) => l.textContent)).toBe('colour by');
    expect((await page.evaluate(() => window.attnviz.snapshot())).state.ov_metric).toBe('error_fro_rel');
    const before = await tiles(page);
    // the shared scale: the tile of the least value in the colour map's first colour, the greatest in its last
    const values = ov.rows.map((r) => r.value);
    expect(values.every((v) => Number.isFinite(v))).toBe(true);
    expect(ov.lo).toBe(Math.min(...values));
    expect(ov.hi).toBe(Math.max(...values));
    expect(before[values.indexOf(ov.lo)].bg).toBe('rgb(68, 1, 84)'); // viridis #440154
    expect(before[values.indexOf(ov.hi)].bg).toBe('rgb(253, 231, 37)'); // viridis #fde725
    const legend = await page.$eval('.ov-legend', (e) => ({ title: e.querySelector('.ov-legend-title').textContent, lo: e.querySelector('.ov-min').textContent,
      hi: e.querySelector('.ov-max').textContent, cmap: e.querySelector('.ov-cmap').textContent, label: e.getAttribute('aria-label') }));
    expect(legend.title).toBe('error vs softmax (‖M − A‖F / ‖A‖F, relative (no unit))');
    expect(Number(legend.lo)).toBeCloseTo(ov.lo, 3 - Math.ceil(Math.log10(ov.lo)));
    expect(Number(legend.hi)).toBeCloseTo(ov.hi, 3 - Math.ceil(Math.log10(ov.hi)));
    expect(legend.cmap).toBe('viridis');
    expect(legend.label).toContain(`from ${legend.lo} to ${legend.hi}`);
    // another metric: the link says so, and the tiles take its colours on its own scale
    await page.selectOption('#k-ov_metric', 'effective_rank');
    const ranked = await page.evaluate(() => window.attnviz.overview());
    expect(ranked.metric).toBe('effective_rank');
    expect((await page.evaluate(() => window.attnviz.snapshot())).state.ov_metric).toBe('effective_rank');
    expect(await page.evaluate(() => location.hash)).toContain('ov_metric=effective_rank');
    const after = await tiles(page);
    expect(after.map((t) => t.bg)).not.toEqual(before.map((t) => t.bg));
    const ranks = ranked.rows.map((r) => r.value);
    expect(after[ranks.indexOf(Math.max(...ranks))].bg).toBe('rgb(253, 231, 37)');
    expect(await page.$eval('.ov-legend-title', (e) => e.textContent)).toMatch(/^effective rank \(/);
    // the colour map the reader picks is the scale's
    await page.selectOption('#k-cmap', 'gray');
    await page.evaluate(() => window.attnviz.overview());
    expect((await tiles(page))[ranks.indexOf(Math.max(...ranks))].bg).toBe('rgb(255, 255, 255)');
    expect(await page.$eval('.ov-cmap', (e) => e.textContent)).toBe('gray');
    // the tiles' text against their colours, the picker's label, the buttons: light and dark
    expect(await axeProblems(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.selectOption('#k-cmap', 'magma');
    await page.evaluate(() => window.attnviz.overview());
    expect(await axeProblems(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('exports CSV (layer,head,metric,value,reason) with the values the page reports for each head', async () => {
    const { page, errors } = await openOverview('src=model&variant=focused&ov_metric=row_kl_mean');
    const csv = await csvOf(page);
    expect(csv.name).toBe(`attnviz-focused-n${(await page.evaluate(() => window.attnviz.snapshot())).readouts.n}-overview-row_kl_mean.csv`);
    expect(csv.header).toBe('layer,head,metric,value,reason');
    expect(csv.rows.length).toBe(TOTAL);
    for (const r of csv.rows) expect(r.metric).toBe('row_kl_mean');
    for (const r of csv.rows) expect(r.value === '' ? r.reason.length > 0 : r.reason === '').toBe(true);
    // the CLI's capture of the same text, for its readouts of the same heads
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-ov-cap-'));
    execFileSync(CLI, ['capture', '--model', files.model, '--tokenizer', files.tok, '--text', TEXT, '-o', dir]);
    // open two heads: the readouts the page reports are the CSV's values, for each metric, and the CLI's
    for (const [layer, head] of HAVE ? [[1, 3], [4, 7]] : [[1, 2], [0, 3]]) {
      await page.click(`.ov-cell[data-layer="${layer}"][data-head="${head}"]`);
      const s = await page.evaluate(() => window.attnviz.snapshot());
      const cli = JSON.parse(execFileSync(CLI, ['readouts', '--variant', 'focused', '--causal', '--layer', String(layer), '--head', String(head),
        '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy')]).toString());
      expect([s.state.layer, s.state.head]).toEqual([String(layer), String(head)]);
      for (const [metric, key] of [['row_kl_mean', 'row_kl_mean'], ['error_fro_rel', 'error_fro_rel'], ['output_error_rel', 'output_error_rel'],
        ['effective_rank', 'effective_rank'], ['semiseparable_rank', 'semiseparable_rank']]) {
        await page.selectOption('#k-ov_metric', metric);
        await page.evaluate(() => window.attnviz.overview());
        const row = (await csvOf(page)).rows.find((r) => r.layer === layer && r.head === head);
        if (s.readouts[key] === null) { expect(row.value, metric).toBe(''); expect(row.reason).toBe(s.readouts[`${key}_reason`]); continue; }
        expect(close(Number(row.value), s.readouts[key]), `${metric} at L${layer}H${head}: ${row.value} vs ${s.readouts[key]}`).toBe(true);
        expect(Math.abs(Number(row.value) - cli[key]) <= 1e-12 * Math.max(1, Math.abs(cli[key])), `${metric} at L${layer}H${head}: ${row.value} vs the CLI's ${cli[key]}`).toBe(true);
      }
      await page.selectOption('#k-ov_metric', 'row_entropy');
      await page.evaluate(() => window.attnviz.overview());
      const ent = (await csvOf(page)).rows.find((r) => r.layer === layer && r.head === head);
      expect(close(Number(ent.value), s.readouts.row_entropy_mean / s.readouts.row_entropy_uniform)).toBe(true);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('gives every — its reason: tiles (hover and label), readout rows, the CSV; and names the text', async () => {
    // softmax is its own reference: error, KL and output error are undefined, each with the library's reason
    const { page, errors, ov } = await openOverview('src=model&variant=softmax&ov_metric=row_kl_mean');
    const snap = await page.evaluate(() => window.attnviz.snapshot());
    const reason = snap.readouts.row_kl_mean_reason;
    expect(reason.length).toBeGreaterThan(10);
    expect(ov.rows.every((r) => r.value === null && r.reason === reason)).toBe(true);
    const all = await tiles(page);
    // the head shown (L0H0) reads like the rest, not in the pressed buttons' colours
    const ink = await page.$$eval('.ov-cell', (els) => els.map((b) => getComputedStyle(b).color));
    expect(new Set(ink).size).toBe(1);
    expect(await axeProblems(page)).toEqual([]);
    for (const t of all) {
      expect(t.text).toMatch(/—$/);
      expect(t.title).toContain(`undefined: ${reason}`);
      expect(t.label).toBe(t.title);
    }
    expect(await page.$eval('.ov-note', (e) => e.textContent)).toContain(`${TOTAL} without a value (—: ${reason})`);
    for (const r of (await csvOf(page)).rows) { expect(r.value).toBe(''); expect(r.reason).toBe(reason); }
    // the readout panel: each row showing — says why under its label and on hover
    const rows = await page.$$eval('#readout-table tr', (trs) => trs.map((tr) => ({ id: tr.dataset.readout, v: tr.children[1].textContent,
      title: tr.children[1].title, why: tr.querySelector('.why').textContent })));
    const dashed = rows.filter((r) => r.v.includes('—'));
    expect(dashed.map((r) => r.id)).toEqual(expect.arrayContaining(['error_fro_rel', 'row_kl_mean', 'output_error_rel']));
    for (const r of dashed) { expect(r.why, r.id).not.toBe(''); expect(r.title, r.id).toBe(r.why); }
    // the text the tiles are computed on: its first tokens and its length, in the note and on hover
    const first = snap.tokens.slice(1, 4).join('').trim();
    const note = await page.$eval('.ov-note', (e) => e.textContent);
    expect(note).toContain(`on “${first}`);
    expect(note).toContain(`(${snap.tokens.length} tokens)`);
    expect((await tiles(page))[0].title).toContain(`on “${first}`);
    // the SVG export: every tile's reason as its <title>, the text in the caption
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.click('[data-ov-export="svg"]')]);
    const path = join(mkdtempSync(join(tmpdir(), 'attnviz-dl-')), dl.suggestedFilename());
    await dl.saveAs(path);
    const svg = readFileSync(path, 'utf8');
    expect(svg.match(/undefined: [^<]+<\/title>/g).length).toBe(TOTAL);
    const under = [...svg.matchAll(/class="caption">([^<]*)</g)].map((m) => m[1]).join(' ');
    expect(under).toContain(`(${snap.tokens.length} tokens)`);
    expect(under.split(`${snap.tokens.length} tokens`).length - 1).toBe(1); // the text named once
    expect(errors).toEqual([]);
    await page.close();
  });
});
