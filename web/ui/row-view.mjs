// row-view.mjs: the single-row view. One query's weights as bars (render/rowbars.mjs), the variant's row
// above softmax's for the same query, with each row's entropy and keys for 90 % (web/compute/row-stats.mjs): what
// "spiky" and "flat" mean, one row at a time. The rows are the full rows of M and A (Engine.row), never the
// heatmaps' downsampled cells: from this thread's engine up to MAIN_THREAD_MAX_N (it holds M and A after
// each commit, a drag's included), else from the background worker (MSG.ROW) once the input rests. The
// row is the slider's, or the row a click or the keyboard cursor selects on a heatmap (the heatmaps panel
// says so with an 'attnviz-row' event on the document: panels never import each other). It is a <details>:
// the lessons about spikiness open it (ui/lessons.mjs opens what a lesson highlights), the others close it,
// and closed it computes nothing.
import { drawRowBars } from '../render/rowbars.mjs';
import { SERIES, themeColors } from '../render/charts.mjs';
import { fmt } from '../render/format.mjs';
import { rowStats } from '../compute/row-stats.mjs';
import { MAIN_THREAD_MAX_N } from '../compute/engine.mjs';
import { MSG } from '../workers/protocol.mjs';
import { NOTHING } from './panel.mjs';
import { t, getLang } from '../i18n/i18n.mjs';

const COLOR = Object.fromEntries(SERIES.map((x) => [x.key, x.color]));
/** row-stats.mjs's reasons (English: the snapshot keeps them as they are) by their catalogue key, for the page. */
const ROW_WHY = {
  'the row holds Inf or NaN': 'row.why.nonfinite',
  'the row has negative weights, so it is not a distribution': 'row.why.negative',
  'the row sums to zero': 'row.why.zero',
};

/** The panel (index.html's #row-view: #row-pick, #row-num, #row-bars, #row-M, #row-A). `page`: main.mjs's context. */
export function mountRowView(page) {
  const $ = (id) => document.getElementById(id);
  const fig = $('row-view');
  const slider = $('row-pick'), num = $('row-num'), canvas = $('row-bars');
  let chosen = null;   // the reader's row; null: the middle row, ⌊n/2⌋
  let shown = null;    // {key, i, n, causal, M, A, mReason, aReason, stats: {M, A}}
  let asked = null;    // {id, key}: the background worker's row on its way
  let seq = 0;
  let dirty = true;    // something of its own to redraw (the row, the size, an answer)
  const box = { width: 0, height: 0, drawn: null };
  const ro = new ResizeObserver(([e]) => {
    box.width = Math.floor(e.contentRect.width); box.height = Math.floor(e.contentRect.height);
    dirty = true; page.schedule();
  });
  ro.observe(canvas);

  const rowOf = (n) => Math.min(n - 1, chosen ?? Math.floor(n / 2));
  // what the shown row must match: the request (inputs, knobs) and the row
  const want = (st) => { const req = page.requestOf(st), i = rowOf(st.n); return { req, i, key: `${i}|${JSON.stringify(req)}` }; };
  const local = (st) => st.n <= MAIN_THREAD_MAX_N && !!page.engine;

  function take(row, key) {
    const m = row.causal ? row.i + 1 : row.n;
    shown = { key, ...row, stats: { M: row.M ? rowStats(row.M, m) : null, A: row.A ? rowStats(row.A, m) : null } };
    box.drawn = null;
  }

  /** Select row i (the slider, a heatmap's cell). */
  function select(i) {
    if (!on()) return;
    const n = page.st.n;
    const r = Math.min(n - 1, Math.max(0, Math.round(i)));
    if (r === chosen) return;
    chosen = r;
    if (!local(page.st)) ask(page.st);
    dirty = true; page.schedule();
  }
  slider.addEventListener('input', () => select(Number(slider.value)));
  // shown only while open (a closed view, or an embed, computes nothing)
  const on = () => fig.open && !!page.st && !page.st.embed;
  fig.addEventListener('toggle', () => {
    if (on() && !local(page.st)) ask(page.st);
    dirty = true; page.schedule(); page.inspector.notify();
  });
  document.addEventListener('attnviz-row', (e) => select(e.detail.row));

  function ask(st) {
    const w = want(st);
    if (shown?.key === w.key || asked?.key === w.key) return;
    asked = { id: ++seq, key: w.key };
    page.lab.background().postMessage({ kind: MSG.ROW, id: asked.id, req: w.req, row: w.i });
  }
  function onMessage(m) {
    if (!asked || m.id !== asked.id) return; // a newer row was asked for
    const key = asked.key;
    asked = null;
    if (m.error) { shown = { key, error: m.error }; box.drawn = null; } else take(m.row, key);
    dirty = true; page.schedule(); page.inspector.notify();
  }

  function text(k, s, reason) {
    const who = k === 'M' ? 'M' : 'softmax'; // names, the same in every language
    if (!s) return reason && reason !== 'not computed' ? t('row.reason', { who, reason }) : t('row.notComputed', { who });
    if (s.entropy === null) return t('row.reason', { who, reason: ROW_WHY[s.reason] ? t(ROW_WHY[s.reason]) : s.reason });
    return t('row.stats', { who, h: fmt(s.entropy), m: s.m, u: fmt(s.uniform), k: s.keys90 });
  }

  function draw() {
    const st = page.st;
    const w = want(st);
    if (shown?.key !== w.key && local(st) && page.view.frame) {
      try { take(page.engine.row(w.req, w.i), w.key); } catch (err) { shown = { key: w.key, error: err.message }; }
    }
    const max = String(st.n - 1);
    if (slider.max !== max) slider.max = max;
    if (slider.value !== String(w.i)) slider.value = String(w.i);
    const label = `${w.i}`;
    if (num.textContent !== label) num.textContent = label;
    const stale = shown?.key !== w.key;
    canvas.classList.toggle('stale', stale);
    if (!shown) return;
    const put = (id, t) => { if ($(id).textContent !== t) $(id).textContent = t; };
    put('row-M', shown.error ? t('row.error', { i: shown.i ?? w.i, error: shown.error }) : text('M', shown.stats.M, shown.mReason));
    put('row-A', shown.error ? '' : text('A', shown.stats.A, shown.aReason));
    const dark = page.isDark(), px = page.textPx(), lang = getLang(); // the lanes' labels are in the page's language
    const d = box.drawn;
    if (d && d.shown === shown && d.dark === dark && d.width === box.width && d.height === box.height && d.px === px && d.lang === lang) return;
    box.drawn = { shown, dark, width: box.width, height: box.height, px, lang };
    if (!box.width || !box.height || shown.error) return;
    drawRowBars(canvas, { M: shown.M, A: shown.A, m: shown.causal ? shown.i + 1 : shown.n, i: shown.i }, {
      width: box.width, height: box.height, dpr: devicePixelRatio || 1, fontPx: px,
      colors: { M: COLOR.M, A: COLOR.A, axis: themeColors(dark).axis, mark: themeColors(dark).mark }, // the mark labels j = i: text
      labels: { M: t('row.lane.M', { i: shown.i }), A: t('row.lane.A', { i: shown.i }), key0: t('row.key0') },
    });
  }

  const part = (s) => (s ? { entropy: s.entropy, keys_for_90: s.keys90, allowed: s.m, sum: s.sum, reason: s.reason } : null);
  return {
    ...NOTHING,
    name: 'row',
    update(st) { if (on() && !local(st)) ask(st); },
    draw() { if (on() && (page.redraw.heat || dirty)) { dirty = false; draw(); } },
    dispose() { ro.disconnect(); },
    routes: { [MSG.ROW_DATA]: onMessage },
    /** The row shown, and its two rows' statistics (docs/inspection.md); current: it is the state's row. */
    snapshot() {
      if (!page.st || !shown || !on()) return null;
      return {
        row: shown.i ?? null, n: shown.n ?? null, causal: shown.causal ?? null, current: shown.key === want(page.st).key,
        error: shown.error ?? null, M: part(shown.stats?.M), A: part(shown.stats?.A),
      };
    },
  };
}
