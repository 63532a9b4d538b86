// embed-worker.mjs: the one worker every <attn-viz> element on a page shares (web/embed.mjs). Each
// element is a client with its own Engine (web/compute/engine.mjs) and its own latest-wins slot: a newer request
// from one element replaces that element's waiting request, never another's; the clients' jobs take turns.
//
// The messages, both ways, are web/workers/protocol.mjs's (INIT, JOB {client, id, req, overlays}, DROP {client}; READY,
// FATAL, FAILED and each client's {client, id, part: PART.*}).
import { loadAttnviz } from '../wasm/attnviz.mjs';
import { Engine } from '../compute/engine.mjs';
import { MSG, PART, transferables } from './protocol.mjs';

let av = null;
let ready = null;
const engines = new Map();   // client → Engine
const waiting = new Map();   // client → its newest job not yet started
let running = false;

const later = () => new Promise((resolve) => setTimeout(resolve, 0));


async function run() {
  if (running) return;
  running = true;
  try {
    await ready;
    while (waiting.size) {
      // one job per client in turn (Map order: the longest waiting first)
      const [client, job] = waiting.entries().next().value;
      waiting.delete(client);
      await runJob(client, job);
    }
  } finally {
    running = false;
  }
}

async function runJob(client, job) {
  const { id, req } = job;
  const stale = () => waiting.get(client)?.id > id || !engines.has(client);
  const post = (part, body = {}, transfer = []) => self.postMessage({ client, id, part, ...body }, transfer);
  try {
    const engine = engines.get(client);
    if (!engine) return;
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

// a rejection nothing here handled still reaches the page (its elements stop waiting); the module's
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
      .then((m) => { av = m; self.postMessage({ kind: MSG.READY }); })
      .catch((err) => { initFailure.error = err ?? new Error('unknown error'); self.postMessage({ kind: MSG.FATAL, message: String(err?.message ?? err) }); throw initFailure.error; });
  } else if (msg.kind === MSG.JOB) {
    if (!engines.has(msg.client)) {
      ready.then(() => { if (!engines.has(msg.client)) engines.set(msg.client, new Engine(av)); });
    }
    waiting.delete(msg.client); // re-queued at the back: the other clients go first
    waiting.set(msg.client, msg);
    ready.then(run);
  } else if (msg.kind === MSG.DROP) {
    waiting.delete(msg.client);
    engines.get(msg.client)?.lab?.free();
    engines.delete(msg.client);
  }
};
