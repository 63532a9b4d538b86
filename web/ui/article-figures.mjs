// article-figures.mjs: the seed article's two figures ("The linear attention mechanism", §3.2, "Lossy
// low-rank approximation") redrawn from the page's own inputs, as a page panel (docs/page.md): the squared
// singular values of QKᵀ and exp(QKᵀ) on a log axis, and the squared Frobenius error of their rank-D
// truncated SVD against D. Shown while `figs=article` (the toggle above the spectra; the exp-spectrum lesson).
// The σ are the spectrum worker's overlays 'S' and 'E' (page.view.overlay): nothing is computed again.
// Its E is exp(scale·QKᵀ − max) (the library's overflow-free form), so each curve is drawn over its own
// ‖M‖_F², which the factor e^{−max} leaves unchanged.
import { articleChartData, truncationCurves } from '../render/spectrum.mjs';
import { makeArticleChart, loadUPlot, uPlotReady } from '../render/charts.mjs';
import { fmtPct } from '../render/format.mjs';
import { overlayKey } from '../compute/engine.mjs';
import { NOTHING } from './panel.mjs';
import { t, getLang } from '../i18n/i18n.mjs';

export function mountArticleFigures(page) {
  const $ = (id) => document.getElementById(id);
  const fig = $('fig-article'), toggle = $('figs-toggle'), note = $('article-note');
  const boxes = { spectrum: $('chart-sq'), error: $('chart-sqerr') };
  let charts = null, waiting = false, failed = false, drawnFor = null, last = null, poll = 0;

  const on = () => page.st?.figs === 'article';
  toggle.addEventListener('click', () => page.onChange('figs', on() ? '' : 'article', 'change'));

  /** A chart's size in its box: the box less its legend (as spectra.mjs measures its own). */
  function chartSize(el) {
    const b = el.getBoundingClientRect();
    const legend = el.querySelector('.u-legend')?.offsetHeight ?? Math.ceil(page.textPx() * 2.2);
    return { width: Math.max(160, Math.floor(b.width)), height: Math.max(80, Math.floor(b.height) - legend - 2) };
  }

  /** The two charts for the current text size; false while uPlot loads (then drawn again once it is in). */
  function ensureCharts() {
    if (!uPlotReady()) {
      if (!waiting && !failed) {
        waiting = true;
        loadUPlot().then(() => { waiting = false; drawnFor = null; page.schedule(); }, () => { waiting = false; failed = true; });
      }
      return false;
    }
    // uPlot writes its axis titles once: a new language makes new charts, as a new text size does
    const key = `${page.textPx()}|${getLang()}`;
    if (charts?.key === key) return true;
    charts?.destroy();
    const made = {};
    for (const kind of ['spectrum', 'error']) made[kind] = makeArticleChart(boxes[kind], { kind, ...chartSize(boxes[kind]), dark: page.isDark, fontPx: page.textPx() });
    const ro = new ResizeObserver(() => {
      page.resetTextPx();
      if (`${page.textPx()}|${getLang()}` !== key) { drawnFor = null; page.schedule(); return; }
      for (const kind of ['spectrum', 'error']) made[kind].resize(chartSize(boxes[kind]).width, chartSize(boxes[kind]).height);
    });
    for (const el of Object.values(boxes)) { ro.observe(el); ro.observe(el.querySelector('.u-legend')); }
    charts = { ...made, key, destroy() { ro.disconnect(); made.spectrum.destroy(); made.error.destroy(); } };
    return true;
  }

  /** The overlays current for the state's inputs ({S, E}, each or null) and whether the worker is done. */
  function overlays() {
    const req = page.requestOf(page.st), ov = page.view.overlay;
    const current = (k) => (ov[k] && ov[k].key === overlayKey(req, k) && ov[k].sv?.length && ov[k].sv.length <= page.st.n ? ov[k] : null);
    return { S: current('S'), E: current('E'), settled: !!page.lab?.settled() };
  }

  /** What the figure shows, as numbers: the snapshot part, and the note's source. */
  function compute() {
    const { S, E, settled } = overlays();
    const d = articleChartData({ S, E });
    const part = (o, curve) => (o ? {
      sv: Array.from(o.sv), err: curve, fro2: curve[0], err_rel: curve.map((v) => (curve[0] > 0 ? v / curve[0] : null)),
      partial: !!o.partial, route: o.route ?? null, ...(o.partial ? { sq_bound: 'lower', err_bound: 'upper' } : {}),
    } : null);
    // at full length (the chart's arrays are cut where the curves end)
    const errOf = (o) => (o ? truncationCurves(o.sv, o.partial ? o.fro2 ?? null : null).err : null);
    const errS = errOf(S), errE = errOf(E);
    return {
      chart: d, S: part(S, errS), E: part(E, errE), rankS: d.rankS, n: page.st.n, d: page.st.d,
      // the worker is done and gave no σ of exp(QKᵀ): the library takes exp(S − max), which cannot
      // overflow, so its route fails only when S itself does (q·k beyond float32): said, no curve
      overflow: !!S && !E && settled,
    };
  }

  function draw() {
    fig.hidden = !on();
    toggle.setAttribute('aria-pressed', String(on()));
    if (!on()) return;
    const { S, E, settled } = overlays();
    // the worker's last answer (done) commits nothing: while exp's curve is awaited, look again shortly
    clearTimeout(poll);
    if (S && !E && !settled) poll = setTimeout(() => page.schedule(), 250);
    const stamp = `${S?.key}|${S?.sv?.length}|${E?.key}|${E?.sv?.length}|${settled}|${page.textPx()}|${page.isDark()}|${getLang()}`;
    if (stamp === drawnFor && charts) return;
    if (!ensureCharts()) return;
    last = compute();
    const c = last.chart, r = last.rankS;
    const mark = r ? { at: r, text: r === page.st.d ? `d = ${r}` : t('figure.mark.rank', { r }) } : { at: null, text: '' };
    charts.spectrum.update({ ...c.spectrum, mark });
    charts.error.update({ ...c.error, mark });
    note.textContent = sentence(last);
    drawnFor = stamp;
  }

  /** The note under the heading, in the page's language: the claim in the figure's own numbers, with its bounds and gaps. */
  function sentence(f) {
    if (!f.S) return t('status.computing');
    const parts = [];
    const r = f.rankS;
    parts.push(t('figure.note.S', { r, d: f.d, pct: fmtPct(f.S.err_rel[Math.min(r, f.S.err.length - 1)]) }));
    if (f.overflow) parts.push(t('figure.note.overflow'));
    else if (!f.E) parts.push(t('figure.note.computingE'));
    else {
      const D = Math.min(r, f.E.err.length - 1);
      const le = f.E.partial ? '≤ ' : '';
      parts.push(t('figure.note.E', { D, le, pct: fmtPct(f.E.err_rel[D]) }));
      const below = f.E.partial ? -1 : f.E.err_rel.findIndex((v) => v != null && v < 0.01);
      if (below > 0) parts.push(t('figure.note.below', { D: below }));
      if (f.E.partial) parts.push(t('figure.note.partial', { k: f.E.sv.length }));
    }
    return t('figure.note.end', { text: parts.join(t('figure.note.join')) });
  }

  return {
    ...NOTHING,
    name: 'article',
    sync() { fig.hidden = !on(); toggle.setAttribute('aria-pressed', String(on())); },
    draw,
    /** The theme changed: the charts read it when they draw. */
    redrawCharts() { charts?.spectrum.redraw(); charts?.error.redraw(); },
    snapshot() {
      if (!on() || !last) return null;
      const { chart, ...rest } = last;
      return { ...rest, drawn: !!charts };
    },
    dispose() { clearTimeout(poll); charts?.destroy(); charts = null; },
  };
}

