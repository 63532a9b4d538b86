// embed-worker.mjs: the worker of one <attn-viz> element (web/embed.mjs starts one per element that has
// computed, from the page's compiled module): an element's long job (n = 2048 takes seconds) never delays
// another element's update (issue 32; docs/embedding.md gives the memory each costs). Latest wins
// (web/workers/queue.mjs): a newer request replaces the one waiting, and a running job that a newer one
// supersedes stops at its next step, so a dragged slider never builds a queue.
//
// The messages, both ways, are web/workers/protocol.mjs's (INIT, JOB {id, req, overlays}; READY, FATAL,
// FAILED and {id, part: PART.*}).
import { loadAttnviz } from '../wasm/attnviz.mjs';
import { Engine } from '../compute/engine.mjs';
import { MSG, PART, transferables } from './protocol.mjs';
import { createLatestSlot } from './queue.mjs';

let engine = null;
let ready = null;
let running = false;
const slot = createLatestSlot();

const later = () => new Promise((resolve) => setTimeout(resolve, 0));

async function run() {
  if (running) return;
  running = true;
  try {
    await ready;
    for (let job = slot.take(); job; job = slot.take()) await runJob(job);
  } finally {
    running = false;
  }
}

async function runJob(job) {
  const { id, req } = job;
  const stale = () => slot.superseded(id);
  const post = (part, body = {}, transfer = []) => self.postMessage({ id, part, ...body }, transfer);
  try {
    const f = engine.frame(req, { readouts: true });
    post(PART.FRAME, f, transferables({ M: f.M, D: f.D }));
    await later();
    if (stale()) return post(PART.DONE, { dropped: true });
    const s = engine.spectrum(req, false);
    if (s) post(PART.SPECTRUM, s);
    if (job.overlays) {
      for (const which of ['S', 'E', 'A']) {
        await later();
        if (stale()) return post(PART.DONE, { dropped: true });
        const o = engine.overlaySpectrum(req, which, req.inputs.n > 512);
        if (o) post(PART.OVERLAY, { which, key: o.key, sv: o.sv, floor: o.floor, partial: o.partial, fro2: o.fro2 ?? null });
      }
    }
    post(PART.DONE);
  } catch (err) {
    post(PART.ERROR, { message: String(err?.message ?? err) });
  }
}

// a rejection nothing here handled still reaches the page (its element stops waiting); the module's
// failure to load, which everything awaiting `ready` rethrows, was said once as 'fatal'
const initFailure = { error: null }; // the module's load failure, once it failed
self.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  if (!initFailure.error || e.reason !== initFailure.error) self.postMessage({ kind: MSG.FAILED, message: String(e.reason?.message ?? e.reason ?? 'unknown error') });
});

self.onmessage = (e) => {
  const msg = e.data;
  if (!msg || typeof msg !== 'object') return;
  if (msg.kind === MSG.INIT) {
    ready = loadAttnviz({ source: msg.module, simd: msg.simd, memoryMax: msg.memoryMax })
      .then((av) => { engine = new Engine(av); self.postMessage({ kind: MSG.READY }); })
      .catch((err) => { initFailure.error = err ?? new Error('unknown error'); self.postMessage({ kind: MSG.FATAL, message: String(err?.message ?? err) }); throw initFailure.error; });
  } else if (msg.kind === MSG.JOB) {
    if (slot.put(msg)) run();
  }
};
