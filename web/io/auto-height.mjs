// auto-height.mjs: `height=auto` in an embed's link (docs/embedding.md, "Auto-height"): the page tells
// its parent how tall its content is, {type: 'attnviz:height', height: PX}, once it is drawn and after
// every change of size (a ResizeObserver on the document), so the host can give the frame that height.
// Sent to the parent only: to the origins host= names, to any origin without host= (a height is no
// secret, and the default embed answers its parent whatever its origin), to none when host= is invalid.
import { originOf } from '../state/origin.mjs';

/** Where the message may go for a host= list: ['*'] (none given), its origins, or [] (one is not an origin). */
export function heightTargets(origins) {
  if (!origins.length) return ['*'];
  const all = origins.map(originOf);
  return all.includes(null) ? [] : [...new Set(all)];
}

/**
 * Watch `win`'s document; `page.on()`: whether the state asks for it (an embed with height=auto);
 * `page.origins()`: the host= items. Returns {changed()}: call it after a change of state (height=auto
 * turned on sends the current height at once, even when nothing moved).
 */
export function watchHeight(win, page) {
  let last = null;
  function changed() {
    const parent = win.parent !== win ? win.parent : null;
    if (!parent || !page.on()) { last = null; return; }
    const height = Math.ceil(win.document.documentElement.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    for (const origin of heightTargets(page.origins())) {
      try { parent.postMessage({ type: 'attnviz:height', height }, origin); } catch { /* a closed or navigated parent */ }
    }
  }
  new win.ResizeObserver(changed).observe(win.document.documentElement);
  return { changed };
}
