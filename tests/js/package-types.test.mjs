// package-types.test.mjs: the package's hand-written declarations (types/, docs/package.md) stay true to
// the code and the docs they were written from, and its version is said the same way everywhere. No
// TypeScript compiler here: the declarations are read as text, the names compared with the real objects.
import { describe, expect, it } from 'vitest';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyFiles } from '../e2e/tiny-model.mjs';
import { tinyHF } from '../e2e/tiny-hf.mjs';
import * as loader from '../../web/wasm/attnviz.mjs';

const ROOT = new URL('../../', import.meta.url);
const read = (p) => readFileSync(new URL(p, ROOT), 'utf8');
const LOADER_DTS = read('types/attnviz.d.ts');
const EMBED_DTS = read('types/embed.d.ts');

/** The member names an `interface NAME { … }` of a .d.ts declares (one level: nested braces skipped). */
function interfaceMembers(dts, name) {
  const start = dts.search(new RegExp(`interface ${name}\\b[^{]*\\{`));
  if (start < 0) return null;
  let i = dts.indexOf('{', start) + 1, depth = 1, body = '';
  for (; depth > 0 && i < dts.length; i++) {
    const c = dts[i];
    if (c === '{') depth++;
    else if (c === '}') depth--;
    if (depth === 1 && c !== '}') body += c;
    else if (depth === 1 && c === '}') body += ' ';
  }
  body = body.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return [...body.matchAll(/^\s*(?:readonly\s+)?('[\w-]+'|\w+)\??\s*[:(]/gm)].map((m) => m[1].replace(/'/g, ''));
}

/** The keys of docs/page.md's two tables of link keys (first column, each `key` in it). */
function linkKeys() {
  const keys = [];
  for (const line of read('docs/page.md').split('\n')) {
    const m = line.match(/^\| ((?:`[^`]+`(?:, )?)+) \|/);
    if (m) keys.push(...[...m[1].matchAll(/`([^`]+)`/g)].map((x) => x[1]));
  }
  return keys;
}

describe('types/attnviz.d.ts, the loader', () => {
  it('declares every name the loader module exports', () => {
    const declared = [...LOADER_DTS.matchAll(/^export\s+(?:declare\s+)?(?:function|const|class)\s+(\w+)/gm)].map((m) => m[1]);
    expect(Object.keys(loader).sort()).toEqual([...new Set(declared)].sort());
  });

  it('declares only members the loaded module, a lab and a model really have', async () => {
    const av = await loader.loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
    const lab = av.lab(16, 8);
    try {
      for (const [name, obj] of [['Attnviz', av], ['Lab', lab]]) {
        const members = interfaceMembers(LOADER_DTS, name);
        expect(members.length, name).toBeGreaterThan(10);
        expect(members.filter((m) => !(m in obj)), `${name} members the object lacks`).toEqual([]);
      }
      // a Model needs a checkpoint; its class's prototype and the config keys it fills say the same
      const model = interfaceMembers(LOADER_DTS, 'Model');
      const { Model } = await import('../../web/wasm/model.mjs');
      expect(model.filter((m) => m !== 'config' && !(m in Model.prototype))).toEqual([]);
      // the config keys declared are those both kinds of model fill: a llama2.c checkpoint's and a folder's
      const config = LOADER_DTS.match(/readonly config: \{([^}]*)\}/)[1];
      const keys = [...config.matchAll(/(\w+):/g)].map((m) => m[1]);
      const ll = tinyFiles(mkdtempSync(join(tmpdir(), 'attnviz-types-')));
      const a = av.model(readFileSync(ll.model), readFileSync(ll.tok)).model;
      const hf = (await loader.loadModelFolder(av, Object.entries(tinyHF('gpt2').files).map(([name, bytes]) => ({ name, bytes })))).model;
      const both = Object.keys(a.config).filter((k) => k in hf.config);
      expect(keys.sort()).toEqual(both.sort());
      const src = read('web/wasm/model.mjs').match(/const MODEL_CONFIG = \[([^\]]*)\]/)[1];
      expect([...src.matchAll(/'(\w+)'/g)].map((m) => m[1]).every((k) => keys.includes(k))).toBe(true);
      a.free(); hf.free();
      // LoadOptions: the options loadAttnviz documents (its @param opts.NAME lines)
      const documented = [...read('web/wasm/attnviz.mjs').matchAll(/@param \{[^}]*\} \[opts\.(\w+)/g)].map((m) => m[1]);
      expect(interfaceMembers(LOADER_DTS, 'LoadOptions').sort()).toEqual(documented.sort());
    } finally { lab.free(); }
  });
});

describe('types/embed.d.ts, the element', () => {
  it('declares an attribute for every link key of docs/page.md (view for embed, power-n for N)', () => {
    const attrs = interfaceMembers(EMBED_DTS, 'AttnVizAttributes');
    const wanted = linkKeys().map((k) => ({ embed: 'view', N: 'power-n' })[k] ?? k);
    expect(wanted.length).toBeGreaterThan(40);
    expect(wanted.filter((k) => !attrs.includes(k))).toEqual([]);
    // and no attribute that is no key: preset (a lesson's link) and lab (where "open in attnviz" leads) the only extras
    expect(attrs.filter((a) => !wanted.includes(a) && a !== 'preset' && a !== 'lab')).toEqual([]);
  });

  it('declares the element class the built embed.js exports, with snapshot()', () => {
    expect(EMBED_DTS).toMatch(/export declare class AttnViz extends HTMLElement/);
    expect(EMBED_DTS).toMatch(/'attn-viz': AttnViz/);
    expect(read('web/embed.mjs')).toMatch(/^export class AttnViz extends HTMLElement/m);
    expect(read('web/embed.mjs')).toMatch(/^ {2}async snapshot\(\)/m);
  });
});

describe('the version', () => {
  it('is one semver, the same in package.json, the loader and the CHANGELOG', () => {
    const { version } = JSON.parse(read('package.json'));
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    expect(loader.VERSION).toBe(version);
    expect(read('CHANGELOG.md').match(/^## (\S+)/m)[1]).toBe(version);
  });
});
