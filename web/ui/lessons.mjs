// lessons.mjs: the "Lessons" menu in the header and the lesson panel above the controls (the presets of
// web/state/presets.mjs). The menu is a list of plain links (`#preset=NAME`), so a lesson opens by keyboard,
// touch, a middle click into a new tab, or a link pasted anywhere; main.mjs reads the hash. The panel
// shows the open lesson's title, caption and source, with "reset" (the preset's state again), "next" and
// "close"; the readout rows and panels the lesson names are outlined (elements with a matching
// data-readout or data-hl attribute).
import { PRESETS, presetOf, nextPreset } from '../state/presets.mjs';
import { NOTHING } from './panel.mjs';

/**
 * Build the menu into `menu` (a <details> with a <summary>) and wire the panel `panel` (index.html's
 * #lesson). `onClose()` is called by the panel's close button. Returns {show(name|null)}.
 */
export function mountLessons(menu, panel, { onClose }) {
  const list = document.createElement('ol');
  list.className = 'lesson-list';
  for (const p of PRESETS) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `#preset=${encodeURIComponent(p.name)}`;
    a.textContent = p.title;
    a.dataset.preset = p.name;
    a.addEventListener('click', () => { menu.open = false; });
    li.append(a);
    list.append(li);
  }
  menu.append(list);
  // the open menu closes on Escape and on a click elsewhere
  menu.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.open) { menu.open = false; menu.querySelector('summary').focus(); } });
  document.addEventListener('click', (e) => { if (menu.open && !menu.contains(e.target)) menu.open = false; });

  const el = (sel) => panel.querySelector(sel);
  el('.lesson-close').addEventListener('click', () => onClose());
  let shown;

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
    el('.lesson-title').textContent = p.title;
    el('.lesson-caption').textContent = p.caption;
    el('.lesson-source').textContent = p.source;
    el('.lesson-reset').href = `#preset=${encodeURIComponent(p.name)}`;
    const next = nextPreset(p.name);
    el('.lesson-next').href = `#preset=${encodeURIComponent(next.name)}`;
    el('.lesson-next').textContent = `next: ${next.title} →`;
    for (const key of p.highlight) {
      for (const x of document.querySelectorAll(`[data-readout="${key}"], [data-hl="${key}"]`)) x.classList.add('hl');
    }
  }
  return { ...NOTHING, name: 'lessons', show }; // a Panel (ui/panel.mjs): main.mjs shows the open lesson
}
