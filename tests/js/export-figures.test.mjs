// export-figures.test.mjs: the exported figures as a post shows them (issue 32, item 7; web/io/export.mjs):
// titles and axes written as text (no TeX source), heatmaps with tick values on both axes and on the colour
// bar, the three-panel M | A | M − A figure, and labels placed off the curves' markers and the tick labels.
// Text boxes here are estimates (svg-text.mjs textUnits); tests/e2e/export.test.mjs measures them in Chromium.
import { describe, it, expect, afterEach } from 'vitest';
import { CATALOGUES, setLang } from '../../web/i18n/i18n.mjs';

const { en: EN, zh: ZH } = CATALOGUES;
/** What TeX source looks like in a figure's text: a sub- or superscript group, or a backslash command. */
export const TEX = /_\{|\^\{|\\/;

afterEach(() => setLang('en'));

describe('figure text without TeX source', () => {
  it('every string an exported figure may draw reads as text in both languages', () => {
    // the figures' titles, axes, legends and guide labels (export.*, the charts' axis and series words,
    // the sweep's title and legend)
    const FIGURE_KEY = /^(export\.(title|axis|entropy|ceiling|floor|partial|window|whole|blocks|fullRes|caption|gen|panel|fig)|chart\.(axis|series|entropy\.uniform)|sweep\.fig)\b/;
    let count = 0;
    for (const [lang, cat] of [['en', EN], ['zh', ZH]]) {
      for (const [key, text] of Object.entries(cat)) {
        if (!FIGURE_KEY.test(key)) continue;
        count++;
        expect(text, `${lang} ${key}`).not.toMatch(TEX);
      }
    }
    expect(count).toBeGreaterThan(60);
  });
  it('the error figure\'s title writes the sum with Unicode sub- and superscripts', () => {
    expect(EN['export.title.error']).toContain('e(r) = Σᵢ₌ᵣ₊₁ σᵢ² / Σᵢ σᵢ²');
    expect(ZH['export.title.error']).toContain('e(r) = Σᵢ₌ᵣ₊₁ σᵢ² / Σᵢ σᵢ²');
  });
});
