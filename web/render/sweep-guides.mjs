// sweep-guides.mjs: the reference lines a sweep chart draws beside its points, where a lesson's claim is a
// law the reader compares the points with (docs/lessons.md, "Annotations"). Pure; no DOM. The labels are
// in the page's language (web/i18n/en/lessons.mjs `lessons.guide.*`); ∝ 1/√m is a formula in both.
//   knob m (Performer's random features), a relative error:  c/√m, the Monte Carlo rate, through the point
//                                                            at the knob's current value (else the first),
//                                                            up to the highest point (no stretched axis)
//   knob s (Linformer's projected length), the numerical rank: rank = s, the rank the projection gives
//   a relative error (error_fro_rel, output_error_rel):      the level 1, the error of M = 0
import { t } from '../i18n/i18n.mjs';

const REL_ERRORS = new Set(['error_fro_rel', 'output_error_rel']);

/**
 * The guides of a sweep: {series: [{label, values}], hlines: [{y, label}]}. `plan`: {name (the knob),
 * readout, values (the knob's values)}; `points[i]`: {mean} or undefined; `current`: the knob's value now.
 */
export function sweepGuides(plan, points, current) {
  const series = [], hlines = [];
  if (!plan || plan.off || !plan.values?.length) return { series, hlines };
  const { name, readout, values } = plan;
  if (name === 'm' && REL_ERRORS.has(readout)) {
    const ok = (i) => Number.isFinite(points[i]?.mean) && points[i].mean > 0 && values[i] > 0;
    let at = values.findIndex((x, i) => x === current && ok(i));
    if (at < 0) at = values.findIndex((_, i) => ok(i));
    if (at >= 0) {
      // left out above the highest point, so that the guide never stretches the chart's axis
      const top = Math.max(...points.map((p) => Math.max(p?.max ?? -Infinity, p?.mean ?? -Infinity)));
      const c = points[at].mean * Math.sqrt(values[at]);
      series.push({ label: '∝ 1/√m', values: values.map((m) => (m > 0 && c / Math.sqrt(m) <= top ? c / Math.sqrt(m) : null)) });
    }
  }
  if (name === 's' && readout === 'rank') series.push({ label: t('lessons.guide.rank'), values: values.slice() });
  if (REL_ERRORS.has(readout)) hlines.push({ y: 1, label: t('lessons.guide.error') });
  return { series, hlines };
}
