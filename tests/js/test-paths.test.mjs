// test-paths.test.mjs: no test names a path outside the repository but the real-model data, and that only
// through ATTNVIZ_SHARED (default ../shared): a path of one machine (mechanisms_oracle.py once read
// /work/shared/…) makes a check silently skip on every other machine.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
const SYSTEM = /^\/(usr|bin|dev|proc|sys|etc|tmp|var\/log)(\/|$)/; // the system's own: /usr/bin/python3, /dev/null
const HELPERS = ['tests/c/testutil.h', 'tests/oracle/shared_data.py', 'tests/js/shared-data.mjs'];

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (/^(corpus_|node_modules$|__pycache__$)/.test(name)) continue;
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(c|h|py|mjs|js|sh)$/.test(name)) yield p;
  }
}
const sources = [...files(join(ROOT, 'tests'))].filter((p) => !p.endsWith('test-paths.test.mjs')).map((p) => [relative(ROOT, p), readFileSync(p, 'utf8')]);

/** Absolute paths inside string literals that are not the system's. */
export function foreignPaths(text) {
  const out = [];
  // a literal that starts with two or more path components (a regular expression's /a|b/ is not one)
  for (const m of text.matchAll(/["'`](\/[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+)(?=["'`/$ {])/g)) if (!SYSTEM.test(m[1])) out.push(m[1]);
  return out;
}

describe('paths in the tests', () => {
  it('finds the paths it looks for', () => {
    expect(foreignPaths('STORIES = "/mnt/lab/shared/data/stories260K"')).toEqual(['/mnt/lab/shared/data/stories260K']);
    expect(foreignPaths("run('/usr/bin/python3', ['/dev/null'])")).toEqual([]);
  });
  it('no test names an absolute path of one machine', () => {
    expect(sources.length).toBeGreaterThan(40);
    const found = sources.flatMap(([p, text]) => foreignPaths(text).map((f) => `${p}: ${f}`));
    expect(found).toEqual([]);
  });
  it('only the three helpers read ATTNVIZ_SHARED', () => {
    const readers = sources.filter(([p, text]) => /getenv\("ATTNVIZ_SHARED"\)|environ(\.get)?\(?\[?["']ATTNVIZ_SHARED|env\.ATTNVIZ_SHARED/.test(text)).map(([p]) => p);
    expect(readers.sort()).toEqual([...HELPERS].sort());
  });
});
