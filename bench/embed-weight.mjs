#!/usr/bin/env node
// embed-weight.mjs: what a blog post with attnviz figures downloads (bench/transfers.mjs counts it in
// Chromium, cold cache, lab and post on two origins, scripts/serve.mjs compressing). Two figures:
//  - one heatmap <attn-viz>: the files it fetches, gzip -9 (deterministic: the budget, docs/performance.md
//    "Weight", held by tests/e2e/weight.test.mjs), and the bodies as the server sent them (brotli);
//  - issue 32's post, two iframes and two elements (a heatmap and a readouts table each): round trips,
//    bytes, and how often the wasm and KaTeX came with a body; with the post and the lab on one site, and
//    on two (blog.test, lab.test: the browser's cache partitioned between the post and its iframes).
// Appends records to build/bench.json. Needs `make web`. Usage: node bench/embed-weight.mjs
import { loadPost, gzipTotal, networkTotal, downloadsOf, HEATMAP_ELEMENT, HEATMAP_ELEMENT_BUDGET, MIXED_POST } from './transfers.mjs';
import { appendRecords } from './common.mjs';

const ROOT = process.env.ATTNVIZ_WEB ?? 'build/web';
const kb = (b) => `${(b / 1000).toFixed(1)} KB`;

const one = await loadPost(ROOT, { elements: [HEATMAP_ELEMENT] });
const g = gzipTotal(ROOT, one.requests), n1 = networkTotal(one.requests);
console.log(`embed weight: one heatmap element downloads ${g.rows.length} files, ${kb(g.gzip)} gzip -9 (budget ${kb(HEATMAP_ELEMENT_BUDGET)}), ${kb(g.bytes)} uncompressed; ${kb(n1.bytes)} sent (brotli) in ${n1.requests} requests`);
for (const r of g.rows) console.log(`  ${r.path.padEnd(40)} ${String(r.bytes).padStart(8)} B  gzip ${String(r.gzip).padStart(7)} B`);

const posts = {};
for (const crossSite of [false, true]) {
  const { requests } = await loadPost(ROOT, MIXED_POST, { crossSite });
  const n = networkTotal(requests);
  const wasm = downloadsOf(requests, /\/attnviz(-scalar)?\.wasm$/), katex = downloadsOf(requests, /katex/);
  const where = crossSite ? 'post and lab on two sites (gzip: no brotli over plain http)' : 'post and lab on one site';
  console.log(`embed weight: 2 iframes + 2 elements, ${where}: ${n.requests} requests (${n.downloads} with a body, the rest 304s), ${kb(n.bytes)} sent; the wasm downloaded ${wasm}×, KaTeX ${katex}×`);
  for (const r of requests) console.log(`  ${r.path.padEnd(40)} ${r.status} ${String(r.bytes).padStart(8)} B ${r.encoding}`);
  posts[crossSite ? 'cross' : 'same'] = n;
}

// ms fields hold kilobytes here, as bench/weight.mjs's record does (the record file's one number field)
appendRecords([
  { name: 'one heatmap element transferred (gzip KB)', n: 0, d: 0, ms: g.gzip / 1000, baseline: 'budget', baseline_ms: HEATMAP_ELEMENT_BUDGET / 1000 },
  { name: '2 iframes + 2 elements, one site, sent (KB)', n: 0, d: 0, ms: posts.same.bytes / 1000, baseline: 'requests', baseline_ms: posts.same.requests },
  { name: '2 iframes + 2 elements, two sites, sent (KB)', n: 0, d: 0, ms: posts.cross.bytes / 1000, baseline: 'requests', baseline_ms: posts.cross.requests },
]);
