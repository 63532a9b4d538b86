// What the captions and the help call a decayed or windowed softmax (web/state/reference-text.mjs): a variant
// compared with the reference A (plain softmax, no decay, no window: docs/readouts.md), never the reference.
import { describe, it, expect } from 'vitest';
import { shownView, referenceCaption } from '../../web/state/reference-text.mjs';

const softmax = { label: 'softmax (reference)', tex: 'A = \\operatorname{softmax}(\\beta\\,QK^\\top)', hint: 'The reference: full rank, every weight positive.' };

describe('the reference and its captions', () => {
  it('plain softmax (decay 0 or 1, no window) stays the reference', () => {
    for (const knobs of [{ decay: 1, window: 0 }, { decay: 0, window: 0 }, {}]) {
      expect(shownView(softmax, true, knobs)).toBe(softmax);
      expect(referenceCaption(knobs)).toBe('softmax A (same Q, K, scale, mask)');
    }
  });
  it('a window or a decay below 1 makes softmax a variant, named by its knobs', () => {
    const w = shownView(softmax, true, { decay: 1, window: 16 });
    expect(w.label).toBe('softmax, window W = 16');
    expect(w.hint).toMatch(/^A variant of softmax \(window W = 16\), compared with the reference A/);
    expect(w.tex).toMatch(/\|i-j\| < W/);
    const g = shownView(softmax, true, { decay: 0.9, window: 0 });
    expect(g.label).toBe('softmax, decay γ = 0.9');
    expect(g.tex).toMatch(/\\ln\\gamma/);
    expect(referenceCaption({ decay: 0.9 })).toBe('softmax A (same Q, K, scale, mask; no decay, no window)');
  });
  it('another variant keeps its own presentation; A still says it has no decay', () => {
    const elu = { label: 'linear, φ = elu+1', tex: 'x', hint: 'y' };
    expect(shownView(elu, false, { decay: 0.9 })).toBe(elu);
    expect(referenceCaption({ decay: 0.9 })).toMatch(/no decay/);
  });
});
