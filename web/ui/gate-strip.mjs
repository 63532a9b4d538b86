// gate-strip.mjs: the gate strip under the heatmap of M (docs/page.md, "Gates"), for the gated families only: the
// decay α_t = exp(g_t) per token as a strip aligned with the heatmap's columns (the same width, the same tokens
// per column, the zoom's window when one is shown), the per-channel gates as a small channels × tokens heatmap
// (gla, kda, dplr), the write strength η_t (fla's β_t) as a second strip (gdn, kda), and the resets marked ▼.
// Hover (or the keyboard: focus a strip, arrow keys) says the token, α and η. It reads the frame's `gates`
// (web/compute/engine.mjs gates(): gatesSummary); nothing is computed here.
import { colorTable } from '../render/colormap.mjs';
import { fmt } from '../render/format.mjs';
import { stripColumns, columnTokens, stripCells, gateIndex, drawCells, drawResetMarks, imageColumns } from '../render/gate-strip.mjs';
import { themeColors } from '../render/charts.mjs';
import { spanText } from '../state/tokens.mjs';
import { sentenceResets } from '../state/gates.mjs';
import { clampZoom } from '../compute/zoom-window.mjs';
import { NOTHING } from './panel.mjs';
import { t, getLang } from '../i18n/i18n.mjs';

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

/** Rows of the strip (CSS px at 1× text; projector mode and large text scale them by the text size). */
const MARK_H = 7, ALPHA_H = 12, BETA_H = 12, IMAGE_H = 40;

/**
 * Mount the strip into `box` (index.html's #gate-strip, after #fig-D in .heatmaps): a line of its own under the
 * three heatmaps, starting where M starts (on a phone, where they stack, right under M: style.css).
 * `page`: main.mjs's context.
 */
export function mountGateStrip(box, page) {
  const alphaCanvas = el('canvas', { class: 'gs-alpha', tabindex: '0', role: 'img' });
  const imageCanvas = el('canvas', { class: 'gs-image', tabindex: '0', role: 'img' });
  const betaCanvas = el('canvas', { class: 'gs-beta', tabindex: '0', role: 'img' });
  const labA = el('span', { class: 'gs-lab' }), labI = el('span', { class: 'gs-lab' }), labB = el('span', { class: 'gs-lab' });
  const rowA = el('div', { class: 'gs-row gs-row-alpha' }, alphaCanvas, labA);
  const rowI = el('div', { class: 'gs-row gs-row-image' }, imageCanvas, labI);
  const rowB = el('div', { class: 'gs-row gs-row-beta' }, betaCanvas, labB);
  // one line under the strips: the legend, or what the hovered (or the keyboard's) column holds
  const say = el('p', { class: 'gs-say note', 'aria-live': 'polite' });
  // with a text's tokens (a model's, or tokens.json beside own files): resets after its sentence ends
  const sentences = el('button', { type: 'button', class: 'gs-sentences', hidden: '' });
  sentences.addEventListener('click', () => {
    const at = sentenceResets(page.tokenPieces?.(), page.st.n);
    page.onChange('gate', 'resets', 'change');
    page.onChange('gate_period', 0, 'change');
    page.onChange('gate_at', at.join(','), 'change');
  });
  box.append(rowA, rowI, rowB, say, sentences);
  let legend = '';

  let shown = null;   // {summary, cols, cells, key}: what is drawn
  let drawnKey = null;
  let cursor = 0;     // the keyboard's column
  const ro = new ResizeObserver(() => { drawnKey = null; page.schedule(); });
  ro.observe(alphaCanvas);

  /** The frame's gates when they are for the state shown (a gated family), else null. */
  function current() {
    const f = page.view.frame;
    return f?.gates && f.gates.n === f.n ? f : null;
  }

  function draw() {
    const f = current();
    const on = !!f;
    if (box.hidden === on) box.hidden = !on;
    if (!on) { shown = null; return; }
    const st = page.st, s = f.gates, dark = page.isDark(), lang = getLang();
    const z = st.zoom ? clampZoom(st.zoom, f.n) : null;
    const cols = stripColumns(f.n, f.b, z);
    const key = `${f.n}|${f.b}|${st.zoom}|${st.cmap}|${dark}|${lang}|${alphaCanvas.clientWidth}|${page.textPx?.() ?? ''}`;
    if (shown?.summary === s && drawnKey === key) return;
    shown = { summary: s, cols, cells: stripCells(s, cols) };
    drawnKey = key;
    const table = colorTable(st.cmap), mark = themeColors(dark).mark;
    const scale = (page.textPx?.() ?? 13) / 13, dpr = globalThis.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(alphaCanvas.clientWidth * dpr));
    // α: the reset marks above the cells
    const mh = Math.round(MARK_H * scale * dpr), ah = Math.round(ALPHA_H * scale * dpr);
    sizeCanvas(alphaCanvas, width, mh + ah, MARK_H + ALPHA_H, scale);
    const ca = alphaCanvas.getContext('2d');
    ca.clearRect(0, 0, width, mh + ah);
    drawCells(ca, shown.cells.alpha, gateIndex, table, mh, ah, width);
    drawResetMarks(ca, shown.cells.reset, 0, mh, width, mark);
    alphaCanvas.setAttribute('aria-label', t('gates.aria.alpha', { resets: s.resets.length }));
    labA.textContent = t('gates.lab.alpha');
    // per channel: channel blocks × the strip's columns
    const img = s.image;
    rowI.hidden = !img;
    if (img) {
      const ih = Math.round(IMAGE_H * scale * dpr), ic = imageColumns(img, cols);
      sizeCanvas(imageCanvas, width, ih, IMAGE_H, scale);
      const ci = imageCanvas.getContext('2d');
      const rowH = ih / img.rows;
      for (let r = 0; r < img.rows; r++) {
        const vals = new Float32Array(cols.cols);
        for (let j = 0; j < cols.cols; j++) vals[j] = img.data[r * img.cols + ic[j]];
        drawCells(ci, vals, gateIndex, table, Math.floor(r * rowH), Math.max(1, Math.ceil(rowH)), width);
      }
      imageCanvas.setAttribute('aria-label', t('gates.aria.image', { channels: s.channels }));
      labI.textContent = t('gates.lab.image', { channels: s.channels });
    }
    // η (β): on [0, 2]
    rowB.hidden = !shown.cells.beta;
    if (shown.cells.beta) {
      const bh = Math.round(BETA_H * scale * dpr);
      sizeCanvas(betaCanvas, width, bh, BETA_H, scale);
      drawCells(betaCanvas.getContext('2d'), shown.cells.beta, (v) => Math.max(0, Math.min(255, Math.round((v / 2) * 255))), table, 0, bh, width);
      betaCanvas.setAttribute('aria-label', t('gates.aria.beta', { lo: fmt(s.beta.min, 3), hi: fmt(s.beta.max, 3) }));
      labB.textContent = t('gates.lab.beta');
    }
    legend = legendText(s);
    if (!say.dataset.hovered) say.textContent = legend;
    const pieces = page.tokenPieces?.();
    const offer = !!pieces && pieces.length === f.n && sentenceResets(pieces, f.n).length > 0;
    if (sentences.hidden === offer) sentences.hidden = !offer;
    sentences.textContent = t('gates.sentences');
    sentences.title = t('gates.sentences.title');
  }

  function sizeCanvas(c, w, h, cssH, scale) {
    if (c.width !== w) c.width = w;
    if (c.height !== h) c.height = h;
    const css = `${Math.round(cssH * scale)}px`;
    if (c.style.height !== css) c.style.height = css; // CSSOM, allowed under the page's CSP
  }

  function legendText(s) {
    const parts = [t('gates.legend', { lo: fmt(Math.exp(s.min), 3), hi: fmt(Math.exp(s.max), 4) })];
    if (s.resets.length) parts.push(t('gates.legend.resets', { count: s.resets.length, first: s.resets.slice(0, 6).join(', '), more: s.resets.length > 6 ? ' …' : '' }));
    if (s.beta) parts.push(t('gates.legend.beta', { lo: fmt(s.beta.min, 3), hi: fmt(s.beta.max, 3) }));
    return parts.join(' · ');
  }
  // the legend follows the language (the strips' labels are redrawn with it: draw's key)
  const relabel = () => { if (shown && !say.dataset.hovered) say.textContent = legend = legendText(shown.summary); };

  /** What column j (and, on the image, channel row r) holds, in words. */
  function cellText(j, r = null) {
    const s = shown.summary, [a, b] = columnTokens(shown.cols, j), pieces = page.tokenPieces?.() ?? null;
    const tokens = spanText(pieces, a, b);
    const resets = s.resets.filter((x) => x >= a && x <= b);
    let alpha = fmt(shown.cells.alpha[j], 4);
    if (r !== null && s.image) {
      const ic = imageColumns(s.image, shown.cols)[j], c0 = r * s.image.cb, c1 = Math.min(s.channels - 1, c0 + s.image.cb - 1);
      alpha = t('gates.hover.channels', { alpha: fmt(s.image.data[r * s.image.cols + ic], 4), c: c0 === c1 ? String(c0) : `${c0}–${c1}` });
    }
    const parts = [t(a === b ? 'gates.hover.token' : 'gates.hover.tokens', { tokens, alpha })];
    if (shown.cells.beta) parts.push(t('gates.hover.beta', { beta: fmt(shown.cells.beta[j], 4) }));
    if (resets.length) parts.push(t('gates.hover.reset', { at: resets.join(', ') }));
    return parts.join(t('gates.hover.join'));
  }

  function colAt(canvas, e) {
    if (!shown) return null;
    const rect = canvas.getBoundingClientRect(), x = e.clientX - rect.left, y = e.clientY - rect.top;
    if (!(x >= 0 && x < rect.width && y >= 0 && y < rect.height)) return null;
    const j = Math.min(shown.cols.cols - 1, Math.floor((x / rect.width) * shown.cols.cols));
    const r = canvas === imageCanvas && shown.summary.image ? Math.min(shown.summary.image.rows - 1, Math.floor((y / rect.height) * shown.summary.image.rows)) : null;
    return { j, r };
  }
  for (const c of [alphaCanvas, imageCanvas, betaCanvas]) {
    c.addEventListener('mousemove', (e) => {
      const at = colAt(c, e);
      if (!at) return;
      say.dataset.hovered = '1';
      say.textContent = cellText(at.j, at.r);
    });
    c.addEventListener('keydown', (e) => {
      if (!shown) return;
      const step = { ArrowLeft: -1, ArrowRight: 1, PageUp: -8, PageDown: 8 }[e.key];
      if (step) cursor = Math.min(shown.cols.cols - 1, Math.max(0, cursor + step));
      else if (e.key === 'Home') cursor = 0;
      else if (e.key === 'End') cursor = shown.cols.cols - 1;
      else return;
      e.preventDefault();
      say.dataset.hovered = '1';
      say.textContent = cellText(cursor);
    });
    c.addEventListener('focus', () => { if (shown) { say.dataset.hovered = '1'; say.textContent = cellText(Math.min(cursor, shown.cols.cols - 1)); } });
    const back = () => { delete say.dataset.hovered; say.textContent = legend; };
    c.addEventListener('mouseleave', back);
    c.addEventListener('blur', back);
  }

  return {
    ...NOTHING,
    name: 'gates',
    sync() { relabel(); },
    draw() { if (page.redraw.heat || drawnKey === null || !shown) draw(); },
    /** Its part of window.attnviz.panels(): what the strip shows (null when hidden). */
    snapshot() {
      if (!shown || box.hidden) return null;
      const s = shown.summary;
      return { columns: shown.cols.cols, c0: shown.cols.c0, c1: shown.cols.c1, b: shown.cols.b,
        resetColumns: [...shown.cells.reset].flatMap((x, j) => (x ? [j] : [])), channels: s.channels, image: !!s.image, beta: !!s.beta };
    },
    dispose() { ro.disconnect(); },
  };
}
