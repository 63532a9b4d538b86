// origin.mjs: one `host=` item as an origin, for the link's host= key (web/state/state.mjs) and the
// host-message rules that compare it with event.origin (web/io/messages.mjs). Pure; no DOM.

/**
 * The serialized origin of one `host=` item (as `event.origin` has it: `new URL(x).origin`), or null
 * when the item is not an http(s) origin: scheme http or https (any case), `://`, a host, an optional
 * port and an optional trailing `/`; no user, path, query or fragment, no whitespace or control characters.
 * `HTTP://127.0.0.1:8105` → `http://127.0.0.1:8105`, `https://a.example:443/` → `https://a.example`.
 */
export function originOf(text) {
  const s = String(text);
  if (!/^https?:\/\//i.test(s) || /[\s\x00-\x1f\x7f]/.test(s)) return null;
  let u;
  try { u = new URL(s); } catch { return null; }
  // anything after the host and port (a path, '?', '#', a user) makes href more than the origin and '/'
  return u.href === `${u.origin}/` ? u.origin : null;
}
