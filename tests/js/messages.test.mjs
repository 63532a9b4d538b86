// The host-message rules (web/io/messages.mjs, docs/embedding.md) and the link keys that shape an embed
// (web/state/state.mjs: controls=, hide=, host=, lock=, embed=), against the real registry's schema.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema, listOf } from '../../web/state/state.mjs';
import { setPairs, senderAllowed, listenForHosts } from '../../web/io/messages.mjs';
import { originOf } from '../../web/state/origin.mjs';

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
  it('never set host= (who may send messages is the link\'s alone): it is refused and named', () => {
    expect(setPairs({ type: 'attnviz:set', state: { host: 'https://evil.example', n: 32 } })).toEqual({ pairs: [['n', '32']], refused: ['host'] });
    expect(setPairs({ type: 'attnviz:set', state: { m: 64 } })).toEqual({ pairs: [['m', '64']], refused: [] });
  });
});

describe('host= origins', () => {
  it('are read with the URL standard and compared in their serialized form', () => {
    expect(originOf('HTTP://127.0.0.1:8105')).toBe('http://127.0.0.1:8105');
    expect(originOf('https://a.example:443')).toBe('https://a.example');
    expect(originOf('https://A.Example/')).toBe('https://a.example'); // a trailing slash is the same origin
    expect(originOf('http://[::1]:8105')).toBe('http://[::1]:8105');
    expect(originOf('https://bücher.example')).toBe('https://xn--bcher-kva.example');
    for (const bad of ['*', 'null', '', ' ', 'https://a.example/path', 'https://a.example?x', 'https://a.example?', 'https://a.example#x',
      'https://u@a.example', 'https://u:p@a.example', 'ftp://a.example', 'javascript:alert(1)', 'file:///x', 'https:a.example', 'https://a.exa\tmple',
      'https://a.example//', 'https://', 'https://a.example:99999', 'data:,x', 'blob:https://a.example/x']) expect(originOf(bad), bad).toBe(null);
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
  it('origins match as the browser serializes them (event.origin)', () => {
    expect(senderAllowed({ source: other, origin: 'http://127.0.0.1:8105' }, { parent, origins: ['HTTP://127.0.0.1:8105'] })).toBe(true);
    expect(senderAllowed({ source: other, origin: 'https://a.example' }, { parent, origins: ['https://a.example:443/'] })).toBe(true);
    expect(senderAllowed({ source: other, origin: 'https://a.example:8443' }, { parent, origins: ['https://a.example'] })).toBe(false);
  });
  it('an invalid host= obeys no one, not even the parent', () => {
    for (const origins of [['*'], ['null'], ['https://a.example/x'], ['https://a.example', '*']]) {
      expect(senderAllowed({ source: parent, origin: 'https://a.example' }, { parent, origins }), origins.join()).toBe(false);
      expect(senderAllowed({ source: parent, origin: 'null' }, { parent, origins }), origins.join()).toBe(false);
    }
  });
});

describe('subscribers', () => {
  it('get snapshots only while the link still lets them drive the page', async () => {
    const got = [];
    const parent = { postMessage: (m, o) => got.push([m.type, m.state.n, o]) };
    const win = { parent, addEventListener(type, fn) { this.onmessage = fn; } };
    let host = '', n = 1;
    const tick = () => new Promise((r) => setTimeout(r, 0));
    const hosts = listenForHosts(win, { snapshot: async () => ({ state: { n: String(n) }, readouts: {}, tokens: null }), set: () => [], origins: () => listOf(host) });
    win.onmessage({ data: { type: 'attnviz:subscribe' }, source: parent, origin: 'https://a.example' });
    await tick();
    expect(got).toEqual([['attnviz:snapshot', '1', 'https://a.example']]);
    // the link now names another origin (a navigation of the frame): the parent is no longer answered
    host = 'https://b.example'; n = 2;
    hosts.changed();
    await tick();
    host = '*'; n = 3; // and an invalid host= answers no one
    hosts.changed();
    await tick();
    expect(got.length).toBe(1);
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
  it('host= keeps origins in their serialized form', () => {
    const { state, problems } = schema.fromHash('v=1&host=https://blog.example/,HTTP://127.0.0.1:8080,https://a.example:443');
    expect(state.host).toBe('https://blog.example,http://127.0.0.1:8080,https://a.example');
    expect(problems).toEqual([]);
    expect(schema.fromHash(schema.toHash(state)).state.host).toBe(state.host);
  });
  it('an invalid host= is kept as written and fails closed: the notice says no message is obeyed', () => {
    for (const [link, bad] of [['host=*', '"*" is'], ['host=null', '"null" is'], ['host=https://blog.example,javascript:alert(1),https://x.example/path', '"javascript:alert(1)", "https://x.example/path" are']]) {
      const { state, problems } = schema.fromHash(`v=1&${link}`);
      expect(problems, link).toEqual([`host: ${bad} not an origin (http(s)://host[:port]): no message is obeyed`]);
      expect(senderAllowed({ source: 1, origin: 'https://blog.example' }, { parent: 1, origins: listOf(state.host) }), link).toBe(false);
      // the link keeps it (a reload does not quietly open the embed to its parent)
      expect(schema.fromHash(schema.toHash(state)).state.host, link).toBe(state.host);
    }
  });
  it('a host= of separators alone obeys no one, and says so; an empty one is the default (review of issue 27)', () => {
    const from = (origin) => ({ source: 1, origin });
    // every link the page wrote until 2026-11 ends in host=: the parent, without a notice
    for (const link of ['host=', 'host=%20']) {
      const { state, problems } = schema.fromHash(`v=1&embed=heatmap&${link}`);
      expect(problems, link).toEqual([]);
      expect(state.host, link).toBe('');
      expect(senderAllowed(from('https://a.example'), { parent: 1, origins: listOf(state.host) }), link).toBe(true);
      expect(senderAllowed({ source: 2, origin: 'https://a.example' }, { parent: 1, origins: listOf(state.host) }), link).toBe(false);
    }
    for (const link of ['host=,', 'host=%20,%20,']) {
      const { state, problems } = schema.fromHash(`v=1&embed=heatmap&${link}`);
      expect(problems, link).toEqual(['host: names no origin, so no message is obeyed (leave host= empty or out to obey the parent window)']);
      expect(senderAllowed(from('https://a.example'), { parent: 1, origins: listOf(state.host) }), link).toBe(false);
      expect(schema.fromHash(schema.toHash(state)).state.host, link).toBe(state.host); // stays closed on a reload
    }
    // a trailing comma beside an origin is only a separator
    expect(schema.fromHash('v=1&host=https://a.example,').state.host).toBe('https://a.example');
    // and a link the page writes at the default reads back as the default, without a notice
    expect(schema.fromHash(schema.toHash(schema.defaults())).state.host).toBe('');
    expect(schema.fromHash(schema.toHash(schema.defaults())).problems).toEqual([]);
  });
  it('a repeated host key obeys no one: the last one does not quietly win, and the notice is true', () => {
    for (const link of ['host=https://a.example&host=', 'host=*&host=https://a.example', 'host=https://a.example&host=https://b.example', 'host=https://a.example&n=32&host=https://a.example']) {
      const { state, problems } = schema.fromHash(`v=1&embed=heatmap&${link}`);
      for (const origin of ['https://a.example', 'https://b.example'])
        expect(senderAllowed({ source: 1, origin }, { parent: 1, origins: listOf(state.host) }), `${link} ${origin}`).toBe(false);
      expect(problems, link).toEqual([`host: given ${link.split('host=').length - 1} times in the link, so no message is obeyed (give one comma-separated list)`]);
    }
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
