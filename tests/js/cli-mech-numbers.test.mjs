// cli-mech-numbers.test.mjs: every number `attnviz recall` and `attnviz distill` print is the value of its
// definition (docs/mechanisms.md) or null with a count or a sentence that says why, never a statistic taken
// over Inf or NaN as if they were not there, nor memory the library never wrote (issue 27 follow-ups A, B).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = process.env.ATTNVIZ_CLI || new URL('build/native/attnviz', ROOT).pathname;
const DBL_MAX = '1.7976931348623157e308';

let tmp, gq, gk;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'attnviz-mechnum-'));
  const g = spawnSync(CLI, ['generate', '--gen', 'gaussian', '--n', '6', '--d', '2', '-o', join(tmp, 'g')], { encoding: 'utf8' });
  if (g.status !== 0) throw new Error(g.stderr);
  gq = join(tmp, 'g', 'q.npy');
  gk = join(tmp, 'g', 'k.npy');
});
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

function run(...args) {
  const p = spawnSync(CLI, args, { encoding: 'utf8' });
  return { status: p.status, stdout: p.stdout, stderr: p.stderr, lines: p.stderr.split('\n').filter(Boolean) };
}

/** A float32 (rows, cols) .npy of these values. */
function npy(name, rows, cols, values) {
  let head = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${cols}), }`;
  head += ' '.repeat(63 - ((10 + head.length) % 64)) + '\n';
  const hb = Buffer.alloc(10);
  hb.write('\x93NUMPY', 0, 'latin1');
  hb[6] = 1;
  hb.writeUInt16LE(head.length, 8);
  const path = join(tmp, name);
  writeFileSync(path, Buffer.concat([hb, Buffer.from(head, 'latin1'), Buffer.from(Float32Array.from(values).buffer)]));
  return path;
}

const mean = (x) => x.reduce((a, b) => a + b, 0) / x.length;

describe('recall: summaries over the draws', () => {
  it('all draws finite: mean, min, max and the sample std of the per-draw errors; all S draws counted', () => {
    const r = run('recall', '--variant', 'elu', '--pairs', '8', '--d', '4', '--seeds', '3');
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout), per = o.recall_error;
    expect(o.status).toBe('ok');
    expect(o.recall_error_finite).toBe(3);
    expect(o.recall_error_mean).toBeCloseTo(mean(per), 14);
    expect(o.recall_error_min).toBe(Math.min(...per));
    expect(o.recall_error_max).toBe(Math.max(...per));
    const m = mean(per), sd = Math.sqrt(per.reduce((a, x) => a + (x - m) ** 2, 0) / 2);
    expect(o.recall_error_std).toBeCloseTo(sd, 14);
  });

  it('one draw: the sample std is undefined (null), not 0', () => {
    const o = JSON.parse(run('recall', '--variant', 'elu', '--pairs', '8', '--d', '4').stdout);
    expect(o.recall_error_mean).toBe(o.recall_error[0]);
    expect(o.recall_error_std).toBe(null);
  });

  it('softmax at scale DBL_MAX: no statistic of a draw whose errors are NaN, and the warning named', () => {
    const r = run('recall', '--variant', 'softmax', '--pairs', '4', '--d', '4', '--seeds', '1', '--scale', DBL_MAX);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    for (const k of ['recall_error_mean', 'recall_error_min', 'recall_error_max', 'recall_error_std']) expect(o[k], k).toBe(null);
    expect(o.recall_error).toEqual([null]);
    expect(o.recall_error_finite).toBe(0);
    expect(o.status).toMatch(/^a product .*exceeded the float32 range/);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^attnviz: warning: recall: a product .*exceeded .* \(in 1 of 1 draws\)$/);
  });

  it('retention at scale 1e38, 3 draws of which some overflow: min, max, mean and std null, the finite ones counted', () => {
    const r = run('recall', '--variant', 'retention', '--pairs', '4', '--d', '4', '--seeds', '3', '--scale', '1e38');
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    const finite = o.recall_error.filter((x) => x !== null).length;
    expect(finite).toBeLessThan(3);
    expect(o.recall_error_finite).toBe(finite);
    // a min over the finite draws alone was printed as the min over all three
    for (const k of ['recall_error_mean', 'recall_error_min', 'recall_error_max', 'recall_error_std']) expect(o[k], k).toBe(null);
    expect(o.status).not.toBe('ok');
    expect(r.lines.join('\n')).toMatch(new RegExp(`\\(in ${3 - finite} of 3 draws\\)`));
  });
});

describe('distill: the loss, its ends and the warning say what happened', () => {
  it('a softmax target that overflows (scale 1e300): no step taken, no loss printed as a number, W the start', () => {
    const w = join(tmp, 'w-target.npy');
    const r = run('distill', '--q', gq, '--k', gk, '--steps', '3', '--scale', '1e300', '-o', w);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.loss).toEqual([null, null, null, null]); // it printed [0, 0, 0, null]: memory never written
    expect(o.loss_start).toBe(null);
    expect(o.steps_taken).toBe(0);
    expect(o.status).not.toBe('ok');
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^attnviz: warning: distill: the softmax target .*; no step was taken/);
    expect(r.lines[0]).toContain(o.status);
    expect(Array.from(readNpy(w).data)).toEqual([1, 0, 0, 1]);
  });

  it('lr 1e308: step 1\'s update would take W past float32\'s range; refused, W.npy the finite start, one clear line', () => {
    // the library takes the step (W about ±1e308 fits a double); W.npy is float32, so the CLI refuses it
    // (it wrote 16 of 16 entries Inf, exit 0, status "…(W is W after 1 step)")
    const w = join(tmp, 'w-lr.npy');
    const r = run('distill', '--q', gq, '--k', gk, '--steps', '3', '--lr', '1e308', '-o', w);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.steps_taken).toBe(0);
    expect(o.loss[0]).toBeGreaterThan(0);
    expect(o.loss.slice(1, 3)).toEqual([null, null]);
    expect(o.loss_end).toBe(o.loss[0]); // the loss at the W written: the start
    expect(o.status).toBe("step 1's update would take W past float32's range; W.npy holds W after 0 steps");
    expect(r.lines).toEqual([`attnviz: warning: distill: ${o.status}`]);
    expect(Array.from(readNpy(w).data)).toEqual([1, 0, 0, 1]);
  });

  it('lr 1e308 from a trained W: refused at its first step, W.npy keeps that W bit for bit', () => {
    const w1 = join(tmp, 'w-one.npy'), w = join(tmp, 'w-lr2.npy');
    expect(run('distill', '--q', gq, '--k', gk, '--steps', '1', '-o', w1).status).toBe(0);
    const r = run('distill', '--q', gq, '--k', gk, '--hedgehog-w', w1, '--steps', '2', '--lr', '1e308', '-o', w);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.steps_taken).toBe(0);
    expect(o.status).toBe("step 1's update would take W past float32's range; W.npy holds W after 0 steps");
    expect(Array.from(readNpy(w).data)).toEqual(Array.from(readNpy(w1).data));
  });

  it('lr DBL_MAX on these inputs: step 1\'s update would leave the double range; refused, W the start, not "loss not finite"', () => {
    // found by search: Adam's first step is lr·g/(|g| + ε)·(1 + rounding of the bias corrections), past DBL_MAX
    const q = npy('pq.npy', 3, 2, [-0.6733092069625854, -0.7575424313545227, -0.2197147011756897, -0.4465532600879669, 0.37157630920410156, 0.8038355112075806]);
    const k = npy('pk.npy', 3, 2, [10.033585548400879, -22.26357078552246, 2.47452449798584, 7.102939605712891, -6.507130146026611, -2.290996789932251]);
    const W0 = [0.8947509527206421, -3.1721675395965576, -0.9712059497833252, -1.9369926452636719];
    const w0 = npy('pw0.npy', 2, 2, W0), w = join(tmp, 'w-prod.npy');
    const r = run('distill', '--q', q, '--k', k, '--hedgehog-w', w0, '--causal', '--steps', '3', '--lr', DBL_MAX, '-o', w);
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.steps_taken).toBe(0);
    expect(Number.isFinite(o.loss[0])).toBe(true); // the loss was finite: the old sentence blamed it
    expect(o.loss.slice(1, 3)).toEqual([null, null]);
    expect(o.loss_end).toBe(o.loss[0]);
    expect(r.lines).toEqual([`attnviz: warning: distill: ${o.status}`]);
    expect(o.status).toBe("step 1's update would take W past the double range (the learning rate is too large); W.npy holds W after 0 steps");
    expect(Array.from(readNpy(w).data)).toEqual(W0.map(Math.fround));
  });

  it('0 steps from a W whose loss is not finite: loss_end null and a status that is not "ok"', () => {
    const w0 = npy('w0-huge.npy', 2, 2, [3e38, -3e38, -3e38, 3e38]);
    const r = run('distill', '--q', gq, '--k', gk, '--steps', '0', '--hedgehog-w', w0, '-o', join(tmp, 'w0.npy'));
    expect(r.status).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.loss_end).toBe(null);
    expect(o.status).not.toBe('ok');
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^attnviz: warning: distill: the loss at the W in W.npy is not finite/);
  });
});
