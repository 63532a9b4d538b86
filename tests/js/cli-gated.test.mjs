// cli-gated.test.mjs: the gated families' inputs on the command line (issue 33; docs/gated.md): --gates,
// --betas, --a, --b, the presets mamba2 and rwkv7, --qk-l2norm / --no-qk-l2norm, recall and table with gates.
// Every refusal is exit 2, one line on stderr and no file written (an old one left as it was); the presets equal
// their families on the mapped inputs, byte for byte where the mapping is exact; O by every path is M·V.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';
import { run, json, writeNpy, values } from './cli-capture.mjs';

const N = 9, D = 4, DV = 3; // odd n, and chunks of 4 leave a partial one
let tmp, q, k, v;

/** A float64 C-order .npy. */
function writeNpy64(path, shape, data) {
  let dict = `{'descr': '<f8', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - 11, ' ') + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head, 0);
  head[6] = 1;
  head.writeUInt16LE(dict.length, 8);
  writeFileSync(path, Buffer.concat([head, Buffer.from(dict, 'latin1'), Buffer.from(Float64Array.from(data).buffer)]));
  return path;
}

const f = (name) => join(tmp, name);
/** Log-gates in (−0.6, 0] (and a reset at token 4), count of them. */
const gatesOf = (count, seed) => Array.from(values(count, seed, 0.3), (x, i) => (i === 4 ? -30 : -Math.abs(x) - 0.01 * (i % 3)));
const betasOf = (count, seed) => Array.from(values(count, seed, 0.9), (x) => Math.fround(1 + x)); // (0.1, 1.9)

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'attnviz-gated-'));
  q = writeNpy(f('q.npy'), [N, D], values(N * D, 11, 1.2));
  k = writeNpy(f('k.npy'), [N, D], values(N * D, 12, 1.2));
  v = writeNpy(f('v.npy'), [N, DV], values(N * DV, 13));
  writeNpy(f('g.npy'), [N], gatesOf(N, 21));
  writeNpy(f('g1.npy'), [N, 1], gatesOf(N, 21));
  writeNpy(f('gd.npy'), [N, D], gatesOf(N * D, 22));
  writeNpy(f('b.npy'), [N], betasOf(N, 23));
  writeNpy(f('a.npy'), [N, D], values(N * D, 24, 0.4));
  writeNpy(f('bb.npy'), [N, D], values(N * D, 25, 0.4));
});
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

/** The CLI's bytes of `matrix ... -o` (the .npy file). */
function matrixBytes(name, ...args) {
  const out = f(name);
  const r = run('matrix', '--q', q, '--k', k, ...args, '-o', out);
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(out);
}

/** Refused: exit 2, one line on stderr matching pattern, nothing on stdout. */
function refused(r, pattern) {
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^attnviz: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.status).toBe(2);
}

describe('refusals: exit 2, one sentence, nothing written', () => {
  const OLD = Buffer.from('an old file');
  /** Run matrix with -o and --out-o into fresh names; one of them holds an old file that must stay. */
  function matrixRefused(pattern, ...args) {
    const m = f(`m-${Math.random().toString(36).slice(2)}.npy`), o = f(`o-${Math.random().toString(36).slice(2)}.npy`);
    writeFileSync(o, OLD);
    refused(run('matrix', '--q', q, '--k', k, '--v', v, ...args, '-o', m, '--out-o', o, '--path', 'recurrent'), pattern);
    expect(existsSync(m)).toBe(false);
    expect(readFileSync(o)).toEqual(OLD);
  }

  it('a shape mismatch names the array, its shape and the shapes expected', () => {
    const bad = writeNpy(f('g10.npy'), [N + 1], gatesOf(N + 1, 21));
    matrixRefused(/--gates .*g10\.npy: shape \(10,\) does not fit n = 9, d = 4 \(expected \(9,\) or \(9, 1\)\)/, '--variant', 'gdn', '--gates', bad);
    const badB = writeNpy(f('b2.npy'), [N, 2], values(2 * N, 1, 0.5).map((x) => 1 + x));
    matrixRefused(/--betas .*b2\.npy: shape \(9, 2\) does not fit n = 9, d = 4 \(expected \(9,\)\)/, '--variant', 'gdn', '--betas', badB);
    const badA = writeNpy(f('a3.npy'), [N, 3], values(3 * N, 2));
    matrixRefused(/--a .*a3\.npy: shape \(9, 3\) does not fit n = 9, d = 4 \(expected \(9, 4\)\)/, '--variant', 'dplr', '--a', badA, '--b', f('bb.npy'));
  });

  it('a gate above 0: the first index and its value', () => {
    const g = gatesOf(N, 21);
    g[6] = 0.25;
    g[7] = 0.5;
    matrixRefused(/--gates .*gpos\.npy: entry \[6\] is 0\.25, out of range \(a log-gate is <= 0/, '--variant', 'simple_gla', '--gates', writeNpy(f('gpos.npy'), [N], g));
    const gd = gatesOf(N * D, 22);
    gd[2 * D + 3] = 1e-3;
    matrixRefused(/entry \[2, 3\] is 0\.001(0000\d*)?, out of range/, '--variant', 'kda', '--gates', writeNpy(f('gdpos.npy'), [N, D], gd));
  });

  it('a gate that is not finite', () => {
    const g = gatesOf(N, 21);
    g[1] = NaN;
    matrixRefused(/entry \[1\] is nan, not finite/, '--variant', 'gla', '--gates', writeNpy(f('gnan.npy'), [N], g));
  });

  it('a beta outside (0, 2]', () => {
    for (const bad of [0, 2.5, -1]) {
      const b = betasOf(N, 23);
      b[3] = bad;
      matrixRefused(new RegExp(`--betas .*: entry \\[3\\] is ${bad}, out of range \\(beta is in \\(0, 2\\]\\)`), '--variant', 'gdn', '--betas',
        writeNpy(f(`bad-beta-${bad}.npy`), [N], b));
    }
    const b = betasOf(N, 23);
    b[0] = 2; // the top of the range is allowed
    expect(run('matrix', '--variant', 'kda', '--q', q, '--k', k, '--betas', writeNpy(f('beta2.npy'), [N], b), '-o', f('m-b2.npy')).status).toBe(0);
  });

  it('a without b, b without a', () => {
    matrixRefused(/--a: needs --b too/, '--variant', 'dplr', '--a', f('a.npy'));
    matrixRefused(/--b: needs --a too/, '--variant', 'dplr', '--b', f('bb.npy'));
  });

  it('an array on a variant that does not read it', () => {
    matrixRefused(/--gates: retention does not read it \(read by the gated families: simple_gla, gla, gdn, kda, dplr, fox/, '--variant', 'retention', '--gates', f('g.npy'));
    matrixRefused(/--betas: simple_gla does not read it \(read by gdn and kda\)/, '--variant', 'simple_gla', '--betas', f('b.npy'));
    matrixRefused(/--a: gdn does not read it \(read by dplr and rwkv7\)/, '--variant', 'gdn', '--a', f('a.npy'), '--b', f('bb.npy'));
    matrixRefused(/--dt: gla does not read it \(read by the preset mamba2\)/, '--variant', 'gla', '--dt', f('b.npy'), '--A', '-1');
  });

  it('per-channel gates on a family with one gate per token', () => {
    for (const variant of ['simple_gla', 'gdn', 'fox', 'mamba2'])
      matrixRefused(/--gates .*gd\.npy: shape \(9, 4\) gives one gate per channel, but \w+ has one gate per token: \(9,\) or \(9, 1\)/,
        '--variant', variant, '--gates', f('gd.npy'));
  });

  it('the gated families exist only causal', () => {
    for (const variant of ['simple_gla', 'gla', 'gdn', 'kda', 'dplr', 'fox'])
      matrixRefused(new RegExp(`--no-causal: ${variant} exists only causal`), '--variant', variant, '--no-causal', '--gates', f('g.npy'));
  });

  it("mamba2's --dt and --A: both, A < 0, dt > 0, not with --gates", () => {
    matrixRefused(/--dt: needs --A X/, '--variant', 'mamba2', '--dt', f('b.npy'));
    matrixRefused(/--A: needs --dt DT\.npy/, '--variant', 'mamba2', '--A', '-1');
    matrixRefused(/--A 0\.5: not a number < 0/, '--variant', 'mamba2', '--dt', f('b.npy'), '--A', '0.5');
    matrixRefused(/--gates: not with --dt and --A/, '--variant', 'mamba2', '--dt', f('b.npy'), '--A', '-1', '--gates', f('g.npy'));
    const dt = betasOf(N, 23);
    dt[5] = -0.5;
    matrixRefused(/--dt .*: entry \[5\] is -0\.5, out of range \(Mamba-2's step size dt is > 0\)/, '--variant', 'mamba2', '--A', '-1', '--dt',
      writeNpy(f('dtneg.npy'), [N], dt));
  });

  it('4-D tensors: per-head arrays must have the tensors\' layers and heads', () => {
    const L = 2, H = 3;
    const q4 = writeNpy(f('q4.npy'), [L, H, N, D], values(L * H * N * D, 31, 1.2));
    const k4 = writeNpy(f('k4.npy'), [L, H, N, D], values(L * H * N * D, 32, 1.2));
    const g4 = writeNpy(f('g4bad.npy'), [L, H + 1, N], gatesOf(L * (H + 1) * N, 33));
    const m = f('m4bad.npy');
    refused(run('matrix', '--variant', 'gdn', '--q', q4, '--k', k4, '--layer', '1', '--head', '2', '--gates', g4, '-o', m),
      /--gates .*g4bad\.npy: shape \(2, 4, 9\) does not fit n = 9, d = 4 \(expected \(9,\) or \(9, 1\); per head \(2, 3, 9\) or \(2, 3, 9, 1\)\)/);
    expect(existsSync(m)).toBe(false);
  });
});

describe('the inputs as the families read them', () => {
  it('gates of shape (n) and (n, 1) are the same per-token gates; float64 files are read as float32', () => {
    const a = matrixBytes('m-n.npy', '--variant', 'gdn', '--gates', f('g.npy'));
    expect(matrixBytes('m-n1.npy', '--variant', 'gdn', '--gates', f('g1.npy'))).toEqual(a);
    writeNpy64(f('g64.npy'), [N], gatesOf(N, 21).map(Math.fround)); // the float32 values, stored as float64
    writeNpy64(f('b64.npy'), [N], betasOf(N, 23));
    expect(matrixBytes('m-64.npy', '--variant', 'gdn', '--gates', f('g64.npy'))).toEqual(a);
    expect(matrixBytes('m-64b.npy', '--variant', 'gdn', '--gates', f('g64.npy'), '--betas', f('b64.npy')))
      .toEqual(matrixBytes('m-32b.npy', '--variant', 'gdn', '--gates', f('g.npy'), '--betas', f('b.npy')));
  });

  it('the arrays change M (they are read), and no array is the constant case of --decay and --beta', () => {
    const base = matrixBytes('m-c.npy', '--variant', 'gdn');
    expect(matrixBytes('m-g.npy', '--variant', 'gdn', '--gates', f('g.npy'))).not.toEqual(base);
    const cg = writeNpy(f('gconst.npy'), [N], new Array(N).fill(Math.log(0.9)));
    const cb = writeNpy(f('bconst.npy'), [N], new Array(N).fill(0.75));
    matrixBytes('m-ca.npy', '--variant', 'gdn', '--gates', cg, '--betas', cb);
    matrixBytes('m-ck.npy', '--variant', 'gdn', '--decay', '0.9', '--beta', '0.75');
    const arrays = readNpy(f('m-ca.npy')), knobs = readNpy(f('m-ck.npy'));
    const scale = Math.max(...knobs.data.map(Math.abs));
    for (let i = 0; i < N * N; i++) expect(Math.abs(arrays.data[i] - knobs.data[i])).toBeLessThan(2e-6 * scale);
  });

  it('--qk-l2norm and --no-qk-l2norm: on by default for gdn and kda, off for the others; --no- is off, not the default', () => {
    const gdn = matrixBytes('l-gdn.npy', '--variant', 'gdn', '--gates', f('g.npy'));
    expect(matrixBytes('l-gdn-on.npy', '--variant', 'gdn', '--gates', f('g.npy'), '--qk-l2norm')).toEqual(gdn);
    expect(matrixBytes('l-gdn-off.npy', '--variant', 'gdn', '--gates', f('g.npy'), '--no-qk-l2norm')).not.toEqual(gdn);
    const gla = matrixBytes('l-gla.npy', '--variant', 'gla', '--gates', f('gd.npy'));
    expect(matrixBytes('l-gla-off.npy', '--variant', 'gla', '--gates', f('gd.npy'), '--no-qk-l2norm')).toEqual(gla);
    expect(matrixBytes('l-gla-on.npy', '--variant', 'gla', '--gates', f('gd.npy'), '--qk-l2norm')).not.toEqual(gla);
    refused(run('matrix', '--variant', 'gdn', '--q', q, '--k', k, '--qk-l2norm', '--no-qk-l2norm', '-o', f('l-x.npy')), /given twice/);
  });

  it('O by each path is M·V to float precision, for every family', () => {
    const V = readNpy(v).data;
    const cases = {
      simple_gla: ['--gates', f('g.npy')], gla: ['--gates', f('gd.npy')], gdn: ['--gates', f('g.npy'), '--betas', f('b.npy')],
      kda: ['--gates', f('gd.npy'), '--betas', f('b.npy')], dplr: ['--gates', f('gd.npy'), '--a', f('a.npy'), '--b', f('bb.npy')],
      fox: ['--gates', f('g.npy')], mamba2: ['--dt', f('b.npy'), '--A', '-0.7'], rwkv7: ['--gates', f('gd.npy')],
    };
    for (const [variant, extra] of Object.entries(cases)) {
      const paths = variant === 'fox' ? ['quadratic', 'recurrent', 'chunkwise'] : ['quadratic', 'linear', 'recurrent', 'chunkwise'];
      for (const path of paths) {
        const m = f(`mv-${variant}-${path}.npy`), o = f(`ov-${variant}-${path}.npy`);
        const r = run('matrix', '--variant', variant, '--q', q, '--k', k, '--v', v, ...extra, '--chunk', '4', '-o', m, '--out-o', o, '--path', path);
        expect(r.status, `${variant} ${path}: ${r.stderr}`).toBe(0);
        const M = readNpy(m).data, O = readNpy(o).data;
        let top = 0, err = 0;
        for (let i = 0; i < N; i++)
          for (let c = 0; c < DV; c++) {
            let s = 0;
            for (let j = 0; j < N; j++) s += M[i * N + j] * V[j * DV + c];
            top = Math.max(top, Math.abs(s));
            err = Math.max(err, Math.abs(s - O[i * DV + c]));
          }
        expect(top, `${variant} ${path}`).toBeGreaterThan(0);
        for (let i = 0; i < N; i++) for (let j = i + 1; j < N; j++) expect(M[i * N + j]).toBe(0); // causal
        expect(err / top, `${variant} ${path}`).toBeLessThan(1e-5);
      }
    }
    refused(run('matrix', '--variant', 'fox', '--q', q, '--k', k, '--v', v, '--gates', f('g.npy'), '-o', f('fx.npy'), '--out-o', f('fo.npy'), '--path', 'linear'),
      /--variant fox: /);
  });
});

describe('the presets', () => {
  it('mamba2 is simple_gla with scale 1 on q = C, k = dt·B, g = A·dt, byte for byte', () => {
    const A = -0.7, dt = betasOf(N, 23), B = readNpy(k).data;
    const kB = Float32Array.from(B, (x, e) => x * dt[Math.floor(e / D)]);
    const g = Float32Array.from(dt, (x) => A * x);
    writeNpy(f('k-dtB.npy'), [N, D], kB);
    writeNpy(f('g-Adt.npy'), [N], g);
    const preset = matrixBytes('mamba2.npy', '--variant', 'mamba2', '--dt', f('b.npy'), '--A', String(A));
    const r = run('matrix', '--variant', 'simple_gla', '--scale', '1', '--q', q, '--k', f('k-dtB.npy'), '--gates', f('g-Adt.npy'), '-o', f('sgla.npy'));
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(f('sgla.npy'))).toEqual(preset);
    // without --dt: the gates from --gates, the keys as given
    expect(matrixBytes('mamba2-g.npy', '--variant', 'mamba2', '--gates', f('g.npy')))
      .toEqual(matrixBytes('sgla-g.npy', '--variant', 'simple_gla', '--scale', '1', '--gates', f('g.npy')));
    // --scale still sets it
    expect(matrixBytes('mamba2-s.npy', '--variant', 'mamba2', '--gates', f('g.npy'), '--scale', '0.5'))
      .toEqual(matrixBytes('sgla-s.npy', '--variant', 'simple_gla', '--scale', '0.5', '--gates', f('g.npy')));
  });

  it('rwkv7 is dplr with scale 1, a = −k/|k|, b = (k/|k|)·a_icl', () => {
    const K = readNpy(k).data;
    for (const [flags, icl] of [[[], () => 0.5], [['--a-icl', '0.25'], () => 0.25],
      [['--a-icl-file', writeNpy(f('icl.npy'), [N, D], values(N * D, 41, 0.45).map((x) => 0.5 + x))], (e) => readNpy(f('icl.npy')).data[e]]]) {
      const a = new Float32Array(N * D), b = new Float32Array(N * D);
      for (let t = 0; t < N; t++) {
        let s = 0;
        for (let c = 0; c < D; c++) s += K[t * D + c] ** 2;
        for (let c = 0; c < D; c++) {
          const kappa = K[t * D + c] / Math.sqrt(s);
          a[t * D + c] = -kappa;
          b[t * D + c] = kappa * icl(t * D + c);
        }
      }
      writeNpy(f('ra.npy'), [N, D], a);
      writeNpy(f('rb.npy'), [N, D], b);
      matrixBytes('rwkv7.npy', '--variant', 'rwkv7', '--gates', f('gd.npy'), ...flags);
      matrixBytes('dplr.npy', '--variant', 'dplr', '--scale', '1', '--gates', f('gd.npy'), '--a', f('ra.npy'), '--b', f('rb.npy'));
      const preset = readNpy(f('rwkv7.npy')).data, fam = readNpy(f('dplr.npy')).data;
      const top = Math.max(...fam.map(Math.abs));
      expect(top).toBeGreaterThan(0);
      for (let e = 0; e < N * N; e++) expect(Math.abs(preset[e] - fam[e]), `${flags} ${e}`).toBeLessThan(1e-5 * top);
    }
    // given a and b, rwkv7 is dplr with scale 1 on them, byte for byte
    expect(matrixBytes('rwkv7-ab.npy', '--variant', 'rwkv7', '--gates', f('gd.npy'), '--a', f('a.npy'), '--b', f('bb.npy')))
      .toEqual(matrixBytes('dplr-ab.npy', '--variant', 'dplr', '--scale', '1', '--gates', f('gd.npy'), '--a', f('a.npy'), '--b', f('bb.npy')));
    refused(run('matrix', '--variant', 'rwkv7', '--q', q, '--k', k, '--a-icl', '1.5', '-o', f('x.npy')), /--a-icl 1\.5: not a number in \(0, 1\]/);
    refused(run('matrix', '--variant', 'rwkv7', '--q', q, '--k', k, '--a-icl', '0.5', '--a', f('a.npy'), '--b', f('bb.npy'), '-o', f('x.npy')),
      /--a-icl: not with --a and --b/);
  });

  it('the JSON names the preset and its family', () => {
    const o = json('readouts', '--variant', 'rwkv7', '--q', q, '--k', k, '--gates', f('gd.npy'));
    expect(o.variant).toBe('rwkv7');
    expect(o.family).toBe('dplr');
    const s = json('sweep', '--variant', 'mamba2', '--knob', 'decay', '--values', '0.8,0.9', '--q', q, '--k', k, '--readout', 'semiseparable_rank');
    expect([s.variant, s.family]).toEqual(['mamba2', 'simple_gla']);
    const plain = json('readouts', '--variant', 'gdn', '--q', q, '--k', k);
    expect(plain.variant).toBe('gdn');
    expect('family' in plain).toBe(false);
  });
});

describe('readouts, sweep, table and recall with gates', () => {
  it('a reset (g = −30) cuts the semiseparable rank across it to 0', () => {
    const g = new Array(N).fill(-0.05);
    g[5] = -30; // token 5 forgets everything before it
    const reset = writeNpy(f('reset.npy'), [N], g);
    const o = json('readouts', '--variant', 'simple_gla', '--q', q, '--k', k, '--gates', reset);
    expect(o.semiseparable_rank).toBeGreaterThan(0); // elsewhere the blocks are rank ≥ 1
    matrixBytes('reset-m.npy', '--variant', 'simple_gla', '--gates', reset);
    const M = readNpy(f('reset-m.npy')).data;
    const top = Math.max(...M.map(Math.abs));
    for (let i = 5; i < N; i++) for (let j = 0; j < 5; j++) expect(Math.abs(M[i * N + j])).toBeLessThan(1e-12 * top);
  });

  it('sweep --knob qk_l2norm --values 0,1: 0 is off (printed as 0), 1 on', () => {
    const s = json('sweep', '--variant', 'gdn', '--knob', 'qk_l2norm', '--values', '0,1', '--q', q, '--k', k, '--gates', f('g.npy'),
      '--readouts', 'effective_rank,semiseparable_rank');
    expect(s.values).toEqual([0, 1]);
    const off = json('readouts', '--variant', 'gdn', '--q', q, '--k', k, '--gates', f('g.npy'), '--no-qk-l2norm');
    const on = json('readouts', '--variant', 'gdn', '--q', q, '--k', k, '--gates', f('g.npy'));
    expect(s.results.effective_rank.mean).toEqual([off.effective_rank, on.effective_rank]);
    refused(run('sweep', '--variant', 'gdn', '--knob', 'decay', '--values', '0.8,0.9', '--q', q, '--k', k, '--gates', f('g.npy')),
      /--knob decay: --gates replaces it/);
    refused(run('sweep', '--variant', 'kda', '--knob', 'beta', '--values', '0.5,1', '--q', q, '--k', k, '--betas', f('b.npy')),
      /--knob beta: --betas replaces it/);
  });

  it('table: each array goes to the variants that read it, and is named in their knobs', () => {
    const r = run('table', '--variants', 'retention,gdn,kda', '--q', q, '--k', k, '--gates', f('g.npy'), '--betas', f('b.npy'),
      '--readouts', 'effective_rank', '--format', 'jsonl');
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const by = Object.fromEntries(rows.map((x) => [x.variant, x]));
    expect(by.retention.knobs).not.toMatch(/gates/);
    expect(by.gdn.knobs).toMatch(/gates=given;betas=given/);
    expect(by.gdn.knobs).not.toMatch(/decay=|beta=/);
    expect(by.gdn.value).toBe(json('readouts', '--variant', 'gdn', '--q', q, '--k', k, '--gates', f('g.npy'), '--betas', f('b.npy')).effective_rank);
    refused(run('table', '--variants', 'retention,softmax', '--causal', '--q', q, '--k', k, '--gates', f('g.npy')), /--gates: no variant of --variants reads it/);
    const p = run('table', '--variants', 'mamba2,simple_gla', '--q', q, '--k', k, '--readouts', 'effective_rank', '--format', 'jsonl');
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout.trim().split('\n').map((l) => JSON.parse(l).variant)).toEqual(['mamba2', 'simple_gla']);
    const w = run('table', '--variants', 'rwkv7,mamba2', '--q', q, '--k', k, '--dt', f('b.npy'), '--A', '-0.5', '--a-icl', '0.25',
      '--readouts', 'effective_rank', '--format', 'jsonl');
    expect(w.status, w.stderr).toBe(0);
    const knobs = Object.fromEntries(w.stdout.trim().split('\n').map((l) => JSON.parse(l)).map((x) => [x.variant, x.knobs]));
    expect(knobs.rwkv7).toMatch(/a_icl=0\.25/);
    expect(knobs.rwkv7).not.toMatch(/ab=|dt=/);
    expect(knobs.mamba2).toMatch(/dt=given;A=-0\.5/);
    expect(knobs.mamba2).not.toMatch(/gates=|a_icl/);
  });

  it('4-D tensors: an array shared by every head, or per head, is the 2-D run on that head', () => {
    const L = 2, H = 3, KVH = 3;
    const Q4 = values(L * H * N * D, 31, 1.2), K4 = values(L * KVH * N * D, 32, 1.2), G4 = gatesOf(L * H * N, 33);
    const q4 = writeNpy(f('q4.npy'), [L, H, N, D], Q4), k4 = writeNpy(f('k4.npy'), [L, KVH, N, D], K4);
    const g4 = writeNpy(f('g4.npy'), [L, H, N], G4);
    const l = 1, h = 2, off = ((l * H + h) * N) * D;
    const q2 = writeNpy(f('q2.npy'), [N, D], Q4.slice(off, off + N * D)), k2 = writeNpy(f('k2.npy'), [N, D], K4.slice(off, off + N * D));
    const g2 = writeNpy(f('g2.npy'), [N], G4.slice((l * H + h) * N, (l * H + h + 1) * N));
    const four = (g, name) => {
      const r = run('matrix', '--variant', 'gdn', '--q', q4, '--k', k4, '--layer', String(l), '--head', String(h), '--gates', g, '-o', f(name));
      expect(r.status, r.stderr).toBe(0);
      return readFileSync(f(name));
    };
    const two = (g, name) => {
      const r = run('matrix', '--variant', 'gdn', '--q', q2, '--k', k2, '--gates', g, '-o', f(name));
      expect(r.status, r.stderr).toBe(0);
      return readFileSync(f(name));
    };
    expect(four(g4, 'h4.npy')).toEqual(two(g2, 'h2.npy'));
    expect(four(f('g.npy'), 'h4s.npy')).toEqual(two(f('g.npy'), 'h2s.npy'));
    const all = json('readouts', '--all-heads', '--variant', 'gdn', '--q', q4, '--k', k4, '--gates', g4, '--summary');
    expect(all.readouts[l][h].effective_rank).toBe(json('readouts', '--variant', 'gdn', '--q', q2, '--k', k2, '--gates', g2).effective_rank);
  });

  it('recall for each gated family, with gates of length N per pair', () => {
    for (const variant of ['simple_gla', 'gla', 'gdn', 'kda', 'dplr', 'fox', 'mamba2', 'rwkv7']) {
      const o = json('recall', '--variant', variant, '--pairs', String(N), '--d', String(D), '--seeds', '2');
      expect(o.variant).toBe(variant);
      expect(Number.isFinite(o.recall_error_mean), variant).toBe(true);
    }
    // resets at every pair: only the last pair is left in the memory, read back exactly (unit keys, scale 1)
    const reset = writeNpy(f('reset-all.npy'), [N], new Array(N).fill(-30));
    const K = readNpy(k).data, unit = new Float32Array(N * D);
    for (let t = 0; t < N; t++) {
      const r = Math.hypot(...K.slice(t * D, t * D + D));
      for (let c = 0; c < D; c++) unit[t * D + c] = K[t * D + c] / r;
    }
    const ku = writeNpy(f('kunit.npy'), [N, D], unit), vu = writeNpy(f('vN.npy'), [N, D], values(N * D, 51));
    const o = json('recall', '--variant', 'simple_gla', '--k', ku, '--v', vu, '--gates', reset);
    expect(o.errors[N - 1]).toBeLessThan(1e-6);
    refused(run('recall', '--variant', 'gdn', '--pairs', '8', '--d', '4', '--gates', f('g.npy')), /--gates .*g\.npy: shape \(9,\) does not fit n = 8/);
    refused(run('recall', '--variant', 'mamba2', '--pairs', '8', '--d', '4', '--dt', f('b.npy'), '--A', '-1'), /--dt: not an option of recall/);
  });
});

describe('--help', () => {
  it('lists the gated inputs, the presets and the qk_l2norm switch', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    for (const s of ['--gates G.npy', '--betas B.npy', '--a A.npy --b B.npy', 'mamba2', 'rwkv7', '--dt DT.npy', '--a-icl X', '--a-icl-file',
      '--qk-l2norm, --no-qk-l2norm', 'None is required'])
      expect(r.stdout).toContain(s);
  });
});
