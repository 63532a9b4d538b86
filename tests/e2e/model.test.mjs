// A real model in the page (issue 11; docs/model.md) in Debian's headless Chromium: the checkpoint and
// tokenizer given through input#model-files (in either order), a text typed into textarea#model-text,
// layer and head picked; snapshot() then holds the token pieces and the readouts `attnviz readouts`
// prints for the same head of `attnviz capture` on the same text; a broken file says what is wrong and
// keeps the view. The stories260K files come from ../shared; without them a tiny checkpoint the test
// writes (the page's path is the same) stands in, and the stories-only checks say they were skipped.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, exportItem } from './browser.mjs';
import { STORIES, skipped } from '../js/shared-data.mjs';
import { tinyFiles } from './tiny-model.mjs';

const ROOT = 'build/web';
const CLI = 'build/native/attnviz';
const HAVE = existsSync(join(STORIES, 'stories260K.bin'));
let server, browser, files;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
  const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-model-'));
  files = HAVE ? { model: join(STORIES, 'stories260K.bin'), tok: join(STORIES, 'tok512.bin') } : tinyFiles(dir);
  if (!HAVE) skipped('e2e model.test.mjs: the page on stories260K; a tiny checkpoint stands in');
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const snapshot = (page) => page.evaluate(() => window.attnviz.snapshot());

/** Open the lab in model mode and give it the files (tokenizer first: the page tells them apart). */
async function withModel(hash) {
  const { page, errors } = await openLab(browser.context, server.url, { hash });
  await page.setInputFiles('#model-files', [files.tok, files.model]);
  await page.waitForFunction(() => !document.querySelector('#model-text').hidden && !document.querySelector('#model-text').disabled, null, { timeout: 30000 });
  return { page, errors };
}

describe('a real model in the page', () => {
  it('runs the typed text: tokens in the snapshot and the hover, the readouts of attnviz readouts on the same capture', async () => {
    const { page, errors } = await withModel('src=model&layer=1&head=3&variant=performer&m=64');
    const text = HAVE ? 'Once upon a time, there was a little dog named Max. He liked to run.' : 'a aa a';
    await page.fill('#model-text', text);
    const snap = await snapshot(page);
    // the CLI on the same files and text, the same head and variant
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-cap-'));
    execFileSync(CLI, ['capture', '--model', files.model, '--tokenizer', files.tok, '--text', text, '-o', dir]);
    const tokens = JSON.parse(readFileSync(join(dir, 'tokens.json'), 'utf8'));
    expect(snap.tokens).toEqual(tokens.pieces);
    expect(snap.state.src).toBe('model');
    expect(snap.state.causal).toBe('1'); // a model's own mask, set when it loads
    const cli = JSON.parse(execFileSync(CLI, ['readouts', '--variant', 'performer', '--m', '64', '--causal', '--layer', '1', '--head', '3',
      '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy')]).toString());
    expect(snap.readouts.n).toBe(tokens.ids.length);
    for (const key of ['error_fro_rel', 'row_entropy_mean', 'keys_for_90', 'rank_rel_1e-3', 'effective_rank', 'output_error_rel']) {
      expect(snap.readouts[key], key).toBeCloseTo(cli[key], 4);
    }
    // the hover names the tokens
    const box = await page.$eval('#hm-A', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + box.w * (1.5 / snap.readouts.n), box.y + box.h * (3.5 / snap.readouts.n));
    expect(await page.textContent('#hover')).toContain(`row 3 “${tokens.pieces[3]}”, col 1 “${tokens.pieces[1]}”`);
    // the status line says how long the forward pass took
    expect(await page.textContent('#model-status')).toMatch(new RegExp(`^${tokens.ids.length} tokens · forward pass [0-9.]+ ms in the worker`));
    // another head, by the picker: new numbers, the same tokens
    await page.fill('#k-head', '2');
    await page.press('#k-head', 'Enter');
    const other = await snapshot(page);
    expect(other.state.head).toBe('2');
    expect(other.tokens).toEqual(tokens.pieces);
    expect(other.readouts.error_fro_rel).not.toBe(snap.readouts.error_fro_rel);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('files dropped anywhere on the page load the model (and switch to it)', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=elu' });
    const payload = [files.model, files.tok].map((f) => [f.split('/').pop(), readFileSync(f).toString('base64')]);
    await page.evaluate((fs) => {
      const dt = new DataTransfer();
      for (const [name, b64] of fs) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
      document.querySelector('#hm-A').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, payload);
    await page.waitForFunction(() => !document.querySelector('#model-text').hidden, null, { timeout: 30000 });
    const s = await snapshot(page);
    expect(s.state.src).toBe('model');
    expect(s.tokens.length).toBe(s.readouts.n);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a change of the link keeps the loaded model and its text', async () => {
    const { page, errors } = await withModel('src=model&variant=elu');
    await page.fill('#model-text', HAVE ? 'The dog ran home.' : 'a a a');
    const before = await snapshot(page);
    await page.evaluate(() => { location.hash = location.hash.replace('variant=elu', 'variant=relu').replace(/&layer=\d+|$/, '&layer=2'); });
    await page.waitForFunction(() => window.attnviz.state.variant === 'relu');
    const after = await snapshot(page);
    expect(after.tokens).toEqual(before.tokens);
    // layer 2 of stories260K's five; the tiny model has two, so the page clamps it to 1
    expect([after.state.src, after.state.layer, after.readouts.n]).toEqual(['model', HAVE ? '2' : '1', before.readouts.n]);
    expect(await page.inputValue('#model-text')).toBe(HAVE ? 'The dog ran home.' : 'a a a');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a broken file says what is wrong and keeps the current view', async () => {
    const { page } = await withModel('src=model&variant=elu');
    await page.fill('#model-text', HAVE ? 'The cat sat.' : 'a a');
    const before = await snapshot(page);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-bad-'));
    const cut = join(dir, 'cut.bin');
    writeFileSync(cut, readFileSync(files.model).subarray(0, 5000));
    await page.setInputFiles('#model-files', [files.tok, cut]);
    await page.waitForSelector('#notice:not([hidden])');
    const said = await page.textContent('#notice');
    expect(said).toMatch(/^the model's files: the checkpoint: the checkpoint is 5000 bytes; .*truncated$/);
    expect(said.length).toBeLessThanOrEqual(200);
    expect(await snapshot(page)).toEqual(before);
    await page.setInputFiles('#model-files', [files.tok]);
    await page.waitForFunction(() => /needs two files/.test(document.querySelector('#notice').textContent));
    expect(await snapshot(page)).toEqual(before);
    await page.close();
  });

  it('a short text labels the rows and columns of M, A and M − A with its tokens', async () => {
    const { page, errors } = await withModel('src=model&variant=softmax');
    await page.fill('#model-text', HAVE ? 'Once upon a time' : 'a a');
    const snap = await snapshot(page);
    const shown = (sel) => page.$eval(sel, (el) => !el.hidden && el.getBoundingClientRect().width > 0);
    expect(await shown('#tok-rows')).toBe(true);
    expect(await shown('#tok-cols')).toBe(true);
    const label = (p) => p.replace(/\n/g, '⏎').replace(/^ /, '␣') || '·';
    expect(await page.$$eval('#tok-rows span', (els) => els.map((e) => e.textContent))).toEqual(snap.tokens.map(label));
    expect(await page.$$eval('#tok-cols span', (els) => els.length)).toBe(snap.tokens.length);
    // each row label sits beside its row of the heatmap
    const rows = await page.$$eval('#tok-rows span', (els) => els.map((e) => e.getBoundingClientRect()).map((r) => r.top + r.height / 2));
    const hm = await page.$eval('#hm-M', (c) => { const r = c.getBoundingClientRect(); return { top: r.top, h: r.height }; });
    rows.forEach((y, i) => expect(Math.abs(y - (hm.top + (i + 0.5) * hm.h / rows.length))).toBeLessThan(hm.h / rows.length / 2));
    // A and M − A carry the same labels and keep M's size (issue 28: they differed)
    const sizes = await page.$$eval('.heat canvas.hm', (els) => els.map((c) => { const r = c.getBoundingClientRect(); return [r.width, r.height, r.top]; }));
    expect(sizes[1]).toEqual(sizes[0]);
    expect(sizes[2]).toEqual(sizes[0]);
    expect(await page.$$eval('#fig-D .tok-rows span', (els) => els.map((e) => e.textContent))).toEqual(snap.tokens.map(label));
    // back to the generators: no labels
    await page.selectOption('#k-src', 'synthetic');
    await snapshot(page);
    expect(await shown('#tok-rows')).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('switching back to the generators restores their n and d', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'n=512&d=32' });
    await page.selectOption('#k-src', 'model');
    await page.setInputFiles('#model-files', [files.model, files.tok]);
    await page.waitForFunction(() => window.attnviz.state.n !== 512, null, { timeout: 30000 });
    expect((await snapshot(page)).tokens.length).toBeGreaterThan(1);
    await page.selectOption('#k-src', 'synthetic');
    const s = await snapshot(page);
    expect([s.state.n, s.state.d, s.tokens]).toEqual(['512', '32', null]);
    await page.close();
  });
});

describe('exports of a real model\'s head', () => {
  it('name the token count, caption the model and head, and the .zip\'s script recomputes M', async () => {
    const { page, errors } = await withModel('src=model&variant=performer&m=32&layer=1&head=2');
    await page.fill('#model-text', HAVE ? 'The dog ran home.' : 'a a a');
    const snap = await snapshot(page);
    const n = snap.readouts.n;
    const svg = await exportItem(page, 'M.svg');
    expect(svg.name).toBe(`attnviz-performer-n${n}-M.svg`);
    const text = svg.bytes.toString().replace(/<[^>]+>/g, ''); // the text, caption lines joined
    expect(text).toContain(`layer 1, head 2 of a ${HAVE ? 5 : 2}-layer llama2.c model`);
    expect(text).toContain(`n = ${n}, d = ${HAVE ? 8 : 4}`);
    expect(text).not.toContain('undefined');
    const zip = await exportItem(page, 'bundle.zip');
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-zip-'));
    const out = execFileSync('/usr/bin/python3', ['-c', `
import sys, zipfile, subprocess, glob
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
print(subprocess.run([sys.executable, glob.glob(sys.argv[2] + '/*/recompute.py')[0]], capture_output=True, text=True).stdout)`, zip.path, dir]).toString();
    let hasNumpy = true;
    try { execFileSync('/usr/bin/python3', ['-c', 'import numpy']); } catch { hasNumpy = false; }
    if (hasNumpy) {
      expect(out).toMatch(/max \|numpy - exported M\| = /);
      expect(Number(/= (\S+)/.exec(out)[1])).toBeLessThan(1e-4);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the .zip\'s README is English in either language: the model\'s caption too', async () => {
    const readmes = [];
    for (const lang of ['en', 'zh']) {
      const { page, errors } = await withModel(`lang=${lang}&src=model&variant=performer&m=32&layer=1&head=2`);
      await page.fill('#model-text', HAVE ? 'The dog ran home.' : 'a a a');
      await snapshot(page);
      const text = (await exportItem(page, 'bundle.zip')).bytes.toString('utf8'), at = text.indexOf('attnviz export\n');
      readmes.push(text.slice(at, text.indexOf('\nlink: ', at)));
      expect(errors).toEqual([]);
      await page.close();
    }
    expect(readmes[0]).toContain(`layer 1, head 2 of a ${HAVE ? 5 : 2}-layer llama2.c model`);
    expect(readmes[1]).toBe(readmes[0]);
  });
});

describe('your own Q, K, V in the page', () => {
  it('three .npy files: the readouts attnviz readouts prints on them; a bad file keeps the view', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-own-'));
    execFileSync(CLI, ['generate', '--gen', 'clustered', '--n', '40', '--d', '12', '--seed', '3', '-o', dir]);
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'src=file&variant=relu&causal=1' });
    expect(await page.$eval('#qkv-box', (b) => b.hidden)).toBe(false);
    await page.setInputFiles('#qkv-files', ['v.npy', 'q.npy', 'k.npy'].map((f) => join(dir, f)));
    await page.waitForFunction(() => window.attnviz.state.n === 40, null, { timeout: 20000 });
    const snap = await snapshot(page);
    const cli = JSON.parse(execFileSync(CLI, ['readouts', '--variant', 'relu', '--causal', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'),
      '--v', join(dir, 'v.npy')]).toString());
    expect(snap.readouts.n).toBe(40);
    expect(snap.tokens).toBeNull();
    for (const key of ['error_fro_rel', 'row_entropy_mean', 'keys_for_90', 'rank', 'output_error_rel']) {
      expect(snap.readouts[key], key).toBeCloseTo(cli[key], 4);
    }
    // a NaN in a new Q: one sentence, and the view stays
    const bad = join(dir, 'bad_q.npy');
    const q = readFileSync(join(dir, 'q.npy'));
    q.writeFloatLE(NaN, q.length - 8);
    writeFileSync(bad, q);
    await page.setInputFiles('#qkv-files', [bad, join(dir, 'k.npy'), join(dir, 'v.npy')]);
    await page.waitForSelector('#notice:not([hidden])');
    expect(await page.textContent('#notice')).toMatch(/your Q, K, V: bad_q\.npy: entry 478 is NaN/);
    expect(await snapshot(page)).toEqual(snap);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the overview of every layer and head', () => {
  it('draws every head with its value; a click opens that head, whose readouts agree', async () => {
    const { page, errors } = await withModel('src=model&variant=elu&ov_metric=row_entropy');
    await page.fill('#model-text', HAVE ? 'Once upon a time, there was a little dog named Max.' : 'a a a');
    await snapshot(page);
    expect(await page.$eval('#overview', (d) => d.hidden)).toBe(false);
    await page.click('#overview > summary');
    const total = HAVE ? 40 : 8;
    await page.waitForFunction((t) => document.querySelector('#overview .ov-note').textContent.includes(`on all ${t} heads`), total, { timeout: 30000 });
    const caps = await page.$$eval('.ov-cap', (els) => els.map((e) => e.textContent));
    expect(caps.length).toBe(total);
    for (const c of caps) expect(c).toMatch(/^L\d+H\d+\n\d\.\d+$/);
    // each tile is coloured (issue 28: by the metric picked, web/ui/overview.mjs)
    const colours = await page.$$eval('.ov-cell', (els) => new Set(els.map((b) => getComputedStyle(b).backgroundColor)).size);
    expect(colours).toBeGreaterThan(3);
    const cap = caps[8 + 1 - (HAVE ? 0 : 4)]; // L1H1 (the tiny model has 4 heads per layer)
    await page.click('.ov-cell[data-layer="1"][data-head="1"]');
    const s = await snapshot(page);
    expect([s.state.layer, s.state.head]).toEqual(['1', '1']);
    expect(await page.$eval('.ov-cell[data-layer="1"][data-head="1"]', (b) => b.getAttribute('aria-pressed'))).toBe('true');
    const ent = cap.split('\n')[1];
    expect(Number(ent)).toBeCloseTo(s.readouts.row_entropy_mean / s.readouts.row_entropy_uniform, 2);
    expect(errors).toEqual([]);
    await page.close();
  });
});

// Issue 27, item 9: a later good load takes away an earlier failure's notice, and a failure inside the
// background worker (which reads the model) reaches the page as a notice and settles snapshot().
/** The page's worker named "attnviz NAME" (the background worker holds the model). */
async function workerNamed(page, name) {
  for (const w of page.workers()) if (await w.evaluate(() => self.name) === `attnviz ${name}`) return w;
  throw new Error(`no ${name} worker`);
}
/** Make the worker's message handler throw (an uncaught error, outside any answer) on messages of `kind`. */
const throwOn = (worker, kind) => worker.evaluate((k) => {
  const handle = self.onmessage;
  self.onmessage = (e) => { if (e.data?.kind === k) throw new Error('injected failure'); return handle(e); };
}, kind);
const notice = (page) => page.$eval('#notice', (e) => ({ shown: !e.hidden, text: e.textContent }));

describe('failures and the notice', () => {
  it('your own Q, K, V: a good file after a bad one takes the bad one\'s notice away', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'src=file&variant=elu' });
    const rows = (n, d, s) => Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, j) => Math.sin(s + i * d + j)));
    const file = (name, obj) => ({ name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(obj)) });
    await page.setInputFiles('#qkv-files', [file('bad.json', { q: rows(8, 4, 1), k: rows(8, 3, 2), v: rows(8, 4, 3) })]);
    await page.waitForSelector('#notice:not([hidden])');
    expect((await notice(page)).text).toMatch(/^your Q, K, V: /);
    await page.setInputFiles('#qkv-files', [file('good.json', { q: rows(20, 4, 1), k: rows(20, 4, 2), v: rows(20, 4, 3) })]);
    await page.waitForFunction(() => window.attnviz.state.n === 20, null, { timeout: 20000 });
    expect((await snapshot(page)).readouts.n).toBe(20);
    expect(await notice(page)).toMatchObject({ shown: false });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('your own Q, K, V: a JSON of nested 4-D arrays is one short sentence, the view stays; every notice is bounded', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'src=file&variant=elu' });
    const warnings = [];
    page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
    let t = 0;
    const nest = (shape) => (shape.length ? Array.from({ length: shape[0] }, () => nest(shape.slice(1))) : Math.sin(t++));
    const file = (name, body) => ({ name, mimeType: 'application/json', buffer: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) });
    await page.setInputFiles('#qkv-files', [file('good.json', { q: nest([24, 8]), k: nest([24, 8]), v: nest([24, 8]) })]);
    await page.waitForFunction(() => window.attnviz.state.n === 24, null, { timeout: 20000 });
    const before = await snapshot(page);
    // a capture's (layers, heads, n, d) = (2, 2, 64, 16) as nested lists: a 41,085-character notice before
    const four = { q: nest([2, 2, 64, 16]), k: nest([2, 2, 64, 16]), v: nest([2, 2, 64, 16]) };
    await page.setInputFiles('#qkv-files', [file('capture.json', four)]);
    await page.waitForSelector('#notice:not([hidden])');
    const said = (await notice(page)).text;
    expect(said).toMatch(/^your Q, K, V: capture\.json: "q" is 4-D \(2, 2, 64, 16\)/);
    expect(said.length).toBeLessThanOrEqual(200);
    expect((await page.textContent('#qkv-status')).length).toBeLessThanOrEqual(200);
    expect(await snapshot(page)).toEqual(before); // the inputs already loaded and the view stay
    // any other long message is cut at a word, with its full text in the console
    const name = `${'a-long-file-name '.repeat(20).trim().replace(/ /g, '_')} of mine.json`;
    await page.setInputFiles('#qkv-files', [file(name, '{"q": [[1]], ')]);
    await page.waitForFunction(() => /^your Q, K, V: a-long/.test(document.querySelector('#notice').textContent));
    const cut = (await notice(page)).text;
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut).toMatch(/…$/);
    expect(`your Q, K, V: ${name}`.startsWith(cut.slice(0, -1))).toBe(true);
    expect(warnings.some((w) => w.includes(`your Q, K, V: ${name}: not JSON`))).toBe(true);
    expect(await snapshot(page)).toEqual(before);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a model: good files after broken ones take the broken ones\' notice away', async () => {
    const { page, errors } = await withModel('src=model&variant=elu');
    await snapshot(page);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-bad-'));
    writeFileSync(join(dir, 'cut.bin'), readFileSync(files.model).subarray(0, 5000));
    await page.setInputFiles('#model-files', [files.tok, join(dir, 'cut.bin')]);
    await page.waitForFunction(() => document.querySelector('#model-status').classList.contains('warn'), null, { timeout: 30000 });
    expect((await notice(page)).text).toMatch(/^the model's files: /);
    await page.setInputFiles('#model-files', [files.tok, files.model]);
    // the load and the forward pass of its text are in
    await page.waitForFunction(() => /tokens · forward pass/.test(document.querySelector('#model-status').textContent), null, { timeout: 30000 });
    await snapshot(page);
    expect(await notice(page)).toMatchObject({ shown: false });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a trap in the forward pass (a rejection in the worker) is a notice, and snapshot() settles', async () => {
    const { page, errors } = await withModel('src=model&variant=elu');
    await page.fill('#model-text', HAVE ? 'The dog ran home.' : 'a a a');
    const before = await snapshot(page);
    // the model's encode fails as a WebAssembly trap would, inside the worker's promise
    const worker = await workerNamed(page, 'background');
    await worker.evaluate(() => {
      self.__encode = TextEncoder.prototype.encode;
      TextEncoder.prototype.encode = () => { throw new WebAssembly.RuntimeError('memory access out of bounds'); };
    });
    await page.fill('#model-text', HAVE ? 'The cat sat.' : 'a a');
    const after = await snapshot(page);
    expect(await notice(page)).toEqual({ shown: true, text: 'the model: memory access out of bounds' });
    expect(after).toEqual(before); // the view of the last text that ran stays
    expect(await page.textContent('#model-status')).toBe('memory access out of bounds');
    // once the worker works again, the next text runs and its success takes the notice away
    await worker.evaluate(() => { TextEncoder.prototype.encode = self.__encode; });
    await page.fill('#model-text', HAVE ? 'The cat sat down on the mat.' : 'a a a a');
    const again = await snapshot(page);
    expect(again.tokens).not.toEqual(before.tokens);
    expect(again.tokens.join('')).toMatch(HAVE ? /mat/ : /a a a a/);
    expect(await notice(page)).toMatchObject({ shown: false });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('an uncaught error in the worker while it runs the text is a notice, and snapshot() settles', async () => {
    const { page } = await withModel('src=model&variant=elu');
    await page.fill('#model-text', HAVE ? 'The dog ran home.' : 'a a a');
    const before = await snapshot(page);
    await throwOn(await workerNamed(page, 'background'), 'model-run');
    await page.fill('#model-text', HAVE ? 'The cat sat.' : 'a a');
    expect(await snapshot(page)).toEqual(before);
    expect(await notice(page)).toEqual({ shown: true, text: 'the background worker failed: injected failure' });
    expect(await page.$eval('#model-status', (e) => e.classList.contains('warn'))).toBe(true);
    await page.close(); // the page's console has the worker's uncaught error, as it should
  });

  it('an uncaught error in the spectrum worker is a notice, and snapshot() settles without its readouts', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'variant=elu&n=64&d=16' });
    await throwOn(await workerNamed(page, 'spectrum'), 'job');
    await page.evaluate(() => { location.hash = 'v=1&variant=elu&n=128&d=16'; });
    const s = await snapshot(page);
    expect(s.state.n).toBe('128');
    expect(s.readouts.sigma1).toBeNull();
    expect(s.readouts.sigma1_reason).toMatch(/^the page did not compute it for this state/);
    expect(s.readouts.error_fro_rel).toBeGreaterThan(0); // the heatmaps' readouts, computed on the page
    expect(await notice(page)).toEqual({ shown: true, text: 'the spectrum worker failed: injected failure' });
    await page.close();
  });
});
