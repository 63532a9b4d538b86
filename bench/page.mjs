#!/usr/bin/env node
// page.mjs: the lab's responsiveness in headless Chromium (docs/performance.md).
// n = 256 and 1024 (d = 64): the time from a slider input event (focused p, during a drag: the fast
// spectrum route) to the end of the animation-frame commit that draws the new heatmaps, to the one that
// has drawn the readouts that need no spectrum as well, and to the one that draws the new spectrum; and
// the main thread's frame gaps during the drag (95th percentile and longest) and its tasks of 50 ms or more
// (the Long Tasks API: none means no single task held an input that long).
// n = 4096: a continuous drag (an input event every 30 ms for 3 s, as a hand moves a slider) of a
// variant with factors (focused p: block means from the factors) and of one without
// (softmax's scale: a draft): heatmap frames drawn per second and their latency.
// Appends {name, n, d, ms, baseline, baseline_ms} records to build/bench.json (baseline: the target of
// docs/performance.md). Needs `make web`. Usage: node bench/page.mjs [samples=15]
// (ATTNVIZ_WEB=dir serves another build of the page, e.g. an older one for a comparison in one sitting;
// ATTNVIZ_PAGE_N=1024 or 256,4096 measures only those sizes.)
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { serve } from '../scripts/serve.mjs';
import { launch, openLab } from '../tests/e2e/browser.mjs';

const SAMPLES = Number(process.argv[2] ?? 15);
const SIZES = (process.env.ATTNVIZ_PAGE_N ?? '256,1024,4096').split(',').map(Number);
const TARGETS = { 256: { heat: 16, spec: 33 }, 1024: { heat: 33, spec: null } };
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

async function measure(page, n, samples = SAMPLES) {
  return page.evaluate(async ({ samples }) => {
    const lab = window.attnviz;
    const input = document.getElementById('k-p');
    input.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));  // a drag: fast spectrum route
    // frame gaps and tasks of 50 ms or more on the page's thread (the Long Tasks API), counted from the
    // first measured input on (`counting`)
    let gap = 0, last = performance.now(), run = true, counting = false;
    const gaps = [];
    const tick = () => {
      const t = performance.now();
      if (counting) { gaps.push(t - last); gap = Math.max(gap, t - last); }
      last = t;
      if (run) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    let longTasks = 0, longest = 0;
    const seen = (entries) => { if (counting) for (const e of entries) { longTasks += 1; longest = Math.max(longest, e.duration); } };
    const obs = new PerformanceObserver((list) => seen(list.getEntries()));
    obs.observe({ type: 'longtask' });
    const heat = [], plain = [], spec = [];
    const until = (f) => new Promise((ok) => { const poll = () => (f() ? ok() : setTimeout(poll, 1)); poll(); });
    for (let i = 0; i < samples + 3; i++) {
      if (i === 3) { seen(obs.takeRecords()); counting = true; } // the first three inputs are not measured
      input.value = String(2 + ((i * 0.7) % 6));
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const seq = lab.stats.seq;
      const t0 = lab.stats.inputAt.get(seq);
      await until(() => lab.stats.heatAt.has(seq) && lab.stats.plainAt.has(seq) && lab.stats.specAt.has(seq));
      if (i >= 3) {
        heat.push(lab.stats.heatAt.get(seq) - t0);
        plain.push(Math.max(lab.stats.heatAt.get(seq), lab.stats.plainAt.get(seq)) - t0);
        spec.push(lab.stats.specAt.get(seq) - t0);
      }
      await new Promise((ok) => setTimeout(ok, 50));
    }
    run = false;
    seen(obs.takeRecords());
    obs.disconnect();
    input.dispatchEvent(new Event('change', { bubbles: true }));
    gaps.sort((a, b) => a - b);
    const p95 = gaps.length ? gaps[Math.ceil(0.95 * gaps.length) - 1] : 0; // nearest rank
    return { heat, plain, spec, gap, gapP95: p95, longTasks, longest };
  }, { samples });
}

/** A continuous drag of slider `id` over `values` (one input event every `every` ms for `seconds`):
 * heatmap frames drawn per second during it, their median latency, and the note the page shows. */
async function dragRate(page, id, values, { seconds = 3, every = 30 } = {}) {
  return page.evaluate(async ({ id, values, seconds, every }) => {
    const lab = window.attnviz;
    const input = document.getElementById(id);
    input.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
    const first = lab.stats.seq + 1, t0 = performance.now();
    let i = 0, note = '';
    while (performance.now() - t0 < seconds * 1000) {
      input.value = String(values[i++ % values.length]);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((ok) => setTimeout(ok, every));
      note = document.getElementById('ds-note').textContent || note;
    }
    const t1 = performance.now(), last = lab.stats.seq;
    const latency = [];
    let frames = 0;
    for (let s = first; s <= last; s++) {
      const h = lab.stats.heatAt.get(s);
      if (h !== undefined && h <= t1) { frames += 1; latency.push(h - lab.stats.inputAt.get(s)); }
    }
    input.dispatchEvent(new Event('change', { bubbles: true }));
    latency.sort((a, b) => a - b);
    return { fps: frames / ((t1 - t0) / 1000), frames, inputs: last - first + 1, latency: latency[latency.length >> 1] ?? null, note };
  }, { id, values, seconds, every });
}

const server = await serve(process.env.ATTNVIZ_WEB ?? 'build/web', 0);
const browser = await launch();
const records = [];
try {
  for (const n of [256, 1024].filter((n) => SIZES.includes(n))) {
    const { page, errors } = await openLab(browser.context, server.url, { hash: `v=1&variant=focused&n=${n}&d=64` });
    await measure(page, n, Math.max(SAMPLES, 45)); // warm-up: V8 optimises the module over the first few dozen inputs
    const r = await measure(page, n);
    const h = median(r.heat), p = median(r.plain), s = median(r.spec);
    console.log(`n = ${n}, d = 64: input → heatmaps ${h.toFixed(1)} ms, → heatmaps and plain readouts ${p.toFixed(1)} ms (median of ${r.heat.length}, max ${Math.max(...r.plain).toFixed(1)}), ` +
      `input → spectrum ${s.toFixed(1)} ms (max ${Math.max(...r.spec).toFixed(1)}), frame gaps: 95th percentile ${r.gapP95.toFixed(1)} ms, longest ${r.gap.toFixed(1)} ms; ` +
      `tasks ≥ 50 ms on the page's thread: ${r.longTasks}${r.longTasks ? ` (longest ${r.longest.toFixed(0)} ms)` : ''}` +
      `${errors.length ? `; console errors: ${errors.join(' | ')}` : ''}`);
    records.push({ name: 'page_input_to_heatmaps', n, d: 64, ms: h, baseline: 'target (docs/performance.md)', baseline_ms: TARGETS[n].heat });
    records.push({ name: 'page_input_to_heatmaps_and_plain_readouts', n, d: 64, ms: p, baseline: 'target (docs/performance.md)', baseline_ms: TARGETS[n].heat });
    records.push({ name: 'page_input_to_spectrum', n, d: 64, ms: s, baseline: 'target (docs/performance.md)', baseline_ms: TARGETS[n].spec });
    records.push({ name: 'page_longest_frame_gap_while_dragging', n, d: 64, ms: r.gap, baseline: 'one 60 Hz frame', baseline_ms: 16.7 });
    records.push({ name: 'page_frame_gap_p95_while_dragging', n, d: 64, ms: r.gapP95, baseline: 'one 60 Hz frame', baseline_ms: 16.7 });
    records.push({ name: 'page_long_tasks_while_dragging', n, d: 64, ms: r.longest, count: r.longTasks, baseline: 'none (tasks ≥ 50 ms)', baseline_ms: 50 });
    await page.close();
  }
  // n = 4096: frames per second while dragging (target ≥ 10)
  for (const [label, hash, id, values] of [
    ['focused p (factors)', 'v=1&variant=focused&n=4096&d=64', 'k-p', [2, 2.5, 3, 3.5, 4, 4.5, 5, 4.5, 4, 3.5, 3, 2.5]],
    ['softmax scale (draft)', 'v=1&variant=softmax&n=4096&d=64', 'k-scale', [0.1, 0.15, 0.2, 0.25, 0.3, 0.25, 0.2, 0.15]],
  ].filter(() => SIZES.includes(4096))) {
    const { page, errors } = await openLab(browser.context, server.url, { hash });
    await page.waitForFunction(() => window.attnviz.snapshot() !== null, null, { timeout: 120000 }); // the full first view
    await dragRate(page, id, values, { seconds: 1 }); // warm-up
    await page.waitForFunction(() => window.attnviz.snapshot() !== null, null, { timeout: 120000 });
    const r = await dragRate(page, id, values);
    console.log(`n = 4096, d = 64, dragging ${label}: ${r.fps.toFixed(1)} heatmap frames/s (${r.frames} of ${r.inputs} inputs drawn), ` +
      `latency ${r.latency?.toFixed(0) ?? '—'} ms; the page said: "${r.note}"${errors.length ? `; console errors: ${errors.join(' | ')}` : ''}`);
    records.push({ name: `page_drag_heatmap_fps ${label}`, n: 4096, d: 64, ms: 1000 / Math.max(r.fps, 1e-9), baseline: 'target: 10 frames/s (ms per frame)', baseline_ms: 100, fps: r.fps });
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
