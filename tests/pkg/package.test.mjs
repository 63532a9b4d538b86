// package.test.mjs: the npm package as a user installs it (docs/package.md). `make dist` has built
// dist/attnviz-X.Y.Z.tgz; this installs it offline, with an empty npm cache, in a scratch folder outside
// the repository, then uses it three ways: (c) a node script that loads the loader without options,
// (a) a plain HTML page that loads the element from node_modules in Chromium, with every request outside
// the scratch server refused, (b) a Vite app that imports attnviz/embed and builds.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm, writeFile, readFile, mkdir, cp, readdir, realpath } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/serve.mjs';
import { launch } from '../e2e/browser.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
const TGZ = join(ROOT, 'dist', `attnviz-${version}.tgz`);
let scratch;

const run = (cmd, args, cwd, env = {}) => execFileSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'attnviz-pkg-')));
  expect(scratch.startsWith(ROOT)).toBe(false);
  await cp(TGZ, join(scratch, `attnviz-${version}.tgz`));
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  // an empty cache and --offline: the package must need nothing but its own tarball
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', `./attnviz-${version}.tgz`], scratch,
    { npm_config_cache: join(scratch, '.npm-cache'), npm_config_registry: 'http://127.0.0.1:9/' });
});
afterAll(async () => { if (scratch) await rm(scratch, { recursive: true, force: true }); });

describe('the installed package', () => {
  it('has the manifest the docs describe and nothing else installed', async () => {
    const pkg = JSON.parse(await readFile(join(scratch, 'node_modules/attnviz/package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'attnviz', version, type: 'module' });
    expect(pkg.private).toBeUndefined();
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining(['.', './embed', './site/*', './attnviz.html']));
    for (const k of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies', 'scripts']) expect(pkg[k]).toBeUndefined();
    expect((await readdir(join(scratch, 'node_modules'))).filter((f) => !f.startsWith('.'))).toEqual(['attnviz']);
    // the licence the manifest names, with its text (the repository's LICENSE)
    expect(pkg.license).toBe('MIT');
    expect(await readFile(join(scratch, 'node_modules/attnviz/LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    // each subpath resolves, through the exports map, to a file that is there
    await writeFile(join(scratch, 'resolve.mjs'), `import { existsSync } from 'node:fs';
console.log(JSON.stringify(['attnviz', 'attnviz/embed', 'attnviz/site/index.html', 'attnviz/site/attnviz.wasm', 'attnviz/attnviz.html']
  .map((s) => { const u = new URL(import.meta.resolve(s)); return [s, u.pathname.split('node_modules/attnviz/')[1], existsSync(u)]; })));`);
    expect(JSON.parse(run(process.execPath, ['resolve.mjs'], scratch))).toEqual([
      ['attnviz', 'lib/attnviz.mjs', true], ['attnviz/embed', 'site/embed.js', true],
      ['attnviz/site/index.html', 'site/index.html', true], ['attnviz/site/attnviz.wasm', 'site/attnviz.wasm', true],
      ['attnviz/attnviz.html', 'attnviz.html', true]]);
  });

  it('(c) loads in node without options, finds its own wasm and computes softmax attention', async () => {
    await writeFile(join(scratch, 'use.mjs'), `
import { loadAttnviz, VERSION } from 'attnviz';
const av = await loadAttnviz();
const lab = av.lab(24, 8);
lab.generate('clustered', 1, 5);
const { status } = lab.reference({});
console.log(JSON.stringify({ VERSION, status, simd: av.simd, resolved: import.meta.resolve('attnviz'),
  Q: Array.from(lab.Q), K: Array.from(lab.K), A: Array.from(lab.A) }));
`);
    const out = JSON.parse(run(process.execPath, ['use.mjs'], scratch));
    expect(out.resolved).toBe(`file://${scratch}/node_modules/attnviz/lib/attnviz.mjs`);
    expect(out.VERSION).toBe(version);
    expect(out.status).toBe(0);
    // the same softmax in plain JS, in float64: A = softmax(QKᵀ/√d) row by row
    const n = 24, d = 8, s = 1 / Math.sqrt(d);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      const z = Array.from({ length: n }, (_, j) => { let t = 0; for (let k = 0; k < d; k++) t += out.Q[i * d + k] * out.K[j * d + k]; return t * s; });
      const mx = Math.max(...z), e = z.map((v) => Math.exp(v - mx)), sum = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < n; j++) worst = Math.max(worst, Math.abs(e[j] / sum - out.A[i * n + j]));
    }
    expect(worst).toBeLessThan(1e-6);
    expect(Math.max(...out.A)).toBeGreaterThan(3 / n); // clustered keys: not the uniform 1/n
  });

  it("(c) docs/package.md's node example runs as written", async () => {
    const example = (await readFile(join(ROOT, 'docs/package.md'), 'utf8')).match(/```js\n([\s\S]*?)```/)[1];
    await writeFile(join(scratch, 'example.mjs'), example);
    const printed = Number(run(process.execPath, ['example.mjs'], scratch).trim());
    expect(printed).toBeGreaterThan(0);
    expect(printed).toBeLessThan(1);
  });

  it('(a) a plain page draws a figure with the element from node_modules, fetching nothing else', async () => {
    await writeFile(join(scratch, 'page.html'), `<!doctype html><html lang="en"><title>a post</title>
<script type="module" src="./node_modules/attnviz/site/embed.js"></script>
<p>A figure:</p><attn-viz view="heatmap" variant="focused" gen="clustered" n="64" d="16" p="3"></attn-viz>`);
    const server = await serve(scratch, 0);
    const { context, close } = await launch({ width: 900, height: 700 });
    try {
      const outside = [];
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(server.url) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
        outside.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      await page.goto(`${server.url}page.html`);
      const snap = await page.evaluate(() => document.querySelector('attn-viz').snapshot());
      expect(snap.state).toMatchObject({ variant: 'focused', n: '64', d: '16' });
      expect(snap.readouts.variant).toBe('focused');
      expect(snap.readouts.error_fro_rel).toBeGreaterThan(0);
      // the heatmap holds a picture, not a blank canvas
      const colours = await page.evaluate(() => {
        const c = document.querySelector('attn-viz').shadowRoot.querySelector('canvas.hm-M');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const seen = new Set();
        for (let i = 0; i < px.length; i += 4) seen.add(`${px[i]},${px[i + 1]},${px[i + 2]}`);
        return seen.size;
      });
      expect(colours).toBeGreaterThan(10);
      // the loader in a browser, through an import map as a page without a bundler names it: no options,
      // the wasm fetched from beside lib/attnviz.mjs
      await writeFile(join(scratch, 'loader.html'), `<!doctype html><html lang="en"><title>loader</title>
<script type="importmap">{"imports": {"attnviz": "./node_modules/attnviz/lib/attnviz.mjs"}}</script>
<script type="module">
import { loadAttnviz } from 'attnviz';
const lab = (await loadAttnviz()).lab(16, 8);
lab.generate('gaussian', 1, 3);
window.done = { status: lab.reference().status, rowSum: lab.A.slice(0, 16).reduce((a, b) => a + b, 0) };
</script>`);
      await page.goto(`${server.url}loader.html`);
      await page.waitForFunction(() => window.done, null, { timeout: 30_000 });
      const done = await page.evaluate(() => window.done);
      expect(done.status).toBe(0);
      expect(Math.abs(done.rowSum - 1)).toBeLessThan(1e-5); // a softmax row
      // the built site in the package says which release it is
      await page.goto(`${server.url}node_modules/attnviz/site/index.html#v=1&n=32&d=8`);
      await page.waitForFunction(() => window.attnviz?.version, null, { timeout: 30_000 });
      expect(await page.evaluate(() => window.attnviz.version)).toBe(version);
      expect(outside).toEqual([]);
      expect(errors, errors.join('\n')).toEqual([]);
    } finally {
      await close();
      await server.close();
    }
  });

  it('(b) a Vite app that imports attnviz/embed builds', async () => {
    const app = join(scratch, 'app');
    await mkdir(app);
    await writeFile(join(app, 'index.html'), '<!doctype html><html lang="en"><title>app</title><script type="module" src="./main.js"></script><body></body></html>');
    await writeFile(join(app, 'main.js'), `import { AttnViz } from 'attnviz/embed';
const el = document.createElement('attn-viz');
el.setAttribute('view', 'spectrum');
document.body.append(el);
console.log(el instanceof AttnViz);
`);
    // the repository's vite, by path: no install, no network
    run(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', 'out'], app);
    const assets = await readdir(join(app, 'out/assets'));
    const js = (await Promise.all(assets.filter((f) => f.endsWith('.js')).map((f) => readFile(join(app, 'out/assets', f), 'utf8')))).join('\n');
    // the element's definition is in the app's bundle (a boolean: the bundle is too big to print on failure)
    expect(/customElements\.define\(\s*["'`]attn-viz["'`]/.test(js)).toBe(true);
  });
});

describe('dist/', () => {
  it('serves the versioned site precompressed: the .br beside embed.js, byte for byte', async () => {
    const site = join(ROOT, 'dist', `attnviz-${version}`);
    const server = await serve(site, 0);
    try {
      const res = await new Promise((ok, fail) => request(`${server.url}embed.js`, { headers: { 'Accept-Encoding': 'br' } }, (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => ok({ headers: r.headers, body: Buffer.concat(chunks) }));
      }).on('error', fail).end());
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.body.equals(await readFile(join(site, 'embed.js.br')))).toBe(true);
    } finally { await server.close(); }
  });

  it("docs/package.md's sizes are within 10 % of what make dist measured", async () => {
    const sizes = JSON.parse(await readFile(join(ROOT, 'dist/sizes.json'), 'utf8'));
    const rows = [...(await readFile(join(ROOT, 'docs/package.md'), 'utf8')).matchAll(/^\| `(\w+)`[^|]*\| (\d+) KB \| (?:(\d+) KB|[^|]*) \|$/gm)];
    expect(rows.map((r) => r[1]).sort()).toEqual(['embed', 'loader', 'single', 'site', 'tarball']);
    const off = [];
    for (const [, key, bytes, gzip] of rows) {
      const near = (doc, real) => Math.abs(doc * 1024 - real) <= 0.1 * real;
      if (!near(Number(bytes), sizes[key].bytes)) off.push(`${key}: docs ${bytes} KB, measured ${Math.round(sizes[key].bytes / 1024)} KB`);
      if (gzip && !near(Number(gzip), sizes[key].gzip)) off.push(`${key} gzip: docs ${gzip} KB, measured ${Math.round(sizes[key].gzip / 1024)} KB`);
    }
    expect(off).toEqual([]);
  });
});

// The element names its wasm with two literal `new URL('./attnviz.wasm', import.meta.url)` (web/embed.mjs),
// the form a bundler follows: the app's build carries both wasm builds along as assets, and the built app,
// served, draws. Every request outside the app's server is refused.
describe('the Vite app in Chromium', () => {
  it('draws the figure: the bundler carries the wasm along', async () => {
    const out = join(scratch, 'app/out');
    // both builds emitted as the app's own assets (names hashed by Vite)
    const wasm = (await readdir(join(out, 'assets'))).filter((f) => f.endsWith('.wasm'));
    expect(wasm.map((f) => f.replace(/-[\w-]{8}\.wasm$/, '.wasm')).sort()).toEqual(['attnviz-scalar.wasm', 'attnviz.wasm']);
    const simdFile = wasm.find((f) => /^attnviz-[\w-]{8}\.wasm$/.test(f) && !f.startsWith('attnviz-scalar-'));
    const server = await serve(out, 0);
    const { context, close } = await launch({ width: 900, height: 700 });
    try {
      const outside = [], wasmFetched = [];
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.endsWith('.wasm')) wasmFetched.push(new URL(url).pathname);
        if (url.startsWith(server.url) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
        outside.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      await page.goto(server.url);
      const snap = await page.evaluate(() => Promise.race([document.querySelector('attn-viz').snapshot(),
        new Promise((_, no) => setTimeout(() => no(new Error(document.querySelector('attn-viz').shadowRoot.querySelector('.msg').textContent)), 15_000))]));
      expect(snap.readouts.variant).toBeTruthy();
      expect(snap.readouts.error_fro_rel).toBeGreaterThan(0);
      expect(wasmFetched).toEqual([`/assets/${simdFile}`]); // the SIMD build, from the app's assets
      expect(outside).toEqual([]);
    } finally {
      await close();
      await server.close();
    }
  });
});
