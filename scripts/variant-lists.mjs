// variant-lists.mjs: the lists of variants in the docs, generated from the registry (av_registry_json, read
// from build/wasm/attnviz.wasm) so that a new variant never leaves a hand-kept list behind. A list is marked
//   <!-- variants:EXPR -->`a`, `b`<!-- /variants -->
// and EXPR selects registry rows: `all`, a flag (`scaled`, `causal`, `linear`, ...), `!flag`, `norm=RULE`
// or `knob=KEY` (the variants that read KEY). tests/js/presentation.test.mjs fails when a committed list
// differs from its regeneration.
//   node scripts/variant-lists.mjs           rewrite the lists in place
//   node scripts/variant-lists.mjs --check   exit 1 naming the files whose lists are out of date
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The files with marked lists, relative to the repository. */
export const LIST_FILES = ['README.md', 'docs/conventions.md', 'docs/variant-formulas.md', 'docs/model.md'];

const MARK = /<!-- variants:([^ ]+) -->([^]*?)<!-- \/variants -->/g;

/** The registry rows EXPR selects; throws on an expression it does not know (a typo is not an empty list). */
export function select(registry, expr) {
  const rows = registry.variants;
  if (expr === 'all') return rows;
  let m = /^norm=(\w+)$/.exec(expr);
  if (m) return rows.filter((v) => v.norm === m[1]);
  m = /^knob=(\w+)$/.exec(expr);
  if (m) {
    if (!registry.knobs.some((k) => k.key === m[1])) throw new Error(`variant list "${expr}": no knob ${m[1]}`);
    return rows.filter((v) => v.knobs.includes(m[1]));
  }
  m = /^(!?)(\w+)$/.exec(expr);
  if (m && rows.every((v) => typeof v[m[2]] === 'boolean')) return rows.filter((v) => v[m[2]] === !m[1]);
  throw new Error(`variant list "${expr}": not all, a flag, !flag, norm=RULE or knob=KEY`);
}

/** The text of a list: the registry names in its order, as code. */
export const listText = (rows) => rows.map((v) => `\`${v.name}\``).join(', ');

/** text with every marked list regenerated from the registry. */
export function regenerate(text, registry) {
  return text.replace(MARK, (_, expr) => `<!-- variants:${expr} -->${listText(select(registry, expr))}<!-- /variants -->`);
}

/** The expressions of the lists marked in text, in order. */
export const listExprs = (text) => [...text.matchAll(MARK)].map((m) => m[1]);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = new URL('../', import.meta.url);
  const { loadAttnviz } = await import('../web/wasm/attnviz.mjs');
  const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', root) });
  const stale = [];
  for (const file of LIST_FILES) {
    const path = new URL(file, root), text = readFileSync(path, 'utf8'), next = regenerate(text, av.registry);
    if (next === text) continue;
    stale.push(file);
    if (!process.argv.includes('--check')) writeFileSync(path, next);
  }
  if (process.argv.includes('--check') && stale.length) {
    console.error(`variant-lists: out of date in ${stale.join(', ')}; run node scripts/variant-lists.mjs`);
    process.exit(1);
  }
  console.log(stale.length ? `variant-lists: rewrote ${stale.join(', ')}` : 'variant-lists: every list is the registry\'s');
}
