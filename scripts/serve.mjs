#!/usr/bin/env node
// serve.mjs: a tiny static file server for the built page (no dependencies).
//   node scripts/serve.mjs [root=build/web] [port=$PORT or 8080]      prints the URL; port 0 picks a free one
// A busy port, a bad port number or a missing index.html print one line and exit 1.
// Binds 127.0.0.1 only. .wasm is served as application/wasm (streaming compilation needs it). Every
// response carries Access-Control-Allow-Origin: * so that a page on another origin can load embed.js and
// the wasm beside it (docs/embedding.md): the site is public and static, there is nothing to protect.
//
// Compression and caching (docs/package.md, "Serving it"): text and wasm go out as brotli or gzip, as the
// request's Accept-Encoding prefers, with Vary: Accept-Encoding. A precompressed sibling (FILE.br,
// FILE.gz, as make dist writes beside the versioned site) is used when it is not older than FILE;
// otherwise the file is compressed here once and kept in memory until it changes. Every response has
// an ETag (per encoding) and Last-Modified and answers a matching If-None-Match / If-Modified-Since with
// 304. Files with a content hash in their name (Vite's assets/NAME-HASH.js) are immutable for a year;
// the rest (index.html, embed.js, the wasm builds) are revalidated on every use (no-cache).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { resolve, extname, join, sep, basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzip, brotliCompress, constants as Z } from 'node:zlib';
import { promisify } from 'node:util';

export const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf', '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8', '.npy': 'application/octet-stream', '.md': 'text/markdown; charset=utf-8',
};
// what compresses: text, and the wasm (about 40 % of its size); images and fonts are compressed already
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.svg', '.txt', '.ttf', '.ico', '.md']);
const MIN_COMPRESS = 256; // below this the headers outweigh the saving
// Vite's hashed file names (index-D9Cu24_Z.js, katex-XkjBc4KI.js): a new build gives a new name
const HASHED = /-[A-Za-z0-9_-]{8}\.[a-z0-9]+$/;
const ENCODERS = {
  // on the fly: quick settings (a 400 kB module in ~20 ms); make dist precompresses at the highest
  br: { ext: '.br', run: promisify(brotliCompress), opts: { params: { [Z.BROTLI_PARAM_QUALITY]: 5 } } },
  gzip: { ext: '.gz', run: promisify(gzip), opts: { level: 6 } },
};
const CACHE_BYTES = 64 * 2 ** 20;

/**
 * The encoding to send for an Accept-Encoding header: 'br', 'gzip' or 'identity'. q-values count
 * (q=0 refuses), `*` stands for any encoding not named; with equal q, brotli (smaller) wins.
 */
export function chooseEncoding(header) {
  if (!header) return 'identity';
  const q = new Map();
  for (const part of String(header).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const v = qp ? Number(qp.slice(2)) : 1;
    q.set(name === 'x-gzip' ? 'gzip' : name, Number.isFinite(v) ? v : 0);
  }
  const of = (name) => q.get(name) ?? q.get('*') ?? 0;
  const best = ['br', 'gzip'].filter((e) => of(e) > 0).sort((a, b) => of(b) - of(a))[0];
  return best ?? 'identity';
}

/** Whether a request's validators match this representation (RFC 9110: If-None-Match wins, weak compare). */
function notModified(req, etag, mtime) {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    const bare = (t) => t.trim().replace(/^W\//, '');
    return inm.split(',').some((t) => bare(t) === bare(etag));
  }
  const ims = Date.parse(req.headers['if-modified-since'] ?? '');
  return Number.isFinite(ims) && Math.floor(mtime / 1000) * 1000 <= ims;
}

/**
 * Start a static server on 127.0.0.1. Resolves to {server, port, url, close()}.
 * @param {string} root  directory to serve
 * @param {number} port  0 for any free port
 * @param {object} [opts.headers]  extra headers on every response (the tests' Content-Security-Policy,
 *        or CORS headers for a host on another origin)
 */
export function serve(root, port = 0, { headers = {} } = {}) {
  const base = resolve(root);
  const cache = new Map(); // `${file}\0${encoding}` → {mtimeMs, size, body}; oldest first
  let cached = 0;
  const remember = (key, entry) => {
    if (cache.has(key)) cached -= cache.get(key).body.length;
    cache.delete(key);
    cache.set(key, entry);
    cached += entry.body.length;
    for (const [k, v] of cache) { if (cached <= CACHE_BYTES) break; cache.delete(k); cached -= v.body.length; }
  };

  /** The bytes of FILE in `encoding`: a fresh precompressed sibling, the memory cache, or compressed now. */
  async function encoded(file, st, encoding) {
    const enc = ENCODERS[encoding];
    const sib = await stat(file + enc.ext).catch(() => null);
    if (sib?.isFile() && sib.mtimeMs >= st.mtimeMs) return readFile(file + enc.ext);
    const key = `${file}\0${encoding}`, hit = cache.get(key);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.body;
    const body = await enc.run(await readFile(file), enc.opts);
    remember(key, { mtimeMs: st.mtimeMs, size: st.size, body });
    return body;
  }

  const server = createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('method not allowed');
        return;
      }
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = resolve(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) { res.writeHead(403).end('forbidden'); return; }
      let st = await stat(file);
      if (st.isDirectory()) { file = join(file, 'index.html'); st = await stat(file); }
      const ext = extname(file);
      const compressible = COMPRESSIBLE.has(ext) && st.size >= MIN_COMPRESS;
      const encoding = compressible ? chooseEncoding(req.headers['accept-encoding']) : 'identity';
      // weak for an encoded body: a precompressed sibling and one compressed here are equivalent, not equal
      const tag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}${encoding === 'identity' ? '' : `-${encoding}`}"`;
      const etag = encoding === 'identity' ? tag : `W/${tag}`;
      const head = {
        'Content-Type': MIME[ext] ?? 'application/octet-stream',
        'Cache-Control': HASHED.test(basename(file)) ? 'public, max-age=31536000, immutable' : 'no-cache',
        ETag: etag,
        'Last-Modified': new Date(st.mtimeMs).toUTCString(),
        'Access-Control-Allow-Origin': '*',
        ...(compressible ? { Vary: 'Accept-Encoding' } : {}),
        ...headers,
      };
      if (notModified(req, etag, st.mtimeMs)) { res.writeHead(304, head).end(); return; }
      const body = encoding === 'identity' ? await readFile(file) : await encoded(file, st, encoding);
      if (encoding !== 'identity') head['Content-Encoding'] = encoding;
      head['Content-Length'] = body.length;
      res.writeHead(200, head);
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      if (!res.headersSent) res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      else res.destroy();
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      const p = server.address().port;
      ok({ server, port: p, url: `http://127.0.0.1:${p}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = process.argv[2] ?? 'build/web';
  const arg = process.argv[3] ?? process.env.PORT ?? '8080';
  const port = /^\d+$/.test(arg) ? Number(arg) : NaN;
  const fail = (msg) => { console.error(`attnviz: ${msg}`); process.exit(1); };
  if (!(port >= 0 && port <= 65535)) fail(`port "${arg}" is not a port number (0 to 65535); try make run PORT=8081`);
  if (!(await stat(join(root, 'index.html')).catch(() => null))) fail(`${resolve(root)}/index.html is missing; run make web (or make run) first`);
  try {
    const s = await serve(root, port);
    console.log(`attnviz: serving ${resolve(root)} at ${s.url} (Ctrl-C stops)`);
  } catch (e) {
    if (e.code === 'EADDRINUSE') fail(`port ${port} is busy; try make run PORT=${port < 65535 ? port + 1 : port - 1}`);
    if (e.code === 'EACCES') fail(`port ${port}: permission denied; try make run PORT=8080`);
    fail(`port ${port}: ${e.message}`);
  }
}
