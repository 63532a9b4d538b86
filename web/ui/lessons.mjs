// lessons.mjs: the "Lessons" menu in the header and the lesson panel above the controls (the presets of
// web/state/presets.mjs). The menu is a list of plain links (`#preset=NAME`), so a lesson opens by keyboard,
// touch, a middle click into a new tab, or a link pasted anywhere; main.mjs reads the hash. Every lesson
// link carries the reader's presentation mode (projector=1), so changing lessons never switches it off.
// The panel shows the open lesson's place in the course ("3 / 23", from PRESETS' order), title, caption
// and sources (each seed by its own title, section and quoted sentence with an English gloss; each paper
// by authors, year and arXiv id), with "previous", "reset" (the preset's state again), "next" and "close";
// ←/→ and PageUp/PageDown step lessons (presenter clickers) unless a control that takes those keys has
// focus; the readout rows and panels the lesson names are outlined (elements with a matching
// data-readout or data-hl attribute).
import { PRESETS, CHAPTERS, presetOf, stepPreset, chapterOf } from '../state/presets.mjs';
import { NOTHING } from './panel.mjs';
import { plainQuote, SEEDS } from '../state/citations.mjs';

/**
 * Build the menu into `menu` (a <details> with a <summary>) and wire the panel `panel` (index.html's
 * #lesson). `onClose()` is called by the panel's close button. Returns {show(name|null)}.
 */
export function mountLessons(menu, panel, { onClose }) {
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
    for (const x of document.querySelectorAll('.hl')) x.classList.remove('hl');
    for (const a of list.querySelectorAll('a')) {
      if (a.dataset.preset === name) a.setAttribute('aria-current', 'true'); else a.removeAttribute('aria-current');
    }
    panel.hidden = !p;
    if (!p) return;
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
    for (const key of p.highlight) {
      for (const x of document.querySelectorAll(`[data-readout="${key}"], [data-hl="${key}"]`)) x.classList.add('hl');
    }
  }
  return {
    ...NOTHING, name: 'lessons', show, // a Panel (ui/panel.mjs): main.mjs shows the open lesson
    sync(st) { const m = st.projector ? '&projector=1' : ''; if (m !== modes) { modes = m; relink(); } },
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
