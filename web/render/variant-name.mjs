// variant-name.mjs: a variant's name as the figures show it, in the page's language. The page hands the
// figures its shown label (main.mjs viewOf: web/state/variants.mjs's English label, or a softmax with a
// decay or a window, already named in the page's language by reference-text.mjs); outside English, a
// label that is a variant's English label is that variant's `variant.NAME` (docs/i18n.md, zh-only). Pure.
import { VARIANT_VIEW } from '../state/variants.mjs';
import { t, tOwn, getLang, LANGS } from '../i18n/i18n.mjs';

const BY_LABEL = new Map(Object.entries(VARIANT_VIEW).map(([name, v]) => [v.label, name]));

/** The figures' name for the variant shown as `label` (English: `label` itself; a label it does not know: as given). */
export function variantName(label) {
  if (getLang() === LANGS[0] || !BY_LABEL.has(label)) return label;
  return tOwn(`variant.${BY_LABEL.get(label)}`, label);
}

// the reference's two captions (web/state/reference-text.mjs referenceCaption, English), by their keys
const REFERENCE = new Map(['heatmap.capA', 'heatmap.capA.bare'].map((key) => [t(key, null, LANGS[0]), key]));

/** The caption of softmax A (reference-text.mjs's English) in the page's language; one it does not know: as given. */
export function referenceName(caption) {
  if (getLang() === LANGS[0] || !REFERENCE.has(caption)) return caption;
  return t(REFERENCE.get(caption));
}
