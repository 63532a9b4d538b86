// readout-table.mjs: the readout table, the same for the page and for every <attn-viz> element (what each
// row shows is render/readouts.mjs's). A row's value says its number; an undefined part ('—', the whole
// row or one of its numbers) says why under the label, and the value's hover says why or which bound it is.
import { READOUT_ROWS, rowReason, rowMark, rowLabel, costLine } from '../render/readouts.mjs';
import { rankAtRelative } from '../render/spectrum.mjs';
import { typeset } from '../render/tex.mjs';
import { NOTHING } from './panel.mjs';

/**
 * The readout table as a Panel (ui/panel.mjs): its rows in `tbody` (one <tr data-readout=ID> per READOUT_ROWS
 * entry). `source()`: what to show, {r, ctx, spectrum, stale}: readouts `r` (plain and spectral, merged) for
 * `ctx` (render/readouts.mjs); `spectrum`: whether a spectrum has come (else its rows say '…'); `stale(row)`:
 * whether that row's result is dimmed. `button(row)`: an element placed after the label (the page's
 * explanation button), or none.
 */
export function mountReadoutTable(tbody, { source, button = null }) {
  const rows = new Map();
  for (const row of READOUT_ROWS) {
    const tr = document.createElement('tr');
    tr.dataset.readout = row.id;
    const l = document.createElement('td'); l.className = 'l';
    const name = document.createElement('span'); name.textContent = row.label;
    const why = document.createElement('span'); why.className = 'why';
    if (button) l.append(name, button(row), why); else l.append(name, why);
    const v = document.createElement('td'); v.className = 'v'; v.tabIndex = 0;
    const f = document.createElement('td'); f.className = 'f';
    typeset(f, row.tex);
    tr.append(l, v, f);
    tbody.append(tr);
    rows.set(row.id, tr);
  }
  function draw() {
    const { r, ctx, spectrum, stale = () => false } = source();
    for (const row of READOUT_ROWS) {
      const tr = rows.get(row.id);
      const l = tr.firstChild, v = tr.children[1];
      const label = rowLabel(row, ctx);
      if (l.firstChild.textContent !== label) l.firstChild.textContent = label;
      const text = row.spectral && !spectrum ? '…' : row.text(r, ctx);
      if (v.textContent !== text) v.textContent = text;
      const reason = rowReason(row, r) || rowMark(row, r, ctx); // why it is '—', or why it is a bound
      if (v.title !== reason) v.title = reason;
      // an undefined readout, or an undefined part of one, says why on screen (docs/readouts.md lists the reasons)
      const why = text.includes('—') ? reason : '';
      const w = l.lastChild;
      if (w.textContent !== why) w.textContent = why;
      const dim = stale(row);
      if (tr.classList.contains('stale') !== dim) tr.classList.toggle('stale', dim);
    }
  }
  return { ...NOTHING, name: 'readouts', draw, rows };
}

/**
 * The page's readout panel: the table (#readout-table), the cost line and the spectral rows' state. `page`:
 * main.mjs's context; `button(row)`: the row's explanation button (ui/explain-popover.mjs).
 */
export function mountReadoutsPanel(page, button) {
  const source = () => {
    const { view, st } = page;
    const s = view.spec?.sv ? view.spec : null;
    const dims = page.dims();
    return {
      r: { ...(view.readouts ?? {}), ...(view.spec?.readouts ?? {}) },
      ctx: {
        n: st.n, tau: st.tau, ceiling: dims.ceiling, semiCeiling: dims.semiCeiling, partial: !!s?.partial, relTol: st.rtol,
        relRank: s ? rankAtRelative(s.sv, 10 ** st.rtol, s.floor, s.sigma1Upper ?? null) : null,
      },
      spectrum: !!view.spec,
      stale: (row) => page.lab.staleShown(row.spectral ? 'specStale' : 'readoutsStale'),
    };
  };
  const table = mountReadoutTable(document.querySelector('#readout-table tbody'), { source, button });
  const setText = (id, text) => { const el = document.getElementById(id); if (el.textContent !== text) el.textContent = text; };
  return {
    ...table,
    draw() {
      if (!page.redraw.readouts) return;
      table.draw();
      setText('cost', costLine(page.view.frame?.cost, page.st.n, { softmax: page.view.frame?.softmaxCost, featureDim: page.view.frame?.costFeatureDim, label: page.viewOf(page.st).label }));
      setText('readout-state', page.lab.staleShown('specStale') ? 'spectral readouts updating…' : '');
    },
  };
}
