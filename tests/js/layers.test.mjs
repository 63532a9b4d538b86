// layers.test.mjs: web/'s folders are its layers (docs/architecture.md, "The page"), and a module imports
// only from its own layer or a layer below. An upward import is how the workers came to bundle the
// variants' presentation (compute/engine.mjs importing io/export.mjs), so it fails here by name.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
/**
 * From the top down: a module may import from a layer of the same rank or a lower one. io/ (files, host
 * pages, the snapshot) sits above render/ because the exports are drawings (SVG figures).
 */
const RANK = { '': 8, ui: 7, io: 6, render: 5, state: 4, workers: 3, compute: 2, wasm: 1 };

function* modules(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* modules(p);
    else if (name.endsWith('.mjs')) yield relative(ROOT, p).split('\\').join('/');
  }
}
const layerOf = (path) => { const parts = path.split('/'); return parts.length > 2 ? parts[1] : ''; };

/** The relative imports of a module's text (static, dynamic and ?worker ones), resolved against its path. */
export function importsOf(path, text) {
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.\.?\/[^'?]+)/g)]
    .map((m) => posix.normalize(posix.join(posix.dirname(path), m[1])));
}

/** "a → b" for every import of a module into a layer above its own, or a module outside the layers. */
export function upwardImports(sources) {
  const out = [];
  for (const [path, text] of sources) {
    if (!(layerOf(path) in RANK)) { out.push(`${path}: not in a layer's folder`); continue; }
    for (const target of importsOf(path, text)) {
      if (!target.startsWith('web/')) continue;
      if (RANK[layerOf(target)] > RANK[layerOf(path)]) out.push(`${path} → ${target}`);
    }
  }
  return out;
}

describe('the layers of web/', () => {
  it('finds an upward import and a module outside the layers', () => {
    expect(upwardImports([
      ['web/compute/a.mjs', "import { x } from '../io/b.mjs';\nimport { y } from './c.mjs';"],
      ['web/state/d.mjs', "const m = await import('../wasm/e.mjs');"],
      ['web/misc/f.mjs', ''],
    ])).toEqual(['web/compute/a.mjs → web/io/b.mjs', 'web/misc/f.mjs: not in a layer\'s folder']);
  });

  it('has no module importing from a layer above its own', () => {
    const sources = [...modules(join(ROOT, 'web'))].map((p) => [p, readFileSync(join(ROOT, p), 'utf8')]);
    expect(sources.length).toBeGreaterThan(40);
    expect(upwardImports(sources)).toEqual([]);
  });
});
