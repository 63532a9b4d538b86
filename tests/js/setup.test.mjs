// setup.test.mjs: what a newcomer's first commands say. `make help` names every target the Makefile
// declares; scripts/deps.sh --check (plain `make`'s first step) says what is missing and what to run.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('a newcomer\'s first commands', () => {
  it('make help names every declared target', () => {
    const r = spawnSync('make', ['-s', '--no-print-directory', 'help'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const makefiles = ['Makefile', 'web.mk', 'emscripten.mk'].map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    const declared = [...makefiles.matchAll(/^\.PHONY:(.*)$/gm)].flatMap((m) => m[1].trim().split(/\s+/));
    const missing = declared.filter((t) => !['all', 'help'].includes(t) && !new RegExp(`(^|\\s)${t}(\\s|$)`, 'm').test(r.stdout));
    expect(declared.length).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it('deps.sh --check installs nothing and says what to run when something is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-deps-'));
    mkdirSync(join(dir, 'scripts'));
    copyFileSync(join(ROOT, 'scripts/deps.sh'), join(dir, 'scripts/deps.sh'));
    copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const r = spawnSync('bash', [join(dir, 'scripts/deps.sh'), '--check'], { cwd: dir, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^attnviz: not installed yet: .*node_modules \(npm ci\).*Run 'make run' or 'make test'/);
    // (not asserted in the repository itself: a checkout newer than its node_modules is 'not installed' too)
  });
});
