// zh-check.mjs: what tests/e2e/zh-everywhere.test.mjs looks for on a page shown in Chinese (issue 31):
// English left in the visible words, a clipped label or text past the window, and the characters drawn
// (for the glyph check). `collect` runs in the page; `englishIn` and `ALLOW` run in Node.

/**
 * Latin words allowed in Chinese text, each for a reason (keep it short: a word here is never flagged):
 * - the names of methods and papers, written as the literature writes them (docs/i18n.md): variant names
 *   and their authors' terms (Performer, FAVOR, Linformer, Hedgehog, FLatten, Nyströmformer, RetNet,
 *   DeltaNet, cosFormer, Taylor, Frobenius, Kullback–Leibler; "Efficient Attention" and "retention" are the
 *   papers' names of their methods, "delta" the delta rule's; Gated DeltaNet, Lightning Attention and Mamba the models'
 *   names the decay lesson lists; Transformer and FoX the gated lessons' models, as their papers write them);
 * - softmax, token and logit, which Chinese technical prose keeps in Latin (web/i18n/zh/page.mjs does);
 * - software, formats and models by name (fla, the flash-linear-attention library the gated families follow;
 *   attnviz, WebAssembly, wasm, SIMD, numpy, KaTeX, llama2.c, stories260K; Kimi: Kimi Delta Attention's, the
 *   variant kda, is named after its model; Hugging Face, whose model folders the model box reads, and its
 *   safetensors format);
 * - the colour maps' names (viridis, cividis, magma, gray; rdbu), kept in every language (docs/i18n.md);
 * - function names of formulas written outside KaTeX (exp, log, elu, relu, max, min, cos, sin, diag),
 *   IEEE's Inf and NaN, and the number formats float32 and float64 (the tolerance's definition names them);
 * - Adam, the optimiser's name, and Enter, the key's (as the keyboard prints it).
 */
export const ALLOW = new Set(`nats lolcats tinyllamas performer favor linformer hedgehog flatten nyströmformer nyström retnet deltanet cosformer
  taylor frobenius kullback leibler efficient attention retention delta softmax token tokens logit logits attnviz webassembly wasm simd
  numpy katex llama stories260k viridis cividis magma gray rdbu exp log elu relu max min cos sin diag inf nan
  gated lightning mamba kimi transformer fox fla dplr icl float32 float64 adam enter hugging face safetensors`
  .split(/\s+/).filter(Boolean));

const CJK = '\\u3400-\\u9fff\\uf900-\\ufaff';
// a term of at most three words (因果掩码（causal mask）, Efficient Attention（高效注意力）): a longer English
// phrase beside Chinese is a sentence left untranslated, not a term
const TERM = `[A-Za-z][\\w.'’+/-]*(?:(?:[ ]|[,，][ ]?)[A-Za-z0-9][\\w.'’+/-]*){0,2}`;
const LATIN_WORD = /[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ0-9'’]*(?:-[A-Za-z][A-Za-z0-9]*)*/g;

/**
 * The English words of `text` that a Chinese page should not show, [] when none. Not English: words of
 * one or two letters (symbols: n, d, QK, ms, ln), acronyms in capitals (SVD, KL, CSV, PNG, DWC), units
 * (KiB, MiB), link keys and code (`n=64`, `lang=zh`, `--flag`, file paths with their extension,
 * addresses), a title in 《…》 (a work's name as it names itself: the papers' English titles), a
 * citation's authors before its year (Han 等 2023, Dao & Gu 2024), an
 * English term of at most three words in parentheses right after Chinese (因果掩码（causal mask）: the
 * term beside the Chinese, as the literature writes it), a name of at most three words right before its
 * Chinese gloss (Efficient Attention（高效注意力）), ALLOW, and `own`
 * (the reader's own text) where it is quoted back.
 */
export function englishIn(text, own = '') {
  // the reader's own text quoted back (the model's text in the overview's tiles: “Once upon a time…”)
  const mine = (q) => own && q.replace(/…$/, '').length > 0 && own.startsWith(q.replace(/…$/, ''));
  const s = String(text).replace(/“([^”]*)”/g, (m, q) => (mine(q) ? ' ' : m))
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/[\w./-]*\.(npy|json|csv|png|svg|zip|bin|txt|py|html|js|mjs|wasm|md|c|h)\b/gi, ' ')
    .replace(/《[^》]*》/g, ' ')
    .replace(/\b[A-Z][A-Za-zÀ-ÿ'-]+(?: & [A-Z][A-Za-zÀ-ÿ'-]+)?(?: 等)?,? (?:19|20)\d\d\b/g, ' ')
    .replace(/[#&]?\b[A-Za-z_][\w.]*=[^\s，。；、：）)&]*/g, ' ')
    .replace(/(^|[\s，、；：（(])--?[a-z][\w-]*/g, '$1 ')
    .replace(new RegExp(`([${CJK}])\\s*[（(]\\s*${TERM}\\s*[）)]`, 'g'), '$1')
    .replace(new RegExp(`(?<![\\w.'’+/-] ?)${TERM}\\s*[（(](?=[${CJK}])`, 'g'), ' ');
  return (s.match(LATIN_WORD) ?? []).filter((w) => w.replace(/[^A-Za-zÀ-ÿ]/g, '').length >= 3
    && !/^[A-Z0-9]+s?$/.test(w) && !/^[KMGT]i?B$/.test(w) && !ALLOW.has(w.toLowerCase().replace(/[’']s$/, '')));
}

/**
 * In the page: every visible piece of text a reader gets, with where it is (`region`), the fonts its
 * characters are drawn in, and the boxes that cut their text off. Walks open shadow roots (<attn-viz>).
 * `skip`: a selector of what is not words (formulas, code, the reader's own text).
 */
export function collect({ skip, italic }) {
  const out = { texts: [], glyphs: {}, clipped: [], past: [], sideways: 0 };
  const vw = document.documentElement.clientWidth;
  // where a finding is, for the report (the stage holds a lesson's figures: they are named as figures)
  const REGIONS = [['#export > :not(summary)', 'export menu'], ['header.top', 'header'], ['.controls .ctl', 'controls'], ['#lesson', 'lesson'],
    ['.controls', 'panel'], ['#explain', 'dialog'], ['#notice', 'notice'], ['#mech', 'mechanisms'], ['#overview', 'overview'],
    ['.heatmaps', 'heatmaps'], ['#sweep-box', 'sweep'], ['.spectra', 'spectra'], ['.readouts', 'readouts'], ['#stage', 'lesson stage'], ['attn-viz', 'element']];
  const regionOf = (el) => {
    for (;;) {
      for (const [sel, name] of REGIONS) if (el.closest(sel)) return name;
      const host = el.getRootNode().host;
      if (!host) return 'page';
      el = host;
    }
  };
  const closestDeep = (el, sel) => {
    for (let e = el; e; e = e.getRootNode().host) { const c = e.closest(sel); if (c) return c; }
    return null;
  };
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  // an element marked as English on purpose (the language button names English in English)
  const markedOther = (el) => { const l = closestDeep(el, '[lang]'); return !!l && !/^zh/i.test(l.getAttribute('lang')); };
  function* all(root) {
    for (const el of root.querySelectorAll('*')) { yield el; if (el.shadowRoot) yield* all(el.shadowRoot); }
  }
  const add = (el, kind, text) => {
    if (!text || !/[A-Za-z]/.test(text) || markedOther(el)) return;
    out.texts.push({ region: regionOf(el), kind, text: text.trim().replace(/\s+/g, ' ').slice(0, 300) });
  };
  const glyph = (cs, text) => {
    const font = `${cs.fontStyle} ${cs.fontWeight} 32px ${cs.fontFamily}`;
    const set = (out.glyphs[font] ??= '');
    for (const ch of text) if (!set.includes(ch) && /[\p{L}\p{N}\p{P}\p{S}]/u.test(ch)) out.glyphs[font] += ch;
  };
  for (const el of all(document.body)) {
    if (!shown(el)) continue;
    const words = !closestDeep(el, skip);
    const cs = getComputedStyle(el);
    let own = '';
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) own += n.data;
    if (el instanceof HTMLSelectElement) { own = el.selectedOptions[0]?.textContent ?? ''; if (words) for (const o of el.options) add(el, 'option', o.textContent); }
    if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && el.placeholder && !el.value) { own = el.placeholder; }
    if (/\S/.test(own)) {
      if (words) add(el, 'text', own);
      if (!el.closest('.katex-mathml')) {
        const t = own.trim();
        glyph(cs, cs.textTransform === 'math-auto' && [...t].length === 1 ? (italic[t] ?? t) : t);
      }
      // a label squeezed to a character a line (Chinese breaks between any two characters: a grid column
      // that shrinks to its min-content shows 变体 as 变 over 体)
      const fs = parseFloat(cs.fontSize);
      if (words && !cs.writingMode.startsWith('vertical') && own.trim().length >= 2 && el.getBoundingClientRect().width < 1.6 * fs && el.getBoundingClientRect().height > 1.8 * fs && !el.closest('.sr-only')) {
        out.clipped.push({ region: regionOf(el), text: own.trim().slice(0, 60), scroll: Math.round(el.getBoundingClientRect().height), client: Math.round(el.getBoundingClientRect().width), squeezed: true });
      }
      // text past its nearest box that hides overflow (cut there), or past the window when none does; a box
      // that scrolls sideways (a formula) shows all of it
      const r = el.getBoundingClientRect();
      let box = null;
      for (let e = el.parentElement ?? el.getRootNode().host; e; e = e.parentElement ?? e.getRootNode().host) {
        if (getComputedStyle(e).overflowX !== 'visible') { box = e; break; }
      }
      const boxOverflow = box ? getComputedStyle(box).overflowX : 'visible';
      const edge = box && /hidden|clip/.test(boxOverflow) ? box.getBoundingClientRect() : { left: 0, right: vw };
      if (!/auto|scroll/.test(boxOverflow) && (r.right > edge.right + 1 || r.left < edge.left - 1) && !el.closest('.sr-only')) {
        out.past.push({ region: regionOf(el), text: own.trim().slice(0, 60), left: Math.round(r.left), right: Math.round(r.right), edge: `${Math.round(edge.left)}–${Math.round(edge.right)}`, by: box && /hidden|clip/.test(boxOverflow) ? 'its box' : 'the window' });
      }
    }
    if (words) {
      const aria = el.getAttribute('aria-label'), title = el.getAttribute('title');
      if (aria) add(el, 'aria-label', aria);
      if (title) add(el, 'title', title);
    }
    // a label cut off: its box hides what does not fit (an ellipsis, overflow: hidden), and something does not
    if (/hidden|clip/.test(cs.overflowX) && el.scrollWidth > el.clientWidth + 1 && /\S/.test(el.textContent)
      && !el.closest('.sr-only') && !(el instanceof HTMLCanvasElement) && !el.querySelector('canvas, svg')) {
      out.clipped.push({ region: regionOf(el), text: el.textContent.trim().replace(/\s+/g, ' ').slice(0, 60), scroll: el.scrollWidth, client: el.clientWidth });
    }
  }
  for (const [font, texts] of window.__zhCanvas ?? []) {
    for (const text of texts) if (/[A-Za-z]/.test(text)) out.texts.push({ region: 'canvas', kind: 'canvas', text: text.trim().slice(0, 300) });
    const family = font.replace(/^.*?\d+(\.\d+)?px(\s*\/\s*\S+)?\s+/, '');
    const weight = /\bbold\b|\b[6-9]00\b/.test(font) ? 'bold ' : '';
    const key = `normal ${weight || '400 '}32px ${family}`;
    for (const text of texts) for (const ch of text) if (!(out.glyphs[key] ??= '').includes(ch) && /[\p{L}\p{N}\p{P}\p{S}]/u.test(ch)) out.glyphs[key] += ch;
  }
  window.__zhCanvas = new Map();
  out.sideways = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  return out;
}

/** An init script: record each string drawn on a canvas (chart axes, histograms) by its font, so that
 *  collect() checks it too; collect() empties the record for the next view. */
export function recordCanvasStrings() {
  window.__zhCanvas = new Map();
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    const s = String(text);
    if (/\S/.test(s)) {
      const set = window.__zhCanvas.get(this.font) ?? new Set();
      if (set.size < 200) set.add(s);
      window.__zhCanvas.set(this.font, set);
    }
    return fill.call(this, text, ...rest);
  };
}
