// readouts.mjs: what the readout panel says, as data. Each row has a plain-words label, a one-line
// formula (TeX, typeset by KaTeX once at start-up) and a function from the readouts object (the JSON
// names of docs/readouts.md, as web/wasm/attnviz.mjs returns them) to the text shown. Pure; no DOM.
import { fmt, fmtPct, fmtCount, fmtBytes, fmtRatio } from './format.mjs';
import { UNIFORM_NAME } from '../compute/entropy-baseline.mjs';
import { whenReadoutInfo } from '../wasm/readout-info.mjs';
import { t, tOwn } from '../i18n/i18n.mjs';
import { said } from '../state/notice.mjs';
import { variantName } from './variant-name.mjs';

const val = (r, k, f = fmt) => (r[k] === null || r[k] === undefined ? '—' : `${markSign(r, k)}${f(r[k])}`);
/** What precedes a marked number on screen: ≥ a lower bound, ≤ an upper bound, ≈ an estimate (docs/readouts.md). */
const SIGN = { lower: '≥ ', upper: '≤ ' };
function markSign(r, k) {
  if (r[`${k}_bound`]) return SIGN[r[`${k}_bound`]] ?? '';
  return r[`${k}_method`] ? '≈ ' : '';
}

/**
 * The presentation of the readout panel's rows (which rows exist, their order and flags are the
 * registry's: READOUT_ROWS below). ctx: {n, relRank, relTol, partial, ceiling}: the rank at the slider's
 * relative tolerance (computed on the page from σ), and whether σ holds only the top k (that rank is then
 * a lower bound). A readout that is a bound or an estimate shows its mark (≥, ≤, ≈) from the readouts'
 * own `<key>_bound` / `<key>_method`, so the screen and the snapshot say the same.
 */
const PRESENTATION = [
  {
    id: 'rank', label: 'numerical rank',
    tex: String.raw`\#\{\sigma_i > \sigma_1 n\,\varepsilon_{32}\}`,
    text: (r, c) => r.rank == null ? '—' : `${markSign(r, 'rank')}${r.rank} / ${c.n}`,
    keys: ['rank'],
  },
  {
    id: 'semiseparable_rank', label: 'semiseparable rank',
    tex: String.raw`\operatorname{rank} M_{[h:n,\ 0:h]},\ h = \lfloor n/2 \rfloor`,
    text: (r, c) => r.semiseparable_rank == null ? '—' : `${r.semiseparable_rank}${c.semiCeiling == null ? '' : ` (≤ ${c.semiCeiling})`}`,
    keys: ['semiseparable_rank'],
  },
  {
    id: 'rank_rel', label: 'rank above 10ᵗ·σ₁',
    labelFor: (c) => `rank above ${tolerance(c.relTol)}·σ₁`,
    tex: String.raw`\#\{\sigma_i > 10^{t}\,\sigma_1\}`,
    text: (r, c) => c.relRank == null ? '—' : `${c.partial ? '≥ ' : ''}${c.relRank}`,
    keys: [], mark: (r, c) => (c.partial && c.relRank != null ? 'lower' : null), // counted as rank is (web/ui/readout-table.mjs)
    reasonKeys: ['rank_rel_1e-3'], // no σ: its '—' has the reason of the spectrum's other ranks
    explain: 'How many singular values exceed 10ᵗ·σ₁ for the tolerance slider\'s t: a coarser rank that ignores tiny directions.',
  },
  {
    id: 'effective_rank', label: 'effective rank',
    tex: String.raw`e^{-\sum p_i \ln p_i},\ p_i = \sigma_i/\textstyle\sum\sigma`,
    text: (r) => val(r, 'effective_rank'), keys: ['effective_rank'],
  },
  {
    id: 'stable_rank', label: 'stable rank',
    tex: String.raw`\|M\|_F^2 / \sigma_1^2`,
    text: (r) => val(r, 'stable_rank'), keys: ['stable_rank'],
  },
  {
    id: 'rank_energy_99', label: 'rank for 99% energy',
    tex: String.raw`\min r:\ \textstyle\sum_{i\le r}\sigma_i^2 \ge 0.99\sum\sigma_i^2`,
    text: (r) => val(r, 'rank_energy_99', String), keys: ['rank_energy_99'],
  },
  {
    id: 'sparsity_tau', label: 'weights below τ/n',
    tex: String.raw`\tfrac{1}{\#}\#\{M_{ij} < \tau / n_i\}`,
    text: (r) => val(r, 'sparsity_tau', fmtPct), keys: ['sparsity_tau'],
  },
  {
    id: 'sparsity_lt_0.01', label: 'weights below 0.01',
    tex: String.raw`\tfrac{1}{n^2}\#\{M_{ij} < 0.01\}`,
    text: (r) => val(r, 'sparsity_lt_0.01', fmtPct), keys: ['sparsity_lt_0.01'],
  },
  {
    id: 'keys_for_90', label: 'keys for 90% of a row',
    tex: String.raw`\operatorname{mean}_i \min\{k: \textstyle\sum_{\text{top } k} \hat M_{ij} \ge 0.9\}`,
    text: (r) => val(r, 'keys_for_90'), keys: ['keys_for_90'],
  },
  {
    // against the one baseline every view names (entropy-baseline.mjs): the library's row_entropy_uniform
    id: 'row_entropy', label: `row entropy / ${UNIFORM_NAME}`,
    tex: String.raw`-\textstyle\sum_j \hat M_{ij}\ln \hat M_{ij}\ \text{vs}\ \tfrac1n\textstyle\sum_i \ln m_i`,
    text: (r) => `${val(r, 'row_entropy_mean')} / ${val(r, 'row_entropy_uniform')}`,
    keys: ['row_entropy_mean', 'row_entropy_uniform'],
    explain: 'The mean entropy of the rows (each normalised to sum 1), against uniform: the mean entropy of uniform rows, ln n, or ln(n!)/n under the causal mask, where row i sees only i + 1 keys. Low means focused. Undefined when a row has a negative weight or sums to zero.',
  },
  {
    id: 'row_sum_dev_max', label: 'largest |row sum − 1|',
    tex: String.raw`\max_i \bigl|\textstyle\sum_j M_{ij} - 1\bigr|`,
    text: (r) => val(r, 'row_sum_dev_max', (x) => (x === 0 ? '0' : x.toExponential(1))), keys: ['row_sum_dev_max'],
  },
  {
    id: 'error_fro_rel', label: 'error vs softmax',
    tex: String.raw`\|M - A\|_F / \|A\|_F`,
    text: (r) => val(r, 'error_fro_rel'), keys: ['error_fro_rel'],
  },
  {
    id: 'row_kl_mean', label: 'KL(softmax ‖ variant)',
    tex: String.raw`\tfrac1n \textstyle\sum_i \sum_j A_{ij} \ln (A_{ij}/M_{ij})`,
    text: (r) => val(r, 'row_kl_mean'), keys: ['row_kl_mean'],
  },
  {
    id: 'output_error_rel', label: 'output error',
    tex: String.raw`\|MV - AV\|_F / \|AV\|_F`,
    text: (r) => val(r, 'output_error_rel'), keys: ['output_error_rel'],
  },
];

/**
 * Rows of the readout panel, from the registry (av_readout_info, web/wasm/readout-info.mjs) once the first module
 * is loaded: one per readout with a place in the page's table (`display`), in that order; `spectral` when
 * a key it shows needs the spectrum (it then waits for the worker). A row of PRESENTATION shows its keys
 * (and reasonKeys); a readout it does not cover gets a plain row: the registry's label, its number.
 * Each row's `explain` (the info button's text) is its one key's registry explanation, or its own where it
 * shows several keys or none (rank_rel, row_entropy).
 */
export const READOUT_ROWS = [];
whenReadoutInfo((info) => {
  const place = (k) => info.find((x) => x.key === k)?.display || 0;
  const covers = (row) => [...row.keys, ...(row.reasonKeys ?? [])];
  const rows = PRESENTATION.filter((row) => covers(row).some(place));
  for (const r of info) {
    if (r.display && !rows.some((row) => covers(row).includes(r.key))) rows.push(plainRow(r));
  }
  const first = (row) => Math.min(...covers(row).map(place).filter(Boolean));
  rows.sort((a, b) => first(a) - first(b));
  for (const row of rows) {
    row.spectral = covers(row).some((k) => info.find((x) => x.key === k)?.kind === 'spectral');
    row.explain ??= row.keys.length === 1 ? info.find((x) => x.key === row.keys[0]).explain : undefined;
  }
  READOUT_ROWS.push(...rows);
  Object.freeze(READOUT_ROWS);
});

const FORMAT = { integer: String, fraction: fmtPct, real: fmt };
/** The row of a readout with no presentation of its own: its registry label, its number by its format. */
function plainRow(r) {
  return {
    id: r.key, label: r.label, tex: String.raw`\text{${r.label.replace(/[\\{}$&#^_%~]/g, ' ')}}`,
    text: (x) => val(x, r.key, FORMAT[r.format] ?? fmt), keys: [r.key],
  };
}

const SUPERSCRIPT = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
/** 10^t in plain text: 10⁻³ for whole t, else a mantissa (10^−2.5 → 3.2·10⁻³). */
export function tolerance(t) {
  if (t == null || !Number.isFinite(t)) return '10ᵗ';
  const e = Math.floor(t), mant = 10 ** (t - e);
  const pow = `10${String(e).split('').map((ch) => SUPERSCRIPT[ch]).join('')}`;
  return Math.abs(mant - 1) < 1e-9 ? pow : `${fmt(mant, 2)}·${pow}`;
}

/** The label a row shows for this context (most are fixed). */
export function rowLabel(row, ctx) { return row.labelFor ? row.labelFor(ctx) : row.label; }

/** Why a row's number is not the exact value (a bound or an estimate, from its keys' marks), for its hover; or ''. */
export function rowMark(row, r, ctx = {}) {
  const own = row.mark?.(r, ctx);
  if (own) return markText(own);
  for (const k of row.keys) {
    if (r[k] === null || r[k] === undefined) continue;
    if (r[`${k}_bound`]) return markText(r[`${k}_bound`]);
    if (r[`${k}_method`]) return t('explain.mark.estimate', { method: r[`${k}_method`] });
  }
  return '';
}
// the marking words are the reader's: a bound is 'lower' or 'upper' in the snapshot, words only on screen
const markText = (bound) => (bound === 'lower' || bound === 'upper' ? t(`explain.mark.${bound}`) : '');

/**
 * The reason a row shows '—' (the first `<key>_reason` among its keys, or its reasonKeys), or '': in the
 * reader's language (the readouts carry it in English, as the snapshot does: web/state/notice.mjs `said`).
 */
export function rowReason(row, r) {
  for (const k of row.reasonKeys ?? row.keys) if (r[`${k}_reason`]) return said(r[`${k}_reason`]);
  return '';
}

/** A row's explanation (its info button's text) in the reader's language; rows are keyed by readout. */
export const rowExplain = (row) => tOwn(`readout.${row.id}.explain`, row.explain ?? '');

/**
 * The one-line cost readout, with one meaning on every variant: the variant's own linear path against
 * softmax's quadratic path (the cost linear attention is meant to avoid), never the variant's own n² path
 * (which for Performer or Hedgehog costs far more than softmax). `softmax` is softmax's cost counts for the
 * same n, d, dv; `label` the variant's name as the page shows it; `featureDim` the feature dimension when
 * the cost model left the linear path uncounted (above its limit). "about the same cost" where the ratio
 * rounds to 1.
 */
export function costLine(cost, n, { softmax = null, label = null, featureDim = null } = {}) {
  // every word in the page's language (web/i18n/*/charts.mjs, cost.*); the numbers as English writes them
  if (!cost || !softmax || softmax.quad_madds == null) return t('cost.none');
  label = label === null ? t('cost.theVariant') : variantName(label);
  const quad = t('cost.quad', { madds: fmtCount(softmax.quad_madds), bytes: fmtBytes(softmax.quad_bytes) });
  if (cost.linear_madds == null) {
    // uncounted is not absent: a feature dimension above the counting limit is a linear path far dearer than softmax's
    if (featureDim != null) return t(featureDim > n ? 'cost.uncountedDearer' : 'cost.uncounted', { n, quad, label, r: fmtCount(featureDim) });
    return t('cost.noLinear', { n, quad, label });
  }
  const ratio = softmax.quad_madds / cost.linear_madds;
  const times = fmtRatio(ratio >= 1 ? ratio : 1 / ratio);
  const verdict = !Number.isFinite(ratio) || ratio <= 0 ? t('cost.noRatio') : times === '1' ? t('cost.same')
    : t(ratio > 1 ? 'cost.cheaper' : 'cost.dearer', { times });
  return t('cost.line', { n, label, madds: fmtCount(cost.linear_madds), bytes: fmtBytes(cost.linear_bytes), quad, verdict });
}
