// The worker protocol (web/workers/protocol.mjs): both sides use its constants, never a kind written out, and every
// kind and part has a sender and a receiver among the page's and the workers' modules.
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { MSG, PART } from '../../web/workers/protocol.mjs';

const PAGE = ['web/main.mjs', 'web/lab-workers.mjs', 'web/embed.mjs', ...readdirSync('web/ui').map((f) => `web/ui/${f}`)];
const WORKERS = ['web/workers/worker.mjs', 'web/workers/embed-worker.mjs'];
const text = (files) => files.filter((f) => f.endsWith('.mjs')).map((f) => readFileSync(f, 'utf8')).join('\n');
const page = text(PAGE), workers = text(WORKERS);
const code = (s) => s.split('\n').filter((l) => !l.trim().startsWith('//') && !l.trim().startsWith('*')).join('\n');

describe('the worker protocol', () => {
  it('is used by name: no kind or part of it is written out as a string', () => {
    const values = new Set([...Object.values(MSG), ...Object.values(PART)]);
    for (const f of [...PAGE, ...WORKERS].filter((x) => x.endsWith('.mjs'))) {
      const literal = [...code(readFileSync(f, 'utf8')).matchAll(/\b(kind|part)\s*(?::|===|!==)\s*'([a-z-]+)'/g)]
        .filter((m) => values.has(m[2])).map((m) => m[0]);
      expect(literal, f).toEqual([]);
      if (/postMessage\(\{/.test(readFileSync(f, 'utf8'))) expect(readFileSync(f, 'utf8'), f).toMatch(/from '(\.\.?\/)+(workers\/)?protocol\.mjs'/);
    }
  });

  it('has both sides for every kind and part', () => {
    for (const k of Object.keys(MSG)) {
      expect(page.includes(`MSG.${k}`), `MSG.${k} on the page`).toBe(true);
      expect(workers.includes(`MSG.${k}`), `MSG.${k} in a worker`).toBe(true);
    }
    for (const k of Object.keys(PART)) {
      expect(page.includes(`PART.${k}`), `PART.${k} on the page`).toBe(true);
      expect(workers.includes(`PART.${k}`), `PART.${k} in a worker`).toBe(true);
    }
  });

  it('has one string per constant', () => {
    const all = [...Object.values(MSG), ...Object.values(PART)];
    expect(new Set(Object.values(MSG)).size).toBe(Object.values(MSG).length);
    expect(all.every((v) => /^[a-z]+(-[a-z]+)*$/.test(v))).toBe(true);
  });
});
