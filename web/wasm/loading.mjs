// loading.mjs: the loader's lowest part (web/wasm/attnviz.mjs is the entry the page imports): where the
// module comes from (a URL, a file in node, base64 for the single-file page, a compiled module), the SIMD
// probe, compiling and instantiating, the library's limits and the status and knob tables filled from the
// first module's registry. web/wasm/lab.mjs and web/wasm/model.mjs build on it; it imports neither.

/**
 * The library's status codes (enum av_status in include/attnviz.h), by name without the AV_ prefix, from
 * the registry of the first module loaded: empty until then, frozen once filled (av.STATUS has them too).
 */
export const STATUS = {};
/**
 * The knobs a lab call starts from (a call's knobs override them key by key), from the registry of the
 * first module loaded: the registry's defaults, 0 for those resolved against n and d (s, landmarks, scale).
 * Empty until then, frozen once filled (av.defaultKnobs has them too).
 */
export const DEFAULT_KNOBS = {};
export const REASON_NONFINITE = 7; // enum av_reason: AV_REASON_NONFINITE
export const REASON_ZERO_WHERE_POSITIVE = 2; // enum av_reason: M is 0 where A > 0 (an underflow, or truly 0)
const LIMIT = { MAX_N: 0, MAX_D: 1, MAX_FEATURE_DIM: 2, STATUS_MIN: 3, STATUS_MAX: 4, SIZE_MAX: 5 }; // enum av_limit_key
export const LONG_MAX = 2 ** 31 - 1; // a saturated feature dimension (long is 32 bits in wasm32)
const WASM32_BYTES = 2 ** 32;

// The standard 31-byte probe: a function using a v128 instruction validates only where SIMD exists.
const SIMD_PROBE = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10,
  1, 8, 0, 65, 0, 253, 15, 253, 98, 11);

/** @returns {boolean} true where this engine validates WebAssembly SIMD128. */
export function simdSupported() {
  try { return WebAssembly.validate(SIMD_PROBE); } catch { return false; }
}

// beside this module by default (names in variables: the build copies the files, bundlers need not)
const SIMD_FILE = './attnviz.wasm';
const SCALAR_FILE = './attnviz-scalar.wasm';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

async function bytesFrom(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const b64 = typeof source === 'string' ? source.replace(/^data:[^,]*;base64,/, '') : null;
  if (b64 !== null && b64.startsWith('AGFzbQ')) { // base64 of "\0asm" (alone, or a data: URL's)
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  const url = source instanceof URL ? source : new URL(source, import.meta.url);
  if (isNode && url.protocol === 'file:') {
    const fsModule = 'node:fs/promises'; // a variable, so bundlers leave this node-only branch alone
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attnviz: cannot load ${url} (HTTP ${response.status})`);
  return response.arrayBuffer();
}

/** The maximum of the memory a module defines (bytes, from its memory section), or null when unknown. */
function declaredMemoryMax(bytes) {
  if (!(bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes))) return null;
  const b = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 8; // past the magic and the version
  const leb = () => {
    let r = 0, shift = 0, c;
    do { c = b[i++]; r += (c & 0x7f) * 2 ** shift; shift += 7; } while (c & 0x80 && i < b.length && shift < 35);
    return r;
  };
  while (i < b.length) {
    const id = b[i++], size = leb(), end = i + size;
    if (id === 5) { // memory section: count, then limits (flags, min pages[, max pages])
      if (leb() < 1) return null;
      const flags = leb();
      leb();
      return flags & 1 && !(flags & 4) ? leb() * 65536 : null;
    }
    i = end;
  }
  return null;
}

/** The build's limits (av_limit), and the largest byte count one call may allocate. */
export function readLimits(ex, memoryMax) {
  const get = (key) => ex.av_limit(key);
  const limits = {
    maxN: get(LIMIT.MAX_N), maxD: get(LIMIT.MAX_D), maxFeatureDim: get(LIMIT.MAX_FEATURE_DIM),
    statusMin: get(LIMIT.STATUS_MIN), statusMax: get(LIMIT.STATUS_MAX), sizeMax: get(LIMIT.SIZE_MAX),
  };
  limits.maxBytes = Math.min(limits.sizeMax, memoryMax ?? WASM32_BYTES, WASM32_BYTES);
  return Object.freeze(limits);
}

export function deepFreeze(x) {
  if (x && typeof x === 'object' && !Object.isFrozen(x)) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

/** A knob's default as a lab call takes it: 0 where the library resolves it against n and d. */
export function knobDefault(k) {
  if (k.def_rule !== 'fixed') return k.type === 'bool' ? false : 0;
  if (k.type === 'bool') return k.def !== 0;
  if (k.type === 'enum') return k.options[k.def];
  return k.def;
}

/** Fill a module-level table from the first module's registry; later modules must agree with it. */
export function fillOnce(target, values, what) {
  if (!Object.isFrozen(target)) {
    Object.assign(target, values);
    Object.freeze(target);
  } else if (JSON.stringify(target) !== JSON.stringify(values)) {
    throw new Error(`attnviz: this module's ${what} differ from those of the first module loaded`);
  }
}


/**
 * Fetch (or take), compile and instantiate the module for loadAttnviz (its opts): {exports, usesSimd,
 * module (the compiled WebAssembly.Module), memoryMax (its declared maximum in bytes, or null)}.
 */
export async function instantiate(opts) {
  const wantSimd = opts.simd === 'auto' || opts.simd === undefined ? simdSupported() : !!opts.simd;
  const source = opts.source ?? (wantSimd
    ? (opts.simdUrl ?? new URL(SIMD_FILE, import.meta.url))
    : (opts.scalarUrl ?? new URL(SCALAR_FILE, import.meta.url)));
  const bytes = await bytesFrom(source);
  const module = bytes instanceof WebAssembly.Module ? bytes : await WebAssembly.compile(bytes);
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== 'function') continue;
    imports[imp.module] ??= {};
    imports[imp.module][imp.name] = imp.name === 'proc_exit'
      ? (code) => { throw new Error(`attnviz: module exited with ${code}`); }
      : () => 0; // emscripten_notify_memory_growth and friends: nothing to do, views are re-derived
  }
  const instance = await WebAssembly.instantiate(module, imports);
  instance.exports._initialize?.();
  // with an explicit source the caller says which build it is (opts.simd), else the probe decided
  const usesSimd = opts.source ? opts.simd !== false && simdSupported() : wantSimd;
  const memoryMax = bytes instanceof WebAssembly.Module ? (opts.memoryMax ?? null) : declaredMemoryMax(bytes);
  return { exports: instance.exports, usesSimd, module, memoryMax };
}
