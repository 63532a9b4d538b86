// The mechanism views (web/ui/mechanisms.mjs, docs/mechanisms.md) end to end, in Debian's headless Chromium:
// each opens from its link, computes in the mechanisms worker, responds to its controls and raises no console
// error; the numbers come from window.attnviz.mechanisms() (docs/inspection.md). Screenshots:
// build/e2e/mech-*.png (1280×800).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';

const ROOT = 'build/web';
let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const mech = (page) => page.evaluate(() => window.attnviz.mechanisms());
async function until(page, pred, timeout = 60000) {
  const t0 = Date.now();
  for (;;) {
    const m = await mech(page);
    if (pred(m)) return m;
    if (Date.now() - t0 > timeout) throw new Error(`timed out; last: ${JSON.stringify(m).slice(0, 400)}`);
    await page.waitForTimeout(100);
  }
}
async function shot(page, name) {
  await page.locator('#mech').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `build/e2e/mech-${name}.png`, fullPage: false });
}

describe('the recurrence stepper', () => {
  for (const [variant, extra] of [['elu', ''], ['retention', ''], ['deltanet', '&beta=0.8'], ['performer', '&m=32'], ['elu', '&decay=0.9']]) {
    it(`${variant}${extra}: each token's output row equals the masked matrix's row; the state keeps its size`, async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash: `variant=${variant}${extra}&causal=1&n=48&d=16&mech=stepper&step=10` });
      try {
        let m = await until(page, (x) => x?.stepper?.t === 10);
        expect(m.stepper.kind).toBe('state');
        expect(m.stepper.diff).toBeLessThan(1e-4);
        const bytes = m.stepper.stateBytes, cache = m.stepper.cacheBytes;
        expect(cache).toBe(10 * 4 * 32);
        await page.locator('#mech-stepper').focus();
        await page.keyboard.press('ArrowRight');
        m = await until(page, (x) => x?.stepper?.t === 11);
        expect(m.stepper.stateBytes).toBe(bytes);
        expect(m.stepper.cacheBytes).toBe(cache + 4 * 32);
        expect(m.stepper.diff).toBeLessThan(1e-4);
        await page.getByRole('button', { name: 'one token on' }).click();
        m = await until(page, (x) => x?.stepper?.t === 12);
        await page.getByRole('button', { name: 'back to the start' }).click();
        m = await until(page, (x) => x?.stepper?.t === 0);
        await page.getByRole('button', { name: 'play' }).click();
        m = await until(page, (x) => x?.stepper?.t >= 2, 10000); // playing: tokens go by
        await page.getByRole('button', { name: 'play' }).click(); // pause
        if (variant === 'retention') await shot(page, 'stepper');
        expect(errors).toEqual([]);
      } finally { await page.close(); }
    });
  }
  it('softmax shows its growing cache, and a variant without a recurrent form says why', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=softmax&causal=1&n=40&d=8&mech=stepper&step=20' });
    try {
      let m = await until(page, (x) => x?.stepper?.t === 20);
      expect(m.stepper.kind).toBe('cache');
      expect(m.stepper.stateBytes).toBeNull();
      expect(m.stepper.cacheBytes).toBe(20 * 4 * 16);
      expect(m.stepper.diff).toBeLessThan(1e-5);
      await page.evaluate(() => { location.hash = 'variant=linformer&n=40&d=8&mech=stepper&step=5'; });
      m = await until(page, (x) => x?.stepper?.error);
      await expect.poll(() => page.locator('#mech-stepper .note').first().textContent()).toMatch(/cannot run/);
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  });
});

describe('the recurrence stepper with the gated families', () => {
  it('gdn with resets: at a reset token the stepper says the state was cleared, every row, and its norm drops', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=gdn&n=64&d=16&gate=resets&decay=0.99&gate_period=0&gate_at=30&mech=stepper&step=30' });
    try {
      let m = await until(page, (x) => x?.stepper?.t === 30);
      expect(m.stepper.kind).toBe('gated');
      expect(m.stepper.family).toBe('gdn');
      expect(m.stepper.reset).toBe(false);
      expect(m.stepper.stateBytes).toBe(4 * 16 * 16); // S: d × dv float32, no normaliser
      expect(m.stepper.diff).toBeLessThan(1e-4);
      await page.locator('#mech-stepper').focus();
      await page.keyboard.press('ArrowRight'); // token 30: the reset
      m = await until(page, (x) => x?.stepper?.t === 31);
      expect(m.stepper.reset).toBe(true);
      expect(m.stepper.resetRows).toEqual(Array.from({ length: 16 }, (_, c) => c));
      expect(m.stepper.alpha[0]).toBeLessThan(1e-13);
      expect(m.stepper.stateNorm).toBeLessThan(m.stepper.prevNorm);
      expect(m.stepper.u).toHaveLength(16);
      expect(m.stepper.diff).toBeLessThan(1e-4);
      await expect.poll(() => page.locator('#mech-stepper .mech-gated').textContent()).toMatch(/Token 30 reset the state: every row/);
      await shot(page, 'stepper-gdn-reset');
      await page.keyboard.press('ArrowRight'); // after it: no reset, the state grows again
      m = await until(page, (x) => x?.stepper?.t === 32);
      expect(m.stepper.reset).toBe(false);
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  });
  it('kda: one gate per channel beside the state\'s rows; a reset clears all of them, in Chinese too', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=kda&n=64&d=16&gate=resets&decay=0.95&gate_period=0&gate_at=20&mech=stepper&step=21' });
    try {
      let m = await until(page, (x) => x?.stepper?.t === 21 && x.stepper.family === 'kda');
      expect(m.stepper.alpha).toHaveLength(16);
      expect(m.stepper.resetRows).toHaveLength(16);
      await page.evaluate(() => { location.hash = 'v=1&variant=kda&n=64&d=16&gate=uniform&mech=stepper&step=12'; });
      m = await until(page, (x) => x?.stepper?.t === 12 && x.stepper.reset === false);
      expect(m.stepper.alpha).toHaveLength(16);
      expect(new Set(m.stepper.alpha).size).toBeGreaterThan(1); // per channel: not one value
      expect(m.stepper.diff).toBeLessThan(1e-4);
      await expect.poll(() => page.locator('#mech-stepper .mech-gated').textContent()).toMatch(/gates, one per row, lie in/);
      await shot(page, 'stepper-kda');
      await page.evaluate(() => { location.hash = 'v=1&variant=kda&n=64&d=16&gate=uniform&mech=stepper&step=12&lang=zh'; });
      await expect.poll(() => page.locator('#mech-stepper .mech-gated').textContent()).toMatch(/门每行一个/);
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  });
  it('projector mode: the gate column is drawn and the stepper\'s sentences are at least 18 px', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=gla&n=64&d=16&gate=slow&mech=stepper&step=30&projector=1' });
    try {
      await until(page, (x) => x?.stepper?.t === 30 && x.stepper.family === 'gla');
      const r = await page.evaluate(() => {
        const px = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize);
        const a = document.querySelector('#mech-stepper .mech-alpha');
        return { words: px('#mech-stepper .mech-gated'), note: px('#mech-stepper .note'), alphaRows: a.height, alphaShown: a.getBoundingClientRect().height };
      });
      expect(r.words).toBeGreaterThanOrEqual(18);
      expect(r.note).toBeGreaterThanOrEqual(18);
      expect(r.alphaRows).toBe(16);
      expect(r.alphaShown).toBeGreaterThan(100);
      await shot(page, 'stepper-gla-projector');
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  });
  it('fox keeps a cache with each entry\'s bias; its row is the matrix\'s', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=fox&n=48&d=16&gate=uniform&mech=stepper&step=20' });
    try {
      const m = await until(page, (x) => x?.stepper?.t === 20 && x.stepper.family === 'fox');
      expect(m.stepper.kind).toBe('cache');
      expect(m.stepper.stateBytes).toBeNull();
      expect(m.stepper.bias).toHaveLength(20);
      expect(m.stepper.bias[19]).toBe(0);
      expect(m.stepper.bias[0]).toBeLessThan(0);
      expect(m.stepper.diff).toBeLessThan(1e-4);
      await expect.poll(() => page.locator('#mech-stepper .mech-gated').textContent()).toMatch(/^Token 19's gate α = [0-9.]+ multiplied the weight of every earlier entry/);
      await shot(page, 'stepper-fox');
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  });
});

describe('memory collisions with the gated families', () => {
  it('gdn with a reset: the lab\'s gates as a memory, the pairs before the reset forgotten, said in both languages', async () => {
    const hash = 'v=1&variant=gdn&n=64&d=16&gate=resets&decay=0.99&beta=1&gate_period=0&gate_rate=0&gate_at=20&mech=recall&mems=delta,gdn,kda,fox,gates&pairs=32&mem_d=16';
    const { page, errors } = await openLab(browser.context, server.url, { hash });
    try {
      const m = await until(page, (x) => x?.recall?.done && x.recall.points.length > 0, 120000);
      expect(m.recall.error).toBeNull();
      const at = (id) => m.recall.points.find((p) => p.memory === id && p.axis === 'N' && p.N === 32);
      for (const id of ['delta', 'gdn', 'kda', 'fox', 'gates']) expect(Number.isFinite(at(id)?.mean)).toBe(true);
      const g = at('gates');
      expect(g.forgotten.at).toBe(20);
      expect(g.forgotten.before).toBeGreaterThan(0.95); // gone
      expect(g.forgotten.after).toBeLessThan(g.forgotten.before - 0.3);
      expect(m.recall.overwrite.map((o) => o.memory)).toContain('gates');
      await expect.poll(() => page.locator('#mech-recall .note').first().textContent()).toMatch(/the last reset is at pair 20; the pairs written before it are recalled with error/);
      await shot(page, 'recall-gated');
      await page.evaluate((h) => { location.hash = `${h}&lang=zh`; }, hash);
      await expect.poll(() => page.locator('#mech-recall .note').first().textContent()).toMatch(/最后一次重置在第 20 对/);
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  });
});

describe('scaling', () => {
  it('measures the paths in the worker, never past its budget, with the crossover marked', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=elu&causal=1&d=16&n=64&mech=scaling&budget=16' });
    try {
      const m = await until(page, (x) => x?.scaling?.done, 120000);
      const budget = 16 * 2 ** 20;
      expect(m.scaling.budget).toBe(budget);
      const q = m.scaling.points.filter((p) => p.path === 'quadratic');
      expect(q.at(-1).skipped).toBe('budget');
      for (const p of m.scaling.points) if (!p.skipped) { expect(p.bytes).toBeLessThanOrEqual(budget); expect(p.ms).toBeGreaterThanOrEqual(0); }
      expect(m.scaling.memoryGrowth).toBeLessThanOrEqual(budget);
      expect(m.scaling.points.some((p) => p.path === 'chunkwise' && p.ms !== null)).toBe(true);
      expect(m.scaling.crossover.r).toBe(16);
      await shot(page, 'scaling');
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  }, 150000);
});

describe('memory collisions', () => {
  it('recall against N and d; the delta rule beats the linear state at every N and overwrites', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'n=64&d=16&mech=recall&mems=linear,delta,softmax&mem_d=32&pairs=128&mem_scale=30' });
    try {
      const m = await until(page, (x) => x?.recall?.done && x.recall.overwrite);
      const byN = (id) => m.recall.points.filter((p) => p.axis === 'N' && p.memory === id);
      for (const p of byN('linear')) {
        const q = byN('delta').find((x) => x.N === p.N);
        if (p.N > 1) expect(q.mean).toBeLessThan(p.mean);
        if (p.N >= 16) expect(Math.abs(p.mean - Math.sqrt((p.N - 1) / 32))).toBeLessThan(0.15 * Math.sqrt((p.N - 1) / 32)); // 3 draws: noisy below
      }
      const sm = byN('softmax').find((p) => p.N === 128);
      expect(sm.mean).toBeLessThan(0.05); // a sharp softmax recalls far beyond d pairs
      const over = Object.fromEntries(m.recall.overwrite.map((o) => [o.memory, o]));
      expect(over.delta.errNew).toBeLessThan(1e-4);
      expect(over.linear.errNew).toBeGreaterThan(0.3);
      await expect.poll(() => page.locator('.mech-claim').textContent()).toMatch(/beats the linear state at every N/);
      // the controls: untick softmax, and the curves are recomputed without it
      await page.locator('#mem-softmax').uncheck();
      const m2 = await until(page, (x) => x?.recall?.done && !x.recall.points.some((p) => p.memory === 'softmax') && x.recall.points.length > 0);
      expect(m2.recall.points.some((p) => p.memory === 'delta')).toBe(true);
      await shot(page, 'recall');
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  }, 90000);

  it('the delta rule\'s write strength is η in every visible sentence, never β (β is the logit scale)', async () => {
    // the delta rule as the lab's variant (its knob, formula, hint) and in the recall view (legend, claim)
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=deltanet&causal=1&n=64&d=16&mech=recall&mems=linear,delta&mem_d=16&pairs=32' });
    try {
      await until(page, (x) => x?.recall?.done && x.recall.overwrite);
      await expect.poll(() => page.locator('.mech-claim').textContent()).toMatch(/delta rule/);
      const text = await page.evaluate(() => document.body.innerText);
      const sentences = text.split(/\n|(?<=[.:;])\s/).filter((x) => /delta/i.test(x));
      expect(sentences.length).toBeGreaterThan(2); // the legend, the picker, the claim at least
      expect(sentences.filter((x) => x.includes('β'))).toEqual([]);
      expect(sentences.some((x) => x.includes('η'))).toBe(true);
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  }, 90000);
});

describe('Hedgehog distillation', () => {
  it('lowers the loss within the steps asked for, beats elu+1, and its W becomes the lab\'s Hedgehog W', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=hedgehog&gen=clustered&n=64&d=16&causal=1&mech=distill&steps=150' });
    try {
      const m = await until(page, (x) => x?.distill?.done && x.distill.t >= 150, 90000);
      expect(m.distill.loss.length).toBe(150);
      expect(m.distill.lossNow).toBeLessThan(0.5 * m.distill.loss[0]);
      expect(m.distill.readouts.row_kl_mean).toBeLessThan(m.distill.compare.elu.row_kl_mean);
      const before = (await page.evaluate(() => window.attnviz.snapshot())).readouts.row_kl_mean;
      await page.getByRole('button', { name: 'use this W in the lab' }).click();
      await expect.poll(async () => (await page.evaluate(() => window.attnviz.snapshot())).readouts.row_kl_mean, { timeout: 20000 }).toBeLessThan(0.5 * before);
      const after = (await page.evaluate(() => window.attnviz.snapshot())).readouts.row_kl_mean;
      expect(Math.abs(after - m.distill.readouts.row_kl_mean)).toBeLessThan(1e-3 + 0.05 * after);
      expect((await mech(page)).distill.usingW).toBe(true);
      await shot(page, 'distill');
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  }, 120000);

  // Found by the zh-everywhere run: the stepper, opened while training ran, rebuilt the worker's lab and
  // dropped the distiller under the running loop ("Cannot read properties of null (reading 'steps')").
  it('stops with a sentence, not a TypeError, when the stepper takes the worker mid-training', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=hedgehog&gen=clustered&n=64&d=16&causal=1&mech=distill&steps=5000' });
    try {
      await until(page, (x) => x?.distill?.t >= 10, 60000);
      await page.evaluate(() => { location.hash = 'variant=hedgehog&gen=clustered&n=64&d=16&causal=1&mech=stepper&step=3'; });
      await until(page, (x) => x?.stepper?.t === 3, 60000);
      // back to a short run: whether it shows the stopped run or trains again, it ends soon, even on a loaded machine
      await page.evaluate(() => { location.hash = 'variant=hedgehog&gen=clustered&n=64&d=16&causal=1&mech=distill&steps=50'; });
      const m = await until(page, (x) => x?.distill?.done, 60000);
      expect(m.distill.error ?? '').not.toMatch(/Cannot read|TypeError|null/);
      expect(errors).toEqual([]);
    } finally { await page.close(); }
  }, 150000);
});

// Review of issue 27, finding 6: a failure of the mechanisms worker outside any job's answer (an uncaught
// error, a rejection nothing handled) settles every view in flight, with the failure, and says so.
describe('a failing mechanisms worker', () => {
  /** The page's worker named "attnviz mechanisms" (started on the first view that needs it). */
  async function mechWorker(page) {
    for (let i = 0; i < 100; i++) {
      for (const w of page.workers()) if (await w.evaluate(() => self.name) === 'attnviz mechanisms') return w;
      await page.waitForTimeout(100);
    }
    throw new Error('no mechanisms worker');
  }
  const notice = (page) => page.$eval('#notice', (e) => ({ shown: !e.hidden, text: e.textContent }));

  it('an uncaught error: the recall view in flight is done with it, and the notice says so', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'n=64&d=16&mech=recall&mems=linear&mem_d=8&pairs=8' });
    try {
      await until(page, (x) => x?.recall?.done && x.recall.points.length > 0);
      // the worker's handler throws on the next recall, outside any answer (as a bug or a trap there would)
      await (await mechWorker(page)).evaluate(() => {
        const handle = self.onmessage;
        self.onmessage = (e) => { if (e.data?.kind === 'mech-recall') throw new Error('injected failure'); return handle(e); };
      });
      await page.locator('#mem-delta').check();
      const m = await until(page, (x) => x?.recall?.done && x.recall.error !== null, 30000);
      expect(m.recall.error).toBe('the mechanisms worker failed: injected failure');
      expect(await notice(page)).toEqual({ shown: true, text: 'the mechanisms worker failed: injected failure' });
      expect(await page.locator('#mech-recall .note').textContent()).toMatch(/^Stopped: .* the mechanisms worker failed: injected failure$/);
    } finally { await page.close(); } // the page's console has the worker's uncaught error, as it should
  }, 90000);

  it('a rejection nothing handled ({kind: failed}): distill in flight is done with it, no longer training', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'variant=hedgehog&n=32&d=8&causal=1&mech=distill&steps=10' });
    try {
      await until(page, (x) => x?.distill?.done && x.distill.t >= 10, 60000);
      await (await mechWorker(page)).evaluate(() => {
        const handle = self.onmessage;
        self.onmessage = (e) => { if (e.data?.kind === 'mech-distill') { Promise.reject(new Error('injected rejection')); return undefined; } return handle(e); };
      });
      await page.getByRole('button', { name: 'train' }).click();
      const m = await until(page, (x) => x?.distill?.done && x.distill.error !== null, 30000);
      expect(m.distill.error).toBe('the mechanisms worker failed: injected rejection');
      expect(await notice(page)).toEqual({ shown: true, text: 'the mechanisms worker failed: injected rejection' });
      const note = await page.locator('#mech-distill .note').textContent();
      expect(note).toBe('Training stopped: the mechanisms worker failed: injected rejection');
    } finally { await page.close(); }
  }, 90000);
});
