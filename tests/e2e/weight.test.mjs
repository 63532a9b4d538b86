// The weight of a figure in a post (issue 32, item 4; docs/performance.md, "Weight"), counted in Chromium
// with bench/transfers.mjs (cold cache, the lab and the post on two origins): one heatmap <attn-viz>
// downloads embed.js, the chunk it shares with the page and the wasm, no more than the budget (gzip -9 of
// the files fetched: bytes are deterministic, unlike time), and neither KaTeX nor uPlot; a readouts element,
// whose formulas are on screen, does fetch KaTeX and shows them; a post with two iframes and two elements
// downloads every file, the wasm and KaTeX included, once. And the sizes the docs quote are the built ones
// (build/sizes.json, written by scripts/sizes.mjs in make web).
import { describe, it, expect } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { loadPost, gzipTotal, downloadsOf, HEATMAP_ELEMENT, HEATMAP_ELEMENT_BUDGET, MIXED_POST } from '../../bench/transfers.mjs';

const ROOT = process.env.ATTNVIZ_WEB ?? 'build/web'; // another build's weight: ATTNVIZ_WEB=DIR
if (!existsSync(`${ROOT}/index.html`) || !existsSync('build/sizes.json')) throw new Error('run `make web` first');
const doc = (f) => readFileSync(f, 'utf8');

/** Whether a figure written in the docs (`written`, a string such as '1.9' or '255') stands for `measured`
 *  (the same unit): within its own rounding (half a unit of its last digit) or 5 %, whichever is larger. */
function stands(written, measured) {
  const decimals = written.includes('.') ? written.split('.')[1].length : 0;
  return Math.abs(Number(written) - measured) <= Math.max(0.5 * 10 ** -decimals, 0.05 * measured);
}

describe('weight', () => {
  it('one heatmap element downloads embed.js, its shared chunk and the wasm: within the budget, no KaTeX, no uPlot', async () => {
    const { requests } = await loadPost(ROOT, { elements: [HEATMAP_ELEMENT] });
    const paths = requests.map((r) => r.path);
    expect(paths.filter((p) => /katex|uPlot/i.test(p))).toEqual([]);
    expect(paths).toContain('/embed.js');
    expect(paths.filter((p) => p.endsWith('.wasm'))).toHaveLength(1);
    const total = gzipTotal(ROOT, requests);
    expect(total.gzip, total.rows.map((r) => `${r.path} ${r.gzip}`).join(', ')).toBeLessThanOrEqual(HEATMAP_ELEMENT_BUDGET);
    // docs/performance.md states the budget this test holds, and the measured figure
    const row = doc('docs/performance.md').match(/\| one heatmap `<attn-viz>`[^|]*\| ≤ (\d+) KB \(measured: (\d+) KB in (\d+) files/);
    expect(row, 'the weight row of docs/performance.md').not.toBeNull();
    expect(Number(row[1]) * 1000).toBe(HEATMAP_ELEMENT_BUDGET);
    expect(stands(row[2], total.gzip / 1000), `docs say ${row[2]} KB, measured ${(total.gzip / 1000).toFixed(1)} KB`).toBe(true);
    expect(Number(row[3])).toBe(total.rows.length);
  });

  it('a readouts element, its formulas on screen, fetches KaTeX and typesets them', async () => {
    const { requests, probed: math } = await loadPost(ROOT, { elements: ['view="readouts" variant="performer"'] },
      { probe: () => Promise.all([...document.querySelectorAll('attn-viz')].map((el) => el.snapshot()))
        .then(() => new Promise((ok) => setTimeout(ok, 300)))
        .then(() => document.querySelector('attn-viz').shadowRoot.querySelectorAll('.readouts td.f math').length) });
    expect(downloadsOf(requests, /katex/)).toBe(1);
    expect(math).toBeGreaterThan(3);
  });

  it('a post with two iframes and two elements downloads every file once: the wasm once, KaTeX once', async () => {
    const { requests } = await loadPost(ROOT, MIXED_POST);
    expect(downloadsOf(requests, /\/attnviz(-scalar)?\.wasm$/)).toBe(1);
    expect(downloadsOf(requests, /katex/)).toBe(1);
    const bodies = new Map();
    for (const r of requests) if (r.status === 200) bodies.set(r.path, (bodies.get(r.path) ?? 0) + 1);
    expect([...bodies].filter(([, n]) => n > 1)).toEqual([]);
  });
});

describe('the sizes the docs quote', () => {
  const sizes = JSON.parse(doc('build/sizes.json'));
  it('docs/embedding.md: the single file', () => {
    const m = doc('docs/embedding.md').match(/one HTML file \(([\d.]+) MB, ([\d.]+) MB gzip\)/);
    expect(m, 'the single file\'s size in docs/embedding.md').not.toBeNull();
    expect(stands(m[1], sizes.single.bytes / 1e6), `${m[1]} MB written, ${sizes.single.bytes} bytes built`).toBe(true);
    expect(stands(m[2], sizes.single.gzip / 1e6), `${m[2]} MB gzip written, ${sizes.single.gzip} bytes built`).toBe(true);
  });
  it('docs/embedding.md: embed.js and the wasm', () => {
    const m = doc('docs/embedding.md').match(/`embed\.js` \((\d+) KB, (\d+) KB gzip\)[^]*?`attnviz\.wasm` \((\d+) KB, (\d+) KB gzip[;)]/);
    expect(m, 'embed.js and the wasm\'s sizes in docs/embedding.md').not.toBeNull();
    const pairs = [[m[1], sizes.embed.bytes], [m[2], sizes.embed.gzip], [m[3], sizes.wasm.bytes], [m[4], sizes.wasm.gzip]];
    for (const [written, built] of pairs) expect(stands(written, built / 1000), `${written} KB written, ${built} bytes built`).toBe(true);
  });
  it('the rounding rule allows a figure\'s own rounding, and fails a figure 10 % off', () => {
    expect(stands('1.9', 1.873)).toBe(true);
    expect(stands('0.9', 1.873)).toBe(false); // the figure docs/embedding.md gave before
    expect(stands('255', 255.1)).toBe(true);
    expect(stands('255', 283)).toBe(false);
  });
});
