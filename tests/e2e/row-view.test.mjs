// row-view.test.mjs: the single-row view (web/ui/row-view.mjs) in Debian's headless Chromium. It shows on
// the lessons about spikiness, follows the row a heatmap click or the keyboard cursor selects, and its part
// of window.attnviz.panels() equals the row entropy and keys for 90 % recomputed here, from the definitions,
// on the native CLI's M (the variant's and softmax's) for that row: from this thread's engine at n ≤ 384,
// from the background worker above.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';
import { readNpy } from '../js/npy.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';

const ROOT = 'build/web';
const CLI = process.env.ATTNVIZ_CLI || new URL('../../build/native/attnviz', import.meta.url).pathname;
const AV = existsSync(`${ROOT}/attnviz.wasm`) ? await loadAttnviz({ source: new URL(`../../${ROOT}/attnviz.wasm`, import.meta.url) }) : null;
const schema = AV ? buildSchema(AV.registry) : null;
let server, tmp;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !AV) throw new Error('run `make web` first');
  if (!existsSync(CLI)) throw new Error('run `make cli` first');
  tmp = mkdtempSync(join(tmpdir(), 'attnviz-row-'));
  server = await serve(ROOT, 0);
});
afterAll(async () => { await server?.close(); if (tmp) rmSync(tmp, { recursive: true, force: true }); });

function cli(...args) {
  const p = spawnSync(CLI, args.map(String), { encoding: 'utf8' });
  if (p.status !== 0) throw new Error(`attnviz ${args.join(' ')}: exit ${p.status}: ${p.stderr}`);
}

/** The CLI's M for the page's state `st`, and softmax's on the same Q, K with its scale and mask. */
function matrices(st) {
  const req = schema.requestOf(st);
  const { gen, n, d, std, seed } = req.inputs;
  const dir = join(tmp, `${gen}-${n}-${d}-${std}-${seed}`);
  if (!existsSync(dir)) cli('generate', '--gen', gen, '--n', n, '--d', d, '--std', std, '--seed', seed, '-o', dir);
  const flags = (only) => AV.registry.knobs.flatMap((k) => {
    let v = req.knobs[k.key];
    if (v === undefined || (only && !only.includes(k.key))) return [];
    if (k.minus1_zero && v === -1) v = 0;
    return k.type === 'bool' ? (v ? [k.flag] : []) : [k.flag, String(v)];
  });
  const run = (variant, f, out) => { cli('matrix', '--variant', variant, '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), ...f, '-o', out); return readNpy(out).data; };
  return { n, causal: !!req.knobs.causal, M: run(req.knobs.variant, flags(), join(tmp, 'M.npy')), A: run('softmax', flags(['scale', 'causal']), join(tmp, 'A.npy')) };
}

/** docs/readouts.md's row entropy and keys for 90 %, for row i of an n×n matrix over its m allowed keys. */
function definition(X, n, i, m) {
  const row = Array.from(X.subarray(i * n, i * n + m));
  const sum = row.reduce((a, x) => a + x, 0);
  const entropy = -row.reduce((a, x) => (x > 0 ? a + (x / sum) * Math.log(x / sum) : a), 0);
  const sorted = row.slice().sort((a, b) => b - a);
  let k = 0;
  for (let acc = 0; acc < (0.9 - 1e-12) * sum; k++) acc += sorted[k];
  return { entropy, keys_for_90: k };
}

function expectRow(part, mats, i) {
  const m = mats.causal ? i + 1 : mats.n;
  expect(part.row).toBe(i);
  expect(part.current).toBe(true);
  for (const [k, X] of [['M', mats.M], ['A', mats.A]]) {
    const want = definition(X, mats.n, i, m);
    expect(Math.abs(part[k].entropy - want.entropy), `${k} row ${i}: ${part[k].entropy} vs ${want.entropy}`).toBeLessThan(1e-6);
    expect(part[k].keys_for_90, `${k} row ${i}`).toBe(want.keys_for_90);
    expect(part[k].allowed).toBe(m);
  }
}

const rowPart = (page) => page.evaluate(() => window.attnviz.panels().row);
const stateOf = async (page) => schema.fromHash((await page.evaluate(() => location.hash)).slice(1).replace(/^preset=[^&]*&/, '')).state;

describe('the single-row view', () => {
  it('shows one row of M and of softmax on first-look, and follows the row a heatmap selects', async () => {
    const b = await launch({ width: 1024, height: 768 });
    const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=first-look' });
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await page.$eval('#row-view', (e) => e.classList.contains('hl') && e.getBoundingClientRect().height > 100)).toBe(true);
    const mats = matrices(await stateOf(page));
    let part = await rowPart(page);
    expectRow(part, mats, 128);
    // the lesson's claim, one row at a time: elu+1's row is nearly uniform, softmax's a spike
    expect(part.M.entropy).toBeGreaterThan(part.A.entropy + 2);
    expect(await page.textContent('#row-M')).toContain(`entropy ${part.M.entropy.toFixed(2)}`);
    // focus alone (Tab) selects nothing: the cursor's cell 0, 0 is not the reader's pick
    await page.focus('#hm-M');
    await page.waitForTimeout(200);
    expect((await rowPart(page)).row).toBe(128);
    // a click on row 40 of the softmax heatmap selects row 40; the cell cursor's ↓ row 41
    const p = await page.$eval('#hm-A', (c) => { const r = c.getBoundingClientRect(); return { x: r.left + (10.5 / 256) * r.width, y: r.top + (40.5 / 256) * r.height }; });
    await page.mouse.click(p.x, p.y);
    await page.waitForFunction(() => window.attnviz.panels().row.row === 40);
    expectRow(await rowPart(page), mats, 40);
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => window.attnviz.panels().row.row === 41);
    expectRow(await rowPart(page), mats, 41);
    expect(await page.$eval('#row-pick', (s) => s.value)).toBe('41');
    await page.screenshot({ path: 'build/row-view-1024.png' });
    expect(errors).toEqual([]);
    await b.close();
  });

  it('the slider picks the row; above n = 384 the row comes from the background worker, causal rows read i + 1 keys', async () => {
    const b = await launch({ width: 1366, height: 900 });
    const { page, errors } = await openLab(b.context, server.url, { hash: 'v=1&gen=clustered&variant=focused&p=4&n=512&d=32&causal=1' });
    await page.evaluate(() => window.attnviz.snapshot());
    // no lesson: the view is folded, computes nothing and has no part; its summary opens it
    expect(await page.$eval('#row-view', (e) => e.open)).toBe(false);
    expect(await rowPart(page)).toBe(undefined);
    await page.click('#row-view > summary');
    await page.waitForFunction(() => window.attnviz.panels().row?.current);
    const mats = matrices(await stateOf(page));
    expectRow(await rowPart(page), mats, 256);
    await page.$eval('#row-pick', (s) => { s.value = '300'; s.dispatchEvent(new Event('input', { bubbles: true })); });
    await page.waitForFunction(() => window.attnviz.panels().row?.row === 300 && window.attnviz.panels().row.current);
    expectRow(await rowPart(page), mats, 300);
    // a new state: the row is asked for again
    await page.evaluate(() => { location.hash = location.hash.replace(/&p=[^&]*/, '&p=2'); });
    await page.evaluate(() => window.attnviz.snapshot());
    await page.waitForFunction(() => window.attnviz.panels().row?.current);
    expectRow(await rowPart(page), matrices(await stateOf(page)), 300);
    expect(errors).toEqual([]);
    await b.close();
  });

  it('is drawn in dark theme and in projector mode', async () => {
    const b = await launch({ width: 1920, height: 1080, colorScheme: 'dark' });
    const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=hedgehog-spiky&projector=1' });
    await page.evaluate(() => window.attnviz.snapshot());
    const part = await rowPart(page);
    expect(part.M.entropy).not.toBe(null);
    expect(await page.$eval('#row-view', (e) => e.classList.contains('hl'))).toBe(true);
    const sizes = await page.$$eval('#row-view :is(label, output, span, p)', (els) => els.map((e) => parseFloat(getComputedStyle(e).fontSize)));
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(18);
    await page.$eval('#row-view', (e) => e.scrollIntoView());
    await page.screenshot({ path: 'build/row-view-projector-dark.png' });
    // a lesson that does not cite it folds it
    await page.evaluate(() => { location.hash = '#preset=rank-le-d'; });
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await page.$eval('#row-view', (e) => e.open)).toBe(false);
    expect(await rowPart(page)).toBe(undefined);
    expect(errors).toEqual([]);
    await b.close();
  });
});
