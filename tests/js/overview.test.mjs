// The overview of every layer and head (issue 28): the metric a cell is coloured by, the one scale all
// cells share, each '—' with its reason, the CSV and SVG exports. Pure, no DOM.
import { describe, it, expect } from 'vitest';
import {
  OVERVIEW_METRICS, OVERVIEW_METRIC_KEYS, metricOf, cellValue, overviewRows, overviewScale, overviewCsv, overviewSvg,
  csvField, tokensText, cellLabel, cellRgb, textOn, fmtMetric, undefinedGroups,
} from '../../web/render/overview.mjs';
import { colorTable } from '../../web/render/colormap.mjs';

// the worker's cells for a 2-layer, 3-head capture: one head whose KL is undefined, one that failed
const KL_REASON = 'the matrix is zero where the softmax reference is positive';
function cells() {
  const m = new Map();
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 3; h++) {
      const values = { error_fro_rel: 0.1 * (l * 3 + h + 1), row_kl_mean: 0.5 + l + h, output_error_rel: 0.01, effective_rank: 10 + h,
        row_entropy: 0.8, semiseparable_rank: 4 };
      const reasons = {};
      if (l === 1 && h === 2) { values.row_kl_mean = null; reasons.row_kl_mean = KL_REASON; }
      m.set(`${l}|${h}`, { layer: l, head: h, values, reasons });
    }
  }
  m.set('0|1', { layer: 0, head: 1, error: 'the matrix could not be computed: out of memory' });
  return m;
}

describe('the overview: metrics, scale, reasons', () => {
  it('offers the six metrics of the issue, each with a label and its units', () => {
    expect(OVERVIEW_METRIC_KEYS).toEqual(['error_fro_rel', 'row_kl_mean', 'output_error_rel', 'effective_rank', 'row_entropy', 'semiseparable_rank']);
    for (const m of OVERVIEW_METRICS) { expect(m.label.length).toBeGreaterThan(3); expect(m.units.length).toBeGreaterThan(3); }
    expect(metricOf('nope').key).toBe('error_fro_rel');
  });
  it('gives every cell without a value its reason', () => {
    const rows = overviewRows(cells(), 2, 3, 'row_kl_mean');
    expect(rows.map((r) => [r.layer, r.head])).toEqual([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    for (const r of rows) expect(r.value === null ? r.reason.length > 0 : r.reason === '').toBe(true);
    expect(rows[5]).toEqual({ layer: 1, head: 2, value: null, reason: KL_REASON });
    expect(rows[1].reason).toMatch(/out of memory/);
    expect(cellValue(undefined, 'row_kl_mean').reason).toBe('not computed yet');
    expect(cellValue({ values: { row_kl_mean: NaN }, reasons: {} }, 'row_kl_mean')).toEqual({ value: null, reason: 'the readout is not a finite number' });
    expect([...undefinedGroups(rows)]).toEqual([['the matrix could not be computed: out of memory', ['L0H1']], [KL_REASON, ['L1H2']]]);
    expect(cellLabel(rows[5], metricOf('row_kl_mean'), { text: '“Once” (2 tokens)' })).toBe(`layer 1, head 2: KL(softmax ‖ variant) undefined: ${KL_REASON}; on “Once” (2 tokens)`);
  });
  it('shares one scale over the defined cells: its ends are their least and greatest value', () => {
    const rows = overviewRows(cells(), 2, 3, 'error_fro_rel');
    const s = overviewScale(rows);
    expect(s).toEqual({ lo: 0.1, hi: 0.6000000000000001, count: 5 });
    const t = colorTable('viridis');
    expect(cellRgb(s.lo, s, t)).toEqual([...t.subarray(0, 3)]);
    expect(cellRgb(s.hi, s, t)).toEqual([...t.subarray(1020, 1023)]);
    expect(cellRgb(null, s, t)).toBe(null);
    expect(overviewScale([{ value: null }])).toEqual({ lo: null, hi: null, count: 0 });
    // text on the darkest and lightest viridis colours: white, then black
    expect(textOn([...t.subarray(0, 3)])).toBe('#ffffff');
    expect(textOn([...t.subarray(1020, 1023)])).toBe('#000000');
    expect(fmtMetric(12)).toBe('12');
    expect(fmtMetric(0.123456)).toBe('0.123');
  });
  it('writes three significant digits and keeps their zeros: 0.9996 is "1.00", never an exact-looking "1"', () => {
    expect(fmtMetric(0.9996)).toBe('1.00');
    expect([fmtMetric(0.5), fmtMetric(-0.9996), fmtMetric(1.0001e-4), fmtMetric(123.04), fmtMetric(12345.6)]).toEqual(['0.500', '−1.00', '1.00e-4', '123', '12346']);
  });
  it('says what the row-entropy metric divides by in a sentence without a dangling possessive', () => {
    const u = metricOf('row_entropy').units;
    expect(u).not.toMatch(/'|’/);
    expect(u).toMatch(/ln n/);
    expect(u).toMatch(/ln\(n!\)\/n/);
  });
  it('exports CSV rows layer,head,metric,value,reason with the full-precision value or the reason', () => {
    const rows = overviewRows(cells(), 2, 3, 'row_kl_mean');
    const lines = overviewCsv(rows, 'row_kl_mean').trimEnd().split('\n');
    expect(lines[0]).toBe('layer,head,metric,value,reason');
    expect(lines.length).toBe(7);
    expect(lines[1]).toBe('0,0,row_kl_mean,0.5,');
    expect(lines[2]).toBe('0,1,row_kl_mean,,the matrix could not be computed: out of memory');
    expect(lines[6]).toBe(`1,2,row_kl_mean,,${KL_REASON}`);
    expect(csvField('a, "b"')).toBe('"a, ""b"""');
    const exact = overviewCsv([{ layer: 0, head: 0, value: 1 / 3, reason: '' }], 'error_fro_rel').split('\n')[1];
    expect(Number(exact.split(',')[3])).toBe(1 / 3);
  });
  it('draws the SVG: a tile per head on the shared scale, the legend with min, max, units and colour map, the reasons', () => {
    const rows = overviewRows(cells(), 2, 3, 'row_kl_mean');
    const scale = overviewScale(rows), table = colorTable('cividis');
    const svg = overviewSvg({ rows, layers: 2, heads: 3, scale, table, cmap: 'cividis', metric: metricOf('row_kl_mean'), caption: 'Focused (p = 3) · the text “Once”' });
    expect(svg.match(/<g data-layer=/g).length).toBe(6);
    expect(svg).toMatch(/class="min">0\.500</);
    expect(svg).toMatch(/class="max">2\.50</);
    expect(svg).toContain('cividis');
    expect(svg).toContain('nats, mean over rows');
    const under = [...svg.matchAll(/class="caption">([^<]*)</g)].map((m) => m[1]).join(' ');
    expect(under).toContain(`— ${KL_REASON}: L1H2`);
    expect(svg).toContain(`<title>layer 1, head 2: KL(softmax ‖ variant) undefined: ${KL_REASON}</title>`);
    expect(svg).toContain('url(#ov-none)');
    const lo = [...table.subarray(0, 3)].join(','), hi = [...table.subarray(1020, 1023)].join(',');
    expect(svg).toMatch(new RegExp(`data-layer="0" data-head="0">.*fill="rgb\\(${lo}\\)"`));
    expect(svg).toMatch(new RegExp(`data-layer="1" data-head="1">.*fill="rgb\\(${hi}\\)"`));
    expect(svg).toContain('Focused (p = 3)');
  });
  it('names the text the cells are computed on by its first tokens', () => {
    expect(tokensText(null)).toBe(null);
    expect(tokensText(['<s>', 'Once', ' upon', ' a', ' time'], 3)).toBe('“Once upon a…” (5 tokens)');
    expect(tokensText(['<s>', 'Hi'])).toBe('“Hi” (2 tokens)');
  });
});
