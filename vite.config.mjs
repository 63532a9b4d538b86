// vite.config.mjs: builds web/ into build/web/ as a static page that loads nothing from the network:
// relative URLs (works from any static host and sub-path), KaTeX's CSS and fonts and uPlot bundled,
// the worker bundled as a classic script inlined in the page's bundle (started from a blob: URL, which
// works from any origin and from file://, where a blob: module worker does not). The wasm builds are copied beside index.html by web.mk.
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
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 600,
  },
  worker: { format: 'iife' },
  server: { host: '127.0.0.1' },
});
