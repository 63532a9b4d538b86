// model.mjs: a real llama2.c model in wasm memory (av.model(a, b), web/wasm/attnviz.mjs; docs/model.md):
// its checkpoint and tokenizer parsed once, the text encoded, the attention of every layer and head read
// from a forward pass.

import { STATUS } from './loading.mjs';
import { Lab } from './lab.mjs';

const MODEL_STRUCT_BYTES = 512;  // src/model.c asserts sizeof(av_model) <= 512 (368 natively); av_tokenizer 28
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

