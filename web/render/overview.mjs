// overview.mjs: what the overview of every layer and head (web/ui/overview.mjs) shows, as data: the
// metrics a cell may be coloured by, the one colour scale all cells share, each cell's value or the reason
// it has none, and the exports (CSV and SVG). Pure; no DOM.
import { colorIndex } from './colormap.mjs';
import { OVERVIEW_METRICS, OVERVIEW_METRIC_KEYS } from '../state/overview-metrics.mjs';
import { escapeXml, wrapLines } from './svg-text.mjs';
import { t, tOwn } from '../i18n/i18n.mjs';

export { OVERVIEW_METRICS, OVERVIEW_METRIC_KEYS };

/** The metric named `key` (the first one for an unknown key). */
export function metricOf(key) {
  return OVERVIEW_METRICS.find((m) => m.key === key) ?? OVERVIEW_METRICS[0];
}

/** A metric's name in the page's language: its label is a readout's (the catalogue's `readout.KEY` in Chinese). */
export const metricName = (metric) => tOwn(`readout.${metric.key}`, metric.label);
/** A metric's units in the page's language (the catalogue's `overview.units.KEY`; the English is the data's too). */
export const metricUnits = (metric) => t(`overview.units.${metric.key}`);

/** The two reasons of cellValue, as data (the snapshot carries them in English); the page words them. */
const REASONS = { 'not computed yet': 'overview.reason.notComputed', 'the readout is not a finite number': 'overview.reason.notFinite' };
/** A cell's reason in the page's language: this module's own in the catalogue's words, the library's as given. */
export const reasonText = (reason) => (REASONS[reason] ? t(REASONS[reason]) : reason);

/**
 * One cell's value for a metric, or null with the reason. `cell`: the worker's overview-cell message
 * ({values, reasons} or {error}), or undefined while it is not computed.
 */
export function cellValue(cell, key) {
  if (!cell) return { value: null, reason: 'not computed yet' };
  if (cell.error) return { value: null, reason: cell.error };
  const v = cell.values?.[key];
  if (v === null || v === undefined || !Number.isFinite(v)) {
    return { value: null, reason: cell.reasons?.[key] || 'the readout is not a finite number' };
  }
  return { value: v, reason: '' };
}

/**
 * The rows of the overview for a metric, layer by layer and head by head: {layer, head, value, reason}.
 * `cells`: a Map 'layer|head' → cell.
 */
export function overviewRows(cells, layers, heads, key) {
  const rows = [];
  for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) rows.push({ layer: l, head: h, ...cellValue(cells.get(`${l}|${h}`), key) });
  return rows;
}

/** The one scale every cell shares: the least and greatest finite value ({lo, hi, count}; lo = hi = null when none). */
export function overviewScale(rows) {
  let lo = Infinity, hi = -Infinity, count = 0;
  for (const r of rows) {
    if (r.value === null) continue;
    count++;
    if (r.value < lo) lo = r.value;
    if (r.value > hi) hi = r.value;
  }
  return count ? { lo, hi, count } : { lo: null, hi: null, count: 0 };
}

/**
 * The value as a cell and the legend show it: counts whole, the rest to 3 significant digits with their
 * trailing zeros kept (0.9996 is "1.00": a bare "1" would read as exact); '—' when null.
 */
export function fmtMetric(v) {
  if (v === null) return '—';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  const s = a >= 1e5 || a < 1e-3 ? v.toExponential(2).replace('e+', 'e') : a >= 999.5 ? v.toFixed(0) : v.toPrecision(3);
  return s.replace(/^-/, '−');
}

/** A cell's colour on the shared scale: [r, g, b] from the table, or null when it has no value. */
export function cellRgb(value, scale, table) {
  if (value === null || scale.lo === null) return null;
  const i = colorIndex(value, scale.lo, scale.hi);
  return i < 0 ? null : [table[4 * i], table[4 * i + 1], table[4 * i + 2]];
}

/** Black or white text, whichever reads better on `rgb` (WCAG relative luminance). */
export function textOn(rgb) {
  const lin = (c) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
  const L = 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
  return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#000000' : '#ffffff';
}

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
export function csvField(s) {
  const t = String(s);
  return /[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/**
 * The overview as CSV: `layer,head,metric,value,reason`, one line per head; the value at full precision
 * (the number the readouts report), empty when undefined, and then the reason.
 */
export function overviewCsv(rows, key) {
  const lines = ['layer,head,metric,value,reason'];
  for (const r of rows) lines.push([r.layer, r.head, key, r.value === null ? '' : String(r.value), csvField(r.reason)].join(','));
  return lines.join('\n') + '\n';
}

/**
 * The text the cells are computed on, from the token pieces ('<s>' first, as snapshot().tokens): its first
 * `max` tokens in quotes and the count, e.g. '“Once upon a time, there was…” (52 tokens)'; null without tokens.
 */
export function tokensText(pieces, max = 10) {
  if (!pieces?.length) return null;
  const words = pieces[0] === '<s>' ? pieces.slice(1) : pieces;
  const head = words.slice(0, max).join('').replace(/\s+/g, ' ').trim();
  return t('overview.tokens', { text: `${head}${words.length > max ? '…' : ''}`, count: pieces.length });
}

/** What one cell says to a pointer and to a screen reader. */
export function cellLabel(row, metric, { current = false, text = null } = {}) {
  const words = { layer: row.layer, head: row.head, label: metricName(metric), value: fmtMetric(row.value), reason: reasonText(row.reason) };
  let cell = t(row.value === null ? 'overview.cellUndefined' : 'overview.cell', words);
  if (text) cell = t('overview.cellOn', { cell, text });
  return current ? t('overview.cellShown', { cell }) : cell;
}

/**
 * The overview as an SVG figure: a tile per head (a row per layer) in the colour of its value on the shared
 * scale, the value written in it; a head without a value is hatched with '—' and its reason as the tile's
 * <title> and in a note under the figure; the colour bar with the metric, its units, its min and max and
 * the colour map's name; the caption (variant, knobs, inputs, the text).
 * @param {{rows, layers, heads, scale, table, cmap, metric, caption}} fig table: colorTable(cmap)
 */
export function overviewSvg({ rows, layers, heads, scale, table, cmap, metric, caption }) {
  const tile = Math.max(28, Math.min(56, Math.floor(448 / heads))), left = 40, top = 40;
  const gridW = heads * tile, gridH = layers * tile;
  const w = Math.max(left + gridW + 24, 420);
  const barY = top + gridH + 24, barW = Math.min(256, w - left - 90), barH = 12;
  const out = [];
  out.push(`<text x="${left}" y="18" font-weight="bold">${escapeXml(t('overview.svgTitle', { label: metricName(metric) }))}</text>`);
  for (let h = 0; h < heads; h++) out.push(`<text x="${left + h * tile + tile / 2}" y="${top - 6}" text-anchor="middle" font-size="10">H${h}</text>`);
  for (let l = 0; l < layers; l++) out.push(`<text x="${left - 6}" y="${top + l * tile + tile / 2 + 4}" text-anchor="end" font-size="10">L${l}</text>`);
  out.push('<defs><pattern id="ov-none" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="2"/></pattern></defs>');
  const fs = Math.max(8, Math.min(11, Math.floor(tile / 4.2)));
  for (const r of rows) {
    const x = left + r.head * tile, y = top + r.layer * tile;
    const rgb = cellRgb(r.value, scale, table);
    const fill = rgb ? `rgb(${rgb.join(',')})` : 'url(#ov-none)';
    const ink = rgb ? textOn(rgb) : '#000000';
    out.push(`<g data-layer="${r.layer}" data-head="${r.head}"><title>${escapeXml(cellLabel(r, metric))}</title>`
      + `<rect x="${x}" y="${y}" width="${tile}" height="${tile}" fill="${fill}" stroke="#ffffff" stroke-width="1"/>`
      + `<text x="${x + tile / 2}" y="${y + tile / 2 + fs / 3}" text-anchor="middle" font-size="${fs}" fill="${ink}">${escapeXml(fmtMetric(r.value))}</text></g>`);
  }
  // the colour bar: 256 rects, low on the left
  const step = barW / 256;
  for (let i = 0; i < 256; i++) out.push(`<rect x="${(left + i * step).toFixed(3)}" y="${barY}" width="${(step + 0.05).toFixed(3)}" height="${barH}" fill="rgb(${table[4 * i]},${table[4 * i + 1]},${table[4 * i + 2]})"/>`);
  const lo = scale.lo === null ? '—' : fmtMetric(scale.lo), hi = scale.hi === null ? '—' : fmtMetric(scale.hi);
  out.push(`<text x="${left}" y="${barY + barH + 13}" font-size="10" class="min">${escapeXml(lo)}</text>`,
    `<text x="${left + barW}" y="${barY + barH + 13}" font-size="10" text-anchor="end" class="max">${escapeXml(hi)}</text>`,
    `<text x="${left + barW + 8}" y="${barY + barH - 1}" font-size="10">${escapeXml(cmap)}</text>`,
    `<text x="${left}" y="${barY - 5}" font-size="10">${escapeXml(t('overview.svgScale', { label: metricName(metric), units: metricUnits(metric) }))}</text>`);
  // under the figure: the reasons of the heads without a value, then the caption
  const lines = [];
  for (const [reason, heads] of undefinedGroups(rows)) lines.push(`— ${reasonText(reason)}: ${heads.join(', ')}`);
  lines.push(caption);
  let y = barY + barH + 32;
  const chars = Math.max(40, Math.floor((w - left - 8) / 6.4));
  const spans = [];
  for (const line of lines) {
    for (const part of wrapLines(line, chars)) { spans.push(`<text x="${left}" y="${y}" font-size="11" class="caption">${escapeXml(part)}</text>`); y += 15; }
  }
  const hgt = y + 4;
  return [`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${hgt}" viewBox="0 0 ${w} ${hgt}" font-family="DejaVu Sans, sans-serif, WenQuanYi Micro Hei, Noto Sans CJK SC" font-size="12">`,
    `<rect width="${w}" height="${hgt}" fill="#ffffff"/>`, ...out, ...spans, '</svg>'].join('\n') + '\n';
}

/** The heads without a value, grouped by reason: Map reason → ['L1H3', …]. */
export function undefinedGroups(rows) {
  const groups = new Map();
  for (const r of rows) {
    if (r.value !== null) continue;
    if (!groups.has(r.reason)) groups.set(r.reason, []);
    groups.get(r.reason).push(`L${r.layer}H${r.head}`);
  }
  return groups;
}
