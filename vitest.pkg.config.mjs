// Vitest, the package as a user gets it: `make test-pkg` (after `make dist`) installs dist/'s tarball in a
// scratch folder outside the repository and uses it from node, a plain page in Chromium and a Vite app.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/pkg/**/*.test.mjs'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
