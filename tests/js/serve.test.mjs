// serve.test.mjs: scripts/serve.mjs as a browser meets it: compressed by Accept-Encoding (brotli, gzip,
// none) with Vary, the decoded bytes equal to the file, validators that answer 304 until the file changes,
// a year's cache for hashed assets only, and precompressed siblings used only while they are fresh.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, mkdir, writeFile, rm, utimes, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { serve, chooseEncoding } from '../../scripts/serve.mjs';

let dir, srv;
// text that compresses, different in every file
const text = (seed) => Array.from({ length: 400 }, (_, i) => `const v${i} = ${(i * seed) % 97}; // line ${i}`).join('\n');
const files = {
  'index.html': `<!doctype html><title>t</title>\n${text(3)}`,
  'embed.js': text(5),
  'assets/index-D9Cu24_Z.js': text(7),
  'tiny.js': 'x=1',
};

function get(path, headers = {}, method = 'GET') {
  return new Promise((ok, fail) => {
    // the path as given (no URL parsing, which would fold a ../ away)
    const req = request({ host: '127.0.0.1', port: srv.port, path: `/${path}`, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', fail);
    req.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attnviz-serve-'));
  await mkdir(join(dir, 'assets'));
  for (const [f, t] of Object.entries(files)) await writeFile(join(dir, f), t);
  await writeFile(join(dir, 'pic.png'), Buffer.alloc(4096, 7));
  srv = await serve(dir, 0);
});
afterAll(async () => { await srv?.close(); await rm(dir, { recursive: true, force: true }); });

describe('serve.mjs: compression', () => {
  it('picks the encoding from Accept-Encoding, q-values and * included', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(chooseEncoding('gzip')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(chooseEncoding('gzip;q=1, br;q=0.2')).toBe('gzip');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('*, br;q=0')).toBe('gzip');
    expect(chooseEncoding('identity')).toBe('identity');
    expect(chooseEncoding('')).toBe('identity');
    expect(chooseEncoding(undefined)).toBe('identity');
  });

  it('sends brotli, gzip or the file as asked, the decoded bytes equal to the file', async () => {
    for (const [accept, enc, decode] of [['gzip, deflate, br', 'br', brotliDecompressSync], ['gzip', 'gzip', gunzipSync], [undefined, undefined, (b) => b]]) {
      const r = await get('embed.js', accept ? { 'Accept-Encoding': accept } : {});
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(enc);
      expect(r.headers.vary).toBe('Accept-Encoding');
      expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      expect(decode(r.body).toString()).toBe(files['embed.js']);
      if (enc) expect(r.body.length).toBeLessThan(files['embed.js'].length / 3);
    }
    // the directory's index.html, compressed the same way
    const idx = await get('', { 'Accept-Encoding': 'br' });
    expect(brotliDecompressSync(idx.body).toString()).toBe(files['index.html']);
  });

  it('leaves images and tiny files as they are, without Vary', async () => {
    for (const f of ['pic.png', 'tiny.js']) {
      const r = await get(f, { 'Accept-Encoding': 'br, gzip' });
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.headers.vary).toBeUndefined();
    }
  });

  it('uses a precompressed sibling while it is not older than the file', async () => {
    const sibling = gzipSync(files['index.html'], { level: 9 });
    await writeFile(join(dir, 'index.html.gz'), sibling);
    expect((await get('index.html', { 'Accept-Encoding': 'gzip' })).body.equals(sibling)).toBe(true);
    // a sibling older than its file is stale: compressed afresh from the file
    const old = new Date(Date.now() - 3600_000);
    await utimes(join(dir, 'index.html.gz'), old, old);
    const r = await get('index.html', { 'Accept-Encoding': 'gzip' });
    expect(r.body.equals(sibling)).toBe(false);
    expect(gunzipSync(r.body).toString()).toBe(files['index.html']);
    await rm(join(dir, 'index.html.gz'));
  });
});

describe('serve.mjs: validators and caching', () => {
  it('answers If-None-Match and If-Modified-Since with 304, per encoding', async () => {
    const first = await get('embed.js', { 'Accept-Encoding': 'br' });
    const { etag } = first.headers;
    expect(etag).toMatch(/^(W\/)?"[^"]+"$/);
    expect(first.headers['last-modified']).toBe(new Date((await stat(join(dir, 'embed.js'))).mtimeMs).toUTCString());
    expect(first.headers['cache-control']).toBe('no-cache');
    const again = await get('embed.js', { 'Accept-Encoding': 'br', 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers.vary).toBe('Accept-Encoding');
    // a gzip body is another representation: another tag, so a br tag does not validate it
    const gz = await get('embed.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': etag });
    expect(gz.status).toBe(200);
    expect(gz.headers.etag).not.toBe(etag);
    expect((await get('embed.js', { 'If-Modified-Since': first.headers['last-modified'] })).status).toBe(304);
    expect((await get('embed.js', { 'If-None-Match': '"other"', 'If-Modified-Since': first.headers['last-modified'] })).status).toBe(200);
  });

  it('serves the new bytes and a new tag once the file changes', async () => {
    const before = await get('embed.js', { 'Accept-Encoding': 'br' });
    const changed = `${files['embed.js']}\n// changed`;
    await writeFile(join(dir, 'embed.js'), changed);
    const later = new Date(Date.now() + 5000);
    await utimes(join(dir, 'embed.js'), later, later);
    const after = await get('embed.js', { 'Accept-Encoding': 'br', 'If-None-Match': before.headers.etag });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(brotliDecompressSync(after.body).toString()).toBe(changed);
    files['embed.js'] = changed;
  });

  it('caches hashed assets for a year and everything else until revalidated', async () => {
    expect((await get('assets/index-D9Cu24_Z.js')).headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await get('index.html')).headers['cache-control']).toBe('no-cache');
    expect((await get('pic.png')).headers['cache-control']).toBe('no-cache');
  });

  it('keeps CORS, answers HEAD without a body, refuses other methods and paths outside the root', async () => {
    const head = await get('embed.js', { 'Accept-Encoding': 'gzip' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['access-control-allow-origin']).toBe('*');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect((await get('embed.js', {}, 'POST')).status).toBe(405);
    // URL parsing folds ../ and %2e%2e/ away (a 404 inside the root); an encoded slash reaches the guard
    expect((await get('../package.json')).status).toBe(404);
    expect((await get('..%2fpackage.json')).status).toBe(403);
    expect((await get('nothing.js')).status).toBe(404);
  });
});
