// model.mjs: a real llama2.c model in wasm memory (av.model(a, b), web/wasm/attnviz.mjs; docs/model.md):
// its checkpoint and tokenizer parsed once, the text encoded, the attention of every layer and head read
// from a forward pass.

import { STATUS } from './loading.mjs';

const MODEL_STRUCT_BYTES = 256;  // sizeof(av_model) is 92 in wasm32; sizeof(av_tokenizer) 28
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
      /** {dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen, headSize, kvDim, sharedClassifier} */
      this.config = Object.freeze(Object.fromEntries(MODEL_CONFIG.map((k, i) => [k, k === 'sharedClassifier' ? !!c[i] : c[i]])));
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

  free() {
    for (const p of this.ptrs) this.av.free(p);
    this.ptrs = [];
  }
}

