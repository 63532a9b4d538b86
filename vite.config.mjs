// vite.config.mjs: builds web/ into build/web/ as a static site that loads nothing from the network:
// relative URLs (works from any static host and sub-path), KaTeX and uPlot bundled, the workers bundled as
// classic scripts inlined in the bundles (started from blob: URLs, which work from any origin and from
// file://, where a blob: module worker does not). The wasm builds are copied beside index.html by web.mk.
// One build, two entries: the page (index.html) and the <attn-viz> element (web/embed.mjs → embed.js,
// beside index.html, with its exports kept). Code both use (KaTeX, uPlot, the UI modules) lands in shared
// chunks under assets/, so a post with iframes and elements downloads each once (docs/performance.md).
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  base: './',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: '../build/web',
    emptyOutDir: true,
    target: 'es2022',
    minify: true,
    // one stylesheet for the page (uPlot's, imported by the shared charts module, included): one request
    // fewer; the element's styles are strings in embed.js (web/embed.mjs, ?inline)
    cssCodeSplit: false,
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 600,
    rollupOptions: {
      input: { index: 'web/index.html', embed: 'web/embed.mjs' },
      // an app is built without its entries' exports; the element's module keeps them (AttnViz, langOfTag)
      preserveEntrySignatures: 'exports-only',
      output: {
        // embed.js keeps its unhashed name: hosts load it by that name, and it finds its wasm beside it
        entryFileNames: (chunk) => (chunk.name === 'embed' ? 'embed.js' : 'assets/[name]-[hash].js'),
        // the code both entries import statically: 'shared', not the name of whichever module came first
        chunkFileNames: (chunk) => (chunk.isDynamicEntry ? 'assets/[name]-[hash].js' : 'assets/shared-[hash].js'),
      },
    },
  },
  worker: { format: 'iife' },
  server: { host: '127.0.0.1' },
});
