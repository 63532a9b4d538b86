// Above n = 2048 the page's spectrum is the top 32 σ by randomized iteration (docs/readouts.md, "Bounds and
// estimates"): in Debian's headless Chromium at n = 4096, snapshot() never holds a spectral number that
// is not exact without its mark (`<key>_bound` or `<key>_method`), the exported JSON carries the same
// marks, and the screen shows them (≥, ≤) with the reason on hover. tests/js/estimates.test.mjs checks
// that each mark is true against the full spectrum.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, exportItem } from './browser.mjs';
import { SPECTRAL_KEYS } from '../../web/compute/spectral.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

const ROOT = 'build/web';
let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  await loadAttnviz({ source: new URL(`../../${ROOT}/attnviz.wasm`, import.meta.url) }); // fills SPECTRAL_KEYS from its registry
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const marked = (r, k) => typeof r[`${k}_bound`] === 'string' || typeof r[`${k}_method`] === 'string';

describe('n = 4096: the top-k spectrum', () => {
  it('snapshot() and the exported JSON mark every bound; the screen shows it', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=softmax&n=4096&d=64&causal=1' });
    const snap = await page.evaluate(() => window.attnviz.snapshot());
    const r = snap.readouts;
    expect(r.n).toBe(4096);
    expect(r.route).toBe('topk');
    // every spectral number of the top 32 out of 4096 is a bound: none without its mark (noise_floor is
    // the route's own floor, 1e-7·σ̂₁, not a property of M)
    const unmarked = SPECTRAL_KEYS.filter((k) => k !== 'noise_floor' && typeof r[k] === 'number' && !marked(r, k));
    expect(unmarked).toEqual([]);
    for (const k of ['sigma1', 'rank', 'rank_rel_1e-3', 'rank_rel_1e-2', 'stable_rank']) expect(typeof r[k], k).toBe('number');
    expect(r.sigma1_bound).toBe('lower');
    expect(r.rank_bound).toBe('lower');
    expect(r['rank_rel_1e-3_bound']).toBe('lower');
    expect(r.stable_rank_bound).toBe('upper');
    expect(r.singular_values.length).toBe(32);
    expect(r.singular_values_bound).toBe('lower');
    expect(r.error_curve_bound).toBe('upper');
    // the entry readouts are computed from all of M: exact, unmarked
    for (const k of ['row_entropy_mean', 'error_fro_rel', 'row_kl_mean']) expect(marked(r, k), k).toBe(false);
    // the exported JSON is the snapshot, marks included
    const json = JSON.parse((await exportItem(page, 'state.json')).bytes.toString());
    expect(json.readouts).toEqual(JSON.parse(JSON.stringify(r)));
    expect(json.readouts.rank_bound).toBe('lower');
    // the spectrum figure's caption says its curves are the top k's
    const svg = (await exportItem(page, 'spectrum.svg')).bytes.toString();
    expect(svg).toMatch(/randomized iteration: each σ̂ᵢ ≤ σᵢ/);
    // on screen: the marks and their reason on hover
    const cell = async (id) => page.locator(`#readout-table tr[data-readout="${id}"] td.v`).evaluate((td) => ({ text: td.textContent, title: td.title }));
    const rank = await cell('rank'), stable = await cell('stable_rank');
    expect(rank.text).toMatch(/^≥ \d+ \/ 4096$/);
    expect(rank.title).toMatch(/lower bound/);
    expect(stable.text).toMatch(/^≤ /);
    expect(stable.title).toMatch(/upper bound/);
    // the e(r) chart is an upper bound (error_curve_bound): its heading's note says so
    expect(await page.textContent('#err-note')).toMatch(/upper bound/);
    // the zoom's inputs hold a 4-digit index without clipping it
    const clipped = await page.$$eval('.zoom-box input', (xs) => xs.filter((x) => x.scrollWidth > x.clientWidth
      || (() => { // the digits' width against the room the input leaves them (its spin buttons included)
        const c = document.createElement('canvas').getContext('2d'), cs = getComputedStyle(x);
        c.font = `${cs.fontSize} ${cs.fontFamily}`;
        return c.measureText('4095').width > x.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16;
      })()).map((x) => x.className));
    expect(clipped).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
