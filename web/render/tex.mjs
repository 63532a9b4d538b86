// tex.mjs: every formula on the page is typeset here, by KaTeX, as MathML (output: 'mathml'), which
// Chromium, Firefox and Safari draw natively: no inline style= attributes (the page runs under a strict
// Content-Security-Policy without 'unsafe-inline' styles, docs/page.md), no KaTeX stylesheet and no math
// fonts to download. MathML Core draws \mathbf and \mathbb as plain letters, so the page's TeX avoids
// them (write ℝ as the character); tests/js/tex.test.mjs holds every formula to that.
import katex from 'katex';

/** The MathML markup (a string) of one line of TeX; a TeX error shows the source in red, never throws. */
export function texToMarkup(tex) {
  return katex.renderToString(tex, { throwOnError: false, output: 'mathml' });
}

/** Typeset `tex` into element `el` (replacing its content). */
export function typeset(el, tex) {
  el.innerHTML = texToMarkup(tex);
}
