// unused-exports.test.mjs: every name a module of web/ exports is used somewhere: by another module of
// web/, by a test or a benchmark, or in its own file. An export nothing reads is dead code that still
// looks like an interface (issue 29 found three: SCALING_BUDGETS, nextTick, SEQUENTIAL), the JS side of
// the C build's -Wunused-function. The match is by whole word, so a mention in a comment counts as a use.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (/^(node_modules|corpus_.*|__pycache__)$/.test(name)) continue;
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(mjs|js|html)$/.test(name)) yield p;
  }
}
const text = new Map(['web', 'tests', 'bench'].flatMap((d) => [...files(join(ROOT, d))])
  .filter((p) => !p.endsWith('unused-exports.test.mjs')) // its own comment names the removed ones
  .map((p) => [relative(ROOT, p), readFileSync(p, 'utf8')]));

/** The names a module exports: `export function|const|let|class NAME` and `export { a, b as c }`. */
function exportedNames(src) {
  const names = [...src.matchAll(/^export\s+(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)/gm)]
    .map((m) => m[1]);
  for (const m of src.matchAll(/^export\s*\{([^}]*)\}/gm))
    for (const part of m[1].split(',')) if (part.trim()) names.push(part.trim().split(/\s+as\s+/).pop());
  return names;
}

const count = (src, name) => (src.match(new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g')) || []).length;

describe('exports of web/', () => {
  it('finds the exports of a module', () => {
    expect(exportedNames('export const A = 1;\nexport function* g() {}\nexport { b, c as d };\nconst e = 2;'))
      .toEqual(['A', 'g', 'b', 'd']);
  });

  it('has none that nothing uses', () => {
    const unused = [];
    for (const [path, src] of text) {
      if (!path.startsWith('web/') || path.endsWith('.html')) continue;
      for (const name of exportedNames(src)) {
        const here = count(src, name) > 1;
        const elsewhere = [...text].some(([p, s]) => p !== path && count(s, name) > 0);
        if (!here && !elsewhere) unused.push(`${path}: ${name}`);
      }
    }
    expect(unused).toEqual([]);
  });
});
