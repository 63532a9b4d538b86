// reference-text.mjs: what the captions and the variant's help say when softmax has a decay or a window.
// The reference A is plain softmax with the variant's scale and mask and no decay, no window
// (docs/readouts.md); a decayed (forgetting) or windowed softmax is a variant compared with it, so it is
// not labelled "the reference". Pure: main.mjs and the export menu call it where they build the captions.

import { t } from '../i18n/i18n.mjs';

/** Whether the knobs (av_params' terms: decay 0 or 1 means none) carry a decay below 1 or a window. */
function decayOrWindow(knobs) {
  return (knobs.decay > 0 && knobs.decay < 1) || knobs.window > 0;
}

/**
 * The variant's presentation for these knobs: `view` ({label, tex, hint}, variants.mjs) as it is, except
 * for a softmax (`exact`: the registry's class) with a decay or a window, which reads as a variant.
 */
export function shownView(view, exact, knobs) {
  if (!exact || !decayOrWindow(knobs)) return view;
  const decay = knobs.decay > 0 && knobs.decay < 1, window = knobs.window > 0;
  // the label and the hint are in the page's language (docs/i18n.md)
  const what = [window && t('softmaxWith.window', { w: knobs.window }), decay && t('softmaxWith.decay', { gamma: knobs.decay })].filter(Boolean).join(t('softmaxWith.join'));
  const logit = String.raw`\beta\,q_i\cdot k_j${decay ? String.raw` + (i-j)\ln\gamma` : ''}`;
  return {
    ...view,
    label: t('softmaxWith.label', { what }),
    tex: String.raw`M_{ij} \propto e^{${logit}}${window ? String.raw`\ \text{for}\ |i-j| < W,\ \text{else}\ 0` : ''};\quad A = \operatorname{softmax}(\beta\,QK^\top)`,
    hint: t('explain.softmaxWith.hint', { what }),
  };
}

/** The caption of A: it names what A lacks when the variant has a decay or a window. */
export function referenceCaption(knobs) {
  return `softmax A (same Q, K, scale, mask${decayOrWindow(knobs) ? '; no decay, no window' : ''})`;
}
