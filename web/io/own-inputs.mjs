// own-inputs.mjs: the reader's own Q, K, V for the lab (docs/page.md, "Your own Q, K, V"): three .npy
// files (float32 or float64, C order), 2-D (n, d) or a model's 4-D capture (layers, heads, n, d) for Q
// and (layers, kv_heads, n, d) for K and V, told apart by their names (…q.npy, …k.npy, …v.npy); or one
// JSON file {"q": [[…], …], "k": …, "v": …} of 2-D arrays. Every problem is one short sentence naming the
// file, which describes a bad value (its kind, a shape) and never quotes it, and nothing is loaded unless
// everything is right. Beside them, the gated families' inputs (docs/gated.md): gates.npy (the log-gates, (n) or
// (n, d), every value ≤ 0), betas.npy ((n), in (0, 2]), a.npy and b.npy (dplr's, (n, d) each, both or neither).
// No DOM: the page and Vitest call it alike.

import { parseTokensJson } from '../state/tokens.mjs';
import { t, LANGS } from '../i18n/i18n.mjs';

// a problem is English data (the model panel and the notice show it in the reader's language,
// web/state/notice.mjs `said`), written from its catalogue template so that the two cannot drift
const say = (key, params = null) => t(`notice.x.qkv.${key}`, params, LANGS[0]);

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

const GATE_ROLE = /(?:^|[^a-z0-9])(gates|betas|a|b)\.npy$/i;
/** Which gate input a .npy file is ('gates', 'betas', 'a', 'b'), from its name ("gates.npy", "layer0_a.npy"), or null. */
export function gateRoleOf(name) {
  const m = GATE_ROLE.exec(String(name));
  return m ? m[1].toLowerCase() : null;
}

/**
 * Q, K, V from the files the reader gave: [{name, bytes (Uint8Array)}], and the optional tokens.json
 * beside them (web/state/tokens.mjs parseTokensJson). `av` is the loaded module (its .npy reader). Returns
 * {tensors: {Q, K, V, layers, heads, kvHeads, n, d, pieces (or null)}, notice} or {error: one sentence};
 * `notice`, a sentence, when the tokens file was set aside (the tensors load without it).
 */
export function ownTensors(files, av, limits = OWN_LIMITS) {
  const tok = files.filter((f) => isTokensFile(f.name));
  if (tok.length > 1) return { error: say('tokenFiles', { count: tok.length, names: tok.map((f) => f.name).join(', ') }) };
  const gateFiles = files.filter((f) => gateRoleOf(f.name));
  const got = ownArrays(files.filter((f) => !isTokensFile(f.name) && !gateRoleOf(f.name)), av, limits);
  if (got.error) return got;
  const gates = ownGates(gateFiles, av, got.tensors.n, got.tensors.d);
  if (gates.error) return gates;
  const tensors = { ...got.tensors, gates: gates.gates };
  if (!tok.length) return { tensors: { ...tensors, pieces: null }, notice: null };
  const t = parseTokensJson(tok[0].name, tok[0].bytes, got.tensors.n);
  return { tensors: { ...tensors, pieces: t.pieces ?? null }, notice: t.error ?? null };
}

/**
 * The gated families' inputs among the reader's files, for Q's n and d: {gates: {g, channels, beta, a, b} (each
 * null when not given), or null when none was}, or {error: one sentence}. gates.npy (n) or (n, d), every value
 * finite and ≤ 0; betas.npy (n) in (0, 2]; a.npy and b.npy (n, d), both or neither.
 */
export function ownGates(files, av, n, d) {
  if (!files.length) return { gates: null };
  const byRole = {};
  for (const f of files) {
    const role = gateRoleOf(f.name);
    if (byRole[role]) return { error: say('twice', { file: f.name, other: byRole[role].name, role: `${role}.npy` }) };
    byRole[role] = f;
  }
  if (!byRole.a !== !byRole.b) return { error: say('gates.ab', { file: (byRole.a ?? byRole.b).name, other: byRole.a ? 'b.npy' : 'a.npy' }) };
  const out = { g: null, channels: 0, beta: null, a: null, b: null };
  for (const role of ['gates', 'betas', 'a', 'b']) {
    const f = byRole[role];
    if (!f) continue;
    const got = av.npy(f.bytes);
    if (!got.data) return { error: say('file', { file: f.name, message: got.message }) };
    const shape = `(${got.shape.join(', ')}${got.shape.length === 1 ? ',' : ''})`, s = got.shape;
    const fits = role === 'gates' ? (s.length === 1 && s[0] === n) || (s.length === 2 && s[0] === n && s[1] === d)
      : role === 'betas' ? s.length === 1 && s[0] === n : s.length === 2 && s[0] === n && s[1] === d;
    if (!fits) return { error: say(`gates.shape.${role === 'gates' ? 'g' : role === 'betas' ? 'beta' : 'ab'}`, { file: f.name, shape, n, d }) };
    const x = got.data;
    const i = x.findIndex((v) => !Number.isFinite(v));
    if (i >= 0) return { error: say('nonfinite', { file: f.name, i, value: x[i] }) };
    if (role === 'gates') {
      const j = x.findIndex((v) => v > 0);
      if (j >= 0) return { error: say('gates.positive', { file: f.name, i: j, value: x[j] }) };
      out.g = x; out.channels = s.length === 2 ? d : 1;
    } else if (role === 'betas') {
      const j = x.findIndex((v) => !(v > 0 && v <= 2));
      if (j >= 0) return { error: say('gates.beta', { file: f.name, i: j, value: x[j] }) };
      out.beta = x;
    } else out[role] = x;
  }
  return { gates: out };
}

function ownArrays(files, av, limits) {
  if (!files.length) return { error: say('none') };
  const json = files.filter((f) => /\.json$/i.test(f.name));
  if (json.length) {
    if (files.length !== 1) return { error: say('jsonAndNpy') };
    return fromJson(json[0], limits);
  }
  const byRole = {};
  for (const f of files) {
    const role = roleOf(f.name);
    if (!role) return { error: say('role', { file: f.name }) };
    if (byRole[role]) return { error: say('twice', { file: f.name, other: byRole[role].name, role }) };
    byRole[role] = f;
  }
  for (const r of ['Q', 'K', 'V']) if (!byRole[r]) return { error: say('missing', { role: r }) };
  const arr = {};
  for (const r of ['Q', 'K', 'V']) {
    const got = av.npy(byRole[r].bytes);
    if (!got.data) return { error: say('file', { file: byRole[r].name, message: got.message }) };
    arr[r] = { ...got, name: byRole[r].name };
  }
  const nd = arr.Q.shape.length;
  const shape = (r) => `(${arr[r].shape.join(', ')})`;
  if (nd !== 2 && nd !== 4) return { error: say('rank', { file: arr.Q.name, shape: shape('Q') }) };
  for (const r of ['K', 'V']) {
    if (arr[r].shape.length !== nd) return { error: say('dims', { file: arr[r].name, shape: shape(r), nd, qshape: shape('Q') }) };
  }
  const [n, d] = arr.Q.shape.slice(-2);
  const layers = nd === 4 ? arr.Q.shape[0] : 1, heads = nd === 4 ? arr.Q.shape[1] : 1, kvHeads = nd === 4 ? arr.K.shape[1] : 1;
  for (const r of ['K', 'V']) {
    const s = arr[r].shape;
    if (s.at(-2) !== n || s.at(-1) !== d) return { error: say('match', { file: arr[r].name, shape: shape(r), qshape: shape('Q'), role: r }) };
    if (nd === 4 && (s[0] !== layers || s[1] !== kvHeads || kvHeads < 1 || heads % kvHeads)) {
      return { error: say('heads', { file: arr[r].name, shape: shape(r), layers, heads }) };
    }
  }
  const bad = checkSizes(n, d, limits);
  if (bad) return { error: say('file', { file: arr.Q.name, message: bad }) };
  for (const r of ['Q', 'K', 'V']) {
    const i = arr[r].data.findIndex((x) => !Number.isFinite(x));
    if (i >= 0) return { error: say('nonfinite', { file: arr[r].name, i, value: arr[r].data[i] }) };
  }
  return { tensors: { Q: arr.Q.data, K: arr.K.data, V: arr.V.data, layers, heads, kvHeads, n, d } };
}

function checkSizes(n, d, limits) {
  if (!(n >= 1 && n <= limits.maxN)) return say('n', { n, max: limits.maxN });
  if (!(d >= 1 && d <= limits.maxD)) return say('d', { d, max: limits.maxD });
  return null;
}

/** What a JSON value is, in a few words, never the value itself (a nested array would print megabytes). */
function kindOf(x) {
  if (Array.isArray(x)) return x.length === 1 ? say('list1') : say('list', { count: x.length });
  if (typeof x === 'string') return x.length <= 20 ? JSON.stringify(x) : say('string', { count: x.length });
  if (x && typeof x === 'object') return say('object1');
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
    return { error: say('notJson', { file: file.name, why: String(err.message).slice(0, 80) }) };
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return { error: say('object', { file: file.name }) };
  const out = {};
  let n = null, d = null;
  for (const key of ['q', 'k', 'v']) {
    const rows = obj[key];
    if (!Array.isArray(rows) || !rows.length) return { error: say('rows', { file: file.name, key }) };
    // a capture's 4-D (layers, heads, n, d) nesting, or a flat list: say its shape, not its numbers
    const shape = shapeAlongFirst(rows);
    if (shape.length !== 2) {
      return { error: say('nd', { file: file.name, key, nd: shape.length, shape: `${shape.join(', ')}${shape.length === 8 ? ', …' : ''}` }) };
    }
    const rd = Array.isArray(rows[0]) ? rows[0].length : -1;
    if (n === null) { n = rows.length; d = rd; }
    if (rows.length !== n) return { error: say('count', { file: file.name, key, rows: rows.length, n }) };
    const bad = checkSizes(n, d, limits);
    if (bad) return { error: say('file', { file: file.name, message: bad }) };
    const data = new Float32Array(n * d);
    for (let i = 0; i < n; i++) {
      const row = rows[i];
      if (!Array.isArray(row) || row.length !== d) return { error: say(Array.isArray(row) ? 'ragged' : 'notRow', { file: file.name, key, i, got: row?.length, d }) };
      for (let j = 0; j < d; j++) {
        const x = row[j];
        if (typeof x !== 'number' || !Number.isFinite(x)) return { error: say('number', { file: file.name, key, i, j, what: kindOf(x) }) };
        data[i * d + j] = x;
        if (!Number.isFinite(data[i * d + j])) return { error: say('float32', { file: file.name, key, i, j, value: x }) };
      }
    }
    out[key.toUpperCase()] = data;
  }
  return { tensors: { ...out, layers: 1, heads: 1, kvHeads: 1, n, d } };
}
