// embed-csp.test.mjs: web/embed-csp.mjs without a browser (tests/e2e/csp.test.mjs runs it in Chromium):
// which violation names which directive, what the recorder keeps, and the Trusted Types policy's one rule.
import { describe, it, expect, afterEach } from 'vitest';
import { watchViolations, cspCause, cspCauseWithin, trustedWorker } from '../../web/embed-csp.mjs';

const BASE = 'https://lab.example/attnviz/embed.js';
const v = (directive, blocked) => ({ directive, blocked });

describe('cspCause', () => {
  it('names the directive that blocked the element, in the order loading meets them', () => {
    expect(cspCause([v('connect-src', 'https://lab.example/attnviz/attnviz.wasm')], BASE)).toEqual(['embed.csp.connect', { origin: 'https://lab.example' }]);
    expect(cspCause([v('script-src', 'wasm-eval')], BASE)).toEqual(['embed.csp.wasm', {}]);
    expect(cspCause([v('worker-src', 'blob')], BASE)).toEqual(['embed.csp.worker', {}]);
    expect(cspCause([v('script-src-elem', 'blob')], BASE)).toEqual(['embed.csp.worker', {}]);
    expect(cspCause([v('trusted-types', 'attnviz'), v('require-trusted-types-for', 'trusted-types-sink')], BASE)).toEqual(['embed.csp.trustedTypes', {}]);
  });
  it("is null for the host's own violations: another origin's fetch, an image, a policy name alone", () => {
    expect(cspCause([v('connect-src', 'https://analytics.example/x'), v('img-src', 'data'), v('trusted-types', 'attnviz')], BASE)).toBe(null);
    expect(cspCause([v('worker-src', 'https://blog.example/sw.js')], BASE)).toBe(null);
    expect(cspCause([], BASE)).toBe(null);
  });
});

describe('watchViolations', () => {
  const event = (props) => Object.assign(new Event('securitypolicyviolation'), props);
  it('keeps the enforced ones, drops report-only ones, and wakes a waiter at the next one', async () => {
    const doc = new EventTarget();
    const { seen, next } = watchViolations(doc);
    doc.dispatchEvent(event({ disposition: 'report', effectiveDirective: 'img-src', blockedURI: 'data' }));
    expect(seen).toEqual([]);
    const woke = next(10_000);
    doc.dispatchEvent(event({ disposition: 'enforce', effectiveDirective: 'connect-src', blockedURI: 'https://lab.example/a.wasm' }));
    await woke; // long before the 10 s bound
    expect(seen).toEqual([v('connect-src', 'https://lab.example/a.wasm')]);
    await next(5); // no event: settles at its bound
  });
  it('cspCauseWithin waits for the events still to come (a refused policy is two), up to its bound', async () => {
    const doc = new EventTarget();
    const watch = watchViolations(doc);
    const cause = cspCauseWithin(watch, BASE, 10_000);
    setTimeout(() => doc.dispatchEvent(event({ disposition: 'enforce', effectiveDirective: 'trusted-types', blockedURI: 'trusted-types-policy' })), 5);
    setTimeout(() => doc.dispatchEvent(event({ disposition: 'enforce', effectiveDirective: 'require-trusted-types-for', blockedURI: 'trusted-types-sink' })), 20);
    expect(await cause).toEqual(['embed.csp.trustedTypes', {}]);
    expect(await cspCauseWithin(watchViolations(new EventTarget()), BASE, 5)).toBe(null); // none came
  });
  it('keeps at most 32 (a host with a violation on every image)', () => {
    const doc = new EventTarget();
    const { seen } = watchViolations(doc);
    for (let i = 0; i < 100; i++) doc.dispatchEvent(event({ disposition: 'enforce', effectiveDirective: 'img-src', blockedURI: `https://x.example/${i}` }));
    expect(seen.length).toBe(32);
  });
});

describe('trustedWorker', () => {
  const saved = { trustedTypes: globalThis.trustedTypes, Worker: globalThis.Worker, location: globalThis.location };
  afterEach(() => { for (const [k, val] of Object.entries(saved)) if (val === undefined) delete globalThis[k]; else globalThis[k] = val; });
  it("passes the worker's own blob: URL through the attnviz policy, refuses any other, and puts Worker back", () => {
    const made = [];
    globalThis.location = { origin: 'https://blog.example' };
    globalThis.trustedTypes = { createPolicy: (name, rules) => { made.push(name); return { createScriptURL: (u) => ({ trusted: rules.createScriptURL(u) }) }; } };
    class FakeWorker { constructor(url) { this.url = url; } }
    globalThis.Worker = FakeWorker;
    const w = trustedWorker(() => new Worker('blob:https://blog.example/1234'));
    expect(w.url).toEqual({ trusted: 'blob:https://blog.example/1234' });
    expect(made).toEqual(['attnviz']);
    expect(globalThis.Worker).toBe(FakeWorker);
    expect(() => trustedWorker(() => new Worker('data:text/javascript,1'))).toThrow(/only this page's blob: worker/);
    expect(() => trustedWorker(() => new Worker('blob:https://evil.example/1'))).toThrow(/only this page's blob: worker/);
    expect(globalThis.Worker).toBe(FakeWorker);
    expect(made).toEqual(['attnviz']); // made once
  });
});
