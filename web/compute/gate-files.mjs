// gate-files.mjs: the gate arrays each gated family reads (docs/gated.md), by the registry's name: exported
// beside Q, K and M so that the numpy snippet recomputes M (web/io/export.mjs), filled by the engine
// (web/compute/engine.mjs exportArrays) from the arrays the page gave the library or, where it gave none, from
// the constant case they stand for (g_t = ln γ from the decay knob, η_t = the beta knob, a = b = 0).
// Pure data and arithmetic; no DOM.

/**
 * Per gated family, the arrays it reads, in the order they are exported: [name (in the script and the file
 * name), per (what one row holds: 'token' one value, 'channel' d values)]. `gates` are the log-gates g ≤ 0;
 * `betas` the write strengths η_t (β_t in the papers); `a`, `b` dplr's read and write vectors.
 */
export const VARIANT_GATES = {
  simple_gla: [['gates', 'token']],
  gla: [['gates', 'channel']],
  gdn: [['gates', 'token'], ['betas', 'token']],
  kda: [['gates', 'channel'], ['betas', 'token']],
  dplr: [['gates', 'channel'], ['a', 'channel'], ['b', 'channel']],
  fox: [['gates', 'token']],
};

// the lab's names (web/wasm/lab.mjs gates()) of the exported arrays
const GIVEN = { gates: 'g', betas: 'beta', a: 'a', b: 'b' };

/** A variant's gate arrays: [] for one that reads none. */
export const gatesOf = (name) => (Object.hasOwn(VARIANT_GATES, name) ? VARIANT_GATES[name] : []);

/** The gate arrays a request's variant reads, as [python name, export name] (the same word). */
export const gateFiles = (request) => gatesOf(request.knobs.variant).map(([name]) => [name, name]);

/**
 * The gate arrays of a request as the variant reads them, [{what, data (Float32Array, a copy), shape}]: the
 * arrays given (`given`, as web/wasm/lab.mjs gates() returns them: {g, channels, beta, a, b}, any of them null
 * or absent) or, for one not given, the
 * constant case it stands for, written out: g_t = ln(decay) in every token (and channel, for a per-channel
 * family: shape (n, d)), η_t = beta, a = b = 0. A given per-token gate of a per-channel family keeps its shape
 * (n): the library applies it to every channel, and so does the snippet.
 * @param {{inputs: {n: number, d: number}, knobs: object}} request
 * @param {{g?: Float32Array|null, channels?: number, beta?: Float32Array|null, a?: Float32Array|null, b?: Float32Array|null}|null} [given]
 */
export function gateArrays(request, given = {}) {
  const { n, d } = request.inputs, k = request.knobs;
  return gatesOf(k.variant).map(([what, per]) => {
    const cols = per === 'channel' ? d : 1;
    const shapeOf = (c) => (c === 1 ? [n] : [n, c]);
    const own = given?.[GIVEN[what]];
    if (own) {
      const c = what === 'gates' ? (given.channels ?? 1) : cols;
      if (own.length !== n * c) throw new RangeError(`gateArrays: ${what} holds ${own.length} values, not ${n}×${c}`);
      return { what, data: Float32Array.from(own), shape: shapeOf(c) };
    }
    const value = what === 'gates' ? Math.log(k.decay ?? 1) : what === 'betas' ? k.beta : 0;
    if (!Number.isFinite(value)) throw new RangeError(`gateArrays: no constant ${what} in the knobs`);
    return { what, data: new Float32Array(n * cols).fill(value), shape: shapeOf(cols) };
  });
}
