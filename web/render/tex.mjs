// tex.mjs: every formula on the page is typeset here, by KaTeX, as MathML (output: 'mathml'), which
// Chromium, Firefox and Safari draw natively: no inline style= attributes (the page runs under a strict
// Content-Security-Policy without 'unsafe-inline' styles, docs/embedding.md), no KaTeX stylesheet and no
// math fonts to download. MathML Core draws \mathbf and \mathbb as plain letters, so the page's TeX
// avoids them (write ℝ as the character). KaTeX is loaded on first use, after the first view is drawn,
// so its code is not parsed before the page is interactive (bench/weight.mjs).

let katex = null;
const loadKatex = () => (katex ??= import('katex').then((m) => m.default));

// KaTeX writes \hat's accent as ASCII ^, which fonts without a MATH table draw tall and off to the left of
// its base; U+02C6, the modifier circumflex, sits over it
const HAT = '\u02c6';

/**
 * Typeset `tex` into element `el` (replacing its content), as soon as KaTeX is loaded (a moment after
 * the page starts). A later call for the same element wins. The MathML is built as nodes (KaTeX's DOM
 * tree, the same tree renderToString writes out), never as an HTML string: a host page of <attn-viz> that
 * requires Trusted Types refuses innerHTML (docs/embedding.md). Not katex.render, which refuses to run
 * on a page in quirks mode, as a blog's may be.
 */
export function typeset(el, tex) {
  el.dataset.tex = tex;
  return loadKatex().then((k) => {
    if (el.dataset.tex !== tex) return;
    const node = k.__renderToDomTree(tex, { throwOnError: false, output: 'mathml' }).toNode();
    for (const mo of node.querySelectorAll('mover > mo:last-child')) if (mo.textContent === '^' && !mo.attributes.length) mo.textContent = HAT;
    el.replaceChildren(node);
  });
}
