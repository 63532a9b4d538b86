// lab-workers.mjs: the page's workers (each an instance of web/workers/worker.mjs; messages: web/workers/protocol.mjs) and
// the requests it sends them. The frame worker computes the heatmaps and plain readouts above
// MAIN_THREAD_MAX_N (above FRAME_WORKER_MAX_N a drag gets quick frames and the rest on release), the spectrum
// worker the spectra and overlays; latest request wins in each, stale results are dropped (web/workers/queue.mjs).
// The background worker (sweeps, exports, a real model, the overview) and the mechanisms worker are made
// when first needed; their answers go to the panels that asked (`routes`).
//
// The worker's script is inlined in the page's bundle and started from a blob: URL (Vite's
// `?worker&inline`), and it instantiates the page's already compiled module: nothing to fetch, so the page
// works from any origin, from file:// and as one file (scripts/single.mjs).
import LabWorker from './workers/worker.mjs?worker&inline';
import { MAIN_THREAD_MAX_N, FRAME_WORKER_MAX_N } from './compute/engine.mjs';
import { createResultGate, createHold } from './workers/queue.mjs';
import { workerError } from './ui/notices.mjs';
import { MSG, PART } from './workers/protocol.mjs';

// Readouts behind the newest request are dimmed once nothing newer has reached the screen for
// STALE_GRACE_MS: during a drag at n = 1024 a newer result arrives every few frames (each starts the grace
// again), so the table neither flickers on every input nor costs the frame that draws the new heatmaps a
// restyle and layout of it; a longer wait (the readouts of a drag above n = 1024 come on release, a
// spectrum at n = 4096 takes seconds) is dimmed as before. The timer sets the flag itself (no clock
// comparison in the commit, so a coarse clock cannot skip the dimming).
const STALE_GRACE_MS = 150;
// the spectrum worker's job while the frame worker computes (releaseSpectrum); during a drag faster than
// the frame worker, it goes anyway every SPECTRUM_MAX_HOLD_MS, so that a spectrum still follows the drag
const SPECTRUM_MAX_HOLD_MS = 120;

/**
 * The workers of `page` (main.mjs's context: av, view, redraw, stats, tags, pendingMarks, schedule, notice,
 * inspector, requestOf, zoom()). `routes`: {kind: handler} for the background worker's answers, and
 * `backgroundFailed(what)`, `mechanisms(m)`, `mechanismsFailed(sentence)`, `tensors()` (the loaded ones).
 */
export function createLabWorkers(page, routes) {
  const { view, redraw, stats, tags, pendingMarks } = page;
  const gate = createResultGate();
  const spectrumHold = createHold({ maxWaitMs: SPECTRUM_MAX_HOLD_MS });
  const jobOf = new Map();       // request id → its tag (the newest 64)
  const stale = { readoutsStale: { timer: 0, shown: false }, specStale: { timer: 0, shown: false } };
  const init = () => ({ kind: MSG.INIT, module: page.av.module, memoryMax: page.av.memoryMax, simd: page.av.simd });
  let background = null, mechanisms = null;
  const asked = new Map(); let askSeq = 0; // the questions in flight to the background worker (ask), by "answer kind:id"
  // A's cells as the frame worker last sent them: a frame without A has these (its aKey says so)
  let frameA = { key: null, A: null };

  /**
   * Set view.readoutsStale or view.specStale. `delivered`: a result for this part just reached the page
   * (flag: it is still behind the newest request): what is shown was renewed, so its grace starts again.
   */
  function setStale(key, flag, delivered = false) {
    view[key] = flag;
    const s = stale[key];
    if (flag && !delivered && (s.timer || s.shown)) return; // already waiting, or already dimmed
    clearTimeout(s.timer);
    s.timer = 0;
    if (s.shown) { s.shown = false; redraw.readouts = true; }
    if (flag) s.timer = setTimeout(() => { s.timer = 0; s.shown = true; redraw.readouts = true; page.schedule(); }, STALE_GRACE_MS);
  }
  /** Whether to show view[key]'s results as stale (dimmed). */
  const staleShown = (key) => view[key] && stale[key].shown;

  /** A worker with its state: ready, the job waiting for it to be ready, the newest id posted and done. */
  function makeWorker(name) {
    const w = { name, ready: false, failed: false, queued: null, posted: 0, done: 0 };
    w.worker = new LabWorker({ name: `attnviz ${name}` });
    w.worker.onmessage = (e) => onWorkerMessage(w, e.data);
    w.worker.onerror = (e) => workerFailed(w, `the ${name} worker failed: ${workerError(e)}`);
    w.worker.onmessageerror = () => workerFailed(w, `a message from the ${name} worker could not be read`);
    w.worker.postMessage(init());
    return w;
  }
  const workers = { spectrum: makeWorker('spectrum'), frame: makeWorker('frame') };

  /**
   * A frame or spectrum worker failed outside a job's own error answer (an uncaught error, a rejection, a
   * message that could not be read): what it owes will not come, so the page stops waiting for it and a
   * snapshot settles without those results (their readouts' reasons point at the notice).
   */
  function workerFailed(w, sentence) {
    page.notice.show(sentence);
    w.done = w.posted;
    if (w === workers.frame) { w.failed = true; releaseSpectrum(); page.zoom()?.abandon(); } // no answer will come: no more waiting for one
    page.schedule();
    page.inspector.notify();
  }

  function post(w, job) {
    w.posted = job.id;
    if (w.ready) w.worker.postMessage(job); else w.queued = job;
  }

  /**
   * One request (one id) to the workers for the current state. `compute`: the inputs or knobs changed;
   * otherwise a knob was released (the accurate spectrum). A newer job replaces a waiting one in a
   * worker, so what is still owed to the page (a frame, readouts) is carried over.
   */
  function request(compute, drag) {
    const id = gate.next();
    stats.reqSeq.set(id, stats.seq);
    const n = page.st.n;
    const here = n <= MAIN_THREAD_MAX_N;
    const frame = !here && (compute || view.waitingFrame);
    const readouts = !here && (compute || view.readoutsStale);
    if (frame) { view.waitingFrame = true; view.frameJob = id; }
    if (readouts) { setStale('readoutsStale', true); view.readoutsJob = id; }
    // the frame worker computes the heatmaps at every n above the page's and follows them with the readouts:
    // it holds M and A already, and the spectrum worker's core stays free for the spectrum. Above
    // FRAME_WORKER_MAX_N a drag gets quick frames (no n×n matrix) and the readouts wait for the release.
    const viaFrameWorker = frame;
    const quick = frame && !!drag && n > FRAME_WORKER_MAX_N;
    const readoutsByFrame = viaFrameWorker && readouts && !quick;
    const req = page.requestOf(page.st);
    jobOf.set(id, { key: JSON.stringify(req), drag: !!drag });
    if (jobOf.size > 64) jobOf.delete(jobOf.keys().next().value);
    if (viaFrameWorker) post(workers.frame, { kind: MSG.JOB, id, req, drag, frame: true, quick, readouts: readoutsByFrame, spectrum: false });
    const spectrumJob = { kind: MSG.JOB, id, req, drag, frame: false, readouts: readouts && !readoutsByFrame && !quick };
    // a full frame and its readouts have the machine's cores first (two here: the frame worker's and the
    // page's): the spectrum job waits until they arrive (releaseSpectrum), so that it does not slow them
    // (docs/performance.md, "The page at n = 1024"; no target for the spectrum at these n)
    if (viaFrameWorker && !quick && !workers.frame.failed) { spectrumHold.hold(spectrumJob); workers.spectrum.posted = id; }
    else { spectrumHold.clear(); post(workers.spectrum, spectrumJob); }
    setStale('specStale', true);
    return id;
  }

  /**
   * Post the spectrum job that waited for the frame worker (request) once that worker has answered
   * request `id` or a newer one (an older job's answer, during a fast drag, does not let it go early);
   * without `id`, at once (the frame worker failed).
   */
  function releaseSpectrum(id) {
    const job = spectrumHold.answered(id);
    if (job) post(workers.spectrum, job);
  }

  /** Send a frame's M and D arrays (not A: frames share it) back to the frame worker, which fills them again. */
  function recycleCells(frame) {
    if (!frame) return;
    const bufs = [];
    for (const x of [frame.M, frame.D])
      if (x instanceof Float32Array && x !== frame.A && x.byteLength > 0 && x.byteLength === x.buffer.byteLength && !bufs.includes(x.buffer)) bufs.push(x.buffer);
    if (bufs.length) workers.frame.worker.postMessage({ kind: MSG.RECYCLE, buffers: bufs }, bufs);
  }

  function onWorkerMessage(w, m) {
    if (m.kind === MSG.WINDOW) { page.zoom().arrived(m); return; } // the zoom's window, cut from the full matrix
    // the frame worker's last answer to a job (its readouts, a frame no readouts follow, an error, a dropped
    // job) lets the spectrum job go
    if (w === workers.frame && m.id !== undefined && !(m.part === PART.FRAME && m.readoutsFollow)) releaseSpectrum(m.id);
    if (m.part === PART.FRAME) {
      if (m.A !== undefined) frameA = { key: m.aKey ?? null, A: m.A };
      else m.A = frameA.key !== null && frameA.key === m.aKey ? frameA.A : null;
    }
    if (m.kind === MSG.READY) {
      w.ready = true;
      if (w.queued) { w.worker.postMessage(w.queued); w.queued = null; }
      return;
    }
    if (m.kind === MSG.FATAL && w === workers.frame) { w.failed = true; releaseSpectrum(); }
    if (m.kind === MSG.FATAL) { page.notice.show(`the ${w.name} worker could not load the WebAssembly module: ${m.message}`); page.inspector.fail(`the ${w.name} worker failed: ${m.message}`); return; }
    if (m.kind === MSG.FAILED) { workerFailed(w, `the ${w.name} worker failed: ${m.message}`); return; }
    if (m.part === PART.ERROR) { page.notice.show(`computation failed: ${m.message}`); w.done = Math.max(w.done, m.id); page.inspector.notify(); return; }
    if (m.part === PART.DONE) { if (!m.dropped) w.done = Math.max(w.done, m.id); page.inspector.notify(); return; }
    // what the page computed itself for a newer request is never replaced by a worker's older result
    if ((m.part === PART.FRAME || m.part === PART.READOUTS) && m.id < view.localJob) { if (m.part === PART.FRAME) recycleCells(m); return; }
    const part = m.part === PART.OVERLAY ? `overlay-${m.which}` : m.part;
    const { deliver, stale: behind } = gate.accept(m.id, part);
    if (!deliver) { if (m.part === PART.FRAME) recycleCells(m); return; }
    const seq = stats.reqSeq.get(m.id);
    if (m.part !== PART.OVERLAY) tags[m.part === PART.READOUTS ? 'plain' : m.part === PART.FRAME ? 'frame' : 'spec'] = jobOf.get(m.id) ?? null;
    if (m.part === PART.FRAME) {
      if (view.frame !== m) recycleCells(view.frame);
      view.frame = m; view.waitingFrame = m.id < view.frameJob || !!m.quick; // a quick frame awaits the full one
      pendingMarks.heat = seq;
      redraw.heat = true; redraw.readouts = true; // the cost line
    } else if (m.part === PART.SPECTRUM) {
      view.spec = m; setStale('specStale', behind, true);
      pendingMarks.spec = seq;
      redraw.spec = true; redraw.readouts = true;
    } else if (m.part === PART.READOUTS) {
      view.readouts = m.readouts; setStale('readoutsStale', m.id < view.readoutsJob, true);
      pendingMarks.plain = seq;
      redraw.readouts = true;
    } else if (m.part === PART.OVERLAY) {
      view.overlay[m.which] = m;
      redraw.spec = true;
    }
    page.schedule();
  }

  /**
   * A worker that answers in its own time (not a job's parts): `onMessage(m)` its answers; `failed(what)` a
   * failure outside an answer (no answer will come for what is in flight), `unreadable()` a message it sent
   * that could not be read.
   */
  function makeAside(name, onMessage, { failed, unreadable }) {
    const w = new LabWorker({ name: `attnviz ${name}` });
    w.onmessage = ({ data: m }) => { if (m.kind === MSG.FAILED) failed(m.message); else onMessage(m); };
    w.onerror = (e) => failed(workerError(e));
    w.onmessageerror = unreadable;
    w.postMessage(init());
    return w;
  }

  return {
    workers, request, setStale, staleShown,
    /** The background worker (sweeps, exports, a real model, the overview), made when first needed. */
    background() {
      if (background) return background;
      const failed = (what) => {
        // nothing waits for ever: every question in flight is answered with the failure
        for (const [k, done] of asked) { asked.delete(k); done({ id: Number(k.split(':')[1]), error: `the background worker failed: ${what}` }); }
        routes.backgroundFailed(what);
      };
      background = makeAside('background', (m) => {
        const k = `${m.kind}:${m.id}`;
        if (asked.has(k)) { const done = asked.get(k); asked.delete(k); done(m); } else routes[m.kind]?.(m);
      }, { failed, unreadable: () => failed('a message from it could not be read') });
      const own = routes.ownTensors();
      if (own) background.postMessage({ kind: MSG.TENSORS, tensors: own }); // a model's come from its own runs
      return background;
    },
    /** Ask the background worker one question ({kind, id, ...payload}): a promise of its answer of kind
     * `answer` with the same id (or {id, error} when the worker fails first). */
    ask(kind, answer, payload) {
      const id = ++askSeq, w = this.background();
      return new Promise((resolve) => { asked.set(`${answer}:${id}`, resolve); w.postMessage({ kind, id, ...payload }); });
    },
    /** The background worker if it was made, else null. */
    backgroundIfAny: () => background,
    /** The mechanisms worker (web/ui/mechanisms.mjs), made when first needed. */
    mechanisms() {
      if (mechanisms) return mechanisms;
      // a failure outside a job's answer means no answer will come: the views in flight settle with it
      mechanisms = makeAside('mechanisms', routes.mechanisms, {
        failed: (what) => routes.mechanismsFailed(`the mechanisms worker failed: ${what}`),
        unreadable: () => routes.mechanismsFailed('a message from the mechanisms worker could not be read'),
      });
      for (const t of routes.allTensors()) if (t) mechanisms.postMessage({ kind: MSG.TENSORS, tensors: t });
      return mechanisms;
    },
    /** New loaded tensors to every engine: the page's, each worker's (`background`: the background worker's too). */
    sendTensors(t, { background: toBackground }) {
      page.engine.setTensors(t);
      for (const w of Object.values(workers)) w.worker.postMessage({ kind: MSG.TENSORS, tensors: t }); // a copy each (not a job)
      if (toBackground) background?.postMessage({ kind: MSG.TENSORS, tensors: t });
      mechanisms?.postMessage({ kind: MSG.TENSORS, tensors: t });
    },
    /** The zoom's window of the full matrix, from the frame worker. */
    postWindow: (msg) => workers.frame.worker.postMessage(msg),
    ready: () => workers.spectrum.ready && workers.frame.ready,
    settled: () => Object.values(workers).every((w) => w.done >= w.posted),
  };
}
