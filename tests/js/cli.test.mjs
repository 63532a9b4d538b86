// cli.test.mjs: the native command-line tool (build/native/attnviz; ATTNVIZ_CLI overrides the path):
// --help, generate, matrix on 2-D and on 4-D model tensors, one-line errors with exit status 2 (bad input)
// or 1 (the system failed), outputs that replace a file only on success, and a failed stdout.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, lstatSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';
import { STORIES, skipped } from './shared-data.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = process.env.ATTNVIZ_CLI || new URL('build/native/attnviz', ROOT).pathname;
const MODEL = STORIES;
if (!existsSync(MODEL)) skipped('Vitest cli.test.mjs: stories260K head L1H3 to 1e-5');

let tmp;
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'attnviz-cli-')); });
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

function run(...args) {
  const p = spawnSync(CLI, args, { encoding: 'utf8' });
  return { status: p.status, stdout: p.stdout, stderr: p.stderr };
}

/** A float32 .npy (C order unless fortran), version 1, header padded to 64 bytes like numpy's. */
function writeNpy(path, shape, data, { fortran = false, descr = '<f4' } = {}) {
  const shp = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': ${fortran ? 'True' : 'False'}, 'shape': ${shp}, }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - 11, ' ') + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head, 0);
  head[6] = 1;
  head.writeUInt16LE(dict.length, 8);
  const body = descr === '<i4' ? Buffer.from(Int32Array.from(data).buffer) : Buffer.from(Float32Array.from(data).buffer);
  writeFileSync(path, Buffer.concat([head, Buffer.from(dict, 'latin1'), body]));
  return path;
}

/** Deterministic pseudo-random values (a small LCG; the test needs variety, not quality). */
function values(count, seed) {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 2;
  }
  return out;
}

/** Row softmax of scale·Q·Kᵀ (optionally causal), Q and K n×d flat, in float64. */
function softmaxRef(Q, K, n, d, causal) {
  const M = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const lim = causal ? i + 1 : n;
    let mx = -Infinity;
    for (let j = 0; j < lim; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += Q[i * d + k] * K[j * d + k];
      M[i * n + j] = s / Math.sqrt(d);
      mx = Math.max(mx, M[i * n + j]);
    }
    let sum = 0;
    for (let j = 0; j < lim; j++) sum += (M[i * n + j] = Math.exp(M[i * n + j] - mx));
    for (let j = 0; j < lim; j++) M[i * n + j] /= sum;
  }
  return M;
}

function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe('attnviz --help', () => {
  it('documents every command, variant, generator and knob', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    // the commands and the flags of the CLI's own; the variants and knobs come from the registry, whose
    // agreement with --help tests/js/registry.test.mjs checks in detail
    const words = [
      'matrix', 'readouts', 'generate',
      '--variant', '--q', '--k', '--v', '--hedgehog-w', '--layer',
      '--head', '--accurate', '--tau', '--out-o', '-o', '--gen', '--n', '--d', '--std',
      'gaussian', 'clustered', 'local', 'lowrank', 'sink',
    ];
    for (const w of words) expect(r.stdout, w).toMatch(new RegExp(`(^|[\\s(,])${w.replace(/[-]/g, '\\-')}\\b`));
    expect(run('matrix', '--help').stdout).toBe(r.stdout);
  });
});

describe('attnviz generate', () => {
  it('writes q.npy, k.npy, v.npy of shape (n, d), float32, reproducible by seed', () => {
    const dir = join(tmp, 'gen');
    const r = run('generate', '--gen', 'lowrank', '--n', '23', '--d', '7', '--std', '0.5', '--seed', '9', '-o', dir);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    for (const f of ['q.npy', 'k.npy', 'v.npy']) {
      const a = readNpy(join(dir, f));
      expect(a.shape).toEqual([23, 7]);
      expect(a.data).toBeInstanceOf(Float32Array);
      expect(a.data.every(Number.isFinite)).toBe(true);
    }
    const again = join(tmp, 'gen2');
    expect(run('generate', '--gen', 'lowrank', '--n', '23', '--d', '7', '--std', '0.5', '--seed', '9', '-o', again).status).toBe(0);
    expect(readFileSync(join(again, 'q.npy')).equals(readFileSync(join(dir, 'q.npy')))).toBe(true);
    const other = join(tmp, 'gen3');
    expect(run('generate', '--gen', 'lowrank', '--n', '23', '--d', '7', '--std', '0.5', '--seed', '10', '-o', other).status).toBe(0);
    expect(readFileSync(join(other, 'q.npy')).equals(readFileSync(join(dir, 'q.npy')))).toBe(false);
  });
});

describe('attnviz matrix', () => {
  it('writes the softmax matrix of generated inputs, and M·V with --out-o', () => {
    const dir = join(tmp, 'gm');
    expect(run('generate', '--n', '19', '--d', '5', '--seed', '3', '-o', dir).status).toBe(0);
    const out = join(tmp, 'm.npy'), outO = join(tmp, 'o.npy');
    const r = run('matrix', '--variant', 'softmax', '--causal', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'),
      '--v', join(dir, 'v.npy'), '-o', out, '--out-o', outO);
    expect(r.status).toBe(0);
    const M = readNpy(out), O = readNpy(outO);
    expect(M.shape).toEqual([19, 19]);
    expect(O.shape).toEqual([19, 5]);
    const Q = readNpy(join(dir, 'q.npy')).data, K = readNpy(join(dir, 'k.npy')).data;
    expect(maxAbsDiff(M.data, softmaxRef(Q, K, 19, 5, true))).toBeLessThan(1e-6);
  });

  it('selects a layer and a query head of 4-D model tensors (head h reads KV head h·kv/heads)', () => {
    const [L, H, KVH, n, d] = [2, 4, 2, 6, 3];
    const q = values(L * H * n * d, 1), k = values(L * KVH * n * d, 2), v = values(L * KVH * n * d, 3);
    const qp = writeNpy(join(tmp, 'mq.npy'), [L, H, n, d], q);
    const kp = writeNpy(join(tmp, 'mk.npy'), [L, KVH, n, d], k);
    const vp = writeNpy(join(tmp, 'mv.npy'), [L, KVH, n, d], v);
    const out = join(tmp, 'mm.npy');
    for (const [layer, head] of [[1, 3], [0, 1], [1, 2]]) {
      const r = run('matrix', '--variant', 'softmax', '--q', qp, '--k', kp, '--v', vp, '--layer', String(layer),
        '--head', String(head), '-o', out);
      expect(r.status).toBe(0);
      const kvh = Math.floor((head * KVH) / H);
      const Q = q.subarray((layer * H + head) * n * d, (layer * H + head + 1) * n * d);
      const K = k.subarray((layer * KVH + kvh) * n * d, (layer * KVH + kvh + 1) * n * d);
      const M = readNpy(out);
      expect(M.shape).toEqual([n, n]);
      expect(maxAbsDiff(M.data, softmaxRef(Q, K, n, d, false))).toBeLessThan(1e-6);
    }
  });

  it('prints a numerical warning on one line but still writes the matrix and exits 0', () => {
    const neg = values(8 * 3, 11).map((x) => -1 - Math.abs(x)); // relu(q) = 0: every row's normaliser is ε only
    const qp = writeNpy(join(tmp, 'negq.npy'), [8, 3], neg), kp = writeNpy(join(tmp, 'negk.npy'), [8, 3], values(24, 12));
    const out = join(tmp, 'warn.npy');
    const r = run('matrix', '--variant', 'relu', '--q', qp, '--k', kp, '-o', out);
    expect(r.status).toBe(0);
    const lines = r.stderr.split('\n').filter((x) => x.length > 0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^attnviz: warning: relu: /);
    expect(readNpy(out).shape).toEqual([8, 8]);
  });

  it.skipIf(!existsSync(MODEL))('reproduces stories260K head L1H3 (causal softmax) to 1e-5', () => {
    const out = join(tmp, 'l1h3.npy');
    const r = run('matrix', '--variant', 'softmax', '--causal', '--q', join(MODEL, 'text128_q.npy'),
      '--k', join(MODEL, 'text128_k.npy'), '--v', join(MODEL, 'text128_v.npy'), '--layer', '1', '--head', '3', '-o', out);
    expect(r.status).toBe(0);
    const ref = readNpy(join(MODEL, 'text128_att_selected.npy'));
    const M = readNpy(out);
    expect(M.shape).toEqual([128, 128]);
    expect(maxAbsDiff(M.data, ref.data.subarray(128 * 128, 2 * 128 * 128))).toBeLessThan(1e-5);
  });
});

describe('attnviz readouts', () => {
  it('parses the same inputs and prints one JSON object (stdout, or the -o file)', () => {
    const dir = join(tmp, 'gr');
    expect(run('generate', '--gen', 'sink', '--n', '17', '--d', '6', '-o', dir).status).toBe(0);
    const args = ['readouts', '--variant', 'elu', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy')];
    const r = run(...args, '--accurate', '--tau', '0.2');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.n).toBe(17);
    const file = join(tmp, 'r.json');
    const r2 = run(...args, '-o', file);
    expect(r2.status).toBe(0);
    expect(r2.stdout).toBe('');
    expect(JSON.parse(readFileSync(file, 'utf8')).n).toBe(17);
    const bad = run(...args, '--tau', '-1');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^attnviz: --tau -1/);
  });
});

describe('errors: one line on stderr, exit status 2 for bad input and 1 when the system fails', () => {
  let q, k, kBad, fortran, ints, mq, mk;
  beforeAll(() => {
    q = writeNpy(join(tmp, 'bq.npy'), [9, 4], values(36, 4));
    k = writeNpy(join(tmp, 'bk.npy'), [9, 4], values(36, 5));
    kBad = writeNpy(join(tmp, 'bk5.npy'), [9, 5], values(45, 6));
    fortran = writeNpy(join(tmp, 'bf.npy'), [9, 4], values(36, 7), { fortran: true });
    ints = writeNpy(join(tmp, 'bi.npy'), [9, 4], new Array(36).fill(1), { descr: '<i4' });
    mq = writeNpy(join(tmp, 'bmq.npy'), [2, 4, 9, 4], values(288, 8));
    mk = writeNpy(join(tmp, 'bmk.npy'), [2, 2, 9, 4], values(144, 9));
  });
  const out = () => join(tmp, 'never.npy');
  const cases = [
    ['unknown variant', () => ['matrix', '--variant', 'softmaxx', '--q', q, '--k', k, '-o', out()], /--variant softmaxx/],
    ['missing --q', () => ['matrix', '--variant', 'softmax', '--k', k, '-o', out()], /--q/],
    ['missing -o', () => ['matrix', '--variant', 'softmax', '--q', q, '--k', k], /-o/],
    ['Fortran-order .npy', () => ['matrix', '--variant', 'softmax', '--q', q, '--k', fortran, '-o', out()], /Fortran/],
    ['int32 .npy', () => ['matrix', '--variant', 'softmax', '--q', ints, '--k', k, '-o', out()], /dtype '<i4'/],
    ['mismatched shapes', () => ['matrix', '--variant', 'softmax', '--q', q, '--k', kBad, '-o', out()], /--k .*shape \(9, 5\)/],
    ['--p 0 for focused', () => ['matrix', '--variant', 'focused', '--p', '0', '--q', q, '--k', k, '-o', out()], /--p 0/],
    ['--p 11 for focused', () => ['matrix', '--variant', 'focused', '--p', '11', '--q', q, '--k', k, '-o', out()], /--p 11/],
    ['--s beyond n for linformer', () => ['matrix', '--variant', 'linformer', '--s', '10', '--q', q, '--k', k, '-o', out()], /--s 10/],
    ['causal linformer', () => ['matrix', '--variant', 'linformer', '--causal', '--q', q, '--k', k, '-o', out()], /--causal: linformer/],
    ['unknown --ef', () => ['matrix', '--variant', 'linformer', '--ef', 'uniform', '--q', q, '--k', k, '-o', out()], /--ef uniform/],
    ['--layer out of range', () => ['matrix', '--variant', 'softmax', '--q', mq, '--k', mk, '--layer', '2', '--head', '0', '-o', out()], /--layer 2/],
    ['--head out of range', () => ['matrix', '--variant', 'softmax', '--q', mq, '--k', mk, '--layer', '0', '--head', '4', '-o', out()], /--head 4/],
    ['4-D without --layer', () => ['matrix', '--variant', 'softmax', '--q', mq, '--k', mk, '-o', out()], /--layer/],
    ['unknown option', () => ['matrix', '--variant', 'softmax', '--q', q, '--k', k, '--bogus', '-o', out()], /--bogus/],
    ['unknown command', () => ['matrx'], /matrx/],
    ['no command', () => [], /command/],
    ['unknown generator', () => ['generate', '--gen', 'uniform', '--n', '4', '--d', '4', '-o', join(tmp, 'g')], /--gen uniform/],
    ['generate --std 0', () => ['generate', '--n', '4', '--d', '4', '--std', '0', '-o', join(tmp, 'g')], /--std 0/],
  ];
  const system = [ // the system failed: exit status 1
    ['nonexistent file', () => ['matrix', '--variant', 'softmax', '--q', join(tmp, 'nope.npy'), '--k', k, '-o', out()], /nope\.npy.*cannot open/],
    ['-o in a missing directory (AV_ERR_IO)', () => ['matrix', '--variant', 'softmax', '--q', q, '--k', k, '-o', join(tmp, 'no', 'm.npy')], /cannot write/],
    ['generate into a missing parent (AV_ERR_IO)', () => ['generate', '--n', '4', '--d', '4', '-o', join(tmp, 'no', 'dir')], /cannot create/],
  ];
  for (const [name, args, pattern, status] of [...cases.map((c) => [...c, 2]), ...system.map((c) => [...c, 1])]) {
    it(`${name} (exit ${status})`, () => {
      const r = run(...args());
      expect(r.status).toBe(status);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n').filter((s) => s.length > 0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^attnviz: /);
      expect(lines[0]).toMatch(pattern);
      expect(existsSync(out())).toBe(false);
    });
  }
});

describe('out of memory (AV_ERR_NOMEM)', () => {
  // the real allocation failure, under an address-space limit; sanitizer builds (ATTNVIZ_CLI) reserve
  // terabytes of shadow memory and cannot run under ulimit -v, so this runs on the plain build only.
  // n = 2048 needs 16 MB for M alone, over a 12 MB limit whatever the process's own baseline (about 4 MB
  // here); the control is a small n under the same limit, not the big n without it: that one computed
  // readouts at n = 4096 (30 s of CPU) and failed by the test's timeout on a busy machine.
  const LIMIT_KB = 12000;
  const limited = (...args) => spawnSync('bash', ['-c', `ulimit -v ${LIMIT_KB}; exec "$0" "$@"`, CLI, ...args], { encoding: 'utf8' });
  it.skipIf(!!process.env.ATTNVIZ_CLI)('readouts at n = 2048 under a 12 MB limit: one line, exit 1, no output', () => {
    const dir = join(tmp, 'big');
    expect(run('generate', '--n', '2048', '--d', '8', '-o', dir).status).toBe(0);
    const p = limited('readouts', '--variant', 'elu', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'));
    expect(p.status).toBe(1);
    expect(p.stdout).toBe('');
    expect(p.stderr.trim().split('\n')).toEqual(['attnviz: out of memory (n = 2048)']);
    // with -o, the old file stays as it was and no temporary is left beside it
    const file = join(dir, 'r.json');
    writeFileSync(file, 'old');
    const pf = limited('readouts', '--variant', 'elu', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '-o', file);
    expect(pf.status).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('old');
    expect(readdirSync(dir).sort()).toEqual(['k.npy', 'q.npy', 'r.json', 'v.npy']);
    // the same command on n = 512 (1 MB for M) succeeds under the same limit, so the size is what failed it
    const small = join(tmp, 'small');
    expect(run('generate', '--n', '512', '--d', '8', '-o', small).status).toBe(0);
    const ok = limited('readouts', '--variant', 'elu', '--q', join(small, 'q.npy'), '--k', join(small, 'k.npy'));
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).n).toBe(512);
  });
});

describe('outputs are replaced only on success', () => {
  // a file-size limit (ulimit -f, in 512-byte blocks, with SIGXFSZ ignored) makes a write fail part way
  const limited = (blocks, ...args) => spawnSync('bash', ['-c', `trap '' XFSZ; ulimit -f ${blocks}; exec "$0" "$@"`, CLI, ...args],
    { encoding: 'utf8' });

  it('matrix --out-o: when O cannot be written, M is not replaced either', () => {
    const dir = join(tmp, 'outo');
    expect(run('generate', '--n', '8', '--d', '64', '-o', dir).status).toBe(0);
    const m = join(dir, 'm.npy'), o = join(dir, 'o.npy');
    writeFileSync(m, 'old');
    // M is 8×8 (384 bytes, fits in one block), O is 8×64 (2,176 bytes, does not)
    const r = limited(1, 'matrix', '--variant', 'softmax', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'),
      '--v', join(dir, 'v.npy'), '-o', m, '--out-o', o);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^attnviz: --out-o .*o\.npy: cannot write \(File too large\)\n$/);
    expect(readFileSync(m, 'utf8')).toBe('old');
    expect(existsSync(o)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['k.npy', 'm.npy', 'q.npy', 'v.npy']);
    // without the limit both are written
    const ok = run('matrix', '--variant', 'softmax', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'),
      '--v', join(dir, 'v.npy'), '-o', m, '--out-o', o);
    expect(ok.status).toBe(0);
    expect(readNpy(m).shape).toEqual([8, 8]);
    expect(readNpy(o).shape).toEqual([8, 64]);
  });

  it('generate: a failed write leaves no folder behind', () => {
    const dir = join(tmp, 'gen-fails');
    const r = limited(0, 'generate', '--n', '16', '--d', '8', '-o', dir);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(dir)).toBe(false);
  });

  it('generate: a bad argument creates nothing', () => {
    const dir = join(tmp, 'gen-bad');
    expect(run('generate', '--n', '16', '--d', '0', '-o', dir).status).toBe(2);
    expect(existsSync(dir)).toBe(false);
  });

  it('a failed write to standard output is an error (exit 1), not a silent 0', () => {
    const dir = join(tmp, 'full');
    expect(run('generate', '--n', '6', '--d', '3', '-o', dir).status).toBe(0);
    const fd = openSync('/dev/full', 'w');
    const p = spawnSync(CLI, ['readouts', '--variant', 'elu', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy')],
      { encoding: 'utf8', stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    expect(p.status).toBe(1);
    expect(p.stderr).toBe('attnviz: standard output: cannot write (No space left on device)\n');
  });
});

describe('overflow: the reason names what overflowed', () => {
  it('cosFormer with huge queries against denormal keys: finite factors and their spectrum', () => {
    const q = writeNpy(join(tmp, 'ovq.npy'), [2, 1], [1e33, 1]), k = writeNpy(join(tmp, 'ovk.npy'), [2, 1], [1e-40, 1e-40]);
    const r = run('readouts', '--variant', 'cosformer', '--q', q, '--k', k);
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.status).toEqual([]);
    expect(json.factor_rank).toBe(2);
    expect(json.singular_values_factor[0]).toBeCloseTo(json.singular_values[0], 5);
  });

  it('relu on inputs near 1e30: q·k overflowed (a product), and every missing value says the matrix overflowed', () => {
    const big = new Array(12).fill(1e30);
    const q = writeNpy(join(tmp, 'big.npy'), [3, 4], big);
    const r = run('readouts', '--variant', 'relu', '--q', q, '--k', q);
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.status[0]).toMatch(/^matrix: a product .*exceeded the float32 range/);
    expect(json.singular_values_reason).toMatch(/^the matrix holds Inf or NaN: a product/);
    expect(json.rank_reason).toMatch(/^the matrix holds Inf or NaN/);
    expect(JSON.stringify(json)).not.toMatch(/the input holds|an exponential/);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^attnviz: warning: matrix, softmax reference: a product/); // one line per sentence, every step named
  });
});

describe('attnviz sweep', () => {
  let q, k;
  beforeAll(() => {
    const dir = join(tmp, 'sweep');
    expect(run('generate', '--n', '48', '--d', '8', '--std', '0.5', '--seed', '5', '-o', dir).status).toBe(0);
    [q, k] = ['q', 'k'].map((x) => join(dir, `${x}.npy`));
  });
  const readout = (key, ...args) => JSON.parse(run('readouts', '--q', q, '--k', k, ...args).stdout)[key];

  it('each value and seed gives what attnviz readouts gives for it; min ≤ mean ≤ max over the seeds', () => {
    const r = run('sweep', '--variant', 'performer', '--knob', 'm', '--values', '8,64', '--seeds', '3', '--seed', '10',
      '--q', q, '--k', k);
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ variant: 'performer', knob: 'm', readout: 'error_fro_rel', seeds: 3, values: [8, 64] });
    for (const [i, m] of [8, 64].entries()) {
      const each = [10, 11, 12].map((s) => readout('error_fro_rel', '--variant', 'performer', '--m', String(m), '--seed', String(s)));
      expect(j.min[i]).toBe(Math.min(...each));
      expect(j.max[i]).toBe(Math.max(...each));
      expect(j.mean[i]).toBeCloseTo(each.reduce((a, b) => a + b) / 3, 14);
      expect(j.min[i]).toBeLessThan(j.max[i]); // the seeds really redraw ω
    }
  });

  it('Linformer with segment means: rank equals s; a readout by name; -o writes the file', () => {
    const file = join(tmp, 'sweep.json');
    const r = run('sweep', '--variant', 'linformer', '--ef', 'mean', '--knob', 's', '--values', '2,5,12', '--readout', 'rank',
      '--accurate', '--q', q, '--k', k, '-o', file);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    const j = JSON.parse(readFileSync(file, 'utf8'));
    expect(j.mean).toEqual([2, 5, 12]);
    expect(j.max).toEqual([2, 5, 12]);
  });

  it('refuses a bad knob, value or readout with one line and exit 2', () => {
    for (const [args, pattern] of [
      [['--knob', 'bogus', '--values', '1'], /^attnviz: --knob bogus/],
      [['--knob', 'p', '--values', '1,11'], /^attnviz: --values: value 2 "11": --p out of range/],
      [['--knob', 'p', '--values', '1,,2'], /^attnviz: --values/],
      [['--knob', 'p', '--values', '2', '--readout', 'nope'], /^attnviz: --readout nope/],
      [['--knob', 'p'], /^attnviz: --values: required/],
    ]) {
      const r = run('sweep', '--variant', 'focused', '--q', q, '--k', k, ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    }
  });
});

describe('outputs keep what the old file was: its mode, its links; an interrupted run leaves no temporary', () => {
  let q, k, dir;
  beforeAll(() => {
    dir = join(tmp, 'keep');
    expect(run('generate', '--n', '16', '--d', '4', '-o', dir).status).toBe(0);
    [q, k] = ['q', 'k'].map((x) => join(dir, `${x}.npy`));
  });

  it('an existing target keeps its permissions', () => {
    const out = join(dir, 'private.npy');
    writeFileSync(out, 'old');
    chmodSync(out, 0o600);
    expect(run('matrix', '--variant', 'softmax', '--q', q, '--k', k, '-o', out).status).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(readNpy(out).shape).toEqual([16, 16]);
  });

  it('a symbolic link is written through: the file it names is replaced, the link stays a link', () => {
    const real = join(dir, 'real.npy'), link = join(dir, 'link.npy');
    writeFileSync(real, 'old');
    symlinkSync(real, link);
    expect(run('matrix', '--variant', 'softmax', '--q', q, '--k', k, '-o', link).status).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readNpy(real).shape).toEqual([16, 16]);
  });

  it('SIGTERM during a long readouts -o removes the temporary and leaves the old file', async () => {
    const big = join(tmp, 'term');
    expect(run('generate', '--n', '1500', '--d', '16', '-o', big).status).toBe(0);
    const out = join(big, 'r.json');
    writeFileSync(out, 'old');
    const child = spawn(CLI, ['readouts', '--variant', 'elu', '--accurate', '--q', join(big, 'q.npy'), '--k', join(big, 'k.npy'),
      '-o', out]);
    const exited = new Promise((res) => child.on('exit', (c, sig) => res(sig ?? c)));
    // signal it once it has used 50 ms of CPU (in its computation, a few seconds long), not after a fixed
    // 300 ms of wall time: a fast machine finished first, a busy one had not yet started
    const stat = () => readFileSync(`/proc/${child.pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    const cpuTicks = (f) => Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (1/100 s)
    for (let f = stat(); f[0] !== 'Z' && cpuTicks(f) < 5; f = stat()) await new Promise((res) => setTimeout(res, 5));
    expect(stat()[0], 'readouts finished before it could be signalled').not.toBe('Z');
    child.kill('SIGTERM');
    const code = await exited;
    expect(code).toBe('SIGTERM');
    expect(readFileSync(out, 'utf8')).toBe('old');
    expect(readdirSync(big).sort()).toEqual(['k.npy', 'q.npy', 'r.json', 'v.npy']);
  });
});

describe('sweep follows the flags\' rules', () => {
  let q, k;
  beforeAll(() => {
    const dir = join(tmp, 'sweep2');
    expect(run('generate', '--n', '24', '--d', '6', '--std', '0.5', '-o', dir).status).toBe(0);
    [q, k] = ['q', 'k'].map((x) => join(dir, `${x}.npy`));
  });
  const sweep = (...args) => run('sweep', '--q', q, '--k', k, ...args);

  it('--knob seed with --seeds S redraws from each value: seed v, v+1, …', () => {
    const j = JSON.parse(sweep('--variant', 'performer', '--m', '8', '--knob', 'seed', '--values', '1,500', '--seeds', '2').stdout);
    const one = JSON.parse(sweep('--variant', 'performer', '--m', '8', '--knob', 'seed', '--values', '500,501').stdout);
    expect(j.min[1]).toBe(Math.min(...one.mean));
    expect(j.max[1]).toBe(Math.max(...one.mean));
    expect(j.mean[0]).not.toBe(j.mean[1]);
  });

  it('refuses what the flags refuse (a typed 0 that would mean the default, an unread knob), takes a real 0', () => {
    expect(sweep('--variant', 'performer', '--knob', 'm', '--values', '0,8').status).toBe(2);
    expect(sweep('--variant', 'softmax', '--knob', 'm', '--values', '8').stderr).toMatch(/softmax does not read it/);
    const z = sweep('--variant', 'performer', '--knob', 'feature_eps', '--values', '0,1e-4');
    expect(z.status).toBe(0);
    expect(JSON.parse(z.stdout).values).toEqual([0, 1e-4]);
  });

  it('a knob a variant does not read is ignored by matrix, whatever its value', () => {
    expect(run('matrix', '--variant', 'softmax', '--p', '0.5', '--q', q, '--k', k, '-o', join(tmp, 'ign.npy')).status).toBe(0);
    expect(run('matrix', '--variant', 'focused', '--p', '0.5', '--q', q, '--k', k, '-o', join(tmp, 'ign.npy')).stderr)
      .toMatch(/^attnviz: --p 0.5: out of range for focused/);
  });
});
