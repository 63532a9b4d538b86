// cli-capture.mjs: small inputs for the CLI's tests: a float32 .npy writer and a synthetic 4-D "capture"
// (layers, heads, n, d), shaped like `attnviz capture`'s, so that every-head commands run without the
// real-model data; and the one way those tests run the CLI.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

/** The CLI under test: $ATTNVIZ_CLI (e.g. an older build, to see a test fail), else the build's. */
export const CLI = process.env.ATTNVIZ_CLI || new URL('../../build/native/attnviz', import.meta.url).pathname;

/** Run the CLI: {status, stdout, stderr}. */
export function run(...args) {
  const p = spawnSync(CLI, args, { encoding: 'utf8' });
  return { status: p.status, stdout: p.stdout, stderr: p.stderr };
}

/** Run the CLI, expect exit 0, and parse its stdout as JSON. */
export function json(...args) {
  const r = run(...args);
  expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
}

/** A float32 C-order .npy (version 1, header padded to 64 bytes). */
export function writeNpy(path, shape, data) {
  let dict = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - 11, ' ') + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head, 0);
  head[6] = 1;
  head.writeUInt16LE(dict.length, 8);
  writeFileSync(path, Buffer.concat([head, Buffer.from(dict, 'latin1'), Buffer.from(Float32Array.from(data).buffer)]));
  return path;
}

/** Deterministic values in (−scale, scale) (an LCG: variety, not quality). */
export function values(count, seed, scale = 1) {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 2 * scale;
  }
  return out;
}

/** A 4-D capture in dir: L layers, H query heads reading KVH KV heads, n tokens, head size d. */
export function capture(dir, seed, { L = 2, H = 4, KVH = 2, n = 16, d = 4 } = {}) {
  const f = (x) => join(dir, `${x}${seed}.npy`);
  writeNpy(f('q'), [L, H, n, d], values(L * H * n * d, seed, 1.5));
  writeNpy(f('k'), [L, KVH, n, d], values(L * KVH * n * d, seed + 101, 1.5));
  writeNpy(f('v'), [L, KVH, n, d], values(L * KVH * n * d, seed + 202));
  return { q: f('q'), k: f('k'), v: f('v'), L, H, KVH, n, d };
}
