// notice.mjs: the bound on what the page's notice (#notice) says. A notice is one sentence of at most
// NOTICE_MAX characters: a longer message (a path that quoted its input, a long file name) would cover
// the page, so it is cut at a word boundary with an ellipsis and its full text goes to the console.
// Pure: web/ui/notices.mjs's show, the only place a notice is shown, calls it.

export const NOTICE_MAX = 200;

/**
 * The text a notice shows for `message`: {text, cut}. `text` is at most `max` characters; when the
 * message is longer it is cut at the last space in its second half (mid-word only when there is none)
 * and ends in '…', and `cut` is true (the caller then logs the full message).
 */
export function noticeText(message, max = NOTICE_MAX) {
  const s = String(message ?? '').replace(/\s+/g, ' ').trim();
  if (s.length <= max) return { text: s, cut: false };
  const head = s.slice(0, max); // max − 1 characters are kept at most, the ellipsis is the last
  const space = head.lastIndexOf(' ', max - 1);
  const kept = (space >= max / 2 ? head.slice(0, space) : head.slice(0, max - 1)).replace(/[\s,;:([{"'“-]+$/, '');
  return { text: `${kept}…`, cut: true };
}
