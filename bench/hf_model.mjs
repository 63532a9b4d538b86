// hf_model.mjs: a random Hugging Face model folder of SmolLM2-135M's exact shape (LlamaForCausalLM, 30
// layers, hidden 576, intermediate 1536, 9 heads, 3 KV heads, head size 64, vocab 49152, tied embeddings)
// in BF16, for bench/hf.mjs: build/bench/smollm2-135m/{config.json, model.safetensors} (~270 MB).
//
// The weights are seeded (each tensor from its own seed, a hash of its name, so a tensor does not depend
// on the order they are written in) and have the scales of a trained model's initialisation: matrices
// normal(0, 0.02), norm weights 1 + normal(0, 0.02). The time of the forward pass does not depend on the
// values, but a realistic scale keeps the residual stream and the logits in the range a real model's are
// (no overflow, no denormals). Written only when absent or stale: the file's __metadata__ names the
// generator's VERSION, and the size must be the expected one.
//
//   node bench/hf_model.mjs            writes the folder when needed and prints its path
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const VERSION = 'attnviz bench/hf_model.mjs 1';
export const SMOLLM2_135M = Object.freeze({
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 576, intermediate_size: 1536,
  num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, vocab_size: 49152,
  max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true,
  bos_token_id: 0, eos_token_id: 0, hidden_act: 'silu', torch_dtype: 'bfloat16',
});

/** [name, shape, kind] of every tensor, in the order transformers writes a Llama's (kind 'matrix' or 'norm'). */
function tensors(c) {
  const dim = c.hidden_size, hid = c.intermediate_size, hs = dim / c.num_attention_heads, kvd = hs * c.num_key_value_heads;
  const out = [['model.embed_tokens.weight', [c.vocab_size, dim], 'matrix']];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    out.push([`${p}input_layernorm.weight`, [dim], 'norm'],
      [`${p}self_attn.q_proj.weight`, [dim, dim], 'matrix'], [`${p}self_attn.k_proj.weight`, [kvd, dim], 'matrix'],
      [`${p}self_attn.v_proj.weight`, [kvd, dim], 'matrix'], [`${p}self_attn.o_proj.weight`, [dim, dim], 'matrix'],
      [`${p}post_attention_layernorm.weight`, [dim], 'norm'],
      [`${p}mlp.gate_proj.weight`, [hid, dim], 'matrix'], [`${p}mlp.up_proj.weight`, [hid, dim], 'matrix'],
      [`${p}mlp.down_proj.weight`, [dim, hid], 'matrix']);
  }
  out.push(['model.norm.weight', [dim], 'norm']);
  return out;
}

/** FNV-1a of the name: each tensor's seed. */
function seedOf(name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h || 1;
}

/** count BF16 values (round to nearest even from float32) of mean + sd·normal, by Box–Muller on xorshift32. */
function bf16Normal(count, seed, mean, sd) {
  const out = new Uint16Array(count), f = new Float32Array(1), u = new Uint32Array(f.buffer);
  let x = seed;
  const next = () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return (x + 0.5) / 4294967296; };
  const put = (i, v) => { f[0] = v; const b = u[0]; out[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16; };
  for (let i = 0; i < count; i += 2) {
    const r = Math.sqrt(-2 * Math.log(next())), a = 2 * Math.PI * next();
    put(i, mean + sd * r * Math.cos(a));
    if (i + 1 < count) put(i + 1, mean + sd * r * Math.sin(a));
  }
  return out;
}

function header(list) {
  const h = { __metadata__: { format: 'pt', generator: VERSION } };
  let off = 0;
  for (const [name, shape] of list) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    h[name] = { dtype: 'BF16', shape, data_offsets: [off, off + bytes] };
    off += bytes;
  }
  let json = JSON.stringify(h);
  json += ' '.repeat((8 - (json.length % 8)) % 8); // writers pad the header with spaces
  return { json: Buffer.from(json), data: off };
}

function fresh(dir, config, list) {
  const st = join(dir, 'model.safetensors'), cj = join(dir, 'config.json');
  if (!existsSync(st) || !existsSync(cj)) return false;
  if (readFileSync(cj, 'utf8') !== `${JSON.stringify(config, null, 2)}\n`) return false;
  const { json, data } = header(list);
  if (statSync(st).size !== 8 + json.length + data) return false;
  const fd = openSync(st, 'r'), got = Buffer.alloc(json.length);
  readSync(fd, got, 0, json.length, 8);
  closeSync(fd);
  return got.equals(json);
}

/** The folder's path, written first when absent or stale. */
export function ensureModel(dir = new URL('../build/bench/smollm2-135m/', import.meta.url).pathname, config = SMOLLM2_135M, log = console.log) {
  const list = tensors(config);
  if (fresh(dir, config, list)) return dir;
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now(), { json } = header(list), tmp = join(dir, 'model.safetensors.tmp');
  const fd = openSync(tmp, 'w'), len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  writeSync(fd, len);
  writeSync(fd, json);
  for (const [name, shape, kind] of list) {
    const v = bf16Normal(shape.reduce((a, b) => a * b, 1), seedOf(name), kind === 'norm' ? 1 : 0, 0.02);
    writeSync(fd, new Uint8Array(v.buffer)); // little-endian hosts (x86, ARM): the file's byte order
  }
  closeSync(fd);
  renameSync(tmp, join(dir, 'model.safetensors'));
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  log(`hf_model: wrote ${dir} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) console.log(ensureModel());
