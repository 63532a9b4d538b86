// inspect.mjs: the page's inspection API, window.attnviz.snapshot() (its contract: docs/inspection.md).
// A snapshot is {state, readouts, tokens, gates} for one state of the page, taken once the view for that state
// has settled: `state` the link's keys and values, `readouts` the keys `attnviz readouts` prints, built
// from the results the page shows, and `tokens` null (no real text is loaded yet).
//
// main.mjs owns the view; it hands createInspector a probe that says, at a quiet moment, which state the
// page is in and what it shows, and calls notify() whenever that may have changed (after each commit,
// after a worker finished a job). Every result the view holds is tagged with the request it was computed
// for (state.mjs's requestOf, as JSON) and whether it came from a drag; a snapshot uses a result only
// when its tag is the current request's (and, for the spectrum, not a drag's), so it never reports
// readouts of an older state than the one it names. Pure apart from the timers of createInspector; no DOM.
import { MARK_SUFFIXES } from '../compute/spectral.mjs';

/**
 * The link's keys and values as the address bar carries them: `v=1&gen=gaussian&…` (with or without '#')
 * → {v: '1', gen: 'gaussian', …}, values decoded and kept as strings, in the link's order.
 */
export function linkState(hash) {
  const out = {};
  for (const part of String(hash ?? '').replace(/^#/, '').split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    out[decodeURIComponent(i < 0 ? part : part.slice(0, i))] = decodeURIComponent(i < 0 ? '' : part.slice(i + 1));
  }
  return out;
}

/**
 * Whether the address bar's hash carries the state's link: every key of `hash` (the state's, state.mjs's
 * toHash) with the same value. Keys the page does not know are left aside. A difference means a
 * navigation the page has not read yet (its hashchange is still queued), or the address bar not yet written.
 */
export function linkAgrees(address, hash) {
  const a = linkState(address), h = linkState(hash);
  return Object.keys(h).every((k) => a[k] === h[k]);
}

/**
 * The route of a spectrum the engine computed (web/compute/engine.mjs: 'accurate', 'fast', 'factors (r = …)',
 * 'top k (randomized)') by its name in the snapshot: 'accurate' | 'fast' | 'factors' | 'topk'.
 */
export function routeName(spec) {
  const r = String(spec?.route ?? '');
  if (r === 'accurate' || r === 'fast') return r;
  if (r.startsWith('factors')) return 'factors';
  if (spec?.partial || r.startsWith('top')) return 'topk';
  return r || null;
}

/**
 * The truncated-SVD error curve as av_error_curve computes it (src/readouts.c): e(r) = Σ_{i>r} σᵢ² / Σσᵢ²
 * for r = 0..k, by suffix sums from the smallest σ, the σ scaled by a power of two so that no square
 * overflows (the ratios are the same bits as unscaled otherwise); all zeros for the zero matrix. When sv
 * holds only the top k of them, `total` (‖M‖_F²) stands for Σσᵢ² and e(k) is what the rest carries.
 * Returns null when a σ is not finite (the CLI's curve is then null too).
 */
export function errorCurve(sv, total = null) {
  const k = sv.length;
  let big = 0;
  for (let i = 0; i < k; i++) {
    if (!Number.isFinite(sv[i])) return null;
    big = Math.max(big, Math.abs(sv[i]));
  }
  const scale = big > 0 ? 2 ** -Math.ceil(Math.log2(big)) : 1;
  const e = new Array(k + 1);
  if (total === null) {
    e[k] = 0;
    for (let r = k - 1; r >= 0; r--) { const s = sv[r] * scale; e[r] = e[r + 1] + s * s; }
    const tot = e[0];
    if (tot > 0) for (let r = 0; r <= k; r++) e[r] /= tot;
    return e;
  }
  const tot = total * scale * scale;
  let tail = tot;
  for (let r = 0; r <= k; r++) {
    e[r] = tot > 0 ? Math.max(0, tail / tot) : 0;
    if (r < k) { const s = sv[r] * scale; tail -= s * s; }
  }
  return e;
}

/**
 * The snapshot's readouts: the keys of `attnviz readouts` (src/cli/readouts_cmd.c), in its order, from
 * the parts of the view computed for one request (docs/inspection.md says which key comes from where).
 *   req       the request (state.mjs's requestOf) they were computed for
 *   frame     the heatmaps' frame (engine.frame: cost, statuses), or null
 *   plain     the non-spectral readouts (engine.plainReadouts), or null
 *   spec      the spectrum with its readouts (engine.spectrum), or null
 *   names     the library's readout keys in enum av_readout order
 *   exact     whether the variant is the reference itself (plain softmax, no decay, no window: no error readouts)
 *   STATUS    the status codes by name; statusString(code) the library's sentence for one
 *   missing   the reason given for a readout no part holds
 */
export function cliReadouts({ req, frame, plain, spec, names, exact, STATUS, statusString, missing }) {
  const { inputs: { n, d }, knobs } = req;
  const out = { variant: knobs.variant, n, d, causal: !!knobs.causal };
  const route = spec ? routeName(spec) : null;
  out.route = route;
  const sv = spec?.sv ? Array.from(spec.sv) : null;
  // the top k of a randomized route are each ≤ the true σᵢ, so the curve's e(r) is ≥ the true (a zero M is exact)
  const bounded = !!sv && !!spec.partial && spec.fro2 > 0;
  if (sv) {
    out.singular_values = sv;
    if (bounded) out.singular_values_bound = 'lower';
  } else {
    out.singular_values = null;
    out.singular_values_reason = spec ? (spec.message ?? 'the route failed') : missing;
  }
  const matrixFailed = frame?.status?.matrix?.status < 0;
  const why = matrixFailed ? `the matrix could not be computed: ${frame.status.matrix.message}` : missing;
  for (const key of names) {
    const src = spec?.readouts && Object.hasOwn(spec.readouts, key) ? spec.readouts
      : plain && Object.hasOwn(plain, key) ? plain : null;
    const v = src ? src[key] : null;
    if (typeof v === 'number' && Number.isFinite(v)) {
      out[key] = v;
      for (const m of MARK_SUFFIXES) if (src[`${key}${m}`] !== undefined) out[`${key}${m}`] = src[`${key}${m}`]; // a bound or an estimate says so
    } else {
      out[key] = null;
      out[`${key}_reason`] = src?.[`${key}_reason`] ?? (src ? 'the readout is not finite' : why);
    }
  }
  if (Number.isInteger(frame?.semiCeiling)) out.semiseparable_ceiling = frame.semiCeiling;
  const curve = sv ? errorCurve(sv, spec.partial ? (spec.fro2 ?? null) : null) : null;
  if (curve) {
    out.error_curve = curve;
    if (bounded) out.error_curve_bound = 'upper';
  } else { out.error_curve = null; out.error_curve_reason = 'no singular values were given'; }
  const hist = plain?.entropy_hist?.M;
  if (hist?.counts) out.row_entropy_hist = { lo: 0, hi: hist.top, counts: Array.from(hist.counts) };
  if (route === 'factors' && Number.isInteger(spec.factorRank)) out.factor_rank = spec.factorRank;
  if (frame?.cost) out.cost = { ...frame.cost };
  else { out.cost = null; out.cost_reason = frame ? 'the cost counts could not be computed' : why; }
  out.status = statusLines({ frame, plain, spec, exact, STATUS, statusString });
  return out;
}

/** The CLI's "status" list ("<step>: <sentence>", one per step that did not return AV_OK), as far as the page ran the steps. */
function statusLines({ frame, plain, spec, exact, STATUS, statusString }) {
  const m = frame?.status?.matrix?.status ?? 0;
  const upstream = m === STATUS.WARN_OVERFLOW || m === STATUS.WARN_PRODUCT_OVERFLOW;
  const lines = [];
  const note = (where, code) => {
    if (!Number.isInteger(code) || code === 0) return;
    const text = code === STATUS.ERR_NONFINITE && upstream ? 'the matrix holds Inf or NaN (it overflowed: see matrix)' : statusString(code);
    lines.push(`${where}: ${text}`);
  };
  note('matrix', m);
  if (!exact) note('softmax reference', frame?.status?.ref?.status);
  if (spec && routeName(spec) !== 'factors') note('spectrum', spec.status);
  note('readouts', plain?.status);
  note('row_entropy_hist', plain?.entropy_hist?.M?.status);
  return lines.slice(0, 8);
}

/** The library's readout keys in enum av_readout order (what the CLI prints): the registry's (av_readout_info). */
export function readoutKeys(av) {
  return av.registry.readouts.map((r) => r.key);
}

/**
 * The snapshot's `gates` (docs/inspection.md) from a frame's (web/compute/gates.mjs gatesSummary): {kind, knobs,
 * channels, n, min, max (of the log-gates g), resets (token positions t > 0 whose every channel is reset), beta:
 * null | {kind, knobs, min, max}, ab: dplr's a, b: null (a = b = 0) | {kind: 'rwkv7', icl} | {kind: 'file'}}; null while the frame has none (a gated family whose gates could not be made).
 */
export function gatesPart(g) {
  if (!g) return null;
  return { kind: g.kind, knobs: { ...g.knobs }, channels: g.channels, n: g.n, min: g.min, max: g.max, resets: [...g.resets],
    beta: g.beta ? { kind: g.beta.kind, knobs: { ...g.beta.knobs }, min: g.beta.min, max: g.beta.max } : null,
    ab: g.ab ? { ...g.ab } : null };
}

/**
 * The snapshot machinery. `probe()` returns null while the page is not quiet (a commit pending, a drag
 * under way, a worker busy), else {hash, address, req, parts: {frame, plain, spec}, tags: {frame, plain,
 * spec}, av, full}: the state's link, the address bar's hash, the state's request, what the view holds, each
 * part with the tag {key, drag} of the request it was computed for, the page's module (web/wasm/attnviz.mjs),
 * and `full`, the link with every key (state.mjs's toHash complete: src, layer, head even at their
 * default), which the snapshot's state reports (the link itself leaves those out, docs/inspection.md).
 * While the address bar and the state disagree (a link the page has not read yet) the snapshot waits.
 * Returns {snapshot(), notify(), fail(error)}: snapshot() a promise of {state, readouts, tokens};
 * notify() tries to settle the waiting snapshots; fail() rejects them, and every later one.
 */
export function createInspector(probe) {
  let waiting = [];
  let failure = null;

  function settle() {
    if (!waiting.length) return;
    if (failure) {
      const w = waiting; waiting = [];
      for (const x of w) x.reject(failure);
      return;
    }
    let snap;
    try {
      snap = take();
    } catch (err) { // a bug, not a state: say so rather than leave the callers waiting
      const w = waiting; waiting = [];
      for (const x of w) x.reject(err);
      return;
    }
    if (!snap) return;
    const w = waiting; waiting = [];
    for (const x of w) x.resolve(structuredClone(snap));
  }

  /** The snapshot of the page as it is, or null while it is not settled. */
  function take() {
    const p = probe();
    if (!p || !linkAgrees(p.address, p.hash)) return null;
    const key = JSON.stringify(p.req);
    const current = (tag, release = false) => !!tag && tag.key === key && !(release && tag.drag);
    const frame = current(p.tags.frame) ? p.parts.frame : null;
    const plain = current(p.tags.plain) ? p.parts.plain : null;
    const spec = current(p.tags.spec, true) ? p.parts.spec : null;
    // quiet, yet a part is not the current request's: its computation failed (the page shows a notice)
    const missing = 'the page did not compute it for this state (its computation failed: see the page\'s notice)';
    return {
      state: linkState(p.full ?? p.hash),
      readouts: cliReadouts({ req: p.req, frame, plain, spec, names: readoutKeys(p.av), missing,
        exact: p.av.isPlainSoftmax(p.req.knobs), STATUS: p.av.STATUS,
        statusString: (code) => p.av.statusString(code) }),
      tokens: p.tokens ?? null,
      gates: p.req.gates ? gatesPart(frame?.gates ?? null) : null,
      // the panel "what the model loses" (web/ui/loss-panel.mjs): null unless it is open with a model loaded
      loses: p.loses ?? null,
      // the real model loaded (src=model): its format, architecture, dtype and sizes; null otherwise
      model: p.model ?? null,
    };
  }

  return {
    snapshot() {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        // a task later: a change made in the caller's task (a hashchange, a control's event) is seen first
        setTimeout(settle, 0);
      });
    },
    notify: settle,
    fail(error) { failure = error instanceof Error ? error : new Error(String(error)); settle(); },
  };
}
