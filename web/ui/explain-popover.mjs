// explain-popover.mjs: the explanations (web/state/explain.mjs) one click, tap or key press away. An ⓘ button
// beside the variant's formula and beside each readout's label, and the header's "glossary" button, open
// one shared popover (index.html's #explain, a non-modal dialog) next to the button: the title, the
// formula typeset as MathML, the plain-language text and the source. Escape or × closes it and gives the
// focus back to the button; a click elsewhere closes it; one is open at a time.
import { VARIANT_EXPLAIN, GLOSSARY } from '../state/explain.mjs';
import { typeset } from '../render/tex.mjs';

/**
 * Wire the popover `box`. `variantOf()` gives {name, label, tex} of the state's variant; `rowOf(id)` a
 * readout row of web/render/readouts.mjs. Returns {button(kind, key, what): HTMLButtonElement, glossary(trigger)}.
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

  function glossary(from) {
    const table = document.createElement('table');
    table.className = 'glossary';
    for (const g of GLOSSARY) {
      const tr = document.createElement('tr');
      const sym = document.createElement('td'), text = document.createElement('td');
      pending.push(typeset(sym, g.tex));
      text.textContent = g.text;
      tr.append(sym, text);
      table.append(tr);
    }
    open(from, 'Glossary', [table, para('explain-source', 'Notation: docs/variant-formulas.md; readouts: docs/readouts.md')]);
  }
  return { button, glossary };
}
