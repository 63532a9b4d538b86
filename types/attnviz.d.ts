// attnviz.d.ts: the loader's public API (web/wasm/attnviz.mjs), the package's `attnviz` entry, written by
// hand from its JSDoc. tests/js/package-types.test.mjs checks every name the module exports is declared.

/** A library status code (enum av_status): 0 is AV_OK, > 0 a warning, < 0 an error. */
export type Status = number;

/** The knobs of one call: the registry's keys (docs/api.md), e.g. {variant: 'focused', p: 3}. */
export interface Knobs {
  variant?: string;
  causal?: boolean;
  scale?: number;
  p?: number;
  s?: number;
  m?: number;
  seed?: number;
  order?: number;
  N?: number;
  landmarks?: number;
  iters?: number;
  decay?: number;
  window?: number;
  beta?: number;
  chunk?: number;
  [key: string]: string | number | boolean | undefined;
}

/** Where the WebAssembly comes from. Without options the package loads the build beside its loader
 *  (fs in node, fetch in browsers), SIMD where the engine validates it. */
export interface LoadOptions {
  /** which build: probe (default), force SIMD, or force scalar */
  simd?: 'auto' | boolean;
  /** the module itself (overrides simd); base64 starting 'AGFzbQ', alone or in a data: URL, works too */
  source?: URL | string | ArrayBuffer | Uint8Array | WebAssembly.Module;
  /** the declared memory maximum in bytes, for a compiled WebAssembly.Module source */
  memoryMax?: number;
  /** where the SIMD build lives (default ./attnviz.wasm beside the loader) */
  simdUrl?: URL | string;
  /** where the scalar build lives (default ./attnviz-scalar.wasm beside the loader) */
  scalarUrl?: URL | string;
}

export interface Result { status: Status; message: string; }

export interface Limits {
  maxN: number; maxD: number; maxFeatureDim: number;
  statusMin: number; statusMax: number; sizeMax: number;
  /** the most one allocation (or one call's buffers together) can take in this build's memory */
  maxBytes: number;
}

/** The registry (av_registry_json, docs/api.md), parsed once and frozen. */
export interface Registry {
  variants: ReadonlyArray<{ name: string; label: string; formula: string; class: string; causal: boolean;
    linear: boolean; recurrent: boolean; knobs: ReadonlyArray<string>; [key: string]: unknown }>;
  knobs: ReadonlyArray<{ key: string; type: string; lo: number; hi: number; def: number; meaning: string;
    options?: ReadonlyArray<string>; [key: string]: unknown }>;
  limits: Record<string, number>;
  status: Record<string, number>;
  [key: string]: unknown;
}

export interface Spectrum extends Result { sv: Float64Array | null; floor: number | null; }
export interface Histogram extends Result { counts: Int32Array | null; bins: number; top: number; left: number | null; }
export interface Dimension extends Result { r: number | null; saturated?: boolean; }

/** Buffers for one (n, d, dv) problem in wasm memory. Views go stale when memory grows: read the getters
 *  again after a call. Call free() when done. */
export interface Lab {
  readonly n: number; readonly d: number; readonly dv: number;
  /** AV_OK, or AV_ERR_SIZE when the library refuses n, d or dv (every call then returns it) */
  readonly status: Status;
  readonly Q: Float32Array; readonly K: Float32Array; readonly V: Float32Array;
  /** the variant's matrix from the last matrix() call (n×n, row-major) */
  readonly M: Float32Array;
  /** the softmax reference from the last reference() call (n×n) */
  readonly A: Float32Array;
  /** the scores from the last scores() call (n×n) */
  readonly S: Float32Array;
  /** the output of the last attend(), linear(), recurrent() or chunkwise() call (n×dv) */
  readonly O: Float32Array;
  /** fill Q, K, V from a generator: 'gaussian', 'clustered', 'local', 'lowrank', 'sink' */
  generate(gen: string | number, std?: number, seed?: number): Result;
  setKnobs(knobs?: Knobs): Status;
  matrix(knobs?: Knobs): Result;
  reference(knobs?: Knobs): Result;
  scores(scale?: number, applyExp?: boolean): Result;
  attend(knobs?: Knobs): Result;
  linear(knobs?: Knobs): Result;
  recurrent(knobs?: Knobs): Result;
  chunkwise(knobs?: Knobs): Result;
  features(knobs?: Knobs): Result & { r: number | null; PhiQ: Float32Array | null; PhiK: Float32Array | null };
  featureDim(knobs?: Knobs, factors?: boolean): Dimension;
  spectrum(which?: 'M' | 'A' | 'S', route?: 'fast' | 'accurate'): Spectrum;
  semiseparableCeiling(knobs?: Knobs): Dimension;
  /** the readouts, keyed by their JSON names (docs/readouts.md); undefined ones are null with `<key>_reason` */
  readouts(knobs?: Knobs, opts?: { reference?: boolean; tau?: number; route?: 'fast' | 'accurate';
    semiseparable?: boolean; of?: 'M' | 'A'; rows?: boolean; summary?: string; sv?: Float64Array | null;
    floor?: number }): Record<string, number | string | null>;
  readoutNames(): string[];
  errorCurve(sv: Float64Array): Float64Array | null;
  entropyHistogram(which?: 'M' | 'A', bins?: number, causal?: boolean): Histogram;
  rowEntropyHistogram(bins?: number): (Histogram & { of: 'M' | 'A'; causal: boolean }) | null;
  /** M, A, S or M − A shrunk by blocks of b×b: a Float32Array of (n/b)² cells, or null */
  downsample(of: 'M' | 'A' | 'S' | 'M-A', b: number, mode?: 'mean' | 'max', out?: Float32Array | null): Float32Array | null;
  cost(knobs?: Knobs): Record<string, number | null> | null;
  free(): void;
}

/** A file of a Hugging Face folder: a File (or a Blob with a name), or its bytes with its name. */
export type FolderFile = (Blob & { name: string }) | { name: string; bytes: Uint8Array };
/** Reading a folder's shards: bytes read of their total, after each chunk. */
export type FolderProgress = { stage: 'reading'; done: number; total: number; file: string };
/** maxTokens: the seq_len's cap (512); cancelled: checked between chunks; deviceGB: navigator.deviceMemory; chunk: bytes a read */
export type FolderOptions = { maxTokens?: number; cancelled?: () => boolean; deviceGB?: number; chunk?: number };

/** A llama2.c checkpoint and its tokenizer, or a Hugging Face folder (docs/model.md). Call free() when done. */
export interface Model {
  readonly config: { dim: number; hiddenDim: number; layers: number; heads: number; kvHeads: number;
    vocab: number; seqLen: number; headSize: number; kvDim: number; sharedClassifier: boolean;
    /** format 'llama2c' or 'hf'; architecture 'llama2.c' or config.json's architectures[0] */
    format: 'llama2c' | 'hf'; architecture: string; modelType: string; bos: number;
    /** dtype the dtypes of the weights read, sorted and joined by '+' ('BF16', 'F16+F32'); bytes their size */
    dtype: string; bytes: number; context: number; limit: number; tokenizer: string };
  encode(text: string): Result & { ids: Int32Array | null };
  pieces(ids: ArrayLike<number>): string[];
  forward(ids: ArrayLike<number>): Result & { n?: number; Q?: Float32Array; K?: Float32Array; V?: Float32Array; ms?: number };
  free(): void;
}

/** The loaded module and its registry. */
export interface Attnviz {
  /** the compiled module: a worker can instantiate it without fetching or compiling again */
  readonly module: WebAssembly.Module;
  readonly memoryMax: number | null;
  readonly memory: WebAssembly.Memory;
  /** whether the SIMD build is the one loaded */
  readonly simd: boolean;
  readonly limits: Limits;
  readonly registry: Registry;
  /** variant names, index = enum av_variant */
  readonly variantNames: ReadonlyArray<string>;
  /** knob keys, index + 1 = enum av_knob */
  readonly knobKeys: ReadonlyArray<string>;
  readonly generatorNames: ReadonlyArray<string>;
  readonly STATUS: Readonly<Record<string, number>>;
  readonly defaultKnobs: Readonly<Knobs>;
  /** the softmax reference: the registry's variant of class 'exact' */
  readonly referenceVariant: string | null;
  /** a lab for one (n, d, dv) problem */
  lab(n: number, d: number, dv?: number): Lab;
  variant(name: string | number): Registry['variants'][number];
  isPlainSoftmax(knobs: Knobs): boolean;
  featureDim(knobs: Knobs, n: number, d: number): Dimension;
  factorRank(knobs: Knobs, n: number, d: number): Dimension;
  semiseparableCeiling(knobs: Knobs, n: number, d: number): Dimension;
  checkKnobs(knobs: Knobs, n: number, d: number): Result & { knob: string | null };
  statusString(code: Status): string;
  /** a .npy file (float32 or float64, C order) */
  npy(bytes: ArrayBuffer | Uint8Array): Result & { shape: number[] | null; data: Float32Array | null };
  /** a checkpoint and its tokenizer, in either order */
  model(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): Result & { model: Model | null };
  recall(knobs: Knobs, opts: { pairs: number; d: number; seeds?: number } | { pairs: number; d: number; K: Float32Array; V: Float32Array }):
    Result & { errors: Float64Array | null; perSeed: Float64Array | null; mean: number | null; min: number | null; max: number | null };
  recallDraw(pairs: number, d: number, seed?: number): { K: Float32Array; V: Float32Array };
}

/** Instantiate the module. */
export function loadAttnviz(opts?: LoadOptions): Promise<Attnviz>;
/** A Hugging Face folder's files (File, Blob with a name, or {name, bytes}) in the module av, read in chunks. */
export function loadModelFolder(av: Attnviz, files: Iterable<FolderFile>, onProgress?: ((p: FolderProgress) => void) | null, opts?: FolderOptions): Promise<Result & { model: Model | null }>;
/** true where this engine validates WebAssembly SIMD128 */
export function simdSupported(): boolean;
/** the status codes by name without the AV_ prefix: empty until the first module loads, then frozen */
export const STATUS: Readonly<Record<string, number>>;
/** the knobs a lab call starts from: empty until the first module loads, then frozen */
export const DEFAULT_KNOBS: Readonly<Knobs>;
/** this release (the package's version) */
export const VERSION: string;
