// explain-popover.mjs: the explanations (web/state/explain.mjs) one click, tap or key press away. An ⓘ button
// beside the variant's formula and beside each readout's label, and the header's "glossary" button, open
// one shared popover (index.html's #explain, a non-modal dialog) next to the button: the title, the
// formula typeset as MathML, the plain-language text and the source. Escape or × closes it and gives the
// focus back to the button; a click elsewhere closes it; one is open at a time.
import { VARIANT_EXPLAIN, GLOSSARY, CONCEPTS } from '../state/explain.mjs';
import { PRESETS, presetOf } from '../state/presets.mjs';
import { typeset } from '../render/tex.mjs';
import { rowExplain, rowLabel, tolerance } from '../render/readouts.mjs';
import { SEEDS } from '../state/citations.mjs';
import { t, tOwn } from '../i18n/i18n.mjs';

// the seed articles a variant's source names, as its Chinese source writes them (web/i18n/zh/explain.mjs)
const SEED_REFS = {
  survey: `《${SEEDS['000'].title}》`, mech: `《${SEEDS['001'].title}》`,
  inf: `《${SEEDS['003'].title}》（${SEEDS['003'].author} ${SEEDS['003'].year}，${SEEDS['003'].link}）`,
};

/**
 * Wire the popover `box`; its words are the reader's language at the moment it opens (docs/i18n.md).
 * `variantOf()` gives {name, label, tex} of the state's variant; `rowOf(id)` a readout row of
 * web/render/readouts.mjs and `ctxOf()` the readouts' context (its label's tolerance), or nothing. Returns {button(kind, key, what): HTMLButtonElement,
 * glossary(trigger, {projector})}: the glossary's lesson links keep projector mode when it is on.
 */
export function mountExplain(box, { variantOf, rowOf, ctxOf = () => ({}) }) {
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

  // the buttons' names follow the page's language (<html lang>, web/ui/chrome.mjs), and an open popover
  // gives way to the page in its new words
  const buttons = [];
  const nameOf = (kind, key, what) => (kind === 'variant' ? t('explain.variant')
    : tOwn(`readout.${key}`, what, { tol: tolerance(ctxOf().relTol) }));
  const relabel = () => { for (const { b, kind, key, what } of buttons) b.setAttribute('aria-label', t('explain.button', { what: nameOf(kind, key, what) })); };
  new MutationObserver(() => { relabel(); close(); }).observe(document.documentElement, { attributes: true, attributeFilter: ['lang'] });

  /** An ⓘ button: `kind` 'variant' or 'readout' (`key` its row id), `what` its English name. */
  function button(kind, key, what) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'info';
    b.textContent = 'i';
    buttons.push({ b, kind, key, what });
    b.setAttribute('aria-label', t('explain.button', { what: nameOf(kind, key, what) }));
    b.setAttribute('aria-haspopup', 'dialog');
    b.setAttribute('aria-expanded', 'false');
    b.addEventListener('click', (e) => {
      e.stopPropagation();
      if (kind === 'variant') {
        const v = variantOf();
        const x = VARIANT_EXPLAIN[v.name];
        const text = x ? tOwn(`variant.${v.name}.explain`, x.text) : v.hint; // the hint is in the reader's language already
        const source = x ? tOwn(`variant.${v.name}.source`, x.source, SEED_REFS) : (v.source ?? '—');
        open(b, tOwn(`variant.${v.name}`, v.label), [formula(v.tex), para('explain-text', text), para('explain-source', t('explain.source', { source }))]);
      } else {
        const row = rowOf(key), ctx = ctxOf();
        const label = tOwn(`readout.${row.id}`, rowLabel(row, ctx), { tol: tolerance(ctx.relTol) });
        open(b, label, [formula(row.tex), para('explain-text', rowExplain(row)), para('explain-source', t('explain.definition'))]);
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
    out.append(' ', t(ps.length > 1 ? 'explain.glossary.lessons' : 'explain.glossary.lesson')); // its space, if any, is the language's
    ps.forEach((p, i) => {
      const a = document.createElement('a');
      a.href = `#preset=${encodeURIComponent(p.name)}${modes}`;
      a.dataset.preset = p.name;
      a.textContent = String(PRESETS.indexOf(p) + 1);
      const title = tOwn(`preset.${p.name}.title`, p.title); // the lessons' words (web/i18n/zh/lessons.mjs)
      a.title = title;
      a.setAttribute('aria-label', t('explain.glossary.link', { i: PRESETS.indexOf(p) + 1, title }));
      a.addEventListener('click', () => close()); // the lesson opens from the hash; the glossary gives way
      out.append(...(i ? [t('explain.glossary.sep'), a] : [a]));
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
    const symbols = table('glossary-symbols', GLOSSARY.map((g) => [(td) => pending.push(typeset(td, g.tex)), tOwn(`glossary.${g.id}`, g.text), g.lessons ?? []]));
    const concepts = table('glossary-concepts', CONCEPTS.map((c) => [tOwn(`concept.${c.id}`, c.term), tOwn(`concept.${c.id}.text`, c.text), c.lessons]));
    const heading = (text) => { const h = document.createElement('h3'); h.className = 'glossary-head'; h.textContent = text; return h; };
    open(from, t('explain.glossary'), [heading(t('explain.glossary.symbols')), symbols, heading(t('explain.glossary.concepts')), concepts,
      para('explain-source', t('explain.glossary.notation'))]);
  }
  return { button, glossary };
}
