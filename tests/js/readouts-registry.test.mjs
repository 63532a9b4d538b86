// readouts-registry.test.mjs: the readouts are one table, the library's av_readout_info (the registry's
// "readouts", read from the real wasm module); every list of readouts is derived from it, and every
// readout has what docs/adding-a-readout.md asks of it: its row in docs/readouts.md's definitions, a
// definition test that declares it ("readouts covered: KEY …" in a file of tests/ that also names the key),
// its row in the page's readout table when it has a place there, and its value from σ on the page when it
// is spectral. The committed generated docs (scripts/readout-docs.mjs) must equal what the registry gives.
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { READOUT_INFO, SPECTRAL_KEYS, SWEEP_READOUTS } from '../../web/wasm/readout-info.mjs';
import { READOUT_ROWS } from '../../web/render/readouts.mjs';
import { spectralReadouts } from '../../web/compute/spectral.mjs';
import { DOCS } from '../../scripts/readout-docs.mjs';

const ROOT = new URL('../../', import.meta.url);
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const REG = av.registry.readouts;
const read = (path) => readFileSync(new URL(path, ROOT), 'utf8');

/** The keys of docs/readouts.md's definitions table, in order (the table after "The definitions"). */
function docsKeys(text) {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('The definitions, one row per key'));
  const keys = [];
  for (let i = start + 1, inTable = false; start >= 0 && i < lines.length; i++) {
    const m = lines[i].match(/^\| `([^`]+)` \|/);
    if (m) { keys.push(m[1]); inTable = true; } else if (inTable && !lines[i].startsWith('|')) break;
  }
  return keys;
}

/** The C constant of a key (rank_rel_1e-3 → AV_R_RANK_REL_1E3), as a test file may name it. */
const constantOf = (key) => `AV_R_${key.toUpperCase().replace(/[-.]/g, '')}`;

/** Per key, the test files that declare it ("readouts covered: …") and name it elsewhere in their text. */
function declaredTests() {
  const out = new Map();
  for (const dir of ['tests/c', 'tests/oracle', 'tests/js', 'tests/e2e']) {
    for (const name of readdirSync(new URL(`${dir}/`, ROOT))) {
      if (!/\.(c|py|mjs)$/.test(name) || name === 'readouts-registry.test.mjs') continue;
      const text = read(`${dir}/${name}`);
      const decl = [...text.matchAll(/readouts covered:([^\n]*)/g)];
      const body = text.replace(/readouts covered:[^\n]*/g, '');
      for (const m of decl) {
        for (const key of m[1].replace(/\(.*$/, '').split(/[\s,]+/).filter(Boolean)) {
          const named = body.includes(`"${key}"`) || body.includes(`'${key}'`) || body.includes(constantOf(key));
          if (named) out.set(key, [...(out.get(key) ?? []), `${dir}/${name}`]);
        }
      }
    }
  }
  return out;
}

/** What each readout of `readouts` lacks (one line each; [] when nothing does). */
function lacking(readouts) {
  const docs = docsKeys(read('docs/readouts.md')), tests = declaredTests();
  const covered = (key) => READOUT_ROWS.some((row) => [...row.keys, ...(row.reasonKeys ?? [])].includes(key));
  const fromSigma = spectralReadouts(Float64Array.from([3, 2, 1, 0.5]), 1e-9, 4);
  const out = [];
  for (const r of readouts) {
    if (!docs.includes(r.key)) out.push(`${r.key}: no row in docs/readouts.md's definitions`);
    if (!tests.has(r.key)) out.push(`${r.key}: no definition test declares it ("readouts covered: ${r.key}" in a file of tests/ that names it)`);
    if (r.display > 0 && !covered(r.key)) out.push(`${r.key}: no row in the page's readout table (web/render/readouts.mjs)`);
    if (r.kind === 'spectral' && !(r.key in fromSigma)) out.push(`${r.key}: the page does not compute it from σ (web/compute/spectral.mjs)`);
  }
  const order = readouts.map((r) => r.key).filter((k) => docs.includes(k));
  if (docs.join() !== order.join()) out.push(`docs/readouts.md's definitions are not in enum order, or hold a key the registry lacks: ${docs.join(', ')}`);
  return out;
}

describe('every readout is one row of av_readout_info', () => {
  it('has its docs row, its definition test, its page row, and its value from σ when spectral', () => {
    expect(REG.length).toBeGreaterThan(15);
    expect(lacking(REG)).toEqual([]);
  });

  it('fails for a readout that lacks them (a fake extra row)', () => {
    const fake = { key: 'fake_readout', label: 'fake', kind: 'spectral', format: 'real', display: 99, sweep: 0 };
    const got = lacking([...REG, fake]);
    expect(got.filter((l) => l.startsWith('fake_readout: ')).map((l) => l.split(':')[1].trim().split(' ').slice(0, 3).join(' '))).toEqual([
      'no row in', 'no definition test', 'no row in', 'the page does',
    ]);
  });

  it('the generated docs (docs/readouts.md\'s index) equal what the registry gives', () => {
    for (const [path, gen] of Object.entries(DOCS)) {
      const text = read(path);
      expect(gen(text, REG) === text, `${path}: run node scripts/readout-docs.mjs`).toBe(true);
    }
  });
});

describe('the page\'s lists of readouts are the registry\'s', () => {
  it('the loader filled the tables from the same registry', () => {
    expect(READOUT_INFO).toEqual(REG);
    expect(REG.map((r) => r.key)).toEqual(av.registry.readouts.map((r, i) => av.cstring(av.exports.av_readout_name(i))));
  });
  it('spectral keys, sweep choices and the schema\'s sweep_y', () => {
    expect(SPECTRAL_KEYS).toEqual(REG.filter((r) => r.kind === 'spectral').map((r) => r.key));
    const sweep = REG.filter((r) => r.sweep).sort((a, b) => a.sweep - b.sweep).map((r) => r.key);
    expect(SWEEP_READOUTS).toEqual(sweep);
    const y = buildSchema(av.registry).SCHEMA.find((e) => e.name === 'sweep_y');
    expect(y.options).toEqual(sweep);
    expect(y.default).toBe(sweep[0]);
  });
  it('the table\'s rows: in display order, spectral exactly when a key they show is', () => {
    const info = (k) => REG.find((r) => r.key === k);
    const first = (row) => Math.min(...[...row.keys, ...(row.reasonKeys ?? [])].map((k) => info(k)?.display || Infinity));
    const places = READOUT_ROWS.map(first);
    expect(places.every(Number.isFinite)).toBe(true);
    expect(places).toEqual([...places].sort((a, b) => a - b));
    for (const row of READOUT_ROWS) {
      expect(row.spectral, row.id).toBe([...row.keys, ...(row.reasonKeys ?? [])].some((k) => info(k).kind === 'spectral'));
    }
  });
});
