// registry.test.mjs: one list of variants and knobs. The registry (av_registry_json, read by the loader
// from the real wasm module), the page's schema built from it (the variant picker and the knob controls)
// and the CLI's --help (build/native/attnviz, generated from the same table in C) must name the same
// variants in the same order, the same knobs, the same readers of each knob, and the same defaults.
import { describe, it, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const reg = av.registry;
const schema = buildSchema(reg);

/** The lines of one section of --help: from its heading to the next blank line. */
function section(help, heading) {
  const lines = help.split('\n');
  const start = lines.findIndex((l) => l.startsWith(heading));
  if (start < 0) throw new Error(`--help has no section "${heading}"`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return lines.slice(start + 1, end < 0 ? lines.length : end);
}

/** --help's variants: [{name, text}] in order (a name at two spaces, its lines after it). */
function helpVariants(help) {
  const out = [];
  for (const l of section(help, 'variants')) {
    const m = l.match(/^ {2}(\w+)\s{2,}(.*)$/);
    if (m) out.push({ name: m[1], text: m[2] });
    else out.at(-1).text += ` ${l.trim()}`;
  }
  return out;
}

/** --help's knobs: [{flags, text}] (flags at two spaces, then the meaning and the range, default, readers). */
function helpKnobs(help) {
  const out = [];
  for (const l of section(help, 'knobs')) {
    const m = l.match(/^ {2}(--[\w-]+(?:, --[\w-]+)*)(?: [A-Z][\w.]*)?\s*(.*)$/);
    if (m) out.push({ flags: m[1].split(', '), text: m[2] });
    else out.at(-1).text += ` ${l.trim()}`;
  }
  return out;
}

/** The '; '-separated pieces after a knob's meaning in --help: range, default, readers. */
function partsOf(h, k) {
  const at = h.text.indexOf(k.meaning);
  const rest = at < 0 ? h.text : h.text.slice(at + k.meaning.length).replace(/^\.\s*/, '');
  return rest.split(/;\s+/).map((p) => p.trim());
}

const help = execFileSync(CLI, ['--help'], { encoding: 'utf8' });
const variants = helpVariants(help);
const knobs = helpKnobs(help);

describe('the registry, the page and the CLI list the same variants and knobs', () => {
  it('the same variants, in the same order: the registry, the page\'s picker and --help', () => {
    const names = reg.variants.map((v) => v.name);
    expect(names.length).toBeGreaterThan(0);
    expect(schema.BY_NAME.variant.options).toEqual(names);
    expect(schema.VARIANTS).toEqual(names);
    expect(variants.map((v) => v.name)).toEqual(names);
    for (const v of reg.variants) {
      const h = variants.find((x) => x.name === v.name);
      expect(h.text, v.name).toContain(v.label);
      expect(h.text, v.name).toContain(v.formula);
      expect(h.text.includes('no causal form'), v.name).toBe(!v.causal);
      expect(typeof schema.BY_NAME.variant.optionLabels[v.name], v.name).toBe('string');
    }
  });

  it('the same knobs: each registry knob has its flag in --help and its control on the page', () => {
    for (const k of reg.knobs) {
      const h = knobs.find((x) => x.flags[0] === k.flag);
      expect(h, `--help lists ${k.flag}`).toBeDefined();
      if (k.type === 'bool') expect(h.flags).toContain(`--no-${k.flag.slice(2)}`);
      expect(h.text).toContain(k.meaning);
      const e = schema.knobEntry(k.key);
      expect(e, `the page has a control for ${k.key}`).not.toBe(null);
      expect(schema.SCHEMA.filter((x) => x.knob === k.key).every((x) => x.group === e.group)).toBe(true);
    }
    // a flag --help lists beyond the registry's knobs is a variant's weights (no knob of av_params)
    const weighted = reg.variants.filter((v) => v.weights).map((v) => v.name);
    for (const h of knobs.filter((x) => !reg.knobs.some((k) => k.flag === x.flags[0]))) {
      expect(weighted.some((name) => h.text.includes(name)), `${h.flags[0]} is a variant's weights`).toBe(true);
    }
  });

  it('the same readers: --help\'s "read by" and the page\'s knob lists are the registry\'s', () => {
    for (const k of reg.knobs) {
      const h = knobs.find((x) => x.flags[0] === k.flag);
      const readBy = partsOf(h, k).find((p) => p.startsWith('read by '))?.replace(/ \(default [^)]*\)/g, ''); // a variant's own default noted
      const listed = reg.variants.filter((v) => v.knobs.includes(k.key)).map((v) => v.name);
      const e = schema.knobEntry(k.key);
      if (listed.length) {
        expect(readBy, k.key).toBe(`read by ${listed.join(', ')}`);
        expect(e.variants, k.key).toEqual(listed);
      } else {
        expect(e.variants, `${k.key} is shown for every variant`).toBeUndefined();
        if (readBy) { // a global knob that only some variants read (scale): the registry's flag says which
          const scaled = reg.variants.filter((v) => v.scaled).map((v) => v.name);
          expect(readBy, k.key).toBe(`read by ${scaled.join(', ')}`);
        }
      }
    }
  });

  it('the same defaults and ranges: the page\'s and --help\'s', () => {
    for (const k of reg.knobs) {
      const h = knobs.find((x) => x.flags[0] === k.flag);
      const e = schema.knobEntry(k.key);
      const def = partsOf(h, k).find((p) => p.startsWith('default '))?.slice(8);
      let page;
      if (e.toggle) page = schema.BY_NAME[e.toggle].default ? String(e.default) : '0'; // off is 0
      else if (e.type === 'bool') page = e.default ? 'on' : 'off';
      else if (e.relative) page = null; // the page shows scale as a multiple of the default 1/√d
      else if (k.def_rule === 'min_n') page = `min(n, ${e.default})`;
      else page = String(e.default);
      const num = (x) => (x !== null && x !== undefined && x !== '' && Number.isFinite(Number(x)) ? String(Number(x)) : x);
      if (page !== null) expect(`${k.key}: ${num(def)}`).toBe(`${k.key}: ${num(page)}`); // C prints 1e-06, JS 0.000001
      else expect(schema.BY_NAME[e.name].default).toBe(1);
      const range = partsOf(h, k).map((p) => p.match(/^(-?\d+)\.\.(\S+)$/)).find(Boolean);
      if (range && !e.relative && !e.toggle) {
        expect(`${k.key}: ${e.min}..${typeof e.max === 'function' ? 'n' : e.max}`).toBe(`${k.key}: ${range[1]}..${range[2]}`);
      }
    }
  });
});
