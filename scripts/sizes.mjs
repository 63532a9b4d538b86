#!/usr/bin/env node
// sizes.mjs: build/sizes.json, the sizes of what `make web` built, measured (web.mk runs it after the
// build). The docs quote these figures and tests/e2e/weight.test.mjs checks each quoted figure against
// this file (docs/performance.md, "Weight"), so a doc cannot keep a size the build no longer has.
//   {files: {PATH: {bytes, gzip}}, embed, wasm, wasmScalar, single: {bytes, gzip}, site: {files, bytes, gzip}}
// gzip: gzip -9, what a server that compresses sends (brotli is ~10 % smaller: make dist).
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, relative } from 'node:path';

const WEB = 'build/web', SINGLE = 'build/single/attnviz.html';
const measure = (file) => { const b = readFileSync(file); return { bytes: b.length, gzip: gzipSync(b, { level: 9 }).length }; };
const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));

const files = {};
for (const f of walk(WEB).sort()) {
  if (/\.(gz|br)$/.test(f) || !statSync(f).isFile()) continue;
  files[`/${relative(WEB, f)}`] = measure(f);
}
const sum = (list) => ({ files: list.length, bytes: list.reduce((a, s) => a + s.bytes, 0), gzip: list.reduce((a, s) => a + s.gzip, 0) });
const sizes = {
  files,
  embed: files['/embed.js'],
  wasm: files['/attnviz.wasm'],
  wasmScalar: files['/attnviz-scalar.wasm'],
  single: measure(SINGLE),
  site: sum(Object.values(files)),
};
writeFileSync('build/sizes.json', `${JSON.stringify(sizes, null, 2)}\n`);
const kb = (b) => `${(b / 1000).toFixed(0)} KB`;
console.log(`build/sizes.json: embed.js ${kb(sizes.embed.bytes)} (${kb(sizes.embed.gzip)} gzip), single file ${(sizes.single.bytes / 1e6).toFixed(2)} MB (${kb(sizes.single.gzip)} gzip), site ${kb(sizes.site.bytes)} in ${sizes.site.files} files`);
