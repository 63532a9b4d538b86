// wasm-source.mjs: where the page's WebAssembly builds come from: the two files beside index.html (web.mk
// copies them there). The single-file build (scripts/single.mjs) replaces this module with one that holds
// both builds inline, as base64, so that page needs no server and no fetch.

/** {simd, scalar}: each a URL, or base64 the loader (web/wasm/attnviz.mjs) decodes. */
export function wasmSources() {
  return { simd: new URL('attnviz.wasm', location.href).href, scalar: new URL('attnviz-scalar.wasm', location.href).href };
}
