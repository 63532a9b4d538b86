// single.mjs: the single-file build, build/single/attnviz.html: the page with its script, styles, fonts,
// worker and both WebAssembly builds inside one HTML file that works from file:// with no server (for
// slides and offline use). Vite bundles with vite.single.mjs into build/single-tmp/; this script then
// inlines the script and the stylesheet into index.html and replaces the page's Content-Security-Policy
// (which allows files of its own origin) by one that allows exactly these two inline blocks by their
// SHA-256 and loads nothing else (docs/embedding.md, "The single file").
//   node scripts/single.mjs            (web.mk runs it for `make web`)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';

const TMP = 'build/single-tmp', OUT = 'build/single';
execFileSync('npx', ['vite', 'build', '--config', 'vite.single.mjs'], { stdio: 'inherit' });
let html = readFileSync(join(TMP, 'index.html'), 'utf8');
const read = (href) => readFileSync(join(TMP, href.replace(/^\.\//, '')), 'utf8');
let scripts = 0, styles = 0;
// `</script` inside the code would end the element early: escape it (a string or regex in the bundle)
html = html.replace(/<script type="module" crossorigin src="([^"]+)"><\/script>/g, (_, src) => {
  scripts += 1;
  return `<script type="module">${read(src).replace(/<\/(script)/gi, '<\\/$1')}</script>`;
});
html = html.replace(/<link rel="stylesheet" crossorigin href="([^"]+)">/g, (_, href) => {
  styles += 1;
  return `<style>${read(href).replace(/<\/(style)/gi, '<\\/$1')}</style>`;
});
html = html.replace(/<link rel="icon" href="([^"]+\.svg)"/, (_, href) => `<link rel="icon" href="data:image/svg+xml;base64,${Buffer.from(read(href)).toString('base64')}"`);
html = html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>\s*/, '');
html = html.replace(/<script src="\.\/boot\.js"><\/script>\s*/, ''); // its file:// note is for build/web only
html = html.replace(/<!--[^>]*-->\s*<link rel="preload" href="\.\/attnviz\.wasm"[^>]*>\s*/, ''); // the wasm is inline here
if (scripts !== 1 || styles !== 1) throw new Error(`single.mjs: expected one script and one stylesheet in ${TMP}/index.html, found ${scripts} and ${styles}`);
if (/\b(src|href)="\.\/assets\//.test(html)) throw new Error('single.mjs: the page still refers to a file in assets/');
// its policy: the inline module and stylesheet by hash (the browser hashes the element's text as written),
// the wasm compiled in the page, workers from blob: URLs, exported PNGs drawn from data: and blob: images;
// no default source, so the file fetches nothing even where it could. Before the script: a <meta> policy
// governs only what follows it.
const sha = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const [script] = html.match(/(?<=<script type="module">)[\s\S]*?(?=<\/script>)/);
const [style] = html.match(/(?<=<style>)[\s\S]*?(?=<\/style>)/);
const policy = `default-src 'none'; script-src ${sha(script)} 'wasm-unsafe-eval'; style-src ${sha(style)}; worker-src blob:; img-src data: blob:`;
html = html.replace(/<meta charset="utf-8">\n/, (m) => `${m}  <meta http-equiv="Content-Security-Policy" content="${policy}">\n`);
if (!html.includes(policy)) throw new Error('single.mjs: no <meta charset="utf-8"> line to put the policy after');
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'attnviz.html'), html);
rmSync(TMP, { recursive: true, force: true });
console.log(`build/single/attnviz.html: ${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB`);
