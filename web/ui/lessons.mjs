// lessons.mjs: the "Lessons" menu in the header and the lesson panel above the controls (the presets of
// web/presets.mjs). The menu is a list of plain links (`#preset=NAME`), so a lesson opens by keyboard,
// touch, a middle click into a new tab, or a link pasted anywhere; main.mjs reads the hash. Every lesson
// link carries the reader's presentation mode (projector=1), so changing lessons never switches it off.
// The panel shows the open lesson's place in the course ("3 / 23", from PRESETS' order), title, caption
// and sources (each seed by its own title, section and quoted sentence with an English gloss; each paper
// by authors, year and arXiv id), with "previous", "reset" (the preset's state again), "next" and "close";
// ←/→ and PageUp/PageDown step lessons (presenter clickers) unless a control that takes those keys has
// focus. The evidence strip under the caption shows each readout row the lesson names, as the table
// shows it (its label and value, copied from the table after each draw: never a second computation), and,
// for a lesson with `compare`, the same row for the other state, computed by `compare` (main.mjs: the
// page's library, on this thread); the cost line is shown there too when the lesson names it. What carries
// the claim is outlined (class `hl`): the strip's items and the panels the lesson names (their data-hl);
// the table's rows and the cost line it stands in for are marked `cited`. The panels are moved beside the
// caption where the page scrolls (ui/lesson-stage.mjs).
import { PRESETS, CHAPTERS, presetOf, stepPreset, chapterOf } from '../presets.mjs';
import { NOTHING } from './panel.mjs';
import { plainQuote, SEEDS } from '../citations.mjs';
import { READOUT_ROWS } from '../render/readouts.mjs';
import { mountStage, revealEvidence } from './lesson-stage.mjs';

/**
 * Build the menu into `menu` (a <details> with a <summary>) and wire the panel `panel` (index.html's
 * #lesson). `onClose()` is called by the panel's close button; `compare(st, key, value)`: the readouts
 * object of state `st` with `key` set to `value` ({r, ctx} as the table's source gives them), or null;
 * `dragging()`: whether the reader drags (the page never scrolls then). Returns {show(name|null)}.
 */
export function mountLessons(menu, panel, { onClose, compare = () => null, dragging = () => false }) {
  let modes = ''; // the link keys of the reader's presentation ('&projector=1'), kept on every lesson link
  const href = (name) => `#preset=${encodeURIComponent(name)}${modes}`;
  // the menu: the chapters, each a heading over its lessons, numbered through the course
  const list = document.createElement('div');
  list.className = 'lesson-list';
  for (const [ci, c] of CHAPTERS.entries()) {
    const head = document.createElement('p');
    head.className = 'lesson-chapter';
    head.id = `lesson-chapter-${ci + 1}`;
    head.textContent = `${ci + 1}. ${c.title}`;
    const ol = document.createElement('ol');
    ol.setAttribute('aria-labelledby', head.id);
    for (const name of c.lessons) {
      const p = presetOf(name);
      const li = document.createElement('li');
      li.value = PRESETS.indexOf(p) + 1;
      const a = document.createElement('a');
      a.href = href(p.name);
      a.textContent = p.title;
      a.dataset.preset = p.name;
      a.addEventListener('click', () => { menu.open = false; });
      li.append(a);
      ol.append(li);
    }
    list.append(head, ol);
  }
  menu.append(list);
  // the open menu closes on Escape and on a click elsewhere
  menu.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.open) { menu.open = false; menu.querySelector('summary').focus(); } });
  document.addEventListener('click', (e) => { if (menu.open && !menu.contains(e.target)) menu.open = false; });

  const el = (sel) => panel.querySelector(sel);
  const stage = mountStage(document.getElementById('stage'), panel);
  let mode = {};        // {projector, embed}: where the stage may be used
  let reveal = false;   // bring the evidence into the window at the next settled state
  let versus = null;    // {key, value, label, of (the request compared), r, ctx}: the comparison shown
  el('.lesson-close').addEventListener('click', () => onClose());
  let shown;
  // a clicker's keys step lessons, except where a control of the page takes them (a slider, a picker, a
  // field, a heatmap's cell cursor, a dialog)
  const STEP = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
  const TAKES_KEYS = 'input, select, textarea, canvas, [contenteditable], [role="slider"], [role="listbox"], [role="dialog"], [role="menu"], [role="grid"]';
  document.addEventListener('keydown', (e) => {
    const step = STEP[e.key];
    if (!step || !shown || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (document.activeElement?.closest?.(TAKES_KEYS)) return;
    e.preventDefault();
    location.hash = href(stepPreset(shown, step).name);
  });

  /** Rewrite every lesson link for the reader's modes (the menu, previous, reset, next). */
  function relink() {
    for (const a of list.querySelectorAll('a')) a.href = href(a.dataset.preset);
    for (const cls of ['lesson-prev', 'lesson-reset', 'lesson-next']) { const a = el(`.${cls}`); if (a.dataset.preset) a.href = href(a.dataset.preset); }
  }

  /** Show lesson `name` (or hide the panel for null) and outline what it highlights. */
  function show(name) {
    if (name === shown) return;
    shown = name;
    const p = presetOf(name);
    for (const x of document.querySelectorAll('.hl, .cited')) x.classList.remove('hl', 'cited');
    versus = null;
    for (const a of list.querySelectorAll('a')) {
      if (a.dataset.preset === name) a.setAttribute('aria-current', 'true'); else a.removeAttribute('aria-current');
    }
    panel.hidden = !p;
    stage.arrange(p ? p.highlight : null, mode);
    if (!p) { el('.lesson-evidence').replaceChildren(); return; }
    el('.lesson-num').textContent = `${PRESETS.indexOf(p) + 1} / ${PRESETS.length}`;
    const ch = chapterOf(p.name);
    el('.lesson-chapter-name').textContent = ch ? `chapter ${ch.index + 1} of ${CHAPTERS.length}: ${ch.title}` : '';
    el('.lesson-title').textContent = p.title;
    el('.lesson-caption').textContent = p.caption;
    el('.lesson-source').replaceChildren(...p.sources.flatMap((c, i) => (i ? ['; ', cite(c)] : [cite(c)])));
    const prev = stepPreset(p.name, -1), next = stepPreset(p.name, 1);
    el('.lesson-prev').dataset.preset = prev.name;
    el('.lesson-prev').textContent = `← previous: ${prev.title}`;
    el('.lesson-reset').dataset.preset = p.name;
    el('.lesson-next').dataset.preset = next.name;
    el('.lesson-next').textContent = `next: ${next.title} →`;
    relink();
    // the strip: one item per readout row (and the cost line) the lesson names, outlined in its place
    const strip = el('.lesson-evidence');
    strip.replaceChildren();
    for (const key of p.highlight) {
      const row = READOUT_ROWS.find((r) => r.id === key);
      if (row || key === 'cost') {
        const li = document.createElement('li');
        li.className = 'hl';
        if (row) li.dataset.readout = key; else li.dataset.hl = key;
        const label = document.createElement('span'), value = document.createElement('b'), other = document.createElement('span');
        label.className = 'ev-label'; value.className = 'ev-value'; other.className = 'ev-compare';
        li.append(label, ' ', value, other);
        strip.append(li);
      }
      const sel = row ? `#readout-table [data-readout="${key}"]` : key === 'cost' ? '#cost' : `[data-hl="${key}"]`;
      for (const x of document.querySelectorAll(sel)) x.classList.add(row || key === 'cost' ? 'cited' : 'hl');
    }
    strip.hidden = !strip.children.length;
    draw();
    reveal = true; // once the lesson's state has settled (update), its figures have their sizes
  }

  /** The strip's values: the table's text as it stands (drawn before this panel), and the comparison's. */
  function draw() {
    if (!shown) return;
    for (const li of el('.lesson-evidence').children) {
      const key = li.dataset.readout;
      const [label, , value, other] = li.childNodes;
      let l, v, c = '';
      if (key) {
        const tr = document.querySelector(`#readout-table tr[data-readout="${key}"]`);
        l = tr.querySelector('td.l > span').textContent;
        v = tr.querySelector('td.v').textContent;
        const row = READOUT_ROWS.find((r) => r.id === key);
        if (versus?.r && !row.spectral) c = ` — ${versus.label}: ${row.text(versus.r, versus.ctx)}`;
      } else {
        l = 'cost';
        v = document.getElementById('cost').textContent;
      }
      if (label.textContent !== l) label.textContent = l;
      if (value.textContent !== v) value.textContent = v;
      if (other.textContent !== c) {
        other.textContent = c;
        other.title = c ? `the same readout with ${versus.label}, computed for comparison by the same library` : '';
      }
    }
  }

  /** The lesson's comparison (`compare` in presets.mjs) for the settled state: computed once per state. */
  function update(st) {
    if (reveal) { reveal = false; requestAnimationFrame(() => revealEvidence(dragging)); }
    const p = presetOf(shown);
    const want = p?.compare && !st.mech ? p.compare : null;
    if (!want) { if (versus) { versus = null; draw(); } return; }
    const of = JSON.stringify([st, want]);
    if (versus?.of === of) return;
    versus = { ...want, of, ...(compare(st, want.key, want.value) ?? {}) };
    draw();
  }

  return {
    ...NOTHING, name: 'lessons', show, draw, update, // a Panel (ui/panel.mjs): main.mjs shows the open lesson
    sync(st) {
      const m = st.projector ? '&projector=1' : '';
      if (m !== modes) { modes = m; relink(); }
      if (mode.projector !== !!st.projector || mode.embed !== !!st.embed) {
        mode = { projector: !!st.projector, embed: !!st.embed };
        stage.arrange(presetOf(shown)?.highlight ?? null, mode);
        requestAnimationFrame(() => revealEvidence(dragging));
      }
    },
  };
}

/** One source as the panel shows it: a seed's own title, author, section, the quoted sentence and its gloss; or a paper. */
function cite(c) {
  const span = (cls, text, lang) => { const x = document.createElement('span'); x.className = cls; x.textContent = text; if (lang) x.lang = lang; return x; };
  const out = document.createElement('span');
  out.className = 'cite';
  if (c.seed) {
    const title = span('cite-title', `《${c.title}》`, /[\u4e00-\u9fff]/.test(c.title) ? 'zh' : 'en');
    if (SEEDS[c.seed]?.en) title.title = SEEDS[c.seed].en; // the English title, on hover
    const head = c.link ? Object.assign(document.createElement('a'), { href: c.link, rel: 'noopener', target: '_blank' }) : span('cite-head', '');
    head.append(title, c.author ? span('cite-author', ` ${c.author}`, 'zh') : '');
    out.append(head, ...(c.section ? [', ', span('cite-section', c.section, 'zh')] : []), ': ');
    out.append(Object.assign(span('cite-quote', '', 'zh'), { textContent: `“${plainQuote(c.quote)}”` }), ` — ${c.gloss.replace(/\.$/, '')}`); // sources are joined by "; "
  } else {
    const a = document.createElement(c.arxiv ? 'a' : 'span');
    if (c.arxiv) Object.assign(a, { href: `https://arxiv.org/abs/${c.arxiv}`, rel: 'noopener', target: '_blank' });
    a.textContent = `${c.authors} ${c.year}, “${c.paper}”${c.arxiv ? `, arXiv:${c.arxiv}` : ''}`;
    out.append(a);
  }
  return out;
}
