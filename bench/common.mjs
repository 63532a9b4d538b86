// common.mjs: timing and the build/bench.json record file shared by the benchmarks.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const BENCH_JSON = new URL('../build/bench.json', import.meta.url);

/**
 * Median wall time of fn() in ms: a warm-up of ≥ `warmup` calls and ~`warmupMs` (V8 tiers a function up
 * from Liftoff to TurboFan only after it has run a while), then ≥ 5 calls and ~300 ms.
 */
export function medianMs(fn, { minCalls = 5, budgetMs = 300, warmup = 3, warmupMs = 150 } = {}) {
  const w0 = performance.now();
  for (let i = 0; i < warmup || performance.now() - w0 < warmupMs; i++) fn();
  const samples = [];
  const start = performance.now();
  while (samples.length < minCalls || (performance.now() - start < budgetMs && samples.length < 500)) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}

/** Append records {name, n, d, ms, baseline, baseline_ms} to build/bench.json (a JSON array). */
export function appendRecords(records) {
  mkdirSync(new URL('./', BENCH_JSON), { recursive: true });
  let all = [];
  if (existsSync(BENCH_JSON)) {
    try { all = JSON.parse(readFileSync(BENCH_JSON, 'utf8')); } catch { all = []; }
  }
  const names = new Set(records.map((r) => `${r.name}@${r.n}`));
  all = all.filter((r) => !names.has(`${r.name}@${r.n}`)).concat(records);
  writeFileSync(BENCH_JSON, `${JSON.stringify(all, null, 1)}\n`);
}
