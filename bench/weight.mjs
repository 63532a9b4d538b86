#!/usr/bin/env node
// weight.mjs: what a reader downloads and waits for. The page's transferred size, gzip -9 of every file
// the page fetches on a first visit (the document, its script with the inlined worker, its stylesheet,
// boot.js, the favicon and the WebAssembly build the browser picks: all that travels, fonts included, of
// which there are none: formulas are MathML), counted from the requests Chromium makes; and the time from
// navigation to the first interactive view (the first lesson's heatmaps, readouts and spectrum settled:
// window.attnviz.snapshot() resolved), median of several cold loads. Targets (docs/performance.md): under
// 400 KB and under 1 s. Appends records to build/bench.json. Needs `make web`. Usage: node bench/weight.mjs [loads=5]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { serve } from '../scripts/serve.mjs';
import { launch } from '../tests/e2e/browser.mjs';
import { appendRecords } from './common.mjs';

const LOADS = Number(process.argv[2] ?? 5);
const ROOT = process.env.ATTNVIZ_WEB ?? 'build/web';
const server = await serve(ROOT, 0);
const files = new Map();
const times = [], firsts = [];
for (let i = 0; i < LOADS; i++) {
  const browser = await launch({ width: 1366, height: 768 }); // a fresh profile: a cold cache each time
  const page = await browser.context.newPage();
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol === 'http:' && u.origin === new URL(server.url).origin) files.set(u.pathname, join(ROOT, decodeURIComponent(u.pathname === '/' ? '/index.html' : u.pathname)));
  });
  await page.goto(server.url);
  // in the page's clock, from the start of navigation: the first heatmaps drawn (interactive: the
  // controls answer from then on), and the whole first view settled (spectrum and overlays included)
  const t = await page.evaluate(async () => {
    await window.attnviz.snapshot();
    return { first: Math.min(...window.attnviz.stats.heatAt.values()), settled: performance.now() };
  });
  firsts.push(t.first); times.push(t.settled);
  await browser.close();
}
await server.close();
let raw = 0, gz = 0;
const rows = [];
for (const [path, file] of files) {
  const body = readFileSync(file);
  const g = gzipSync(body, { level: 9 }).length;
  raw += body.length; gz += g;
  rows.push(`  ${path.padEnd(40)} ${String(body.length).padStart(8)} B  gzip ${String(g).padStart(7)} B`);
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const ms = median(times), first = median(firsts);
console.log(`weight: ${files.size} files, ${(raw / 1024).toFixed(0)} KiB, ${(gz / 1024).toFixed(0)} KiB gzip (target < 400 KB)`);
console.log(rows.join('\n'));
console.log(`weight: first interactive view (heatmaps and readouts drawn) ${first.toFixed(0)} ms, whole view settled ${ms.toFixed(0)} ms (medians of ${LOADS} cold loads from navigation; target < 1000 ms)`);
appendRecords([
  { name: 'page transferred (gzip KiB)', n: 0, d: 0, ms: gz / 1024, baseline: 'target', baseline_ms: 400 * 1000 / 1024 },
  { name: 'first interactive view', n: 256, d: 64, ms: first, baseline: 'target', baseline_ms: 1000 },
  { name: 'first view settled', n: 256, d: 64, ms, baseline: 'target', baseline_ms: 1000 },
]);
