// embed-csp.mjs: the <attn-viz> element under its host page's Content-Security-Policy (docs/embedding.md,
// "Hosting and the Content-Security-Policy"). A directive that blocks the element's loading is named in
// one sentence (a blocked fetch alone says only "Failed to fetch"), and the element's Trusted Types
// policy `attnviz` lets it start its worker on a page that requires Trusted Types.

const MAX_KEPT = 32; // a host page with a violation on every image must not grow this list for ever

/**
 * The enforced Content-Security-Policy violations `doc` reports from now on (its securitypolicyviolation
 * events, report-only ones left out): `seen`, a live array of {directive, blocked}, and `next(ms)`, a
 * promise settled at the next one or after `ms`. A failure can come before its violation's event:
 * Chromium rejects a blocked fetch first, then reports it.
 */
export function watchViolations(doc) {
  const seen = [];
  const waiting = new Set();
  doc?.addEventListener?.('securitypolicyviolation', (e) => {
    if (e.disposition === 'report' || seen.length >= MAX_KEPT) return;
    seen.push({ directive: String(e.effectiveDirective || e.violatedDirective || '').split(' ')[0], blocked: String(e.blockedURI ?? '') });
    for (const wake of [...waiting]) wake();
  }, true);
  const next = (ms) => new Promise((resolve) => {
    const wake = () => { waiting.delete(wake); clearTimeout(timer); resolve(); };
    const timer = setTimeout(wake, ms);
    waiting.add(wake);
  });
  return { seen, next };
}

/** The origin of a URL, or the text itself when it is not one (a violation may carry a scheme only). */
function originOf(url) {
  try { return new URL(url).origin; } catch { return url; }
}

/**
 * What the page's policy blocked of the element, as a catalogue key and its parameters, or null when none
 * of `violations` is the element's. `base`: the URL embed.js was loaded from (its wasm sits beside it).
 * In the order loading meets them: the policy's Trusted Types names, the wasm's fetch, its compilation,
 * the worker.
 */
export function cspCause(violations, base) {
  const home = originOf(String(base));
  const find = (test) => violations.find(test);
  // `trusted-types` without attnviz: the policy could not be made, and a sink refused a string
  if (find((v) => v.directive === 'trusted-types') && find((v) => v.directive === 'require-trusted-types-for')) return ['embed.csp.trustedTypes', {}];
  const fetch = find((v) => v.directive === 'connect-src' && originOf(v.blocked) === home);
  if (fetch) return ['embed.csp.connect', { origin: home }];
  // Chromium reports a blocked WebAssembly compilation as script-src with the blocked URI 'wasm-eval'
  if (find((v) => v.directive.startsWith('script-src') && /^(wasm-)?eval$/.test(v.blocked))) return ['embed.csp.wasm', {}];
  // the worker from a blob: URL (a data: one is Vite's fallback); a host's own worker from a file is not ours
  if (find((v) => (v.directive === 'worker-src' || v.directive.startsWith('script-src')) && /^(blob|data)\b/.test(v.blocked))) return ['embed.csp.worker', {}];
  return null;
}

/**
 * cspCause, waiting up to `ms` for the violations still to come (`watch`: watchViolations's): a refused
 * Trusted Types policy is two events, and a blocked fetch is reported after it rejects.
 */
export async function cspCauseWithin(watch, base, ms) {
  const end = Date.now() + ms;
  let cause;
  while (!(cause = cspCause(watch.seen, base)) && Date.now() < end) await watch.next(end - Date.now());
  return cause;
}

let policy; // undefined: not made yet; null: none (no Trusted Types here, or the page allows other names only)

/**
 * The element's Trusted Types policy `attnviz` (null where there is none). It makes one thing trusted: the
 * blob: URL of the worker built into embed.js, created by this page (a string is refused by `new Worker`
 * under require-trusted-types-for 'script'). The element builds its DOM without HTML strings, so the
 * policy has no createHTML.
 */
function trustedPolicy() {
  if (policy !== undefined) return policy;
  const own = `blob:${globalThis.location?.origin}/`;
  try {
    policy = globalThis.trustedTypes?.createPolicy('attnviz', {
      createScriptURL: (url) => {
        if (String(url).startsWith(own)) return url;
        throw new TypeError(`attnviz: the Trusted Types policy takes only this page's blob: worker, not ${url}`);
      },
    }) ?? null;
  } catch {
    policy = null; // `trusted-types` names other policies: its violation is recorded, cspCause names it
  }
  return policy;
}

/**
 * Start a worker with `make` (Vite's inline worker: it calls `new Worker(string)` with a blob: URL), the
 * URL passed through the `attnviz` policy. Vite's wrapper cannot be handed a TrustedScriptURL, so while
 * `make` runs (synchronously: nothing else can) the global Worker is a subclass that converts it.
 */
export function trustedWorker(make) {
  const p = trustedPolicy();
  const Native = globalThis.Worker;
  if (!p || !Native) return make();
  globalThis.Worker = class extends Native {
    constructor(url, opts) { super(typeof url === 'string' ? p.createScriptURL(url) : url, opts); }
  };
  try { return make(); } finally { globalThis.Worker = Native; }
}
