#!/usr/bin/env node
// serve.mjs: a tiny static file server for the built page (no dependencies).
//   node scripts/serve.mjs [root=build/web] [port=$PORT or 8080]      prints the URL; port 0 picks a free one
// A busy port, a bad port number or a missing index.html print one line and exit 1.
// Binds 127.0.0.1 only. .wasm is served as application/wasm (streaming compilation needs it). Every
// response carries Access-Control-Allow-Origin: * so that a page on another origin can load embed.js and
// the wasm beside it (docs/embedding.md): the site is public and static, there is nothing to protect.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { resolve, extname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf', '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8', '.npy': 'application/octet-stream',
};

/**
 * Start a static server on 127.0.0.1. Resolves to {server, port, url, close()}.
 * @param {string} root  directory to serve
 * @param {number} port  0 for any free port
 * @param {object} [opts.headers]  extra headers on every response (the tests' Content-Security-Policy,
 *        or CORS headers for a host on another origin)
 */
export function serve(root, port = 0, { headers = {} } = {}) {
  const base = resolve(root);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = resolve(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) { res.writeHead(403).end('forbidden'); return; }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache', 'Access-Control-Allow-Origin': '*', ...headers });
      res.end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
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
