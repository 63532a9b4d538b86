#!/usr/bin/env node
// dist.mjs: `make dist`. Builds, under dist/ (ignored), what a release publishes:
//   dist/pkg/                  the npm package, staged (the repository's package.json is not the published
//                              one: it lists the devDependencies and would pull in the sources)
//   dist/attnviz-X.Y.Z.tgz     `npm pack` of dist/pkg: `npm install ./attnviz-X.Y.Z.tgz` works offline
//   dist/attnviz-X.Y.Z/        the static site (build/web), in a folder named by its version, with FILE.br
//                              and FILE.gz beside each text and wasm file (for scripts/serve.mjs, or a
//                              server's gzip_static / brotli_static)
//   dist/attnviz-X.Y.Z.html    the single file (build/single/attnviz.html)
//   dist/sizes.json            the sizes of all of these, measured here (docs/package.md quotes them)
// It expects `make web` to have run (make dist does it first). No network: npm pack reads only dist/pkg.
import { readFile, writeFile, mkdir, rm, cp, readdir, stat } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { gzipSync, brotliCompressSync, constants as Z } from 'node:zlib';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
const { version } = root;
const fail = (msg) => { console.error(`attnviz: ${msg}`); process.exit(1); };

// the loader must say the version it ships under (web/wasm/version.mjs), else the page lies about it
const versionModule = await readFile(join(ROOT, 'web/wasm/version.mjs'), 'utf8');
if (!versionModule.includes(`'${version}'`)) fail(`web/wasm/version.mjs does not say ${version} (package.json's version)`);
for (const f of ['build/web/index.html', 'build/web/embed.js', 'build/web/attnviz.wasm', 'build/single/attnviz.html']) {
  if (!(await stat(join(ROOT, f)).catch(() => null))) fail(`${f} is missing; run make web first`);
}

/** The published manifest: no dependencies of any kind, so that it installs offline. */
const manifest = {
  name: root.name,
  version,
  description: root.description,
  license: root.license,
  type: 'module',
  engines: root.engines,
  keywords: ['attention', 'linear attention', 'softmax', 'webassembly', 'visualization', 'custom element'],
  main: './lib/attnviz.mjs',
  types: './types/attnviz.d.ts',
  exports: {
    '.': { types: './types/attnviz.d.ts', default: './lib/attnviz.mjs' },
    './embed': { types: './types/embed.d.ts', default: './site/embed.js' },
    './site/*': './site/*',
    './attnviz.html': './attnviz.html',
    './package.json': './package.json',
  },
  // importing the element defines it; the loader has no side effects
  sideEffects: ['./site/*.js'],
  files: ['lib/', 'site/', 'types/', 'attnviz.html', 'CHANGELOG.md', 'LICENSE'],
};

/** The loader's modules: web/wasm/attnviz.mjs and what it imports, followed (the page-only
 *  wasm-source.mjs is not among them). */
async function loaderModules() {
  const seen = new Set(), todo = ['attnviz.mjs'];
  while (todo.length) {
    const f = todo.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    const src = await readFile(join(ROOT, 'web/wasm', f), 'utf8');
    for (const [, dep] of src.matchAll(/^\s*(?:import|export)\b[^'"]*from\s+'\.\/([\w-]+\.mjs)'/gm)) todo.push(dep);
    if (/from\s+'\.\.\//.test(src)) fail(`web/wasm/${f} imports from outside web/wasm/: the package's loader would miss it`);
  }
  return [...seen].sort();
}

async function walk(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...await walk(p)); else out.push(p);
  }
  return out;
}
async function sizeOf(path) {
  const files = (await stat(path)).isDirectory() ? await walk(path) : [path];
  let bytes = 0, gzip = 0;
  for (const f of files) {
    const b = await readFile(f);
    bytes += b.length;
    gzip += gzipSync(b, { level: 9 }).length;
  }
  return { files: files.length, bytes, gzip };
}

await rm(DIST, { recursive: true, force: true });
const PKG = join(DIST, 'pkg');
await mkdir(join(PKG, 'lib'), { recursive: true });
for (const f of await loaderModules()) await cp(join(ROOT, 'web/wasm', f), join(PKG, 'lib', f));
// the loader's default source is ./attnviz.wasm beside loading.mjs (web/wasm/loading.mjs)
for (const f of ['attnviz.wasm', 'attnviz-scalar.wasm']) await cp(join(ROOT, 'build/wasm', f), join(PKG, 'lib', f));
await cp(join(ROOT, 'build/web'), join(PKG, 'site'), { recursive: true });
// precompressed copies are the server's business (scripts/serve.mjs), not the package's
for (const f of await walk(join(PKG, 'site'))) if (/\.(gz|br)$/.test(f)) await rm(f);
await cp(join(ROOT, 'build/single/attnviz.html'), join(PKG, 'attnviz.html'));
await cp(join(ROOT, 'types'), join(PKG, 'types'), { recursive: true });
await cp(join(ROOT, 'CHANGELOG.md'), join(PKG, 'CHANGELOG.md'));
await cp(join(ROOT, 'LICENSE'), join(PKG, 'LICENSE')); // package.json's "license": "MIT", its text
// the package's README is docs/package.md; its links to other docs point nowhere in the package, so they
// become plain text naming the repository's docs/ file
const readme = (await readFile(join(ROOT, 'docs/package.md'), 'utf8'))
  .replace(/\[([^\]]+)\]\((?!https?:)([\w-]+\.md)(#[\w-]*)?\)/g, (_, text, file) => (text === file ? `docs/${file}` : `${text} (docs/${file})`));
await writeFile(join(PKG, 'README.md'), readme);
await writeFile(join(PKG, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

// --ignore-scripts: the staged manifest has none, and a user's npm config must not add any
const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', DIST, PKG],
  { cwd: DIST, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }))[0];
const tgz = join(DIST, packed.filename);

const site = join(DIST, `attnviz-${version}`);
await cp(join(ROOT, 'build/web'), site, { recursive: true });
// precompressed at the highest settings, once here, rather than at a quick setting on every request
let brotli = 0;
for (const f of await walk(site)) {
  if (!/\.(html|js|mjs|css|wasm|json|svg)$/.test(f)) continue;
  const b = await readFile(f);
  if (b.length < 256) continue;
  const br = brotliCompressSync(b, { params: { [Z.BROTLI_PARAM_QUALITY]: 11, [Z.BROTLI_PARAM_SIZE_HINT]: b.length } });
  await writeFile(`${f}.br`, br);
  await writeFile(`${f}.gz`, gzipSync(b, { level: 9 }));
  brotli += br.length;
}
const single = join(DIST, `attnviz-${version}.html`);
await cp(join(ROOT, 'build/single/attnviz.html'), single);

const sizes = {
  version,
  tarball: { file: relative(ROOT, tgz), bytes: (await stat(tgz)).size, unpacked: packed.unpackedSize, files: packed.entryCount },
  loader: await sizeOf(join(PKG, 'lib')),
  embed: await sizeOf(join(PKG, 'site/embed.js')),
  site: { ...await sizeOf(join(PKG, 'site')), brotli },
  single: await sizeOf(single),
};
await writeFile(join(DIST, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
const kb = (b) => `${(b / 1024).toFixed(0)} KB`;
console.log(`attnviz ${version}: ${relative(ROOT, tgz)} ${kb(sizes.tarball.bytes)} (${sizes.tarball.files} files, ${kb(sizes.tarball.unpacked)} unpacked)`);
console.log(`  loader lib/ ${kb(sizes.loader.bytes)} (${kb(sizes.loader.gzip)} gzip); embed.js ${kb(sizes.embed.bytes)} (${kb(sizes.embed.gzip)} gzip)`);
console.log(`  site ${relative(ROOT, site)}/ ${kb(sizes.site.bytes)} in ${sizes.site.files} files (${kb(sizes.site.gzip)} gzip, ${kb(sizes.site.brotli)} brotli); single ${relative(ROOT, single)} ${kb(sizes.single.bytes)} (${kb(sizes.single.gzip)} gzip)`);
