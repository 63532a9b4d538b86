// tiny-hf.mjs: tiny Hugging Face model folders for the tests (docs/hf.md): config.json, safetensors shards
// (and model.safetensors.index.json when sharded), and a byte-level tokenizer.json whose vocabulary is the
// 256 byte characters of GPT-2's alphabet plus a few merges, so that no real vocabulary is needed.
// Deterministic weights (a fixed generator), small enough to run in milliseconds.
//
//   tinyHF('llama')  Llama-shaped: 2 layers, 4 heads, 2 KV heads (GQA), BF16, two shards and an index, a BOS
//   tinyHF('qwen2')  Qwen2-shaped: q/k/v biases, an untied lm_head, F16, one model.safetensors
//   tinyHF('gpt2')   GPT-2: learned positions, LayerNorm, the fused Conv1D c_attn, F32, one file
// Each: {name, files: {'config.json': Uint8Array, …}, config}; writeTinyHF(dir, kind) writes the folder.
import { mkdirSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

const enc = new TextEncoder();

/** GPT-2's byte → character map (bytes_to_unicode): printable bytes as themselves, the rest from U+0100. */
export function byteChars() {
  const keep = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const map = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) map[b] = keep.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  return map;
}

const MERGES = [['Ġ', 't'], ['h', 'e'], ['Ġt', 'he'], ['Ġ', 'a'], ['i', 'n'], ['o', 'n'], ['Ġ', 's'], ['e', 'r'],
  ['Ġ', 'w'], ['a', 't'], ['Ġ', 'c'], ['e', 'n'], ['Ġ', 'b'], ['o', 'u'], ['i', 't'], ['Ġthe', 'r'], ['Ġ', 'o'],
  ['in', 'g'], ['Ġ', 'h'], ['Ġ', 'd']];

/** A byte-level BPE tokenizer.json: 256 byte pieces, MERGES, and the special tokens given ([content, id]). */
export function tokenizerJson({ bos = null, eos = null } = {}) {
  const chars = byteChars();
  const vocab = {};
  chars.forEach((c, b) => { vocab[c] = b; });
  for (const [a, b] of MERGES) vocab[a + b] = Object.keys(vocab).length;
  const added = [];
  const special = (content, id) => added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  if (bos) special(bos[0], bos[1]);
  if (eos && (!bos || eos[0] !== bos[0])) special(eos[0], eos[1]);
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const post = bos
    ? { type: 'TemplateProcessing', single: [{ SpecialToken: { id: bos[0], type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: bos[0], type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { [bos[0]]: { id: bos[0], ids: [bos[1]], tokens: [bos[0]] } } }
    : { ...byteLevel, trim_offsets: false };
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: byteLevel, post_processor: post, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: MERGES.map(([a, b]) => `${a} ${b}`) },
  };
}
export const TOKENIZER_VOCAB = 256 + MERGES.length; // ids of the pieces; the special tokens follow

/** float32 → BF16 bits (round to nearest even) and → F16 bits (the values here are small and normal). */
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function bf16(x) { f32[0] = x; const u = u32[0]; return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff; }
function f16(x) {
  f32[0] = x;
  const u = u32[0], sign = (u >>> 16) & 0x8000, e = ((u >>> 23) & 0xff) - 127 + 15, m = u & 0x7fffff;
  if (e <= 0) { // subnormal or zero
    if (e < -10) return sign;
    const mm = (m | 0x800000) >>> (1 - e);
    return sign | ((mm + 0x1000) >>> 13);
  }
  const h = sign | (e << 10) | (m >>> 13);
  return (m & 0x1fff) > 0x1000 || ((m & 0x1fff) === 0x1000 && (h & 1)) ? h + 1 : h;
}
const DTYPE_BYTES = { F32: 4, F16: 2, BF16: 2 };

/** A safetensors file of [name, shape, Float32Array] in dtype: the header padded with spaces to 8 bytes. */
export function safetensors(tensors, dtype, meta = { format: 'pt' }) {
  const size = DTYPE_BYTES[dtype];
  const header = { __metadata__: meta };
  let at = 0;
  for (const [name, shape, data] of tensors) {
    header[name] = { dtype, shape, data_offsets: [at, at + data.length * size] };
    at += data.length * size;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((json.length + 8) % 8)) % 8);
  const hb = enc.encode(json), out = new Uint8Array(8 + hb.length + at), dv = new DataView(out.buffer);
  dv.setBigUint64(0, BigInt(hb.length), true);
  out.set(hb, 8);
  let p = 8 + hb.length;
  for (const [, , data] of tensors) {
    for (const x of data) {
      if (dtype === 'F32') dv.setFloat32(p, x, true);
      else dv.setUint16(p, dtype === 'BF16' ? bf16(x) : f16(x), true);
      p += size;
    }
  }
  return out;
}

/** Deterministic normals (mulberry32 and Box–Muller). */
function normals(seed) {
  let s = seed >>> 0;
  const u = () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 2 ** 32; };
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

const SHAPES = {
  llama: { architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 256, rms_norm_eps: 1e-5, rope_theta: 10000,
    tie_word_embeddings: true, hidden_act: 'silu', bos_token_id: TOKENIZER_VOCAB, eos_token_id: TOKENIZER_VOCAB + 1, torch_dtype: 'bfloat16' },
  qwen2: { architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 32, intermediate_size: 40, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 512, rms_norm_eps: 1e-6, rope_theta: 1000000,
    tie_word_embeddings: false, hidden_act: 'silu', use_sliding_window: false, sliding_window: 4096, max_window_layers: 2,
    bos_token_id: TOKENIZER_VOCAB, eos_token_id: TOKENIZER_VOCAB, torch_dtype: 'float16' },
  gpt2: { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_embd: 24, n_layer: 2, n_head: 4, n_positions: 128, n_inner: null,
    layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', bos_token_id: TOKENIZER_VOCAB, eos_token_id: TOKENIZER_VOCAB, torch_dtype: 'float32' },
};

/**
 * A tiny folder of `kind` ('llama', 'qwen2', 'gpt2'): {name, files: {file name: Uint8Array}, config, dtype}.
 * opts.vocab: the config's vocab_size (default: the tokenizer's ids rounded up to 8); opts.mixed (llama): the
 * second shard in F32, so one model holds two dtypes (every weight of one model need not share one).
 */
export function tinyHF(kind, opts = {}) {
  const cfg = { ...SHAPES[kind] };
  if (!cfg.architectures) throw new Error(`tiny-hf: no kind ${kind}`);
  const V = opts.vocab ?? Math.ceil((TOKENIZER_VOCAB + 2) / 8) * 8;
  cfg.vocab_size = V;
  const rnd = normals({ llama: 1, qwen2: 2, gpt2: 3 }[kind]);
  const mat = (r, c, std = 0.2) => Float32Array.from({ length: r * (c ?? 1) }, () => std * rnd());
  const ones = (n) => Float32Array.from({ length: n }, () => 1 + 0.1 * rnd());
  const t = [];
  const files = {};
  let dtype;
  if (kind === 'gpt2') {
    dtype = 'F32';
    const D = cfg.n_embd, F = 4 * D;
    t.push(['wte.weight', [V, D], mat(V, D, 0.5)], ['wpe.weight', [cfg.n_positions, D], mat(cfg.n_positions, D, 0.1)]);
    for (let l = 0; l < cfg.n_layer; l++) {
      const p = `h.${l}.`;
      t.push([`${p}ln_1.weight`, [D], ones(D)], [`${p}ln_1.bias`, [D], mat(D, 1, 0.05)],
        [`${p}attn.c_attn.weight`, [D, 3 * D], mat(D, 3 * D, 0.3)], [`${p}attn.c_attn.bias`, [3 * D], mat(3 * D, 1, 0.1)],
        [`${p}attn.c_proj.weight`, [D, D], mat(D, D)], [`${p}attn.c_proj.bias`, [D], mat(D, 1, 0.05)],
        [`${p}ln_2.weight`, [D], ones(D)], [`${p}ln_2.bias`, [D], mat(D, 1, 0.05)],
        [`${p}mlp.c_fc.weight`, [D, F], mat(D, F)], [`${p}mlp.c_fc.bias`, [F], mat(F, 1, 0.05)],
        [`${p}mlp.c_proj.weight`, [F, D], mat(F, D)], [`${p}mlp.c_proj.bias`, [D], mat(D, 1, 0.05)]);
    }
    t.push(['ln_f.weight', [D], ones(D)], ['ln_f.bias', [D], mat(D, 1, 0.05)]);
    files['model.safetensors'] = safetensors(t, dtype);
  } else {
    dtype = kind === 'llama' ? 'BF16' : 'F16';
    const D = cfg.hidden_size, F = cfg.intermediate_size, H = cfg.num_attention_heads, KV = cfg.num_key_value_heads, hs = D / H;
    const layer = (l) => {
      const p = `model.layers.${l}.`, out = [[`${p}input_layernorm.weight`, [D], ones(D)],
        [`${p}self_attn.q_proj.weight`, [H * hs, D], mat(H * hs, D, 0.4)], [`${p}self_attn.k_proj.weight`, [KV * hs, D], mat(KV * hs, D, 0.4)],
        [`${p}self_attn.v_proj.weight`, [KV * hs, D], mat(KV * hs, D)], [`${p}self_attn.o_proj.weight`, [D, H * hs], mat(D, H * hs)]];
      if (kind === 'qwen2') out.push([`${p}self_attn.q_proj.bias`, [H * hs], mat(H * hs, 1, 0.1)],
        [`${p}self_attn.k_proj.bias`, [KV * hs], mat(KV * hs, 1, 0.1)], [`${p}self_attn.v_proj.bias`, [KV * hs], mat(KV * hs, 1, 0.1)]);
      out.push([`${p}post_attention_layernorm.weight`, [D], ones(D)], [`${p}mlp.gate_proj.weight`, [F, D], mat(F, D)],
        [`${p}mlp.up_proj.weight`, [F, D], mat(F, D)], [`${p}mlp.down_proj.weight`, [D, F], mat(D, F)]);
      return out;
    };
    const head = [['model.embed_tokens.weight', [V, D], mat(V, D, 0.5)]];
    const tail = [['model.norm.weight', [D], ones(D)]];
    if (!cfg.tie_word_embeddings) tail.push(['lm_head.weight', [V, D], mat(V, D, 0.3)]);
    if (kind === 'llama') { // two shards and their index, as transformers writes a sharded checkpoint
      const s1 = [...head, ...layer(0)], s2 = [...layer(1), ...tail];
      const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
      files[names[0]] = safetensors(s1, dtype);
      files[names[1]] = safetensors(s2, opts.mixed ? 'F32' : dtype);
      const weight_map = {};
      for (const [n] of s1) weight_map[n] = names[0];
      for (const [n] of s2) weight_map[n] = names[1];
      const total = files[names[0]].length + files[names[1]].length;
      files['model.safetensors.index.json'] = enc.encode(JSON.stringify({ metadata: { total_size: total }, weight_map }, null, 2));
    } else {
      files['model.safetensors'] = safetensors([...head, ...layer(0), ...layer(1), ...tail], dtype);
    }
  }
  files['config.json'] = enc.encode(JSON.stringify(cfg, null, 2));
  const special = kind === 'llama' ? { bos: ['<|begin_of_text|>', TOKENIZER_VOCAB], eos: ['<|end_of_text|>', TOKENIZER_VOCAB + 1] }
    : { eos: ['<|endoftext|>', TOKENIZER_VOCAB] };
  files['tokenizer.json'] = enc.encode(JSON.stringify(tokenizerJson(special)));
  files['tokenizer_config.json'] = enc.encode(JSON.stringify({ model_max_length: 2048 })); // present in real folders, ignored
  return { name: `tiny-${kind}`, files, config: cfg, dtype: kind === 'llama' && opts.mixed ? 'BF16+F32' : dtype };
}

/** Write tinyHF(kind) into dir/tiny-KIND: {dir, paths (every file), config, dtype}. */
export function writeTinyHF(dir, kind, opts) {
  const m = tinyHF(kind, opts), out = join(dir, m.name);
  mkdirSync(out, { recursive: true });
  for (const [name, bytes] of Object.entries(m.files)) writeFileSync(join(out, name), bytes);
  return { dir: out, paths: Object.keys(m.files).map((n) => join(out, n)), config: m.config, dtype: m.dtype };
}

/**
 * A model folder of a real model's shape with random weights (no real vocabulary: the byte-level tokenizer
 * above, its ids well inside the vocabulary), written into dir: one BF16 model.safetensors streamed to disk
 * (a 270 MB file is not built in memory). shape: SMOLLM2_135M or another of the same keys. Weights are
 * N(0, 0.02²)-like from a cheap generator (sums of uniforms), norms 1: a forward pass of the real cost.
 */
export const SMOLLM2_135M = { architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 576, intermediate_size: 1536,
  num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, max_position_embeddings: 8192, rms_norm_eps: 1e-5,
  rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu', vocab_size: 49152, bos_token_id: TOKENIZER_VOCAB,
  eos_token_id: TOKENIZER_VOCAB + 1, torch_dtype: 'bfloat16' };
export function writeRandomHF(dir, cfg = SMOLLM2_135M, name = 'random-smollm2-135m') {
  const out = join(dir, name);
  mkdirSync(out, { recursive: true });
  const D = cfg.hidden_size, F = cfg.intermediate_size, H = cfg.num_attention_heads, KV = cfg.num_key_value_heads, hs = D / H, V = cfg.vocab_size;
  const t = [['model.embed_tokens.weight', [V, D]]];
  for (let l = 0; l < cfg.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    t.push([`${p}input_layernorm.weight`, [D], 1], [`${p}self_attn.q_proj.weight`, [H * hs, D]], [`${p}self_attn.k_proj.weight`, [KV * hs, D]],
      [`${p}self_attn.v_proj.weight`, [KV * hs, D]], [`${p}self_attn.o_proj.weight`, [D, H * hs]], [`${p}post_attention_layernorm.weight`, [D], 1],
      [`${p}mlp.gate_proj.weight`, [F, D]], [`${p}mlp.up_proj.weight`, [F, D]], [`${p}mlp.down_proj.weight`, [D, F]]);
  }
  t.push(['model.norm.weight', [D], 1]);
  const header = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [n, shape] of t) { const c = shape.reduce((a, b) => a * b, 1); header[n] = { dtype: 'BF16', shape, data_offsets: [at, at + 2 * c] }; at += 2 * c; }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((json.length + 8) % 8)) % 8);
  const fd = openSync(join(out, 'model.safetensors'), 'w');
  const hb = enc.encode(json), len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(hb.length));
  writeSync(fd, len);
  writeSync(fd, hb);
  let x = 0x9e3779b9;
  const bits = new Map(); // a value's BF16 bits, for the norms' 1
  for (const [, shape, one] of t) {
    const c = shape.reduce((a, b) => a * b, 1), buf = Buffer.alloc(2 * c);
    if (one) { buf.fill(0); for (let i = 0; i < c; i++) buf.writeUInt16LE(bits.get(1) ?? (bits.set(1, bf16(1)), bf16(1)), 2 * i); }
    else {
      for (let i = 0; i < c; i++) {
        x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
        // ±(a value in [2^-8, 2^-5)): the sign, an exponent of 4 steps and 7 random mantissa bits
        const sign = x >>> 31, e = 119 + ((x >>> 20) & 3), m = (x >>> 8) & 0x7f;
        buf.writeUInt16LE((sign << 15) | (e << 7) | m, 2 * i);
      }
    }
    writeSync(fd, buf);
  }
  closeSync(fd);
  writeFileSync(join(out, 'config.json'), JSON.stringify(cfg, null, 2));
  writeFileSync(join(out, 'tokenizer.json'), JSON.stringify(tokenizerJson({ bos: ['<|begin_of_text|>', TOKENIZER_VOCAB], eos: ['<|end_of_text|>', TOKENIZER_VOCAB + 1] })));
  return { dir: out, paths: ['config.json', 'model.safetensors', 'tokenizer.json'].map((n) => join(out, n)), bytes: 8 + hb.length + at };
}
