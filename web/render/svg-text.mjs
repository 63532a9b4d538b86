// svg-text.mjs: text inside an SVG figure, escaped and wrapped: for the overview's figure
// (web/render/overview.mjs) and the page's exports (web/io/export.mjs). Pure; no DOM.

/** Text for XML content and attribute values: & < > " ' escaped. */
export function escapeXml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

/** Lines of at most `chars` characters, broken at spaces (a longer word keeps its own line). */
export function wrapLines(text, chars) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(' ')) {
    if (line && line.length + 1 + word.length > chars) { lines.push(line); line = word; } else line = line ? `${line} ${word}` : word;
  }
  if (line || !lines.length) lines.push(line);
  return lines;
}
