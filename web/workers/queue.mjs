// queue.mjs: latest-wins between the page and its worker. Pure; no DOM, no Worker.
//
// The page posts every request at once (each carries an increasing id). The worker keeps only the
// newest in a one-place slot: requests that arrive while it computes replace each other, so
// intermediate slider positions are skipped, never computed. Between the steps of a job the worker
// asks whether a newer request has arrived and, if so, drops the rest of the old job.
// On the page side a result gate drops results older than one already shown and marks results whose
// request has been superseded as stale (shown, while the page says "updating").
//
//   worker:  const slot = createLatestSlot();  onmessage = (e) => { slot.put(e.data); run(); }
//            const job = slot.take();  …step…;  if (slot.superseded(job.id)) stop;
//   page:    const gate = createResultGate();  const id = gate.next();  post({id, …})
//            onmessage: const {deliver, stale} = gate.accept(msg.id)

/** The worker's one-place request slot. Requests are objects with a numeric `id`. */
export function createLatestSlot() {
  let pending = null;
  let newest = 0;
  return {
    /** Offer a request; an older one still waiting is dropped. Returns false if it is older than one seen. */
    put(req) {
      if (req.id < newest) return false;
      newest = req.id;
      pending = req;
      return true;
    },
    /** The request waiting in the slot (left there), or null. */
    peek() { return pending; },
    /** The request to work on now (and empty the slot), or null. */
    take() { const r = pending; pending = null; return r; },
    /** Whether a request newer than `id` has arrived (the job for `id` should stop). */
    superseded(id) { return newest > id; },
  };
}

/**
 * The page's gate for results. Ids come from next(); a job may answer in several parts ('frame',
 * 'spectrum'); accept(id, part) says whether to show it: not when a newer request's result for the
 * same part was already shown. `stale` when a newer request has been made since.
 */
export function createResultGate() {
  let latest = 0;               // newest id handed out
  const shown = new Map();      // part → newest id shown
  return {
    next() { latest += 1; return latest; },
    accept(id, part = 'result') {
      const last = shown.get(part) ?? 0;
      const deliver = Number.isInteger(id) && id > 0 && id <= latest && id >= last;
      if (deliver) shown.set(part, id);
      return { deliver, stale: id !== latest };
    },
  };
}

/**
 * A job held back until another worker has answered (the page's spectrum job waits for the frame
 * worker's answer to the same request: web/lab-workers.mjs). hold(job) keeps it (a newer one replaces it);
 * answered(id) gives it back, and lets it go, once the other worker has answered request `id` ≥ its id
 * (an older request's late answer does not release it), else null; answered() with no id, at once.
 * maxWaitMs: an answer to an older request lets it go too once jobs have been held for that long without
 * a break (replacements included): when requests come faster than the other worker answers them (a fast
 * drag), the held job would otherwise wait until the requests stop. `now`: the clock (tests).
 */
export function createHold({ maxWaitMs = Infinity, now = () => performance.now() } = {}) {
  let held = null;
  let since = 0; // when the current run of held jobs began
  return {
    hold(job) { if (!held) since = now(); held = job; },
    clear() { held = null; },
    answered(id = Infinity) {
      if (!held || Number.isNaN(id) || typeof id !== 'number') return null;
      if (!(id >= held.id) && !(now() - since >= maxWaitMs)) return null;
      const job = held;
      held = null;
      return job;
    },
    get held() { return held; },
  };
}
