// transfers.mjs: what a blog post with attnviz figures downloads, counted in Chromium (shared by
// bench/embed-weight.mjs and tests/e2e/weight.test.mjs). The lab's files (build/web) are served from one
// origin by scripts/serve.mjs (brotli/gzip, ETag, Last-Modified), the post from a second one, as a
// blogger's host and the lab's would be; a fresh profile, so the cache starts cold.
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../scripts/serve.mjs';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../tests/e2e/browser.mjs';

/** The budget of one heatmap element (docs/performance.md, "Weight"): the files it downloads, gzip -9, in
 *  bytes (KB = 1000 bytes here). tests/e2e/weight.test.mjs fails above it. */
export const HEATMAP_ELEMENT_BUDGET = 420_000; // 300 KB until the gated families (issue 33, +53 KB), 320 KB until the swapped pass and lolcats (issue 34, +21 KB), 340 KB until the Hugging Face readers (issue 35, +84 KB)
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
 * Open a post on a cold cache and wait until every figure has settled. Resolves to {requests, probed}:
 * `requests` every request that reached the lab's server, [{path, status, bytes}] (`bytes`: the body as
 * sent, compressed; 0 for a 304), counted by the server itself, so a cross-site iframe in its own process
 * counts too and an answer from the browser's cache (no request) does not; `probed` what `probe` (a
 * function run in the post once it has settled) returned.
 */
export async function loadPost(root, post, { width = 760, height = 4000, probe = null, crossSite = false } = {}) {
  const lab = await serve(root, 0);
  const requests = [];
  lab.server.on('request', (req, res) => {
    // serve.mjs hands its headers to writeHead, where getHeader() does not see them: note them on the way
    let head = {};
    const writeHead = res.writeHead;
    res.writeHead = function (status, headers) { head = headers ?? {}; return writeHead.apply(this, arguments); };
    res.on('finish', () => {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      requests.push({ path: path === '/' ? '/index.html' : path, status: res.statusCode, bytes: Number(head['Content-Length'] ?? 0), encoding: head['Content-Encoding'] ?? 'identity' });
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'attnviz-post-'));
  // crossSite: the post at blog.test, the lab at lab.test (two sites, as a blog and the lab usually are:
  // the browser's cache is then partitioned between the post's own requests and its iframes'); else two
  // origins of one site (127.0.0.1, two ports)
  const name = (s, host) => (crossSite ? s.url.replace('127.0.0.1', host) : s.url);
  const host = await serve(dir, 0);
  writeFileSync(join(dir, 'index.html'), postHtml(post).replaceAll('LAB/', name(lab, 'lab.test')));
  const profile = mkdtempSync(join(tmpdir(), 'attnviz-chromium-')); // a fresh profile: a cold cache
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, viewport: { width, height },
    args: [...CHROMIUM_ARGS, ...(crossSite ? ['--host-resolver-rules=MAP *.test 127.0.0.1'] : [])],
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(name(host, 'blog.test'));
    await page.evaluate(() => Promise.all([...document.querySelectorAll('attn-viz')].map((el) => el.snapshot())));
    for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
      await frame.waitForFunction(() => window.attnviz?.ready, null, { timeout: 60_000 });
      await frame.evaluate(() => window.attnviz.snapshot());
    }
    await page.waitForTimeout(500); // what the figures load after their first view (a lazy chunk)
    const probed = probe ? await page.evaluate(probe) : undefined;
    if (errors.length) throw new Error(errors.join('\n'));
    return { requests, probed };
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
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

/** What went over the network: `requests` round trips (a revalidation answered 304 is one), `bytes` of
 *  bodies in all, `downloads` the requests answered with a body (200). */
export function networkTotal(requests) {
  return { requests: requests.length, bytes: requests.reduce((a, r) => a + r.bytes, 0), downloads: requests.filter((r) => r.status === 200).length };
}

/** How many times files whose path matches `re` came with a body (a download, not a 304). */
export function downloadsOf(requests, re) {
  return requests.filter((r) => r.status === 200 && re.test(r.path)).length;
}
