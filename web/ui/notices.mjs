// notices.mjs: the page's notice, one sentence at a time (web/state/notice.mjs cuts it to NOTICE_MAX).
import { noticeText, NOTICE_MAX } from '../state/notice.mjs';

/**
 * The notice in `el`. show(text, source): say it for a while; `source` ('qkv', 'model'): a failure of the
 * reader's files, which that source's next success takes away (clear), so no old failure stays beside a good load.
 */
export function createNotices(el) {
  let source = null, timer = 0;
  function show(text, from = null) {
    // one sentence of at most NOTICE_MAX characters, whatever the path: a longer one is cut, in full in the console
    const { text: shown, cut } = noticeText(text);
    if (cut) console.warn(`attnviz: the notice was cut to ${NOTICE_MAX} characters; in full: ${text}`);
    el.textContent = shown;   // data, never markup
    el.hidden = false;
    source = from;
    clearTimeout(timer);
    timer = setTimeout(() => { el.hidden = true; source = null; }, 8000);
  }
  /** A success of `from`: its failure notice, if that is the one shown, goes. */
  function clear(from) {
    if (source !== from) return;
    clearTimeout(timer);
    el.hidden = true;
    source = null;
  }
  return { show, clear };
}

/** A worker's error event as one sentence's end: "memory access out of bounds", not "Uncaught RuntimeError: …". */
export const workerError = (e) => String(e?.message || 'unknown error').replace(/^Uncaught\s+/, '').replace(/^\w*Error:\s*/, '');
