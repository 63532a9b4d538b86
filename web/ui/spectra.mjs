// spectra.mjs: the spectrum and truncation-error charts (render/charts.mjs, uPlot loaded once the first
// heatmaps and readouts are drawn) with their note, as a page panel.
import { chartData, LOG_X_MIN_N, routeName } from '../render/spectrum.mjs';
import { makeSpectrumChart, makeErrorChart, floorDrawn, loadUPlot, uPlotReady } from '../render/charts.mjs';
import { fmtMs } from '../render/format.mjs';
import { overlayKey } from '../compute/engine.mjs';
import { NOTHING } from './panel.mjs';
import { t, getLang } from '../i18n/i18n.mjs';

/**
 * The page's charts (#chart-spectrum, #chart-error, #spec-note). Besides the Panel: charts() (the uPlot
 * pair, or null), waiting() (uPlot's module is loading), retry() (a new view: charts that did not load are
 * tried again), load() (start loading uPlot), exportData() (what the export menu draws).
 */
export function mountSpectra(page) {
  const $ = (id) => document.getElementById(id);
  const setText = (id, text) => { const el = $(id); if (el && el.textContent !== text) el.textContent = text; };
  // waiting: uPlot's module is loading (ensureCharts); failed: it did not load, and is tried again with the
  // next new view (retry) rather than on every frame
  let charts = null, waiting = false, failed = false;

  /** A chart's size in its box: the box less its legend (measured once drawn, else about two lines). */
  function chartSize(el) {
    const b = el.getBoundingClientRect();
    const legend = el.querySelector('.u-legend')?.offsetHeight ?? Math.ceil(page.textPx() * 2.2);
    return { width: Math.max(200, Math.floor(b.width)), height: Math.max(80, Math.floor(b.height) - legend - 2) };
  }

  /**
   * The charts for the current text size and x axis (made again when either changes); false while uPlot is
   * still loading (charts.mjs), which it starts, and the spectra are drawn again once it is in.
   */
  function ensureCharts() {
    if (!uPlotReady()) {
      if (!waiting && !failed) {
        waiting = true;
        loadUPlot().then(() => { waiting = false; page.redraw.spec = true; page.schedule(); }, (err) => {
          // said once; the next change of view tries again (a page left open across a redeploy finds its
          // old chunk gone until it is reloaded)
          waiting = false; failed = true;
          page.notice.show(t('chart.loadFailed', { message: err.message }));
          page.inspector.notify();
        });
      }
      return false;
    }
    const logX = page.st.n > LOG_X_MIN_N;
    // uPlot writes its axis titles and legend once: a new language makes new charts, as a new text size does
    const key = `${page.textPx()}|${logX}|${getLang()}`;
    if (charts?.key === key) return true;
    charts?.destroy();
    const se = $('chart-spectrum'), ee = $('chart-error');
    const opts = { dark: page.isDark, fontPx: page.textPx(), logX };
    const spectrum = makeSpectrumChart(se, { ...chartSize(se), ...opts });
    const error = makeErrorChart(ee, { ...chartSize(ee), ...opts });
    const ro = new ResizeObserver(() => {
      page.resetTextPx();
      if (`${page.textPx()}|${logX}|${getLang()}` !== key) { page.redraw.spec = true; page.schedule(); return; } // new text size: new charts
      spectrum.resize(chartSize(se).width, chartSize(se).height);
      error.resize(chartSize(ee).width, chartSize(ee).height);
    });
    // each chart's box (the note above the charts can wrap after they are made, which takes height from them
    // and not from their column) and each legend: its height (it wraps when narrow) is the charts' to give
    for (const el of [se, ee]) { ro.observe(el); ro.observe(el.querySelector('.u-legend')); }
    charts = { spectrum, error, key, destroy() { ro.disconnect(); spectrum.destroy(); error.destroy(); } };
    return true;
  }

  /**
   * The charts' data for the state: the variant's spectrum and the overlays computed from the inputs shown
   * (cached in the worker, so a drag of the variant's knobs keeps them; new inputs hide them until their
   * new spectra arrive). `current(k)`: whether overlay k is shown.
   */
  function data() {
    const st = page.st, view = page.view;
    const s = view.spec?.sv ? view.spec : null; // a failed route has no σ (its readouts say why)
    const req = page.requestOf(st), ov = view.overlay;
    const current = (k) => ov[k] && ov[k].key === overlayKey(req, k) && ov[k].sv.length && ov[k].sv.length <= st.n;
    const { ceiling } = page.dims();
    // the x axis ends where the last curve does, log above LOG_X_MIN_N (ensureCharts), where the
    // overlays' top σ would otherwise sit in the first pixels
    const d = chartData({ spec: s, overlays: Object.fromEntries(['S', 'E', 'A'].filter(current).map((k) => [k, ov[k]])), n: st.n, ceiling });
    return { s, d, ceiling, current, ov };
  }

  function draw() {
    const drawn = ensureCharts();
    const { s, d, ceiling } = data();
    if (drawn) { charts.spectrum.update(d.spectrum); charts.error.update(d.error); }
    const view = page.view;
    const route = s ? t(s.partial ? 'chart.spec.routePartial' : 'chart.spec.route', { route: routeName(s.route), ms: fmtMs(s.ms) })
      : view.spec ? t('chart.spec.none', { message: view.spec.message }) : t('status.computing');
    const floorRel = s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0;
    const floorText = floorRel > 0
      ? t(floorDrawn(floorRel) ? 'chart.spec.floor' : 'chart.spec.floorBelow', { floor: floorRel.toExponential(0) })
      : t('chart.spec.floorNone');
    const sep = t('chart.sep');
    const note = `${route}${ceiling ? `${sep}${t('chart.spec.ceiling', { ceiling })}` : ''}${sep}${floorText}`;
    if ($('spec-note').textContent !== note) $('spec-note').textContent = note;
    // from the top-k σ̂ (each ≤ σᵢ) e(r) is an upper bound: snapshot()'s error_curve_bound, said on screen
    setText('err-note', s?.partial ? t('chart.error.bound') : '');
  }

  return {
    ...NOTHING,
    name: 'spectra',
    draw() { if (page.redraw.spec) draw(); },
    dispose() { charts?.destroy(); charts = null; },
    charts: () => charts,
    waiting: () => waiting,
    retry() { failed = false; },
    load() { if (!uPlotReady()) ensureCharts(); },
    /** The theme changed: the charts read it when they draw. */
    redrawCharts() { charts?.spectrum.redraw(); charts?.error.redraw(); },
    exportData() {
      const { s, d, ceiling, current, ov } = data();
      // a curve from the top-k route: its σ̂ are lower bounds, so the figure's caption says so (export-menu.mjs)
      const partial = !!s?.partial || ['S', 'E', 'A'].some((k) => current(k) && ov[k].partial);
      return { data: d, logX: page.st.n > LOG_X_MIN_N, floorRel: s && s.sv[0] > 0 ? s.floor / s.sv[0] : 0, ceiling, partial };
    },
  };
}
