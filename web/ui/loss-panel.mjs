// loss-panel.mjs: "what the model loses" (docs/model.md "Swapped attention", docs/page.md): with a real model
// loaded, its heads' softmax swapped for the lab's variant (the variant picker's, with its knobs), for every
// head or head by head (the overview's cells, in a mode), and what that costs: the next-token loss, perplexity,
// KL and top-1 agreement against the original, the KL per position under the tokens, the two greedy
// continuations with the first difference marked, the sensitivity map (on request), and the distillation of
// every chosen head (Hedgehog, LoLCATs) with a progress bar and Cancel. The background worker computes
// (web/compute/loses.mjs; MSG.LOSES, MSG.LOSES_DISTILL); this module asks, draws, and gives snapshot().loses.
import { MSG } from '../workers/protocol.mjs';
import { NOTHING } from './panel.mjs';
import { t, getLang } from '../i18n/i18n.mjs';
import { colorTable } from '../render/colormap.mjs';
import { cellRgb, textOn } from '../render/overview.mjs';
import { variantName } from '../render/variant-name.mjs';
import { headsOf, toggleHead } from '../state/loses.mjs';
import { allHeads, DISTILLABLE } from '../compute/loses.mjs';
import { said } from '../state/notice.mjs';

/** A sensitivity cell's text: 2 decimals (the hover has 4, the snapshot every digit). */
const fmtCell = (x) => (Number.isFinite(x) ? x.toFixed(2).replace(/^-/, '−') : '—');
/** A measure as the panel shows it: 4 decimals (the e2e test holds the CLI's number to these digits). */
export const fmtLoss = (x) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(4).replace(/^-/, '−') : '—');
/** A variant's name for the panel: the lab's label without its own W (the panel says which W it measures with). */
const panelName = (label) => variantName(label).replace(/\s*\(W = I\)/, '');
/** The training text's default: TinyStories-like sentences that are not the evaluated text. */
export const TRAIN_TEXT = 'Tom had a red ball. He liked to throw it high in the sky. One day the ball fell in the pond. Tom was sad, but his mom helped him get it back. They laughed and went home to eat cake.';
const DISTILL_STEPS = 100, DISTILL_LR = 0.05, CONTINUE_STEPS = 32;

function el(tag, attrs = {}, text = '') {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

/**
 * The panel in `box` (index.html's <details id="loses">). ctx: tensors() (the model's capture or null),
 * modelText() (the text the model ran), variantLabel(st), worker(), notice(text), busyChanged(), bos() (the model's BOS id).
 */
/** "layer.head" and "layer" keys of the swapped heads ([[layer, head], …]) and of their layers. */
function chosenSet(swapped) {
  const on = new Set();
  for (const [l, h] of swapped ?? []) { on.add(`${l}.${h}`); on.add(`${l}`); }
  return on;
}

/** The sensitivity as `attnviz linearize` prints it: the swapped heads and the layers that hold one, only. */
function swappedOnly(sens, swapped) {
  const on = chosenSet(swapped);
  return { by_layer: sens.by_layer.filter((x) => on.has(`${x.layer}`)), by_head: sens.by_head.filter((x) => on.has(`${x.layer}.${x.head}`)) };
}

export function mountLossPanel(box, page, ctx) {
  const body = box.querySelector('.ls-body');
  // --- the DOM: scope and path, the measures, the tokens with their KL strip, continuations, sensitivity, distill
  const head = el('div', { class: 'ls-head' });
  const scopeAll = el('input', { type: 'radio', name: 'ls-scope', id: 'ls-scope-all', value: 'all' });
  const scopeHeads = el('input', { type: 'radio', name: 'ls-scope', id: 'ls-scope-heads', value: 'heads' });
  const lAll = el('label', { for: 'ls-scope-all' }), lHeads = el('label', { for: 'ls-scope-heads' });
  const pathPick = el('select', { id: 'ls-path' });
  for (const p of ['matrix', 'recurrent']) pathPick.append(el('option', { value: p }));
  const lPath = el('label', { for: 'ls-path' });
  const what = el('p', { class: 'ls-what note' });
  const pair = (a, b) => { const x = el('span', { class: 'ls-pair' }); x.append(a, b); return x; };
  head.append(el('span', { class: 'ls-scope' }), pair(lPath, pathPick));
  head.firstChild.append(pair(scopeAll, lAll), pair(scopeHeads, lHeads));
  const table = el('table', { class: 'ls-measures' });
  const status = el('p', { class: 'ls-status note', role: 'status', 'aria-live': 'polite' });
  const tokensH = el('h3', { class: 'ls-h' });
  const strip = el('div', { class: 'ls-strip', role: 'group' });
  const stripLegend = el('div', { class: 'ls-legend' });
  const contH = el('h3', { class: 'ls-h' });
  const promptLabel = el('label', { for: 'ls-prompt' });
  const prompt = el('input', { id: 'ls-prompt', type: 'text', spellcheck: 'false' });
  const conts = el('div', { class: 'ls-conts' });
  const sensH = el('h3', { class: 'ls-h' });
  const sensBtn = el('button', { type: 'button', id: 'ls-sens' });
  const sensGrid = el('div', { class: 'ls-sens', role: 'group' });
  const sensLegend = el('div', { class: 'ls-legend' });
  const distH = el('h3', { class: 'ls-h' });
  const trainLabel = el('label', { for: 'ls-train' });
  const train = el('textarea', { id: 'ls-train', rows: '3', spellcheck: 'false' });
  train.value = TRAIN_TEXT;
  const distRow = el('div', { class: 'ls-dist' });
  const stepsLabel = el('label', { for: 'ls-steps' });
  const stepsIn = el('input', { id: 'ls-steps', type: 'number', min: '1', max: '2000', value: String(DISTILL_STEPS) });
  const distBtn = el('button', { type: 'button', id: 'ls-distill' });
  const cancelBtn = el('button', { type: 'button', id: 'ls-cancel', disabled: '' });
  const progress = el('progress', { id: 'ls-progress', max: '1', value: '0' });
  const useW = el('input', { type: 'checkbox', id: 'ls-usew' });
  const useWLabel = el('label', { for: 'ls-usew' });
  distRow.append(stepsLabel, stepsIn, distBtn, cancelBtn, progress);
  const distNote = el('p', { class: 'ls-dist-note note' });
  const useRow = el('div', { class: 'ls-use' });
  useRow.append(useW, useWLabel);
  body.append(head, what, table, status, tokensH, strip, stripLegend, contH, promptLabel, prompt, conts,
    sensH, sensBtn, sensGrid, sensLegend, distH, trainLabel, train, distRow, useRow, distNote);

  // --- the panel's own state: the last answer (kept through a refusal: one sentence beside it), the distillation
  const v = { id: 0, got: 0, key: null, result: null, error: null, sensFor: null };
  const dist = { id: 0, running: false, progress: 0, t: 0, steps: 0, curve: [], result: null, error: null, cancelled: false, variant: null, model: null };
  let st = null, shownLang = null;

  const loaded = () => !!ctx.tensors() && page.st.src === 'model';
  const open = () => !box.hidden && box.open;
  /** The heads the state swaps: every head, or the listed ones within the model. */
  function swapped(s) {
    const tt = ctx.tensors();
    if (!tt) return [];
    return s.ls_scope === 'all' ? allHeads(tt.layers, tt.heads) : headsOf(s.ls_heads, tt.layers, tt.heads);
  }
  /** The knobs swapped in: the lab's (the variant picker's), without the lab's own trained W. */
  function knobs(s) {
    const k = { ...page.requestOf(s).knobs };
    delete k.hedgehog_w;
    return k;
  }
  /** The trained W the measures use: the last distillation's, for its variant, when "use" is ticked. */
  const trainedW = (s) => (dist.result && useW.checked && dist.variant === s.variant && dist.model === ctx.modelId() ? dist.result.W : null);
  /** Another model was loaded: a distillation of the old one's heads (its W, its KLs) is not this model's. */
  function dropForeignDistill() {
    if (dist.model === ctx.modelId() || (!dist.result && !dist.running && !dist.cancelled)) return;
    if (dist.running) ctx.worker().postMessage({ kind: MSG.LOSES_CANCEL });
    Object.assign(dist, { running: false, result: null, cancelled: false, error: null, progress: 0, t: 0, curve: [], variant: null, model: ctx.modelId() });
    dist.id += 1; // its last answer, still in flight, is dropped
    useW.checked = false;
  }

  function words() {
    if (shownLang === getLang()) return;
    shownLang = getLang();
    box.querySelector('summary').textContent = t('loses.summary');
    lAll.textContent = t('loses.scope.all');
    lHeads.textContent = t('loses.scope.heads');
    lPath.textContent = t('loses.path');
    for (const o of pathPick.options) o.textContent = t(`loses.path.${o.value}`);
    tokensH.textContent = t('loses.tokens');
    strip.setAttribute('aria-label', t('loses.tokens'));
    contH.textContent = t('loses.continuations');
    promptLabel.textContent = t('loses.prompt');
    prompt.placeholder = t('loses.promptPlaceholder');
    sensH.textContent = t('loses.sensitivity');
    sensBtn.textContent = t('loses.sensitivityButton');
    sensGrid.setAttribute('aria-label', t('loses.sensitivity'));
    distH.textContent = t('loses.distill');
    trainLabel.textContent = t('loses.train');
    stepsLabel.textContent = t('loses.steps');
    distBtn.textContent = t('loses.distillButton');
    cancelBtn.textContent = t('loses.cancel');
    progress.setAttribute('aria-label', t('loses.progress'));
    useWLabel.textContent = t('loses.useW');
    v.drawn = null; // the words inside the figures too
  }

  // --- asking the worker
  function request(s) {
    const tt = ctx.tensors();
    const heads = swapped(s);
    const W = trainedW(s);
    const base = { tensors: tt.key, text: ctx.modelText(), prompt: prompt.value, knobs: knobs(s), swapped: heads, path: s.ls_path, W: W ? W.map((w) => [w.layer, w.head]) : null, distill: W ? dist.id : null };
    const key = JSON.stringify(base);
    return { key, msg: { text: base.text, prompt: prompt.value, steps: CONTINUE_STEPS, knobs: base.knobs, swapped: heads, path: s.ls_path, W, sensitivity: v.sensFor === key } };
  }
  function ask(s, force = false) {
    if (!loaded() || !open()) return;
    const { key, msg } = request(s);
    if (!force && key === v.key) return;
    if (key !== v.key) v.sensFor = v.sensFor === key ? key : null;
    v.key = key;
    msg.sensitivity = v.sensFor === key;
    if (!swapped(s).length) { v.id += 1; v.got = v.id; v.error = t('loses.noHeads'); drawAll(); return; }
    v.id += 1;
    ctx.worker().postMessage({ kind: MSG.LOSES, id: v.id, ...msg, W: msg.W ? msg.W.map((w) => ({ layer: w.layer, head: w.head, W: w.W })) : null });
    drawStatus();
  }

  function onData(m) {
    if (m.id !== v.id) return;
    v.got = m.id;
    if (m.error) v.error = m.error; // the previous view stays, the sentence beside it
    else { v.error = null; v.result = { ...m, sensitivityFor: m.sensitivity ? v.key : null, variant: st.variant, knobs: knobs(st), swapped: swapped(st), path: st.ls_path, scope: st.ls_scope, usingW: !!trainedW(st) }; }
    if (m.error) ctx.notice(t('loses.error', { error: said(m.error) }));
    drawAll();
    ctx.busyChanged();
  }

  function onProgress(m) {
    if (m.id !== dist.id) return;
    dist.t = m.t; dist.steps = m.steps; dist.curve = m.curve; dist.progress = m.t / m.steps;
    drawDistill();
  }
  function onDistilled(m) {
    if (m.id !== dist.id) return;
    dist.running = false;
    if (m.complete) {
      dist.result = { steps: m.steps, lr: m.lr, train_n: m.train_n, loss_curve: m.loss_curve, heads: m.heads, W: m.W, swapped: m.W.map((w) => [w.layer, w.head]) };
      dist.variant = dist.pending;
      dist.error = null; dist.cancelled = false; dist.progress = 1;
      useW.checked = true;
      ask(st);
    } else {
      // a cancel, or a refusal: the previous distillation (and the view made with it) stays
      dist.cancelled = !!m.cancelled;
      dist.error = m.error ?? null;
      if (m.error) ctx.notice(t('loses.error', { error: said(m.error) }));
      dist.progress = dist.result ? 1 : 0;
    }
    drawDistill();
    ctx.busyChanged();
  }

  function startDistill() {
    const s = page.st;
    if (!DISTILLABLE.includes(s.variant) || (s.variant === 'lolcats' && !page.av.variantNames.includes('lolcats'))) {
      dist.error = t('loses.distillVariant', { variant: panelName(ctx.variantLabel(s)) });
      drawDistill();
      return;
    }
    const steps = Math.round(Number(stepsIn.value));
    if (!(steps >= 1 && steps <= 2000)) { dist.error = t('loses.stepsRange'); drawDistill(); return; }
    dist.id += 1; // a newer distillation cancels the older (the worker sees a newer id)
    Object.assign(dist, { model: ctx.modelId(), running: true, t: 0, steps, curve: [], cancelled: false, error: null, pending: s.variant, progress: 0 });
    ctx.worker().postMessage({ kind: MSG.LOSES_DISTILL, id: dist.id, trainText: train.value, text: ctx.modelText(), steps, lr: DISTILL_LR, knobs: knobs(s), swapped: swapped(s) });
    drawDistill();
  }
  function cancelDistill() {
    if (!dist.running) return;
    ctx.worker().postMessage({ kind: MSG.LOSES_CANCEL });
  }

  // --- drawing
  function drawStatus() {
    const busy = v.id !== v.got;
    const msg = v.error ? v.error : busy ? t('loses.computing') : v.result ? t(v.result.ids?.[0] === ctx.bos?.() ? 'loses.done' : 'loses.doneNoBos', { n: v.result.positions + 1 }) : '';
    status.textContent = msg;
    status.classList.toggle('warn', !!v.error);
    box.setAttribute('aria-busy', String(busy));
  }

  function drawMeasures() {
    const r = v.result;
    const rows = [
      ['loss', r?.measures.loss_original, r?.measures.loss],
      ['perplexity', r?.measures.perplexity_original, r?.measures.perplexity],
      ['kl', null, r?.measures.kl_mean],
      ['top1', null, r?.measures.top1_agreement],
    ];
    table.replaceChildren();
    const hr = el('tr');
    hr.append(el('th', { scope: 'col' }, t('loses.measure')), el('th', { scope: 'col' }, t('loses.original')), el('th', { scope: 'col' }, t('loses.swapped')));
    const thead = el('thead'); thead.append(hr);
    const tbody = el('tbody');
    for (const [key, o, s] of rows) {
      const tr = el('tr', { 'data-measure': key });
      tr.append(el('th', { scope: 'row' }, t(`loses.m.${key}`)), el('td', { 'data-v': 'original' }, o == null ? '' : fmtLoss(o)), el('td', { 'data-v': 'swapped' }, fmtLoss(s)));
      tbody.append(tr);
    }
    table.append(thead, tbody);
    const vl = st ? panelName(ctx.variantLabel(st)) : '';
    const tt = ctx.tensors();
    const count = st ? swapped(st).length : 0;
    what.textContent = st && tt ? t(st.ls_scope === 'all' ? 'loses.whatAll' : 'loses.whatHeads', { variant: vl, count, total: tt.layers * tt.heads }) + (r?.usingW ? ` ${t('loses.withW', { steps: dist.result?.steps ?? 0 })}` : '') : '';
  }

  function drawStrip() {
    const r = v.result;
    strip.replaceChildren();
    stripLegend.replaceChildren();
    if (!r) return;
    const kl = r.per_position.kl, table = colorTable(st.cmap);
    const hi = Math.max(1e-12, ...kl), scale = { lo: 0, hi };
    r.pieces.forEach((piece, i) => {
      const col = el('span', { class: 'ls-tok', 'data-i': String(i) });
      const label = el('span', { class: 'ls-piece' }, piece.replace(/\n/g, '⏎') || ' ');
      const cell = el('span', { class: 'ls-kl' });
      // position t predicts token t + 1: its KL sits under the token it predicts (BOS has none)
      if (i > 0) {
        const x = kl[i - 1], rgb = cellRgb(x, scale, table);
        cell.style.background = `rgb(${rgb.join(',')})`;
        cell.dataset.kl = String(x);
        col.title = t('loses.klHover', { token: piece, kl: fmtLoss(x), pos: i - 1 });
      } else col.title = t('loses.klNone', { token: piece });
      col.setAttribute('aria-label', col.title);
      col.append(label, cell);
      strip.append(col);
    });
    legend(stripLegend, t('loses.klLegend'), 0, hi, table);
  }

  function legend(into, title, lo, hi, table) {
    const stops = Array.from({ length: 11 }, (_, k) => { const i = Math.round((k / 10) * 255); return `rgb(${table[4 * i]},${table[4 * i + 1]},${table[4 * i + 2]})`; });
    const bar = el('span', { class: 'ov-bar' });
    bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
    into.replaceChildren(el('span', { class: 'ls-legend-title' }, title), el('span', {}, fmtLoss(lo)), bar, el('span', {}, fmtLoss(hi)), el('span', { class: 'ov-cmap' }, st.cmap));
    into.setAttribute('role', 'img');
    into.setAttribute('aria-label', t('loses.legend', { title, lo: fmtLoss(lo), hi: fmtLoss(hi), cmap: st.cmap }));
  }

  function drawConts() {
    const r = v.result;
    conts.replaceChildren();
    if (!r) return;
    const c = r.continuation, fd = c.first_difference;
    for (const which of ['original', 'swapped']) {
      const fig = el('div', { class: 'ls-cont', 'data-which': which });
      fig.append(el('div', { class: 'ls-cont-h' }, t(`loses.cont.${which}`)));
      const p = el('p', { class: 'ls-cont-text' });
      const pieces = c[which].pieces;
      pieces.forEach((piece, i) => {
        const s = el(i === fd ? 'mark' : 'span', i === fd ? { class: 'ls-diff', title: t('loses.firstDiff') } : {}, piece);
        p.append(s);
      });
      if (!pieces.length) p.textContent = t('loses.contEmpty');
      fig.append(p);
      conts.append(fig);
    }
    conts.append(el('p', { class: 'note ls-cont-note' }, fd === null ? t('loses.sameCont') : t('loses.diffAt', { i: fd })));
  }
  function drawSens() {
    const r = v.result;
    sensGrid.replaceChildren();
    sensLegend.replaceChildren();
    sensBtn.disabled = !r || !!r.sensitivity || v.id !== v.got;
    if (!r?.sensitivity) return;
    const tt = ctx.tensors(), H = tt.heads, table = colorTable(st.cmap);
    // a head (layer) not swapped is not a measured 0: it is drawn empty and left out of the colour scale
    const on = chosenSet(r.swapped);
    const all = [...r.sensitivity.by_head.filter((x) => on.has(`${x.layer}.${x.head}`)), ...r.sensitivity.by_layer.filter((x) => on.has(`${x.layer}`))]
      .map((x) => x.delta_loss).filter(Number.isFinite);
    const scale = { lo: Math.min(...all), hi: Math.max(...all) };
    sensGrid.style.setProperty('--ls-heads', String(H));
    const corner = el('span', { class: 'ls-sh' }, '');
    sensGrid.append(corner);
    for (let h = 0; h < H; h++) sensGrid.append(el('span', { class: 'ls-sh' }, `H${h}`));
    sensGrid.append(el('span', { class: 'ls-sh ls-layer-h' }, t('loses.layerCol')));
    for (const row of r.sensitivity.by_layer) {
      sensGrid.append(el('span', { class: 'ls-sh' }, `L${row.layer}`));
      for (let h = 0; h < H; h++) sensGrid.append(sensCell(r.sensitivity.by_head[row.layer * H + h], scale, table, t('loses.sensHead', { layer: row.layer, head: h }), '', on.has(`${row.layer}.${h}`)));
      sensGrid.append(sensCell(row, scale, table, t('loses.sensLayer', { layer: row.layer }), 'ls-layer', on.has(`${row.layer}`)));
    }
    legend(sensLegend, t('loses.sensLegend'), scale.lo, scale.hi, table);
  }
  function sensCell(e, scale, table, name, cls = '', swappedHere = true) {
    if (!swappedHere) {
      const c = el('span', { class: `ls-cell ls-kept ${cls}`.trim(), 'data-layer': String(e.layer), ...(e.head !== undefined ? { 'data-head': String(e.head) } : {}) }, '·');
      c.title = t('loses.sensKept', { name });
      c.setAttribute('aria-label', c.title);
      return c;
    }
    const rgb = cellRgb(Number.isFinite(e.delta_loss) ? e.delta_loss : null, scale, table);
    const c = el('span', { class: `ls-cell ${cls}`.trim(), 'data-layer': String(e.layer), ...(e.head !== undefined ? { 'data-head': String(e.head) } : {}) }, fmtCell(e.delta_loss));
    if (rgb) { c.style.background = `rgb(${rgb.join(',')})`; c.style.color = textOn(rgb); }
    c.title = t('loses.sensHover', { name, delta: fmtLoss(e.delta_loss), kl: fmtLoss(e.kl_mean), top1: fmtLoss(e.top1_agreement) });
    c.setAttribute('aria-label', c.title);
    return c;
  }

  function drawDistill() {
    progress.value = dist.progress;
    distBtn.disabled = !v.result && !loaded();
    cancelBtn.disabled = !dist.running;
    useRow.hidden = !dist.result;
    const s = page.st;
    let note = '';
    if (dist.error) note = dist.error;
    else if (dist.running) note = t('loses.distilling', { t: dist.t, steps: dist.steps, loss: fmtLoss(dist.curve.at(-1)) });
    else if (dist.result) {
      const hs = dist.result.heads, mean = (k) => hs.reduce((a, x) => a + (x[k] ?? NaN), 0) / hs.length;
      note = t('loses.distilled', { heads: hs.length, steps: dist.result.steps, variant: panelName(ctx.variantLabel({ ...s, variant: dist.variant })), kl: fmtLoss(mean('heldout_kl')), elu: fmtLoss(mean('heldout_kl_elu')) });
      if (dist.cancelled) note = `${t('loses.cancelled')} ${note}`;
    } else if (dist.cancelled) note = t('loses.cancelled');
    distNote.textContent = note;
    distNote.classList.toggle('warn', !!dist.error);
  }

  function drawAll() { drawStatus(); drawMeasures(); drawStrip(); drawConts(); drawSens(); drawDistill(); }

  // --- events
  for (const r of [scopeAll, scopeHeads]) r.addEventListener('change', () => { if (r.checked) page.onChange('ls_scope', r.value, 'change'); });
  pathPick.addEventListener('change', () => page.onChange('ls_path', pathPick.value, 'change'));
  let promptTimer = 0;
  prompt.addEventListener('input', () => { clearTimeout(promptTimer); v.pendingPrompt = true; ctx.busyChanged(); promptTimer = setTimeout(() => { v.pendingPrompt = false; ask(page.st); }, 250); });
  sensBtn.addEventListener('click', () => { v.sensFor = v.key; ask(page.st, true); });
  distBtn.addEventListener('click', startDistill);
  cancelBtn.addEventListener('click', cancelDistill);
  useW.addEventListener('change', () => ask(page.st));
  box.addEventListener('toggle', () => { if (box.open !== !!page.st.loses) page.onChange('loses', box.open, 'change'); });

  return {
    ...NOTHING,
    name: 'loses',
    routes: { [MSG.LOSES_DATA]: onData, [MSG.LOSES_PROGRESS]: onProgress, [MSG.LOSES_DISTILLED]: onDistilled },
    sync(s) {
      st = s;
      words();
      const on = loaded();
      if (box.hidden === on) box.hidden = !on;
      if (box.open !== !!s.loses) box.open = !!s.loses;
      scopeAll.checked = s.ls_scope === 'all';
      scopeHeads.checked = s.ls_scope === 'heads';
      if (pathPick.value !== s.ls_path) pathPick.value = s.ls_path;
      for (const x of [scopeAll, scopeHeads, pathPick, prompt, sensBtn, distBtn, train, stepsIn]) x.disabled = !!s.lock || (x === sensBtn && (!v.result || !!v.result.sensitivity));
    },
    update(s) {
      st = s;
      words();
      dropForeignDistill();
      ask(s);
      drawAll();
    },
    /** Whether a measure for the current state is on its way (snapshot() waits: docs/inspection.md). */
    busy: () => loaded() && open() && (v.id !== v.got || !!v.pendingPrompt),
    /** Head by head: the overview's cells choose the swapped heads (a click toggles one). */
    picking: () => loaded() && open() && page.st.ls_scope === 'heads',
    /** Whether [layer, head] is swapped (the overview marks it). */
    marked: (layer, head) => loaded() && open() && swapped(page.st).some(([l, h]) => l === layer && h === head),
    toggle(layer, head) { page.onChange('ls_heads', toggleHead(page.st.ls_heads, layer, head), 'change'); },
    /** snapshot().loses (docs/inspection.md): null when the panel is closed or no model is loaded. */
    snapshot() {
      if (!loaded() || !open() || !st) return null;
      const r = v.result;
      const d = dist.result;
      return {
        variant: r?.variant ?? st.variant, knobs: r?.knobs ?? knobs(st), scope: r?.scope ?? st.ls_scope,
        swapped: r?.swapped ?? swapped(st), path: r?.path ?? st.ls_path, using_w: !!r?.usingW,
        positions: r?.positions ?? null,
        ...(r ? r.measures : { loss: null, loss_original: null, perplexity: null, perplexity_original: null, kl_mean: null, top1_agreement: null }),
        per_position: r?.per_position ?? null,
        continuation: r?.continuation ?? null,
        sensitivity: r?.sensitivity ? swappedOnly(r.sensitivity, r.swapped) : null,
        distill: d || dist.running || dist.cancelled ? {
          variant: dist.variant, running: dist.running, cancelled: dist.cancelled, progress: dist.progress, t: dist.running ? dist.t : d?.steps ?? 0,
          steps: d?.steps ?? dist.steps, lr: d?.lr ?? DISTILL_LR, train_n: d?.train_n ?? null,
          loss_curve: d?.loss_curve ?? null, loss_curve_end: d?.loss_curve?.at(-1) ?? null,
          heads: d?.heads ?? null,
        } : null,
        warnings: r?.warnings ?? [],
        error: v.error ?? dist.error ?? null,
      };
    },
  };
}
