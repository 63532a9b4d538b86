// vite.embed.mjs: the <attn-viz> custom element (web/embed.mjs) as one ES module, build/web/embed.js,
// beside the page and its wasm builds (which it loads from its own URL). Its worker, styles and the
// uPlot stylesheet are inside it; nothing else is fetched.
import { defineConfig } from 'vite';

export default defineConfig({
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: 'build/web',
    emptyOutDir: false,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
    lib: { entry: 'web/embed.mjs', formats: ['es'], fileName: () => 'embed.js' },
    rollupOptions: {
      // charts.mjs imports uPlot on first need for the page; the element imports it itself (web/embed.mjs),
      // so that its charts need no second file, and that dynamic import is meant to be ineffective here
      onwarn(warning, warn) { if (warning.code !== 'INEFFECTIVE_DYNAMIC_IMPORT') warn(warning); },
    },
  },
  worker: { format: 'iife' },
});
