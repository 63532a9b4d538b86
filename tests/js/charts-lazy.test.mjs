// charts-lazy.test.mjs: uPlot comes on first need (web/render/charts.mjs, docs/performance.md "A cold load").
// Its own file: the module's loaded state is per file, and here it starts unloaded.
import { describe, it, expect } from 'vitest';
import { loadUPlot, uPlotReady, makeSpectrumChart } from '../../web/render/charts.mjs';

describe('uPlot, loaded on first need', () => {
  it('is not loaded with the charts module, and a chart before it is in says so', () => {
    expect(uPlotReady()).toBe(null);
    expect(() => makeSpectrumChart(null, { width: 300, height: 200, dark: () => false })).toThrow(/uPlot is not loaded yet/);
  });

  it('loads once: the same promise, the same class, which the chart makers then use', async () => {
    const p = loadUPlot();
    expect(loadUPlot()).toBe(p);
    const cls = await p;
    expect(typeof cls).toBe('function');
    expect(uPlotReady()).toBe(cls);
    expect(cls.name).toBe('uPlot');
  });
});
