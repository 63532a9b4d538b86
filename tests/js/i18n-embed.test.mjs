// i18n-embed.test.mjs: the <attn-viz> element's own words (web/embed.mjs, issue 31): every catalogue key
// the element's source names (t/say/tell calls, the template's data-text and data-aria, embed-csp.mjs's) is in both
// catalogues, and every key of the embed parts is used, so a typo shows in no language as its key.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { CATALOGUES } from '../../web/i18n/i18n.mjs';
import EN_EMBED from '../../web/i18n/en/embed.mjs';
import ZH_EMBED from '../../web/i18n/zh/embed.mjs';

// the element and its sentences about the host page's Content-Security-Policy (web/embed-csp.mjs)
const SOURCE = ['../../web/embed.mjs', '../../web/embed-csp.mjs'].map((f) => readFileSync(new URL(f, import.meta.url), 'utf8')).join('\n');
const named = [...new Set([...SOURCE.matchAll(/['"=](embed\.[A-Za-z0-9_.]+)['"]/g)].map((m) => m[1]))].sort();

describe('the <attn-viz> element\'s words', () => {
  it('names keys, and each is in both catalogues', () => {
    expect(named.length).toBeGreaterThan(10);
    for (const lang of ['en', 'zh']) expect(named.filter((k) => !Object.hasOwn(CATALOGUES[lang], k)), lang).toEqual([]);
  });
  it('has no key in its parts that the element does not name, and the same keys in both', () => {
    expect(Object.keys(EN_EMBED).sort()).toEqual(named);
    expect(Object.keys(ZH_EMBED).sort()).toEqual(named);
  });
  it('says its Chinese in Chinese: every string with words has a CJK character', () => {
    const words = Object.entries(ZH_EMBED).filter(([, s]) => /[A-Za-z]{3,}/.test(s.replace(/\{\w+\}/g, '')));
    expect(words.filter(([, s]) => !/[\u3400-\u9fff]/.test(s)).map(([k]) => k)).toEqual([]);
  });
});
