#!/usr/bin/env node
// page.mjs: the lab's responsiveness in headless Chromium. For n = 256 and 1024 (d = 64): the time
// from a slider input event (focused p, during a drag: the fast spectrum route) to the end of the
// animation-frame commit that draws the new heatmaps and readouts, and to the commit that draws the new
// spectrum; and the longest main-thread frame gap during the drag (input is never blocked longer).
// Appends {name, n, d, ms, baseline, baseline_ms} records to build/bench.json (baseline: the target of
// docs/performance.md). Needs `make web`. Usage: node bench/page.mjs [samples=15]
// (ATTNVIZ_WEB=dir serves another build of the page, e.g. an older one for a comparison in one sitting.)
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { serve } from '../scripts/serve.mjs';
import { launch, openLab } from '../tests/e2e/browser.mjs';

const SAMPLES = Number(process.argv[2] ?? 15);
const TARGETS = { 256: { heat: 16, spec: 33 }, 1024: { heat: 33, spec: null } };
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

async function measure(page, n) {
  return page.evaluate(async ({ samples }) => {
    const lab = window.attnviz;
    const input = document.getElementById('k-p');
    input.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));  // a drag: fast spectrum route
    let gap = 0, last = performance.now(), run = true;
    const tick = () => { const t = performance.now(); gap = Math.max(gap, t - last); last = t; if (run) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    const heat = [], spec = [];
    const until = (f) => new Promise((ok) => { const poll = () => (f() ? ok() : setTimeout(poll, 1)); poll(); });
    for (let i = 0; i < samples + 3; i++) {
      input.value = String(2 + ((i * 0.7) % 6));
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const seq = lab.stats.seq;
      const t0 = lab.stats.inputAt.get(seq);
      await until(() => lab.stats.heatAt.has(seq) && lab.stats.specAt.has(seq));
      if (i >= 3) { heat.push(lab.stats.heatAt.get(seq) - t0); spec.push(lab.stats.specAt.get(seq) - t0); }
      await new Promise((ok) => setTimeout(ok, 50));
    }
    run = false;
    return { heat, spec, gap };
  }, { samples: SAMPLES });
}

const server = await serve(process.env.ATTNVIZ_WEB ?? 'build/web', 0);
const browser = await launch();
const records = [];
try {
  for (const n of [256, 1024]) {
    const { page, errors } = await openLab(browser.context, server.url, { hash: `v=1&variant=focused&n=${n}&d=64` });
    await measure(page, n); // warm-up (V8 tiers up the wasm)
    const r = await measure(page, n);
    const h = median(r.heat), s = median(r.spec);
    console.log(`n = ${n}, d = 64: input → heatmaps+readouts ${h.toFixed(1)} ms (median of ${r.heat.length}, max ${Math.max(...r.heat).toFixed(1)}), ` +
      `input → spectrum ${s.toFixed(1)} ms (max ${Math.max(...r.spec).toFixed(1)}), longest frame gap ${r.gap.toFixed(1)} ms` +
      `${errors.length ? `; console errors: ${errors.join(' | ')}` : ''}`);
    records.push({ name: 'page_input_to_heatmaps', n, d: 64, ms: h, baseline: 'target (docs/performance.md)', baseline_ms: TARGETS[n].heat });
    records.push({ name: 'page_input_to_spectrum', n, d: 64, ms: s, baseline: 'target (docs/performance.md)', baseline_ms: TARGETS[n].spec });
    records.push({ name: 'page_longest_frame_gap_while_dragging', n, d: 64, ms: r.gap, baseline: 'one 60 Hz frame', baseline_ms: 16.7 });
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}
await mkdir('build', { recursive: true });
let all = [];
try { all = JSON.parse(await readFile('build/bench.json', 'utf8')); if (!Array.isArray(all)) all = []; } catch { all = []; }
await writeFile('build/bench.json', `${JSON.stringify([...all, ...records], null, 1)}\n`);
console.log(`appended ${records.length} records to build/bench.json`);
