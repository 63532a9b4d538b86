// lesson-play.test.mjs: a lesson's ▶ (web/ui/lessons.mjs, `play` in web/state/presets.mjs) in Debian's headless
// Chromium. It steps the lesson's knob as a drag would: the value moves in the link and the readouts follow
// it; ❚❚ stops it where it is; it stops at the end, on the reader's own input and on a lesson change; and
// under prefers-reduced-motion each press steps one value with no animation.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';
import { playValues, stepPreset } from '../../web/state/presets.mjs';

const ROOT = 'build/web';
let server, b;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
  b = await launch({ width: 1366, height: 768 });
});
afterAll(async () => { await b?.close(); await server?.close(); });

const linkValue = (page, key) => page.evaluate((k) => new URLSearchParams(location.hash.slice(1)).get(k), key);
const button = (page) => page.$eval('.lesson-play', (x) => ({ text: x.textContent, pressed: x.getAttribute('aria-pressed'), shown: !x.parentElement.hidden }));

describe("a lesson's play button", () => {
  it('steps focused-p\'s p through the engine: the link and the readouts follow, ❚❚ stops it', async () => {
    const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=focused-p' });
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await button(page)).toMatchObject({ text: '▶ play p from 1 to 8', pressed: 'false', shown: true });
    await page.click('.lesson-play');
    expect((await button(page)).text).toMatch(/^❚❚ pause/);
    // sample the state, the link and the plain readouts the page computed for it while it plays
    const seen = [];
    for (let k = 0; k < 30 && new Set(seen.map((x) => x.link)).size < 4; k++) {
      await page.waitForTimeout(150);
      seen.push(await page.evaluate(() => ({ p: window.attnviz.state.p, link: new URLSearchParams(location.hash.slice(1)).get('p'), h: window.attnviz.view.readouts?.row_entropy_mean })));
    }
    const links = [...new Set(seen.map((x) => x.link))];
    expect(links.length, JSON.stringify(seen)).toBeGreaterThanOrEqual(4);
    expect(links.slice(1).every((v) => playValues({ from: 1, to: 8, steps: 29 }).includes(Number(v)))).toBe(true);
    // the readouts move with p: the entropy falls as p rises (the lesson's claim), never stays put
    const byP = new Map(seen.map((x) => [x.p, x.h]));
    const ps = [...byP.keys()].sort((a, c) => a - c);
    expect(ps.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < ps.length; i++) expect(byP.get(ps[i]), `p ${ps[i - 1]} → ${ps[i]}`).toBeLessThan(byP.get(ps[i - 1]));
    await page.click('.lesson-play'); // ❚❚
    const at = (await page.evaluate(() => window.attnviz.state.p));
    expect((await button(page)).text).toMatch(/^▶ resume \(p = /);
    await page.waitForTimeout(1500); // three steps' time: nothing moves
    expect(await page.evaluate(() => window.attnviz.state.p)).toBe(at);
    const snap = await page.evaluate(() => window.attnviz.snapshot()); // resolves: the drag was released
    expect(Number(await linkValue(page, 'p'))).toBe(at);
    expect(Number(snap.state.p)).toBe(at);
    // the settled readouts are the page's for that p opened afresh
    const fresh = await openLab(b.context, server.url, { hash: `preset=focused-p&p=${at}` });
    const again = await fresh.page.evaluate(() => window.attnviz.snapshot());
    expect(snap.readouts.row_entropy_mean).toBe(again.readouts.row_entropy_mean);
    expect(snap.readouts.error_fro_rel).toBe(again.readouts.error_fro_rel);
    await fresh.page.close();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('plays performer-m to its end and stops there; the lessons without a play have no button', async () => {
    const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=performer-m' });
    await page.evaluate(() => window.attnviz.snapshot());
    await page.click('.lesson-play');
    await page.waitForFunction(() => document.querySelector('.lesson-play').getAttribute('aria-pressed') === 'false', null, { timeout: 20000 });
    expect(await linkValue(page, 'm')).toBe('4096');
    expect((await button(page)).text).toBe('▶ play m from 16 to 4096'); // at the end: a new press starts again
    const snap = await page.evaluate(() => window.attnviz.snapshot());
    expect(Number(snap.state.m)).toBe(4096);
    await page.evaluate(() => { location.hash = '#preset=rank-le-d'; });
    await page.evaluate(() => window.attnviz.snapshot());
    expect((await button(page)).shown).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("stops on the reader's own input and on a lesson change", async () => {
    const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=decay-halflife' });
    await page.evaluate(() => window.attnviz.snapshot());
    await page.click('.lesson-play');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('decay') !== '0.8');
    await page.mouse.click(700, 5); // a press on the page's header, away from any control
    const at = await page.evaluate(() => window.attnviz.state.decay);
    await page.waitForTimeout(1200);
    expect(await page.evaluate(() => window.attnviz.state.decay)).toBe(at);
    expect((await button(page)).pressed).toBe('false');
    // a wheel turned over the page (over a slider it would move that slider) stops it too
    await page.click('.lesson-play');
    await page.waitForFunction((a) => window.attnviz.state.decay !== a, at);
    await page.mouse.move(700, 300);
    await page.mouse.wheel(0, 40);
    const atWheel = await page.evaluate(() => window.attnviz.state.decay);
    await page.waitForTimeout(1200);
    expect(await page.evaluate(() => window.attnviz.state.decay)).toBe(atWheel);
    expect((await button(page)).pressed).toBe('false');
    // playing, then → (the next lesson): the next lesson opens with its own state, nothing steps on
    await page.click('.lesson-play');
    await page.waitForFunction((a) => window.attnviz.state.decay !== a, at);
    await page.evaluate(() => document.activeElement.blur());
    const next = stepPreset('decay-halflife', 1);
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((name) => location.hash.startsWith(`#preset=${name}&`), next.name);
    const st = (await page.evaluate(() => window.attnviz.snapshot())).state;
    await page.waitForTimeout(1200);
    expect(await page.evaluate(() => window.attnviz.state)).toMatchObject({ decay: Number(st.decay), variant: next.state.variant });
    expect(Number(st.decay)).toBe(Number(next.state.decay ?? 1)); // the next lesson's own γ, not a played one
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a click on "next" while playing opens the next lesson, which does not play', async () => {
    const { page, errors } = await openLab(b.context, server.url, { hash: 'preset=focused-p' });
    await page.evaluate(() => window.attnviz.snapshot());
    await page.click('.lesson-play');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('p') !== '6');
    const next = stepPreset('focused-p', 1);
    await page.click('.lesson-next');
    await page.waitForFunction((name) => location.hash.startsWith(`#preset=${name}&`), next.name);
    const st = (await page.evaluate(() => window.attnviz.snapshot())).state;
    expect(st.variant).toBe(next.state.variant);
    await page.waitForTimeout(1200);
    expect(await page.evaluate((name) => location.hash.startsWith(`#preset=${name}&`), next.name)).toBe(true);
    expect(await page.evaluate(() => window.attnviz.state.p)).toBe(Number(st.p));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('under prefers-reduced-motion each press steps one value, with no animation', async () => {
    const page0 = await b.context.newPage();
    await page0.emulateMedia({ reducedMotion: 'reduce' });
    await page0.goto(`${server.url}#preset=explimit-N`);
    await page0.waitForFunction(() => window.attnviz?.ready);
    await page0.evaluate(() => window.attnviz.snapshot());
    expect((await button(page0)).text).toBe('▶ next N (N from 1 to 32)');
    await page0.click('.lesson-play'); // N = 8 → 16
    await page0.evaluate(() => window.attnviz.snapshot());
    expect(await linkValue(page0, 'N')).toBe('16');
    await page0.waitForTimeout(1200);
    expect(await linkValue(page0, 'N')).toBe('16'); // one step, then nothing
    expect((await button(page0)).pressed).toBe('false');
    await page0.click('.lesson-play');
    await page0.evaluate(() => window.attnviz.snapshot());
    expect(await linkValue(page0, 'N')).toBe('32');
    await page0.click('.lesson-play'); // past the end: back to the start
    await page0.evaluate(() => window.attnviz.snapshot());
    expect(await linkValue(page0, 'N')).toBe('1');
    await page0.close();
  });
});
