// lesson-stage.mjs: the open lesson's first screen (docs/page.md, "Layout"; docs/lessons.md). Where the
// page scrolls (the flow layout at 1024×768, projector mode, one column, a phone), the figures the lesson
// names are moved into #stage, the first row of the lab: in the flow layout beside the lesson panel, which
// stays at the top of the controls' column; where the controls go on top (projector mode, one column) the
// lesson panel moves into the stage too, before the figures. So the caption sits beside (or above) its
// evidence instead of the figures a screen or more below. Closing the lesson or changing it puts every
// element back where index.html has it (a placeholder marks each place). The one-screen layout holds
// every panel already (a figure is scrolled into its column), except the mechanism views and the article's
// figures: a lesson on one stages it beside the lesson, and the lab below takes the flow layout's sizes.
// The readout rows and the cost line a lesson cites are not moved: the lesson's evidence strip shows them.

/** A panel key of a lesson's `highlight` → the elements that make its figure (its heading first). */
const UNITS = {
  heatmaps: () => [document.querySelector('.heatmaps')],
  spectrum: () => withHead('chart-spectrum'),
  error: () => withHead('chart-error'),
  entropy: () => [document.querySelector('.ent-head'), document.getElementById('ent-note'), document.getElementById('ent-hist')],
  sweep: () => [document.getElementById('sweep-box')],
  mech: () => [document.getElementById('mech')],
  article: () => [document.getElementById('fig-article')],
  row: () => [document.getElementById('row-view')],
};
/** The panels the one-screen layout cannot show with the rest (docs/lessons.md, "The first screen"). */
const CROWDS = { mech: true, article: true };
function withHead(id) {
  const el = document.getElementById(id);
  const head = el?.previousElementSibling;
  return head?.classList.contains('chart-head') ? [head, el] : [el];
}

/** The one-screen layout's window (style.css): there every panel is in the window already. */
const ONE_SCREEN = '(min-width: 1200px) and (min-height: 720px)';
/** The flow layout's (style.css): the controls' column beside the rest, from 800 px. */
const COLUMNS = '(min-width: 800px)';

/**
 * Mount the stage (`stage`: index.html's #stage; `lesson`: the lesson panel). Returns {arrange(keys, mode)}:
 * `keys`, the open lesson's highlight (null: no lesson); `mode`, {projector, embed}.
 */
export function mountStage(stage, lesson) {
  const moved = []; // [element, placeholder]
  const oneScreen = matchMedia(ONE_SCREEN), columns = matchMedia(COLUMNS);
  let last = { keys: null, mode: {} };
  let shownKey = '';

  function restore() {
    for (const [el, mark] of moved.splice(0).reverse()) mark.replaceWith(el);
    stage.replaceChildren();
  }
  function move(el, into) {
    const mark = document.createComment(`the place of #${el.id || el.className}`);
    el.replaceWith(mark);
    moved.push([el, mark]);
    into.append(el);
  }

  function arrange(keys, mode = last.mode) {
    last = { keys, mode };
    // the one-screen layout holds every panel but the mechanism views, which come below it, and the
    // article's figures, which leave the spectra's column no room for the page's own two charts
    const on = !!keys && !mode.embed && (mode.projector || !oneScreen.matches || keys.some((k) => CROWDS[k]));
    const figs = on ? keys.filter((k) => UNITS[k]) : [];
    const withLesson = mode.projector || !columns.matches; // the controls on top: the lesson comes along
    const key = on ? `${figs.join(' ')}|${withLesson}` : '';
    if (key === shownKey) return;
    shownKey = key;
    restore();
    const root = document.documentElement;
    stage.hidden = !on || !figs.length;
    if (stage.hidden) { delete root.dataset.lessonStage; return; } // a lesson of readouts: its strip says it
    root.dataset.lessonStage = figs.join(' '); // style.css places the stage by what it holds
    if (withLesson) move(lesson, stage);
    const box = document.createElement('div');
    box.className = 'stage-figs';
    stage.append(box);
    for (const k of figs) {
      const fig = document.createElement('div');
      fig.className = 'stage-fig';
      fig.dataset.fig = k;
      box.append(fig);
      for (const el of UNITS[k]()) if (el) move(el, fig);
    }
  }
  for (const q of [oneScreen, columns]) q.addEventListener('change', () => arrange(last.keys, last.mode));
  return { arrange };
}

/**
 * Bring the evidence into the window after a lesson opened or the layout changed, only when some outlined
 * element is not on the screen, and never while the reader drags (`dragging()`): where the stage is shown,
 * its top to the window's top (the caption and its figures start there: the header goes); elsewhere (the
 * one-screen layout, whose columns scroll) the least scroll that shows the first hidden one.
 */
export function revealEvidence(dragging) {
  if (dragging()) return;
  const H = innerHeight;
  const hidden = (e) => { const b = e.getBoundingClientRect(); return b.height > 0 && (b.top < 0 || b.bottom > H); };
  const first = [...document.querySelectorAll('.hl')].find(hidden);
  if (!first) return;
  const stage = document.getElementById('stage');
  if (!stage.hidden && stage.contains(first)) stage.scrollIntoView({ block: 'start' });
  else first.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}
