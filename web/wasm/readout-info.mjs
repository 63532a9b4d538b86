// readout-info.mjs: the library's readouts as data (av_readout_info, "readouts" in av_registry_json:
// docs/api.md, docs/adding-a-readout.md). Every list of readouts on the page is derived here from the
// registry of the first module loaded (web/wasm/attnviz.mjs fills it at load): nothing in web/ lists readout
// keys by hand. Pure; no DOM.

/** The registry's readouts ({key, label, kind, format, display, sweep}) in enum order: empty until the
 * first module is loaded, then filled in place and frozen. */
export const READOUT_INFO = [];
/** The keys that need the spectrum (kind "spectral"): the page computes them from σ (web/compute/spectral.mjs). */
export const SPECTRAL_KEYS = [];
/** The readouts a page sweep offers, in its picker's order (the first is the default). */
export const SWEEP_READOUTS = [];

const listeners = [];

/** A readout's label (the registry's, as the page shows it), or its key before the tables are filled. */
export function readoutLabel(key) {
  return READOUT_INFO.find((r) => r.key === key)?.label ?? key;
}

/** The sweep picker's keys of a registry's readouts, in their order. */
export function sweepReadouts(readouts) {
  return readouts.filter((r) => r.sweep > 0).sort((a, b) => a.sweep - b.sweep).map((r) => r.key);
}

/** Fill the tables from a module's registry readouts (later modules must agree with the first). */
export function fillReadoutInfo(readouts) {
  if (Object.isFrozen(READOUT_INFO)) {
    if (JSON.stringify(READOUT_INFO) !== JSON.stringify(readouts)) throw new Error('attnviz: this module\'s readouts differ from those of the first module loaded');
    return;
  }
  READOUT_INFO.push(...readouts);
  SPECTRAL_KEYS.push(...readouts.filter((r) => r.kind === 'spectral').map((r) => r.key));
  SWEEP_READOUTS.push(...sweepReadouts(readouts));
  for (const t of [READOUT_INFO, SPECTRAL_KEYS, SWEEP_READOUTS]) Object.freeze(t);
  for (const f of listeners.splice(0)) f(READOUT_INFO);
}

/** Call f(READOUT_INFO) once the tables are filled (at once if they are). */
export function whenReadoutInfo(f) {
  if (Object.isFrozen(READOUT_INFO)) f(READOUT_INFO);
  else listeners.push(f);
}
