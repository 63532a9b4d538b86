// The host-message rules (web/messages.mjs, docs/embedding.md) and the link keys that shape an embed
// (web/state.mjs: controls=, hide=, host=, lock=, embed=), against the real registry's schema.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/attnviz.mjs';
import { buildSchema, listOf } from '../../web/state.mjs';
import { setPairs, senderAllowed } from '../../web/messages.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);

describe('attnviz:set payloads', () => {
  it('take strings, finite numbers and booleans as link text, and nothing else', () => {
    expect(setPairs({ type: 'attnviz:set', state: { m: 1024, causal: true, variant: 'elu', bad: NaN, obj: {}, fn: () => 1, nul: null } }).pairs)
      .toEqual([['m', '1024'], ['causal', '1'], ['variant', 'elu']]);
    for (const d of [null, undefined, 42, 'x', { state: null }, { state: [1] }, { state: 'n=3' }]) expect(setPairs(d)).toBe(null);
    expect(setPairs({ state: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])) }).pairs.length).toBe(64);
    expect(setPairs({ state: { v: 'x'.repeat(5000) } }).pairs[0][1].length).toBe(1000);
  });
});

describe('who is obeyed', () => {
  const parent = {}, other = {};
  it('the parent window by default; with host= only the origins named', () => {
    expect(senderAllowed({ source: parent, origin: 'https://a.example' }, { parent, origins: [] })).toBe(true);
    expect(senderAllowed({ source: other, origin: 'https://a.example' }, { parent, origins: [] })).toBe(false);
    expect(senderAllowed({ source: parent, origin: 'https://a.example' }, { parent: null, origins: [] })).toBe(false);
    expect(senderAllowed({ source: parent, origin: 'https://a.example' }, { parent, origins: ['https://b.example'] })).toBe(false);
    expect(senderAllowed({ source: other, origin: 'https://b.example' }, { parent, origins: ['https://b.example'] })).toBe(true);
  });
});

describe("an embed's link keys", () => {
  it('controls= and hide= keep the controls they name, in order, once; others are reported', () => {
    const { state, problems } = schema.fromHash('v=1&hide=gen,seed,gen,nope,theme,embed&controls=p,m');
    expect(state.hide).toBe('gen,seed');
    expect(state.controls).toBe('p,m');
    expect(problems).toEqual(['hide: "nope", "theme", "embed" are not a control, ignored']);
    expect(schema.toHash(state)).toMatch(/&controls=p,m&hide=gen,seed&/);
    expect(listOf('')).toEqual([]);
  });
  it('host= keeps http(s) origins only', () => {
    const { state, problems } = schema.fromHash('v=1&host=https://blog.example,http://127.0.0.1:8080,javascript:alert(1),https://x.example/path');
    expect(state.host).toBe('https://blog.example,http://127.0.0.1:8080');
    expect(problems[0]).toMatch(/"javascript:alert\(1\)", "https:\/\/x.example\/path" are not an origin/);
    expect(schema.fromHash(schema.toHash(state)).state.host).toBe(state.host);
  });
  it('shown(): hide= hides a control (a toggle with its slider); an embed shows only controls=', () => {
    const base = { ...schema.defaults(), variant: 'focused', dwc: true };
    const e = (k) => schema.entryOf(k);
    expect(schema.shown(e('dwc_k'), base)).toBe(true);
    expect(schema.shown(e('dwc_k'), { ...base, hide: 'dwc' })).toBe(false);
    expect(schema.shown(e('gen'), { ...base, hide: 'dwc' })).toBe(true);
    expect(schema.shown(e('p'), { ...base, embed: 'heatmap', controls: 'p' })).toBe(true);
    expect(schema.shown(e('gen'), { ...base, embed: 'heatmap', controls: 'p' })).toBe(false);
    expect(schema.shown(e('m'), { ...base, embed: 'heatmap', controls: 'm' })).toBe(false); // m is not focused's
  });
});
