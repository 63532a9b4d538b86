// The latest-wins queue between the page and its worker, and the worker's randomized top-k spectrum.
import { describe, it, expect } from 'vitest';
import { createLatestSlot, createResultGate, createHold } from '../../web/workers/queue.mjs';
import { topSingularValues, symmetricEigenvalues } from '../../web/compute/topk.mjs';

describe('a job held until another worker answers', () => {
  it('keeps the newest job and lets it go on an answer to its request or a newer one, not an older one', () => {
    const hold = createHold();
    expect(hold.answered(1)).toBe(null); // nothing held
    hold.hold({ id: 3 });
    hold.hold({ id: 4 }); // a newer request replaces it
    expect(hold.answered(3)).toBe(null); // a late answer to an older request: still held
    expect(hold.held).toEqual({ id: 4 });
    expect(hold.answered(4)).toEqual({ id: 4 });
    expect(hold.answered(4)).toBe(null); // once
    hold.hold({ id: 5 });
    expect(hold.answered(9)).toEqual({ id: 5 }); // a newer request's answer
    hold.hold({ id: 6 });
    expect(hold.answered()).toEqual({ id: 6 }); // no id: at once (the other worker failed)
    hold.hold({ id: 7 });
    hold.clear();
    expect(hold.answered()).toBe(null);
    hold.hold({ id: 8 });
    expect(hold.answered(undefined)).toEqual({ id: 8 });
    hold.hold({ id: 9 });
    expect(hold.answered(NaN)).toBe(null); // not a request id
  });

  it('lets the newest go on an older answer once jobs have been held for maxWaitMs without a break', () => {
    let t = 0;
    const hold = createHold({ maxWaitMs: 100, now: () => t });
    hold.hold({ id: 1 });
    t = 60; hold.hold({ id: 2 }); // replaced: the run of held jobs began at 0
    t = 99; expect(hold.answered(1)).toBe(null); // an older answer, not yet 100 ms
    t = 100; expect(hold.answered(1)).toEqual({ id: 2 }); // 100 ms held: the newest goes
    t = 150; hold.hold({ id: 3 }); // a new run begins at 150
    t = 240; expect(hold.answered(2)).toBe(null);
    t = 250; expect(hold.answered(2)).toEqual({ id: 3 });
    t = 300; hold.hold({ id: 4 });
    expect(hold.answered(NaN)).toBe(null); // still not a request id, however long
    t = 1000; expect(hold.answered(NaN)).toBe(null);
    hold.clear();
    t = 1001; hold.hold({ id: 5 }); // cleared: a new run
    t = 1050; expect(hold.answered(4)).toBe(null);
  });
});

describe('worker slot: latest wins', () => {
  it('keeps only the newest waiting request', () => {
    const slot = createLatestSlot();
    for (let id = 1; id <= 5; id++) expect(slot.put({ id })).toBe(true);
    expect(slot.take()).toEqual({ id: 5 });
    expect(slot.take()).toBe(null);
    expect(slot.peek()).toBe(null);
  });
  it('tells a running job that a newer request arrived', () => {
    const slot = createLatestSlot();
    slot.put({ id: 1 });
    const job = slot.take();
    expect(slot.superseded(job.id)).toBe(false);
    slot.put({ id: 2 });
    expect(slot.superseded(job.id)).toBe(true);
    expect(slot.take().id).toBe(2);
    expect(slot.superseded(2)).toBe(false);
  });
  it('lets a running job peek at the waiting request without taking it', () => {
    const slot = createLatestSlot();
    expect(slot.peek()).toBe(null);
    slot.put({ id: 1, st: { n: 256 } });
    slot.put({ id: 2, st: { n: 512 } });
    expect(slot.peek()).toEqual({ id: 2, st: { n: 512 } });
    expect(slot.peek()).toEqual({ id: 2, st: { n: 512 } }); // still there
    expect(slot.take().id).toBe(2);
    expect(slot.peek()).toBe(null);
  });
  it('ignores a request older than one already seen', () => {
    const slot = createLatestSlot();
    slot.put({ id: 7 });
    expect(slot.put({ id: 3 })).toBe(false);
    expect(slot.take().id).toBe(7);
  });
  it('simulated drag: a slow worker computes the first and the last position only', () => {
    const slot = createLatestSlot();
    const computed = [];
    let busy = false;
    const run = () => { if (busy) return; const j = slot.take(); if (j) { busy = true; computed.push(j.id); } };
    const finish = () => { busy = false; run(); };
    for (let id = 1; id <= 10; id++) { slot.put({ id }); run(); }
    finish(); finish();
    expect(computed).toEqual([1, 10]);
  });
});

describe('page gate: stale results dropped', () => {
  it('shows results in order and drops older ones per part', () => {
    const g = createResultGate();
    const a = g.next(), b = g.next();
    expect(g.accept(b, 'spectrum')).toEqual({ deliver: true, stale: false });
    expect(g.accept(a, 'spectrum')).toEqual({ deliver: false, stale: true });
    expect(g.accept(a, 'frame')).toEqual({ deliver: true, stale: true });
    expect(g.accept(b, 'frame')).toEqual({ deliver: true, stale: false });
    expect(g.accept(99, 'frame').deliver).toBe(false);
    expect(g.accept(a, 'frame').deliver).toBe(false); // b's frame is on screen
  });
  it('a second part of the same job is still shown', () => {
    const g = createResultGate();
    const a = g.next();
    expect(g.accept(a, 'overlay-S').deliver).toBe(true);
    expect(g.accept(a, 'overlay-S').deliver).toBe(true);
  });
});

describe('top-k singular values', () => {
  it('Jacobi eigenvalues of a small symmetric matrix', () => {
    const G = Float64Array.from([4, 1, 0, 1, 3, 0, 0, 0, 1]);
    const ev = symmetricEigenvalues(G, 3);
    expect(ev[0]).toBeCloseTo((7 + Math.sqrt(5)) / 2, 12);
    expect(ev[1]).toBeCloseTo((7 - Math.sqrt(5)) / 2, 12);
    expect(ev[2]).toBeCloseTo(1, 12);
  });
  it('finds the planted spectrum of U·diag(σ)·Vᵀ', () => {
    const n = 96, sig = [10, 5, 2, 1, 0.5, 0.25];
    // orthonormal columns from a deterministic Gram–Schmidt of a fixed pattern
    const basis = (shift) => {
      const cols = [];
      for (let c = 0; c < sig.length; c++) {
        const v = new Float64Array(n);
        for (let i = 0; i < n; i++) v[i] = Math.sin((i + 1) * (c + 1 + shift) * 0.37) + 0.1 * Math.cos(i * (c + 2));
        for (const u of cols) { let d = 0; for (let i = 0; i < n; i++) d += v[i] * u[i]; for (let i = 0; i < n; i++) v[i] -= d * u[i]; }
        let nr = 0; for (let i = 0; i < n; i++) nr += v[i] * v[i]; nr = Math.sqrt(nr);
        for (let i = 0; i < n; i++) v[i] /= nr;
        cols.push(v);
      }
      return cols;
    };
    const U = basis(0), V = basis(3);
    const M = new Float64Array(n * n);
    for (let c = 0; c < sig.length; c++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) M[i * n + j] += sig[c] * U[c][i] * V[c][j];
    const { sv, fro2 } = topSingularValues(M, n, 4, 1);
    expect(sv.length).toBe(4);
    for (let i = 0; i < 4; i++) expect(Math.abs(sv[i] - sig[i]) / sig[i]).toBeLessThan(1e-9);
    expect(fro2).toBeCloseTo(sig.reduce((s, x) => s + x * x, 0), 9);
  });
});
