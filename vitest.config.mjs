// Vitest, node: pure JS modules, the real wasm module, and the CLI.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/js/**/*.test.mjs'],
    environment: 'node',
    testTimeout: 60_000,
  },
});
