// entropy-panel.mjs: the row-entropy histogram of M and softmax A (render/entropy.mjs) as a page panel.
import { entropyBars, entropyNote, drawEntropyHistogram } from '../render/entropy.mjs';
import { SERIES, themeColors } from '../render/charts.mjs';
import { NOTHING } from './panel.mjs';
import { getLang } from '../i18n/i18n.mjs';

const SERIES_COLOR = Object.fromEntries(SERIES.map((x) => [x.key, x.color]));

/** The histogram (#ent-hist, #ent-note). Besides the Panel: bars() (what the export menu draws). */
export function mountEntropy(page) {
  const canvas = document.getElementById('ent-hist'), noteEl = document.getElementById('ent-note');
  // the canvas's CSS size, from a ResizeObserver (never a forced layout in a commit)
  const box = { width: 0, height: 0, drawn: null };
  const ro = new ResizeObserver(([e]) => {
    box.width = Math.floor(e.contentRect.width); box.height = Math.floor(e.contentRect.height); page.resetTextPx();
    page.redraw.readouts = true; page.schedule();
  });
  ro.observe(canvas);
  function draw(hist) {
    canvas.classList.toggle('stale', page.lab.staleShown('readoutsStale'));
    const dark = page.isDark();
    const key = box.drawn;
    const px = page.textPx(), lang = getLang(); // the note and the axis's words are in the page's language
    if (key && key.hist === hist && key.dark === dark && key.width === box.width && key.height === box.height && key.px === px && key.lang === lang) return;
    box.drawn = { hist, dark, width: box.width, height: box.height, px, lang };
    const note = entropyNote(hist);
    if (noteEl.textContent !== note) noteEl.textContent = note;
    if (!box.width || !box.height) return;
    drawEntropyHistogram(canvas, entropyBars(hist), {
      width: box.width, height: box.height, dpr: devicePixelRatio || 1, fontPx: px,
      colors: { M: SERIES_COLOR.M, A: SERIES_COLOR.A, mark: themeColors(dark).mark, axis: themeColors(dark).axis }, // the mark's "uniform" is text: ≥ 4.5:1
    });
  }
  // the spectral readouts' entropy_hist would be plain ones merged in, as the table reads them
  const hist = () => ({ ...(page.view.readouts ?? {}), ...(page.view.spec?.readouts ?? {}) }).entropy_hist ?? null;
  return {
    ...NOTHING,
    name: 'entropy',
    draw() { if (page.redraw.readouts) draw(hist()); },
    dispose() { ro.disconnect(); },
    bars: () => entropyBars(page.view.readouts?.entropy_hist ?? null),
  };
}
