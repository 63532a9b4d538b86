// model.mjs: a real llama2.c model in wasm memory (av.model(a, b), web/wasm/attnviz.mjs; docs/model.md):
// its checkpoint and tokenizer parsed once, the text encoded, the attention of every layer and head read
// from a forward pass.

import { STATUS } from './loading.mjs';
import { Lab } from './lab.mjs';

const MODEL_STRUCT_BYTES = 512;  // src/model.c asserts sizeof(av_model) <= 512 (320 in wasm32, 368 natively); av_tokenizer 28
/** A swapped call's status; one made without a workspace (its size 0: the arguments were refused, or the
 *  size does not fit) that passed the checks is a size the build cannot hold. */
const refusal = (st, bytes) => (bytes === 0 && (st >= 0 || st === STATUS.ERR_NULL || st === STATUS.ERR_SIZE) ? STATUS.ERR_TOO_LARGE : st);

/** av_forward_swapped's paths (enum av_swap_path). */
export const SWAP_PATHS = Object.freeze({ matrix: 0, recurrent: 1 });

const MODEL_CONFIG = ['dim', 'hiddenDim', 'layers', 'heads', 'kvHeads', 'vocab', 'seqLen', 'headSize', 'kvDim', 'sharedClassifier'];

/**
 * Whether bytes start with a llama2.c header in form: seven little-endian int32 (dim, hidden_dim,
 * n_layers, n_heads, n_kv_heads, ±vocab_size, seq_len), each 1..2^24 (a tokenizer's float scores are
 * not). Only to say which of two refused files was meant as the checkpoint; the library decides the rest.
 */
export function headerInForm(b) {
  if (b.length < 28) return false;
  const v = new DataView(b.buffer, b.byteOffset, 28);
  for (let i = 0; i < 7; i++) {
    const x = Math.abs(v.getInt32(4 * i, true));
    if (!(x >= 1 && x <= 2 ** 24)) return false;
  }
  return true;
}

/**
 * A real model in wasm memory (av_model_parse, av_tokenizer_parse, av_encode, av_forward): the files are
 * copied in once; the key/value cache lives in the forward workspace. status/message say why a model
 * failed (stage: 'model' or 'tokenizer', the file that did).
 */
export class Model {
  constructor(av, checkpoint, tokenizer) {
    this.av = av;
    this.ptrs = [];
    if (checkpoint === null) return; // HFModel fills the rest (HFModel.fromFolder)
    const ex = av.exports;
    const take = (bytes) => { const p = av.malloc(bytes); this.ptrs.push(p); return p; };
    const failed = (stage, st) => {
      this.stage = stage;
      this.status = st;
      const why = st === STATUS.ERR_FORMAT || st === STATUS.ERR_NONFINITE ? av.cstring(ex.av_model_error()) : av.statusString(st);
      this.message = `${stage === 'model' ? 'the checkpoint' : 'the tokenizer'}: ${why}`;
    };
    try {
      this.mbuf = take(checkpoint.length);
      new Uint8Array(av.memory.buffer, this.mbuf, checkpoint.length).set(checkpoint);
      this.mp = take(MODEL_STRUCT_BYTES);
      let st = ex.av_model_parse(this.mp, this.mbuf, checkpoint.length);
      if (st !== STATUS.OK) { failed('model', st); return; }
      const c = av.i32(this.mp, MODEL_CONFIG.length);
      /** {dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen, headSize, kvDim, sharedClassifier, format: 'llama2c',
       *  architecture: 'llama2.c', dtype: 'F32', bytes (the checkpoint's), context (its seq_len), tokenizer: 'llama2.c'} */
      this.config = Object.freeze({ ...Object.fromEntries(MODEL_CONFIG.map((k, i) => [k, k === 'sharedClassifier' ? !!c[i] : c[i]])),
        format: 'llama2c', architecture: 'llama2.c', modelType: 'llama2c', bos: 1, dtype: 'F32', bytes: checkpoint.length, context: c[6], limit: c[6], tokenizer: 'llama2.c' });
      this.tbuf = take(tokenizer.length);
      new Uint8Array(av.memory.buffer, this.tbuf, tokenizer.length).set(tokenizer);
      const tw = ex.av_tokenizer_work(this.config.vocab) >>> 0;
      this.tp = take(MODEL_STRUCT_BYTES);
      st = ex.av_tokenizer_parse(this.tp, this.tbuf, tokenizer.length, this.config.vocab, take(tw), tw);
      if (st !== STATUS.OK) { failed('tokenizer', st); return; }
      this.workBytes = ex.av_forward_work(this.mp) >>> 0;
      this.work = take(this.workBytes);
      this.status = STATUS.OK;
      this.message = 'ok';
    } catch (err) {
      if (!(err instanceof RangeError) || err.status === undefined) throw err;
      this.stage = this.config ? 'tokenizer' : 'model';
      this.status = err.status;
      this.message = `the ${this.stage === 'model' ? 'checkpoint' : 'tokenizer'} does not fit in memory: ${err.message}`;
    }
  }

  /**
   * llama2.c's encode of text with BOS: {status, message, ids: Int32Array}. A text too long for the
   * model's seq_len whatever the merges (more bytes than seq_len pieces of max_token_length could hold)
   * is refused before encoding: merging is quadratic in the text's length.
   */
  encode(text) {
    const av = this.av, ex = av.exports;
    const utf8 = new TextEncoder().encode(String(text));
    const maxLen = av.i32(this.tp + 4, 1)[0]; // av_tokenizer.max_token_length
    if (utf8.length > this.config.seqLen * maxLen) {
      return { status: STATUS.ERR_SIZE, message: `the text is ${utf8.length} bytes: more than the model's ${this.config.seqLen} tokens can hold`, ids: null };
    }
    const cap = utf8.length + 2;
    const tp = av.malloc(utf8.length + 1), ip = av.malloc(4 * cap), np = av.malloc(4);
    try {
      new Uint8Array(av.memory.buffer, tp, utf8.length).set(utf8);
      const st = ex.av_encode(ip, np, cap, this.tp, tp, utf8.length, 1);
      if (st !== STATUS.OK) {
        const why = st === STATUS.ERR_FORMAT ? av.cstring(ex.av_model_error()) : av.statusString(st);
        return { status: st, message: `encoding: ${why}`, ids: null };
      }
      return { status: st, message: 'ok', ids: av.i32(ip, av.i32(np, 1)[0]).slice() };
    } finally { av.free(tp); av.free(ip); av.free(np); }
  }

  /** The display text of each token (llama2.c's decode after the previous token: docs/model.md). */
  pieces(ids) {
    const av = this.av, ex = av.exports;
    const pp = av.malloc(8);
    const dec = new TextDecoder('utf-8', { fatal: false });
    try {
      return Array.from(ids, (id, i) => {
        const st = ex.av_token_piece(pp, pp + 4, this.tp, i ? ids[i - 1] : -1, id);
        if (st !== STATUS.OK) return '\ufffd';
        const [ptr, len] = av.i32(pp, 2);
        return dec.decode(new Uint8Array(av.memory.buffer, ptr >>> 0, len).slice());
      });
    } finally { av.free(pp); }
  }

  /**
   * The forward pass over ids (1 ≤ n ≤ seqLen): {status, message, n, Q (layers, heads, n, headSize),
   * K, V (layers, kvHeads, n, headSize): Float32Array copies, row-major; ms: the time it took}.
   */
  forward(ids) {
    const av = this.av, ex = av.exports, c = this.config, n = ids.length;
    if (!(n >= 1 && n <= c.seqLen)) return { status: STATUS.ERR_SIZE, message: `${n} tokens: the model takes 1..${c.seqLen} (its seq_len)` };
    const qn = c.layers * c.heads * n * c.headSize, kn = c.layers * c.kvHeads * n * c.headSize;
    const t0 = typeof performance === 'object' ? performance.now() : Date.now();
    const ip = av.malloc(4 * n), qp = av.malloc(4 * qn), kp = av.malloc(4 * kn), vp = av.malloc(4 * kn);
    try {
      av.i32(ip, n).set(ids);
      const st = ex.av_forward(qp, kp, vp, 0, this.mp, ip, 0, n, this.work, this.workBytes);
      if (st < 0) return { status: st, message: `the forward pass: ${av.statusString(st)}` };
      const ms = (typeof performance === 'object' ? performance.now() : Date.now()) - t0;
      // the weights were checked finite at load, so an overflow is a product or sum of them and the
      // activations, not the q·k or feature terms the general sentence names
      const message = st === STATUS.WARN_PRODUCT_OVERFLOW
        ? 'the forward pass: a product or sum of the weights and activations left the float32 range (Q, K, V hold Inf or NaN)'
        : st ? `the forward pass: ${av.statusString(st)}` : 'ok';
      return { status: st, message, n, Q: av.f32(qp, qn).slice(), K: av.f32(kp, kn).slice(), V: av.f32(vp, kn).slice(), ms };
    } finally { av.free(ip); av.free(qp); av.free(kp); av.free(vp); }
  }

  // --- what the model loses (docs/model.md "Swapped attention"; include/attnviz.h "What the model loses") ---

  /**
   * The per-head av_params of a swapped pass in wasm memory: {status, message, ptr, badHead, free()}. ptr
   * points at layers·heads av_params pointers, layer by layer, 0 for a head kept softmax (ptr 0 when no
   * head is swapped). knobs: a request's knobs (registry keys; `causal` is forced on: a language model is
   * causal); swapped: [[layer, head], …]; W: Map 'l|h' → Float32Array (head_size²), a distilled Hedgehog W
   * per head (else the variant's own knobs). Each head's params live in a params-only Lab (lab.mjs
   * applyKnobs: the same translation of knobs as the lab's), so a refused knob is the lab's sentence.
   */
  swapParams(knobs, swapped, W = null) {
    const av = this.av, c = this.config, count = c.layers * c.heads;
    const labs = [];
    const free = () => { for (const lab of labs) lab.free(); labs.length = 0; if (ptr) av.free(ptr); };
    const failed = (status, message, badHead = -1) => { free(); return { status, message, ptr: 0, badHead, free: () => {} }; };
    if (!swapped.length) return { status: STATUS.OK, message: 'ok', ptr: 0, badHead: -1, free: () => {} };
    const ptr = av.malloc(4 * count);
    av.i32(ptr, count).fill(0);
    for (const [l, h] of swapped) {
      if (!(Number.isInteger(l) && Number.isInteger(h) && l >= 0 && l < c.layers && h >= 0 && h < c.heads)) {
        return failed(STATUS.ERR_SIZE, `layer ${l} head ${h}: the model has layers 0..${c.layers - 1} and heads 0..${c.heads - 1}`);
      }
      const lab = new Lab(av, Math.max(2, c.seqLen), c.headSize, c.headSize, false);
      labs.push(lab);
      const w = W?.get(`${l}|${h}`);
      const k = { ...knobs, causal: true };
      delete k.hedgehog_w;
      if (w) k.hedgehog_w = w;
      const { status, why } = lab.status ? { status: lab.status, why: null } : lab.applyKnobs(k);
      if (status < 0) return failed(status, `layer ${l} head ${h}: ${lab.result(status, why).message}`, l * c.heads + h);
      av.i32(ptr + 4 * (l * c.heads + h), 1)[0] = lab.prm;
    }
    return { status: STATUS.OK, message: 'ok', ptr, badHead: -1, free };
  }

  /** A status of the swapped functions as one sentence: the refused head named (bad_head), the library's words. */
  swapMessage(st, bad, what) {
    const c = this.config, where = bad >= 0 ? `layer ${Math.floor(bad / c.heads)} head ${bad % c.heads}: ` : '';
    if (st === STATUS.WARN_PRODUCT_OVERFLOW) return `${what}: ${where}a logit is not finite (a product or sum of the weights and activations left the float32 range)`;
    return `${what}: ${where}${this.av.statusString(st)}`;
  }

  /**
   * av_forward_swapped over ids (1 ≤ n ≤ seqLen) with the heads of swapParams (ptr; 0: every head the model's,
   * the logits av_forward's bit for bit): {status, message, logits: Float32Array (n × vocab), badHead}.
   */
  forwardSwapped(ids, heads = 0, path = SWAP_PATHS.matrix) {
    const av = this.av, ex = av.exports, c = this.config, n = ids.length;
    if (!(n >= 1 && n <= c.seqLen)) return { status: STATUS.ERR_SIZE, message: `${n} tokens: the model takes 1..${c.seqLen} (its seq_len)`, logits: null, badHead: -1 };
    const bytes = ex.av_forward_swapped_work(this.mp, n, heads, path) >>> 0;
    const ip = av.malloc(4 * n), lp = av.malloc(4 * n * c.vocab), bp = av.malloc(4), w = bytes ? av.malloc(bytes) : 0;
    try {
      av.i32(ip, n).set(ids);
      av.i32(bp, 1)[0] = -1;
      // no workspace size: a refused head (its reason and index from the call, which checks before it writes)
      const st = refusal(ex.av_forward_swapped(lp, 0, 0, 0, this.mp, ip, n, heads, path, bp, w, bytes), bytes);
      const bad = av.i32(bp, 1)[0];
      if (st < 0) return { status: st, message: this.swapMessage(st, bad, 'the swapped pass'), logits: null, badHead: bad };
      return { status: st, message: st ? this.swapMessage(st, bad, 'the swapped pass') : 'ok', logits: av.f32(lp, n * c.vocab).slice(), badHead: bad };
    } finally { av.free(ip); av.free(lp); av.free(bp); av.free(w); }
  }

  /**
   * av_next_token_measures of the original logits lo and the swapped ls (n × vocab each) over ids:
   * {status, message, loss, loss_original, kl_mean, top1_agreement, perplexity, perplexity_original,
   * per_position: {loss, loss_original, kl, agree}} (Float64Arrays, agree an Int32Array; n − 1 entries).
   */
  measures(lo, ls, ids) {
    const av = this.av, ex = av.exports, c = this.config, n = ids.length, m = n - 1;
    if (n < 2) return { status: STATUS.ERR_SIZE, message: `${n} token: the measures need at least 2 (a prediction of the next)` };
    const size = n * c.vocab;
    const mp = av.malloc(40), sp = av.malloc(8 * m), op = av.malloc(8 * m), kp = av.malloc(8 * m), ap = av.malloc(4 * m);
    const lop = av.malloc(4 * size), lsp = av.malloc(4 * size), ip = av.malloc(4 * n);
    try {
      av.f32(lop, size).set(lo.subarray(0, size));
      av.f32(lsp, size).set(ls.subarray(0, size));
      av.i32(ip, n).set(ids);
      const st = ex.av_next_token_measures(mp, sp, op, kp, ap, lop, lsp, ip, n, c.vocab);
      if (st < 0) return { status: st, message: `the measures: ${av.statusString(st)}` };
      const mean = av.f64(mp, 5);
      return {
        status: st, message: 'ok',
        loss: mean[0], loss_original: mean[1], kl_mean: mean[2], top1_agreement: mean[3],
        perplexity: mean[4], perplexity_original: Math.exp(mean[1]),
        per_position: { loss: av.f64(sp, m).slice(), loss_original: av.f64(op, m).slice(), kl: av.f64(kp, m).slice(), agree: av.i32(ap, m).slice() },
      };
    } finally { for (const p of [mp, sp, op, kp, ap, lop, lsp, ip]) av.free(p); }
  }

  /**
   * av_continue_swapped: up to `steps` greedy tokens after prompt (ids, BOS first): {status, message, ids
   * (the generated tokens only), badHead}. A warning keeps the tokens before it.
   */
  continueSwapped(prompt, steps, heads = 0, path = SWAP_PATHS.matrix) {
    const av = this.av, ex = av.exports, c = this.config, n = prompt.length;
    if (!(n >= 1 && n <= c.seqLen)) return { status: STATUS.ERR_SIZE, message: `the prompt is ${n} tokens: the model takes 1..${c.seqLen} (its seq_len)`, ids: null, badHead: -1 };
    const total = Math.min(n + steps, c.seqLen);
    const bytes = ex.av_continue_swapped_work(this.mp, total, heads, path) >>> 0;
    const pp = av.malloc(4 * n), op = av.malloc(4 * (n + steps)), np = av.malloc(4), bp = av.malloc(4), w = bytes ? av.malloc(bytes) : 0;
    try {
      av.i32(pp, n).set(prompt);
      av.i32(bp, 1)[0] = -1;
      const st = refusal(ex.av_continue_swapped(op, np, this.mp, pp, n, steps, heads, path, bp, w, bytes), bytes);
      const bad = av.i32(bp, 1)[0];
      if (st < 0) return { status: st, message: this.swapMessage(st, bad, 'the continuation'), ids: null, badHead: bad };
      const got = av.i32(np, 1)[0];
      return { status: st, message: st ? this.swapMessage(st, bad, 'the continuation') : 'ok', ids: av.i32(op + 4 * n, Math.max(0, got - n)).slice(), badHead: bad };
    } finally { for (const p of [pp, op, np, bp, w]) av.free(p); }
  }

  /**
   * av_swap_sensitivity over ids (n ≥ 2): {status, message, byLayer: [{layer, delta_loss, kl_mean,
   * top1_agreement}], byHead: [{layer, head, …}] (every head, layer by layer; a head kept softmax 0, 0, 1)}.
   */
  sensitivity(ids, heads, path = SWAP_PATHS.matrix) {
    const av = this.av, ex = av.exports, c = this.config, n = ids.length;
    if (n < 2) return { status: STATUS.ERR_SIZE, message: `${n} token: the sensitivity needs at least 2` };
    const bytes = ex.av_swap_sensitivity_work(this.mp, n, heads, path) >>> 0;
    const L = c.layers, H = c.heads;
    const lp = av.malloc(8 * 3 * L), hp = av.malloc(8 * 3 * L * H), ip = av.malloc(4 * n), bp = av.malloc(4), w = bytes ? av.malloc(bytes) : 0;
    try {
      av.i32(ip, n).set(ids);
      av.i32(bp, 1)[0] = -1;
      const st = refusal(ex.av_swap_sensitivity(lp, hp, this.mp, ip, n, heads, path, bp, w, bytes), bytes);
      const bad = av.i32(bp, 1)[0];
      if (st < 0) return { status: st, message: this.swapMessage(st, bad, 'the sensitivity') };
      const bl = av.f64(lp, 3 * L), bh = av.f64(hp, 3 * L * H);
      const entry = (a, i) => ({ delta_loss: a[3 * i], kl_mean: a[3 * i + 1], top1_agreement: a[3 * i + 2] });
      return {
        status: st, message: st ? this.swapMessage(st, bad, 'the sensitivity') : 'ok',
        byLayer: Array.from({ length: L }, (_, l) => ({ layer: l, ...entry(bl, l) })),
        byHead: Array.from({ length: L * H }, (_, i) => ({ layer: Math.floor(i / H), head: i % H, ...entry(bh, i) })),
      };
    } finally { for (const p of [lp, hp, ip, bp, w]) av.free(p); }
  }

  free() {
    for (const p of this.ptrs) this.av.free(p);
    this.ptrs = [];
  }
}


// ----------------------------------------------------------------------------------------------------
// Hugging Face model folders (docs/hf.md; include/attnviz.h "Hugging Face model folders")

/**
 * The page's token limit for a Hugging Face model: its seq_len is min(the config's context, this). The
 * forward pass is one call that the worker cannot interrupt, and the captures, the loses panel's logits
 * (n × vocab floats, several at once) and the overview grow with n: docs/model.md "Hugging Face folders"
 * gives the timings this was chosen from.
 */
export const PAGE_MAX_TOKENS = 512;
/** Bytes read from a file at a time (File.slice + arrayBuffer): no second full copy of a shard in JS memory. */
export const READ_CHUNK = 32 * 2 ** 20;
const HF_CONFIG_BYTES = 256;   // sizeof(av_hf_config) is 240 in wasm32: arch 0, architecture 4, model_type 68, dims 100
const HF_INDEX_BYTES = 32;     // sizeof(av_hf_index) is 20: n_shards, n_tensors, shard (char **), tensor, tensor_shard
const ST_FILE_BYTES = 32;      // sizeof(av_st_file) in wasm32: n_tensors 0, n_meta 4, tensors 8 (av_st_tensor *)
const WEIGHT_BYTES = 24;       // sizeof(av_weight) in wasm32: p 0, dtype 4, trans 8, ld 16
const AVM_EMB = 192, AVM_LAYER = 312; // av_model: emb, pos_emb, final_norm, final_norm_b, cls (av_weight each), then layer
const AV_LW_COUNT = 20;        // enum av_layer_weight's count: a layer's weights in the bind's table
const DTYPES = ['F32', 'F16', 'BF16'];
const GiB = 2 ** 30;
/**
 * The largest one allocation wasm memory gives: emscripten's dlmalloc takes no single request of 2 GB or more
 * (sys_alloc's HALF_MAX_SIZE_T), though the memory as a whole reaches 4 GB. A shard is one allocation.
 */
export const MAX_ONE_ALLOCATION = 2 ** 31 - 2 ** 20;

/** A size in the page's words: "870 MB", "1.2 GB" (binary units, as the 4 GB of wasm memory). */
export function fmtBytes(b) {
  if (b >= GiB) return `${(b / GiB).toFixed(b >= 10 * GiB ? 0 : 1).replace(/\.0$/, '')} GB`;
  return `${Math.max(1, Math.round(b / 2 ** 20))} MB`;
}

const baseName = (f) => String(f?.name ?? '').split(/[\\/]/).pop();
const sizeOf = (x) => (x instanceof Uint8Array ? x.length : x?.bytes instanceof Uint8Array ? x.bytes.length : Number(x?.size ?? 0));

/**
 * Which files of a folder (or a drop, or a pick of several) the model needs, by name: {config, index,
 * shards, tokenizer, ignored}: config.json, model.safetensors.index.json, every *.safetensors,
 * tokenizer.json; everything else (tokenizer_config.json, generation_config.json, README.md, …) ignored.
 * `isFolder`: whether the names make a Hugging Face folder (config.json or a .safetensors among them).
 */
export function folderFiles(list) {
  const out = { config: null, index: null, shards: [], tokenizer: null, ignored: [] };
  for (const f of list) {
    const n = baseName(f);
    if (n === 'config.json') out.config = f;
    else if (n === 'model.safetensors.index.json') out.index = f;
    else if (/\.safetensors$/i.test(n)) out.shards.push(f);
    else if (n === 'tokenizer.json') out.tokenizer = f;
    else out.ignored.push(f);
  }
  out.isFolder = !!out.config || out.shards.length > 0;
  return out;
}

/** Bytes of a File/Blob, a Uint8Array or {bytes} at [begin, end). */
async function bytesOf(x, begin = 0, end = sizeOf(x)) {
  if (x instanceof Uint8Array) return x.subarray(begin, end);
  if (x?.bytes instanceof Uint8Array) return x.bytes.subarray(begin, end);
  return new Uint8Array(await x.slice(begin, end).arrayBuffer());
}

/**
 * What the page's forward pass, captures and loses panel take beyond the weights for a model of config c
 * (the sizes av_hf_config_parse read) at seq tokens, in bytes: the forward workspace (src/model.c hf_layout:
 * the key/value cache and a block of 32 positions), Q, K, V for every layer in wasm memory and once more in
 * JS, and four n × vocab logits (the loses panel's original and swapped passes and their measures).
 */
export function hfRunBytes(c, seq) {
  const qd = c.heads * c.headSize, kvd = c.kvHeads * c.headSize, B = 32;
  const work = 8 * c.layers * seq * kvd + 8 * B * (3 * c.dim + 2 * qd + 2 * kvd + 2 * c.hiddenDim) + 8 * seq + 4 * B * (c.dim + c.hiddenDim + c.vocab);
  const captures = 2 * 4 * c.layers * (c.heads + 2 * c.kvHeads) * seq * c.headSize;
  const logits = 4 * 4 * seq * c.vocab;
  return work + captures + logits;
}

/**
 * The most this tab may take for a model: the module's memory maximum (4 GB: wasm32), and no more than the
 * device says it has (navigator.deviceMemory, a rounded lower bound in GB, when the browser gives it).
 * {bytes, why: 'wasm' | 'device', deviceGB}.
 */
export function tabLimit(av, deviceGB = globalThis.navigator?.deviceMemory) {
  const wasm = av.limits.maxBytes;
  if (Number.isFinite(deviceGB) && deviceGB > 0 && deviceGB * GiB < wasm) return { bytes: deviceGB * GiB, why: 'device', deviceGB };
  return { bytes: wasm, why: 'wasm', deviceGB: null };
}

/**
 * A Hugging Face model folder in wasm memory: config.json, the shards (their bytes copied in once, in
 * chunks, and used where they lie: BF16 stays BF16), the index when sharded, tokenizer.json. The forward
 * pass, the swapped passes and the measures are Model's (av_forward works on a bound model unchanged);
 * encode and pieces are the tokenizer.json's (av_hf_encode with add_special 1, av_hf_token_bytes).
 */
export class HFModel extends Model {
  /**
   * Load files = {config, index?, shards: [], tokenizer} (File/Blob, Uint8Array, or {name, bytes}; shards
   * need their names when an index names them). onProgress({stage: 'reading', done, total, file}) after
   * every chunk. opts: {maxTokens (PAGE_MAX_TOKENS), cancelled: () => bool (checked between chunks),
   * deviceGB (navigator.deviceMemory), chunk (READ_CHUNK bytes)}. Resolves {status, message, model, need, limit}: model null with one
   * sentence when refused (too large before anything is read: `tooLarge` {need, max, why, deviceGB}; a
   * sentence of this file's own: `key` and `params`, its notice.x.job.KEY template in the page's catalogue).
   */
  static async fromFolder(av, files, onProgress = null, opts = {}) {
    const m = new HFModel(av, null, null);
    try {
      const r = await m.load(files, onProgress, opts);
      if (r.status !== STATUS.OK) { m.free(); return { ...r, model: null }; }
      return { ...r, model: m };
    } catch (err) {
      m.free();
      if (!(err instanceof RangeError) || err.status === undefined) throw err;
      return { status: err.status, message: `the model does not fit in memory: ${err.message}`, model: null };
    }
  }

  async load(files, onProgress, { maxTokens = PAGE_MAX_TOKENS, cancelled = () => false, deviceGB, chunk = READ_CHUNK } = {}) {
    const av = this.av, ex = av.exports;
    const take = (bytes) => { const p = av.malloc(bytes); this.ptrs.push(p); return p; };
    const release = (p) => { const i = this.ptrs.indexOf(p); if (i >= 0) this.ptrs.splice(i, 1); av.free(p); };
    const refuse = (status, message, extra = {}) => ({ status, message, ...extra });
    const why = (st, fn) => (st === STATUS.ERR_FORMAT || st === STATUS.ERR_NONFINITE || st === STATUS.ERR_SIZE ? av.cstring(fn()) || av.statusString(st) : av.statusString(st));
    if (!files?.config) return refuse(STATUS.ERR_NULL, 'the folder has no config.json', { key: 'hfNoConfig' });
    if (!files.tokenizer) return refuse(STATUS.ERR_NULL, 'the folder has no tokenizer.json', { key: 'hfNoTokenizer' });
    const shards = [...(files.shards ?? [])];
    if (!shards.length) return refuse(STATUS.ERR_NULL, 'the folder has no .safetensors file', { key: 'hfNoShards' });
    /** A small JSON file copied whole into wasm memory: [ptr, len]. */
    const small = async (x) => { const b = await bytesOf(x); const p = take(b.length); new Uint8Array(av.memory.buffer, p, b.length).set(b); return [p, b.length]; };

    // config.json: the sizes, before any shard is read
    const [cfgBuf, cfgLen] = await small(files.config);
    const cp = take(HF_CONFIG_BYTES);
    let st = ex.av_hf_config_parse(cp, cfgBuf, cfgLen);
    if (st !== STATUS.OK) return refuse(st, `config.json: ${why(st, ex.av_model_error)}`);
    const cstr = (p, cap) => { const b = new Uint8Array(av.memory.buffer, p, cap); const e = b.indexOf(0); return new TextDecoder().decode(b.slice(0, e < 0 ? cap : e)); };
    const architecture = cstr(cp + 4, 64), modelType = cstr(cp + 68, 32);
    const [dim, hiddenDim, layers, heads, kvHeads, headSize, vocab, context] = av.i32(cp + 100, 8);
    const slidingWindow = av.i32(cp + 232, 1)[0];
    const seq = Math.min(context, maxTokens, slidingWindow > 0 ? slidingWindow : Infinity);

    // the index (when sharded): which shard files, in its order
    let ixp = 0, order = shards;
    if (files.index) {
      const [ib, il] = await small(files.index);
      const iw = ex.av_hf_index_work(ib, il) >>> 0;
      if (!iw) return refuse(STATUS.ERR_FORMAT, `model.safetensors.index.json: ${av.cstring(ex.av_model_error())}`);
      ixp = take(HF_INDEX_BYTES);
      st = ex.av_hf_index_parse(ixp, take(iw), iw, ib, il);
      if (st !== STATUS.OK) return refuse(st, `model.safetensors.index.json: ${why(st, ex.av_model_error)}`);
      const [nShards] = av.i32(ixp, 1), names = av.i32(ixp + 8, 1)[0] >>> 0;
      const byName = new Map(shards.map((f) => [baseName(f), f]));
      order = [];
      for (let i = 0; i < nShards; i++) {
        const name = av.cstring(av.i32(names + 4 * i, 1)[0] >>> 0), f = byName.get(name);
        if (!f) return refuse(STATUS.ERR_FORMAT, `the index names the shard ${name}, which is not among the files given`, { key: 'hfMissingShard', params: { name } });
        order.push(f);
      }
    } else if (shards.length > 1) {
      return refuse(STATUS.ERR_FORMAT, `${shards.length} .safetensors files and no model.safetensors.index.json to say which tensor is where`, { key: 'hfNoIndex', params: { count: shards.length } });
    }

    // what the model needs, before anything large is read: the shards as they are, the tokenizer, the pass
    const weights = order.reduce((a, f) => a + sizeOf(f), 0);
    const cfg = { dim, hiddenDim, layers, heads, kvHeads, headSize, vocab };
    const need = weights + 3 * sizeOf(files.tokenizer) + hfRunBytes(cfg, seq);
    const limit = tabLimit(av, deviceGB);
    if (need > limit.bytes) {
      return refuse(STATUS.ERR_TOO_LARGE, `this model needs ${fmtBytes(need)}; the page can hold at most ${fmtBytes(limit.bytes)} (${limit.why === 'device' ? `this device reports ${limit.deviceGB} GB of memory` : 'the tab\'s WebAssembly memory'})`,
        { tooLarge: { need, max: limit.bytes, why: limit.why, deviceGB: limit.deviceGB } });
    }
    const whole = order.find((f) => sizeOf(f) > MAX_ONE_ALLOCATION);
    if (whole) {
      const name = baseName(whole), size = fmtBytes(sizeOf(whole));
      return refuse(STATUS.ERR_TOO_LARGE, `${name} is ${size}: the page holds one file of at most 2 GB in one piece (the same model saved in shards of 1 GB or less loads)`,
        { key: 'hfShardTooLarge', params: { name, size } });
    }

    // tokenizer.json (its parse does not keep the text: the buffer is freed)
    const [tb, tl] = await small(files.tokenizer);
    const tw = ex.av_hf_tokenizer_work(tb, tl) >>> 0;
    if (!tw) return refuse(STATUS.ERR_FORMAT, `tokenizer.json: ${av.cstring(ex.av_model_error())}`);
    const tpp = take(8);
    st = ex.av_hf_tokenizer_parse(tpp, take(tw), tw, tb, tl);
    if (st !== STATUS.OK) return refuse(st, `tokenizer.json: ${why(st, ex.av_model_error)}`);
    this.htp = av.i32(tpp, 1)[0] >>> 0;
    const tokenizerKind = tokenizerKindOf(await bytesOf(files.tokenizer));
    release(tb);

    // the shards, chunk by chunk, each parsed once it is in
    const fp = take(ST_FILE_BYTES * order.length);
    let done = 0;
    for (let i = 0; i < order.length; i++) {
      const f = order[i], len = sizeOf(f), name = baseName(f) || `shard ${i + 1}`;
      const p = take(len);
      for (let at = 0; at < len; at += chunk) {
        if (cancelled()) return refuse(STATUS.ERR_NULL, 'cancelled', { cancelled: true });
        const b = await bytesOf(f, at, Math.min(len, at + chunk));
        if (b.length !== Math.min(chunk, len - at)) return refuse(STATUS.ERR_IO, `${name}: the file changed while it was read`, { key: 'hfChanged', params: { name } });
        new Uint8Array(av.memory.buffer, p + at, b.length).set(b);
        done += b.length;
        onProgress?.({ stage: 'reading', done, total: weights, file: name });
      }
      const sw = ex.av_st_work(p, len) >>> 0;
      if (!sw) return refuse(STATUS.ERR_FORMAT, `${name}: ${av.cstring(ex.av_st_error())}`);
      st = ex.av_st_parse(fp + ST_FILE_BYTES * i, take(sw), sw, p, len);
      if (st !== STATUS.OK) return refuse(st, `${name}: ${st === STATUS.ERR_FORMAT ? av.cstring(ex.av_st_error()) : av.statusString(st)}`);
    }
    if (!order.length) onProgress?.({ stage: 'reading', done: 0, total: 0, file: '' });

    // bind: every tensor found, its shape checked, every value finite
    const bw = ex.av_hf_model_work(cp) >>> 0;
    this.mp = take(MODEL_STRUCT_BYTES);
    st = ex.av_hf_model_bind(this.mp, cp, fp, order.length, ixp, seq, take(Math.max(8, bw)), bw);
    if (st !== STATUS.OK) return refuse(st, `the weights: ${why(st, ex.av_model_error)}`);
    // the dtypes of the weights the model reads (not of every tensor in the files: GPT-2's mask buffers, a
    // rotary inv_freq, integer buffers are not weights): emb, pos_emb, final norm and its bias, cls, every layer's
    const dtypes = new Set();
    const weightAt = (p) => { if (av.i32(p, 1)[0] !== 0) dtypes.add(DTYPES[av.i32(p + 4, 1)[0]] ?? '?'); };
    for (let off = AVM_EMB; off < AVM_LAYER; off += WEIGHT_BYTES) weightAt(this.mp + off);
    const layerTable = av.i32(this.mp + AVM_LAYER, 1)[0] >>> 0, nLayers = av.i32(this.mp + 8, 1)[0];
    for (let i = 0; i < nLayers * AV_LW_COUNT; i++) weightAt(layerTable + WEIGHT_BYTES * i);
    const c = av.i32(this.mp, MODEL_CONFIG.length);
    const [arch, modelContext, bos] = av.i32(this.mp + 92, 3); // av_model's arch, context, bos_id
    this.config = Object.freeze({
      ...Object.fromEntries(MODEL_CONFIG.map((k, i) => [k, k === 'sharedClassifier' ? !!c[i] : c[i]])),
      format: 'hf', architecture, modelType, arch, bos, dtype: [...dtypes].sort().join('+'),
      bytes: Number(ex.av_hf_model_bytes(this.mp)), fileBytes: weights, context: modelContext, limit: maxTokens,
      tokenizer: tokenizerKind, tokenizerVocab: ex.av_hf_tokenizer_vocab(this.htp),
    });
    this.workBytes = ex.av_forward_work(this.mp) >>> 0;
    if (!this.workBytes) return refuse(STATUS.ERR_TOO_LARGE, `the forward pass: ${av.statusString(STATUS.ERR_TOO_LARGE)}`);
    this.work = take(this.workBytes);
    this.status = STATUS.OK;
    this.message = 'ok';
    return { status: STATUS.OK, message: 'ok', need, limit: limit.bytes };
  }

  /** tokenizer.json's encode with what its post-processor adds (add_special 1: Llama's BOS): {status, message, ids}. */
  encode(text) {
    const av = this.av, ex = av.exports;
    const utf8 = new TextEncoder().encode(String(text));
    // every token holds at least one byte (or is one of the few the post-processor adds)
    if (utf8.length > 64 * this.config.seqLen + 64) {
      return { status: STATUS.ERR_SIZE, message: `the text is ${utf8.length} bytes: more than the model's ${this.config.seqLen} tokens can hold`, ids: null };
    }
    // the tokenizer helper's contract adds a scratch (av_hf_encode_work) and a bound on cap (av_hf_encode_cap)
    const scratch = typeof ex.av_hf_encode_work === 'function';
    const cap = scratch ? Math.max(1, ex.av_hf_encode_cap(this.htp, utf8.length) >>> 0) : utf8.length + 8;
    const wb = scratch ? ex.av_hf_encode_work(this.htp, utf8.length) >>> 0 : 0;
    if (scratch && !wb) return { status: STATUS.ERR_TOO_LARGE, message: `encoding: ${av.statusString(STATUS.ERR_TOO_LARGE)}`, ids: null };
    const tp = av.malloc(utf8.length + 1), ip = av.malloc(4 * cap), np = av.malloc(4), wp = wb ? av.malloc(wb) : 0;
    try {
      new Uint8Array(av.memory.buffer, tp, utf8.length).set(utf8);
      const st = scratch ? ex.av_hf_encode(ip, np, cap, this.htp, tp, utf8.length, 1, 0, wp, wb) : ex.av_hf_encode(ip, np, cap, this.htp, tp, utf8.length, 1, 0);
      if (st !== STATUS.OK) {
        const why = st === STATUS.ERR_FORMAT ? av.cstring(ex.av_model_error()) : av.statusString(st);
        return { status: st, message: `encoding: ${why}`, ids: null };
      }
      const ids = av.i32(ip, av.i32(np, 1)[0]).slice();
      const bad = ids.findIndex((id) => id < 0 || id >= this.config.vocab);
      if (bad >= 0) return { status: STATUS.ERR_SIZE, message: `encoding: token ${ids[bad]} is outside the model's vocabulary of ${this.config.vocab} (the tokenizer and the model do not match)`, ids: null };
      return { status: st, message: 'ok', ids };
    } finally { av.free(tp); av.free(ip); av.free(np); av.free(wp); }
  }

  /** The display text of each token: its bytes as the tokenizer's decoder gives them after the previous one. */
  pieces(ids) {
    const av = this.av, ex = av.exports, cap = 4096; // AV_TOKEN_MAX_LEN·4
    const op = av.malloc(cap), lp = av.malloc(4);
    const dec = new TextDecoder('utf-8', { fatal: false });
    try {
      return Array.from(ids, (id, i) => {
        const st = ex.av_hf_token_bytes(op, lp, cap, this.htp, i ? ids[i - 1] : -1, id);
        if (st !== STATUS.OK) return '\ufffd';
        return dec.decode(new Uint8Array(av.memory.buffer, op, av.i32(lp, 1)[0]).slice());
      });
    } finally { av.free(op); av.free(lp); }
  }
}

/** What kind of BPE tokenizer.json holds, in a few words (the status line's): byte-level or byte-fallback. */
export function tokenizerKindOf(bytes) {
  let j;
  try { j = JSON.parse(new TextDecoder().decode(bytes)); } catch { return 'BPE'; }
  const types = (x) => (!x ? [] : x.type === 'Sequence' ? (x.pretokenizers ?? x.decoders ?? x.normalizers ?? []).flatMap(types) : [x.type]);
  if ([...types(j.pre_tokenizer), ...types(j.decoder)].includes('ByteLevel')) return 'byte-level BPE';
  if (j.model?.byte_fallback) return 'BPE with byte fallback';
  return 'BPE';
}
