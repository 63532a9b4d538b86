// suite.mjs: the set-up most e2e files share: build/web served on a free port and, unless asked not to,
// one Chromium at a window size; both closed after the file's tests.
import { beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch } from './browser.mjs';

export const ROOT = 'build/web';

/**
 * Register the file's beforeAll/afterAll; the returned object gets `server` ({url, close}) and `browser`
 * (tests/e2e/browser.mjs launch(): {context, close}) once they run. `window`: launch's options, or null
 * for a file that launches its own browsers.
 */
export function servedLab(window = { width: 1024, height: 768 }) {
  const lab = { server: null, browser: null };
  beforeAll(async () => {
    if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
    await mkdir('build/e2e', { recursive: true });
    lab.server = await serve(ROOT, 0);
    if (window) lab.browser = await launch(window);
  });
  afterAll(async () => {
    await lab.browser?.close();
    await lab.server?.close();
  });
  return lab;
}
