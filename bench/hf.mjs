// hf.mjs: a Hugging Face model of SmolLM2-135M's exact shape (30 layers, 576 wide, 9 heads, 3 KV heads, head
// size 64, vocab 49152, tied, BF16: bench/hf_model.mjs writes it, random) in WASM SIMD in node against the
// same C built natively (bench/hf_native.c, gcc -O3 -march=native), as ratios:
//   load       av_st_work + av_st_parse (model.safetensors) + av_hf_config_parse + av_hf_model_bind (max_seq
//              256): the header, the shapes and the finiteness scan of all 135M weights (median of 3 calls);
//              parse and bind also apart. WASM: the copy of the file into wasm memory, shown apart.
//   forward    av_forward over 256 token ids, Q, K, V captured (and the last position's logits): the capture;
//   logits-all av_forward_swapped with every head kept: the logits at every position, the loss panel's cost;
//   memory     native ru_maxrss; WASM memory.buffer.byteLength after the run; the file's and the model's bytes.
// Each pass is one call per round: the sides alternate in ATTNVIZ_ROUNDS rounds (default 2: native, WASM,
// native, WASM), each side keeping its quietest round. Both the wall time and the process's CPU time are
// kept: on a shared machine the wall time counts other processes' turns, the CPU time (nearly) only ours.
// Then, native only (ATTNVIZ_HF=run,products picks groups), the weight products of one block of 32 positions
// alone against the memory bandwidth bound: docs/performance.md "Hugging Face models". Printed, never
// asserted; records appended to build/bench.json.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadAttnviz } from '../web/wasm/attnviz.mjs';
import { appendRecords } from './common.mjs';
import { ensureModel } from './hf_model.mjs';

const ROOT = new URL('../', import.meta.url);
const path = (p) => new URL(p, ROOT).pathname;
const N = 256, WARM = 32;
const ROUNDS = Math.max(1, Number.parseInt(process.env.ATTNVIZ_ROUNDS ?? '2', 10) || 2);
const GROUPS = new Set((process.env.ATTNVIZ_HF ?? 'run,products').split(',')); // also: wasm-products
const MB = (b) => (Number(b) / 2 ** 20).toFixed(1); // in MiB

// `node bench/hf.mjs --wasm-products`: the child process of the wasm-products group (below)
if (process.argv[2] === '--wasm-products') {
  const { WASI } = await import('node:wasi');
  const dir = ensureModel(), wasi = new WASI({ version: 'preview1', returnOnExit: true });
  const inst = await WebAssembly.instantiate(await WebAssembly.compile(readFileSync(path('build/wasm/hf_products.wasm'))),
    { ...wasi.getImportObject(), env: { emscripten_notify_memory_growth: () => {} } });
  wasi.initialize(inst);
  const ex = inst.exports, bufs = ['config.json', 'model.safetensors'].map((f) => {
    const b = readFileSync(join(dir, f)), p = ex.malloc(b.length) >>> 0;
    new Uint8Array(ex.memory.buffer, p, b.length).set(b);
    return [p, b.length];
  });
  process.exit(ex.hf_products_buffers(...bufs.flat()));
}

const dir = ensureModel();
const cfgBytes = readFileSync(join(dir, 'config.json')), stBytes = readFileSync(join(dir, 'model.safetensors'));

// The native side, rebuilt only when a source is newer than it (the whole library at -O3 takes a minute on a
// loaded machine). -Wno-maybe-uninitialized: gcc -O3 sees src/hf_model.c's read_qwen_window `use` as maybe
// uninitialized after cfg_bool's failure path (a false positive: that path returns before the read).
const exe = path('build/native/hf_native');
const srcs = execFileSync('bash', ['-c', 'ls src/*.c src/*.h include/*.h'], { cwd: path('.'), encoding: 'utf8' }).trim().split('\n');
const deps = [...srcs, 'bench/hf_native.c', 'bench/bench_time.h'];
if (!existsSync(exe) || deps.some((f) => statSync(path(f)).mtimeMs > statSync(exe).mtimeMs)) {
  console.log('hf: building build/native/hf_native (gcc -O3 -march=native)');
  execFileSync('gcc', ['-O3', '-march=native', '-std=c11', '-ffp-contract=off', '-Wall', '-Wextra', '-Werror', '-Wno-unused-function',
    '-Wno-maybe-uninitialized', '-Iinclude', '-Isrc', 'bench/hf_native.c', ...srcs.filter((f) => f.endsWith('.c')), '-lm', '-o', exe],
  { cwd: path('.'), stdio: 'inherit' });
}
const native = (args) => Object.fromEntries(execFileSync(exe, args.map(String), { encoding: 'utf8' }).trim().split('\n')
  .map((l) => JSON.parse(l)).map((r) => [r.name.split('/')[1], r]));

// ---------------------------------------------------------------------------------------------------------
// the WASM side: the exports called directly, as a page's loader would

const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT), simd: true });
const ex = av.exports;
const put = (bytes) => { const p = av.malloc(bytes.length); new Uint8Array(av.memory.buffer, p, bytes.length).set(bytes); return p; };
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
/** {ms, cpu_ms} of one call */
const once = (fn) => {
  const w0 = performance.now(), c0 = cpuMs();
  fn();
  return { ms: performance.now() - w0, cpu_ms: cpuMs() - c0 };
};
const check = (st, what, reason) => { if (st !== 0) throw new Error(`${what} returned ${st}: ${reason ? av.cstring(reason()) : ''}`); };

let t0 = performance.now();
const cp = put(cfgBytes), sp = put(stBytes);
const copyMs = performance.now() - t0;
// the structs (sizes well above wasm32's: av_st_file ~40 bytes, av_hf_config ~400, av_model ~350)
const fp = av.malloc(1024), cfgp = av.malloc(4096), mp = av.malloc(4096);
let stWork = 0, stw = 0, bindWork = 0, bw = 0;
function wasmLoad() {
  const w0 = performance.now();
  stw = ex.av_st_work(sp, stBytes.length) >>> 0;
  if (!stw) throw new Error(`av_st_work: ${av.cstring(ex.av_st_error())}`);
  if (!stWork) stWork = av.malloc(stw);
  check(ex.av_st_parse(fp, stWork, stw, sp, stBytes.length), 'av_st_parse', ex.av_st_error);
  check(ex.av_hf_config_parse(cfgp, cp, cfgBytes.length), 'av_hf_config_parse', ex.av_model_error);
  const w1 = performance.now();
  bw = ex.av_hf_model_work(cfgp) >>> 0;
  if (!bindWork) bindWork = av.malloc(bw);
  check(ex.av_hf_model_bind(mp, cfgp, fp, 1, 0, N, bindWork, bw), 'av_hf_model_bind', ex.av_model_error);
  return { parse: w1 - w0, bind: performance.now() - w1 };
}
wasmLoad();
const [, , L, H, KVH, V, S, d] = av.i32(mp, 8);
if (S !== N) throw new Error(`seq_len ${S}, expected ${N}`);
const ids = av.malloc(4 * N);
av.i32(ids, N).set(Array.from({ length: N }, (_, t) => (t ? (37 * t) % V : 0))); // BOS 0, as hf_native.c
const Q = av.malloc(4 * L * H * N * d), K = av.malloc(4 * L * KVH * N * d), Vp = av.malloc(4 * L * KVH * N * d);
const lg = av.malloc(4 * N * V);
const fwb = ex.av_forward_work(mp) >>> 0, fw = av.malloc(fwb);
const swb = ex.av_forward_swapped_work(mp, N, 0, 0) >>> 0, sw = av.malloc(swb);
// V8 compiles with Liftoff first and tiers a function up after it has run a while: a short pass first
check(ex.av_forward(Q, K, Vp, lg, mp, ids, 0, WARM, fw, fwb), 'av_forward (warm-up)');

function wasmRun() {
  const loads = [0, 1, 2].map(() => { const c0 = cpuMs(), w0 = performance.now(), r = wasmLoad(); return { ...r, ms: performance.now() - w0, cpu_ms: cpuMs() - c0 }; });
  const med = (k) => loads.map((r) => r[k]).sort((a, b) => a - b)[1];
  const out = { parse: { ms: med('parse') }, bind: { ms: med('bind') }, load: { ms: med('ms'), cpu_ms: med('cpu_ms') } };
  out.forward = once(() => check(ex.av_forward(Q, K, Vp, lg, mp, ids, 0, N, fw, fwb), 'av_forward'));
  out['logits-all'] = once(() => check(ex.av_forward_swapped(lg, 0, 0, 0, mp, ids, N, 0, 0, 0, sw, swb), 'av_forward_swapped'));
  const all = av.f32(lg, N * V);
  let sum = 0;
  for (let i = 0; i < all.length; i++) sum += all[i];
  out.memory = { bytes: av.memory.buffer.byteLength, rss: process.memoryUsage().rss, logits_sum: sum };
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// the rounds

const least = (a, b) => {
  if (!b) return a;
  const r = { ...a };
  for (const k of ['ms', 'cpu_ms']) if (k in a) r[k] = Math.min(a[k], b[k]);
  return r;
};
const keep = (best, got) => { for (const [k, v] of Object.entries(got)) best[k] = least(v, best[k]); };
const nat = {}, wasm = {};
if (GROUPS.has('run')) {
  for (let round = 0; round < ROUNDS; round++) {
    keep(nat, native(['run', dir, N]));
    keep(wasm, wasmRun());
  }
  const records = [];
  const fmt = (x) => (x === undefined ? '' : x.toFixed(1)).padStart(10);
  const row = (label, key) => {
    const w = wasm[key], x = nat[key];
    const cpu = w.cpu_ms !== undefined && x.cpu_ms !== undefined;
    console.log(`  ${label.padEnd(38)} ${fmt(w.ms)} ${fmt(x.ms)} ${(w.ms / x.ms).toFixed(2).padStart(7)}×` +
      (cpu ? ` ${fmt(w.cpu_ms)} ${fmt(x.cpu_ms)} ${(w.cpu_ms / x.cpu_ms).toFixed(2).padStart(7)}×` : ''));
    records.push({ name: `hf/${key}/wasm`, n: N, d, ms: w.ms, baseline: `hf/${key}/native`, baseline_ms: x.ms,
      ...(cpu ? { cpu_ms: w.cpu_ms, baseline_cpu_ms: x.cpu_ms } : {}), model: 'SmolLM2-135M shape, random BF16' });
  };
  console.log(`\nHugging Face model of SmolLM2-135M's shape (${L} layers, ${H} heads, ${KVH} KV heads, head size ${d}, ` +
    `vocab ${V}, BF16, random): WASM SIMD (node ${process.versions.node}) vs native gcc -O3 -march=native; ` +
    `each side the quietest of ${ROUNDS} alternating rounds`);
  console.log(`  ${''.padEnd(38)} ${'wasm ms'.padStart(10)} ${'native ms'.padStart(10)} ${'ratio'.padStart(8)} ` +
    `${'wasm cpu'.padStart(10)} ${'native cpu'.padStart(10)} ${'ratio'.padStart(8)}`);
  row('load: parse (header, config.json)', 'parse');
  row('load: bind (shapes, finiteness scan)', 'bind');
  row('load: parse + bind', 'load');
  row(`forward pass, ${N} tokens, Q K V captured`, 'forward');
  row(`logits at every position (${N} × ${V})`, 'logits-all');
  console.log(`  (WASM: copying the ${MB(stBytes.length)} MiB file into wasm memory took ${copyMs.toFixed(1)} ms, once)`);
  const nm = nat.memory, wm = wasm.memory, model = Number(ex.av_hf_model_bytes(mp));
  console.log(`peak memory: native ru_maxrss ${MB(nm.maxrss)} MiB; WASM memory ${MB(wm.bytes)} MiB (node's RSS ${MB(wm.rss)} MiB); ` +
    `the file ${MB(stBytes.length)} MiB, the model's weights ${MB(model)} MiB (av_hf_model_bytes)`);
  console.log(`  workspaces: forward ${MB(fwb)} MiB, swapped ${MB(swb)} MiB, safetensors ${MB(stw)} MiB, bind ${MB(bw)} MiB; ` +
    `Q K V ${MB(4 * (L * H + 2 * L * KVH) * N * d)} MiB, logits ${MB(4 * N * V)} MiB`);
  console.log(`  logits at every position, the same on both sides: ${nm.logits_sum === wm.logits_sum ? 'yes' : 'NO'} ` +
    `(sums ${nm.logits_sum} and ${wm.logits_sum})`);
  records.push({ name: 'hf/memory/wasm', n: N, d, bytes: wm.bytes, baseline: 'hf/memory/native', baseline_bytes: nm.maxrss,
    file_bytes: stBytes.length, model_bytes: model, model: 'SmolLM2-135M shape, random BF16' });
  appendRecords(records);
}

/** The products mode's JSON lines by name ('products-avi_wmatmul', …): natively, or hf_native.c built to WASM
 * (emcc as emscripten.mk builds the library, when a source is newer) and run in a child node under WASI. */
function productsOf(side) {
  if (side === 'native') return native(['products', dir]);
  const wasmFile = path('build/wasm/hf_products.wasm');
  if (!existsSync(wasmFile) || deps.some((f) => statSync(path(f)).mtimeMs > statSync(wasmFile).mtimeMs)) {
    console.log('hf: building build/wasm/hf_products.wasm (emcc -O3 -msimd128)');
    execFileSync('emcc', ['-O3', '-std=c11', '-ffp-contract=off', '-Iinclude', '-Isrc', '-msimd128', '--no-entry', '-sSTANDALONE_WASM',
      '-sALLOW_MEMORY_GROWTH=1', '-sINITIAL_MEMORY=16MB', '-sMAXIMUM_MEMORY=2GB',
      '-sBINARYEN_EXTRA_PASSES=--one-caller-inline-max-function-size=0', '-sEXPORTED_FUNCTIONS=_hf_products_buffers,_malloc,_free',
      'bench/hf_native.c', ...srcs.filter((f) => f.endsWith('.c')), '-o', wasmFile], { cwd: path('.'), stdio: 'inherit' });
  }
  const out = execFileSync(process.execPath, ['--no-warnings', new URL(import.meta.url).pathname, '--wasm-products'], { encoding: 'utf8' });
  return Object.fromEntries(out.trim().split('\n').map((l) => JSON.parse(l)).map((r) => [r.name.split('/')[1], r]));
}

for (const side of ['native', 'wasm']) {
  if (!GROUPS.has(side === 'native' ? 'products' : 'wasm-products')) continue;
  const p = productsOf(side), bwr = p.bandwidth;
  console.log(`\nthe forward pass's weight products alone, one block of 32 positions through the ${L} layers (${side}, ` +
    `least of 3 calls): ${(bwr.macs_per_block / 1e9).toFixed(2)} G multiply-adds on ${MB(bwr.weight_bytes_per_block)} MiB of weights`);
  console.log(`  read bandwidth ${(bwr.bytes_per_ms / 1e6).toFixed(1)} GB/s: the weights' bound ${bwr.ms_bound.toFixed(1)} ms per block`);
  for (const k of ['avi_wmatmul', 'tiled-4x2']) {
    const r = p[`products-${k}`];
    console.log(`  ${k.padEnd(12)} ${r.ms.toFixed(1).padStart(8)} ms wall, ${r.cpu_ms.toFixed(1).padStart(8)} ms CPU: ` +
      `${r.gmacs_cpu.toFixed(2)} G multiply-adds/s of CPU, ${(r.cpu_ms / bwr.ms_bound).toFixed(1)}× the bandwidth bound`);
  }
  const wb = p['products-wconvert-bytes'], wu = p['products-wconvert-u16'];
  if (wb) console.log(`  converting the weights to float32, which every block repeats: ${wb.cpu_ms.toFixed(1)} ms CPU as weights.c ` +
    `assembles bytes, ${wu.cpu_ms.toFixed(1)} ms by 16-bit loads (the same floats)`);
  console.log(`  converting the block's x to float32 in every call: ${p['products-xconvert'].ms.toFixed(2)} ms per block`);
  const a = p['attention-avi_model_softmax_head'], a4 = p['attention-softmax_head4'];
  console.log(`the attention of a ${N}-token pass alone (every layer, head, position): avi_model_softmax_head ` +
    `${a.cpu_ms.toFixed(1)} ms CPU, with 4 keys' scores side by side (the same bits) ${a4.cpu_ms.toFixed(1)} ms CPU`);
  appendRecords([{ name: `hf/products-tiled-4x2/${side}`, n: 32, ms: p['products-tiled-4x2'].cpu_ms,
    baseline: `hf/products-avi_wmatmul/${side}`, baseline_ms: p['products-avi_wmatmul'].cpu_ms, cpu: true,
    bound_ms: bwr.ms_bound },
  { name: `hf/attention-softmax_head4/${side}`, n: N, ms: a4.cpu_ms, baseline: `hf/attention-avi_model_softmax_head/${side}`,
    baseline_ms: a.cpu_ms, cpu: true }]);
}
for (const q of [cp, sp, fp, cfgp, mp, stWork, bindWork, ids, Q, K, Vp, lg, fw, sw]) av.free(q);
