// tex.mjs: every formula on the page is typeset here, by KaTeX, as MathML (output: 'mathml'), which
// Chromium, Firefox and Safari draw natively: no inline style= attributes (the page runs under a strict
// Content-Security-Policy without 'unsafe-inline' styles, docs/embedding.md), no KaTeX stylesheet and no
// math fonts to download. MathML Core draws \mathbf and \mathbb as plain letters, so the page's TeX
// avoids them (write ℝ as the character). KaTeX (its own chunk, ~75 KiB gzip) is fetched only once a
// formula is on screen: a heatmap, in an element or an iframe, never downloads it (docs/performance.md).

let katex = null;

/** KaTeX's module, imported on the first call (the same promise after). */
function loadKatex() {
  katex ??= import('katex').then((m) => m.default);
  return katex;
}

// KaTeX writes \hat's accent as ASCII ^, which fonts without a MATH table draw tall and off to the left of
// its base; U+02C6, the modifier circumflex, sits over it
const HAT = '\u02c6';

/**
 * The MathML of one line of TeX as a node (KaTeX's DOM tree, the same tree renderToString writes out),
 * never an HTML string: a host page of <attn-viz> that requires Trusted Types refuses innerHTML
 * (docs/embedding.md). Not katex.render, which refuses to run on a page in quirks mode, as a blog's may
 * be. A TeX error shows the source in red, never throws.
 */
async function texNode(tex) {
  const node = (await loadKatex()).__renderToDomTree(tex, { throwOnError: false, output: 'mathml' }).toNode();
  for (const mo of node.querySelectorAll('mover > mo:last-child')) if (mo.textContent === '^' && !mo.attributes.length) mo.textContent = HAT;
  return node;
}

// Formulas waiting for KaTeX: element → its typeset() calls. The first of them on screen (in any document or shadow
// root: an IntersectionObserver's implicit root is the viewport) starts the import, then all are typeset.
const waiting = new Map();
let watcher = null;

function startKatex() {
  watcher?.disconnect();
  watcher = null;
  loadKatex();
  for (const calls of waiting.values()) for (const call of calls) call();
  waiting.clear();
}

/**
 * Typeset `tex` into element `el` (replacing its content). Before KaTeX is loaded, the element waits until
 * it (or any other waiting formula) is on screen; after, it is typeset at once. A later call for the same
 * element wins. Resolves once the formula is in place.
 */
export function typeset(el, tex) {
  el.dataset.tex = tex;
  const write = () => texNode(tex).then((node) => { if (el.dataset.tex === tex) el.replaceChildren(node); });
  if (katex || typeof IntersectionObserver === 'undefined') return write();
  return new Promise((resolve) => {
    if (!waiting.has(el)) waiting.set(el, []);
    waiting.get(el).push(() => resolve(write()));
    watcher ??= new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) startKatex(); });
    watcher.observe(el);
  });
}
