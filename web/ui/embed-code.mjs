// embed-code.mjs: the header's "embed" menu (issue 32, item 5; docs/embedding.md, "Copy embed code"): the
// iframe and the <attn-viz> snippets for the current view (web/io/embed-code.mjs writes them), with the
// figure and the controls the reader picks, each copyable (the clipboard, or the text selected when the
// clipboard is refused); and in an embed (embed=VIEW) the small "open in attnviz" link to the full lab at
// the same state.
import { figurePairs, openHash, iframeSnippet, elementSnippet, IFRAME_VIEWS, ELEMENT_VIEWS } from '../io/embed-code.mjs';
import { labelOf } from './controls.mjs';
import { variantName } from '../render/variant-name.mjs';
import { t, getLang, LANG_TAGS } from '../i18n/i18n.mjs';

const CONTROL_GROUPS = ['input', 'variant', 'readout'];

function el(tag, attrs = {}, text = '') {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

/** The address of the page without its hash: where the iframe points and embed.js sits beside. */
const labAddress = () => `${location.origin}${location.pathname}${location.search}`;

/**
 * `menu`: the header's <details>; `open`: the embed's "open in attnviz" link; `page`: main.mjs's page
 * (st, schema, viewOf). A panel (web/ui/panel.mjs): sync(st) rewrites what the state changed.
 */
export function mountEmbedCode(menu, open, page) {
  // a page opened as a file (the single file) has no address a post could point at, nor embed.js beside it
  if (location.protocol === 'file:') menu.hidden = true;
  const box = el('div', { class: 'export-list embed-code', role: 'group' });
  const viewLabel = el('label', { for: 'embed-view' });
  const view = el('select', { id: 'embed-view' });
  for (const v of IFRAME_VIEWS) view.append(el('option', { value: v }));
  const viewRow = el('p', { class: 'embed-row' });
  viewRow.append(viewLabel, ' ', view);
  const controls = el('fieldset', { class: 'embed-controls' });
  const legend = el('legend');
  const checks = el('div', { class: 'embed-checks' });
  controls.append(legend, checks);
  const block = (id) => {
    const head = el('label', { for: `embed-${id}`, class: 'export-h' });
    const text = el('textarea', { id: `embed-${id}`, class: 'embed-snippet', rows: id === 'element' ? '4' : '3', readonly: '', spellcheck: 'false' });
    const copy = el('button', { type: 'button', 'data-copy': id });
    const wrap = el('div', { class: 'embed-block' });
    wrap.append(head, text, copy);
    return { wrap, head, text, copy };
  };
  const frame = block('iframe'), element = block('element');
  const note = el('p', { class: 'note export-note', role: 'status', 'aria-live': 'polite' });
  box.append(viewRow, controls, frame.wrap, element.wrap, note);
  menu.append(box);

  let wordsIn = null;
  let chosen = new Set(); // the controls the reader ticked (kept while the menu is closed)
  let shownKeys = '';

  function words() {
    if (wordsIn === getLang()) return;
    wordsIn = getLang();
    box.setAttribute('aria-label', t('header.embed'));
    viewLabel.textContent = t('embedCode.view');
    for (const o of view.options) o.textContent = t(`embedCode.view.${o.value}`);
    legend.textContent = t('embedCode.controls');
    frame.head.textContent = t('embedCode.iframe');
    element.head.textContent = t('embedCode.element');
    frame.copy.textContent = element.copy.textContent = t('embedCode.copy');
    frame.copy.setAttribute('aria-label', t('embedCode.copyIframe'));
    element.copy.setAttribute('aria-label', t('embedCode.copyElement'));
    open.textContent = t('embed.open');
    open.title = t('embed.open.title');
    shownKeys = ''; // the checkboxes' labels too
  }

  /** One checkbox per control the lab shows now (the keys an embed's controls= may name). */
  function syncChecks(st) {
    const { schema } = page;
    const keys = schema.SCHEMA.filter((e) => CONTROL_GROUPS.includes(e.group) && schema.shown(e, { ...st, embed: '', hide: '' })).map((e) => e.name);
    if (keys.join() === shownKeys) return;
    shownKeys = keys.join();
    checks.replaceChildren(...keys.map((k) => {
      const box = el('input', { type: 'checkbox', id: `embed-ctl-${k}`, value: k });
      box.checked = chosen.has(k);
      const label = el('label', { for: `embed-ctl-${k}` });
      label.append(box, ' ', labelOf(schema.BY_NAME[k]));
      return label;
    }));
  }

  function snippets() {
    const st = page.st, { schema } = page;
    syncChecks(st);
    const own = st.src !== 'synthetic';
    const v = view.value || 'heatmap';
    const picked = [...checks.querySelectorAll('input:checked')].map((b) => b.value);
    const pairs = figurePairs(schema, st);
    const label = t('embedCode.title', { variant: variantName(page.viewOf(st).label) });
    const lab = labAddress();
    const f = own ? '' : iframeSnippet({ lab, pairs, lang: st.lang, view: v, controls: picked, title: label });
    const e = own || !ELEMENT_VIEWS.includes(v) ? '' : elementSnippet({ lab, pairs, langTag: st.lang !== 'en' ? LANG_TAGS[st.lang] : null, view: v, controls: picked, label });
    if (frame.text.value !== f) frame.text.value = f;
    if (element.text.value !== e) element.text.value = e;
    frame.copy.disabled = !f;
    element.copy.disabled = !e;
    note.textContent = own ? t('embedCode.ownInputs') : !e ? t('embedCode.noSweep') : '';
  }

  async function copy(which) {
    const area = which === 'iframe' ? frame.text : element.text;
    try {
      await navigator.clipboard.writeText(area.value);
      note.textContent = t('embedCode.copied');
    } catch {
      // no clipboard (an insecure origin, a refused permission): the text selected, for the reader's own copy
      area.focus();
      area.select();
      note.textContent = t('embedCode.select');
    }
  }

  box.addEventListener('change', (e) => {
    if (e.target.matches('.embed-checks input')) { if (e.target.checked) chosen.add(e.target.value); else chosen.delete(e.target.value); }
    snippets();
  });
  box.addEventListener('click', (e) => { const b = e.target.closest('button[data-copy]'); if (b && !b.disabled) copy(b.dataset.copy); });
  menu.addEventListener('toggle', () => { if (menu.open) { words(); snippets(); } });
  menu.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.open) { menu.open = false; menu.querySelector('summary').focus(); } });
  document.addEventListener('click', (e) => { if (menu.open && !menu.contains(e.target)) menu.open = false; });

  return {
    name: 'embed-code',
    sync() { words(); },
    // once the state has settled (never during a drag: the snippets' keys take a few parses of the link)
    update(st) {
      if (menu.open) snippets();
      // in an embed: the full lab at the same state, in a new tab (the page's own keys left out)
      if (st.embed) {
        const href = `${labAddress()}#${openHash(page.schema, st)}`;
        if (open.getAttribute('href') !== href) open.setAttribute('href', href);
      }
    },
    draw() {},
    snapshot: () => null,
    dispose() {},
  };
}
