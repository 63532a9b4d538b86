// i18n.mjs: the page's words by key, in the reader's language (docs/i18n.md). One catalogue per language
// (en.mjs, zh.mjs: plain data); t(key, params) fills `{name}` placeholders. A key the language lacks is
// shown as the key itself, never silently as another language's words, so a gap is seen (and
// tests/js/i18n.test.mjs fails on it first). Pure; no DOM. The lowest layer: it imports only its catalogues.
import EN from './en.mjs';
import ZH from './zh.mjs';

export const CATALOGUES = Object.freeze({ en: EN, zh: ZH });
/** The languages a link's `lang=` takes; the first is the default. */
export const LANGS = Object.freeze(Object.keys(CATALOGUES));
/** The BCP 47 tag each language gives <html lang> (and Intl, where a format needs it). */
export const LANG_TAGS = Object.freeze({ en: 'en', zh: 'zh-CN' });

let current = LANGS[0];
/** Set the language t() speaks (the page's state.lang; web/ui/chrome.mjs). */
export function setLang(lang) { current = Object.hasOwn(CATALOGUES, lang) ? lang : LANGS[0]; }
export function getLang() { return current; }

/** The placeholders of a string, sorted: 'n = {n}: {ms}' → ['ms', 'n']. */
export function placeholders(s) { return [...String(s).matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort(); }

/**
 * The string `key` in `lang` (default: the current language) with its `{name}` placeholders filled from
 * `params`; a placeholder params lacks stays as written, a key the catalogue lacks is returned as is.
 */
export function t(key, params = null, lang = current) {
  const cat = CATALOGUES[lang] ?? CATALOGUES[LANGS[0]];
  const s = Object.hasOwn(cat, key) ? cat[key] : key;
  return params ? s.replace(/\{(\w+)\}/g, (m, name) => (Object.hasOwn(params, name) ? String(params[name]) : m)) : s;
}

/** Whether `key` has a string in `lang`. */
export function has(key, lang = current) { return Object.hasOwn(CATALOGUES[lang] ?? {}, key); }

/**
 * A label whose English is not the catalogue's but a registry's or a presentation's (the readouts', the
 * variants'): `english` in English, the catalogue's `key` in another language (the key when it lacks it).
 */
export function tOwn(key, english, params = null, lang = current) {
  return lang === LANGS[0] ? english : t(key, params, lang);
}

/** The English control label of schema entry `name` (web/state/state.mjs, web/state/variants.mjs). */
export const enLabel = (name) => t(`control.${name}`, null, 'en');
/** The English option labels of entry `name`, by option: {value: label}. */
export const enOptions = (name, options) => Object.fromEntries(options.map((o) => [o, t(`option.${name}.${o}`, null, 'en')]));
