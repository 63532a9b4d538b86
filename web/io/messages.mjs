// messages.mjs: the page's postMessage protocol for host pages (docs/embedding.md). A page that embeds
// the lab in an iframe talks to it with window.postMessage:
//   host → lab  {type: 'attnviz:get'}                      answered with one attnviz:snapshot
//               {type: 'attnviz:set', state: {key: value}} a partial state, merged into the current one
//               {type: 'attnviz:subscribe'} / {type: 'attnviz:unsubscribe'}
//   lab → host  {type: 'attnviz:snapshot', state, readouts, tokens}  (window.attnviz.snapshot()'s object)
//               after a get, and, while subscribed, once after each change has settled
//               {type: 'attnviz:error', message}           a set the page could not take in full
// Who is obeyed: by default the parent window, whatever its origin (an embed is placed there by its
// host); with `host=ORIGIN[,ORIGIN…]` in the embed's link, only messages from those origins, the parent
// included, each compared in its serialized form (originOf); a host= with an item that is not an origin,
// one of separators alone (host=,) or a repeated host key obeys no one (it fails closed; state.mjs writes
// those as host=none); an empty host= is the default, the parent. host= is the link's alone: a message never sets it. Anything else, and
// any malformed message, is ignored without a word; nothing here throws.

import { originOf } from '../state/origin.mjs';

const TYPES = new Set(['attnviz:get', 'attnviz:set', 'attnviz:subscribe', 'attnviz:unsubscribe']);
const MAX_KEYS = 64;
/** Keys a message may not set: they decide who may send messages, so only the embed's own link sets them. */
const LINK_ONLY = new Set(['host']);

/**
 * The state keys and values of an attnviz:set message, as link text: {pairs: [[key, text]…], refused:
 * [key…]} or null when the message is not one. Values must be strings, finite numbers or booleans;
 * other values and keys beyond MAX_KEYS are left out; keys only the link sets (host) are refused.
 */
export function setPairs(data) {
  const st = data?.state;
  if (!st || typeof st !== 'object' || Array.isArray(st)) return null;
  const pairs = [], refused = [];
  for (const [k, v] of Object.entries(st).slice(0, MAX_KEYS)) {
    if (LINK_ONLY.has(k)) refused.push(k);
    else if (typeof v === 'string') pairs.push([k, v.slice(0, 1000)]);
    else if (typeof v === 'number' && Number.isFinite(v)) pairs.push([k, String(v)]);
    else if (typeof v === 'boolean') pairs.push([k, v ? '1' : '0']);
  }
  return { pairs, refused };
}

/**
 * Whether an event's sender may drive the page: the parent window when `origins` (the host= items) is
 * empty; else a sender whose origin is one of them, serialized; no one when an item is not an origin.
 */
export function senderAllowed(event, { parent, origins }) {
  if (origins.length) {
    const allowed = origins.map(originOf);
    return !allowed.includes(null) && allowed.includes(event.origin);
  }
  return !!parent && event.source === parent;
}

/**
 * Listen for host messages on `win` (the page's window). `page`:
 *   snapshot()        a promise of the settled snapshot
 *   set(pairs)        merge link pairs into the state; returns the problems (sentences)
 *   origins()         the origins of the state's `host=` key (empty: the parent window only)
 * Returns {changed()}: call it when the state changed, so subscribers get the settled snapshot.
 */
export function listenForHosts(win, page) {
  const subscribers = new Map(); // source window → origin
  let lastSent = null;
  let pending = false;

  const send = (target, origin, message) => {
    try { target.postMessage(message, origin === 'null' ? '*' : origin); } catch { /* a closed or navigated window */ }
  };
  const snapshotMessage = (s) => ({ type: 'attnviz:snapshot', state: s.state, readouts: s.readouts, tokens: s.tokens });

  win.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || typeof data !== 'object' || !TYPES.has(data.type)) return;
    const parent = win.parent !== win ? win.parent : null;
    if (!event.source || !senderAllowed(event, { parent, origins: page.origins() })) return;
    const reply = (message) => send(event.source, event.origin, message);
    if (data.type === 'attnviz:get') {
      page.snapshot().then((s) => reply(snapshotMessage(s)), (err) => reply({ type: 'attnviz:error', message: String(err?.message ?? err) }));
    } else if (data.type === 'attnviz:set') {
      const p = setPairs(data);
      if (!p) return;
      const problems = [...p.refused.map((k) => `${k}: set only by the embed's link, never by a message`), ...(p.pairs.length ? page.set(p.pairs) : [])];
      if (problems.length) reply({ type: 'attnviz:error', message: problems.join('; ') });
    } else if (data.type === 'attnviz:subscribe') {
      subscribers.set(event.source, event.origin);
      lastSent = null;
      changed();
    } else {
      subscribers.delete(event.source);
    }
  });

  /**
   * After a change: once the view has settled, each subscriber gets the snapshot (once per state). A
   * subscriber the link no longer lets in (host= changed by a navigation of the frame) is dropped first.
   */
  function changed() {
    if (!subscribers.size || pending) return;
    pending = true;
    page.snapshot().then((s) => {
      pending = false;
      const parent = win.parent !== win ? win.parent : null, origins = page.origins();
      for (const [target, origin] of subscribers) if (!senderAllowed({ source: target, origin }, { parent, origins })) subscribers.delete(target);
      const key = JSON.stringify(s.state);
      if (key === lastSent) return;
      lastSent = key;
      for (const [target, origin] of subscribers) send(target, origin, snapshotMessage(s));
    }, () => { pending = false; });
  }
  return { changed };
}
