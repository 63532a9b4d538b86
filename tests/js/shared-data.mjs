// shared-data.mjs: where the Vitest and e2e suites find the real-model data, and the one line they print
// without it. The data is $ATTNVIZ_SHARED/data/stories260K, ATTNVIZ_SHARED defaulting to ../shared beside
// the repository (README, "The real-model data"); no test names another path.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
export const STORIES = resolve(process.env.ATTNVIZ_SHARED || join(ROOT, '..', 'shared'), 'data', 'stories260K');
export const HAVE_STORIES = existsSync(STORIES);
/** The seed articles the lessons cite (tests/js/citations.test.mjs), beside the data. */
export const SEEDS_DIR = resolve(process.env.ATTNVIZ_SHARED || join(ROOT, '..', 'shared'), 'seeds');

/** The SKIPPED line of every layer: what was not checked, and how to check it. */
export function skipped(what) {
  console.warn(`SKIPPED: real-model checks (${what}): ${STORIES} not found; set ATTNVIZ_SHARED=/path/to/shared`);
}
