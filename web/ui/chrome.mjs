// chrome.mjs: the page's frame around the figures as a panel: theme and projector mode, the controls, the
// embed's layout, the variant's formula and hint, the notes under them and the status line.
import { typeset } from '../render/tex.mjs';
import { fmtMs, fmtWhole } from '../render/format.mjs';
import { MAIN_THREAD_MAX_N } from '../compute/engine.mjs';
import { NOTHING } from './panel.mjs';

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
export function mountChrome(page, controls) {
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;
  let shownVariant = null;
  const setText = (id, text) => { const el = $(id); if (el.textContent !== text) el.textContent = text; };

  /** The note for a feature dimension above the library's cap, or null. */
  function featureNote(fd) {
    const av = page.av;
    if (fd.status !== av.STATUS.ERR_FEATURE_DIM) return null;
    const r = fd.r < 1e9 ? fmtWhole(fd.r) : fd.r.toExponential(2).replace('e+', '·10^');
    return `feature dimension ${fd.saturated ? '≥ ' : ''}${r} > ${fmtWhole(av.limits.maxFeatureDim)}: ` +
      'no linear path (the matrix comes from the closed form)';
  }

  function sync(st) {
    const schema = page.schema;
    if (root.dataset.theme !== st.theme) {
      root.dataset.theme = st.theme;
      $('theme').setAttribute('aria-label', `colour theme: ${st.theme}`);
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
    setText('causal-note', notes.join('. '));
  }

  /** The status line: what the heatmaps shown took, or the matrix's own note or error. */
  function draw() {
    const f = page.view.frame;
    let text;
    if (!f) text = page.engine || page.lab?.workers.spectrum.ready ? 'computing…' : 'loading the WebAssembly module…';
    else {
      const m = f.status?.matrix;
      const warn = m && m.status !== 0 ? `${m.status < 0 ? 'error' : 'note'}: ${m.message}` : null;
      text = warn ?? `n = ${f.n}: matrices ${fmtMs(f.ms.total)}${page.st.n > MAIN_THREAD_MAX_N ? ' (worker)' : ''}`;
    }
    if ($('status').textContent !== text) $('status').textContent = text;
  }

  return { ...NOTHING, name: 'chrome', sync, draw };
}
