// svg-text.mjs: text inside a figure, escaped and wrapped: for the overview's figure
// (web/render/overview.mjs) and the page's exports (web/io/export.mjs); and the font families the
// figures name, so that Chinese text (lang=zh, docs/i18n.md) finds a face with its glyphs. Pure; no DOM.

/** The CJK faces a figure falls back to: setup installs WenQuanYi Micro Hei (scripts/deps.sh); Noto elsewhere. */
const CJK_FAMILIES = "'WenQuanYi Micro Hei', 'Noto Sans CJK SC', 'Microsoft YaHei', 'PingFang SC'";
/** The canvas charts' family (uPlot's axes, the entropy histogram, the row bars). */
export const CANVAS_FAMILY = `system-ui, ${CJK_FAMILIES}, sans-serif`;
/** The exported SVG figures' family, as an attribute value (double-quoted by the caller). */
export const SVG_FAMILY = `DejaVu Sans, ${CJK_FAMILIES}, sans-serif`;

/** Text for XML content and attribute values: & < > " ' escaped. */
export function escapeXml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

// a Chinese character or full-width punctuation: about 1.75 Latin characters wide, and a line may break
// before it (Chinese has no spaces); closing punctuation stays with the character before it
const WIDE = /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/;
const NO_BREAK_BEFORE = /^[，。：；、！？）」』》〉\uff09\uff0c\uff1a\uff1b]/;

/** The width of `s` in Latin characters (a Chinese character counts as 1.75). */
export function textUnits(s) {
  let u = 0;
  for (const ch of String(s)) u += WIDE.test(ch) ? 1.75 : 1;
  return u;
}

/**
 * Lines of at most `chars` Latin characters' width, broken at spaces or between Chinese characters (a
 * longer word keeps its own line). A line that ends where a space was broken keeps that space at its end,
 * so the lines joined are the text (captions' textContent is the caption).
 */
export function wrapRuns(text, chars) {
  // pieces: a run of spaces, a Latin word, or one wide character with the closing punctuation after it
  const pieces = String(text).match(/\s+|[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef][，。：；、！？）」』》〉]*|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+/g) ?? [];
  const lines = [];
  let line = '';
  for (const p of pieces) {
    if (/^\s+$/.test(p)) { line += p; continue; }
    const trimmed = line.replace(/\s+$/, '');
    if (trimmed && textUnits(trimmed) + (line.length - trimmed.length) + textUnits(p) > chars && !NO_BREAK_BEFORE.test(p)) {
      lines.push(line);
      line = p;
    } else line += p;
  }
  if (line || !lines.length) lines.push(line);
  return lines;
}

/** Lines of at most `chars` characters' width, broken at spaces (a longer word keeps its own line) or between Chinese characters. */
export function wrapLines(text, chars) {
  return wrapRuns(text, chars).map((l) => l.replace(/\s+$/, ''));
}
