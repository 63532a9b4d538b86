// vite.single.mjs: the single-file build's first step (scripts/single.mjs does the rest): web/ bundled
// into one script and one stylesheet, every asset inlined, and web/wasm/wasm-source.mjs replaced by a module
// holding both WebAssembly builds as base64, so the page fetches nothing. Output: build/single-tmp/.
import { defineConfig } from 'vite';
import { readFileSync } from 'node:fs';

const SOURCE = 'virtual:attnviz-wasm-inline';

/** wasm-source.mjs → both builds inline (the loader decodes base64 starting 'AGFzbQ'). */
function inlineWasm() {
  return {
    name: 'attnviz-inline-wasm',
    enforce: 'pre',
    resolveId(id) { return id.endsWith('/wasm-source.mjs') || id === './wasm-source.mjs' ? `\0${SOURCE}` : null; },
    load(id) {
      if (id !== `\0${SOURCE}`) return null;
      const b64 = (f) => readFileSync(new URL(`./build/wasm/${f}`, import.meta.url)).toString('base64');
      return `// the two WebAssembly builds, inline (vite.single.mjs)\n` +
        `const SIMD = ${JSON.stringify(b64('attnviz.wasm'))};\nconst SCALAR = ${JSON.stringify(b64('attnviz-scalar.wasm'))};\n` +
        'export function wasmSources() { return { simd: SIMD, scalar: SCALAR }; }\n';
    },
  };
}

export default defineConfig({
  root: 'web',
  base: './',
  publicDir: false,
  logLevel: 'warn',
  plugins: [inlineWasm()],
  build: {
    outDir: '../build/single-tmp',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    cssCodeSplit: false,
    modulePreload: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2000,
    rollupOptions: { output: { codeSplitting: false } },
  },
  worker: { format: 'iife', plugins: () => [inlineWasm()] },
});
