// state.mjs: the lab's whole state as one plain object, described by one declarative schema that
// round-trips to the URL hash (`#v=1&variant=focused&p=3&…`). No DOM here: pure functions only.
//
// The schema is built once the wasm module is loaded, from its registry (av.registry, web/wasm/attnviz.mjs)
// and the page's presentation (web/state/variants.mjs): buildSchema(registry). The variant list, which knobs a
// variant reads, each knob's type, range, default and step, and the causal rules are the registry's;
// the page adds its inputs (generator, sizes), readout settings and labels. docs/page.md lists the keys.
//
// Every entry: {name, type, default, min, max, step?, values?, options?, optionLabels?, label, group,
//               variants?, when?, stage, knob?}
//   type     'int' | 'float' | 'bool' | 'enum' | 'zoom' (web/state/tokens.mjs's zoomValue) |
//            'keys' (a comma-separated list of control names) |
//            'positions' (a comma-separated list of token positions, web/state/gates.mjs) |
//            'heads' (a comma-separated list of layer.head pairs, web/state/loses.mjs) |
//            'origins' (a comma-separated list of http(s) origins, each serialized; an item that is not
//            one is kept as written: the embed then obeys no one)
//   values   for a slider that steps through a list (n, d, m): the state still accepts any in-range int
//   variants the variants whose knob this is (absent: shown for all)
//   stage    the first pipeline stage a change invalidates (see STAGES); later stages follow
//   max      a number, or a function of the state (bounds the registry gives as n or 2n − 1)
//   knob     the registry knob the entry sets (its key in av_params and in the loader's knobs)
//   notInSnapshot  left out of toHash's complete link, the snapshot's state (lang: the numbers are the same)
//   reader   presentation the reader owns (theme) in the full lab: never in its links (toHash leaves it
//            out, fromHash skips it without a word); an embed's link (embed=…) carries and obeys it, as
//            the host owns the presentation of its post (docs/embedding.md, "Themes")

import { VARIANT_VIEW, KNOB_VIEW, OPENING_VARIANT, variantView } from './variants.mjs';
import { shownView } from './reference-text.mjs';
import { MAX_SEEDS } from '../compute/sweep.mjs';
import { sweepReadouts } from '../wasm/readout-info.mjs';
import { fmtWhole } from './whole.mjs';
import { originOf } from './origin.mjs';
import { OVERVIEW_METRIC_KEYS } from './overview-metrics.mjs';
import { zoomValue } from './tokens.mjs';
import { GATED_CLASS, gateEntries, gateKnobWhen, gateSpecOf, positionsValue } from './gates.mjs';
import { losesEntries, headsValue } from './loses.mjs';
import { enLabel as L, enOptions as optionLabels, LANGS, t, tOwn } from '../i18n/i18n.mjs';

const VERSION = 1;
/** The host= value that obeys no one (not an origin, so messages.mjs's senderAllowed fails closed on it). */
export const NO_ONE = 'none';

const GENERATORS = ['gaussian', 'clustered', 'local', 'lowrank', 'sink'];
const GENERATOR_LABELS = optionLabels('gen', GENERATORS);

/** Pipeline stages, in order: a change at one stage invalidates it and every later one. */
const STAGES = ['inputs', 'reference', 'matrix', 'readouts', 'display'];

const N_VALUES = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096];
const D_VALUES = [4, 8, 16, 24, 32, 48, 64, 96, 128, 256];

/** The generators' keys mean nothing for a model's or the reader's own inputs: their controls hide and
 *  such a link leaves them out; the layer and head pickers are for those inputs only. */
const NOT_SYNTHETIC = (st) => st.src !== 'synthetic';
const SYNTHETIC = (st) => st.src === 'synthetic';
/** The page's own entries around the registry's knobs: its inputs, and the readout and view settings. */
const INPUT_ENTRIES = [
  // where Q, K, V come from: the seeded generators, a real model the reader loads (docs/model.md), or the
  // reader's own .npy or JSON files; the layer and head of 4-D inputs. Written into a link only when not
  // the default (links without them stay as they were); a link with src=model or src=file opens on the
  // generators' inputs until the reader gives the files.
  { name: 'src', type: 'enum', options: ['synthetic', 'model', 'file'], optionLabels: optionLabels('src', ['synthetic', 'model', 'file']), default: 'synthetic', label: L('src'), group: 'input', stage: 'inputs', omitDefault: true },
  { name: 'layer', type: 'int', default: 0, min: 0, max: 1023, label: L('layer'), group: 'input', stage: 'inputs', control: 'number', omitDefault: true, when: NOT_SYNTHETIC },
  { name: 'head', type: 'int', default: 0, min: 0, max: 1023, label: L('head'), group: 'input', stage: 'inputs', control: 'number', omitDefault: true, when: NOT_SYNTHETIC },
  { name: 'gen', type: 'enum', options: GENERATORS, optionLabels: GENERATOR_LABELS, default: 'gaussian', label: L('gen'), group: 'input', stage: 'inputs', omitWhen: NOT_SYNTHETIC, when: SYNTHETIC },
  { name: 'seed', type: 'int', default: 1, min: 0, max: 4294967295, label: L('seed'), group: 'input', stage: 'inputs', control: 'number', omitWhen: NOT_SYNTHETIC, when: SYNTHETIC },
  { name: 'n', type: 'int', default: 256, min: 16, max: 4096, values: N_VALUES, label: L('n'), group: 'input', stage: 'inputs', omitWhen: NOT_SYNTHETIC, when: SYNTHETIC },
  { name: 'd', type: 'int', default: 64, min: 4, max: 256, values: D_VALUES, label: L('d'), group: 'input', stage: 'inputs', omitWhen: NOT_SYNTHETIC, when: SYNTHETIC },
  { name: 'std', type: 'float', default: 1, min: 0.1, max: 4, step: 0.05, label: L('std'), group: 'input', stage: 'inputs', omitWhen: NOT_SYNTHETIC, when: SYNTHETIC },
];
const READOUT_ENTRIES = [
  { name: 'tau', type: 'float', default: 0.1, min: 0.01, max: 1, step: 0.01, label: L('tau'), group: 'readout', stage: 'readouts' },
  { name: 'rtol', type: 'float', default: -3, min: -7, max: -1, step: 0.5, label: L('rtol'), group: 'readout', stage: 'display' },
  { name: 'ds', type: 'enum', options: ['mean', 'max'], default: 'mean', label: L('ds'), group: 'readout', stage: 'readouts' },
  // the heatmaps' sequential colour map (all colour-blind safe; web/render/colormap.mjs); M − A keeps rdbu
  // the heatmaps' zoom: rows r0..r1 and columns c0..c1 of the full matrix ("r0-r1,c0-c1", '' the whole),
  // cut at full resolution (web/state/tokens.mjs); bounded by n where it is cut, as a link may open before its inputs
  { name: 'zoom', type: 'zoom', default: '', label: L('zoom'), group: 'view', stage: 'display', omitDefault: true },
  { name: 'cmap', type: 'enum', options: ['viridis', 'cividis', 'magma', 'gray'], default: 'viridis', label: L('cmap'), group: 'readout', stage: 'display' },
  // the reader's own in the full lab: never written into its links (a shared link must not impose the
  // author's theme); an old link's `theme=` is accepted silently and left aside; the page keeps the reader's
  // choice in localStorage. An embed's link (embed=…) is the host's: it carries theme= and is obeyed
  { name: 'theme', type: 'enum', options: ['auto', 'light', 'dark'], default: 'auto', label: L('theme'), group: 'view', stage: 'display', reader: true },
  // presentation only: large text and heatmaps for a projector (the header's toggle; docs/page.md)
  { name: 'projector', type: 'bool', default: false, label: L('projector'), group: 'view', stage: 'display' },
  // the language of the page's words (docs/i18n.md): in the link, so a shared link opens in it; written
  // only when not English, and never in the snapshot's state (the numbers do not depend on it)
  { name: 'lang', type: 'enum', options: LANGS, default: LANGS[0], label: L('lang'), group: 'view', stage: 'display', omitDefault: true, notInSnapshot: true },
  // the seed article's two figures above the spectra (web/ui/article-figures.mjs; docs/page.md)
  { name: 'figs', type: 'enum', options: ['', 'article'], default: '', label: L('figs'), group: 'view', stage: 'display' },
  // embedding and lesson links (docs/embedding.md): one figure without the page around it, which controls
  // it shows (an embed) or hides (any page), a view the reader cannot change, and the origins besides the
  // parent window whose messages an embed answers
  { name: 'embed', type: 'enum', options: ['', 'heatmap', 'spectrum', 'readouts', 'sweep'], default: '', label: L('embed'), group: 'view', stage: 'display' },
  { name: 'controls', type: 'keys', default: '', label: L('controls'), group: 'view', stage: 'display' },
  { name: 'hide', type: 'keys', default: '', label: L('hide'), group: 'view', stage: 'display' },
  { name: 'lock', type: 'bool', default: false, label: L('lock'), group: 'view', stage: 'display' },
  { name: 'host', type: 'origins', default: '', label: L('host'), group: 'view', stage: 'display' },
  // an embed that tells its host its content's height (web/io/auto-height.mjs): the frame's, not the
  // figure's (the snapshot is the same at any height)
  { name: 'height', type: 'enum', options: ['', 'auto'], default: '', label: L('height'), group: 'view', stage: 'display', omitDefault: true, notInSnapshot: true },
];

/** The keys a `controls=` or `hide=` list may name: the controls the page builds (not the view keys). */
const CONTROL_GROUPS = new Set(['input', 'variant', 'readout']);

/**
 * Knobs no variant lists (the registry lists neither): each applies where the variant's row has the
 * named property, and the reference reads them, so they sit with the inputs and invalidate the reference.
 */
const GLOBAL_KNOBS = { causal: 'causal', scale: 'scaled' };

const TYPES = { real: 'float', int: 'int', bool: 'bool', enum: 'enum' };

/** Upper bound of an entry in this state (entries whose max depends on n). */
export function maxOf(entry, st) {
  return typeof entry.max === 'function' ? entry.max(st) : entry.max;
}

/** Whether a knob is shown for the state's variant. */
export function applies(entry, st) {
  return (!entry.variants || entry.variants.includes(st.variant)) && (!entry.when || entry.when(st));
}

/** Whether `stage` must be recomputed when `first` is the earliest dirty stage. */
export function stageDirty(first, stage) {
  return first !== null && STAGES.indexOf(stage) >= STAGES.indexOf(first);
}

/** A `relative` knob's page value 1 in the knob's units is 1 / this (its default rule's base: 1/√d). */
function relativeDivisor(knob, d) {
  if (knob.def_rule === 'rsqrt_d') return Math.sqrt(d);
  throw new Error(`state: knob ${knob.key} is shown relative to its default, which rule ${knob.def_rule} does not give`);
}

/**
 * The schema entries of one registry knob (two for a knob presented as a toggle plus a slider).
 * `variants`: the variants that read it (null: every variant, for the global knobs).
 */
function knobEntries(knob, variants) {
  const view = Object.hasOwn(KNOB_VIEW, knob.key) ? KNOB_VIEW[knob.key] : {};
  const global = Object.hasOwn(GLOBAL_KNOBS, knob.key);
  const common = {
    group: global ? 'input' : 'variant', stage: global ? 'reference' : 'matrix', knob: knob.key,
    ...(variants ? { variants } : {}),
  };
  const e = {
    name: view.url ?? knob.key, type: TYPES[knob.type], label: view.label ?? knob.key, ...common,
  };
  if (knob.type === 'enum') {
    e.options = knob.options;
    e.default = knob.options[knob.def];
  } else if (knob.type === 'bool') {
    e.default = knob.def !== 0;
    if (knob.minus1_zero) e.minus1Zero = true; // 0 is the variant's default (qk_l2norm): the box off is −1
  } else {
    const hi = knob.hi_rule === 'n' ? (st) => st.n : knob.hi_rule === '2n-1' ? (st) => 2 * st.n - 1 : knob.hi;
    e.min = knob.lo;
    e.max = hi;
    e.step = knob.odd ? 2 : knob.step;
    e.default = knob.def; // def_rule 'min_n': min(n, def), which normalise() gives
    if (knob.odd) e.odd = true;
    if (knob.minus1_zero) e.minus1Zero = true; // a real 0 is −1 in av_params
    if (view.values) e.values = view.values;
    if (view.control) e.control = view.control;
    if (view.redraw) e.redraw = view.redraw;
    if (view.short) e.short = view.short;
  }
  if (view.relative) { // the page's value is a multiple of the default rule's base (scale ×1/√d)
    Object.assign(e, { relative: true, min: view.min, max: view.max, default: 1 });
  }
  if (view.toggle) { // 0 means "off" (not a default): a checkbox, and the value's slider while it is on
    if (global || knob.zero_default || knob.lo !== 0 || (e.type !== 'int' && e.type !== 'float')) {
      throw new Error(`state: knob ${knob.key} is shown as a toggle, but 0 is not its "off"`);
    }
    const toggle = { name: view.toggle.url, type: 'bool', default: knob.def !== 0, label: view.toggle.label, ...common, toggleOf: e.name };
    e.min = knob.odd ? 1 : knob.step;
    e.default = view.start ?? e.min;
    e.toggle = toggle.name;
    e.when = (st) => !!st[toggle.name];
    e.short = view.toggle.short ?? view.toggle.label;
    return [toggle, e];
  }
  if (typeof e.max === 'number' && !(e.max < 1e300)) {
    throw new Error(`state: knob ${knob.key} has no upper bound: web/state/variants.mjs must give the page's range`);
  }
  return [e];
}

/**
 * The schema and every function of the state, for this registry (av.registry of web/wasm/attnviz.mjs).
 * Returns a frozen object: {SCHEMA, BY_NAME, VARIANTS, entryOf, defaults, coerce, normalise, toHash,
 * fromHash, changedKeys, firstDirtyStage, knobsOf, requestOf, causalNote, variantRow, variantView,
 * knobEntry}.
 */
export function buildSchema(registry) {
  const rows = registry.variants;
  const VARIANTS = rows.map((v) => v.name);
  const ROW = new Map(rows.map((v) => [v.name, v]));
  const labels = Object.fromEntries(rows.map((v) => [v.name, variantView(v).label]));
  const readers = (key) => rows.filter((v) => v.knobs.includes(key)).map((v) => v.name);
  const shownAt = (k) => { const i = Object.keys(KNOB_VIEW).indexOf(k.key); return i < 0 ? Infinity : i; };
  const globals = registry.knobs.filter((k) => Object.hasOwn(GLOBAL_KNOBS, k.key)).sort((a, b) => shownAt(a) - shownAt(b));
  const perVariant = registry.knobs.filter((k) => !Object.hasOwn(GLOBAL_KNOBS, k.key) && readers(k.key).length);
  const opening = VARIANTS.includes(OPENING_VARIANT) ? OPENING_VARIANT : VARIANTS[0];

  const variantEntries = perVariant.flatMap((k) => knobEntries(k, readers(k.key)));
  // the gated families' gates (web/state/gates.mjs): their generator and its knobs after the registry's knobs;
  // the constant gate (decay) and β show while the generator reads them
  const GATED = rows.filter((v) => v.class === GATED_CLASS).map((v) => v.name);
  const BETAS = rows.filter((v) => v.class === GATED_CLASS && v.knobs.includes('beta')).map((v) => v.name);
  for (const e of variantEntries) {
    const w = GATED.length ? gateKnobWhen(e.knob, GATED, BETAS) : null;
    if (w) { const own = e.when; e.when = own ? (st) => own(st) && w(st) : w; }
  }
  const GATE_ENTRIES = GATED.length ? gateEntries(GATED, BETAS) : [];
  // a knob whose default some variant sets for itself (retention's decay 1 − 2⁻⁵): the entry's default is the
  // knob's, and defaultFor/withVariant give each variant its own
  for (const e of variantEntries) {
    const own = rows.filter((v) => e.knob && !e.toggleOf && Object.hasOwn(v.defaults ?? {}, e.knob));
    // (a bool's in the state's type: the registry gives qk_l2norm's as 1)
    if (own.length) e.variantDefaults = Object.fromEntries(own.map((v) => [v.name, e.type === 'bool' ? v.defaults[e.knob] !== 0 : v.defaults[e.knob]]));
  }
  // a sweep (web/compute/sweep.mjs): a readout against one numeric knob of the variant, over seeds of its random
  // matrices; view keys: they change no matrix, the sweep panel reads them
  const sweepable = variantEntries.filter((e) => (e.type === 'int' || e.type === 'float') && !e.toggleOf && e.knob !== 'seed' && e.knob !== 'chunk').map((e) => e.name); // chunk changes no matrix
  const sweepY = sweepReadouts(registry.readouts); // av_readout_info's sweep places
  const SWEEP_ENTRIES = [
    { name: 'sweep', type: 'enum', options: ['', ...sweepable], default: '', label: L('sweep'), group: 'view', stage: 'display' },
    { name: 'sweep_y', type: 'enum', options: sweepY, default: sweepY[0], label: L('sweep_y'), group: 'view', stage: 'display' },
    { name: 'sweep_seeds', type: 'int', default: 3, min: 1, max: MAX_SEEDS, label: L('sweep_seeds'), group: 'view', stage: 'display' },
    // the metric the overview of every layer and head colours its cells by (web/ui/overview.mjs): a view key
    { name: 'ov_metric', type: 'enum', options: OVERVIEW_METRIC_KEYS, default: OVERVIEW_METRIC_KEYS[0], label: L('ov_metric'), group: 'view', stage: 'display' },
  ];
  // the mechanism views (web/ui/mechanisms.mjs, docs/mechanisms.md): view keys, they change no matrix
  const MECH_ENTRIES = [
    { name: 'mech', type: 'enum', options: ['', 'stepper', 'scaling', 'recall', 'distill'], default: '', label: L('mech'), group: 'view', stage: 'display' },
    { name: 'step', type: 'int', default: 1, min: 0, max: (s) => s.n, label: L('step'), group: 'view', stage: 'display' },
    { name: 'budget', type: 'enum', options: ['16', '64', '256'], default: '64', label: L('budget'), group: 'view', stage: 'display' },
    { name: 'pairs', type: 'int', default: 256, min: 2, max: 4096, label: L('pairs'), group: 'view', stage: 'display' },
    { name: 'mem_d', type: 'int', default: 64, min: 4, max: 512, label: L('mem_d'), group: 'view', stage: 'display' },
    { name: 'mems', type: 'keys', items: ['linear', 'delta', 'decay', 'elu', 'performer', 'softmax', 'gdn', 'kda', 'fox', 'gates'], default: 'linear,delta,softmax', label: L('mems'), group: 'view', stage: 'display' },
    { name: 'mem_scale', type: 'float', default: 8, min: 0.1, max: 100, step: 0.1, label: L('mem_scale'), group: 'view', stage: 'display' },
    { name: 'steps', type: 'int', default: 300, min: 10, max: 5000, label: L('steps'), group: 'view', stage: 'display' },
    { name: 'lr', type: 'float', default: 0.05, min: 0.001, max: 1, step: 0.001, label: L('lr'), group: 'view', stage: 'display' },
  ];
  const SCHEMA = [
    ...INPUT_ENTRIES,
    ...globals.flatMap((k) => knobEntries(k, null)),
    // a softmax with a decay or a window is a variant, not the reference: its option says so (reference-text.mjs)
    { name: 'variant', type: 'enum', options: VARIANTS, optionLabels: labels, default: opening, label: L('variant'), group: 'variant', stage: 'matrix',
      optionLabelOf: (o, st) => (o === st.variant ? shownView(variantView(ROW.get(o)), ROW.get(o).class === 'exact', knobsOf(st)).label : labels[o]) },
    ...variantEntries,
    ...GATE_ENTRIES,
    ...READOUT_ENTRIES,
    ...SWEEP_ENTRIES,
    ...MECH_ENTRIES,
    ...losesEntries(L), // the panel "what the model loses" (web/ui/loss-panel.mjs)
  ];
  const seen = new Set();
  for (const e of SCHEMA) {
    if (seen.has(e.name)) throw new Error(`state: two schema entries named "${e.name}"`);
    seen.add(e.name);
  }
  /** Schema entries by name. No prototype: `BY_NAME.toString` is undefined, like any name not in SCHEMA. */
  const BY_NAME = Object.freeze(Object.assign(Object.create(null), Object.fromEntries(SCHEMA.map((e) => [e.name, e]))));
  /** The value entry of each registry knob, by knob key (a toggle's slider, not its checkbox). */
  const KNOB_ENTRY = new Map(SCHEMA.filter((e) => e.knob && !e.toggleOf).map((e) => [e.knob, e]));
  const KNOB = new Map(registry.knobs.map((k) => [k.key, k]));

  /** The schema entry named `name` (a user-given string: a link's key), or null. Own entries only. */
  function entryOf(name) {
    return typeof name === 'string' && Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : null;
  }

  /** The state with every default. */
  function defaults() {
    const st = Object.fromEntries(SCHEMA.map((e) => [e.name, e.default]));
    for (const e of SCHEMA) if (e.variantDefaults) st[e.name] = defaultFor(e, st.variant);
    return st;
  }

  /** An entry's default for a variant: the variant's own where its registry row sets one. */
  function defaultFor(e, variant) {
    return e.variantDefaults && Object.hasOwn(e.variantDefaults, variant) ? e.variantDefaults[variant] : e.default;
  }

  /**
   * The state `next` after its variant changed from prev's: a knob still at the old variant's own default
   * takes the new variant's (switching to retention sets γ = 1 − 2⁻⁵; back, γ = 1), one the reader set stays.
   */
  function withVariant(prev, next) {
    if (prev.variant === next.variant) return next;
    const out = { ...next };
    for (const e of SCHEMA) {
      if (e.variantDefaults && prev[e.name] === defaultFor(e, prev.variant)) out[e.name] = defaultFor(e, next.variant);
    }
    return out;
  }

  /**
   * Coerce one raw value (string from the URL, number or bool from a control) to the entry's type,
   * within range. Returns {value, problem}: problem is a sentence when the raw value was bad or clamped.
   */
  function coerce(entry, raw, st) {
    const bad = (key, value, extra = {}) => ({ value: st[entry.name] ?? entry.default, problem: say(key, { name: entry.name, value, ...extra }) });
    if (entry.type === 'bool') {
      if (raw === true || raw === '1' || raw === 'true' || raw === 1) return { value: true, problem: null };
      if (raw === false || raw === '0' || raw === 'false' || raw === 0) return { value: false, problem: null };
      return bad('value.bool', String(raw).slice(0, 40));
    }
    if (entry.type === 'enum') {
      const s = String(raw);
      return entry.options.includes(s) ? { value: s, problem: null } : bad('value.option', s.slice(0, 40), { options: entry.options.filter(Boolean).join(', ') });
    }
    if (entry.type === 'origins') return originsValue(entry, raw);
    if (entry.type === 'zoom') return zoomValue(raw);
    if (entry.type === 'keys') return listValue(entry, raw);
    if (entry.type === 'heads') {
      const { value, bad } = headsValue(raw);
      return { value, problem: bad.length ? say('value.heads', { name: entry.name, items: quoted(bad) }) : null };
    }
    if (entry.type === 'positions') {
      const { value, bad } = positionsValue(raw);
      return { value, problem: bad.length ? say('value.positions', { name: entry.name, items: quoted(bad) }) : null };
    }
    const x = typeof raw === 'number' ? raw : Number(String(raw).trim() === '' ? NaN : raw);
    if (!Number.isFinite(x)) return bad('value.number', String(raw).slice(0, 40));
    let v = entry.type === 'int' ? Math.round(x) : x;
    if (entry.odd && v % 2 === 0) v += 1; // odd kernel sizes
    const lo = entry.min;
    const hi = maxOf(entry, st);
    if (v < lo || v > hi) {
      const c = Math.min(hi, Math.max(lo, v));
      return { value: c, problem: say('value.range', { name: entry.name, value: x, lo, hi, used: c }) };
    }
    return { value: v, problem: null };
  }

  /** The comma-separated items of a list value, trimmed, deduplicated, in the given order (at most 64). */
  const listItems = (raw) => [...new Set(String(raw).split(',').map((x) => x.trim()).filter(Boolean))].slice(0, 64);
  const quoted = (bad) => bad.slice(0, 5).map((x) => `"${x.slice(0, 40)}"`).join(', ');

  /**
   * A list entry's value: the items it takes (control names for 'keys', or entry.items), deduplicated,
   * in the given order; the others are dropped and named in the problem.
   */
  function listValue(entry, raw) {
    const items = listItems(raw);
    const ok = entry.items ? (k) => entry.items.includes(k) : (k) => { const e = entryOf(k); return !!e && CONTROL_GROUPS.has(e.group); };
    const bad = items.filter((x) => !ok(x));
    const key = `value.${entry.items ? 'item' : 'control'}${bad.length > 1 ? 's' : ''}`;
    return { value: items.filter(ok).join(','), problem: bad.length ? say(key, { name: entry.name, items: quoted(bad), options: entry.items?.join(', ') }) : null };
  }

  /**
   * host=: each origin in its serialized form (origin.mjs's originOf, as event.origin has it). An item
   * that is not an origin is kept as written, so that the embed obeys no one (messages.mjs's
   * senderAllowed): dropping it would open the embed to its parent, whatever the author meant.
   */
  function originsValue(entry, raw) {
    const items = listItems(raw).map((x) => originOf(x) ?? x); // not cut: a cut item could become an origin
    // an empty value is the default, the parent (every link the page wrote until 2026-11 ends in host=);
    // a value of separators alone (host=, or host=%20,%20) names nothing: as strict as a bad item
    if (!items.length && String(raw).trim() !== '')
      return { value: NO_ONE, problem: say('value.noOrigin', { name: entry.name }) };
    const bad = items.filter((x) => originOf(x) === null);
    return {
      value: [...new Set(items)].join(','),
      problem: bad.length ? say(bad.length > 1 ? 'value.origins' : 'value.origin', { name: entry.name, items: quoted(bad) }) : null,
    };
  }

  /**
   * Whether the control of `entry` is shown in this state: it applies, and neither hide= nor an embed's
   * controls= leaves it out. A toggle's slider (dwc_k) goes with its checkbox (dwc), or may be named itself.
   */
  function shown(entry, st) {
    if (!applies(entry, st)) return false;
    const names = [entry.name, entry.toggle].filter(Boolean);
    if (st.embed) return names.some((k) => listOf(st.controls).includes(k));
    return !names.some((k) => listOf(st.hide).includes(k));
  }

  /** Bring every dependent bound in line after a change (s, landmarks ≤ n). Returns a new state. */
  function normalise(st) {
    const out = { ...st };
    for (const e of SCHEMA) {
      if (typeof e.max === 'function') {
        const hi = e.max(out);
        if (out[e.name] > hi) out[e.name] = hi;
      }
    }
    return out;
  }

  /** The URL hash for a state: `v=1` first, then every entry in schema order but the reader's own, and
   *  those marked omitDefault when at their default (fromHash restores them: a link is exact), and those
   *  whose omitWhen(state) holds (the generators' keys under src=model). With `complete`, the omitDefault
   *  keys are written at their default too: the snapshot's state names every key (docs/inspection.md). */
  function toHash(st, { complete = false } = {}) {
    const parts = [`v=${VERSION}`];
    for (const e of SCHEMA) {
      // the reader's own, but an embed's link keeps the host's (never in the snapshot: it computes nothing)
      if (e.reader && (!st.embed || complete || st[e.name] === e.default)) continue;
      const v = st[e.name];
      if ((e.omitDefault && v === e.default && !complete) || e.omitWhen?.(st)) continue;
      if (complete && e.notInSnapshot) continue; // the snapshot's state is the same in every language
      const s = e.type === 'bool' ? (v ? '1' : '0') : e.type === 'float' ? String(+Number(v).toPrecision(8)) : String(v);
      const text = encodeURIComponent(s);
      parts.push(`${e.name}=${e.type === 'keys' || e.type === 'origins' || e.type === 'zoom' || e.type === 'positions' || e.type === 'heads' ? text.replace(/%2C/g, ',') : text}`); // readable lists
    }
    return parts.join('&');
  }

  /**
   * Parse a URL hash (with or without '#'). Returns {state, problems}: unknown keys, bad values and
   * versions are reported as sentences and otherwise ignored. Values are data, never markup.
   */
  function fromHash(hash) {
    const problems = [];
    let st = defaults();
    const text = String(hash || '').replace(/^#/, '');
    if (!text) return { state: st, problems };
    const pairs = [];
    for (const part of text.split('&')) {
      if (!part) continue;
      const i = part.indexOf('=');
      let k, v;
      try {
        k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
        v = decodeURIComponent(i < 0 ? '' : part.slice(i + 1));
      } catch {
        problems.push(say('link.escape', { part: part.slice(0, 40) }));
        continue;
      }
      pairs.push([k, v]);
    }
    const ver = pairs.find(([k]) => k === 'v');
    if (ver && ver[1] !== String(VERSION)) problems.push(say('link.version', { given: ver[1].slice(0, 20), version: VERSION }));
    // n first: other bounds (s, landmarks) depend on it
    pairs.sort(([a], [b]) => (b === 'n') - (a === 'n'));
    const unknown = new Set(), given = new Set(), readers = [];
    // a key deciding who is obeyed, given twice, is refused whole: the last-one-wins rule of other keys
    // would let an appended host= loosen (or a stale notice misdescribe) the restriction
    const count = (name) => pairs.filter(([k]) => k === name).length;
    const repeated = new Set(SCHEMA.filter((e) => e.type === 'origins' && count(e.name) > 1).map((e) => e.name));
    for (const name of repeated) {
      problems.push(say('link.repeated', { name, count: count(name) }));
      st = { ...st, [name]: NO_ONE };
      given.add(name);
    }
    for (const [k, v] of pairs) {
      if (k === 'v' || repeated.has(k)) continue;
      const e = entryOf(k);
      if (!e) { unknown.add(k.slice(0, 40)); continue; }
      if (e.reader) { readers.push([e, v]); continue; } // the reader's, unless the link is an embed's (below)
      const { value, problem } = coerce(e, v, st);
      if (problem) problems.push(problem);
      st = { ...st, [e.name]: value };
      given.add(e.name);
    }
    for (const e of SCHEMA) // a knob the link leaves out takes its variant's default
      if (e.variantDefaults && !given.has(e.name)) st = { ...st, [e.name]: defaultFor(e, st.variant) };
    // an embed's link is the host's: it sets the presentation (theme=) too; a full lab's link leaves it to the reader
    if (st.embed) {
      for (const [e, v] of readers) {
        const { value, problem } = coerce(e, v, st);
        if (problem) problems.push(problem);
        st = { ...st, [e.name]: value };
      }
    }
    if (unknown.size) problems.push(unknownSentence([...unknown]));
    return { state: normalise(st), problems: capList(problems) };
  }

  /** Names whose values differ between two states. */
  function changedKeys(a, b) {
    return SCHEMA.filter((e) => a[e.name] !== b[e.name]).map((e) => e.name);
  }

  /** The earliest pipeline stage that a set of changed keys invalidates (or null when none). */
  function firstDirtyStage(keys) {
    let best = STAGES.length;
    for (const k of keys) {
      const e = entryOf(k);
      if (e) best = Math.min(best, STAGES.indexOf(e.stage));
    }
    return best < STAGES.length ? STAGES[best] : null;
  }

  /** The registry's row of the state's variant. */
  function variantRow(name) {
    const v = ROW.get(name);
    if (!v) throw new RangeError(`state: unknown variant "${String(name).slice(0, 40)}"`);
    return v;
  }

  /** The value of one knob's entries in av_params' terms, for this state. */
  function knobValue(e, st) {
    if (e.toggle && !st[e.toggle]) return 0;
    let x = st[e.name];
    if (e.type === 'int' || e.type === 'float') x = Math.min(x, maxOf(e, st));
    if (e.relative) x /= relativeDivisor(KNOB.get(e.knob), st.d);
    if (e.minus1Zero && (x === 0 || x === false)) x = -1; // a real 0 (a checkbox off): 0 is the variant's default
    return x;
  }

  /** The knob of the variant whose nonzero value removes the causal form, when one is set (focused + DWC). */
  function causalBlocker(v, knobs) {
    return v.knobs.find((key) => KNOB.get(key).no_causal && knobs[key] !== 0 && knobs[key] !== false) ?? null;
  }
  /** The knob of the variant whose value needs the causal form, when one is set away from its default (a decay). */
  function causalNeeder(v, knobs) {
    return v.knobs.find((key) => KNOB.get(key).needs_causal && knobs[key] !== KNOB.get(key).def) ?? null;
  }

  /**
   * The knobs object the loader's lab takes (web/wasm/attnviz.mjs) for this state: the variant, the global
   * knobs (causal, scale) and the knobs the variant reads, by registry key, in av_params' terms. The one
   * place the page's state becomes knobs: causal is off where the variant has no causal form or a set
   * knob removes it.
   */
  function knobsOf(st) {
    const v = variantRow(st.variant);
    const knobs = { variant: v.name };
    for (const k of registry.knobs) {
      if (Object.hasOwn(GLOBAL_KNOBS, k.key) || v.knobs.includes(k.key)) knobs[k.key] = knobValue(KNOB_ENTRY.get(k.key), st);
    }
    // a variant that exists only causal, or a knob set that needs the mask (a decay), shows causal; a knob that
    // removes the causal form (DWC) wins over both, and then a decay is not applied (causalNote says so)
    if (v.causal_only || causalNeeder(v, knobs) !== null) knobs.causal = true;
    if (knobs.causal) knobs.causal = v.causal && causalBlocker(v, knobs) === null;
    if (!knobs.causal) for (const key of v.knobs) if (KNOB.get(key).needs_causal) knobs[key] = KNOB.get(key).def;
    return knobs;
  }

  /**
   * What the compute modules (web/compute/engine.mjs, web/workers/worker.mjs) get for this state: the inputs, the knobs
   * and the readout settings, never the state itself.
   */
  function requestOf(st) {
    const knobs = knobsOf(st);
    return {
      inputs: { gen: st.gen, seed: st.seed, n: st.n, d: st.d, std: st.std },
      knobs, tau: st.tau, ds: st.ds, gates: gateSpecOf(st, variantRow(st.variant), knobs),
    };
  }

  /** Whether the causal toggle is honoured for this variant (the page says when it is not). */
  // the notes under the variant are in the page's language (docs/i18n.md): a variant by its name there,
  // a knob by its short English name or, in another language, its control label
  const variantName = (name) => tOwn(`variant.${name}`, labels[name]);
  const knobName = (e) => tOwn(`control.${e.toggle ?? e.name}`, e.short ?? e.label); // a toggle's slider: by its toggle

  function causalNote(st) {
    const v = variantRow(st.variant);
    if (!st.causal) {
      if (v.causal_only) return t('note.onlyCausal', { variant: variantName(v.name) });
      const raw = { ...knobsOf({ ...st, causal: false }) };
      const needer = v.knobs.find((key) => KNOB.get(key).needs_causal && knobValue(KNOB_ENTRY.get(key), st) !== KNOB.get(key).def);
      if (!needer) return null;
      const what = knobName(KNOB_ENTRY.get(needer));
      return raw.causal ? t('note.needsCausal', { what })
        : t('note.needsCausalBlocked', { what, variant: variantName(v.name), blocker: knobName(KNOB_ENTRY.get(causalBlocker(v, raw))) });
    }
    if (!v.causal) return t('note.noCausal', { variant: variantName(v.name) });
    const knobs = knobsOf({ ...st, causal: false });
    const key = causalBlocker(v, knobs);
    return key === null ? null : t('note.noCausalWith', { variant: variantName(v.name), knob: knobName(KNOB_ENTRY.get(key)) });
  }

  /**
   * Said under the variant (docs/recurrent.md): a decay's half-life, and what a softmax with a decay or a
   * window is as a recurrence (no constant-size state, but a key/value cache). Null when none applies.
   */
  function formNote(st) {
    const v = variantRow(st.variant);
    const k = knobsOf(st), notes = [];
    // the decay's half-life, ln ½ / ln γ tokens, wherever a decay applies
    if (k.causal && k.decay < 1) notes.push(t('note.halfLife', { gamma: +k.decay.toPrecision(4), tokens: +(Math.log(0.5) / Math.log(k.decay)).toPrecision(3) }));
    if (v.class !== 'exact') return notes.length ? notes.join(t('note.and')) : null;
    if (k.causal && k.decay < 1) notes.push(t('note.forgetting'));
    if (k.window > 0) notes.push(t('note.window', { window: k.window }));
    return notes.length ? notes.join(t('note.and')) : null;
  }

  return Object.freeze({
    formNote,
    SCHEMA, BY_NAME, VARIANTS, entryOf, defaults, defaultFor, withVariant, coerce, normalise, toHash, fromHash, changedKeys,
    firstDirtyStage, knobsOf, requestOf, causalNote, variantRow, shown,
    /** The label, TeX and hint of a variant (web/state/variants.mjs, or the registry's plain text). */
    variantView: (name) => variantView(variantRow(name)),
    /** The schema entry that sets registry knob `key` (its value, not a toggle's checkbox), or null. */
    knobEntry: (key) => KNOB_ENTRY.get(key) ?? null,
  });
}

/** The items of a list value ('a,b' → ['a', 'b']; '' → []). */
export function listOf(v) { return v ? String(v).split(',') : []; }

/** Whether every variant and knob of the registry has its presentation in web/state/variants.mjs. */
export function missingPresentation(registry) {
  return [
    ...registry.variants.filter((v) => !Object.hasOwn(VARIANT_VIEW, v.name)).map((v) => `variant ${v.name}`),
    ...registry.knobs.filter((k) => !Object.hasOwn(KNOB_VIEW, k.key)).map((k) => `knob ${k.key}`),
  ];
}

// A link is untrusted and may be long: the notice names a handful and counts the rest.
const NAMED_UNKNOWN = 5;
const MAX_PROBLEMS = 8;
const count = fmtWhole; // 12,480

/**
 * A link problem, in English: the link's problems are data (an embed's host reads them: docs/embedding.md);
 * the page's notice shows them in the reader's language (web/state/notice.mjs `said`), from the same template.
 */
const say = (key, params) => t(`notice.x.${key}`, params, LANGS[0]);

function unknownSentence(keys) {
  if (keys.length === 1) return say('link.unknown', { key: keys[0] });
  const named = keys.slice(0, NAMED_UNKNOWN).map((k) => `"${k}"`).join(', ');
  const rest = keys.length - NAMED_UNKNOWN;
  return rest > 0 ? say('link.unknownsMore', { count: count(keys.length), named, rest: count(rest) })
    : say('link.unknowns', { count: count(keys.length), named });
}

function capList(problems) {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const keep = problems.slice(0, MAX_PROBLEMS - 1);
  keep.push(say('link.more', { count: count(problems.length - keep.length) }));
  return keep;
}
