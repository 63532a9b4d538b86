// cli-files.test.mjs: what the native CLI (build/native/attnviz; ATTNVIZ_CLI overrides the path) does with
// the files and flags it is given (issue 27): an input that is a folder, a device or a pipe is refused
// before it is read; memory running out while reading a model is one line and exit 1 (it was a double
// free); empty or malformed lists and numbers are bad input.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNpy } from './npy.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = process.env.ATTNVIZ_CLI || new URL('build/native/attnviz', ROOT).pathname;
const SAN = new URL('build/native/attnviz_san', ROOT).pathname;
// sanitizer builds reserve terabytes of shadow memory and cannot run under ulimit -v
const UNDER_SAN = !!process.env.ATTNVIZ_CLI;
const LIMIT_KB = 1500000;
const canLimit = !UNDER_SAN && spawnSync('bash', ['-c', `ulimit -v ${LIMIT_KB}`]).status === 0;
if (!canLimit && !UNDER_SAN) console.warn('SKIPPED: out-of-memory reads (Vitest cli-files.test.mjs): bash cannot set ulimit -v here');
const strace = spawnSync('strace', ['-f', '-o', '/dev/null', '-e', 'inject=rename,renameat,renameat2:error=EIO:when=1', 'true']);
const canInject = strace.status === 0;
if (!canInject) console.warn('SKIPPED: failed renames (Vitest cli-files.test.mjs): strace cannot inject faults here (install strace)');

let tmp;
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'attnviz-files-')); });
afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

/** Run the CLI; under an address-space limit where bash can set one, so that a CLI that reads a device
 * until memory runs out cannot take the machine's memory with it. A hang (a pipe opened for reading)
 * ends after 20 s with status null. */
function run(...args) {
  const p = canLimit
    ? spawnSync('bash', ['-c', `ulimit -v ${LIMIT_KB}; exec "$0" "$@"`, CLI, ...args], { encoding: 'utf8', timeout: 20_000 })
    : spawnSync(CLI, args, { encoding: 'utf8', timeout: 20_000 });
  return { status: p.status, signal: p.signal, stdout: p.stdout, stderr: p.stderr };
}

/** One error line "attnviz: …" matching `pattern`, nothing on stdout, exit status `status`. */
function expectError(r, status, pattern) {
  expect(r.signal, r.stderr).toBe(null);
  expect(r.stderr).toMatch(/^attnviz: [^\n]*\n$/);
  expect(r.stderr).toMatch(pattern);
  expect(r.status, r.stderr).toBe(status);
  expect(r.stdout).toBe('');
}

/** A llama2.c checkpoint: dim 8, hidden 8, 1 layer, 2 heads, 2 KV heads, vocab 263, seq_len 16. */
function tinyModel() {
  const [dim, hid, layers, vocab, seq, hs] = [8, 8, 1, 263, 16, 4];
  const floats = vocab * dim + layers * (dim + 4 * dim * dim + dim + 3 * hid * dim) + dim + seq * hs;
  const dv = new DataView(new ArrayBuffer(28 + 4 * floats));
  [dim, hid, layers, 2, 2, vocab, seq].forEach((v, i) => dv.setInt32(4 * i, v, true));
  let x = 7;
  for (let i = 0; i < floats; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    dv.setFloat32(28 + 4 * i, 0.5 + (x / 2 ** 32) * 0.3, true); // positive: RMSNorm weights near 1 work too
  }
  return new Uint8Array(dv.buffer);
}

/** Its tokenizer: <unk>, BOS, EOS, the 256 byte pieces, ' ', 'h', 'i', 'hi'. */
function tinyTokenizer() {
  const pieces = ['<unk>', '\n<s>\n', '\n</s>\n', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`), ' ', 'h', 'i', 'hi'];
  const parts = [Buffer.from(new Int32Array([8]).buffer)];
  pieces.forEach((p, i) => {
    const head = Buffer.alloc(8);
    head.writeFloatLE(i < 259 ? 0 : i - 259, 0);
    head.writeInt32LE(Buffer.byteLength(p), 4);
    parts.push(head, Buffer.from(p));
  });
  return Buffer.concat(parts);
}

/** A sparse file of `bytes` (no disk used): a model or tokenizer too big for the memory limit. */
function sparse(path, bytes) {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, bytes);
  closeSync(fd);
  return path;
}

function mkfifo(path) {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  return path;
}

/** Everything in dir as {name: content or '<dir>'}, to compare before and after. */
function snapshot(dir) {
  const out = {};
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name)))
    out[e.name] = e.isDirectory() ? '<dir>' : readFileSync(join(dir, e.name), 'latin1');
  return out;
}

let M, T, gq, gk;
beforeAll(() => {
  M = join(tmp, 'm.bin');
  T = join(tmp, 't.bin');
  writeFileSync(M, tinyModel());
  writeFileSync(T, tinyTokenizer());
  const g = join(tmp, 'g');
  expect(run('generate', '--n', '6', '--d', '4', '-o', g).status).toBe(0);
  [gq, gk] = [join(g, 'q.npy'), join(g, 'k.npy')];
});

describe('inputs: a folder, a device or a pipe is refused before it is read (exit 2), nothing created', () => {
  it('the tiny model captures (the files the refusals below are measured against)', () => {
    const out = join(tmp, 'cap-ok');
    const r = run('capture', '--model', M, '--tokenizer', T, '--text', 'hi hi', '-o', out);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readNpy(join(out, 'q.npy')).shape).toEqual([1, 2, expect.any(Number), 4]);
  });

  const cases = [
    ['--model a folder', () => ['capture', '--model', tmp, '--tokenizer', T, '--text', 'hi', '-o', join(tmp, 'never')], /^attnviz: --model .*: a folder, not a file\n$/],
    ['--model /dev/zero', () => ['capture', '--model', '/dev/zero', '--tokenizer', T, '--text', 'hi', '-o', join(tmp, 'never')], /^attnviz: --model \/dev\/zero: not a regular file/],
    ['--model a FIFO', () => ['capture', '--model', mkfifo(join(tmp, 'fifo-m')), '--tokenizer', T, '--text', 'hi', '-o', join(tmp, 'never')], /^attnviz: --model .*fifo-m: not a regular file/],
    ['--tokenizer a FIFO', () => ['generate-text', '--model', M, '--tokenizer', mkfifo(join(tmp, 'fifo-t')), '--steps', '2'], /^attnviz: --tokenizer .*fifo-t: not a regular file/],
    ['--tokenizer /dev/zero', () => ['generate-text', '--model', M, '--tokenizer', '/dev/zero', '--steps', '2'], /^attnviz: --tokenizer \/dev\/zero: not a regular file/],
    ['--model empty', () => ['generate-text', '--model', '', '--tokenizer', T], /^attnviz: --model: an empty path/],
    ['--q a folder', () => ['matrix', '--variant', 'softmax', '--q', tmp, '--k', gk, '-o', join(tmp, 'never')], /^attnviz: --q .*: a folder, not a file/],
    ['--k /dev/zero', () => ['readouts', '--variant', 'softmax', '--q', gq, '--k', '/dev/zero'], /^attnviz: --k \/dev\/zero: not a regular file/],
    ['--v a FIFO', () => ['readouts', '--variant', 'softmax', '--q', gq, '--k', gk, '--v', mkfifo(join(tmp, 'fifo-v'))], /^attnviz: --v .*fifo-v: not a regular file/],
    ['--hedgehog-w /dev/zero', () => ['matrix', '--variant', 'hedgehog', '--q', gq, '--k', gk, '--hedgehog-w', '/dev/zero', '-o', join(tmp, 'never')], /^attnviz: --hedgehog-w \/dev\/zero: not a regular file/],
    ['recall --k a folder', () => ['recall', '--variant', 'elu', '--k', tmp, '--v', gk], /^attnviz: --k .*: a folder, not a file/],
    ['distill --q /dev/zero', () => ['distill', '--q', '/dev/zero', '--k', gk, '--steps', '1', '-o', join(tmp, 'never')], /^attnviz: --q \/dev\/zero: not a regular file/],
  ];
  for (const [name, args, pattern] of cases) {
    it(name, () => {
      expectError(run(...args()), 2, pattern);
      expect(existsSync(join(tmp, 'never'))).toBe(false);
    });
  }

  it('a file that cannot be opened is still the system\'s failure (exit 1)', () => {
    expectError(run('generate-text', '--model', join(tmp, 'nope.bin'), '--tokenizer', T), 1, /^attnviz: --model .*nope\.bin: cannot open \(No such file or directory\)/);
  });
});

describe('memory running out while reading the model or the tokenizer: one line, exit 1, no crash', () => {
  // a sparse file larger than the limit: the read cannot get the memory (it was freed twice: exit 139)
  it.skipIf(!canLimit)('under ulimit -v, --model and --tokenizer of 4 GB', () => {
    const big = sparse(join(tmp, 'big.bin'), 4 * 2 ** 30);
    const out = join(tmp, 'oom-out');
    expectError(run('capture', '--model', big, '--tokenizer', T, '--text', 'hi', '-o', out), 1, /^attnviz: --model .*big\.bin: out of memory\n$/);
    expectError(run('capture', '--model', M, '--tokenizer', big, '--text', 'hi', '-o', out), 1, /^attnviz: --tokenizer .*big\.bin: out of memory\n$/);
    expectError(run('generate-text', '--model', big, '--tokenizer', T), 1, /^attnviz: --model .*: out of memory\n$/);
    expectError(run('readouts', '--variant', 'softmax', '--q', gq, '--k', big), 1, /^attnviz: --k .*: out of memory\n$/);
    expect(existsSync(out)).toBe(false);
  });

  // the same under AddressSanitizer (make build/native/attnviz_san), where allocations above 64 MB fail
  const haveSan = existsSync(SAN);
  if (!haveSan) console.warn('SKIPPED: out-of-memory reads under ASan (Vitest cli-files.test.mjs): build/native/attnviz_san not built; make build/native/attnviz_san');
  it.skipIf(!haveSan)('under ASan with allocations above 64 MB failing: no double free, no leak', () => {
    const big = sparse(join(tmp, 'big-san.bin'), 256 * 2 ** 20);
    const env = { ...process.env, ASAN_OPTIONS: 'allocator_may_return_null=1:max_allocation_size_mb=64:detect_leaks=1:exitcode=86',
      UBSAN_OPTIONS: 'halt_on_error=1:exitcode=87' };
    for (const args of [['capture', '--model', big, '--tokenizer', T, '--text', 'hi', '-o', join(tmp, 'oom-san')],
      ['generate-text', '--model', M, '--tokenizer', big]]) {
      const p = spawnSync(SAN, args, { encoding: 'utf8', env });
      const stderr = p.stderr.replace(/^==\d+==WARNING: AddressSanitizer failed to allocate .*\n/gm, ''); // the refusal itself
      expectError({ status: p.status, signal: p.signal, stdout: p.stdout, stderr }, 1, /: out of memory\n$/);
    }
    expect(existsSync(join(tmp, 'oom-san'))).toBe(false);
  });
});

describe('empty or malformed lists and numbers are bad input (exit 2, one line)', () => {
  const cases = [
    [['sweep', '--variant', 'focused', '--knob', 'p', '--values', ''], /^attnviz: --values: an empty list/],
    [['sweep', '--variant', 'focused', '--knob', 'p', '--values', '2,'], /^attnviz: --values 2,: an empty value/],
    [['sweep', '--variant', 'focused', '--knob', 'p', '--values', ','], /^attnviz: --values ,: an empty value/],
    [['sweep', '--variant', 'focused', '--knob', 'p', '--values', '2, 3'], /^attnviz: --values  3: not a value of --p/],
    [['generate', '--n', ' 4', '--d', '2', '-o', 'NEVER'], /^attnviz: --n  4: not an integer/],
    [['generate', '--n', '4', '--d', '2', '--std', ' 1', '-o', 'NEVER'], /^attnviz: --std  1: not a number/],
    [['readouts', '--variant', 'focused', '--p', '\t2'], /^attnviz: --p \t2: not a valid value/],
    [['readouts', '--variant', 'softmax', '--tau', ' 0.1'], /^attnviz: --tau  0.1: not a number/],
    [['recall', '--variant', 'elu', '--pairs', ' 4', '--d', '2'], /^attnviz: --pairs  4: not an integer/],
    [['distill', '--steps', ' 1', '-o', 'NEVER'], /^attnviz: --steps  1: not an integer/],
    [['distill', '--steps', '1', '--lr', ' 0.1', '-o', 'NEVER'], /^attnviz: --lr  0.1: not a number/],
  ];
  for (const [args, pattern] of cases) {
    it(args.join(' '), () => {
      const withInputs = ['sweep', 'readouts', 'distill'].includes(args[0]) ? [...args, '--q', gq, '--k', gk] : args;
      expectError(run(...withInputs.map((a) => (a === 'NEVER' ? join(tmp, 'never') : a))), 2, pattern);
      expect(existsSync(join(tmp, 'never'))).toBe(false);
    });
  }
  it('generate-text --steps " 3" (the model is read only after the flags)', () => {
    expectError(run('generate-text', '--model', M, '--tokenizer', T, '--steps', ' 3'), 2, /^attnviz: --steps  3: not an integer/);
  });
});
