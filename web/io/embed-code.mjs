// embed-code.mjs: the HTML that puts the lab's current view in someone else's page (issue 32, item 5;
// docs/embedding.md, "Copy embed code"): an iframe snippet and an <attn-viz> element snippet, and the
// link an embed's "open in attnviz" opens. Pure: no DOM (the header's menu is web/ui/embed-code.mjs).
//
// The state goes in as the fewest link keys that give it back (fromHash of the snippet's keys is the
// lab's state, key by key: a default is left out), without inline style= (a host's CSP with
// style-src 'self' blocks it): the iframe has width and height attributes, the element nothing.

/** Link keys of the page itself, not of the figure: an embed sets them (embed, controls) or leaves them;
 *  theme is the reader's (a snippet leaves the figure to follow its host, whatever the lab showed). */
export const PAGE_KEYS = ['embed', 'controls', 'hide', 'lock', 'host', 'projector', 'figs', 'mech', 'theme'];
/** Link keys whose attribute on <attn-viz> has another name (HTML lower-cases N onto n). */
export const ELEMENT_ATTRIBUTE = { embed: 'view', N: 'power-n' };
/** The views each snippet takes (the sweep is the iframe's only). */
export const IFRAME_VIEWS = ['heatmap', 'spectrum', 'readouts', 'sweep'];
export const ELEMENT_VIEWS = ['heatmap', 'spectrum', 'readouts'];
/** The iframe's size: a 700 px column (a blog's), the height the embed views fit (docs/embedding.md). */
export const FRAME = { width: 700, height: 420 };

const pairsOf = (hash) => String(hash).replace(/^#/, '').split('&').filter(Boolean).map((kv) => {
  const i = kv.indexOf('=');
  return i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)];
});
const joined = (pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&');

/**
 * The state `st` as the fewest link pairs ([key, encoded value], `v` first) that fromHash reads back as
 * `st`, the page's own keys (PAGE_KEYS) at their defaults and left out, and without `lang` (the language
 * of the words, which each snippet says its own way).
 */
export function figurePairs(schema, st) {
  const base = { ...st };
  for (const k of PAGE_KEYS) if (schema.BY_NAME[k]) base[k] = schema.BY_NAME[k].default;
  const target = schema.toHash(base, { complete: true });
  const same = (pairs) => schema.toHash(schema.fromHash(joined(pairs)).state, { complete: true }) === target;
  const all = pairsOf(schema.toHash(base)).filter(([k]) => !PAGE_KEYS.includes(k) && k !== 'lang');
  // first the keys a link naming only the variant gives the same value (one parse, not one per key: this
  // runs with each frame of a drag in an embed, for its "open in attnviz"); should the rest not read back
  // as the state (a value the order of keys or a clamp decides), every key is tried
  const keep = new Set(['v', 'variant']);
  const plain = new Map(pairsOf(schema.toHash(schema.fromHash(joined(all.filter(([k]) => keep.has(k)))).state)));
  let pairs = all.filter(([k, v]) => keep.has(k) || plain.get(k) !== v);
  if (!same(pairs)) pairs = all;
  // drop each key whose absence changes nothing (one the others imply: a default that follows d)
  for (const [k] of [...pairs]) {
    if (k === 'v' || k === 'variant') continue;
    const without = pairs.filter(([key]) => key !== k);
    if (same(without)) pairs = without;
  }
  return pairs;
}

/** The link (without '#') of the full lab at the figure of state `st`, in its language: an embed's "open in attnviz". */
export function openHash(schema, st) {
  const pairs = figurePairs(schema, st);
  return joined(st.lang && st.lang !== schema.BY_NAME.lang?.default ? [...pairs, ['lang', st.lang]] : pairs);
}

/** Text for an HTML attribute value in double quotes. */
export const attr = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The iframe snippet. `lab`: the page's address without its hash; `pairs`: figurePairs; `lang`: the
 * page's language ('en' is left out of the link); `controls`: the keys of the controls it shows.
 */
export function iframeSnippet({ lab, pairs, lang = 'en', view, controls = [], title }) {
  const extra = [...(lang !== 'en' ? [['lang', lang]] : []), ['embed', view], ...(controls.length ? [['controls', controls.join(',')]] : [])];
  const src = `${lab}#${joined([...pairs, ...extra])}`;
  // the address as it is (an encoded URL holds no quote or angle bracket; a bare & before `key=` is valid HTML)
  return `<iframe src="${src}" width="${FRAME.width}" height="${FRAME.height}" title="${attr(title)}"></iframe>`;
}

/**
 * The <attn-viz> snippet: the module script (beside the page: `lab` is its directory) and the element,
 * each link key an attribute (decoded), `lang` HTML's (a BCP 47 tag) when not English, `aria-label` its name.
 */
export function elementSnippet({ lab, pairs, langTag = null, view, controls = [], label }) {
  const attrs = pairs.filter(([k]) => k !== 'v').map(([k, v]) => [ELEMENT_ATTRIBUTE[k] ?? k, decodeURIComponent(v)]);
  attrs.push(['view', view]);
  if (controls.length) attrs.push(['controls', controls.join(',')]);
  if (langTag) attrs.push(['lang', langTag]);
  attrs.push(['aria-label', label]);
  const script = new URL('embed.js', lab).href;
  return `<script type="module" src="${script}"></script>\n<attn-viz ${attrs.map(([k, v]) => `${k}="${attr(v)}"`).join(' ')}></attn-viz>`;
}
