// The glossary (web/state/explain.mjs GLOSSARY and CONCEPTS, shown by web/ui/explain-popover.mjs) in Debian's
// headless Chromium: symbols and concepts with links into the lessons that show them; a link opens its
// lesson and keeps projector mode. In Chinese (lang=zh) at 1024×768, 1920×1080 projector and on a 390×844 phone: the glossary, the
// variant's and a readout's explanation read Chinese, no text is clipped, the dialog stays in the window,
// every glyph is drawn. Screenshots: build/e2e/glossary-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, fontReport, waitSettled } from './browser.mjs';
import { CONCEPTS, GLOSSARY } from '../../web/state/explain.mjs';
import { CATALOGUES } from '../../web/i18n/i18n.mjs';
import { PRESETS, presetOf } from '../../web/state/presets.mjs';

const ROOT = 'build/web';
const CJK = /[\u3400-\u9fff]/;
const ZH = CATALOGUES.zh;
let server;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
});
afterAll(async () => { await server?.close(); });

describe('the glossary', () => {
  for (const [name, opts, hash] of [
    ['1024', { width: 1024, height: 768 }, 'preset=first-look'],
    ['projector-1920', { width: 1920, height: 1080 }, 'preset=first-look&projector=1'],
    ['dark-1024', { width: 1024, height: 768, colorScheme: 'dark' }, 'preset=first-look'],
  ]) {
    it(`${name}: symbols and concepts, each concept linked to a lesson; a link opens it and keeps the modes`, async () => {
      const b = await launch(opts);
      try {
        const { page, errors } = await openLab(b.context, server.url, { hash });
        const projector = hash.includes('projector=1');
        const theme = await page.evaluate(() => document.documentElement.dataset.theme);
        await page.click('#glossary');
        await page.waitForFunction(() => document.querySelectorAll('#explain .glossary-symbols math').length > 20);
        const g = await page.evaluate(() => ({
          concepts: [...document.querySelectorAll('#explain .glossary-concepts tr')].map((tr) => ({
            term: tr.cells[0].textContent, links: [...tr.querySelectorAll('a')].map((a) => a.getAttribute('href')),
          })),
          links: [...document.querySelectorAll('#explain .glossary a[data-preset]')].map((a) => ({ href: a.getAttribute('href'), size: parseFloat(getComputedStyle(a).fontSize) })),
          smallest: Math.min(...[...document.querySelectorAll('#explain td')].map((e) => parseFloat(getComputedStyle(e).fontSize))),
        }));
        expect(g.concepts.map((c) => c.term)).toEqual(CONCEPTS.map((c) => c.term));
        for (const c of g.concepts) expect(c.links.length, c.term).toBeGreaterThan(0);
        for (const l of g.links) {
          const m = l.href.match(/^#preset=([^&]+)(&projector=1)?$/);
          expect(m, l.href).not.toBe(null);
          expect(presetOf(decodeURIComponent(m[1])), l.href).not.toBe(null);
          expect(!!m[2], l.href).toBe(projector); // the reader's projector mode, on every link
        }
        if (projector) expect(g.smallest).toBeGreaterThanOrEqual(18);
        const glyphs = await fontReport(page);
        expect(glyphs.missing.map((m) => `${m.code} ${m.char} in "${m.text}"`)).toEqual([]);
        await page.screenshot({ path: `build/e2e/glossary-${name}.png` });
        // the concept "semiseparable rank" opens its first lesson, and the glossary gives way to it
        const row = page.locator('#explain .glossary-concepts tr', { hasText: 'semiseparable rank' });
        const first = PRESETS.find((p) => CONCEPTS.find((c) => c.term === 'semiseparable rank').lessons.includes(p.name)).name; // links in the course's order
        await row.locator('a').first().click();
        const s = await page.evaluate(() => window.attnviz.snapshot());
        expect(await page.$eval('#explain', (e) => e.hidden)).toBe(true);
        expect(await page.$eval('#lesson .lesson-title', (e) => e.textContent)).toBe(presetOf(first).title);
        expect(s.state.projector).toBe(projector ? '1' : '0');
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
        expect(errors).toEqual([]);
      } finally { await b.close(); }
    }, 60000);
  }

  /** The open dialog as the reader sees it: its words, what is clipped, where it sits. */
  const dialog = (page) => page.evaluate(() => {
    const box = document.getElementById('explain'), r = box.getBoundingClientRect();
    const els = [box, ...box.querySelectorAll('*')].filter((el) => el.getClientRects().length && !el.closest('math'));
    return {
      title: box.querySelector('.explain-title').textContent,
      heads: [...box.querySelectorAll('.glossary-head')].map((h) => h.textContent),
      terms: [...box.querySelectorAll('.glossary-concepts tr')].map((tr) => tr.cells[0].textContent),
      defs: [...box.querySelectorAll('.glossary td:last-child')].map((td) => td.firstChild.textContent),
      texts: [...box.querySelectorAll('.explain-text, .explain-source')].map((p) => p.textContent),
      links: [...box.querySelectorAll('a[data-preset]')].map((a) => a.getAttribute('aria-label')),
      close: box.querySelector('.explain-close').getAttribute('aria-label'),
      clipped: els.filter((el) => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'hidden').map((el) => el.textContent.slice(0, 40)),
      wide: els.filter((el) => el.getBoundingClientRect().right > r.right + 1).map((el) => el.textContent.slice(0, 40)),
      inside: r.left >= 0 && r.right <= innerWidth && r.top >= 0,
      sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    };
  });

  for (const [name, opts, modes] of [['zh-1024', { width: 1024, height: 768 }, ''], ['zh-390', { width: 390, height: 844, hasTouch: true }, ''],
    ['zh-projector-1920', { width: 1920, height: 1080 }, '&projector=1']]) {
    it(`${name}: the glossary and the explanations in Chinese, nothing clipped, every glyph drawn`, async () => {
      const b = await launch(opts);
      try {
        const { page, errors } = await openLab(b.context, server.url, { hash: `preset=first-look&lang=zh${modes}` });
        await page.click('#glossary');
        await page.waitForFunction(() => document.querySelectorAll('#explain .glossary-symbols math').length > 20);
        const g = await dialog(page);
        expect(g.title).toBe(ZH['explain.glossary']);
        expect(g.heads).toEqual([ZH['explain.glossary.symbols'], ZH['explain.glossary.concepts']]);
        expect(g.terms).toEqual(CONCEPTS.map((c) => ZH[`concept.${c.id}`]));
        expect(g.defs).toEqual([...GLOSSARY.map((x) => ZH[`glossary.${x.id}`]), ...CONCEPTS.map((c) => ZH[`concept.${c.id}.text`])]);
        expect(g.links.length).toBeGreaterThan(20);
        for (const l of g.links) expect(l, l).toMatch(/^第 \d+ 课：/);
        expect(g.close).toBe(ZH['explain.close']);
        expect(g.clipped).toEqual([]);
        expect(g.wide).toEqual([]);
        expect(g.inside).toBe(true);
        expect(g.sideways).toBeLessThanOrEqual(0);
        const glyphs = await fontReport(page, { root: '#explain', canvas: false });
        expect(glyphs.missing.map((m) => `${m.code} ${m.char} in "${m.text}"`)).toEqual([]);
        await page.screenshot({ path: `build/e2e/glossary-${name}.png` });
        await page.keyboard.press('Escape');
        // the variant's explanation: its name, text and source in Chinese, the seed by its own title
        await page.click('#variant-info button.info');
        const v = await dialog(page);
        expect(v.texts[0]).toMatch(CJK);
        expect(v.texts[1]).toMatch(/^出处：.*种子文章《Linear Attention》/);
        expect(v.clipped).toEqual([]);
        expect(v.inside).toBe(true);
        await page.screenshot({ path: `build/e2e/glossary-${name}-variant.png` });
        await page.keyboard.press('Escape');
        // a readout's: the row's explanation by its registry key
        const info = page.locator('#readout-table tr[data-readout="row_entropy"] button.info');
        await info.scrollIntoViewIfNeeded();
        expect(await info.getAttribute('aria-label')).toMatch(/^解释：行熵/);
        await info.click();
        const r = await dialog(page);
        expect(r.texts).toEqual([ZH['readout.row_entropy.explain'], ZH['explain.definition']]);
        expect(r.clipped).toEqual([]);
        expect(r.inside).toBe(true);
        await page.screenshot({ path: `build/e2e/glossary-${name}-readout.png` });
        // the hint under the variant, in Chinese
        expect(await page.$eval('#hint', (e) => e.textContent)).toBe(ZH['variant.elu.hint']);
        expect(errors).toEqual([]);
      } finally { await b.close(); }
    }, 60000);
  }

  it('zh: a link\'s problem and an undefined readout\'s reason are said in Chinese, the snapshot keeps English', async () => {
    const b = await launch({ width: 1024, height: 768 });
    try {
      const { page, errors } = await openLab(b.context, server.url, { hash: 'v=1&variant=retention&n=64&causal=1&lang=zh&bogus=1' });
      await waitSettled(page);
      expect(await page.$eval('#notice', (e) => e.textContent)).toBe('未知参数“bogus”，已忽略');
      const why = await page.$eval('#readout-table tr[data-readout="row_entropy"] .why', (e) => e.textContent);
      expect(why).toBe(ZH['explain.reason.negative']);
      const s = await page.evaluate(() => window.attnviz.snapshot());
      expect(s.readouts.row_entropy_mean_reason).toBe('the matrix has negative entries, so its rows are not distributions');
      await page.screenshot({ path: 'build/e2e/glossary-zh-reasons.png' });
      expect(errors).toEqual([]);
    } finally { await b.close(); }
  }, 60000);
});
