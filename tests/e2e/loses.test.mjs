// The panel "what the model loses" (docs/model.md "Swapped attention", docs/page.md) in headless Chromium with
// stories260K: elu+1 in every head against `attnviz linearize` (the digits shown, and snapshot().loses within
// 1e-9), heads chosen one by one on the overview, the continuations with the first difference marked, the
// sensitivity map, a distillation with its progress and Cancel, and a refusal that keeps the view. Screenshots
// in build/e2e/loses-*.png at 1280×800, 1024×768, 390×844, dark and in Chinese. Without the shared data the
// whole file is skipped (the panel's numbers are checked on a tiny model by tests/js/loses.test.mjs).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';
import { STORIES, skipped } from '../js/shared-data.mjs';

const ROOT = 'build/web';
const CLI = 'build/native/attnviz';
const HAVE = existsSync(join(STORIES, 'stories260K.bin'));
const HAVE_LINEARIZE = existsSync(CLI) && /\blinearize\b/.test(String(spawnSync(CLI, ['--help']).stdout));
const TEXT = 'Once upon a time, there was a little dog named Max. He liked to run in the park.';
const files = { model: join(STORIES, 'stories260K.bin'), tok: join(STORIES, 'tok512.bin') };
let server, browser;

beforeAll(async () => {
  if (!HAVE) { skipped('e2e loses.test.mjs'); return; }
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  mkdirSync('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const snapshot = (page) => page.evaluate(() => window.attnviz.snapshot());
const fmt = (x) => x.toFixed(4).replace(/^-/, '−');

async function withModel(hash) {
  const { page, errors } = await openLab(browser.context, server.url, { hash });
  await page.setInputFiles('#model-files', [files.tok, files.model]);
  await page.waitForFunction(() => !document.querySelector('#model-text').hidden && !document.querySelector('#model-text').disabled, null, { timeout: 30000 });
  await page.fill('#model-text', TEXT);
  await page.waitForFunction(() => !document.querySelector('#loses').hidden, null, { timeout: 30000 });
  return { page, errors };
}

/** `attnviz linearize` on the test's text, its JSON. */
function linearize(args) {
  const out = join(mkdtempSync(join(tmpdir(), 'attnviz-e2e-lin-')), 'out.json');
  execFileSync(CLI, ['linearize', '--model', files.model, '--tokenizer', files.tok, '--text', TEXT, ...args, '-o', out]);
  return JSON.parse(readFileSync(out, 'utf8'));
}

describe.skipIf(!HAVE)('what the model loses', () => {
  it('elu+1 in every head: the CLI\'s numbers, the KL strip, the continuations, the sensitivity map', async () => {
    const { page, errors } = await withModel('src=model&variant=elu&loses=1');
    const snap = await snapshot(page);
    const l = snap.loses;
    expect(l.variant).toBe('elu');
    expect(l.swapped.length).toBe(40);
    expect(l.loss).toBeGreaterThan(l.loss_original);
    expect(l.per_position.kl.length).toBe(snap.tokens.length - 1);
    // the strip: a token a column, its KL under it (the first token has none)
    expect(await page.$$eval('#loses .ls-tok', (e) => e.length)).toBe(snap.tokens.length);
    expect(await page.$$eval('#loses .ls-kl[data-kl]', (e) => e.length)).toBe(snap.tokens.length - 1);
    expect(await page.getAttribute('#loses .ls-tok[data-i="1"]', 'title')).toContain(snap.tokens[1]);
    // the digits shown are the snapshot's
    expect(await page.textContent('#loses tr[data-measure="loss"] td[data-v="swapped"]')).toBe(fmt(l.loss));
    expect(await page.textContent('#loses tr[data-measure="kl"] td[data-v="swapped"]')).toBe(fmt(l.kl_mean));
    // the first difference is marked in both continuations
    if (l.continuation.first_difference !== null) expect(await page.$$eval('#loses mark.ls-diff', (e) => e.length)).toBe(2);
    // the sensitivity map, on request
    await page.click('#ls-sens');
    const s2 = (await snapshot(page)).loses;
    expect(s2.sensitivity.by_layer.length).toBe(5);
    expect(await page.$$eval('#loses .ls-cell', (e) => e.length)).toBe(45);
    await page.$eval('#loses', (e) => e.scrollIntoView());
    await page.locator('#loses').screenshot({ path: 'build/e2e/loses-1280x800.png' });
    if (HAVE_LINEARIZE) {
      const cli = linearize(['--variant', 'elu', '--sensitivity']);
      for (const k of ['loss', 'loss_original', 'perplexity', 'kl_mean', 'top1_agreement']) {
        expect(Math.abs(s2[k] - cli[k]), k).toBeLessThan(1e-9);
        if (k !== 'perplexity') expect(await page.textContent(`#loses tr[data-measure="${{ loss_original: 'loss', kl_mean: 'kl', top1_agreement: 'top1' }[k] ?? k}"] td[data-v="${k === 'loss_original' ? 'original' : 'swapped'}"]`)).toBe(fmt(cli[k]));
      }
      expect(s2.continuation.swapped.ids).toEqual(cli.continuation.swapped.ids);
      expect(s2.continuation.first_difference).toBe(cli.continuation.first_difference);
      s2.sensitivity.by_head.forEach((e, i) => expect(Math.abs(e.delta_loss - cli.sensitivity.by_head[i].delta_loss)).toBeLessThan(1e-9));
    } else console.warn('SKIPPED: the page against `attnviz linearize` (the CLI has no linearize)');
    // at 1024×768 and on a phone the panel fits the window's width
    for (const [w, h] of [[1024, 768], [390, 844]]) {
      await page.setViewportSize({ width: w, height: h });
      await page.waitForTimeout(300);
      const over = await page.$eval('#loses', (e) => [...e.querySelectorAll('*')].filter((x) => x.getBoundingClientRect().right > innerWidth + 1).map((x) => x.className || x.tagName).slice(0, 5));
      expect(over, `${w}×${h}`).toEqual([]);
      await page.$eval('#loses', (e) => e.scrollIntoView());
      await page.locator('#loses').screenshot({ path: `build/e2e/loses-${w}x${h}.png` });
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 240000);

  it('head by head on the overview; a refusal keeps the view with one sentence', async () => {
    const { page, errors } = await withModel('src=model&variant=elu&loses=1&ls_scope=heads');
    await page.click('#overview > summary');
    await page.click('#overview .ov-cell[data-layer="1"][data-head="3"]');
    const snap = await snapshot(page);
    expect(snap.state.ls_heads).toBe('1.3');
    expect(snap.state.layer).toBe('0'); // the click chose a head to swap, it did not open it
    expect(snap.loses.swapped).toEqual([[1, 3]]);
    expect(await page.getAttribute('#overview .ov-cell[data-layer="1"][data-head="3"]', 'class')).toContain('ov-swapped');
    if (HAVE_LINEARIZE) {
      const cli = linearize(['--variant', 'elu', '--layers', '1', '--heads', '3']);
      expect(Math.abs(snap.loses.loss - cli.loss)).toBeLessThan(1e-9);
    }
    // a variant without a causal form: one sentence, the last view stays
    await page.selectOption('#k-variant', 'linformer');
    const bad = await snapshot(page);
    expect(bad.loses.error).toMatch(/causal/);
    expect(bad.loses.loss).toBe(snap.loses.loss);
    expect((await page.textContent('#loses .ls-status')).split('. ').length).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  }, 120000);

  it('distils every head with a progress bar; Cancel stops it and keeps the previous view', async () => {
    const { page, errors } = await withModel('src=model&variant=hedgehog&loses=1');
    const before = (await snapshot(page)).loses;
    await page.fill('#ls-steps', '2000');
    await page.click('#ls-distill');
    await page.waitForFunction(() => Number(document.querySelector('#ls-progress').value) > 0, null, { timeout: 60000 });
    await page.click('#ls-cancel');
    await page.waitForFunction(() => document.querySelector('#ls-cancel').disabled, null, { timeout: 60000 });
    const cancelled = (await snapshot(page)).loses;
    expect(cancelled.distill.cancelled).toBe(true);
    expect(cancelled.distill.running).toBe(false);
    expect(cancelled.loss).toBe(before.loss);
    expect(cancelled.using_w).toBe(false);
    await page.fill('#ls-steps', '20');
    await page.click('#ls-distill');
    await page.waitForFunction(() => window.attnviz.panels().loses?.distill?.progress === 1 && window.attnviz.panels().loses?.using_w, null, { timeout: 120000 });
    const done = (await snapshot(page)).loses;
    expect(done.distill.loss_curve.length).toBe(21);
    expect(done.distill.heads.length).toBe(40);
    expect(done.loss).not.toBe(before.loss);
    if (HAVE_LINEARIZE) {
      const cli = linearize(['--variant', 'hedgehog', '--distill', '20', '--train-file', await trainFile(page)]);
      expect(Math.abs(done.distill.loss_curve_end - cli.distill.loss_curve.at(-1))).toBeLessThan(1e-9);
      expect(Math.abs(done.loss - cli.loss)).toBeLessThan(1e-9);
    }
    // dark, then Chinese
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.$eval('#loses', (e) => e.scrollIntoView());
    await page.locator('#loses').screenshot({ path: 'build/e2e/loses-dark.png' });
    await page.evaluate(() => { location.hash = `${location.hash}&lang=zh`; });
    await snapshot(page);
    expect(await page.textContent('#loses > summary')).toBe('模型损失了什么');
    await page.locator('#loses').screenshot({ path: 'build/e2e/loses-zh.png' });
    expect(errors).toEqual([]);
    await page.close();
  }, 300000);

  it('another model loaded: the old distillation stops and its W is not used', async () => {
    // a checkpoint of the same shape with other weights (the first layer's wq negated): W trained on
    // stories260K's heads fits its shape but not its heads
    const { writeFileSync } = await import('node:fs');
    const b = readFileSync(files.model), dim = b.readInt32LE(0), vocab = b.readInt32LE(20);
    const other = Buffer.from(b), wq = 28 + 4 * (vocab * dim + 5 * dim);
    for (let i = 0; i < dim * dim; i++) other.writeFloatLE(-other.readFloatLE(wq + 4 * i), wq + 4 * i);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-other-')), otherModel = join(dir, 'other.bin');
    writeFileSync(otherModel, other);
    const { page, errors } = await withModel('src=model&variant=hedgehog&loses=1');
    const reload = async (model) => {
      await page.setInputFiles('#model-files', [files.tok, model]);
      await page.waitForFunction(() => window.attnviz.panels().loses?.distill == null && window.attnviz.panels().loses?.using_w === false, null, { timeout: 60000 });
      return (await snapshot(page)).loses;
    };
    // a distillation under way when the other model loads: it stops (the worker reads no freed model)
    await page.fill('#ls-steps', '2000');
    await page.click('#ls-distill');
    await page.waitForFunction(() => Number(document.querySelector('#ls-progress').value) > 0, null, { timeout: 60000 });
    let l = await reload(otherModel);
    expect(l.distill).toBe(null);
    expect(await page.$eval('#ls-cancel', (e) => e.disabled)).toBe(true);
    // one finished on stories260K, then the other model: the measures are hedgehog's own W = I on it
    await reload(files.model);
    await page.fill('#ls-steps', '5');
    await page.click('#ls-distill');
    await page.waitForFunction(() => window.attnviz.panels().loses?.distill?.progress === 1 && window.attnviz.panels().loses?.using_w, null, { timeout: 120000 });
    const distilled = (await snapshot(page)).loses.loss;
    l = await reload(otherModel);
    expect(l.using_w).toBe(false);
    expect(l.loss).not.toBe(distilled);
    if (HAVE_LINEARIZE) {
      const out = join(dir, 'out.json');
      execFileSync(CLI, ['linearize', '--model', otherModel, '--tokenizer', files.tok, '--text', TEXT, '--variant', 'hedgehog', '-o', out]);
      expect(Math.abs(l.loss - JSON.parse(readFileSync(out, 'utf8')).loss)).toBeLessThan(1e-9);
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 300000);
});

/** The training text the page holds, as a file for the CLI. */
async function trainFile(page) {
  const { writeFileSync } = await import('node:fs');
  const p = join(mkdtempSync(join(tmpdir(), 'attnviz-e2e-train-')), 'train.txt');
  writeFileSync(p, await page.inputValue('#ls-train'));
  return p;
}
