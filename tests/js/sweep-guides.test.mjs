// The sweep chart's reference lines (web/render/sweep-guides.mjs), from their definitions.
import { describe, it, expect } from 'vitest';
import { sweepGuides } from '../../web/render/sweep-guides.mjs';

const pts = (means) => means.map((m) => (m === null ? undefined : { mean: m, min: m * 0.9, max: m * 1.1 }));

describe('sweepGuides', () => {
  it('draws c/√m through the current point of an error against m', () => {
    const values = [1, 4, 16, 64, 256];
    const g = sweepGuides({ name: 'm', readout: 'error_fro_rel', values }, pts([2, 1.2, 0.5, 0.26, 0.12]), 64);
    expect(g.series.map((s) => s.label)).toEqual(['∝ 1/√m']);
    const c = 0.26 * 8; // through (64, 0.26)
    expect(g.series[0].values[3]).toBeCloseTo(0.26, 12);
    expect(g.series[0].values[4]).toBeCloseTo(c / 16, 12);
    expect(g.series[0].values[2]).toBeCloseTo(c / 4, 12);
    // above the highest point (2 × 1.1) it is left out: c/√1 = 2.08 stays, nothing is stretched
    expect(g.series[0].values[0]).toBeCloseTo(c, 12);
    const high = sweepGuides({ name: 'm', readout: 'error_fro_rel', values }, pts([0.5, 0.5, 0.5, 0.5, 0.12]), 256);
    expect(high.series[0].values[0]).toBeNull(); // 0.12·16 = 1.92 > 0.55
    expect(high.series[0].values[4]).toBeCloseTo(0.12, 12);
  });
  it('anchors on the first defined point when the current value has none', () => {
    const g = sweepGuides({ name: 'm', readout: 'output_error_rel', values: [1, 4, 16] }, pts([null, 1, 0.5]), 2);
    expect(g.series[0].values[1]).toBeCloseTo(1, 12);
    expect(g.series[0].values[2]).toBeCloseTo(0.5, 12);
  });
  it('draws rank = s for the rank against s, and the level 1 for a relative error', () => {
    const g = sweepGuides({ name: 's', readout: 'rank', values: [1, 8, 64] }, pts([1, 8, 64]), 8);
    expect(g.series).toEqual([{ label: 'rank = s', values: [1, 8, 64] }]);
    expect(g.hlines).toEqual([]);
    const e = sweepGuides({ name: 'p', readout: 'error_fro_rel', values: [1, 2] }, pts([0.8, 0.7]), 1);
    expect(e.series).toEqual([]);
    expect(e.hlines).toEqual([{ y: 1, label: 'error 1 (M = 0)' }]);
  });
  it('draws nothing for other sweeps or none', () => {
    expect(sweepGuides({ name: 'p', readout: 'rank', values: [1, 2] }, pts([3, 4]), 1)).toEqual({ series: [], hlines: [] });
    expect(sweepGuides(null, [], 1)).toEqual({ series: [], hlines: [] });
    expect(sweepGuides({ off: 'no knob' }, [], 1)).toEqual({ series: [], hlines: [] });
  });
});
