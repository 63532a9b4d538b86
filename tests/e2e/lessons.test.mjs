// The lessons (web/state/presets.mjs, docs/lessons.md) end to end, in Debian's headless Chromium: every preset
// opens from its link `#preset=NAME`, shows its caption and outlines what it highlights, raises no console
// error, and reproduces its claim in the numbers the page shows (window.attnviz.snapshot(),
// docs/inspection.md). A claim that compares two states opens the second as the same preset with one key
// changed (explicit keys in a link win over the preset's). The thresholds sit well inside what the
// library computes for these seeded inputs and well outside what the opposite claim would give.
// Screenshots: build/e2e/lesson-*.png (1024×768, and projector mode at 1920×1080).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, fontReport } from './browser.mjs';
import { PRESETS, presetOf } from '../../web/state/presets.mjs';
import { plainQuote } from '../../web/state/citations.mjs';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { STORIES, HAVE_STORIES, skipped } from '../js/shared-data.mjs';

const ROOT = 'build/web';
let server, browser, page, errors;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1024, height: 768 });
  ({ page, errors } = await openLab(browser.context, server.url));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Go to `hash` in the open page and take the snapshot of the state it names. */
async function at(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  return page.evaluate(() => window.attnviz.snapshot());
}
const lesson = (name, extra = '') => at(`preset=${name}${extra}`);

/** The mean weight of column 0 of the variant's matrix M and of softmax A (n ≤ 256: the heatmaps are exact). */
const firstColumn = () => page.evaluate(() => {
  const f = window.attnviz.view.frame, n = f.size, col = (X, j = 0) => { let s = 0; for (let i = 0; i < n; i++) s += X[i * n + j]; return s / n; };
  const others = Array.from({ length: n - 1 }, (_, j) => col(f.M, j + 1));
  return { M: col(f.M), A: col(f.A), b: f.b, othersM: [Math.min(...others), Math.max(...others)] };
});

/** What the lesson panel shows, and which readout rows and panels are outlined. */
const panel = () => page.evaluate(() => ({
  hidden: document.getElementById('lesson').hidden,
  title: document.querySelector('#lesson .lesson-title').textContent,
  caption: document.querySelector('#lesson .lesson-caption').textContent,
  source: document.querySelector('#lesson .lesson-source').textContent,
  outlined: [...document.querySelectorAll('.hl')].map((e) => e.dataset.readout ?? e.dataset.hl),
}));

const CLAIMS = {
  async 'first-look'(s) {
    const r = s.readouts;
    expect(r.variant).toBe('elu');
    expect(r.row_entropy_mean).toBeGreaterThan(0.95 * r.row_entropy_uniform); // nearly uniform rows
    const soft = (await lesson('first-look', '&variant=softmax')).readouts;
    expect(soft.row_entropy_mean).toBeLessThan(0.5 * soft.row_entropy_uniform); // the sharp diagonal
  },
  async 'rank-le-d'(s) {
    expect(s.readouts.rank).toBeLessThanOrEqual(16);
    expect(s.readouts.rank).toBeGreaterThanOrEqual(12);
    expect((await lesson('rank-le-d', '&variant=softmax')).readouts.rank).toBeGreaterThan(200);
    // elu+1's hint: the cap holds without the causal mask; the mask lifts it
    expect((await lesson('rank-le-d', '&causal=1')).readouts.rank).toBeGreaterThan(4 * 16);
  },
  async 'exp-spectrum'(s) {
    const r = s.readouts, d = r.d;
    expect(r['rank_rel_1e-3']).toBeGreaterThan(4 * d);
    expect(r.error_curve[d]).toBeGreaterThan(0.1); // the truncated-SVD error at r = d stays high
    // the caption's reading of the article's second figure (the panel's own numbers, exact at n = 256)
    const figure = () => page.evaluate(() => window.attnviz.panels().article);
    await expect.poll(figure, { timeout: 30000 }).toMatchObject({ E: { partial: false } });
    const fig = await figure();
    expect(fig.S.err_rel[d]).toBeLessThan(1e-6);        // QKᵀ: exact from D = d
    expect(fig.E.err_rel[d]).toBeGreaterThan(0.15);     // "about a fifth" at D = d
    expect(fig.E.err_rel[d]).toBeLessThan(0.26);
    const below = fig.E.err_rel.findIndex((v) => v < 0.01);
    expect(below).toBeGreaterThan(4 * d);               // "near 100, six times d"
    expect(below).toBeLessThan(8 * d);
  },
  async crossover(s) {
    // one meaning of the cost line: the variant's own linear path against softmax's quadratic path
    const ratio = (c, soft) => soft.quad_madds / c.linear_madds;
    const at = async (extra) => [(await lesson('crossover', extra)).readouts.cost, (await lesson('crossover', `${extra}&variant=softmax`)).readouts.cost];
    expect(ratio(s.readouts.cost, (await at(''))[1])).toBeGreaterThan(0.5);
    expect(ratio(s.readouts.cost, (await at(''))[1])).toBeLessThan(2);
    expect(ratio(...(await at('&n=16')))).toBeLessThan(1);
    await lesson('crossover', '&n=16');
    await expect.poll(() => page.textContent('#cost')).toMatch(/^cost at n = 16: linear path of [^:]*elu\+1: .*; softmax's quadratic path: .* \(linear is [\d.]+× dearer/);
    expect(ratio(...(await at('&n=1024')))).toBeGreaterThan(8);
    await lesson('crossover', '&n=1024');
    await expect.poll(() => page.textContent('#cost')).toMatch(/^cost at n = 1024: .*\(linear is [\d,.]+× cheaper\)$/);
  },
  async 'efficient-rows'(s) {
    expect(s.readouts.row_sum_dev_max).toBeLessThan(1e-5);
    const lin = (await at('preset=efficient-rows&variant=linformer&ef_kind=gaussian')).readouts;
    expect(lin.row_sum_dev_max).toBeGreaterThan(0.5);
  },
  async 'focused-p'(s) {
    const p1 = (await lesson('focused-p', '&p=1')).readouts;
    expect(s.readouts.row_entropy_mean).toBeLessThan(p1.row_entropy_mean - 0.5);
    expect(s.readouts.error_fro_rel).toBeLessThan(0.75 * p1.error_fro_rel);
  },
  async 'dwc-rank'(s) {
    expect(s.readouts.rank).toBeGreaterThan(4 * s.readouts.d);
    // DWC's signed band makes M negative: the entropy is undefined, and the page says why on screen
    expect(s.readouts.row_entropy_mean).toBe(null);
    const why = await page.$eval('tr[data-readout="row_entropy"] .why', (e) => ({ text: e.textContent, shown: e.getClientRects().length > 0 }));
    expect(why.shown).toBe(true);
    expect(why.text).toBe(s.readouts.row_entropy_mean_reason);
    expect((await lesson('dwc-rank', '&dwc=0')).readouts.rank).toBeLessThanOrEqual(16);
  },
  async 'linformer-s'(s) {
    expect(s.readouts.rank).toBe(32);
    const sw = await page.evaluate(() => window.attnviz.sweep());
    expect(sw.knob).toBe('s');
    expect(sw.values.length).toBeGreaterThan(5);
    expect(sw.mean).toEqual(sw.values); // rank = s, at every s
    const s8 = (await lesson('linformer-s', '&s=8')).readouts, s128 = (await lesson('linformer-s', '&s=128')).readouts;
    expect([s8.rank, s128.rank]).toEqual([8, 128]);
    expect(s128.error_fro_rel).toBeLessThan(s8.error_fro_rel);
    const g = (await lesson('linformer-s', '&ef_kind=gaussian')).readouts;
    expect(g.rank).toBe(32);
    expect(g.row_sum_dev_max).toBeGreaterThan(1);
    expect(g.error_fro_rel).toBeGreaterThan(2 * s.readouts.error_fro_rel);
  },
  async 'performer-m'() {
    // the lesson's sweep: error against m over three feature seeds, falling about as 1/√m
    const sw = await page.evaluate(() => window.attnviz.sweep());
    expect([sw.knob, sw.readout, sw.seeds]).toEqual(['m', 'error_fro_rel', 3]);
    for (let i = 0; i < sw.values.length; i++) expect(sw.min[i] <= sw.mean[i] && sw.mean[i] <= sw.max[i], `m = ${sw.values[i]}`).toBe(true);
    const at = (m) => sw.mean[sw.values.indexOf(m)];
    expect(at(4096)).toBeLessThan(at(64) / 3);
    expect(sw.max.at(-1)).toBeLessThan(sw.min[sw.values.indexOf(64)]); // the bands part
    for (const rseed of [0, 1, 2]) {
      const few = (await lesson('performer-m', `&m=64&rseed=${rseed}`)).readouts.error_fro_rel;
      const many = (await lesson('performer-m', `&m=4096&rseed=${rseed}`)).readouts.error_fro_rel;
      expect(many, `feature seed ${rseed}`).toBeLessThan(few / 3); // 1/√m: 8× in theory
    }
    // the caption's numbers (the lesson's feature seed 0): 0.64, 0.40, 0.22, 0.13, each ×4 in m cutting by 1.6–1.8×
    const caption = { 64: 0.64, 256: 0.40, 1024: 0.22, 4096: 0.13 }, err = {};
    for (const m of Object.keys(caption)) err[m] = (await lesson('performer-m', `&m=${m}`)).readouts.error_fro_rel;
    for (const [m, v] of Object.entries(caption)) expect(err[m], `m = ${m}`).toBeCloseTo(v, 1);
    for (const [a, b] of [[64, 256], [256, 1024], [1024, 4096]]) {
      expect(err[a] / err[b], `${a} → ${b}`).toBeGreaterThan(1.5);
      expect(err[a] / err[b], `${a} → ${b}`).toBeLessThan(1.9);
    }
    // the variant's hint: orthogonal ω lower the error on average over draws, not on every draw nor at every m
    const draws = async (m, orthogonal) => {
      const e = [];
      for (let rseed = 0; rseed < 8; rseed++) e.push((await lesson('performer-m', `&m=${m}&orthogonal=${orthogonal}&rseed=${rseed}`)).readouts.error_fro_rel);
      return e;
    };
    const mean = (e) => e.reduce((a, b) => a + b, 0) / e.length;
    const [o64, i64, o256, i256] = [await draws(64, 1), await draws(64, 0), await draws(256, 1), await draws(256, 0)];
    expect(mean(o64)).toBeLessThan(0.97 * mean(i64)); // 0.66 against 0.71
    expect(o256.some((e, k) => e > i256[k])).toBe(true); // 4 of 8 draws: iid lower at the lesson's m
    // the cost line: Performer's linear path at m = 256 costs more than softmax at n = 256, and says so
    // (it said "linear 1.8× cheaper", against Performer's own n² path)
    const perf = (await lesson('performer-m')).readouts.cost, soft = (await lesson('performer-m', '&variant=softmax')).readouts.cost;
    expect(perf.linear_madds).toBeGreaterThan(soft.quad_madds);
    await lesson('performer-m');
    await expect.poll(() => page.textContent('#cost')).toMatch(/linear path of Performer.*; softmax's quadratic path: .*\(linear is [\d.]+× dearer/);
  },
  async 'performer-norm'(s) {
    expect(s.readouts.error_fro_rel).toBeGreaterThan(0.9);
    const sw = await page.evaluate(() => window.attnviz.sweep());
    for (let i = 0; i < sw.values.length; i++) if (sw.values[i] >= 16) expect(sw.mean[i], `m = ${sw.values[i]}`).toBeGreaterThan(0.9); // more features do not help
    expect((await lesson('performer-norm', '&m=64')).readouts.error_fro_rel).toBeGreaterThan(0.9);
    await lesson('performer-norm');
    const note = await page.$eval('#swamp-note', (e) => (e.hidden ? '' : e.textContent));
    expect(note).toMatch(/swamps (\d+)% of the keys/);
    expect(Number(note.match(/swamps (\d+)%/)[1])).toBeGreaterThan(50);
    // moderate inputs: no note
    await lesson('performer-m');
    expect(await page.$eval('#swamp-note', (e) => e.hidden)).toBe(true);
  },
  async 'taylor-order'(s) {
    const err = [];
    for (const order of [1, 2, 3, 4]) err.push((await lesson('taylor-order', `&order=${order}`)).readouts.error_fro_rel);
    for (let i = 1; i < err.length; i++) expect(err[i], `order ${i + 1}`).toBeLessThan(err[i - 1]);
    const soft = (await lesson('taylor-order', '&variant=softmax')).readouts.cost;
    expect(s.readouts.cost.linear_madds).toBeGreaterThan(soft.quad_madds); // 585 features > n: dearer than softmax
  },
  async 'explimit-N'() {
    const err = [];
    for (const N of [1, 2, 4, 8, 32]) err.push((await lesson('explimit-N', `&N=${N}`)).readouts.error_fro_rel);
    for (let i = 1; i < err.length; i++) expect(err[i]).toBeLessThan(err[i - 1]);
    expect(err.at(-1)).toBeLessThan(0.2 * err[0]);
    const c = (await lesson('explimit-N', '&N=3')).readouts.cost; // 729 features > n = 256
    expect(c.linear_madds).toBeGreaterThan((await lesson('explimit-N', '&variant=softmax')).readouts.cost.quad_madds);
  },
  async 'hedgehog-spiky'(s) {
    const elu = (await lesson('hedgehog-spiky', '&variant=elu')).readouts;
    expect(s.readouts.row_entropy_mean).toBeLessThan(elu.row_entropy_mean - 0.5);
    expect(s.readouts.keys_for_90).toBeLessThan(0.75 * elu.keys_for_90);
  },
  async sink() {
    const elu = await firstColumn();
    expect(elu.b).toBe(1);
    expect(elu.A).toBeGreaterThan(0.6); // softmax: a sink, 0.74 of a row on average (not "about half")
    expect(elu.A).toBeLessThan(0.9);
    expect(elu.M).toBeLessThan(0.05);   // elu+1: spread
    // the caption: 0.02, barely above the other keys (0.012 to 0.018)
    expect(elu.M).toBeGreaterThan(0.015);
    expect(elu.M).toBeLessThan(0.025);
    expect(elu.othersM[0]).toBeGreaterThan(0.010);
    expect(elu.othersM[1]).toBeLessThan(elu.M);
    expect(elu.othersM[1]).toBeLessThan(0.02);
    const ny = await lesson('sink', '&variant=nystrom');
    expect(Number(ny.state.landmarks)).toBeLessThan(Number(ny.state.n)); // landmarks = n would be exact softmax
    expect(ny.readouts.error_fro_rel).toBeGreaterThan(0.1); // an approximation (0.30), not the reference
    expect(ny.readouts.rank).toBeLessThanOrEqual(Number(ny.state.landmarks));
    expect((await firstColumn()).M).toBeGreaterThan(0.3); // and still a sink
  },
  async 'decay-halflife'(s) {
    const r = s.readouts, d = Number(s.state.d);
    expect(Number(s.state.decay)).toBe(0.8);
    const flat = (await lesson('decay-halflife', '&decay=1')).readouts;
    expect(flat.semiseparable_rank).toBe(d); // undecayed: the feature dimension
    expect(r.semiseparable_rank).toBeLessThan(d);
    expect(r.row_entropy_mean).toBeLessThan(flat.row_entropy_mean - 1);
  },
  async 'window-rank'(s) {
    expect(s.readouts.semiseparable_rank).toBe(7); // W − 1
    expect(s.readouts.rank).toBeGreaterThan(240); // nearly full
    // a window is not plain softmax: compared with it (its KL is +∞, so null with that reason)
    expect(s.readouts.error_fro_rel).toBeGreaterThan(0.01);
    expect(s.readouts.output_error_rel).toBeGreaterThan(0.01);
    expect(s.readouts.row_kl_mean_reason).toBe('the matrix is zero where the softmax reference is positive');
    expect(await page.evaluate(() => document.getElementById('causal-note').textContent)).toMatch(/key\/value cache of the last 8 tokens/);
    expect((await lesson('window-rank', '&window=0')).readouts.semiseparable_rank).toBeGreaterThan(32);
  },
  async 'delta-vs-linear'(s) {
    expect(s.readouts.semiseparable_rank).toBe(Number(s.state.d) - 1);
    expect(await page.evaluate(() => document.getElementById('hm-M').dataset.map)).toBe('diverging');
    expect((await lesson('delta-vs-linear', '&variant=retention&decay=1')).readouts.semiseparable_rank).toBe(Number(s.state.d));
  },
  async 'retention-signed'(s) {
    const r = s.readouts;
    expect(Number(s.state.decay)).toBe(1 - 2 ** -5); // RetNet's first head, the variant's own default
    expect(await page.evaluate(() => document.getElementById('hm-M').dataset.map)).toBe('diverging');
    expect(r.row_entropy_mean).toBeNull();
    expect(r.row_entropy_mean_reason).toMatch(/negative entries/);
    expect(r.row_sum_dev_max).toBeGreaterThan(0.5);
    expect(r.semiseparable_rank).toBeLessThanOrEqual(Number(s.state.d));
    expect(await page.evaluate(() => document.getElementById('causal-note').textContent)).toMatch(/only causal/);
  },
  async 'recurrent-state'() {
    const m = await mechUntil((x) => x?.stepper?.t === 40);
    expect(m.stepper.diff).toBeLessThan(1e-4);
    expect(m.stepper.cacheBytes).toBeGreaterThan(m.stepper.stateBytes); // the cache outgrew the state
  },
  async 'crossover-measured'() {
    const m = await mechUntil((x) => x?.scaling?.done, 120000);
    const last = (path) => m.scaling.points.filter((p) => p.path === path && p.ms !== null).at(-1);
    expect(m.scaling.points.find((p) => p.path === 'quadratic' && p.skipped === 'budget')).toBeTruthy();
    expect(last('linear').n).toBeGreaterThan(last('quadratic').n);
    expect(m.scaling.crossover.r).toBe(64);
    expect(m.scaling.crossover.n).toBeGreaterThan(32);
    expect(m.scaling.crossover.n).toBeLessThan(256);
  },
  async 'memory-collisions'() {
    const m = await mechUntil((x) => x?.recall?.done && x.recall.overwrite);
    const lin = m.recall.points.find((p) => p.axis === 'N' && p.memory === 'linear' && p.N === 512);
    expect(Math.abs(lin.mean / Math.sqrt(511 / 32) - 1)).toBeLessThan(0.1);
    const sm = m.recall.points.find((p) => p.axis === 'N' && p.memory === 'softmax' && p.N === 512);
    expect(sm.mean).toBeLessThan(lin.mean / 2);
  },
  async 'delta-overwrite'() {
    const m = await mechUntil((x) => x?.recall?.done && x.recall.overwrite);
    const o = Object.fromEntries(m.recall.overwrite.map((x) => [x.memory, x]));
    expect(o.delta.errNew).toBeLessThan(1e-4);
    expect(o.linear.errNew).toBeGreaterThan(0.3);
    for (const p of m.recall.points.filter((x) => x.axis === 'N' && x.memory === 'linear' && x.N > 1))
      expect(m.recall.points.find((x) => x.axis === 'N' && x.memory === 'delta' && x.N === p.N).mean).toBeLessThan(p.mean);
  },
  async 'hedgehog-distill'() {
    const m = await mechUntil((x) => x?.distill?.done && x.distill.t >= 200, 120000);
    expect(m.distill.lossNow).toBeLessThan(0.5 * m.distill.loss[0]);
    expect(m.distill.readouts.row_kl_mean).toBeLessThan(m.distill.compare.elu.row_kl_mean);
    expect(m.distill.readouts.row_kl_mean).toBeLessThan(m.distill.compare.performer.row_kl_mean);
    // held out, as the caption says: the trained W on fresh Q, K (generator seed 2; the page keeps W while d
    // fits) fits far worse than on the Q, K it was trained on (0.50 against 0.0004), between elu+1 and Performer
    await page.getByRole('button', { name: 'use this W in the lab' }).click();
    await expect.poll(async () => (await page.evaluate(() => window.attnviz.snapshot())).readouts.row_kl_mean, { timeout: 20000 })
      .toBeLessThan(2 * m.distill.readouts.row_kl_mean + 1e-3);
    const held = (await lesson('hedgehog-distill', '&seed=2&mech=')).readouts.row_kl_mean;
    expect(held).toBeGreaterThan(100 * m.distill.readouts.row_kl_mean);
    expect(held).toBeLessThan((await lesson('hedgehog-distill', '&seed=2&mech=&variant=elu')).readouts.row_kl_mean);
    expect(held).toBeGreaterThan((await lesson('hedgehog-distill', '&seed=2&mech=&variant=performer')).readouts.row_kl_mean);
  },
  async mamba2(s) {
    // q = C, k = Δ·B, g = A·Δ, scale 1: the gates vary per token, from about 0.7 to 1, and never reset
    expect(s.gates).toMatchObject({ kind: 'mamba2', channels: 1, n: 256, resets: [] });
    expect(Math.exp(s.gates.min)).toBeGreaterThan(0.6);
    expect(Math.exp(s.gates.min)).toBeLessThan(0.8);
    expect(Math.exp(s.gates.max)).toBeGreaterThan(0.99);
    expect(Number(s.state.scale) / Math.sqrt(Number(s.state.d))).toBe(1); // the absolute scale 1
    expect(s.readouts.semiseparable_ceiling).toBe(16);
    expect(s.readouts.semiseparable_rank).toBe(16);
    expect(s.readouts.rank).toBe(256); // M itself: full rank, as the caption says
    expect(await page.evaluate(() => window.attnviz.panels().gates)).toMatchObject({ columns: 256, channels: 1, image: false, beta: false });
  },
  async rwkv7(s) {
    expect(s.gates).toMatchObject({ kind: 'uniform', channels: 16, ab: { kind: 'rwkv7', icl: 0.5 } });
    expect(Math.exp(s.gates.min)).toBeGreaterThan(Math.exp(-Math.exp(-0.5))); // RWKV-7's range: α > 0.545
    expect(s.readouts.semiseparable_ceiling).toBe(16);
    expect(s.readouts.semiseparable_rank).toBeLessThanOrEqual(16);
    // the rank-one erase changes the map: a = b = 0 (GLA with the same gates) is another matrix
    const gla = await lesson('rwkv7', '&dplr_ab=zero');
    expect(gla.gates.ab).toBeNull();
    expect(Math.abs(gla.readouts.error_fro_rel - s.readouts.error_fro_rel)).toBeGreaterThan(0.1 * s.readouts.error_fro_rel);
    // a_icl = 1, the gate open, normalised keys: the delta rule itself, Gated DeltaNet with η = 1
    const delta = (await lesson('rwkv7', '&gate=constant&decay=1&dplr_icl=1&qk_l2norm=1')).readouts;
    const gdn = (await lesson('rwkv7', '&variant=gdn&gate=constant&decay=1&beta=1&qk_l2norm=1')).readouts;
    for (const k of ['error_fro_rel', 'output_error_rel', 'row_kl_mean', 'stable_rank']) {
      if (gdn[k] === null) continue;
      expect(delta[k], k).toBeCloseTo(gdn[k], 4);
    }
    expect(delta.rank).toBe(gdn.rank);
  },
  async 'forget-sentences'(s) {
    expect(s.gates).toMatchObject({ kind: 'resets', resets: [37, 80, 128, 171, 219], min: -30, max: 0 });
    expect(s.readouts.semiseparable_rank).toBe(0); // a reset at the middle token: nothing crosses it
    expect(await page.evaluate(() => window.attnviz.panels().gates.resetColumns)).toEqual([37, 80, 128, 171, 219]);
    // M is block-diagonal: no weight across a reset (the heatmap is exact at n = 256)
    const across = await page.evaluate(() => {
      const f = window.attnviz.view.frame, n = f.size, at = [0, 37, 80, 128, 171, 219, n];
      const block = (t) => at.findLastIndex((x) => x <= t);
      let worst = 0, inside = 0;
      for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) {
        const v = Math.abs(f.M[i * n + j]);
        if (block(i) !== block(j)) worst = Math.max(worst, v); else inside = Math.max(inside, v);
      }
      return { worst, inside };
    });
    expect(across.worst).toBeLessThan(1e-9 * across.inside);
    const open = await lesson('forget-sentences', '&gate=constant');
    expect(open.gates.resets).toEqual([]);
    expect(open.readouts.semiseparable_rank).toBe(16);
  },
  async 'gate-vs-decay'(s) {
    // open gates with three resets: the one at the middle token cuts M
    expect(s.gates).toMatchObject({ kind: 'resets', resets: [64, 128, 192], min: -30, max: 0, channels: 1 });
    expect(s.readouts.semiseparable_rank).toBe(0);
    // a constant decay never cuts: the resets' mean α, and a much stronger one, keep the ceiling d
    const mean = (253 + 3 * Math.exp(-30)) / 256;
    expect(Math.abs(mean - 0.988)).toBeLessThan(5e-4);
    for (const g of [0.988, 0.9]) {
      const c = await lesson('gate-vs-decay', `&gate=constant&decay=${g}`);
      expect(c.gates).toMatchObject({ kind: 'constant', resets: [] });
      expect(Math.abs(Math.exp(c.gates.min) - g)).toBeLessThan(1e-6);
      expect(c.readouts.semiseparable_rank).toBe(16);
    }
    expect((await lesson('gate-vs-decay', '&gate=constant')).readouts.semiseparable_rank).toBe(16); // the comparison
  },
  async 'channel-gates'(s) {
    expect(s.gates).toMatchObject({ kind: 'slow', channels: 16, resets: [] });
    expect(Math.exp(s.gates.min)).toBeLessThan(0.35);
    expect(s.readouts.semiseparable_ceiling).toBe(16);
    expect(s.readouts.semiseparable_rank).toBe(9); // the caption's 9: some channels open while others forget
    const one = await lesson('channel-gates', '&variant=gdn');
    expect(one.gates).toMatchObject({ kind: 'slow', channels: 1 });
    expect(one.readouts.semiseparable_rank).toBe(2); // the caption's 2: every channel forgets at once
    expect(s.readouts.semiseparable_rank - one.readouts.semiseparable_rank).toBeGreaterThanOrEqual(4);
    // "more is not better by itself": the error against softmax the same within 2 % (0.736, 0.740)
    expect(Math.abs(s.readouts.error_fro_rel / one.readouts.error_fro_rel - 1)).toBeLessThan(0.02);
    expect(s.readouts.error_fro_rel).toBeCloseTo(0.74, 2); // the caption's 0.74, both
    expect(one.readouts.error_fro_rel).toBeCloseTo(0.74, 2);
    // with fla's GLA projection (α 0.78…1) the two agree within 0.1 % (0.08 %)
    const pk = await lesson('channel-gates', '&gate=projection'), pg = await lesson('channel-gates', '&gate=projection&variant=gdn');
    expect(pk.gates.channels).toBe(16);
    expect(Math.exp(pk.gates.min)).toBeGreaterThan(0.75);
    expect(pk.readouts.semiseparable_rank).toBe(16);
    expect(pg.readouts.semiseparable_rank).toBe(16);
    expect(Math.abs(pk.readouts.error_fro_rel / pg.readouts.error_fro_rel - 1)).toBeLessThan(0.002);
  },
  async 'fox-window'(s) {
    const r = s.readouts;
    expect(r.variant).toBe('fox');
    expect(s.gates).toMatchObject({ kind: 'projection', channels: 1, resets: [] });
    expect(Math.exp(s.gates.min)).toBeGreaterThan(0.8);
    expect(Math.exp(s.gates.min)).toBeLessThan(0.88); // 0.84
    expect(Math.exp(s.gates.max)).toBeGreaterThan(0.99);
    expect(r.row_sum_dev_max).toBeLessThan(1e-5); // softmax rows
    expect(Math.round(r.keys_for_90)).toBe(31); // the caption's "about 31"
    expect(r.semiseparable_ceiling).toBe(128);
    expect(r.semiseparable_rank).toBe(90); // the caption's 90
    expect(r.error_fro_rel).toBeCloseTo(0.90, 2); // the caption's 0.90
    const w = (await lesson('fox-window', '&variant=softmax')).readouts; // the comparison: softmax, W = 16
    expect(Math.round(w.keys_for_90)).toBe(10); // the caption's 10
    expect(w.semiseparable_rank).toBeLessThanOrEqual(15); // W − 1
    expect(w.error_fro_rel).toBeCloseTo(1.55, 2); // the caption's 1.55
    expect(r.error_fro_rel).toBeLessThan(0.8 * w.error_fro_rel);
  },
  // chapter 9, on the real model: here without one (the model's claims: "on stories260K", below)
  'story-breaks': noModel,
  'distill-recovers': noModel,
  'head-sensitivity': noModel,
  'window-plus-linear': noModel,
};

/**
 * "Predict, then reveal": per lesson with a `predict`, the claim its explanation makes, checked from the
 * snapshots before and after the reveal (the same numbers the explanation quotes).
 */
const PREDICTIONS = {
  async 'rank-le-d'(after, before) {
    expect(before.readouts.rank).toBeLessThanOrEqual(16);
    expect(after.readouts.rank).toBeLessThanOrEqual(8); // halving d halves the cap
    expect(after.readouts.rank).toBeGreaterThanOrEqual(6);
  },
  async crossover(after) {
    // past n = r the linear path pays: softmax's quadratic path costs more than twice elu+1's linear one
    const soft = (await lesson('crossover', '&n=256&variant=softmax')).readouts.cost;
    expect(soft.quad_madds / after.readouts.cost.linear_madds).toBeGreaterThan(2);
  },
  async 'performer-m'(after, before) {
    const ratio = after.readouts.error_fro_rel / before.readouts.error_fro_rel; // 1/√4 in expectation
    expect(ratio).toBeGreaterThan(0.3);
    expect(ratio).toBeLessThan(0.7);
  },
  async 'memory-collisions'(after, before) {
    // the noise is √((N − 1)/d): twice d, √2 less error (3 draws a point: within 10 %)
    const m = await mechUntil((x) => x?.recall?.done && x.recall.points.some((p) => p.axis === 'N' && p.N === 512 && p.d === 64));
    const lin = m.recall.points.find((p) => p.axis === 'N' && p.memory === 'linear' && p.N === 512 && p.d === 64).mean;
    expect(Math.abs(lin / Math.sqrt(511 / 64) - 1)).toBeLessThan(0.1);
    expect(Math.abs(after.readouts.recall_linear / before.readouts.recall_linear * Math.SQRT2 - 1)).toBeLessThan(0.1);
  },
  async 'window-rank'(after, before) {
    expect(before.readouts.semiseparable_rank).toBe(7);
    expect(after.readouts.semiseparable_rank).toBeLessThanOrEqual(31); // W − 1 at most (29: the corners' weights fall below the tolerance)
    expect(after.readouts.semiseparable_rank).toBeGreaterThanOrEqual(3 * before.readouts.semiseparable_rank);
    expect(after.readouts.rank).toBeGreaterThan(240);
    expect(before.readouts.rank).toBeGreaterThan(240); // "near full either way"
  },
  async 'gate-vs-decay'(after, before) {
    expect(before.readouts.semiseparable_rank).toBe(0);
    expect(after.gates).toMatchObject({ kind: 'constant', resets: [] });
    expect(after.readouts.semiseparable_rank).toBe(16); // a constant decay never cuts
  },

};

/** A lesson on the real model, opened with no model loaded: the panel asks for the files (outlined, with the
 * model panel's own button), the panel "what the model loses" is not there, and the lab keeps working. */
async function noModel(s) {
  expect(s.loses).toBe(null);
  expect(Number.isFinite(s.readouts.error_fro_rel)).toBe(true); // the generators' inputs, as before
  const line = await page.evaluate(() => {
    const e = document.querySelector('#lesson .lesson-model');
    const b = e.getBoundingClientRect();
    return { hidden: e.hidden, hl: e.classList.contains('hl'), text: e.textContent, pick: e.querySelector('label.file-button')?.htmlFor, h: b.height };
  });
  expect(line.hidden).toBe(false);
  expect(line.hl).toBe(true);
  expect(line.h).toBeGreaterThan(0);
  expect(line.text).toMatch(/stories260K\.bin and tok512\.bin/);
  expect(line.text).toMatch(/drop them on the page/);
  expect(line.pick).toBe('model-files');
  expect(await page.evaluate(() => document.getElementById('loses').hidden)).toBe(true);
  // the strip names what it will show, with '—' until then
  const ev = await page.$$eval('#lesson .lesson-evidence li', (li) => li.map((x) => x.querySelector('.ev-value').textContent));
  expect(ev.length).toBeGreaterThan(0);
  for (const v of ev) expect(v).toBe('—');
}

/** The snapshot, and with the recall view open each memory's error at N = pairs once it has finished
 *  (`recall_<memory>`, what a prediction's explanation may quote). */
async function shown() {
  const s = await page.evaluate(() => window.attnviz.snapshot());
  if (s.state.mech !== 'recall') return s;
  const [N, d] = [Number(s.state.pairs), Number(s.state.mem_d)];
  const m = await mechUntil((x) => x?.recall?.done && x.recall.points.some((p) => p.axis === 'N' && p.N === N && p.d === d));
  for (const p of m.recall.points) if (p.axis === 'N' && p.N === N && p.d === d) s.readouts[`recall_${p.memory}`] = p.mean;
  return s;
}

/** Wait for the mechanism views (window.attnviz.mechanisms()) to show what `pred` asks. */
async function mechUntil(pred, timeout = 60000) {
  const t0 = Date.now();
  for (;;) {
    const m = await page.evaluate(() => window.attnviz.mechanisms());
    if (pred(m)) return m;
    if (Date.now() - t0 > timeout) throw new Error(`timed out: ${JSON.stringify(m).slice(0, 300)}`);
    await page.waitForTimeout(100);
  }
}

describe('the lessons', () => {
  it('every preset has a claim checked here, a caption of two to four sentences and a source', () => {
    expect(Object.keys(CLAIMS).sort()).toEqual(PRESETS.map((p) => p.name).sort());
    for (const p of PRESETS) {
      const sentences = p.caption.split(/(?<=[.!?:])\s+(?=[A-Z(])/).length;
      expect(sentences, p.name).toBeGreaterThanOrEqual(2);
      expect(sentences, p.name).toBeLessThanOrEqual(5);
      expect(p.sources.length, p.name).toBeGreaterThan(0);
    }
  });

  it('a page opened without a link shows the first lesson, with its caption', async () => {
    const s = await page.evaluate(() => window.attnviz.snapshot());
    expect(s.state.gen).toBe('local');
    expect(s.state.variant).toBe('elu');
    expect(Object.keys(s.state)).not.toContain('preset');
    const p = await panel();
    expect(p.hidden).toBe(false);
    expect(p.title).toMatch(/First look/);
    expect(new URL(page.url()).hash).toMatch(/^#preset=first-look&v=1&/);
    await page.screenshot({ path: 'build/e2e/lesson-first-look-1024.png' });
  });

  for (const p of PRESETS) {
    it(`${p.name}: ${p.title}`, async () => {
      const s = await lesson(p.name);
      for (const [k, v] of Object.entries(p.state)) expect(s.state[k], k).toBe(String(v));
      const shown = await panel();
      expect(shown.hidden).toBe(false);
      expect(shown.title).toBe(p.title);
      expect(shown.caption).toBe(p.caption);
      for (const c of p.sources) expect(shown.source).toContain(c.seed ? plainQuote(c.quote) : c.arxiv ? `arXiv:${c.arxiv}` : c.paper); // every source, quoted
      expect(shown.outlined.sort()).toEqual([...p.highlight, ...(p.model ? ['model'] : [])].sort()); // and the files' line
      await CLAIMS[p.name](s);
      expect(errors).toEqual([]);
    });
  }

  it('every lesson draws every character it shows (the Chinese quotes need a CJK font: make deps)', async () => {
    const missing = [];
    for (const p of PRESETS) {
      await lesson(p.name);
      // the lesson panel is what changes from lesson to lesson (the rest of the page: lab.test.mjs, a11y.test.mjs)
      for (const m of (await fontReport(page, { root: '#lesson', canvas: false })).missing) missing.push(`${p.name}: ${m.code} ${m.char} in "${m.text}"`);
    }
    expect(missing, 'drawn as empty boxes').toEqual([]);
  });

  it('every prediction has its claim checked here, a right answer among its choices and reveal keys of the schema', () => {
    expect(Object.keys(PREDICTIONS).sort()).toEqual(PRESETS.filter((p) => p.predict).map((p) => p.name).sort());
    for (const p of PRESETS.filter((x) => x.predict)) {
      expect(p.predict.choices[p.predict.answer], p.name).toBeTruthy();
      expect(Object.keys(p.predict.reveal).length, p.name).toBeGreaterThan(0);
    }
  });

  for (const p of PRESETS.filter((x) => x.predict)) {
    const pick = p.name === 'rank-le-d' ? 0 : p.predict.answer; // one wrong guess, the rest right
    it(`${p.name}: predict, then reveal: the guess is judged and the explanation quotes the revealed numbers`, async () => {
      await lesson(p.name);
      const before = await shown();
      const q = page.locator('#lesson .lesson-predict');
      expect(await q.isVisible()).toBe(true);
      expect(await q.locator('.predict-q').textContent()).toContain(p.predict.question);
      expect(await q.locator('.predict-choice').allTextContents()).toEqual(p.predict.choices);
      await q.locator(`.predict-choice[data-choice="${pick}"]`).click();
      await expect.poll(() => q.locator('.predict-verdict').getAttribute('data-right'), { timeout: 30000 }).toBe(String(pick === p.predict.answer));
      const after = await shown();
      for (const [k, v] of Object.entries(p.predict.reveal)) expect(after.state[k], k).toBe(String(v));
      for (const [k, v] of Object.entries(p.state)) if (!(k in p.predict.reveal)) expect(after.state[k], k).toBe(String(v));
      expect((await panel()).title).toBe(p.title); // the lesson stays open on the revealed state
      const text = await q.locator('.predict-verdict').textContent();
      expect(text).toMatch(pick === p.predict.answer ? /^Right\. / : /^Not quite: the answer is “/);
      // every number it quotes is the snapshot's (before and after the reveal)
      const quoted = [...p.predict.explanation.matchAll(/\{([\w.-]+)\}/g)].map((m) => m[1]);
      expect(quoted.length).toBeGreaterThan(1);
      for (const path of quoted) {
        const [src, key] = path.startsWith('before.') ? [before, path.slice(7)] : [after, path];
        if (key === 'cost') { expect(text).toMatch(/linear is [\d.,]+× cheaper/); continue; }
        const v = key.startsWith('state.') ? src.state[key.slice(6)] : src.readouts[key];
        expect(v, path).not.toBe(undefined);
        expect(text, path).toContain(typeof v === 'number' && !Number.isInteger(v) ? String(Number(v.toPrecision(3))) : String(v));
      }
      await page.screenshot({ path: `build/e2e/lesson-predict-${p.name}-1024.png` });
      await PREDICTIONS[p.name](after, before);
      // the lesson's own link asks again
      await lesson(p.name);
      await page.click('#lesson .lesson-reset');
      await expect.poll(() => q.locator('.predict-verdict').textContent()).toBe('');
      expect(errors).toEqual([]);
    }, 60000);
  }

  it('a prediction compares the lesson\'s own state with the reveal, and its verdict goes when the state does', async () => {
    // the reader (or ▶) moved m to 4096 first: the answer still speaks of m = 256 against m = 1024
    await lesson('performer-m', '&m=4096');
    const q = page.locator('#lesson .lesson-predict');
    await q.locator(`.predict-choice[data-choice="${presetOf('performer-m').predict.answer}"]`).click();
    await expect.poll(() => q.locator('.predict-verdict').getAttribute('data-right'), { timeout: 30000 }).toBe('true');
    const text = await q.locator('.predict-verdict').textContent();
    expect(text).toMatch(/m = 1024/);
    expect(text).toMatch(/m = 256/);
    expect(text).not.toMatch(/4096/);
    // Back to the state before the reveal: the verdict no longer holds, so the question is asked again
    await page.goBack();
    await expect.poll(() => q.locator('.predict-verdict').textContent(), { timeout: 20000 }).toBe('');
    expect(await q.locator('.predict-choice').first().isDisabled()).toBe(false);
    expect(errors).toEqual([]);
  }, 60000);

  it('explicit keys in a link win over the preset, an unknown lesson is reported, closing keeps the state', async () => {
    let s = await at('preset=rank-le-d&d=32');
    expect(s.state.d).toBe('32');
    expect(s.readouts.rank).toBeLessThanOrEqual(32);
    expect(s.readouts.rank).toBeGreaterThan(16);
    s = await at('preset=no-such-lesson&variant=relu');
    expect(s.state.variant).toBe('relu');
    expect(await page.$eval('#notice', (e) => e.textContent)).toMatch(/unknown lesson "no-such-lesson"/);
    expect((await panel()).hidden).toBe(true);
    s = await lesson('dwc-rank');
    await page.click('#lesson .lesson-close');
    const after = await page.evaluate(() => window.attnviz.snapshot());
    expect(after.state).toEqual(s.state);
    expect((await panel()).hidden).toBe(true);
    expect(new URL(page.url()).hash).not.toMatch(/preset=/);
    expect(errors).toEqual([]);
  });

  it('a sweep in progress is dropped when the state changes; the finished one is the new state\'s', async () => {
    await lesson('performer-m');
    await page.evaluate(() => { location.hash = 'preset=performer-m&sweep_y=row_entropy_mean&sweep_seeds=2&std=0.7'; });
    const sw = await page.evaluate(() => window.attnviz.sweep());
    expect([sw.readout, sw.seeds]).toEqual(['row_entropy_mean', 2]);
    const s = await page.evaluate(() => window.attnviz.snapshot());
    expect(sw.mean[sw.values.indexOf(256)]).toBeCloseTo((await lesson('performer-m', '&std=0.7&rseed=0')).readouts.row_entropy_mean, 0);
    expect(s.state.std).toBe('0.7');
    await at('v=1&variant=elu&sweep=');
    expect(await page.evaluate(() => window.attnviz.sweep())).toBe(null);
    expect(errors).toEqual([]);
  });

  it('the menu opens by keyboard and its links open lessons', async () => {
    await lesson('first-look');
    await page.focus('#lessons summary');
    await page.keyboard.press('Enter');
    expect(await page.$eval('#lessons', (e) => e.open)).toBe(true);
    const links = await page.$$eval('#lessons a', (as) => as.map((a) => a.getAttribute('href')));
    expect(links).toEqual(PRESETS.map((p) => `#preset=${p.name}`));
    await page.click('#lessons a[data-preset="sink"]');
    const s = await page.evaluate(() => window.attnviz.snapshot());
    expect(s.state.gen).toBe('sink');
    expect(await page.$eval('#lessons', (e) => e.open)).toBe(false);
    await page.screenshot({ path: 'build/e2e/lesson-sink-1024.png' });
    await page.click('#lessons summary');
    await page.screenshot({ path: 'build/e2e/lesson-menu-1024.png' });
    await page.keyboard.press('Escape');
    expect(await page.$eval('#lessons', (e) => e.open)).toBe(false);
    expect(errors).toEqual([]);
  });

  it('projector mode at 1920×1080 shows the lesson and the heatmaps large', async () => {
    const big = await launch({ width: 1920, height: 1080 });
    const { page: p, errors: errs } = await openLab(big.context, server.url, { hash: 'preset=rank-le-d&projector=1' });
    await p.evaluate(() => window.attnviz.snapshot());
    const caption = await p.$eval('#lesson .lesson-caption', (e) => parseFloat(getComputedStyle(e).fontSize));
    expect(caption).toBeGreaterThanOrEqual(18);
    await p.screenshot({ path: 'build/e2e/lesson-projector-1920.png' });
    expect(errs).toEqual([]);
    await big.close();
  });
});

// Chapter 9 with stories260K given to the file input, as a reader gives it (tests/e2e/model.test.mjs): the
// measures on the page's own sample sentence (held out: the distillation trains on the panel's training text).
// The thresholds sit well inside the figures docs/lessons.md states and outside what the opposite claim gives.
describe.skipIf(!HAVE_STORIES)('the lessons on stories260K', { timeout: 300000 }, () => {
  const CLI = 'build/native/attnviz';
  const files = [join(STORIES, 'tok512.bin'), join(STORIES, 'stories260K.bin')];
  let mp;
  beforeAll(async () => {
    ({ page: mp } = await openLab(browser.context, server.url, { hash: 'preset=story-breaks' }));
    await mp.setInputFiles('#model-files', files);
    await mp.waitForFunction(() => !document.querySelector('#loses').hidden, null, { timeout: 60000 });
  });
  const open = async (name) => {
    await mp.evaluate((h) => { location.hash = h; }, `preset=${name}`);
    return mp.evaluate(() => window.attnviz.snapshot());
  };
  /** Poll snapshot().loses until `pred` holds (a distillation, the sensitivity map). */
  async function until(pred, timeout = 240000) {
    for (const t0 = Date.now(); ;) {
      const l = (await mp.evaluate(() => window.attnviz.snapshot())).loses;
      if (l && pred(l)) return l;
      if (Date.now() - t0 > timeout) throw new Error(`timed out: ${JSON.stringify(l)?.slice(0, 300)}`);
      await mp.waitForTimeout(250);
    }
  }
  /** The evidence strip as shown: [key, value, the original's]. */
  const strip = () => mp.$$eval('#lesson .lesson-evidence li', (li) => li.map((x) => [x.dataset.hl, x.querySelector('.ev-value').textContent, x.querySelector('.ev-compare').textContent]));
  const fmt4 = (x) => x.toFixed(4).replace(/^-/, '−');

  it('story-breaks: elu+1 in every head breaks the story', async () => {
    const l = (await open('story-breaks')).loses;
    expect([l.variant, l.swapped.length, l.positions, l.using_w]).toEqual(['elu', 40, 30, false]);
    expect(l.loss).toBeGreaterThan(3 * l.loss_original); // 2.584 against 0.549
    expect(l.loss_original).toBeGreaterThan(0.45); expect(l.loss_original).toBeLessThan(0.65);
    expect(l.loss).toBeGreaterThan(2.3); expect(l.loss).toBeLessThan(2.9);
    expect(l.kl_mean).toBeGreaterThan(1); // 2.02
    expect(l.top1_agreement).toBeGreaterThan(0.4); expect(l.top1_agreement).toBeLessThan(0.7); // "about half" (0.53)
    const c = l.continuation;
    expect(c.first_difference).toBe(0);
    expect(c.original.text.startsWith(' One day, Max saw a big box.')).toBe(true);
    expect(c.swapped.text.startsWith(" outs. outs, Lily's, Lily's")).toBe(true);
    expect(await mp.$$eval('#loses mark.ls-diff', (e) => e.length)).toBe(2);
    expect(await mp.inputValue('#model-text')).toMatch(/in the park\.$/);
    // the lesson panel: the line says the model is there; the strip is the panel's own digits
    expect(await mp.evaluate(() => document.querySelector('#lesson .lesson-model').classList.contains('hl'))).toBe(false);
    const ev = Object.fromEntries((await strip()).map(([k, v, o]) => [k, [v, o]]));
    expect(ev.ls_loss).toEqual([fmt4(l.loss), ` — original: ${fmt4(l.loss_original)}`]);
    expect(ev.ls_top1[0]).toBe(fmt4(l.top1_agreement));
    expect(ev.ls_cont[0]).toBe(c.swapped.pieces.join(''));
    await mp.screenshot({ path: 'build/e2e/lesson-story-breaks-model-1024.png' });
    if (existsSync(CLI) && /\blinearize\b/.test(String(spawnSync(CLI, ['--help']).stdout))) {
      const text = await mp.inputValue('#model-text');
      const cli = JSON.parse(execFileSync(CLI, ['linearize', '--model', files[1], '--tokenizer', files[0], '--text', text, '--variant', 'elu'], { encoding: 'utf8' }));
      expect(Math.abs(cli.loss - l.loss)).toBeLessThan(1e-9);
      expect(cli.continuation.swapped.ids).toEqual(c.swapped.ids);
    }
  });

  it('distill-recovers: distilled Hedgehog heads recover most of the loss, on held-out text', async () => {
    const elu = (await open('story-breaks')).loses;
    const before = (await open('distill-recovers')).loses;
    expect([before.variant, before.swapped.length, before.using_w]).toEqual(['hedgehog', 40, false]);
    expect(before.loss).toBeGreaterThan(elu.loss + 1); // W = I: 4.31 against elu+1's 2.58
    expect(before.loss).toBeGreaterThan(3.9); expect(before.loss).toBeLessThan(4.7);
    await mp.fill('#ls-steps', '100');
    const train = await mp.inputValue('#ls-train');
    expect(train).not.toContain(await mp.inputValue('#model-text')); // held out
    await mp.click('#ls-distill');
    const after = await until((l) => l.using_w && !l.distill?.running);
    expect([after.distill.steps, after.distill.lr, after.distill.heads.length]).toEqual([100, 0.05, 40]);
    expect(after.loss).toBeLessThan(elu.loss); // 1.35 against 2.58
    expect(after.loss).toBeLessThan(0.5 * before.loss);
    expect(after.loss).toBeGreaterThan(1.1); expect(after.loss).toBeLessThan(1.6);
    const recovered = (before.loss - after.loss) / (before.loss - after.loss_original);
    expect(recovered).toBeGreaterThan(0.67); // "four fifths" (0.79)
    expect(recovered).toBeLessThan(0.9);
    expect(after.loss).toBeGreaterThan(1.5 * after.loss_original); // still well above the original
    const mean = (k) => after.distill.heads.reduce((a, h) => a + h[k], 0) / after.distill.heads.length;
    expect(mean('heldout_kl')).toBeLessThan(mean('heldout_kl_elu')); // 0.80 against 1.06
    const ev = Object.fromEntries((await strip()).map(([k, v]) => [k, v]));
    expect(ev.ls_loss).toBe(fmt4(after.loss));
    expect(ev.ls_distill).toBe(await mp.textContent('#loses .ls-dist-note'));
    await mp.screenshot({ path: 'build/e2e/lesson-distill-recovers-model-1024.png' });
  });

  it('head-sensitivity: some heads matter more than others', async () => {
    const l0 = (await open('head-sensitivity')).loses;
    expect([l0.variant, l0.swapped.length]).toEqual(['elu', 40]);
    await mp.click('#ls-sens');
    const l = await until((x) => x.sensitivity);
    const by = l.sensitivity.by_head;
    expect(by.length).toBe(40);
    const sorted = [...by].sort((a, b) => a.delta_loss - b.delta_loss);
    expect([sorted.at(-1).layer, sorted.at(-1).head]).toEqual([4, 4]); // the worst: +0.042
    expect(sorted.at(-1).delta_loss).toBeGreaterThan(0.03); expect(sorted.at(-1).delta_loss).toBeLessThan(0.055);
    expect([sorted[0].layer, sorted[0].head]).toEqual([4, 6]); // the mildest: −0.014
    expect(sorted[0].delta_loss).toBeLessThan(-0.008); expect(sorted[0].delta_loss).toBeGreaterThan(-0.02);
    expect(by.filter((h) => h.delta_loss < 0).length).toBeGreaterThanOrEqual(12); // 16
    expect(by.filter((h) => h.delta_loss < 0).length).toBeLessThanOrEqual(20);
    const layers = l.sensitivity.by_layer.map((x) => x.delta_loss);
    expect(layers.indexOf(Math.max(...layers))).toBe(3);
    expect(layers.indexOf(Math.min(...layers))).toBe(1);
    expect(layers[3] / layers[1]).toBeGreaterThan(5); expect(layers[3] / layers[1]).toBeLessThan(11); // "about eight times" (8.1)
    const all = l.loss - l.loss_original; // 2.03
    expect(all).toBeGreaterThan(1.8); expect(all).toBeLessThan(2.3);
    const sum = by.reduce((a, h) => a + h.delta_loss, 0); // 0.17
    expect(sum).toBeLessThan(0.2 * all);
    expect(sum).toBeGreaterThan(0.12);
    const ev = Object.fromEntries((await strip()).map(([k, v]) => [k, v]));
    expect(ev.ls_sens).toBe(l.sensitivity.by_layer.map((x) => `L${x.layer} ${x.delta_loss.toFixed(2).replace(/^-/, '−')}`).join(' · '));
    await mp.screenshot({ path: 'build/e2e/lesson-head-sensitivity-model-1024.png' });
  });

  it('window-plus-linear: a window of exact scores plus a distilled linear rest', async () => {
    const elu = (await open('story-breaks')).loses;
    const before = (await open('window-plus-linear')).loses;
    expect([before.variant, before.swapped.length, before.using_w]).toEqual(['lolcats', 40, false]);
    expect(Number((await mp.evaluate(() => window.attnviz.snapshot())).state.window)).toBe(8);
    await mp.fill('#ls-steps', '100');
    await mp.click('#ls-distill');
    const after = await until((l) => l.using_w && !l.distill?.running && l.variant === 'lolcats');
    expect([after.distill.steps, after.distill.heads.length]).toEqual([100, 40]);
    // "falls to 0.552 against the original's 0.549, KL 0.05"
    expect(Math.abs(after.loss - after.loss_original)).toBeLessThan(0.02);
    expect(after.kl_mean).toBeLessThan(0.08); expect(after.kl_mean).toBeGreaterThan(0.03);
    expect(after.loss).toBeLessThan(0.4 * elu.loss); // elu+1: 2.58; the distilled Hedgehog alone (distill-recovers): 1.35
    // the window alone: 0.570, KL 0.087; the linear rest adds to it
    const alone = (await open('window-plus-linear&variant=softmax')).loses;
    expect([alone.variant, alone.using_w]).toEqual(['softmax', false]);
    expect(alone.kl_mean).toBeGreaterThan(0.07); expect(alone.kl_mean).toBeLessThan(0.11);
    expect(alone.loss).toBeGreaterThan(0.55); expect(alone.loss).toBeLessThan(0.6);
    expect(after.kl_mean).toBeLessThan(0.8 * alone.kl_mean);
    expect(after.loss).toBeLessThan(alone.loss);
    const back = (await open('window-plus-linear')).loses;
    const ev = Object.fromEntries((await strip()).map(([k, v]) => [k, v]));
    expect(ev.ls_loss).toBe(fmt4(back.loss));
    expect(ev.ls_kl).toBe(fmt4(back.kl_mean));
    await mp.screenshot({ path: 'build/e2e/lesson-window-plus-linear-model-1024.png' });
  });
});
if (!HAVE_STORIES) skipped('e2e lessons.test.mjs, chapter 9');
