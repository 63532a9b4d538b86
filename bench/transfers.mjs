// transfers.mjs: what a blog post with attnviz figures downloads, counted in Chromium (shared by
// bench/embed-weight.mjs and tests/e2e/weight.test.mjs). The lab's files (build/web) are served from one
// origin by scripts/serve.mjs (brotli/gzip, ETag, Last-Modified), the post from a second one, as a
// blogger's host and the lab's would be; a fresh profile, so the cache starts cold.
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../scripts/serve.mjs';
import { launch } from '../tests/e2e/browser.mjs';

/** The budget of one heatmap element (docs/performance.md, "Weight"): the files it downloads, gzip -9, in
 *  bytes (KB = 1000 bytes here). tests/e2e/weight.test.mjs fails above it. */
export const HEATMAP_ELEMENT_BUDGET = 300_000;
export const HEATMAP_ELEMENT = 'view="heatmap" variant="focused" gen="clustered" p="3"';
/** The post of issue 32: two iframes and two elements, a heatmap and a readouts table (formulas) each. */
export const MIXED_POST = {
  iframes: ['v=1&variant=focused&gen=clustered&p=3&embed=heatmap', 'v=1&variant=performer&embed=readouts'],
  elements: [HEATMAP_ELEMENT, 'view="readouts" variant="performer"'],
};

/**
 * A host page's body: `elements` is a list of <attn-viz> attribute strings, `iframes` a list of the lab's
 * link hashes (each an iframe with `embed=`). LAB stands for the lab's origin.
 */
export function postHtml({ elements = [], iframes = [] }) {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
${elements.length ? '<script type="module" src="LAB/embed.js"></script>' : ''}
<p>Some prose.</p>
${iframes.map((h, i) => `<iframe id="f${i}" width="700" height="420" src="LAB/#${h}"></iframe>`).join('\n')}
${elements.map((a) => `<attn-viz ${a}></attn-viz>`).join('\n')}
</html>`;
}

/**
 * Open a post on a cold cache and wait until every figure has settled. Resolves to
 * {requests: [{path, status, bytes, cached}], probed} for the lab's origin:
 * `bytes` is what travelled (headers and encoded body, Chromium's encodedDataLength), `cached` a
 * request answered from the browser's cache without the network; `probed` what `probe` (a function run in
 * the post once it has settled) returned.
 */
export async function loadPost(root, post, { width = 760, height = 4000, probe = null } = {}) {
  const lab = await serve(root, 0);
  const dir = mkdtempSync(join(tmpdir(), 'attnviz-post-'));
  writeFileSync(join(dir, 'index.html'), postHtml(post).replaceAll('LAB/', lab.url));
  const host = await serve(dir, 0);
  const browser = await launch({ width, height }); // a fresh profile: a cold cache
  try {
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    const byId = new Map();
    cdp.on('Network.requestWillBeSent', (e) => byId.set(e.requestId, { url: e.request.url, status: 0, bytes: 0, cached: false }));
    cdp.on('Network.requestServedFromCache', (e) => { const r = byId.get(e.requestId); if (r) r.cached = true; });
    cdp.on('Network.responseReceived', (e) => {
      const r = byId.get(e.requestId);
      if (r) { r.status = e.response.status; if (e.response.fromDiskCache || e.response.fromPrefetchCache) r.cached = true; }
    });
    cdp.on('Network.loadingFinished', (e) => { const r = byId.get(e.requestId); if (r) r.bytes = e.encodedDataLength; });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(host.url);
    await page.evaluate(() => Promise.all([...document.querySelectorAll('attn-viz')].map((el) => el.snapshot())));
    for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
      await frame.waitForFunction(() => window.attnviz?.ready, null, { timeout: 60_000 });
      await frame.evaluate(() => window.attnviz.snapshot());
    }
    await page.waitForTimeout(500); // what the figures load after their first view (a lazy chunk)
    const probed = probe ? await page.evaluate(probe) : undefined;
    const origin = new URL(lab.url).origin;
    const requests = [...byId.values()].filter((r) => r.url.startsWith(origin)).map((r) => {
      const u = new URL(r.url);
      return { path: u.pathname === '/' ? '/index.html' : u.pathname, status: r.status, bytes: r.bytes, cached: r.cached };
    });
    if (errors.length) throw new Error(errors.join('\n'));
    return { requests, probed };
  } finally {
    await browser.close();
    await host.close();
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** gzip -9 bytes of each distinct file a post requested: what a reader downloads, deterministic. */
export function gzipTotal(root, requests) {
  const rows = [];
  for (const path of new Set(requests.map((r) => r.path))) {
    const body = readFileSync(join(root, decodeURIComponent(path)));
    rows.push({ path, bytes: body.length, gzip: gzipSync(body, { level: 9 }).length });
  }
  return { rows, bytes: rows.reduce((a, r) => a + r.bytes, 0), gzip: rows.reduce((a, r) => a + r.gzip, 0) };
}

/**
 * What went over the network: `requests` round trips (a revalidation answered 304 is one, with its headers'
 * bytes; a response from the cache, or shared with a request in flight, moved nothing), `bytes` in all,
 * and `downloads` the requests that carried a body (over 1000 bytes).
 */
export function networkTotal(requests) {
  const net = requests.filter((r) => !r.cached && r.bytes > 0);
  return { requests: net.length, bytes: net.reduce((a, r) => a + r.bytes, 0), downloads: net.filter((r) => r.bytes > 1000).length };
}

/** How many times files whose path matches `re` came with a body (a download, not a revalidation). */
export function downloadsOf(requests, re) {
  return requests.filter((r) => !r.cached && r.bytes > 1000 && re.test(r.path)).length;
}
