// own-inputs.mjs: the reader's own Q, K, V for the lab (docs/page.md, "Your own Q, K, V"): three .npy
// files (float32 or float64, C order), 2-D (n, d) or a model's 4-D capture (layers, heads, n, d) for Q
// and (layers, kv_heads, n, d) for K and V, told apart by their names (…q.npy, …k.npy, …v.npy); or one
// JSON file {"q": [[…], …], "k": …, "v": …} of 2-D arrays. Every problem is one short sentence naming the
// file, which describes a bad value (its kind, a shape) and never quotes it, and nothing is loaded unless
// everything is right. No DOM: the page and Vitest call it alike.

import { parseTokensJson } from '../state/tokens.mjs';

/** The page's limits on own inputs: n as the lab's n slider allows (any n from 1), d as its d range. */
export const OWN_LIMITS = { maxN: 4096, maxD: 256 };

const ROLE = /(?:^|[^a-z0-9])([qkv])\.npy$/i;

/** Which of Q, K, V a .npy file is, from its name ("text128_q.npy", "K.npy"), or null. */
export function roleOf(name) {
  const m = ROLE.exec(String(name));
  return m ? m[1].toUpperCase() : null;
}

/** Whether a file is the optional token list beside Q, K, V (tokens.json, text128_tokens.json). */
export const isTokensFile = (name) => /(?:^|[^a-z0-9])tokens\.json$/i.test(String(name));

/**
 * Q, K, V from the files the reader gave: [{name, bytes (Uint8Array)}], and the optional tokens.json
 * beside them (web/state/tokens.mjs parseTokensJson). `av` is the loaded module (its .npy reader). Returns
 * {tensors: {Q, K, V, layers, heads, kvHeads, n, d, pieces (or null)}, notice} or {error: one sentence};
 * `notice`, a sentence, when the tokens file was set aside (the tensors load without it).
 */
export function ownTensors(files, av, limits = OWN_LIMITS) {
  const tok = files.filter((f) => isTokensFile(f.name));
  if (tok.length > 1) return { error: `${tok.length} token files given (${tok.map((f) => f.name).join(', ')}): give one tokens.json` };
  const got = ownArrays(files.filter((f) => !isTokensFile(f.name)), av, limits);
  if (got.error || !tok.length) return got.error ? got : { tensors: { ...got.tensors, pieces: null }, notice: null };
  const t = parseTokensJson(tok[0].name, tok[0].bytes, got.tensors.n);
  return { tensors: { ...got.tensors, pieces: t.pieces ?? null }, notice: t.error ?? null };
}

function ownArrays(files, av, limits) {
  if (!files.length) return { error: 'no file given' };
  const json = files.filter((f) => /\.json$/i.test(f.name));
  if (json.length) {
    if (files.length !== 1) return { error: 'give one JSON file {"q", "k", "v"}, or three .npy files, not both' };
    return fromJson(json[0], limits);
  }
  const byRole = {};
  for (const f of files) {
    const role = roleOf(f.name);
    if (!role) return { error: `${f.name}: name the .npy files so that each ends in q.npy, k.npy or v.npy (e.g. layer0_q.npy)` };
    if (byRole[role]) return { error: `${f.name} and ${byRole[role].name} are both ${role}` };
    byRole[role] = f;
  }
  for (const r of ['Q', 'K', 'V']) if (!byRole[r]) return { error: `no ${r}: give three .npy files, …q.npy, …k.npy and …v.npy` };
  const arr = {};
  for (const r of ['Q', 'K', 'V']) {
    const got = av.npy(byRole[r].bytes);
    if (!got.data) return { error: `${byRole[r].name}: ${got.message}` };
    arr[r] = { ...got, name: byRole[r].name };
  }
  const nd = arr.Q.shape.length;
  const shape = (r) => `(${arr[r].shape.join(', ')})`;
  if (nd !== 2 && nd !== 4) return { error: `${arr.Q.name}: shape ${shape('Q')} is neither (n, d) nor (layers, heads, n, d)` };
  for (const r of ['K', 'V']) {
    if (arr[r].shape.length !== nd) return { error: `${arr[r].name}: shape ${shape(r)} has not Q's ${nd} dimensions ${shape('Q')}` };
  }
  const [n, d] = arr.Q.shape.slice(-2);
  const layers = nd === 4 ? arr.Q.shape[0] : 1, heads = nd === 4 ? arr.Q.shape[1] : 1, kvHeads = nd === 4 ? arr.K.shape[1] : 1;
  for (const r of ['K', 'V']) {
    const s = arr[r].shape;
    if (s.at(-2) !== n || s.at(-1) !== d) return { error: `${arr[r].name}: shape ${shape(r)} does not match Q's ${shape('Q')}: ${r} must be n × d like Q (the lab's V is n × d)` };
    if (nd === 4 && (s[0] !== layers || s[1] !== kvHeads || kvHeads < 1 || heads % kvHeads)) {
      return { error: `${arr[r].name}: shape ${shape(r)}: K and V are (layers, kv_heads, n, d) with Q's ${layers} layers and kv_heads dividing its ${heads} heads` };
    }
  }
  const bad = checkSizes(n, d, limits);
  if (bad) return { error: `${arr.Q.name}: ${bad}` };
  for (const r of ['Q', 'K', 'V']) {
    const i = arr[r].data.findIndex((x) => !Number.isFinite(x));
    if (i >= 0) return { error: `${arr[r].name}: entry ${i} is ${arr[r].data[i]}: NaN and Inf have no attention` };
  }
  return { tensors: { Q: arr.Q.data, K: arr.K.data, V: arr.V.data, layers, heads, kvHeads, n, d } };
}

function checkSizes(n, d, limits) {
  if (!(n >= 1 && n <= limits.maxN)) return `n = ${n} tokens, outside 1..${limits.maxN}`;
  if (!(d >= 1 && d <= limits.maxD)) return `d = ${d}, outside 1..${limits.maxD}`;
  return null;
}

/** What a JSON value is, in a few words, never the value itself (a nested array would print megabytes). */
function kindOf(x) {
  if (Array.isArray(x)) return `a list of ${x.length} ${x.length === 1 ? 'entry' : 'entries'}`;
  if (typeof x === 'string') return x.length <= 20 ? JSON.stringify(x) : `a string of ${x.length} characters`;
  if (x && typeof x === 'object') return 'an object';
  return String(x); // null, true, false, or a number (Infinity comes from 1e999)
}

/** The shape of a nested list read along its first entries: [[[1, 2]]] → [1, 1, 2]; 3 → []. */
function shapeAlongFirst(x) {
  const shape = [];
  for (let a = x; Array.isArray(a) && shape.length < 8; a = a[0]) shape.push(a.length);
  return shape;
}

/** {"q": [[…]], "k": [[…]], "v": [[…]]}: 2-D arrays of numbers, the same n × d each. */
function fromJson(file, limits) {
  let obj;
  try {
    obj = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(file.bytes));
  } catch (err) {
    return { error: `${file.name}: not JSON (${String(err.message).slice(0, 80)})` };
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return { error: `${file.name}: expected an object {"q": [[…]], "k": [[…]], "v": [[…]]}` };
  const out = {};
  let n = null, d = null;
  for (const key of ['q', 'k', 'v']) {
    const rows = obj[key];
    if (!Array.isArray(rows) || !rows.length) return { error: `${file.name}: "${key}" is missing or not a list of rows` };
    // a capture's 4-D (layers, heads, n, d) nesting, or a flat list: say its shape, not its numbers
    const shape = shapeAlongFirst(rows);
    if (shape.length !== 2) {
      return { error: `${file.name}: "${key}" is ${shape.length}-D (${shape.join(', ')}${shape.length === 8 ? ', …' : ''}), but JSON takes n rows of d numbers; give a 4-D capture as three .npy files` };
    }
    const rd = Array.isArray(rows[0]) ? rows[0].length : -1;
    if (n === null) { n = rows.length; d = rd; }
    if (rows.length !== n) return { error: `${file.name}: "${key}" has ${rows.length} rows, "q" ${n}` };
    const bad = checkSizes(n, d, limits);
    if (bad) return { error: `${file.name}: ${bad}` };
    const data = new Float32Array(n * d);
    for (let i = 0; i < n; i++) {
      const row = rows[i];
      if (!Array.isArray(row) || row.length !== d) return { error: `${file.name}: "${key}" row ${i} has ${Array.isArray(row) ? row.length : 'no'} entries, not ${d} (ragged rows)` };
      for (let j = 0; j < d; j++) {
        const x = row[j];
        if (typeof x !== 'number' || !Number.isFinite(x)) return { error: `${file.name}: "${key}"[${i}][${j}] is ${kindOf(x)}, not a finite number` };
        data[i * d + j] = x;
        if (!Number.isFinite(data[i * d + j])) return { error: `${file.name}: "${key}"[${i}][${j}] = ${x} does not fit a float32` };
      }
    }
    out[key.toUpperCase()] = data;
  }
  return { tensors: { ...out, layers: 1, heads: 1, kvHeads: 1, n, d } };
}
