// sweep-panel.mjs: the sweep panel (web/compute/sweep.mjs): pickers for the knob (the variant's numeric knobs, or
// off), the readout and the number of seeds, and a uPlot chart of the readout's mean against the knob
// with a min–max band over the seeds and the current value marked. The panel only shows and asks:
// mountSweep (below) runs the sweep in the background worker and hands the points to show().
import { loadUPlot, uPlotReady } from '../render/charts.mjs';
import { sweepableEntries, seeded, sweepPlan, SWEEP_READOUTS, MAX_SEEDS, sweepResult, undefinedNote } from '../compute/sweep.mjs';
import { fmt, fmtMs } from '../render/format.mjs';
import { MSG } from '../workers/protocol.mjs';
import { readoutLabel } from '../wasm/readout-info.mjs';
import { sweepGuides } from '../render/sweep-guides.mjs';
import { t, tOwn } from '../i18n/i18n.mjs';
import { said } from '../state/notice.mjs';

const COLOR = '#0072b2';
/** The canvas font stack: the page's, then CJK faces, so that Chinese labels are drawn (docs/i18n.md). */
const CANVAS_FONTS = "system-ui, sans-serif, 'WenQuanYi Micro Hei', 'Noto Sans CJK SC'";
/** A readout's name in the page's language (the registry's English; the catalogue's `readout.KEY`). */
const readoutName = (key) => tOwn(`readout.${key}`, readoutLabel(key));

function el(tag, attrs = {}, text = '') {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

/**
 * Build the panel into `box`. `onChange(name, value, 'change')` sets a state key. Returns
 * {sync(st), show(points, plan, current, status), resize()}; status() gives a sentence in the page's language.
 */
export function mountSweepPanel(box, schema, onChange, { dark }) {
  const head = el('div', { class: 'sweep-head' });
  const knob = el('select', { id: 'k-sweep' });
  const readout = el('select', { id: 'k-sweep_y' });
  for (const k of SWEEP_READOUTS) readout.append(el('option', { value: k }));
  const seeds = el('input', { id: 'k-sweep_seeds', type: 'number', min: '1', max: String(MAX_SEEDS), step: '1' });
  const seedsLabel = el('label', { for: 'k-sweep_seeds' });
  const knobLabel = el('label', { for: 'k-sweep' }), readoutLabelEl = el('label', { for: 'k-sweep_y' });
  head.append(knobLabel, knob, readoutLabelEl, readout, seedsLabel, seeds);
  /** The panel's own words in the current language (again when it changes: sync). */
  function words() {
    knob.setAttribute('aria-label', t('sweep.knob'));
    readout.setAttribute('aria-label', t('sweep.readout'));
    seeds.setAttribute('aria-label', t('sweep.seeds'));
    for (const o of readout.options) o.textContent = readoutName(o.value);
    seedsLabel.textContent = t('sweep.seedsLabel');
    knobLabel.textContent = t('sweep.sweepLabel');
    readoutLabelEl.textContent = t('sweep.ofLabel');
  }
  words();
  const chartBox = el('div', { class: 'sweep-chart' });
  const note = el('p', { class: 'note sweep-note', role: 'status' });
  box.append(head, chartBox, note);
  knob.addEventListener('change', () => onChange('sweep', knob.value, 'change'));
  readout.addEventListener('change', () => onChange('sweep_y', readout.value, 'change'));
  seeds.addEventListener('change', () => onChange('sweep_seeds', seeds.value, 'change'));

  let chart = null, shownVariant = null, marker = null, logX = false, shownLang = null, st = null;
  let guides = { series: [], hlines: [] }, guideKey = ''; // the lesson's reference lines (render/sweep-guides.mjs)
  let latest = null; // show()'s newest arguments: a draw deferred until uPlot is in draws only those

  function makeChart() {
    chart?.destroy();
    const w = Math.max(220, Math.floor(chartBox.getBoundingClientRect().width) || 300);
    const fontPx = parseFloat(getComputedStyle(chartBox).fontSize) || 11;
    const axis = { stroke: () => (dark() ? '#c8ccd4' : '#333'), grid: { stroke: () => (dark() ? '#333a44' : '#e3e3e3'), width: 1 }, ticks: { show: false }, font: `${fontPx}px ${CANVAS_FONTS}` };
    chart = new (uPlotReady())({
      width: w, height: Math.round(fontPx * 14),
      // room on the right for the last x tick label, centred on the plot's edge ("10,000" was cut in half)
      padding: [null, Math.round(fontPx * 2.5), null, null],
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: logX ? { time: false, distr: 3 } : { time: false } },
      axes: [{ ...axis }, { ...axis, size: Math.ceil(fontPx * 4.2) }],
      series: [{ label: t('sweep.series.knob') },
        { label: t('sweep.series.mean'), stroke: COLOR, width: 2, points: { show: true, size: 5, fill: COLOR } },
        { label: t('sweep.series.min'), stroke: `${COLOR}66`, width: 1, dash: [3, 3], points: { show: false } },
        { label: t('sweep.series.max'), stroke: `${COLOR}66`, width: 1, dash: [3, 3], points: { show: false } },
        ...guides.series.map((g) => ({ label: g.label, stroke: dark() ? '#b0b6bf' : '#666', width: 1.5, dash: [6, 4], points: { show: false } }))],
      bands: [{ series: [3, 2], fill: `${COLOR}22` }],
      hooks: {
        draw: [(u) => { // the guides' levels, then the current value of the knob
          const ctx = u.ctx;
          for (const h of guides.hlines) {
            const y = u.valToPos(h.y, 'y', true);
            if (!(y >= u.bbox.top && y <= u.bbox.top + u.bbox.height)) continue;
            ctx.save();
            ctx.strokeStyle = ctx.fillStyle = dark() ? '#b0b6bf' : '#666';
            ctx.lineWidth = devicePixelRatio;
            ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
            ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
            ctx.font = `${fontPx * devicePixelRatio}px ${CANVAS_FONTS}`;
            ctx.textAlign = 'right'; ctx.textBaseline = 'bottom';
            ctx.fillText(h.label, u.bbox.left + u.bbox.width - 4 * devicePixelRatio, y - 2 * devicePixelRatio);
            ctx.restore();
          }
          if (marker === null) return;
          const x = u.valToPos(marker, 'x', true);
          const { left, top, width, height } = u.bbox;
          if (!(x >= left && x <= left + width)) return;
          ctx.save();
          ctx.strokeStyle = dark() ? '#f0e442' : '#b8860b';
          ctx.lineWidth = 1.5 * devicePixelRatio;
          ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
          ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
          ctx.restore();
        }],
      },
    }, [[], [], [], []], chartBox);
  }

  return {
    /** Pickers and visibility for this state. */
    sync(state) {
      st = state;
      const relabel = shownLang !== st.lang;
      if (relabel) { shownLang = st.lang; words(); }
      if (shownVariant !== st.variant || relabel) {
        shownVariant = st.variant;
        knob.replaceChildren(el('option', { value: '' }, t('sweep.off')), ...sweepableEntries(schema, st).map((e) => el('option', { value: e.name }, t(`control.${e.name}`))));
      }
      if (knob.value !== st.sweep) knob.value = st.sweep;
      if (readout.value !== st.sweep_y) readout.value = st.sweep_y;
      if (seeds.value !== String(st.sweep_seeds)) seeds.value = String(st.sweep_seeds);
      const on = !!st.sweep;
      const many = on && seeded(schema, st);
      // guarded writes: an unchanged attribute or text written on every input still costs the frame that
      // must show the new heatmaps style and layout work
      if (seeds.hidden !== !many) seeds.hidden = seedsLabel.hidden = !many;
      if (chartBox.hidden !== !on) chartBox.hidden = !on;
      const idle = t('sweep.idle');
      if (!on && note.textContent !== idle) note.textContent = idle;
      if (relabel && on && latest) { if (chart) makeChart(); this.show(...latest); } // the chart's legend, the note
    },
    /**
     * Draw the points so far: points[i] = {value, mean, min, max, reason} or undefined (not yet);
     * `plan` (sweep.mjs's sweepPlan) and `current` (the knob's value in the state); status(): the status sentence.
     */
    show(points, plan, current, status) {
      const args = [points, plan, current, status];
      latest = args;
      // a link's knob the variant lacks (sweep.mjs's plan.off says it in English, for the CLI's and tests' use)
      if (!plan || plan.off) { if (plan?.off) note.textContent = st ? t('sweep.noKnob', { variant: tOwn(`variant.${st.variant}`, schema.variantView(st.variant).label), knob: st.sweep }) : plan.off; return; }
      // uPlot comes after the page's first view (charts.mjs): the newest show() is drawn once it is in
      if (!uPlotReady()) {
        loadUPlot().then(() => { if (latest === args) this.show(...args); },
          (err) => { if (latest === args) note.textContent = t('sweep.chartFailed', { message: err.message }); });
        return;
      }
      const wantLog = plan.values.length > 2 && plan.values[0] > 0 && plan.values.at(-1) / plan.values[0] >= 50;
      guides = sweepGuides(plan, points, current);
      const key = guides.series.map((g) => g.label).join('|');
      if (!chart || wantLog !== logX || key !== guideKey) { logX = wantLog; guideKey = key; makeChart(); }
      marker = current;
      const col = (k) => plan.values.map((_, i) => points[i]?.[k] ?? null);
      chart.setData([plan.values.slice(), col('mean'), col('min'), col('max'), ...guides.series.map((g) => g.values)]);
      const undefinedAt = undefinedNote(plan, points, fmt, said);
      note.textContent = t(plan.seeds > 1 ? 'sweep.noteSeeds' : 'sweep.note', { readout: readoutName(plan.readout), knob: t(`control.${plan.name}`), seeds: plan.seeds, status: status() }) +
        (undefinedAt ? ` · ${undefinedAt}` : '');
    },
    resize() { if (chart) makeChart(); },
  };
}

/**
 * The sweep as a page panel: the panel above (mountSweepPanel) and the sweep the state asks for, run in the
 * background worker (never during a drag). `page`: main.mjs's context. Besides the Panel: routes (the
 * background worker's answers it takes), failed(what), finished() (the finished sweep, for sweep()) and
 * exportData() (what the export menu draws, or null).
 */
export function mountSweep(page) {
  const panel = mountSweepPanel(document.getElementById('sweep-box'), page.schema, page.onChange, { dark: page.isDark });
  const v = { id: 0, key: null, plan: null, points: [], complete: true, ms: 0, t0: 0, error: null, waiters: [] };
  const wake = () => { for (const w of v.waiters.splice(0)) w(); };

  function draw() {
    if (!v.plan || v.plan.off) { panel.show(null, v.plan, null, ''); return; }
    const done = v.points.filter(Boolean).length;
    // a function: the panel writes it again in another language
    const status = () => (v.error ? t('sweep.failed', { error: v.error }) : v.complete ? t('sweep.done', { done, ms: fmtMs(v.ms) }) : t('sweep.progress', { done, total: v.plan.values.length }));
    panel.show(v.points, v.plan, page.st[v.plan.name], status);
  }

  /** Start the sweep the state asks for when it differs from the one shown. */
  function update(st) {
    const plan = sweepPlan(page.schema, st);
    if (plan?.req) plan.req = page.requestOf(st); // a model's head, in model mode
    const key = plan ? JSON.stringify(plan) : null;
    if (key === v.key) { draw(); return; }
    Object.assign(v, { key, plan, points: [], complete: !plan || !!plan.off, error: null });
    v.id += 1; // whatever an older sweep still sends is dropped
    if (!plan || plan.off) page.lab.backgroundIfAny()?.postMessage({ kind: MSG.SWEEP_CANCEL });
    else {
      const w = page.lab.background();
      v.t0 = performance.now();
      w.postMessage({ kind: MSG.SWEEP, id: v.id, plan });
    }
    draw();
    if (v.complete) wake();
  }

  function onMessage(m) {
    if (m.id !== v.id) return; // an older sweep's
    if (m.kind === MSG.SWEEP_POINT) v.points[m.i] = m;
    else {
      v.complete = m.complete || !!m.error;
      v.error = m.error ?? null;
      v.ms = performance.now() - v.t0;
      if (v.complete) wake();
    }
    draw();
  }

  return {
    name: 'sweep',
    sync: (st) => panel.sync(st),
    update,
    draw() {},
    snapshot: () => null, // sweep() waits for the finished one (finished)
    dispose() {},
    routes: { [MSG.SWEEP_POINT]: onMessage, [MSG.SWEEP_DONE]: onMessage },
    /** The background worker failed: a sweep under way is done, with that failure. */
    failed(what) {
      if (v.complete) return;
      Object.assign(v, { complete: true, error: what });
      v.id += 1; // whatever that sweep still sends is dropped
      draw();
      wake();
    },
    /** The finished sweep of the current state (sweep.mjs's sweepResult), or null when off. */
    async finished() {
      await page.inspector.snapshot(); // the state has settled, and with it the sweep it asks for has started
      while (!v.complete) await new Promise((resolve) => v.waiters.push(resolve));
      const p = v.plan;
      if (!p || p.off) return null;
      return sweepResult(p, v.points);
    },
    exportData: () => (v.plan && !v.plan.off && v.points.some(Boolean) ? { plan: v.plan, points: v.points } : null),
  };
}
