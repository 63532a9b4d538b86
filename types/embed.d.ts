// embed.d.ts: the <attn-viz> custom element (build/web/embed.js), the package's `attnviz/embed` entry,
// written by hand from docs/embedding.md and docs/page.md. Importing the module defines the element.
// tests/js/package-types.test.mjs checks that every link key docs/page.md lists is an attribute here.

/**
 * The element's attributes: the link's keys (docs/page.md), values as strings, the same ranges and
 * defaults. `view` is the link's `embed`; the key `N` is `power-n` (HTML lower-cases attribute names).
 * A bad value is clamped or ignored and the element says so under its figure.
 */
export interface AttnVizAttributes {
  /** the figure: 'heatmap' (M, softmax A, M − A), 'spectrum' or 'readouts' */
  view?: 'heatmap' | 'spectrum' | 'readouts';
  /** the controls shown, comma-separated page keys (e.g. 'p,variant'); none by default */
  controls?: string;
  /** the variant (a registry name, e.g. 'focused', 'performer', 'softmax') */
  variant?: string;
  /** a lesson's whole view (docs/lessons.md) */
  preset?: string;
  /** link version: '1' */
  v?: string;
  /** the generator of Q, K, V: 'gaussian', 'clustered', 'local', 'lowrank', 'sink' */
  gen?: string;
  seed?: string;
  /** tokens, 16..4096 */
  n?: string;
  /** head dimension, 4..256 */
  d?: string;
  std?: string;
  src?: string;
  layer?: string;
  head?: string;
  tau?: string;
  rtol?: string;
  ds?: 'mean' | 'max';
  zoom?: string;
  cmap?: 'viridis' | 'cividis' | 'magma' | 'gray';
  /** the colours: 'auto' (the default: the host page's color-scheme, inherited), 'light' or 'dark';
   *  the host's --attnviz-fg, --attnviz-bg, --attnviz-muted, --attnviz-grid, --attnviz-accent win (docs/embedding.md) */
  theme?: 'auto' | 'light' | 'dark';
  /** Where "open in attnviz" leads: the full lab's address (default: beside embed.js; an app that bundles the element names its lab here). */
  lab?: string;
  sweep?: string;
  sweep_y?: string;
  sweep_seeds?: string;
  ov_metric?: string;
  /** the panel "what the model loses" (a real model's; the element shows none) */
  loses?: '0' | '1';
  ls_scope?: 'all' | 'heads';
  ls_heads?: string;
  ls_path?: 'matrix' | 'recurrent';
  projector?: '0' | '1';
  lang?: string;
  figs?: string;
  hide?: string;
  lock?: '0' | '1';
  /** accepted for links' sake; an element takes no messages (docs/embedding.md) */
  host?: string;
  /** the iframe's height=auto, accepted for links' sake; an element's height follows its width */
  height?: '' | 'auto';
  // the knobs (docs/page.md's second table)
  scale?: string;
  causal?: '0' | '1';
  p?: string;
  dwc?: '0' | '1';
  dwc_k?: string;
  s?: string;
  ef_kind?: 'gaussian' | 'mean';
  ef_shared?: '0' | '1';
  m?: string;
  orthogonal?: '0' | '1';
  rseed?: string;
  order?: string;
  /** the link's key N, the power of (1 + s/N)^N */
  'power-n'?: string;
  landmarks?: string;
  iters?: string;
  decay?: string;
  window?: string;
  beta?: string;
  chunk?: string;
  // the gated families' gates (docs/page.md, "Gates")
  gate?: 'constant' | 'uniform' | 'resets' | 'slow' | 'projection' | 'mamba2' | 'file';
  gate_lo?: string;
  gate_hi?: string;
  gate_period?: string;
  /** reset positions, comma-separated token indices */
  gate_at?: string;
  gate_rate?: string;
  gate_wave?: string;
  gate_A?: string;
  gate_dt?: string;
  gate_seed?: string;
  beta_gen?: 'constant' | 'uniform' | 'projection' | 'file';
  beta_lo?: string;
  beta_hi?: string;
  beta_seed?: string;
  dplr_ab?: 'zero' | 'rwkv7' | 'file';
  dplr_icl?: string;
}

/** What snapshot() resolves to (docs/inspection.md). */
export interface AttnVizSnapshot {
  /** the state as its link carries it */
  state: Record<string, string | number | boolean>;
  /** the readouts `attnviz readouts` prints for the same inputs and knobs */
  readouts: Record<string, number | string | null>;
  tokens: string[] | null;
  /** a gated family's gates (docs/inspection.md, "gates"), else null */
  gates: {
    kind: string; knobs: Record<string, number | number[]>; channels: number; n: number; min: number; max: number;
    resets: number[]; beta: { kind: string; knobs: Record<string, number>; min: number; max: number } | null;
    ab: { kind: 'rwkv7' | 'file'; icl?: number } | null;
  } | null;
  /** the full lab's panel "what the model loses" (docs/inspection.md, "loses"): null unless open with a model */
  loses?: Record<string, unknown> | null;
}

export declare class AttnViz extends HTMLElement {
  /** the link the attributes make (`v=1&key=value…`) */
  link(): string;
  /** resolves once the element shows its current state */
  snapshot(): Promise<AttnVizSnapshot>;
  /** how long (ms) an element off screen with nothing to compute keeps its worker; default 30000 */
  static parkMs: number;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-viz': AttnViz; }
}
