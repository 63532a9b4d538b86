// worker.mjs: the lab's heavy work off the page's thread. The page runs four instances of this file, each a
// module worker with its own instance of the wasm module, named for what they do: the frame worker (the
// heatmaps and plain readouts for n > MAIN_THREAD_MAX_N, above FRAME_WORKER_MAX_N a drag's quick frame and
// the full one on release), the spectrum worker (spectra and overlays), the background worker (sweeps,
// exports, a real model, the overview) and the mechanisms worker (web/ui/mechanisms.mjs). Each answers
// whatever it is sent; the messages, both ways, are web/workers/protocol.mjs's.
// Latest wins (web/workers/queue.mjs): a job that a newer one supersedes stops at its next step.
import { loadAttnviz } from '../wasm/attnviz.mjs';
import { MSG, PART, transferables } from './protocol.mjs';
import { Engine, overlayKey } from '../compute/engine.mjs';
import { createLatestSlot } from './queue.mjs';
import { runSweep } from '../compute/sweep.mjs';
import { stepFrame, scalingRun, crossover, recallCurve, recallAgainstD, overwrite, distillChunk } from '../compute/mechanisms.mjs';
import { blockSize } from '../compute/downsample.mjs';
import { losesRun, distillHeads, allHeads, wMap } from '../compute/loses.mjs';
import { HFModel, fmtBytes } from '../wasm/model.mjs';
import { t, LANGS } from '../i18n/i18n.mjs';

/** A refusal as English data, from its catalogue template, so that the page says it in the reader's language (docs/i18n.md). */
const en = (key, params) => t(key, params, LANGS[0]);

const slot = createLatestSlot();
let engine = null;
// exports and the overview load other inputs into a lab: they get an engine of their own (sharing the
// module and the loaded tensor sets), so a sweep running in this worker keeps its inputs between points
let asideEngine = null;
const aside = () => {
  if (!asideEngine) {
    asideEngine = new Engine(engine.av);
    asideEngine.tensorSets = engine.tensorSets; // tensors never change under a key: one map for both
  }
  return asideEngine;
};
let ready = null;
let running = false;

// a zero-delay yield so that messages that arrived during a step are seen before the next one
const channel = new MessageChannel();
const waiters = [];
channel.port1.onmessage = () => waiters.shift()?.();
const yieldToEvents = () => new Promise((resolve) => { waiters.push(resolve); channel.port2.postMessage(0); });

// Heatmap cells go to the page by transfer, and the page sends back the arrays of a frame it no longer
// shows ({kind: MSG.RECYCLE, buffers}): a fresh 256 kB array costs about a millisecond of page faults in this
// VM (docs/performance.md, "The page at n = 1024"), a recycled one nothing. A's cells, the same for every
// frame of one input set, go once per key (the page keeps them: its frame says aKey).
const recycled = [];
const RECYCLED_MAX = 8;
function recycledCells(len) {
  const i = recycled.findIndex((buf) => buf.byteLength === len * 4);
  return i < 0 ? undefined : new Float32Array(recycled.splice(i, 1)[0]);
}
let sentAKey = null;


async function run() {
  if (running) return;
  running = true;
  try {
    await ready;
    let job;
    while ((job = slot.take())) await runJob(job);
  } finally {
    running = false;
  }
}

async function runJob(job) {
  const { id, req, drag } = job;
  const stale = () => slot.superseded(id);
  try {
    if (job.frame) {
      // above FRAME_WORKER_MAX_N a drag gets the quick frame (block means from the factors, or a draft)
      const f = job.quick ? engine.quickFrame(req) : engine.frame(req, { readouts: false, cells: recycledCells });
      const { M, D } = f;
      // A is the engine's cached copy: cloned, and only when the page does not hold it yet.
      // readoutsFollow: this worker's readouts come next (the page holds the spectrum job until then)
      const sameA = f.aKey != null && f.aKey === sentAKey;
      self.postMessage({ id, part: PART.FRAME, ...f, A: sameA ? undefined : f.A, readoutsFollow: !!job.readouts }, transferables({ M, D }));
      sentAKey = f.aKey ?? null;
      await yieldToEvents();
      if (stale()) return self.postMessage({ id, part: PART.DONE, dropped: true });
    }
    const spectrum = job.spectrum !== false;
    // the variant's spectrum first (milliseconds by the factor route), then the plain readouts (which
    // read all n² entries), then the overlays
    if (spectrum) {
      const s = engine.spectrum(req, drag);
      if (s) self.postMessage({ id, part: PART.SPECTRUM, ...s });
    }
    if (job.readouts) {
      await yieldToEvents();
      if (stale()) return self.postMessage({ id, part: PART.DONE, dropped: true });
      self.postMessage({ id, part: PART.READOUTS, readouts: engine.plainReadouts(req) });
    }
    if (!spectrum) return self.postMessage({ id, part: PART.DONE });
    for (const which of ['S', 'E', 'A']) {
      await yieldToEvents();
      // an overlay depends on the inputs only: finish it even for a superseded job when the newer
      // request shares its inputs (else a drag would never leave time for the overlays)
      if (stale() && !sameOverlay(req, which)) return self.postMessage({ id, part: PART.DONE, dropped: true });
      // above n = 512 the overlays take the fast route (a third of the time; they are cached per inputs)
      const o = engine.overlaySpectrum(req, which, drag || req.inputs.n > 512);
      if (o) self.postMessage({ id, part: PART.OVERLAY, which, key: o.key, sv: o.sv, floor: o.floor, partial: o.partial, route: o.route, fro2: o.fro2 ?? null });
    }
    self.postMessage({ id, part: PART.DONE });
  } catch (err) {
    self.postMessage({ id, part: PART.ERROR, message: String(err?.message ?? err) });
  }
}

/** Whether the newest waiting request needs the same overlay spectrum as request `req`. */
function sameOverlay(req, which) {
  const next = slot.peek();
  return !!next && overlayKey(next.req, which) === overlayKey(req, which);
}

// --- sweeps: the page runs them in a worker of their own, so they never delay a frame or a spectrum
let sweepId = 0;
async function sweep({ id, plan }) {
  sweepId = id;
  try {
    await ready;
    if (sweepId !== id) return;
    engine.ensure(plan.req, { ref: false, matrix: false }); // Q, K, V of the plan's inputs
    const complete = await runSweep(engine.lab, plan, (p) => self.postMessage({ kind: MSG.SWEEP_POINT, id, ...p }),
      () => sweepId !== id, yieldToEvents);
    self.postMessage({ kind: MSG.SWEEP_DONE, id, complete });
  } catch (err) {
    self.postMessage({ kind: MSG.SWEEP_DONE, id, complete: false, error: String(err?.message ?? err) });
  } finally {
    engine.keys.ref = engine.keys.matrix = null; // the sweep overwrote A and M
  }
}

// --- exports: full-resolution arrays for the page's export menu (web/ui/export-menu.mjs), in the background worker
async function exportArrays({ id, req }) {
  try {
    await ready;
    const got = aside().exportArrays(req);
    aside().free(); // an export's lab may be n = 4096 (two 64 MB matrices): not kept for the overview's small ones
    if (got.error) return self.postMessage({ kind: MSG.EXPORT_DATA, id, error: got.error });
    self.postMessage({ kind: MSG.EXPORT_DATA, id, files: got.files }, got.files.map((f) => f.data.buffer));
  } catch (err) {
    self.postMessage({ kind: MSG.EXPORT_DATA, id, error: String(err?.message ?? err) });
  }
}

// --- a real model (docs/model.md), in the background worker: the files once, then a forward pass per text
// Every failure (a refusal, a WebAssembly trap, the module not loaded) is an answer with `error`: the page
// waits for this id's answer (its model panel busy, snapshot() unsettled) and would wait for ever.
let model = null;
let loadingId = 0; // the folder being read: a newer load or MODEL_CANCEL stops it at its next chunk
async function modelLoad({ id, files, folder }) {
  loadingId = id;
  try {
    await ready;
    if (folder) return await folderLoad(id, folder);
    const got = engine.av.model(new Uint8Array(files[0]), new Uint8Array(files[1] ?? new ArrayBuffer(0)));
    if (!got.model) return self.postMessage({ kind: MSG.MODEL_LOADED, id, error: got.message }); // the old model stays
    adopt(got.model);
    self.postMessage({ kind: MSG.MODEL_LOADED, id, config: model.config });
  } catch (err) {
    self.postMessage({ kind: MSG.MODEL_LOADED, id, error: failure(err) });
  }
}
function adopt(m) {
  losesDistillId = -1; // a distillation under way reads the old model: it stops at its next chunk, before the free
  model?.free();
  model = m;
  lastPass = null;
}
/** A Hugging Face folder (web/wasm/model.mjs HFModel.fromFolder), its reading reported chunk by chunk. */
async function folderLoad(id, folder) {
  const deviceGB = self.navigator?.deviceMemory;
  const progress = (p) => self.postMessage({ kind: MSG.MODEL_PROGRESS, id, ...p });
  const opts = { cancelled: () => loadingId !== id, deviceGB };
  let got = await HFModel.fromFolder(engine.av, folder, progress, opts);
  if (got.status === engine.av.STATUS.ERR_NOMEM && model) {
    // the old model and the new one did not fit together: the old one goes, and the new one is read again
    adopt(null);
    got = await HFModel.fromFolder(engine.av, folder, progress, opts);
  }
  if (got.cancelled) return self.postMessage({ kind: MSG.MODEL_LOADED, id, cancelled: true });
  if (!got.model) {
    const big = got.tooLarge;
    const error = big ? en('notice.x.job.modelTooLarge', { need: fmtBytes(big.need), max: fmtBytes(big.max),
      why: big.why === 'device' ? en('notice.x.job.limitDevice', { gb: big.deviceGB }) : en('notice.x.job.limitWasm') })
      : got.key ? en(`notice.x.job.${got.key}`, got.params) : got.message;
    return self.postMessage({ kind: MSG.MODEL_LOADED, id, error });
  }
  adopt(got.model);
  self.postMessage({ kind: MSG.MODEL_LOADED, id, config: model.config });
}
let lastPass = null; // {n, ms} of the last forward pass: the next one's estimate
let latestRun = 0; // the newest text's id: a pass for an older text still queued is skipped (a folder's takes seconds)
async function modelRun(msg) {
  latestRun = msg.id;
  try {
    await ready;
    await yieldToEvents(); // texts typed meanwhile arrive first
    if (msg.id !== latestRun) return; // the page waits for the newest id only
    await modelRunReady(msg);
  } catch (err) {
    self.postMessage({ kind: MSG.MODEL_RAN, id: msg.id, error: failure(err) });
  }
}
async function modelRunReady({ id, text, key }) {
  if (!model) return self.postMessage({ kind: MSG.MODEL_RAN, id, error: en('notice.x.job.noModel') });
  const enc = model.encode(text);
  if (!enc.ids) return self.postMessage({ kind: MSG.MODEL_RAN, id, error: enc.message });
  const c = model.config;
  if (enc.ids.length > c.seqLen) return self.postMessage({ kind: MSG.MODEL_RAN, id, error: tooLong(c, enc.ids.length) });
  const n = enc.ids.length;
  // the pass is one call: the page shows its elapsed time against an estimate from the last pass
  self.postMessage({ kind: MSG.MODEL_PROGRESS, id, stage: 'forward', n, estimateMs: lastPass ? lastPass.ms * Math.max(n, 32) / Math.max(lastPass.n, 32) : null });
  const f = model.forward(enc.ids);
  if (!f.Q) return self.postMessage({ kind: MSG.MODEL_RAN, id, error: f.message });
  lastPass = { n, ms: f.ms };
  const tensors = { key, Q: f.Q, K: f.K, V: f.V, layers: c.layers, heads: c.heads, kvHeads: c.kvHeads, n: f.n, d: c.headSize };
  engine.setTensors(tensors); // this worker's own engine (sweeps, exports) reads them too
  self.postMessage({ kind: MSG.MODEL_RAN, id, ids: [...enc.ids], pieces: model.pieces(enc.ids), ms: f.ms, tensors });
}

// --- what the model loses (web/compute/loses.mjs, docs/model.md "Swapped attention"), in the background
// worker with the model: the measures of a text, and the distillation of every chosen head (chunk by chunk:
// a cancel or a newer distillation stops it at the next chunk, its labs freed)
let losesId = 0, losesDistillId = 0;
/** The sentence for a text of count tokens past the model's seq_len (a folder's: its context or the page's limit). */
function tooLong(c, count) {
  if (c.format !== 'hf') return en('notice.x.job.textTooLong', { count, max: c.seqLen });
  return en('notice.x.job.textTooLongHF', { count, max: c.seqLen, context: c.context, limit: c.limit });
}
/** The text's ids and the prompt's (the text itself when the prompt is empty), or {error}. */
function losesIds(text, prompt) {
  if (!model) return { error: en('notice.x.job.noModel') };
  const c = model.config;
  const enc = model.encode(text);
  if (!enc.ids) return { error: enc.message };
  if (enc.ids.length > c.seqLen) return { error: tooLong(c, enc.ids.length) };
  const pr = prompt ? model.encode(prompt) : enc;
  if (!pr.ids) return { error: pr.message };
  if (pr.ids.length > c.seqLen) return { error: tooLong(c, pr.ids.length) };
  return { ids: enc.ids, prompt: pr.ids };
}
async function loses({ id, text, prompt, steps, knobs, swapped, path, sensitivity, W }) {
  losesId = id;
  try {
    await ready;
    if (losesId !== id) return;
    const got = losesIds(text, prompt);
    if (got.error) return self.postMessage({ kind: MSG.LOSES_DATA, id, error: got.error });
    const c = model.config;
    const heads = swapped ?? allHeads(c.layers, c.heads);
    const r = losesRun(model, { ids: got.ids, prompt: got.prompt, steps, knobs, swapped: heads, path, W: wMap(W), sensitivity });
    self.postMessage({ kind: MSG.LOSES_DATA, id, ...r, swapped: heads, ids: Array.from(got.ids), pieces: model.pieces(got.ids) });
  } catch (err) {
    self.postMessage({ kind: MSG.LOSES_DATA, id, error: failure(err) });
  }
}
async function losesDistill({ id, trainText, text, steps, lr, knobs, swapped }) {
  losesDistillId = id;
  let gen = null;
  try {
    await ready;
    const ev = losesIds(text, '');
    const tr = ev.error ? ev : losesIds(trainText, '');
    if (ev.error || tr.error) return self.postMessage({ kind: MSG.LOSES_DISTILLED, id, complete: false, error: ev.error ?? tr.error });
    const c = model.config;
    gen = distillHeads(model, { trainIds: tr.ids, evalIds: ev.ids, swapped: swapped ?? allHeads(c.layers, c.heads), knobs, steps, lr });
    for (;;) {
      const step = gen.next();
      if (step.done) {
        const r = step.value;
        if (r.error) return self.postMessage({ kind: MSG.LOSES_DISTILLED, id, complete: false, error: r.error });
        return self.postMessage({ kind: MSG.LOSES_DISTILLED, id, complete: true, ...r }, r.W.map((w) => w.W.buffer));
      }
      self.postMessage({ kind: MSG.LOSES_PROGRESS, id, ...step.value });
      await yieldToEvents();
      if (losesDistillId !== id) { gen.return(); return self.postMessage({ kind: MSG.LOSES_DISTILLED, id, complete: false, cancelled: true }); }
    }
  } catch (err) {
    gen?.return();
    self.postMessage({ kind: MSG.LOSES_DISTILLED, id, complete: false, error: failure(err) });
  }
}

// --- the overview of every layer and head (web/ui/overview.mjs), in the background worker, head by head; a newer one stops it
let overviewId = 0;
async function overview({ id, req, layers, heads }) {
  overviewId = id;
  try {
    await ready;
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        if (overviewId !== id) return;
        const cell = aside().headSummary({ ...req, inputs: { ...req.inputs, layer: l, head: h } });
        self.postMessage({ kind: MSG.OVERVIEW_CELL, id, layer: l, head: h, ...cell });
        await yieldToEvents();
      }
    }
    self.postMessage({ kind: MSG.OVERVIEW_DONE, id });
  } catch (err) {
    self.postMessage({ kind: MSG.OVERVIEW_DONE, id, error: String(err?.message ?? err) });
  }
}

// --- a lesson's comparison (docs/lessons.md, "The first screen"): the readouts of the state with one key
// changed, plain and spectral, as the page's workers compute them, in an engine aside (the SVD takes more
// than a frame)
async function compare({ id, req }) {
  try {
    await ready;
    const e = aside();
    const s = e.spectrum(req, false);
    const readouts = { ...e.plainReadouts(req), ...(s?.readouts ?? {}) };
    delete readouts.entropy_hist; // the histograms are the entropy panel's, not a readout
    self.postMessage({ kind: MSG.COMPARE_DATA, id, readouts, sv: s?.sv ?? null, floor: s?.floor ?? 0, partial: !!s?.partial, sigma1Upper: s?.sigma1Upper ?? null });
  } catch (err) {
    self.postMessage({ kind: MSG.COMPARE_DATA, id, error: String(err?.message ?? err) });
  }
}

// --- the mechanism views (docs/mechanisms.md), in a worker of their own; a newer job of a view stops its older one
const mech = { id: 0, stepper: null, stepKey: null, distiller: null, distillKey: null, compare: null };
const MECH_STEP_MAX_N = 2048;      // the stepper forms the masked matrix once (n² floats)
const MECH_DISTILL_MAX_N = 512; // a training step costs 3·n²·2cols multiply-adds
const mechKey = (req) => JSON.stringify([req.inputs, req.knobs, req.gates ?? null]); // the gates: the gated families' steps read them

function mechStep({ id, req, t }) {
  if (req.inputs.n > MECH_STEP_MAX_N) return self.postMessage({ kind: MSG.MECH_FRAME, id, error: en('notice.x.job.stepperMax', { max: MECH_STEP_MAX_N, n: req.inputs.n }) });
  const key = mechKey(req);
  if (mech.stepKey !== key || !mech.stepper) {
    mech.distiller = null; mech.distillKey = null; // the lab may be rebuilt: the distiller's buffers go with it
    engine.ensure(req, { ref: false, matrix: false });
    if (engine.status.inputs?.status < 0) return self.postMessage({ kind: MSG.MECH_FRAME, id, error: engine.status.inputs.message });
    const got = engine.lab.stepper(req.knobs);
    engine.keys.ref = engine.keys.matrix = null; // the stepper overwrote M and the output buffers
    mech.stepKey = key;
    mech.stepper = got.stepper;
    if (!got.stepper) { mech.stepKey = null; return self.postMessage({ kind: MSG.MECH_FRAME, id, error: got.message }); }
  }
  const frame = stepFrame(mech.stepper, t, req.knobs.variant === 'softmax' ? req.knobs.window ?? 0 : 0);
  self.postMessage({ kind: MSG.MECH_FRAME, id, frame });
}

async function mechScaling({ id, knobs, d, budget }) {
  mech.id = id;
  const av = engine.av, base = av.memory.buffer.byteLength;
  try {
    self.postMessage({ kind: MSG.MECH_POINT, id, view: 'scaling', point: { crossover: crossover(av, knobs, d), base, budget } });
    for (const point of scalingRun(av, { knobs, d, budget })) {
      self.postMessage({ kind: MSG.MECH_POINT, id, view: 'scaling', point: { ...point, memory: av.memory.buffer.byteLength } });
      await yieldToEvents();
      if (mech.id !== id) return self.postMessage({ kind: MSG.MECH_DONE, id, view: 'scaling', complete: false });
    }
    self.postMessage({ kind: MSG.MECH_DONE, id, view: 'scaling', complete: true, memory: av.memory.buffer.byteLength, base });
  } catch (err) {
    self.postMessage({ kind: MSG.MECH_DONE, id, view: 'scaling', complete: false, error: String(err?.message ?? err) });
  }
}

async function mechRecall({ id, memories, Ns, d, seeds, N, ds, overwriteN }) {
  mech.id = id;
  const av = engine.av;
  try {
    for (const [axis, gen] of [['N', recallCurve(av, { memories, Ns, d, seeds })], ['d', recallAgainstD(av, { memories, N, ds, seeds })]]) {
      for (const point of gen) {
        self.postMessage({ kind: MSG.MECH_POINT, id, view: 'recall', point: { ...point, axis } });
        await yieldToEvents();
        if (mech.id !== id) return self.postMessage({ kind: MSG.MECH_DONE, id, view: 'recall', complete: false });
      }
    }
    const over = overwrite(av, { memories, N: overwriteN, d });
    self.postMessage({ kind: MSG.MECH_DONE, id, view: 'recall', complete: true, overwrite: over });
  } catch (err) {
    self.postMessage({ kind: MSG.MECH_DONE, id, view: 'recall', complete: false, error: String(err?.message ?? err) });
  }
}

/** The hedgehog matrix of W (downsampled) and its plain readouts against softmax; lab inputs as req's. */
function distillView(req, W) {
  const lab = engine.lab, n = req.inputs.n, b = blockSize(n, 128);
  const k = { variant: 'hedgehog', causal: req.knobs.causal, scale: req.knobs.scale, hedgehog_w: W };
  lab.matrix(k);
  const r = lab.readouts(k, { sv: null });
  return { M: lab.downsample('M', b, 'mean'), size: Math.ceil(n / b), readouts: pick(r) };
}
const pick = (r) => ({ row_kl_mean: r.row_kl_mean, error_fro_rel: r.error_fro_rel, row_entropy_mean: r.row_entropy_mean });

async function mechDistill({ id, req, steps, lr, reset }) {
  mech.id = id;
  const n = req.inputs.n;
  if (n > MECH_DISTILL_MAX_N) return self.postMessage({ kind: MSG.MECH_DONE, id, view: 'distill', complete: false, error: en('notice.x.job.distillMax', { max: MECH_DISTILL_MAX_N, n }) });
  try {
    const key = JSON.stringify([req.inputs, req.knobs.scale, req.knobs.causal, req.W0 ? Array.from(req.W0) : null]);
    if (reset || mech.distillKey !== key || !mech.distiller) {
      mech.stepper = null; mech.stepKey = null;
      engine.ensure(req, { ref: false, matrix: false });
      if (engine.status.inputs?.status < 0) throw new Error(engine.status.inputs.message);
      const got = engine.lab.distiller(req.knobs, req.W0 ? { W: req.W0 } : {});
      if (!got.distiller) throw new Error(got.message);
      mech.distiller = got.distiller;
      mech.distillKey = key;
      const lab = engine.lab, base = { causal: req.knobs.causal, scale: req.knobs.scale };
      const compare = {};
      lab.reference(base);
      compare.softmax = pick(lab.readouts({ ...base, variant: 'softmax' }, { sv: null, of: 'A' }));
      for (const v of ['elu', 'performer']) { lab.matrix({ ...base, variant: v }); compare[v] = pick(lab.readouts({ ...base, variant: v }, { sv: null })); }
      const start = distillView(req, mech.distiller.W);
      self.postMessage({ kind: MSG.MECH_DISTILL, id, chunk: { t: 0, loss: [], lossNow: mech.distiller.loss(), ...start, compare, cols: mech.distiller.cols } }, [start.M.buffer]);
    }
    const CHUNK = 10;
    for (let done = 0; done < steps; done += CHUNK) {
      await yieldToEvents();
      if (mech.id !== id) return self.postMessage({ kind: MSG.MECH_DONE, id, view: 'distill', complete: false, W: mech.distiller?.W ?? null, t: mech.distiller?.t ?? 0 });
      // the stepper rebuilt the lab while this loop waited (mechStep): the distiller's buffers went with it
      if (!mech.distiller) return self.postMessage({ kind: MSG.MECH_DONE, id, view: 'distill', complete: false, error: en('notice.x.distillPreempted') });
      const c = distillChunk(mech.distiller, Math.min(CHUNK, steps - done), lr);
      if (c.status < 0 || !c.loss) throw new Error(c.message);
      const view = distillView(req, c.W);
      self.postMessage({ kind: MSG.MECH_DISTILL, id, chunk: { t: c.t, loss: Array.from(c.loss), lossNow: c.lossNow, ...view, status: c.status } }, [view.M.buffer]);
      if (c.status > 0) break; // a step whose loss was not finite was not taken
    }
    self.postMessage({ kind: MSG.MECH_DONE, id, view: 'distill', complete: true, W: mech.distiller.W, t: mech.distiller.t, cols: mech.distiller.cols });
  } catch (err) {
    self.postMessage({ kind: MSG.MECH_DONE, id, view: 'distill', complete: false, error: String(err?.message ?? err) });
  } finally {
    engine.keys.ref = engine.keys.matrix = null;
  }
}

/** What went wrong, for the page's notice: the error's message (a trap's "memory access out of bounds"). */
const failure = (err) => String(err?.message ?? err ?? 'unknown error');

// a rejection nothing here handled still reaches the page, which then stops waiting on this worker (the
// module's failure to load, which everything awaiting `ready` rethrows, was said once as 'fatal')
const initFailure = { error: null }; // the module's load failure, once it failed
self.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  if (!initFailure.error || e.reason !== initFailure.error) self.postMessage({ kind: MSG.FAILED, message: failure(e.reason) });
});

self.onmessage = (e) => {
  const msg = e.data;
  if (msg.kind === MSG.OVERVIEW) { overview(msg); return; }
  if (msg.kind === MSG.COMPARE) { compare(msg); return; }
  if (msg.kind === MSG.SWEEP) { sweep(msg); return; }
  if (msg.kind === MSG.MODEL_LOAD) { modelLoad(msg); return; }
  if (msg.kind === MSG.MODEL_RUN) { modelRun(msg); return; }
  if (msg.kind === MSG.MODEL_CANCEL) { if (loadingId === msg.id) loadingId = -1; return; }
  if (msg.kind === MSG.LOSES) { loses(msg); return; }
  if (msg.kind === MSG.LOSES_DISTILL) { losesDistill(msg); return; }
  if (msg.kind === MSG.LOSES_CANCEL) { losesDistillId = -1; return; }
  if (msg.kind === MSG.RECYCLE) {
    for (const buf of msg.buffers) { recycled.push(buf); if (recycled.length > RECYCLED_MAX) recycled.shift(); } // the oldest go
    return;
  }
  if (msg.kind === MSG.TENSORS) { ready.then(() => engine.setTensors(msg.tensors)).catch((err) => { if (err !== initFailure.error) self.postMessage({ kind: MSG.FAILED, message: failure(err) }); }); return; }
  if (msg.kind === MSG.EXPORT) { exportArrays(msg); return; }
  if (msg.kind === MSG.ROW) { // the single-row view's row of M and A above MAIN_THREAD_MAX_N (Engine.row)
    ready.then(() => { const row = engine.row(msg.req, msg.row); self.postMessage({ kind: MSG.ROW_DATA, id: msg.id, row }, [row.M?.buffer, row.A?.buffer].filter(Boolean)); })
      .catch((err) => self.postMessage({ kind: MSG.ROW_DATA, id: msg.id, error: failure(err) }));
    return;
  }
  if (msg.kind === MSG.WINDOW) { // the zoom's window of the full matrix (Engine.window), at full resolution
    ready.then(() => { const win = engine.window(msg.req, msg.zoom); self.postMessage({ kind: MSG.WINDOW, key: msg.key, win }, win ? transferables(win) : []); })
      .catch((err) => self.postMessage({ kind: MSG.WINDOW, key: msg.key, error: failure(err) }));
    return;
  }
  if (msg.kind === MSG.SWEEP_CANCEL) { sweepId = -1; return; }
  if (msg.kind === MSG.MECH_STEP) { ready.then(() => mechStep(msg)).catch((err) => self.postMessage({ kind: MSG.MECH_FRAME, id: msg.id, error: String(err?.message ?? err) })); return; }
  if (msg.kind === MSG.MECH_SCALING) { ready.then(() => mechScaling(msg), (err) => self.postMessage({ kind: MSG.MECH_DONE, id: msg.id, view: 'scaling', complete: false, error: failure(err) })); return; }
  if (msg.kind === MSG.MECH_RECALL) { ready.then(() => mechRecall(msg), (err) => self.postMessage({ kind: MSG.MECH_DONE, id: msg.id, view: 'recall', complete: false, error: failure(err) })); return; }
  if (msg.kind === MSG.MECH_DISTILL) { ready.then(() => mechDistill(msg), (err) => self.postMessage({ kind: MSG.MECH_DONE, id: msg.id, view: 'distill', complete: false, error: failure(err) })); return; }
  if (msg.kind === MSG.MECH_CANCEL) { mech.id = -1; return; }
  if (msg.kind === MSG.INIT) {
    // the page's compiled module (nothing to fetch or compile: works from blob: and file:// pages), or URLs
    const opts = msg.module ? { source: msg.module, simd: msg.simd, memoryMax: msg.memoryMax }
      : { simd: msg.simd ?? 'auto', simdUrl: msg.simdUrl, scalarUrl: msg.scalarUrl };
    ready = loadAttnviz(opts)
      .then((av) => { engine = new Engine(av); self.postMessage({ kind: MSG.READY, simd: av.simd }); })
      .catch((err) => { initFailure.error = err ?? new Error('unknown error'); self.postMessage({ kind: MSG.FATAL, message: String(err?.message ?? err) }); throw initFailure.error; });
    return;
  }
  if (msg.kind === MSG.JOB) {
    // a second job for the same request (the readouts the page asks for once its heatmaps are in)
    // joins the one still waiting instead of replacing it
    const waiting = slot.peek();
    const job = waiting && waiting.id === msg.id
      ? { ...waiting, frame: waiting.frame || msg.frame, readouts: waiting.readouts || msg.readouts, spectrum: waiting.spectrum !== false || msg.spectrum !== false }
      : msg;
    slot.put(job);
    run();
  }
};
