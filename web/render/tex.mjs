// tex.mjs: every formula on the page is typeset here, by KaTeX, as MathML (output: 'mathml'), which
// Chromium, Firefox and Safari draw natively: no inline style= attributes (the page runs under a strict
// Content-Security-Policy without 'unsafe-inline' styles, docs/embedding.md), no KaTeX stylesheet and no
// math fonts to download. MathML Core draws \mathbf and \mathbb as plain letters, so the page's TeX
// avoids them (write ℝ as the character). KaTeX is loaded on first use, after the first view is drawn,
// so its code is not parsed before the page is interactive (bench/weight.mjs).

let katex = null;

/** The MathML markup (a string) of one line of TeX; a TeX error shows the source in red, never throws. */
export async function texToMarkup(tex) {
  katex ??= import('katex').then((m) => m.default);
  // KaTeX writes \hat's accent as ASCII ^, which fonts without a MATH table draw tall and off to the
  // left of its base; U+02C6, the modifier circumflex, sits over it
  return (await katex).renderToString(tex, { throwOnError: false, output: 'mathml' }).replaceAll('<mo>^</mo></mover>', '<mo>\u02c6</mo></mover>');
}

/**
 * Typeset `tex` into element `el` (replacing its content), as soon as KaTeX is loaded (a moment after
 * the page starts). A later call for the same element wins.
 */
export function typeset(el, tex) {
  el.dataset.tex = tex;
  return texToMarkup(tex).then((markup) => { if (el.dataset.tex === tex) el.innerHTML = markup; });
}
