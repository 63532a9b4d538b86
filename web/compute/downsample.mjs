// downsample.mjs: how far the n×n matrices are shrunk for the heatmaps (to at most 256 cells per side:
// HEATMAP_CAP in web/compute/engine.mjs). The cells themselves come from the library (av_downsample, through the
// loader's lab.downsample), which reads an n×n matrix in a tenth of the time a JS loop took.

/** Block size so that an n×n matrix shows in at most `cap` cells per side. */
export function blockSize(n, cap = 256) {
  return Math.max(1, Math.ceil(n / cap));
}
