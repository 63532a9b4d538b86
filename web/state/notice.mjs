// notice.mjs: what the page's notice (#notice) says, and in which language. A notice is one sentence of at
// most NOTICE_MAX characters: a longer message (a path that quoted its input, a long file name) would cover
// the page, so it is cut at a word boundary with an ellipsis and its full text goes to the console.
// The page's messages are English data (a link's problems go to an embed's host, a readout's reason into
// the snapshot, both in English whatever the reader's language): `said` puts one into the reader's language
// at the moment it is shown, by the English template of the catalogue it was written from (docs/i18n.md).
// Pure: web/ui/notices.mjs's show, the only place a notice is shown, calls it.
import { CATALOGUES, LANGS, getLang, t } from '../i18n/i18n.mjs';

export const NOTICE_MAX = 200;

/** The catalogue keys whose English the page writes as data and shows translated: notices, reasons, status sentences. */
export const SAID_KEYS = /^(notice\.x\.|explain\.reason\.|explain\.status\.)/;

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Each template as an anchored pattern: `{name}` a lazy group (a repeated one a back-reference); the longest literal first. */
const TEMPLATES = Object.entries(CATALOGUES[LANGS[0]]).filter(([k]) => SAID_KEYS.test(k)).map(([key, en]) => {
  const seen = new Set();
  const source = en.split(/(\{\w+\})/).map((part) => {
    const m = part.match(/^\{(\w+)\}$/);
    if (!m) return escape(part);
    if (seen.has(m[1])) return `\\k<${m[1]}>`;
    seen.add(m[1]);
    return `(?<${m[1]}>(?:(?!; ).)+?)`; // a value holds no '; ': that joins the sentences of one notice
  }).join('');
  return { key, re: new RegExp(`^${source}$`, 's'), literal: en.replace(/\{\w+\}/g, '').length };
}).sort((a, b) => b.literal - a.literal);

/** One sentence in `lang` if a template wrote it (its parts in turn), else null. */
function sayOne(english, lang, depth) {
  for (const { key, re } of TEMPLATES) {
    const m = re.exec(english);
    if (!m) continue;
    const params = {};
    for (const [name, value] of Object.entries(m.groups ?? {})) params[name] = depth < 3 ? (sayOne(value, lang, depth + 1) ?? value) : value;
    return t(key, params, lang);
  }
  return null;
}

/**
 * `english` (a message the page wrote from this catalogue's English, or several joined by '; ') in `lang`
 * (default: the page's). A part no template wrote stays as written: a gap shows, nothing is invented.
 */
export function said(english, lang = getLang()) {
  const s = String(english ?? '');
  if (lang === LANGS[0] || !s) return s;
  // the readout table asks for the same few reasons on every draw: remembered, a bounded few
  const key = `${lang}\n${s}`;
  if (SAID.has(key)) return SAID.get(key);
  if (SAID.size >= 256) SAID.clear();
  const out = sayAll(s, lang);
  SAID.set(key, out);
  return out;
}
const SAID = new Map();

function sayAll(s, lang) {
  const whole = sayOne(s, lang, 0);
  if (whole !== null) return whole;
  // problems joined by '; ': the longest run of parts a template wrote, from left to right
  const parts = s.split('; '), out = [];
  for (let i = 0; i < parts.length;) {
    let j = parts.length, got = null;
    for (; j > i && got === null; j--) got = sayOne(parts.slice(i, j).join('; '), lang, 0);
    if (got === null) { out.push(parts[i]); i += 1; } else { out.push(got); i = j + 1; }
  }
  return out.join(t('notice.x.join', null, lang));
}

/**
 * The text a notice shows for `message`: {text, cut}, in the page's language (`said`). `text` is at most
 * `max` characters; when the message is longer it is cut at the last space in its second half (mid-word
 * only when there is none) and ends in '…', and `cut` is true (the caller then logs the full message).
 */
export function noticeText(message, max = NOTICE_MAX) {
  const s = said(String(message ?? '')).replace(/\s+/g, ' ').trim();
  if (s.length <= max) return { text: s, cut: false };
  const head = s.slice(0, max); // max − 1 characters are kept at most, the ellipsis is the last
  const space = head.lastIndexOf(' ', max - 1);
  const kept = (space >= max / 2 ? head.slice(0, space) : head.slice(0, max - 1)).replace(/[\s,;:([{"'“\-，；：（“]+$/, '');
  return { text: `${kept}…`, cut: true };
}
