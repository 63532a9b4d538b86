// worker.mjs: the lab's heavy work off the page's thread. The page runs two of these, each a module
// worker with its own instance of the wasm module: the spectrum worker (spectra and overlays, the plain
// readouts above the page's n, and the heatmaps above FRAME_WORKER_MAX_N) and the frame worker (the
// heatmaps for MAIN_THREAD_MAX_N < n ≤ FRAME_WORKER_MAX_N, so that the spectrum never delays them).
//
// Messages in:  {kind: 'init', module, memoryMax, simd}: the page's compiled WebAssembly.Module (or
//               {kind: 'init', simdUrl, scalarUrl, simd}: where to fetch it)
//               {kind: 'sweep', id, plan}: a sweep (web/sweep.mjs's sweepPlan), one point at a time;
//               {kind: 'sweep-cancel'}: stop the running one (a newer sweep also stops it)
//               {kind: 'export', id, req}: Q, K, V, M, A and the random matrices at full resolution
//               {kind: 'model-load', id, files: [ArrayBuffer, ArrayBuffer]}: a checkpoint and tokenizer, any order
//               {kind: 'model-run', id, text, key}: encode and run the forward pass; its tensors become `key`
//               {kind: 'tensors', tensors}: Engine.setTensors (the page sends a capture to each worker)
//               {kind: 'overview', id, req, layers, heads}: every head at a glance; {kind: 'overview-cancel'}
//               {kind: 'job', id, req, drag, frame, readouts, spectrum}   req: the request (state.mjs's
//               requestOf: inputs, knobs, tau, ds; never the page's state); frame: the heatmaps;
//               readouts: the plain readouts; spectrum (default true): the spectrum and the overlays
// Messages out: {kind: 'ready', simd} | {kind: 'fatal', message}
//               {id, part: 'frame' | 'readouts' | 'spectrum' | 'overlay' | 'done' | 'error', …}
//               {kind: 'sweep-point', id, i, value, mean, min, max, reason} | {kind: 'sweep-done', id, complete, error?}
//               {kind: 'export-data', id, files: [{what, data, shape}]} | {kind: 'export-data', id, error}
//               {kind: 'model-loaded', id, config | error} | {kind: 'model-ran', id, ids, pieces, ms, tensors | error}
//               {kind: 'overview-cell', id, layer, head, size, cells, entropy, rank | error} | {kind: 'overview-done', id}
// Latest wins (web/queue.mjs): a job that a newer one supersedes stops at its next step.
import { loadAttnviz } from './attnviz.mjs';
import { Engine, overlayKey } from './engine.mjs';
import { createLatestSlot } from './queue.mjs';
import { runSweep } from './sweep.mjs';

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

function transferables(obj) {
  const out = [];
  for (const v of Object.values(obj)) if (ArrayBuffer.isView(v) && !out.includes(v.buffer)) out.push(v.buffer);
  return out;
}

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
      const f = engine.frame(req, { readouts: false });
      const { M, D } = f;
      self.postMessage({ id, part: 'frame', ...f }, transferables({ M, D })); // A is the engine's cached copy: cloned
      await yieldToEvents();
      if (stale()) return self.postMessage({ id, part: 'done', dropped: true });
    }
    const spectrum = job.spectrum !== false;
    // the variant's spectrum first (milliseconds by the factor route), then the plain readouts (which
    // read all n² entries), then the overlays
    if (spectrum) {
      const s = engine.spectrum(req, drag);
      if (s) self.postMessage({ id, part: 'spectrum', ...s });
    }
    if (job.readouts) {
      await yieldToEvents();
      if (stale()) return self.postMessage({ id, part: 'done', dropped: true });
      self.postMessage({ id, part: 'readouts', readouts: engine.plainReadouts(req) });
    }
    if (!spectrum) return self.postMessage({ id, part: 'done' });
    for (const which of ['S', 'E', 'A']) {
      await yieldToEvents();
      // an overlay depends on the inputs only: finish it even for a superseded job when the newer
      // request shares its inputs (else a drag would never leave time for the overlays)
      if (stale() && !sameOverlay(req, which)) return self.postMessage({ id, part: 'done', dropped: true });
      // above n = 512 the overlays take the fast route (a third of the time; they are cached per inputs)
      const o = engine.overlaySpectrum(req, which, drag || req.inputs.n > 512);
      if (o) self.postMessage({ id, part: 'overlay', which, key: o.key, sv: o.sv, floor: o.floor, partial: o.partial, route: o.route, fro2: o.fro2 ?? null });
    }
    self.postMessage({ id, part: 'done' });
  } catch (err) {
    self.postMessage({ id, part: 'error', message: String(err?.message ?? err) });
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
  await ready;
  if (sweepId !== id) return;
  try {
    engine.ensure(plan.req, { ref: false, matrix: false }); // Q, K, V of the plan's inputs
    const complete = await runSweep(engine.lab, plan, (p) => self.postMessage({ kind: 'sweep-point', id, ...p }),
      () => sweepId !== id, yieldToEvents);
    self.postMessage({ kind: 'sweep-done', id, complete });
  } catch (err) {
    self.postMessage({ kind: 'sweep-done', id, complete: false, error: String(err?.message ?? err) });
  } finally {
    engine.keys.ref = engine.keys.matrix = null; // the sweep overwrote A and M
  }
}

// --- exports: full-resolution arrays for the page's export menu (web/ui/export-menu.mjs), in the sweep worker
async function exportArrays({ id, req }) {
  try {
    await ready;
    const got = aside().exportArrays(req);
    aside().free(); // an export's lab may be n = 4096 (two 64 MB matrices): not kept for the overview's small ones
    if (got.error) return self.postMessage({ kind: 'export-data', id, error: got.error });
    self.postMessage({ kind: 'export-data', id, files: got.files }, got.files.map((f) => f.data.buffer));
  } catch (err) {
    self.postMessage({ kind: 'export-data', id, error: String(err?.message ?? err) });
  }
}

// --- a real model (docs/model.md), in the sweep worker: the files once, then a forward pass per text
let model = null;
async function modelLoad({ id, files }) {
  await ready;
  const got = engine.av.model(new Uint8Array(files[0]), new Uint8Array(files[1] ?? new ArrayBuffer(0)));
  if (!got.model) return self.postMessage({ kind: 'model-loaded', id, error: got.message }); // the old model stays
  model?.free();
  model = got.model;
  self.postMessage({ kind: 'model-loaded', id, config: model.config });
}
async function modelRun({ id, text, key }) {
  await ready;
  if (!model) return self.postMessage({ kind: 'model-ran', id, error: 'no model is loaded' });
  const enc = model.encode(text);
  if (!enc.ids) return self.postMessage({ kind: 'model-ran', id, error: enc.message });
  const c = model.config;
  if (enc.ids.length > c.seqLen) {
    return self.postMessage({ kind: 'model-ran', id, error: `the text is ${enc.ids.length} tokens with BOS; the model reads at most ${c.seqLen} (its seq_len)` });
  }
  const f = model.forward(enc.ids);
  if (!f.Q) return self.postMessage({ kind: 'model-ran', id, error: f.message });
  const tensors = { key, Q: f.Q, K: f.K, V: f.V, layers: c.layers, heads: c.heads, kvHeads: c.kvHeads, n: f.n, d: c.headSize };
  engine.setTensors(tensors); // this worker's own engine (sweeps, exports) reads them too
  self.postMessage({ kind: 'model-ran', id, ids: [...enc.ids], pieces: model.pieces(enc.ids), ms: f.ms, tensors });
}

// --- the overview of every layer and head (main.mjs), in the sweep worker, head by head; a newer one stops it
let overviewId = 0;
async function overview({ id, req, layers, heads }) {
  overviewId = id;
  await ready;
  try {
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        if (overviewId !== id) return;
        const cell = aside().headSummary({ ...req, inputs: { ...req.inputs, layer: l, head: h } });
        self.postMessage({ kind: 'overview-cell', id, layer: l, head: h, ...cell }, cell.cells ? [cell.cells.buffer] : []);
        await yieldToEvents();
      }
    }
    self.postMessage({ kind: 'overview-done', id });
  } catch (err) {
    self.postMessage({ kind: 'overview-done', id, error: String(err?.message ?? err) });
  }
}

self.onmessage = (e) => {
  const msg = e.data;
  if (msg.kind === 'overview') { overview(msg); return; }
  if (msg.kind === 'overview-cancel') { overviewId = -1; return; }
  if (msg.kind === 'sweep') { sweep(msg); return; }
  if (msg.kind === 'model-load') { modelLoad(msg); return; }
  if (msg.kind === 'model-run') { modelRun(msg); return; }
  if (msg.kind === 'tensors') { ready.then(() => engine.setTensors(msg.tensors)); return; }
  if (msg.kind === 'export') { exportArrays(msg); return; }
  if (msg.kind === 'sweep-cancel') { sweepId = -1; return; }
  if (msg.kind === 'init') {
    // the page's compiled module (nothing to fetch or compile: works from blob: and file:// pages), or URLs
    const opts = msg.module ? { source: msg.module, simd: msg.simd, memoryMax: msg.memoryMax }
      : { simd: msg.simd ?? 'auto', simdUrl: msg.simdUrl, scalarUrl: msg.scalarUrl };
    ready = loadAttnviz(opts)
      .then((av) => { engine = new Engine(av); self.postMessage({ kind: 'ready', simd: av.simd }); })
      .catch((err) => { self.postMessage({ kind: 'fatal', message: String(err?.message ?? err) }); throw err; });
    return;
  }
  if (msg.kind === 'job') {
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
