// panel.mjs: the one interface every panel of the page (and of the <attn-viz> element) implements, and the
// registry main.mjs walks instead of naming each panel at each step (docs/adding-a-panel.md).
//
// A panel is made by its module's mount function (mountX(root, page) → Panel) and then only called:
//   sync(st)    the controls and chrome it owns follow the state (each commit that redraws the controls)
//   update(st)  the state settled (a commit with a change, never during a drag): start what it computes
//   draw()      draw what the view holds now (each commit; a panel with nothing new returns at once)
//   snapshot()  its part of the inspection (docs/inspection.md), a JSON-able value, or null
//   dispose()   stop its timers and observers and free what it holds (the element left the page)
// and, if it computes in the background worker, `routes`: {[MSG.KIND]: handler} for the answers it takes.

/**
 * @typedef {object} Panel
 * @property {string} name                    its key in the registry and in the composed snapshot
 * @property {(st: object) => void} sync
 * @property {(st: object) => void} update
 * @property {() => void} draw
 * @property {() => any} snapshot
 * @property {() => void} dispose
 */

/**
 * What a page panel is given (main.mjs's `page`): read the state and the view, ask through the functions.
 * @typedef {object} Page
 * @property {object} st          the state (state.mjs); a panel changes it only through onChange
 * @property {object} schema      buildSchema(av.registry)
 * @property {object} av          the page's wasm module (web/wasm/attnviz.mjs)
 * @property {object|null} engine the page's own engine (n ≤ MAIN_THREAD_MAX_N)
 * @property {object} view        the results shown: {frame, readouts, spec, overlay, …}
 * @property {object} redraw      what is new since the last commit: {heat, readouts, spec, controls}
 * @property {object} lab         the workers (web/lab-workers.mjs): background(), staleShown(key), …
 * @property {(name: string, value: any, phase: string) => void} onChange
 * @property {() => void} schedule            a commit at the next animation frame
 * @property {(st: object) => object} requestOf the engines' request for a state
 * @property {() => object} dims              the rank ceilings and feature dimension of the state
 * @property {{show(text: string, source?: string): void, clear(source: string): void}} notice
 */

/** The methods a panel has (all of them: a panel with nothing to do for one says so with a no-op). */
export const PANEL_METHODS = Object.freeze(['sync', 'update', 'draw', 'snapshot', 'dispose']);

/** Throw unless `p` is a Panel: a name, and every method of PANEL_METHODS a function. */
export function checkPanel(p) {
  if (!p || typeof p.name !== 'string' || !p.name) throw new TypeError('a panel needs a name');
  const missing = PANEL_METHODS.filter((m) => typeof p[m] !== 'function');
  if (missing.length) throw new TypeError(`the panel "${p.name}" lacks ${missing.join(', ')}`);
  return p;
}

/** The no-op methods a panel spreads in for the steps it has no part in (never implicit: it says so). */
export const NOTHING = Object.freeze({ sync() {}, update() {}, draw() {}, snapshot: () => null, dispose() {} });

/**
 * The page's panels, in the order they were added (the order they sync, update and draw). Returns
 * {add(panel) → panel, get(name), names(), sync(st), update(st), draw(), routes() → {kind: handler},
 * snapshot() → {name: part}, dispose()}.
 */
export function createPanels() {
  const panels = new Map();
  return {
    add(p) {
      checkPanel(p);
      if (panels.has(p.name)) throw new Error(`a second panel named "${p.name}"`);
      panels.set(p.name, p);
      return p;
    },
    get: (name) => panels.get(name) ?? null,
    names: () => [...panels.keys()],
    sync(st) { for (const p of panels.values()) p.sync(st); },
    update(st) { for (const p of panels.values()) p.update(st); },
    draw() { for (const p of panels.values()) p.draw(); },
    /** The background worker's answers the panels take: every panel's optional `routes` ({kind: handler}), merged. */
    routes() {
      const out = {};
      for (const [name, p] of panels) for (const [kind, fn] of Object.entries(p.routes ?? {})) {
        if (out[kind]) throw new Error(`the panel "${name}" routes ${kind}, which another panel takes`);
        out[kind] = fn;
      }
      return out;
    },
    /** Every panel's part, by its name; a panel with nothing to say (null) is left out. */
    snapshot() {
      const out = {};
      for (const [name, p] of panels) { const part = p.snapshot(); if (part !== null && part !== undefined) out[name] = part; }
      return out;
    },
    dispose() { for (const p of [...panels.values()].reverse()) p.dispose(); panels.clear(); },
  };
}
