// The glossary (web/state/explain.mjs GLOSSARY and CONCEPTS, shown by web/ui/explain-popover.mjs) in Debian's
// headless Chromium: symbols and concepts with links into the lessons that show them; a link opens its
// lesson and keeps projector mode. Screenshots: build/e2e/glossary-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, fontReport } from './browser.mjs';
import { CONCEPTS } from '../../web/state/explain.mjs';
import { PRESETS, presetOf } from '../../web/state/presets.mjs';

const ROOT = 'build/web';
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
});
