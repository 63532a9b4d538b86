// sweep.mjs: one readout against one knob of the current variant, over the knob's range, as
// `attnviz sweep` computes it (src/cli/readouts_cmd.c): for each value, the readout's mean, min and max
// over S seeds of the variant's random matrices (Performer's ω, Linformer's E/F, the DWC weights: the
// knob `seed` = the state's feature seed … + S − 1), Q, K, V fixed, spectra by the fast route. The
// pure parts (which knobs, which values, which readouts) and the computation (runSweep, for a lab of
// web/wasm/attnviz.mjs) live here; the page runs the computation in a worker (web/workers/worker.mjs, kind 'sweep')
// and draws it (web/ui/sweep-panel.mjs). docs/page.md: the keys sweep, sweep_y, sweep_seeds.
import { SWEEP_READOUTS, SPECTRAL_KEYS, readoutLabel } from '../wasm/readout-info.mjs';
import { t, tOwn } from '../i18n/i18n.mjs';

/** The readouts a sweep can plot, in the picker's order, and those that need the spectrum (the others read
 * M alone, and are quicker): the registry's (av_readout_info's sweep and kind; web/wasm/readout-info.mjs). */
export { SWEEP_READOUTS };
/** The most seeds a page sweep draws. */
export const MAX_SEEDS = 8;
/** The most values a sweep computes (a log-spaced grid beyond it). */
const MAX_VALUES = 12;
/** Large knobs are capped so a page sweep stays a few seconds (Performer's m, DWC's kernel). */
const CAP = { m: 4096, dwc_k: 31 };

/** The schema entries a sweep can run over for the state's variant: its numeric knobs. */
export function sweepableEntries(schema, st) {
  const knobs = schema.variantRow(st.variant).knobs;
  return schema.SCHEMA.filter((e) => e.knob && knobs.includes(e.knob) && !e.toggleOf && (e.type === 'int' || e.type === 'float') && e.knob !== 'seed' && e.knob !== 'chunk'); // chunk changes no matrix
}

/** Whether the variant draws random matrices from the feature seed (so seeds make a band). */
export function seeded(schema, st) {
  return schema.variantRow(st.variant).knobs.includes('seed');
}

/** Up to `count` distinct integers from lo to hi, spaced evenly on a log scale (both ends included). */
function logInts(lo, hi, count, odd = false) {
  const out = new Set();
  const a = Math.max(1, lo);
  for (let i = 0; i < count; i++) {
    let v = Math.round(a * (hi / a) ** (i / (count - 1)));
    if (odd && v % 2 === 0) v += v + 1 > hi ? -1 : 1;
    out.add(Math.min(hi, Math.max(lo, v)));
  }
  if (lo === 0) out.add(0);
  return [...out].sort((x, y) => x - y);
}

/** The values a sweep of `entry` takes in state `st`: the whole range, or a log-spaced grid of it. */
export function sweepValues(entry, st) {
  const hi = Math.min(typeof entry.max === 'function' ? entry.max(st) : entry.max, CAP[entry.name] ?? Infinity);
  const lo = entry.min;
  if (entry.values) return entry.values.filter((v) => v >= lo && v <= hi).filter((v, i, a) => a.length <= MAX_VALUES || i % Math.ceil(a.length / MAX_VALUES) === 0 || i === a.length - 1);
  if (entry.type === 'float') {
    const steps = Math.round((hi - lo) / (entry.step || 1));
    const n = Math.min(MAX_VALUES, steps + 1);
    return Array.from({ length: n }, (_, i) => +(lo + ((hi - lo) * i) / (n - 1)).toPrecision(6));
  }
  const step = entry.odd ? 2 : 1;
  if ((hi - lo) / step + 1 <= MAX_VALUES) return Array.from({ length: Math.floor((hi - lo) / step) + 1 }, (_, i) => lo + i * step);
  return logInts(lo, hi, MAX_VALUES, !!entry.odd);
}

/**
 * What a sweep of state `st` computes, or null when it is off or cannot run (a reason instead):
 * {knobKey (the registry's), name (the page's), values, readout, seeds, req (the base request)}.
 */
export function sweepPlan(schema, st) {
  if (!st.sweep) return null;
  const entry = sweepableEntries(schema, st).find((e) => e.name === st.sweep);
  if (!entry) return { off: `${schema.variantView(st.variant).label} has no knob "${st.sweep}" to sweep` };
  const seeds = seeded(schema, st) ? Math.min(MAX_SEEDS, Math.max(1, st.sweep_seeds)) : 1;
  const values = sweepValues(entry, st);
  // the values in av_params' terms, as knobsOf gives them (a relative knob, a real 0 as −1)
  const knobValues = values.map((v) => schema.knobsOf({ ...st, [entry.name]: v, ...(entry.toggle ? { [entry.toggle]: true } : {}) })[entry.knob]);
  return { name: entry.name, knobKey: entry.knob, values, knobValues, readout: st.sweep_y, seeds, req: schema.requestOf(st) };
}

/** {mean, min, max} of the defined numbers in xs (null when none is). */
export function aggregate(xs) {
  const ok = xs.filter((x) => typeof x === 'number' && Number.isFinite(x));
  if (!ok.length) return { mean: null, min: null, max: null };
  return { mean: ok.reduce((a, b) => a + b, 0) / ok.length, min: Math.min(...ok), max: Math.max(...ok) };
}

/**
 * Compute a plan on `lab` (web/wasm/lab.mjs, holding the plan's inputs: the caller generated them), one
 * value at a time: onPoint({i, value, mean, min, max, defined, reason}) after each (defined: how many seeds
 * gave a number; reason: the library's sentences, distinct ones joined by "; ", where the mean is null); `cancelled()` is asked between
 * values (and seeds), and a cancelled sweep stops where it is. Returns whether it ran to the end.
 */
export async function runSweep(lab, plan, onPoint, cancelled = () => false, pause = async () => {}) {
  const base = plan.req.knobs;
  const spectral = SPECTRAL_KEYS.includes(plan.readout);
  lab.reference(base); // A depends on the scale and the mask only: once
  for (let i = 0; i < plan.values.length; i++) {
    const xs = [];
    const reasons = new Set();
    for (let s = 0; s < plan.seeds; s++) {
      await pause();
      if (cancelled()) return false;
      const knobs = { ...base, [plan.knobKey]: plan.knobValues[i], ...(plan.seeds > 1 ? { seed: (base.seed ?? 0) + s } : {}) };
      const st = lab.matrix(knobs);
      if (st.status < 0) { reasons.add(st.message); xs.push(null); continue; }
      // one reference for the whole sweep: its share of the readouts is summarised once (the reference()
      // call above drops any older summary)
      const r = lab.readouts(knobs, spectral ? { route: 'fast', reference: false, tau: plan.req.tau, semiseparable: plan.readout === 'semiseparable_rank', summary: 'sweep' }
        : { sv: null, reference: false, tau: plan.req.tau, summary: 'sweep' });
      xs.push(r[plan.readout]);
      if (r[plan.readout] === null) reasons.add(r[`${plan.readout}_reason`]);
    }
    const agg = aggregate(xs);
    const defined = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).length;
    onPoint({ i, value: plan.values[i], ...agg, defined, reason: agg.mean === null ? [...reasons].filter(Boolean).join('; ') || 'the readout is not a finite number' : null });
  }
  return true;
}

/**
 * What window.attnviz.sweep() gives for a plan and its points (docs/inspection.md), with the keys of
 * `attnviz sweep`: per value the mean, min, max, how many seeds gave a number (`defined`), and the
 * reason where the mean is null (`reasons`, null where it is defined).
 */
export function sweepResult(plan, points) {
  const col = (k, none = null) => plan.values.map((_, i) => points[i]?.[k] ?? none);
  return { knob: plan.name, readout: plan.readout, seeds: plan.seeds, values: plan.values.slice(), mean: col('mean'), min: col('min'),
    max: col('max'), defined: col('defined', 0), reasons: plan.values.map((_, i) => (points[i] && points[i].mean === null ? points[i].reason : null)) };
}

/**
 * The points of a sweep with no number, grouped by reason, as one sentence in the page's language
 * ("undefined at decay = 1: <reason>"), '' when none: under the sweep panel and under its exported figure.
 * The reasons are the library's English: `say` puts one in the reader's language (the page's said,
 * web/state/notice.mjs, which this layer may not import: docs/architecture.md).
 */
export function undefinedNote(plan, points, show = String, say = String) {
  const byReason = new Map();
  plan.values.forEach((v, i) => {
    const p = points[i];
    if (!p || p.mean !== null) return;
    const why = p.reason ? say(p.reason) : t('sweep.noReason');
    if (!byReason.has(why)) byReason.set(why, []);
    byReason.get(why).push(show(v));
  });
  return [...byReason].map(([why, at]) => t('sweep.undefinedAt', { knob: plan.name, at: at.join(', '), why })).join(' · ');
}

/**
 * The exported sweep figure (web/io/export.mjs chartSvg's argument): the readout under the panel's label, and
 * under the chart every value without a number and its reason, after the caption, in the page's language (`say`: as undefinedNote's).
 */
export function sweepFigure(plan, points, caption, say = String) {
  const col = (k) => plan.values.map((_, i) => points[i]?.[k] ?? null);
  const label = tOwn(`readout.${plan.readout}`, readoutLabel(plan.readout));
  const logX = plan.values.length > 2 && plan.values[0] > 0 && plan.values.at(-1) / plan.values[0] >= 50;
  const note = undefinedNote(plan, points, String, say);
  const words = { readout: label, knob: plan.name, seeds: plan.seeds };
  return {
    title: t(plan.seeds > 1 ? 'sweep.fig.titleSeeds' : 'sweep.fig.title', words),
    caption: note ? `${caption} · ${note}` : caption, xLabel: plan.name, yLabel: label, logX, logY: false,
    series: [{ label: t('sweep.fig.mean', words), color: '#0072b2', marker: 'circle', x: plan.values, y: col('mean') }],
    band: plan.seeds > 1 ? { x: plan.values, lo: col('min'), hi: col('max'), color: '#0072b2' } : undefined,
  };
}
