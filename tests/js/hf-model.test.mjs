// Hugging Face model folders in the JS loader (web/wasm/model.mjs: HFModel.fromFolder, encode, pieces, forward)
// on the real wasm module: the tiny folders of tests/e2e/tiny-hf.mjs (Llama-shaped BF16 with GQA in two
// shards and an index, Qwen2-shaped F16 with biases and an untied lm_head, GPT-2 F32), read in small chunks
// as Blobs (the page's File path); the tokens against `attnviz tokenize`, Q, K, V against `attnviz capture
// --model DIR` bit for bit (when the CLI has it); refusals in one sentence; the 4 GB memory's addresses above 2 GB.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir, totalmem, freemem } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadAttnviz, loadModelFolder, STATUS } from '../../web/wasm/attnviz.mjs';
import { HFModel, folderFiles, fmtBytes, hfRunBytes, tabLimit, PAGE_MAX_TOKENS } from '../../web/wasm/model.mjs';
import { tinyHF, writeTinyHF, safetensors } from '../e2e/tiny-hf.mjs';
import { readNpy } from './npy.mjs';

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const TEXT = 'Once upon a time, the cat sat on the mat. It was a hot day in the park.';


/** A tiny folder as the page gives it: File-like Blobs with names (sliced and read chunk by chunk). */
function asBlobs(files) {
  return Object.entries(files).map(([name, bytes]) => Object.assign(new Blob([bytes]), { name }));
}
const load = (files, opts = {}) => HFModel.fromFolder(av, folderFiles(asBlobs(files)), opts.onProgress ?? null, { chunk: 1000, ...opts });

/** One sentence: a single line, short, naming no more than the thing at fault. */
function oneSentence(msg) {
  expect(typeof msg).toBe('string');
  expect(msg).not.toMatch(/\n/);
  expect(msg.length).toBeGreaterThan(10);
  expect(msg.length).toBeLessThan(260);
}

describe.each(['llama', 'qwen2', 'gpt2'])('a tiny %s folder', (kind) => {
  const tiny = tinyHF(kind);

  it('loads chunk by chunk with progress, and says what it is', async () => {
    const seen = [];
    const r = await load(tiny.files, { onProgress: (p) => seen.push(p) });
    expect(r.message).toBe('ok');
    const c = r.model.config;
    const cfg = tiny.config;
    expect(c.format).toBe('hf');
    expect(c.architecture).toBe(cfg.architectures[0]);
    expect(c.modelType).toBe(cfg.model_type);
    expect(c.dtype).toBe(tiny.dtype);
    expect(c.layers).toBe(cfg.num_hidden_layers ?? cfg.n_layer);
    expect(c.heads).toBe(cfg.num_attention_heads ?? cfg.n_head);
    expect(c.kvHeads).toBe(cfg.num_key_value_heads ?? cfg.n_head);
    expect(c.context).toBe(cfg.max_position_embeddings ?? cfg.n_positions);
    expect(c.seqLen).toBe(Math.min(c.context, PAGE_MAX_TOKENS));
    expect(c.tokenizer).toBe('byte-level BPE');
    // the weights' bytes are the shards' tensors the model reads (an untied lm_head too), at most the files
    expect(c.bytes).toBeGreaterThan(0.9 * c.fileBytes);
    expect(c.bytes).toBeLessThanOrEqual(c.fileBytes);
    // progress: every chunk, never backwards, the last the whole
    expect(seen.length).toBeGreaterThan(5);
    for (let i = 1; i < seen.length; i++) expect(seen[i].done).toBeGreaterThan(seen[i - 1].done);
    expect(seen.at(-1).done).toBe(seen.at(-1).total);
    expect(seen.at(-1).total).toBe(c.fileBytes);
    r.model.free();
  });

  it('encodes as `attnviz tokenize` does (add_special), and its pieces are the tokens\' bytes', async () => {
    const { model } = await load(tiny.files);
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-hf-tok-'));
    writeFileSync(join(dir, 'tokenizer.json'), tiny.files['tokenizer.json']);
    const cli = JSON.parse(execFileSync(CLI, ['tokenize', '--tokenizer', join(dir, 'tokenizer.json'), '--text', TEXT]).toString());
    const enc = model.encode(TEXT);
    expect(enc.message).toBe('ok');
    expect(Array.from(enc.ids)).toEqual(cli.ids);
    expect(model.pieces(enc.ids)).toEqual(cli.pieces);
    // Llama's post-processor adds BOS; Qwen2's and GPT-2's add nothing
    expect(enc.ids[0] === model.config.bos).toBe(kind === 'llama');
    expect(model.pieces(enc.ids).join('')).toBe(kind === 'llama' ? `<|begin_of_text|>${TEXT}` : TEXT);
    model.free();
    rmSync(dir, { recursive: true });
  });

  it('captures Q, K, V; the swapped pass with every head kept gives the pass\'s logits, and the measures run', async () => {
    const { model } = await load(tiny.files);
    const c = model.config, ids = model.encode(TEXT).ids, n = ids.length;
    const f = model.forward(ids);
    expect(f.message).toBe('ok');
    expect(f.Q.length).toBe(c.layers * c.heads * n * c.headSize);
    expect(f.K.length).toBe(c.layers * c.kvHeads * n * c.headSize);
    expect(f.Q.every(Number.isFinite) && f.K.every(Number.isFinite) && f.V.every(Number.isFinite)).toBe(true);
    const kept = model.forwardSwapped(ids);
    expect(kept.message).toBe('ok');
    expect(kept.logits.length).toBe(n * c.vocab);
    const m = model.measures(kept.logits, kept.logits, ids);
    expect(m.kl_mean).toBe(0);
    expect(m.top1_agreement).toBe(1);
    expect(m.loss).toBeGreaterThan(0);
    model.free();
  });

  it('captures what `attnviz capture --model DIR` writes for the same text', async () => {
    const base = mkdtempSync(join(tmpdir(), 'attnviz-hf-cap-'));
    const { dir } = writeTinyHF(base, kind);
    const out = join(base, 'out');
    execFileSync(CLI, ['capture', '--model', dir, '--text', TEXT, '-o', out]);
    const { model } = await load(tiny.files);
    const f = model.forward(model.encode(TEXT).ids);
    const tokens = JSON.parse(readFileSync(join(out, 'tokens.json'), 'utf8'));
    expect(Array.from(model.encode(TEXT).ids)).toEqual(tokens.ids);
    // bit for bit: the same C in both builds, with the same IEEE operations in the same order (the weight
    // products in the compiler's generic vectors, -ffp-contract=off; docs/hf.md "Weights in memory"); the
    // largest difference is printed too, so that a break says by how much
    for (const [name, got] of [['q', f.Q], ['k', f.K], ['v', f.V]]) {
      const want = readNpy(join(out, `${name}.npy`)).data;
      expect(want.length).toBe(got.length);
      let worst = 0, scale = 0, same = 0;
      for (let i = 0; i < got.length; i++) { worst = Math.max(worst, Math.abs(got[i] - want[i])); scale = Math.max(scale, Math.abs(want[i])); same += got[i] === want[i]; }
      console.log(`${kind} ${name}: max |wasm − native| = ${worst.toExponential(2)} of ${scale.toFixed(3)}; ${same} of ${got.length} bit for bit`);
      expect(same).toBe(got.length);
    }
    model.free();
    rmSync(base, { recursive: true });
  });
});

it('loadModelFolder: the package\'s entry for a folder\'s files in any order', async () => {
  const tiny = tinyHF('gpt2'), seen = [];
  const r = await loadModelFolder(av, asBlobs(tiny.files).reverse(), (p) => seen.push(p.done), { chunk: 4096 });
  expect(r.message).toBe('ok');
  expect(r.model.config.architecture).toBe('GPT2LMHeadModel');
  expect(seen.at(-1)).toBe(r.model.config.fileBytes);
  r.model.free();
});

it('a model whose shards hold two dtypes says both, and runs', async () => {
  const mixed = tinyHF('llama', { mixed: true });
  const { model } = await load(mixed.files);
  expect(model.config.dtype).toBe('BF16+F32');
  expect(model.forward(model.encode(TEXT).ids).message).toBe('ok');
  model.free();
});

describe('refusals, each one sentence, the model not loaded', () => {
  const llama = tinyHF('llama'), gpt2 = tinyHF('gpt2');
  const without = (files, name) => Object.fromEntries(Object.entries(files).filter(([k]) => k !== name));

  it('a truncated shard names the file', async () => {
    const f = { ...gpt2.files, 'model.safetensors': gpt2.files['model.safetensors'].subarray(0, gpt2.files['model.safetensors'].length - 100) };
    const r = await load(f);
    expect(r.model).toBe(null);
    expect(r.status).toBe(STATUS.ERR_FORMAT);
    expect(r.message).toMatch(/^model\.safetensors: /);
    oneSentence(r.message);
  });

  it('a shard the index names but not given is named', async () => {
    const r = await load(without(llama.files, 'model-00002-of-00002.safetensors'));
    expect(r.model).toBe(null);
    expect(r.message).toBe('the index names the shard model-00002-of-00002.safetensors, which is not among the files given');
    expect(r.key).toBe('hfMissingShard');
  });

  it('two shards without their index, a folder without config.json or tokenizer.json', async () => {
    let r = await load(without(llama.files, 'model.safetensors.index.json'));
    expect(r.message).toMatch(/^2 \.safetensors files and no model\.safetensors\.index\.json/);
    r = await load(without(llama.files, 'config.json'));
    expect(r.message).toBe('the folder has no config.json');
    r = await load(without(llama.files, 'tokenizer.json'));
    expect(r.message).toBe('the folder has no tokenizer.json');
  });

  it('an unknown architecture is refused by name (the library\'s sentence)', async () => {
    const cfg = { ...JSON.parse(new TextDecoder().decode(gpt2.files['config.json'])), architectures: ['FalconForCausalLM'], model_type: 'falcon' };
    const r = await load({ ...gpt2.files, 'config.json': new TextEncoder().encode(JSON.stringify(cfg)) });
    expect(r.model).toBe(null);
    expect(r.message).toMatch(/^config\.json: .*FalconForCausalLM/);
    oneSentence(r.message);
  });

  it('a tensor of the wrong shape is named', async () => {
    const st = safetensors([['wte.weight', [3, 2], new Float32Array(6)]], 'F32');
    const r = await load({ ...gpt2.files, 'model.safetensors': st });
    expect(r.message).toMatch(/^the weights: .*wte\.weight/);
    oneSentence(r.message);
  });

  it('a model larger than the tab can hold is refused before a byte of its shards is read, with the size it needs', async () => {
    let sliced = 0;
    const huge = { name: 'model.safetensors', size: 5 * 2 ** 30, slice() { sliced += 1; throw new Error('read'); } };
    const files = folderFiles([...asBlobs(without(gpt2.files, 'model.safetensors')), huge]);
    const r = await HFModel.fromFolder(av, files, null);
    expect(sliced).toBe(0);
    expect(r.status).toBe(STATUS.ERR_TOO_LARGE);
    expect(r.message).toMatch(/^this model needs 5(\.\d)? GB; the page can hold at most 4 GB \(the tab's WebAssembly memory\)$/);
    expect(r.tooLarge.need).toBeGreaterThan(5 * 2 ** 30);
    // a device that reports 2 GB (navigator.deviceMemory) lowers the limit, and the sentence says why
    const small = await HFModel.fromFolder(av, folderFiles([...asBlobs(without(gpt2.files, 'model.safetensors')), { ...huge, size: 3 * 2 ** 30 }]), null, { deviceGB: 2 });
    expect(small.message).toBe(`this model needs ${fmtBytes(small.tooLarge.need)}; the page can hold at most 2 GB (this device reports 2 GB of memory)`);
    expect(sliced).toBe(0);
  });

  it('a shard of 2 GB or more is refused by name before it is read (one allocation is below 2 GB)', async () => {
    let sliced = 0;
    const shard = { name: 'model.safetensors', size: 2.2 * 2 ** 30, slice() { sliced += 1; throw new Error('read'); } };
    const r = await HFModel.fromFolder(av, folderFiles([...asBlobs(without(gpt2.files, 'model.safetensors')), shard]), null);
    expect(sliced).toBe(0);
    expect(r.key).toBe('hfShardTooLarge');
    expect(r.message).toBe('model.safetensors is 2.2 GB: the page holds one file of at most 2 GB in one piece (the same model saved in shards of 1 GB or less loads)');
  });

  it('what a model needs beyond its weights, at the page\'s limit: SmolLM2-135M\'s shape', () => {
    const c = { dim: 576, hiddenDim: 1536, layers: 30, heads: 9, kvHeads: 3, headSize: 64, vocab: 49152 };
    const b = hfRunBytes(c, PAGE_MAX_TOKENS);
    // the KV cache 23.6 MB, Q, K, V twice 118 MB, four logits of 512 × 49152 floats 403 MB
    expect(b / 2 ** 20).toBeGreaterThan(500);
    expect(b / 2 ** 20).toBeLessThan(600);
    expect(tabLimit(av, undefined)).toEqual({ bytes: av.limits.maxBytes, why: 'wasm', deviceGB: null });
    expect(tabLimit(av, 8).why).toBe('wasm');
  });

  it('cancelled between chunks: nothing kept', async () => {
    let calls = 0;
    const r = await load(llama.files, { onProgress: () => { calls += 1; }, cancelled: () => calls >= 3 });
    expect(r.cancelled).toBe(true);
    expect(r.model).toBe(null);
  });
});

// 2.5 GB of wasm memory: the module's 4 GB maximum, and addresses past 2 GB used unsigned. One allocation is
// below 2 GB (dlmalloc's limit: MAX_ONE_ALLOCATION), so 1.5 GB and 1 GB. Skipped only where the machine has
// too little memory for it (the 2.5 GB itself, plus node's).
const ENOUGH = freemem() > 4 * 2 ** 30 && totalmem() > 6 * 2 ** 30;
describe.skipIf(!ENOUGH)('memory past 2 GB', () => {
  it('holds 2.5 GB, and its views read and write past 2 GB', async () => {
    const big = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
    expect(big.memoryMax).toBe(4 * 2 ** 30);
    const a = big.malloc(1.5 * 2 ** 30), b = big.malloc(2 ** 30);
    expect(big.memory.buffer.byteLength).toBeGreaterThan(2.5 * 2 ** 30);
    const last = b + 2 ** 30 - 16;
    expect(last).toBeGreaterThan(2 ** 31); // past 2 GB: a signed i32 would be negative here
    big.f32(last, 4).set([1, 2, 3, 4]);
    expect(Array.from(big.f32(last, 4))).toEqual([1, 2, 3, 4]);
    big.f32(a, 1)[0] = 7;
    expect(big.f32(a, 1)[0]).toBe(7); // the first block untouched by the second
    // a small block after them lands above 2 GB too, and the library's strings are read from there
    const q = big.malloc(64);
    expect(q).toBeGreaterThan(2 ** 31);
    new Uint8Array(big.memory.buffer, q, 4).set([104, 105, 33, 0]);
    expect(big.cstring(q)).toBe('hi!');
    // and the library computes there: a lab's buffers past 2 GB
    const lab = big.lab(64, 16);
    lab.generate('gaussian', 1, 3);
    expect(lab.matrix({ variant: 'softmax' }).status).toBe(STATUS.OK);
    lab.free();
    // one allocation of 2 GB is what dlmalloc refuses (HFModel refuses such a shard by name before reading)
    expect(() => big.malloc(2 ** 31)).toThrow(/out of wasm memory/);
    for (const p of [q, b, a]) big.free(p);
  }, 60000);
});
if (!ENOUGH) console.warn(`SKIPPED: the 2.5 GB allocation: this machine has ${(freemem() / 2 ** 30).toFixed(1)} GB free of ${(totalmem() / 2 ** 30).toFixed(1)} GB`);
