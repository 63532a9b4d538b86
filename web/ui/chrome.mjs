// chrome.mjs: the page's frame around the figures as a panel: theme and projector mode, the controls, the
// embed's layout, the variant's formula and hint, the notes under them and the status line; and the
// header's buttons (copy link, theme, projector, language, mechanisms).
import { typeset } from '../render/tex.mjs';
import { fmtMs, fmtWhole } from '../render/format.mjs';
import { MAIN_THREAD_MAX_N } from '../compute/engine.mjs';
import { NOTHING } from './panel.mjs';
import { t, setLang, LANGS, LANG_TAGS } from '../i18n/i18n.mjs';
import { said } from '../state/notice.mjs';

/**
 * Put the current language's words into the page's own elements (web/index.html): data-i18n the text,
 * data-i18n-title and data-i18n-aria-label those attributes, each naming a catalogue key (docs/i18n.md).
 */
export function translateDom(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) { const s = t(el.dataset.i18n); if (el.textContent !== s) el.textContent = s; }
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll('[data-i18n-aria-label]')) el.setAttribute('aria-label', t(el.dataset.i18nAriaLabel));
}

/**
 * The rank ceiling (the factors' rank bound, av_factor_rank, at most n; null where there are none), the
 * semiseparable ceiling and the feature dimension (av_feature_dim: {status, r, saturated}) of the state's
 * knobs, from the library; kept while the knobs and sizes stay. Returns dims() for `page`.
 */
export function createDims(page) {
  let memo = { key: null };
  return () => {
    const { st, av } = page;
    const knobs = page.schema.knobsOf(st);
    const key = `${st.n}|${st.d}|${JSON.stringify(knobs)}`;
    if (memo.key !== key) {
      const fr = av.factorRank(knobs, st.n, st.d);
      memo = { key, ceiling: fr.r === null ? null : Math.min(fr.r, st.n), feature: av.featureDim(knobs, st.n, st.d),
        semiCeiling: av.semiseparableCeiling(knobs, st.n, st.d).r };
    }
    return memo;
  };
}

/** The chrome of `page`; `controls`: the control groups (ui/controls.mjs), each with sync(st). */
// The theme is the reader's (state.mjs: never in a link): kept in localStorage, 'auto' follows the system.
const THEME_KEY = 'attnviz.theme';
/** The reader's saved theme ('auto' when none, or storage is refused). */
export function savedTheme() {
  try {
    const th = localStorage.getItem(THEME_KEY);
    return ['auto', 'light', 'dark'].includes(th) ? th : 'auto';
  } catch { return 'auto'; }
}

/** The link's language before the module (and the schema, which reads lang=) has loaded: the status line
 * and a failure to load are then in it too. */
export function earlyLanguage() {
  const early = new URLSearchParams(location.hash.slice(1)).get('lang');
  if (LANGS.includes(early) && early !== LANGS[0]) { setLang(early); document.documentElement.lang = LANG_TAGS[early]; translateDom(); }
}

/** The header's buttons, which only set the state (page.onChange); `onTheme()` after the theme changed. */
function wireHeader(page, { onTheme }) {
  const $ = (id) => document.getElementById(id);
  $('share').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(location.href); $('share').textContent = t('header.share.copied'); } catch { $('share').textContent = t('header.share.see'); }
    setTimeout(() => { $('share').textContent = t('header.share'); }, 1500);
  });
  $('theme').addEventListener('click', () => {
    const order = ['auto', 'dark', 'light'];
    page.onChange('theme', order[(order.indexOf(page.st.theme) + 1) % 3], 'input');
    try { localStorage.setItem(THEME_KEY, page.st.theme); } catch { /* storage refused (a sandboxed frame): this page only */ }
    onTheme?.();
  });
  $('projector').addEventListener('click', () => page.onChange('projector', !page.st.projector, 'input'));
  $('lang').addEventListener('click', () => page.onChange('lang', page.st.lang === 'zh' ? 'en' : 'zh', 'input'));
  $('mech-open').addEventListener('click', () => {
    if (page.st.mech) { page.onChange('mech', '', 'change'); return; }
    page.onChange('mech', 'stepper', 'change');
    requestAnimationFrame(() => $('mech').scrollIntoView({ behavior: 'smooth', block: 'start' }));
  });
}

export function mountChrome(page, controls, { onTheme } = {}) {
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;
  wireHeader(page, { onTheme });
  let shownVariant = null;
  const setText = (id, text) => { const el = $(id); if (el.textContent !== text) el.textContent = text; };

  /** The note for a feature dimension above the library's cap, or null. */
  function featureNote(fd) {
    const av = page.av;
    if (fd.status !== av.STATUS.ERR_FEATURE_DIM) return null;
    const r = fd.r < 1e9 ? fmtWhole(fd.r) : fd.r.toExponential(2).replace('e+', '·10^');
    return t(fd.saturated ? 'note.featureDimAtLeast' : 'note.featureDim', { r, max: fmtWhole(av.limits.maxFeatureDim) });
  }

  let shownLang = null;
  function sync(st) {
    const schema = page.schema;
    if (shownLang !== st.lang) { // the words first: the panels after this one write theirs in it
      shownLang = st.lang;
      setLang(st.lang);
      root.lang = LANG_TAGS[st.lang];
      translateDom();
      $('lang').lang = st.lang === 'zh' ? 'en' : 'zh'; // the button names the other language in its own words
      $('theme').setAttribute('aria-label', t('header.theme.aria', { theme: t(`header.theme.${st.theme}`) }));
    }
    if (root.dataset.theme !== st.theme) {
      root.dataset.theme = st.theme;
      $('theme').setAttribute('aria-label', t('header.theme.aria', { theme: t(`header.theme.${st.theme}`) }));
    }
    if (('projector' in root.dataset) !== st.projector) { // presentation: style.css
      if (st.projector) root.dataset.projector = '1'; else delete root.dataset.projector;
      $('projector').setAttribute('aria-pressed', String(st.projector));
      page.resetTextPx();
    }
    controls.forEach((p) => p.sync(st));
    // an embed (embed=VIEW, docs/embedding.md): one figure and the controls its link names (style.css)
    const embed = st.embed || null;
    if ((root.dataset.embed ?? null) !== embed) {
      if (embed) root.dataset.embed = embed; else delete root.dataset.embed;
      page.resetTextPx();
    }
    // height=auto (style.css: no size follows the frame's height, which follows the content's)
    const auto = !!embed && st.height === 'auto';
    if ((root.dataset.height === 'auto') !== auto) {
      if (auto) root.dataset.height = 'auto'; else delete root.dataset.height;
    }
    const bare = !!embed && !schema.SCHEMA.some((e) => ['input', 'variant', 'readout'].includes(e.group) && schema.shown(e, st));
    if (('bare' in root.dataset) !== bare) {
      if (bare) root.dataset.bare = ''; else delete root.dataset.bare;
    }
    const v = page.viewOf(st);
    if (shownVariant !== v.tex + v.hint) { // a decay or a window on softmax changes them (reference-text.mjs)
      shownVariant = v.tex + v.hint;
      typeset($('formula'), v.tex);
      $('hint').textContent = v.hint;
    }
    const notes = [schema.causalNote(st), schema.formNote(st), featureNote(page.dims().feature)].filter(Boolean);
    const hide = !notes.length;
    if ($('causal-note').hidden !== hide) $('causal-note').hidden = hide;
    setText('causal-note', notes.join(t('note.join')));
  }

  /** The status line: what the heatmaps shown took, or the matrix's own note or error. */
  function draw() {
    const f = page.view.frame;
    let text;
    if (!f) text = t(page.engine || page.lab?.workers.spectrum.ready ? 'status.computing' : 'status.loading');
    else {
      const m = f.status?.matrix;
      const warn = m && m.status !== 0 ? t(m.status < 0 ? 'status.error' : 'status.note', { message: said(m.message) }) : null;
      text = warn ?? t(page.st.n > MAIN_THREAD_MAX_N ? 'status.tookWorker' : 'status.took', { n: f.n, ms: fmtMs(f.ms.total) });
    }
    if ($('status').textContent !== text) $('status').textContent = text;
  }

  return { ...NOTHING, name: 'chrome', sync, draw };
}
