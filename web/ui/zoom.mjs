// zoom.mjs: the heatmaps' row/column zoom (docs/page.md, "Zoom"): inputs for the rows and columns to show
// (or a drag across a heatmap), a "whole matrix" reset, the link key `zoom=r0-r1,c0-c1`, and the window
// itself, cut from the full n×n matrices at full resolution (Engine.window: on this thread up to
// MAIN_THREAD_MAX_N, else by the frame worker, which holds M and A), never an upscaled downsample.
import { clampZoom, zoomText, spanText } from '../state/tokens.mjs';
import { MSG } from '../workers/protocol.mjs';
import { t, getLang } from '../i18n/i18n.mjs';

/**
 * @param {HTMLElement} box the form's container (index.html #zoom-box)
 * @param {{set(value: string): void, local(): boolean, compute(req: object, value: string): object|null,
 *   post(msg: object): void, request(): object, state(): object, pieces(): string[]|null, redraw(): void,
 *   settled(): void, canvases: HTMLCanvasElement[], grid(): object|null}} ctx
 *   set: put a zoom value into the state (the page's onChange); local: whether this thread holds M;
 *   compute: Engine.window here; post: a {kind: MSG.WINDOW} message to the frame worker; redraw: draw the
 *   heatmaps again; settled: a window arrived (snapshot() may resolve); grid: the grid shown.
 */
export function mountZoom(box, ctx) {
  const num = (cls) => {
    const i = document.createElement('input');
    i.type = 'number'; i.min = '0'; i.step = '1'; i.className = cls;
    return i;
  };
  const r0 = num('z-r0'), r1 = num('z-r1'), c0 = num('z-c0'), c1 = num('z-c1');
  const show = document.createElement('button'); show.type = 'button'; show.className = 'z-show';
  const reset = document.createElement('button'); reset.type = 'button'; reset.className = 'z-reset';
  const text = (s) => document.createTextNode(s);
  const label = document.createElement('span'); label.className = 'z-label';
  const cols = document.createElement('span'); cols.className = 'z-label';
  box.append(label, text(' '), r0, text('–'), r1, text(' '), cols, text(' '), c0, text('–'), c1, text(' '), show, text(' '), reset);
  let wordsIn = null; // the language the form's words are in (written again by sync when the page's changes)
  function words() {
    if (wordsIn === getLang()) return;
    wordsIn = getLang();
    label.textContent = t('heatmap.zoom.rows'); cols.textContent = t('heatmap.zoom.cols');
    show.textContent = t('heatmap.zoom.show'); reset.textContent = t('heatmap.zoom.reset');
    for (const [i, key] of [[r0, 'r0'], [r1, 'r1'], [c0, 'c0'], [c1, 'c1']]) i.setAttribute('aria-label', t(`heatmap.zoom.${key}`));
    box.title = t('heatmap.zoom.title');
    box.setAttribute('aria-label', t('heatmap.zoom.aria'));
  }
  words();

  const apply = () => {
    const v = [r0, r1, c0, c1].map((i) => i.value.trim());
    if (v.some((x) => x === '')) return;
    ctx.set(`${v[0]}-${v[1]},${v[2]}-${v[3]}`);
  };
  show.addEventListener('click', apply);
  for (const i of [r0, r1, c0, c1]) i.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); apply(); } });
  reset.addEventListener('click', () => ctx.set(''));

  // a drag across a heatmap selects the rows and columns under it (a click alone is no zoom)
  let drag = null;
  for (const c of ctx.canvases) {
    c.addEventListener('pointerdown', (e) => {
      const g = ctx.grid();
      if (!g || e.button !== 0) return;
      drag = { c, x: e.clientX, y: e.clientY, g };
      c.setPointerCapture?.(e.pointerId);
    });
    c.addEventListener('pointerup', (e) => {
      const d = drag;
      drag = null;
      if (!d || d.c !== c || Math.hypot(e.clientX - d.x, e.clientY - d.y) < 6) return;
      const r = c.getBoundingClientRect(), g = d.g;
      const tok = (px, len, from, to) => Math.min(to, Math.max(from, from + Math.floor((px / len) * (to - from + 1))));
      const ys = [d.y, e.clientY].map((y) => tok(y - r.top, r.height, g.r0, g.r1)).sort((a, b) => a - b);
      const xs = [d.x, e.clientX].map((x) => tok(x - r.left, r.width, g.c0, g.c1)).sort((a, b) => a - b);
      ctx.set(`${ys[0]}-${ys[1]},${xs[0]}-${xs[1]}`);
    });
  }

  const view = { key: null, win: undefined, pending: false };
  return {
    get pending() { return view.pending; },
    /** The inputs show the state's zoom (or the whole matrix of n tokens); reset only with a zoom. */
    sync(value, n) {
      words();
      const z = clampZoom(value, n) ?? { r0: 0, r1: n - 1, c0: 0, c1: n - 1 };
      const digits = String(Math.max(0, n - 1)).length; // the inputs fit n − 1 (style.css)
      if (box.style.getPropertyValue('--zoom-digits') !== String(digits)) box.style.setProperty('--zoom-digits', String(digits));
      for (const [i, v] of [[r0, z.r0], [r1, z.r1], [c0, z.c0], [c1, z.c1]]) {
        i.max = String(n - 1);
        if (document.activeElement !== i && i.value !== String(v)) i.value = String(v);
      }
      reset.disabled = !value;
    },
    /**
     * The window for the frame shown and the state's zoom: the window, null (no window: the zoom lies
     * outside the matrix), or undefined while the frame worker computes it (asked for here once).
     */
    window(frame) {
      const st = ctx.state(), req = ctx.request();
      if (!clampZoom(st.zoom, frame.n)) return null;
      const key = `${JSON.stringify(req)}|${st.zoom}`;
      if (view.key === key) return view.win;
      // a drag above the frame worker's range gets quick frames: the window follows on release
      if (frame.quick) return view.win ?? undefined;
      view.key = key;
      if (ctx.local()) { view.win = ctx.compute(req, st.zoom); view.pending = false; return view.win; }
      view.pending = true;
      ctx.post({ kind: MSG.WINDOW, key, req, zoom: st.zoom });
      return view.win ?? undefined; // the last window stays on screen until the new one comes
    },
    /** The frame worker's answer {key, win | error}. */
    arrived(m) {
      if (m.key !== view.key) return;
      view.pending = false;
      view.win = m.error ? null : m.win;
      ctx.settled();
      ctx.redraw();
    },
    /** The frame worker failed: no window will come, so nothing waits for one (snapshot() settles). */
    abandon() { view.pending = false; },
    /** The note under the heatmaps for a zoomed grid. */
    note(g) {
      const p = ctx.pieces();
      const res = g.b > 1 ? t('heatmap.zoom.blocks', { b: g.b, mode: t(`option.ds.${g.mode}`) }) : t('heatmap.zoom.full');
      return t('heatmap.zoom.note', { rows: spanText(p, g.r0, g.r1), cols: spanText(p, g.c0, g.c1), n: g.n, res });
    },
    text: zoomText,
  };
}
