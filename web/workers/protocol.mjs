// protocol.mjs: the messages between the page and its workers, as constants both sides import (the page:
// main.mjs and the modules it wires, embed.mjs; the workers: worker.mjs, embed-worker.mjs). A kind written
// out as a string anywhere else is a bug (tests/js/protocol.test.mjs looks for them).
//
// The page runs four instances of worker.mjs, named for what they do (docs/architecture.md, "The page"):
//   the frame worker      the heatmaps (and a drag's quick frames) and plain readouts for n > MAIN_THREAD_MAX_N
//   the spectrum worker   the spectrum and its overlays, and the plain readouts the frame worker does not do
//   the background worker whatever may take seconds and must never delay a frame: sweeps, exports, a real
//                         model's load and forward pass, the overview of every layer and head
//   the mechanisms worker the mechanism views (web/ui/mechanisms.mjs)
// and each <attn-viz> element one embed-worker.mjs of its own.
//
// Page → worker (worker.mjs):
//   INIT {module, memoryMax, simd}: the page's compiled WebAssembly.Module (or {simdUrl, scalarUrl, simd})
//   JOB {id, req, drag, frame, quick, readouts, spectrum}: req is state.mjs's requestOf (never the state);
//       frame: the heatmaps (quick: a drag's quick frame, Engine.quickFrame); readouts: the plain readouts;
//       spectrum (default true): the spectrum and the overlays
//   RECYCLE {buffers}: a shown frame's cell arrays, back for the next frames
//   TENSORS {tensors}: Engine.setTensors (the page sends a capture to each worker)
//   WINDOW {key, req, zoom}: the zoom's window of M, A, M − A (Engine.window)
//   SWEEP {id, plan}: a sweep (web/compute/sweep.mjs's sweepPlan), one point at a time; SWEEP_CANCEL {}
//   EXPORT {id, req}: Q, K, V, M, A and the random matrices at full resolution
//   ROW {id, req, row}: one row of M and of A, full length (Engine.row), for the single-row view
//   MODEL_LOAD {id, files: [ArrayBuffer, ArrayBuffer]}: a checkpoint and tokenizer, any order; or
//       MODEL_LOAD {id, folder: {config, index, shards, tokenizer}}: a Hugging Face folder's File objects (read
//       in the worker, chunk by chunk); MODEL_CANCEL {id}: stop that folder's reading at the next chunk
//   MODEL_RUN {id, text, key}: encode and run the forward pass; its tensors become `key`
//   OVERVIEW {id, req, layers, heads}: every head at a glance (a newer one stops it)
//   COMPARE {id, req}: a lesson's comparison (web/ui/lessons.mjs): the plain and spectral readouts of req
//   MECH_STEP {id, req, t}; MECH_SCALING {id, knobs, d, budget}; MECH_RECALL {id, memories, Ns, d, seeds, N,
//       ds, overwriteN}; MECH_DISTILL {id, req, steps, lr, reset}; MECH_CANCEL {}
//   LOSES {id, text, prompt, steps, knobs, swapped, path, sensitivity, W}: what the model loses (web/compute/loses.mjs)
//   LOSES_DISTILL {id, trainText, text, steps, lr, knobs, swapped}: distil every chosen head; LOSES_CANCEL {}
// Worker → page:
//   READY {simd} | FATAL {message}: the module loaded, or not
//   FAILED {message}: a failure no answer below carries (a rejection nothing handled)
//   {id, part: PART.*, …}: a job's results (a frame has aKey, A's cache key, and readoutsFollow, whether this
//       job's readouts come next; a frame without A has the A of the last frame that had one)
//   WINDOW {key, win: {zoom, rows, cols, b, M, A, D} | null} | {key, error}
//   SWEEP_POINT {id, i, value, mean, min, max, defined, reason} | SWEEP_DONE {id, complete, error?}
//   EXPORT_DATA {id, files: [{what, data, shape}]} | {id, error}
//   ROW_DATA {id, row: {i, n, causal, M, A, mReason, aReason}} | {id, error}
//   MODEL_LOADED {id, config | error | cancelled} | MODEL_RAN {id, ids, pieces, ms, tensors | error}
//   MODEL_PROGRESS {id, stage: 'reading', done, total, file} (a folder's load id) | {id, stage: 'forward', n,
//       estimateMs} (a run's id, just before the forward pass, which is one call: estimateMs from the last
//       pass, null for the first)
//   OVERVIEW_CELL {id, layer, head, values, reasons | error} | OVERVIEW_DONE {id, error?}
//   COMPARE_DATA {id, readouts, sv, floor, partial, sigma1Upper} | {id, error}
//   MECH_FRAME {id, frame | error} | MECH_POINT {id, view, point} | MECH_DISTILL {id, chunk} |
//   MECH_DONE {id, view, complete, error?, …}
//   LOSES_DATA {id, measures, per_position, continuation, sensitivity, …} | {id, error}
//   LOSES_PROGRESS {id, t, steps, curve} | LOSES_DISTILLED {id, complete, …distill, W} | {id, complete: false, cancelled | error}
// Page → embed worker (embed-worker.mjs, one per element; a removed element ends its worker): INIT;
// JOB {id, req, overlays}. Embed worker → page: READY | FATAL | FAILED, and {id, part: PART.*, …}.
// Latest wins (web/workers/queue.mjs): a job that a newer one supersedes stops at its next step.

/** Every message's `kind`. */
export const MSG = Object.freeze({
  INIT: 'init', READY: 'ready', FATAL: 'fatal', FAILED: 'failed',
  JOB: 'job', RECYCLE: 'recycle', TENSORS: 'tensors', WINDOW: 'window',
  SWEEP: 'sweep', SWEEP_CANCEL: 'sweep-cancel', SWEEP_POINT: 'sweep-point', SWEEP_DONE: 'sweep-done',
  EXPORT: 'export', EXPORT_DATA: 'export-data', ROW: 'row', ROW_DATA: 'row-data',
  MODEL_LOAD: 'model-load', MODEL_RUN: 'model-run', MODEL_LOADED: 'model-loaded', MODEL_RAN: 'model-ran',
  MODEL_PROGRESS: 'model-progress', MODEL_CANCEL: 'model-cancel',
  OVERVIEW: 'overview', OVERVIEW_CELL: 'overview-cell', OVERVIEW_DONE: 'overview-done',
  COMPARE: 'compare', COMPARE_DATA: 'compare-data',
  MECH_STEP: 'mech-step', MECH_SCALING: 'mech-scaling', MECH_RECALL: 'mech-recall', MECH_DISTILL: 'mech-distill',
  MECH_CANCEL: 'mech-cancel', MECH_FRAME: 'mech-frame', MECH_POINT: 'mech-point', MECH_DONE: 'mech-done',
  LOSES: 'loses', LOSES_DATA: 'loses-data', LOSES_DISTILL: 'loses-distill', LOSES_PROGRESS: 'loses-progress',
  LOSES_DISTILLED: 'loses-distilled', LOSES_CANCEL: 'loses-cancel',
});

/** The `part` of a job's answer (a message without a kind). */
export const PART = Object.freeze({
  FRAME: 'frame', READOUTS: 'readouts', SPECTRUM: 'spectrum', OVERLAY: 'overlay', DONE: 'done', ERROR: 'error',
});

/** The buffers of obj's typed arrays, each once: what a worker's message transfers rather than copies. */
export function transferables(obj) {
  const out = [];
  for (const v of Object.values(obj)) if (ArrayBuffer.isView(v) && !out.includes(v.buffer)) out.push(v.buffer);
  return out;
}
