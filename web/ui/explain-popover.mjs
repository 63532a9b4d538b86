// explain-popover.mjs: the explanations (web/state/explain.mjs) one click, tap or key press away. An ⓘ button
// beside the variant's formula and beside each readout's label, and the header's "glossary" button, open
// one shared popover (index.html's #explain, a non-modal dialog) next to the button: the title, the
// formula typeset as MathML, the plain-language text and the source. Escape or × closes it and gives the
// focus back to the button; a click elsewhere closes it; one is open at a time.
import { VARIANT_EXPLAIN, GLOSSARY, CONCEPTS } from '../state/explain.mjs';
import { PRESETS, presetOf } from '../state/presets.mjs';
import { typeset } from '../render/tex.mjs';

/**
 * Wire the popover `box`. `variantOf()` gives {name, label, tex} of the state's variant; `rowOf(id)` a
 * readout row of web/render/readouts.mjs. Returns {button(kind, key, what): HTMLButtonElement,
 * glossary(trigger, {projector})}: the glossary's lesson links keep projector mode when it is on.
 */
export function mountExplain(box, { variantOf, rowOf }) {
  const title = box.querySelector('.explain-title'), body = box.querySelector('.explain-body');
  let trigger = null;

  function close() {
    if (box.hidden) return;
    box.hidden = true;
    trigger?.setAttribute('aria-expanded', 'false');
    trigger?.focus();
    trigger = null;
  }
  box.querySelector('.explain-close').addEventListener('click', close);
  box.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.stopPropagation(); close(); } });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !box.hidden) close(); });
  document.addEventListener('click', (e) => { if (!box.hidden && !box.contains(e.target) && e.target !== trigger) close(); });

  /** Fill and show the popover for `from` (the button), placed beside it within the window. */
  function open(from, heading, parts) {
    if (trigger === from && !box.hidden) { close(); return; }
    trigger?.setAttribute('aria-expanded', 'false');
    trigger = from;
    from.setAttribute('aria-expanded', 'true');
    title.textContent = heading;
    body.replaceChildren(...parts);
    box.hidden = false;
    place();
    box.querySelector('.explain-close').focus();
    // the formulas are typeset a moment later: place the box again once it has its final height
    Promise.all(pending.splice(0)).then(() => { if (trigger === from) place(); });
  }

  /** Beside the button (below it, else above), always inside the window. */
  function place() {
    const r = trigger.getBoundingClientRect(), w = box.offsetWidth, h = box.offsetHeight;
    const left = Math.max(8, Math.min(innerWidth - w - 8, r.left));
    const top = r.bottom + 6 + h <= innerHeight ? r.bottom + 6 : r.top - h - 6;
    box.style.left = `${left}px`; // CSSOM: allowed under the page's CSP
    box.style.top = `${Math.max(8, Math.min(innerHeight - h - 8, top))}px`;
  }
  const pending = [];

  const para = (cls, text) => { const p = document.createElement('p'); p.className = cls; p.textContent = text; return p; };
  const formula = (tex) => { const d = document.createElement('div'); d.className = 'explain-formula'; pending.push(typeset(d, tex)); return d; };

  function button(kind, key, what) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'info';
    b.textContent = 'i';
    b.setAttribute('aria-label', `explain ${what}`);
    b.setAttribute('aria-haspopup', 'dialog');
    b.setAttribute('aria-expanded', 'false');
    b.addEventListener('click', (e) => {
      e.stopPropagation();
      if (kind === 'variant') {
        const v = variantOf();
        const x = VARIANT_EXPLAIN[v.name];
        open(b, v.label, [formula(v.tex), para('explain-text', x?.text ?? v.hint), para('explain-source', `Source: ${x?.source ?? v.source ?? '—'}`)]);
      } else {
        const row = rowOf(key);
        open(b, row.label, [formula(row.tex), para('explain-text', row.explain ?? ''), para('explain-source', 'Definition: docs/readouts.md')]);
      }
    });
    return b;
  }

  /** Links to the lessons that show an entry ("lessons: 4, 17"), each `#preset=NAME`, with the reader's mode. */
  function lessonLinks(names, modes) {
    const out = document.createElement('span');
    out.className = 'glossary-lessons';
    const ps = names.map(presetOf).filter(Boolean).sort((a, b) => PRESETS.indexOf(a) - PRESETS.indexOf(b)); // in the course's order
    if (!ps.length) return out;
    out.append(ps.length > 1 ? ' Lessons: ' : ' Lesson: ');
    ps.forEach((p, i) => {
      const a = document.createElement('a');
      a.href = `#preset=${encodeURIComponent(p.name)}${modes}`;
      a.dataset.preset = p.name;
      a.textContent = String(PRESETS.indexOf(p) + 1);
      a.title = p.title;
      a.setAttribute('aria-label', `lesson ${PRESETS.indexOf(p) + 1}: ${p.title}`);
      a.addEventListener('click', () => close()); // the lesson opens from the hash; the glossary gives way
      out.append(...(i ? [', ', a] : [a]));
    });
    return out;
  }

  function glossary(from, { projector = false } = {}) {
    const modes = projector ? '&projector=1' : '';
    const table = (cls, rows) => {
      const t = document.createElement('table');
      t.className = `glossary ${cls}`;
      for (const [head, text, lessons] of rows) {
        const tr = document.createElement('tr');
        const name = document.createElement('td'), def = document.createElement('td');
        if (typeof head === 'function') head(name); else name.textContent = head;
        def.append(text, lessonLinks(lessons, modes));
        tr.append(name, def);
        t.append(tr);
      }
      return t;
    };
    const symbols = table('glossary-symbols', GLOSSARY.map((g) => [(td) => pending.push(typeset(td, g.tex)), g.text, g.lessons ?? []]));
    const concepts = table('glossary-concepts', CONCEPTS.map((c) => [c.term, c.text, c.lessons]));
    const heading = (text) => { const h = document.createElement('h3'); h.className = 'glossary-head'; h.textContent = text; return h; };
    open(from, 'Glossary', [heading('Symbols'), symbols, heading('Concepts'), concepts,
      para('explain-source', 'Notation: docs/variant-formulas.md; readouts: docs/readouts.md; the numbers link to the lessons that show each')]);
  }
  return { button, glossary };
}
