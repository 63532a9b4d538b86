// The embed menu's snippets (web/io/embed-code.mjs, issue 32 item 5): the fewest link keys that read back as
// the state, for every variant with its knobs moved off their defaults; the page's own keys left out; the
// element's attribute names (power-n for N); no inline style; the open link in the state's language.
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { figurePairs, openHash, iframeSnippet, elementSnippet, PAGE_KEYS } from '../../web/io/embed-code.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);
const complete = (st) => schema.toHash(st, { complete: true });
const link = (pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&');
const LAB = 'https://example.org/attnviz/';

/** A state of `variant` with each of its knobs (and a few inputs) one step off the default. */
function moved(variant) {
  let st = schema.withVariant(schema.defaults(), { ...schema.defaults(), variant });
  for (const e of schema.SCHEMA) {
    if (!['input', 'variant', 'readout'].includes(e.group) || e.name === 'variant' || e.name === 'src' || !schema.shown(e, st)) continue;
    let v = st[e.name];
    if (e.type === 'bool') v = !v;
    else if (e.type === 'enum') v = e.options.find((o) => o !== v) ?? v;
    else if (e.values) v = e.values.find((x) => x !== v);
    else if (typeof e.min === 'number') v = e.type === 'int' ? v + 2 : +(v * 0.9 + e.min * 0.1).toPrecision(6);
    st = schema.normalise({ ...st, [e.name]: schema.coerce(e, v, st).value }); // as a control would set it
  }
  return schema.normalise(st);
}

describe('the embed snippets', () => {
  it('write the fewest keys that read back as the state, for every variant', () => {
    for (const variant of schema.VARIANTS) {
      const st = moved(variant);
      const pairs = figurePairs(schema, st);
      const back = complete(schema.fromHash(link(pairs)).state).split('&'), want = complete(st).split('&');
      expect(back.filter((kv) => !want.includes(kv)), variant).toEqual([]);
      // each key is needed: without it the state read back differs
      for (const [k] of pairs.filter(([k]) => k !== 'v' && k !== 'variant')) {
        expect(complete(schema.fromHash(link(pairs.filter(([x]) => x !== k))).state), `${variant}: ${k}`).not.toBe(complete(st));
      }
    }
    // the defaults: the version and the variant alone
    expect(figurePairs(schema, schema.defaults()).map(([k]) => k)).toEqual(['v', 'variant']);
  });

  it('leave the page\'s own keys out, and give the element its attribute names without style=', () => {
    const st = schema.fromHash('v=1&variant=taylor&N=3&n=128&embed=spectrum&controls=n&hide=seed&lock=1&projector=1&figs=article&lang=zh').state;
    const pairs = figurePairs(schema, st);
    for (const k of [...PAGE_KEYS, 'lang']) expect(pairs.map(([x]) => x)).not.toContain(k);
    const el = elementSnippet({ lab: LAB, pairs, langTag: 'zh-CN', view: 'heatmap', controls: ['N', 'n'], label: 'a "quoted" <label> & more' });
    expect(el).toBe(`<script type="module" src="${LAB}embed.js"></script>\n<attn-viz n="128" variant="taylor" power-n="3" view="heatmap" controls="N,n" lang="zh-CN" aria-label="a &quot;quoted&quot; &lt;label&gt; &amp; more"></attn-viz>`);
    const fr = iframeSnippet({ lab: LAB, pairs, lang: 'zh', view: 'sweep', controls: [], title: 'T' });
    expect(fr).toBe(`<iframe src="${LAB}#v=1&n=128&variant=taylor&N=3&lang=zh&embed=sweep" width="700" height="420" title="T"></iframe>`);
    expect(`${el}${fr}`).not.toMatch(/style=/);
    // the open link: the figure in the state's language, none of the page's own keys
    expect(openHash(schema, st)).toBe('v=1&n=128&variant=taylor&N=3&lang=zh');
    expect(openHash(schema, { ...st, lang: 'en' })).toBe('v=1&n=128&variant=taylor&N=3');
  });
});
