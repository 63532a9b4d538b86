// overview-metrics.mjs: the metrics a cell of the overview of every layer and head may be coloured by
// (web/render/overview.mjs draws them): here, below render/, because the state's `ov_metric` key takes
// their keys (web/state/state.mjs). Pure data; no DOM.

/**
 * The metrics, by the key the link (`ov_metric`), the CSV's `metric` column and the worker's cells use:
 * the readouts JSON key (docs/readouts.md), except row_entropy, the mean row entropy over its baseline
 * (the readout row "row entropy / uniform", entropy-baseline.mjs; web/compute/engine.mjs headSummary divides).
 */
export const OVERVIEW_METRICS = [
  { key: 'error_fro_rel', label: 'error vs softmax', units: '‖M − A‖F / ‖A‖F, relative (no unit)' },
  { key: 'row_kl_mean', label: 'KL(softmax ‖ variant)', units: 'nats, mean over rows' },
  { key: 'output_error_rel', label: 'output error vs softmax', units: '‖MV − AV‖F / ‖AV‖F, relative (no unit)' },
  { key: 'effective_rank', label: 'effective rank', units: 'exp of the entropy of σᵢ/Σσ (a count)' },
  { key: 'row_entropy', label: 'row entropy / uniform', units: 'mean row entropy divided by that of uniform rows: ln n, or ln(n!)/n with the causal mask (1 = uniform rows)' },
  { key: 'semiseparable_rank', label: 'semiseparable rank', units: 'rank of M[h:n, 0:h], h = ⌊n/2⌋ (a count)' },
];
export const OVERVIEW_METRIC_KEYS = OVERVIEW_METRICS.map((m) => m.key);
