// doc-paths.test.mjs: every web/ path the docs, the comments and the build files name is a file that
// exists. web/ is in folders by layer (docs/architecture.md, "The page"); a path left behind by a move
// sends a reader to nothing, and nothing else would notice.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
const DIRS = ['docs', 'web', 'tests', 'scripts', 'bench', 'include', 'src'];
const TOP = ['README.md', 'Makefile', 'web.mk', 'emscripten.mk', 'vite.config.mjs', 'vite.single.mjs'];
// tests whose examples are made-up paths; the drill's throw-away panel (docs/adding-a-panel.md), named as gone
const FIXTURES = ['tests/js/doc-paths.test.mjs', 'tests/js/layers.test.mjs'];
const GONE = ['web/ui/dummy.mjs'];

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (/^(node_modules|corpus_.*|__pycache__)$/.test(name)) continue;
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(md|mjs|js|html|css|c|h|py|mk|sh)$/.test(name)) yield relative(ROOT, p);
  }
}

/** The web/ file paths a text names (not build/web/…, which the build makes, nor a NAME placeholder). */
export function webPaths(text) {
  return [...text.matchAll(/(?<![\w./-])web\/[\w./-]*?\.(?:mjs|js|css|html|svg)(?![\w-])/g)].map((m) => m[0])
    .filter((p) => !/\/[A-Z]+\.\w+$/.test(p));
}

describe('web/ paths in the docs and comments', () => {
  it('finds the paths a text names', () => {
    expect(webPaths('see web/a/b.mjs, build/web/index.html and `web/c.css`; web/*.mjs; web/d.mjs?worker; web/ui/NAME.mjs'))
      .toEqual(['web/a/b.mjs', 'web/c.css', 'web/d.mjs']);
  });

  it('names only files that exist', () => {
    const all = [...TOP.filter((f) => existsSync(join(ROOT, f))), ...DIRS.flatMap((d) => [...files(join(ROOT, d))])]
      .filter((f) => !FIXTURES.includes(f));
    expect(all.length).toBeGreaterThan(100);
    const missing = all.flatMap((f) => webPaths(readFileSync(join(ROOT, f), 'utf8'))
      .filter((p) => !existsSync(join(ROOT, p)) && !GONE.includes(p)).map((p) => `${f}: ${p}`));
    expect(missing).toEqual([]);
  });
});
