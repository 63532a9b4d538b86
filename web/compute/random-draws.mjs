// random-draws.mjs: the random matrices each variant draws, by the registry's name: exported beside Q, K
// and M so that the snippet recomputes M (web/io/export.mjs), and read back from the lab by the engine
// (web/compute/engine.mjs exportArrays). Here rather than in web/state/variants.mjs (whose entries point
// here) so that the engine, and with it every worker bundle, does not carry the variants' presentation.
// Pure data; no DOM.

/** Per variant that draws any: [{name (in the script), what (in the file name), kind (web/wasm/lab.mjs randomMatrix)}]. */
export const VARIANT_RANDOM = {
  linformer: [{ name: 'E', what: 'E', kind: 'E' }, { name: 'F', what: 'F', kind: 'F' }],
  performer: [{ name: 'W', what: 'omega', kind: 'omega' }],
};

/** A variant's random matrices: [] for one that draws none. */
export const randomOf = (name) => (Object.hasOwn(VARIANT_RANDOM, name) ? VARIANT_RANDOM[name] : []);

/**
 * The random matrices a request's variant draws, as [python name, export name, the loader's kind]
 * (web/wasm/lab.mjs randomMatrix): exported beside Q, K and M so that the snippet recomputes M.
 */
export function randomFiles(request) {
  const k = request.knobs, own = randomOf(k.variant);
  // the DWC kernel is the dwc_kernel knob's, drawn for a variant that reads it (src/attention.c has_dwc)
  return [...own.map((r) => [r.name, r.what, r.kind]), ...(k.dwc_kernel > 0 ? [['w', 'dwc', 'dwc']] : [])];
}
