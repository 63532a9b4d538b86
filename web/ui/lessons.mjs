// lessons.mjs: the "Lessons" menu in the header and the lesson panel above the controls (the presets of
// web/state/presets.mjs). The menu is a list of plain links (`#preset=NAME`), so a lesson opens by keyboard,
// touch, a middle click into a new tab, or a link pasted anywhere; main.mjs reads the hash. Every lesson
// link carries the reader's presentation mode (projector=1), so changing lessons never switches it off.
// The panel shows the open lesson's place in the course ("3 / 23", from PRESETS' order), title, caption
// and sources (each seed by its own title, section and quoted sentence, with an English gloss in English;
// each paper by authors, year and arXiv id: citations.mjs citeParts), with "previous", "reset" (the
// preset's state again), "next" and "close";
// ←/→ and PageUp/PageDown step lessons (presenter clickers) unless a control that takes those keys has
// focus. A lesson with a `play` has a ▶ that steps its knob as a drag would (onChange's 'dragstart',
// 'input' per value, 'change' when it stops): it stops at the end, on ❚❚, on the reader's next pointer press
// or key, on a lesson change, and when the knob is set by anyone else; with prefers-reduced-motion each
// press steps one value, with no animation. A lesson with a `predict` asks first ("predict, then reveal"):
// the reader picks a choice, the page applies the lesson's reveal keys, and once the view has settled says
// whether the guess was right, with an explanation that quotes the live readouts (fillPrediction). The
// evidence strip under the caption shows each readout row the lesson names, as the table shows it (its
// label and value, copied from the table after each draw: never a second computation), and, for a lesson
// with `compare`, the same row for the other state, computed by `compare` (main.mjs: the page's library,
// in the background worker); the cost line is shown there too when the lesson names it. What carries the
// claim is outlined (class `hl`): the strip's items and the panels the lesson names (their data-hl); the
// table's rows and the cost line it stands in for are marked `cited`. The panels are moved beside the
// caption where the page scrolls (ui/lesson-stage.mjs). A lesson's own words are English in presets.mjs and
// the catalogue's `preset.NAME.*` in another language (words(), docs/i18n.md); the panel and the menu
// redraw them when the language changes.
import { PRESETS, CHAPTERS, presetOf, stepPreset, chapterOf, playValues } from '../state/presets.mjs';
import { t, tOwn, getLang, LANGS } from '../i18n/i18n.mjs';
import { NOTHING } from './panel.mjs';
import { fmt } from '../render/format.mjs';
import { citeParts } from '../state/citations.mjs';
import { READOUT_ROWS } from '../render/readouts.mjs';
import { mountStage, revealEvidence } from './lesson-stage.mjs';

/**
 * The evidence a lesson on the real model cites from the panel "what the model loses" (web/ui/loss-panel.mjs):
 * highlight key → the panel's element whose label and text the strip copies (`label`, `value`; `original`: the
 * original model's cell, shown after the swapped one). Copied after each change of the panel, never recomputed.
 */
export const LOSES_EVIDENCE = {
  ls_loss: { label: '#loses tr[data-measure="loss"] th', value: '#loses tr[data-measure="loss"] td[data-v="swapped"]', original: '#loses tr[data-measure="loss"] td[data-v="original"]' },
  ls_kl: { label: '#loses tr[data-measure="kl"] th', value: '#loses tr[data-measure="kl"] td[data-v="swapped"]' },
  ls_top1: { label: '#loses tr[data-measure="top1"] th', value: '#loses tr[data-measure="top1"] td[data-v="swapped"]' },
  ls_cont: { label: '#loses .ls-cont[data-which="swapped"] .ls-cont-h', value: '#loses .ls-cont[data-which="swapped"] .ls-cont-text', cited: '#loses .ls-conts' },
  ls_sens: { label: null, each: '#loses .ls-cell.ls-layer', cited: '#loses .ls-sens' }, // Δ loss of each layer swapped alone
  ls_distill: { label: null, value: '#loses .ls-dist-note', cited: '#loses .ls-dist-note' },
};

/** Lesson p's own words in the page's language: `which` ('title', 'caption', 'predict.question',
 * 'predict.choice.I', 'predict.explanation', 'compare'), the English from presets.mjs. */
export function words(p, which) {
  const english = which === 'compare' ? p.compare.label : which.startsWith('predict.choice.') ? p.predict.choices[Number(which.slice(15))]
    : which.startsWith('predict.') ? p.predict[which.slice(8)] : p[which];
  return tOwn(`preset.${p.name}.${which}`, english);
}

/** Time between two values of a lesson's play: long enough to read each frame, and for the link to follow. */
const PLAY_MS = 450;

/**
 * Build the menu into `menu` (a <details> with a <summary>) and wire the panel `panel` (index.html's
 * #lesson). `onClose()` is called by the panel's close button; `live()` is a promise of what the page shows
 * once it has settled, {readouts, state (snapshot()'s), cost (the cost line)}, for the predictions'
 * explanations; `onChange(key, value, phase)` sets the state (main.mjs's), `value(key)` reads it and
 * `isInt(key)` says whether a key takes integers (the play button); `compare(st, key, value)`: a promise of
 * the readouts of state `st` with `key` set to `value` ({r, ctx} as the table's source gives them), or of
 * null; `dragging()`: whether the reader drags (the page never scrolls then). Returns {show(name|null)}.
 */
export function mountLessons(menu, panel, { onClose, live = null, onChange, value, isInt, compare = async () => null, dragging = () => false }) {
  let modes = ''; // the link keys of the reader's presentation ('&projector=1', '&lang=zh'), kept on every lesson link
  const href = (name) => `#preset=${encodeURIComponent(name)}${modes}`;
  // the menu: the chapters, each a heading over its lessons, numbered through the course
  const list = document.createElement('div');
  list.className = 'lesson-list';
  for (const [ci, c] of CHAPTERS.entries()) {
    const head = document.createElement('p');
    head.className = 'lesson-chapter';
    head.id = `lesson-chapter-${ci + 1}`;
    head.textContent = `${ci + 1}. ${t(`chapter.${ci + 1}`)}`;
    const ol = document.createElement('ol');
    ol.setAttribute('aria-labelledby', head.id);
    for (const name of c.lessons) {
      const p = presetOf(name);
      const li = document.createElement('li');
      li.value = PRESETS.indexOf(p) + 1;
      const a = document.createElement('a');
      a.href = href(p.name);
      a.textContent = words(p, 'title');
      a.dataset.preset = p.name;
      a.addEventListener('click', () => { menu.open = false; });
      li.append(a);
      ol.append(li);
    }
    list.append(head, ol);
  }
  menu.append(list);
  // the open menu closes on Escape and on a click elsewhere
  menu.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.open) { menu.open = false; menu.querySelector('summary').focus(); } });
  document.addEventListener('click', (e) => { if (menu.open && !menu.contains(e.target)) menu.open = false; });

  const el = (sel) => panel.querySelector(sel);
  const stage = mountStage(document.getElementById('stage'), panel);
  let mode = {};        // {projector, embed}: where the stage may be used
  let revealDue = false; // bring the evidence into the window at the next settled state
  let versus = null;    // {key, value, label, of (the request compared), r, ctx}: the comparison shown
  el('.lesson-close').addEventListener('click', () => onClose());
  let shown;
  let spoken = null; // the language the panel's words are in
  // "predict, then reveal": a question with its choices under the caption, then the verdict
  const ask = document.createElement('div');
  ask.className = 'lesson-predict';
  ask.setAttribute('role', 'group');
  ask.hidden = true;
  const question = document.createElement('p'), choices = document.createElement('div'), verdict = document.createElement('p');
  question.className = 'predict-q';
  question.id = 'predict-q';
  ask.setAttribute('aria-labelledby', question.id);
  choices.className = 'predict-choices';
  verdict.className = 'predict-verdict';
  verdict.setAttribute('aria-live', 'polite');
  ask.append(question, choices, verdict);
  el('.lesson-evidence').after(ask); // the live evidence first, under the caption
  // a lesson on the real model (`model` in presets.mjs) says what to give until a model is loaded: the files'
  // button (the model panel's own input) and the drop hint; the panel's changes redraw the strip
  const needs = document.createElement('p'), needsText = document.createElement('span'), needsPick = document.createElement('label');
  needs.className = 'lesson-model';
  needs.dataset.hl = 'model';
  needs.hidden = true;
  needsPick.htmlFor = 'model-files';
  needsPick.className = 'file-button';
  needs.append(needsText, ' ', needsPick);
  el('.lesson-caption').after(needs);
  const losesBox = document.getElementById('loses');
  if (losesBox) new MutationObserver(() => { if (presetOf(shown)?.model) draw(); }).observe(losesBox, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['hidden'] });
  let asked = 0; // the prediction in flight: a newer question or lesson drops an older answer

  /** Ask lesson p's question (or hide the block for a lesson without one). */
  function pose(p) {
    asked++;
    revealed = null;
    ask.hidden = !p?.predict;
    if (!p?.predict) return;
    const q = p.predict;
    question.replaceChildren(Object.assign(document.createElement('strong'), { textContent: t('lesson.predict') }), words(p, 'predict.question'));
    choices.replaceChildren(...q.choices.map((_, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'predict-choice';
      b.dataset.choice = String(i);
      b.textContent = words(p, `predict.choice.${i}`);
      b.addEventListener('click', () => reveal(p, i));
      return b;
    }));
    verdict.textContent = '';
    delete verdict.dataset.right; // set once the revealed numbers are in
  }

  /** The reader picked choice i of lesson p: apply the reveal keys, then say right or wrong, with the numbers. */
  async function reveal(p, i) {
    const id = ++asked, q = p.predict;
    for (const b of choices.querySelectorAll('button')) {
      b.disabled = true;
      b.classList.toggle('picked', Number(b.dataset.choice) === i);
      b.classList.toggle('right', Number(b.dataset.choice) === q.answer);
    }
    const right = i === q.answer;
    const head = right ? t('lesson.right') : t('lesson.wrong', { answer: words(p, `predict.choice.${q.answer}`) });
    verdict.textContent = `${head}${t('lesson.showing')}`;
    delete verdict.dataset.right;
    // the comparison is the lesson's own state against the reveal, whatever the reader (or ▶) changed since:
    // the explanations name both ("four times the features")
    await go(href(p.name));
    if (id !== asked) return;
    const before = live ? await live() : null;
    if (id !== asked) return;
    const pairs = Object.entries(q.reveal).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
    await go(`${href(p.name)}&${pairs}`); // the snapshot is of the reveal
    if (id !== asked) return;
    const after = live ? await live() : null;
    if (id !== asked) return;
    verdict.textContent = head + (after ? fillPrediction(words(p, 'predict.explanation'), after, before) : '');
    verdict.dataset.right = String(right);
    revealed = { name: p.name, keys: Object.fromEntries(Object.entries(q.reveal).map(([k, v]) => [k, String(v)])) };
  }

  /** Open link `hash` and wait until the page has read it (its hashchange handler ran). */
  function go(hash) {
    if (location.hash === `#${hash}`) return Promise.resolve(); // already read: no hashchange will come
    const applied = new Promise((res) => addEventListener('hashchange', () => setTimeout(res, 0), { once: true }));
    location.hash = hash;
    return applied;
  }
  let revealed = null; // the answered prediction's lesson and reveal keys: its verdict holds while they do
  // a clicker's keys step lessons, except where a control of the page takes them (a slider, a picker, a
  // field, a heatmap's cell cursor, a dialog)
  const STEP = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
  const TAKES_KEYS = 'input, select, textarea, canvas, [contenteditable], [role="slider"], [role="listbox"], [role="dialog"], [role="menu"], [role="grid"]';
  el('.lesson-reset').addEventListener('click', () => pose(presetOf(shown))); // the lesson's state again: ask again
  /** The lessons a key steps (1, −1), or 0 when it is not a clicker's or a control takes it. */
  const stepOf = (e) => {
    const step = STEP[e.key];
    if (!step || !shown || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return 0;
    return document.activeElement?.closest?.(TAKES_KEYS) ? 0 : step;
  };
  document.addEventListener('keydown', (e) => {
    const step = stepOf(e);
    if (!step) return;
    e.preventDefault();
    location.hash = href(stepPreset(shown, step).name);
  });

  /** Rewrite every lesson link for the reader's modes (the menu, previous, reset, next). */
  function relink() {
    for (const a of list.querySelectorAll('a')) a.href = href(a.dataset.preset);
    for (const cls of ['lesson-prev', 'lesson-reset', 'lesson-next']) { const a = el(`.${cls}`); if (a.dataset.preset) a.href = href(a.dataset.preset); }
  }

  // --- play: a lesson's knob stepped as a drag would step it ---
  const button = el('.lesson-play');
  const reduced = matchMedia('(prefers-reduced-motion: reduce)');
  let playing = null; // {key, values, i, set (the last value set), timer}
  let paused = null;  // {lesson, key, i, set}: a play paused part-way, resumed by the next ▶ if the knob is still there
  /** The lesson's play values, as the schema takes them (integers rounded, repeats dropped). */
  function valuesOf(play) {
    const v = playValues(play).map((x) => (isInt(play.key) ? Math.round(x) : x));
    return v.filter((x, i) => i === 0 || x !== v[i - 1]);
  }
  /** One step on from the knob's value now (reduced motion): the first value past it, or the start again at the end. */
  function nextIndex(values) {
    const now = Number(value(presetOf(shown).play.key)), up = values[values.length - 1] >= values[0];
    const i = values.findIndex((x) => (up ? x > now + 1e-9 : x < now - 1e-9));
    return i < 0 ? 0 : i;
  }
  function label() {
    const play = presetOf(shown)?.play;
    button.parentElement.hidden = !play;
    if (!play) return;
    // the knob by its link key in English (p, m, decay: short, and the link's), by its control's label
    // in another language (聚焦幂次 p, 衰减 γ), where an English key would be a word left untranslated
    const key = getLang() === LANGS[0] ? play.key : t(`control.${play.key}`);
    const range = t('lessons.range', { key, from: play.from, to: play.to });
    const resumable = paused?.lesson === shown && value(play.key) === paused.set;
    button.textContent = playing ? t('lesson.pause', { key, value: playing.set }) : reduced.matches ? t('lesson.step', { key, range })
      : resumable ? t('lesson.resume', { key, value: paused.set, to: play.to }) : t('lesson.play', { range });
    button.setAttribute('aria-pressed', String(!!playing));
    button.title = t(reduced.matches ? 'lesson.play.titleReduced' : 'lesson.play.title');
  }
  function stop() {
    if (!playing) return;
    clearTimeout(playing.timer);
    const p = playing;
    paused = p.i < p.values.length ? { lesson: shown, key: p.key, i: p.i, set: p.set } : null;
    playing = null;
    onChange(null, null, 'change'); // released: the accurate spectrum, the sweep, the link at once
    label();
  }
  function tick() {
    const p = playing;
    // the knob set by anyone else (a link, a host page) ends the play where they put it
    if (p.set !== null && value(p.key) !== p.set) { stop(); return; }
    p.set = p.values[p.i];
    onChange(p.key, p.set, 'input');
    p.i += 1;
    label();
    if (p.i >= p.values.length) { p.timer = setTimeout(stop, PLAY_MS); return; }
    p.timer = setTimeout(tick, PLAY_MS);
  }
  button.addEventListener('click', () => {
    const play = presetOf(shown)?.play;
    if (!play) return;
    if (playing) { stop(); return; }
    const values = valuesOf(play);
    if (reduced.matches) { onChange(play.key, values[nextIndex(values)], 'change'); label(); return; }
    // a play starts at the beginning, unless this one was paused part-way and the knob is where it stopped
    const resume = paused && paused.lesson === shown && paused.key === play.key && value(play.key) === paused.set;
    playing = { key: play.key, values, i: resume ? paused.i : 0, set: null, timer: 0 };
    paused = null;
    onChange(play.key, null, 'dragstart');
    tick();
  });
  // the reader's own input stops the play (the button's own press is its click's)
  // (a clicker's step or a lesson link is left to show(): stopping here would release the drag, and the commit that follows
  // would write this lesson's link over the next one's before its hashchange is read)
  const toLesson = (e) => (e.type === 'keydown' ? !!stepOf(e) : !!e.target.closest?.('a[href^="#preset="]'));
  const interrupt = (e) => { if (playing && e.target !== button && !toLesson(e)) stop(); };
  document.addEventListener('pointerdown', interrupt, true);
  document.addEventListener('keydown', interrupt, true);
  document.addEventListener('wheel', interrupt, { capture: true, passive: true }); // a wheel over a slider moves it
  reduced.addEventListener?.('change', () => { stop(); label(); });

  /** Show lesson `name` (or hide the panel for null) and outline what it highlights; `again`: redraw the
   * lesson shown (its words in a new language). */
  function show(name, again = false) {
    if (name === shown && !again) return;
    stop();
    shown = name;
    const p = presetOf(name);
    for (const x of document.querySelectorAll('.hl, .cited')) x.classList.remove('hl', 'cited');
    versus = null;
    for (const a of list.querySelectorAll('a')) {
      if (a.dataset.preset === name) a.setAttribute('aria-current', 'true'); else a.removeAttribute('aria-current');
    }
    panel.hidden = !p;
    stage.arrange(p ? p.highlight : null, mode);
    if (!p) { el('.lesson-evidence').replaceChildren(); pose(null); return; }
    el('.lesson-num').textContent = t('lesson.num', { i: PRESETS.indexOf(p) + 1, total: PRESETS.length });
    const ch = chapterOf(p.name);
    el('.lesson-chapter-name').textContent = ch ? t('lesson.chapter', { i: ch.index + 1, total: CHAPTERS.length, title: t(`chapter.${ch.index + 1}`) }) : '';
    el('.lesson-title').textContent = words(p, 'title');
    needsPick.textContent = t('model.choose');
    el('.lesson-caption').textContent = words(p, 'caption');
    pose(p);
    el('.lesson-source').replaceChildren(...p.sources.flatMap((c, i) => (i ? [t('cite.join'), cite(c)] : [cite(c)])));
    const prev = stepPreset(p.name, -1), next = stepPreset(p.name, 1);
    el('.lesson-prev').dataset.preset = prev.name;
    el('.lesson-prev').textContent = t('lesson.prev', { title: words(prev, 'title') });
    el('.lesson-reset').dataset.preset = p.name;
    el('.lesson-next').dataset.preset = next.name;
    el('.lesson-next').textContent = t('lesson.next', { title: words(next, 'title') });
    relink();
    label();
    // the strip: one item per readout row (and the cost line) the lesson names, outlined in its place
    const strip = el('.lesson-evidence');
    strip.replaceChildren();
    for (const key of p.highlight) {
      const row = READOUT_ROWS.find((r) => r.id === key);
      const ls = LOSES_EVIDENCE[key];
      if (row || key === 'cost' || ls) {
        const li = document.createElement('li');
        li.className = 'hl';
        if (row) li.dataset.readout = key; else li.dataset.hl = key;
        const name = document.createElement('span'), number = document.createElement('b'), other = document.createElement('span');
        name.className = 'ev-label'; number.className = 'ev-value'; other.className = 'ev-compare';
        li.append(name, ' ', number, other);
        strip.append(li);
      }
      const sel = row ? `#readout-table [data-readout="${key}"]` : key === 'cost' ? '#cost' : ls ? (ls.cited ?? '#loses .ls-measures') : `[data-hl="${key}"]`;
      for (const x of document.querySelectorAll(sel)) x.classList.add(row || key === 'cost' || ls ? 'cited' : 'hl');
    }
    strip.hidden = !strip.children.length;
    needs.hidden = !p.model;
    // a panel that folds (the single-row view) is open on the lessons that cite it, folded on the others
    for (const x of document.querySelectorAll('details[data-hl]')) x.open = p.highlight.includes(x.dataset.hl);
    draw();
    revealDue = true; // once the lesson's state has settled (update), its figures have their sizes
  }

  /** The strip's values: the table's text as it stands (drawn before this panel), and the comparison's. */
  function draw() {
    if (!shown) return;
    const p = presetOf(shown);
    // a lesson on the real model: what to give while none is loaded (the panel is hidden until then)
    const loaded = !document.getElementById('loses')?.hidden;
    if (p?.model) {
      const say = t(loaded ? 'lesson.model.loaded' : 'lesson.model.needed');
      if (needsText.textContent !== say) needsText.textContent = say;
      needsPick.hidden = loaded;
      needs.classList.toggle('hl', !loaded);
    }
    for (const li of el('.lesson-evidence').children) {
      const key = li.dataset.readout;
      const [name, , number, other] = li.childNodes;
      let l, v, c = '';
      const ls = LOSES_EVIDENCE[li.dataset.hl];
      if (ls) {
        // the panel's own words and digits; '—' until a model is loaded and the panel has measured
        const text = (sel) => (sel && loaded ? document.querySelector(sel)?.textContent ?? '' : '');
        l = ls.label ? text(ls.label) || t(`lesson.ev.${li.dataset.hl}`) : t(`lesson.ev.${li.dataset.hl}`);
        v = (ls.each ? (loaded ? [...document.querySelectorAll(ls.each)].map((x) => `L${x.dataset.layer} ${x.textContent}`).join(' · ') : '') : text(ls.value)) || '—';
        if (ls.original && text(ls.original)) c = t('lesson.ev.original', { value: text(ls.original) });
        li.hidden = false;
      } else if (key) {
        const tr = document.querySelector(`#readout-table tr[data-readout="${key}"]`);
        l = tr.querySelector('td.l > span').textContent;
        v = tr.querySelector('td.v').textContent;
        const row = READOUT_ROWS.find((r) => r.id === key);
        if (versus?.r) c = t('lessons.compare', { label: words(presetOf(shown), 'compare'), value: row.text(versus.r, versus.ctx) });
      } else {
        l = t('lesson.cost');
        v = document.getElementById('cost').textContent;
      }
      if (name.textContent !== l) name.textContent = l;
      if (number.textContent !== v) number.textContent = v;
      if (other.textContent !== c) {
        other.textContent = c;
        other.title = c && !ls ? t('lesson.compared', { label: words(presetOf(shown), 'compare') }) : ''; // (a loses item's is the original model's cell)
      }
    }
  }

  /** The lesson's comparison (`compare` in presets.mjs) for the settled state: computed once per state. */
  function update(st) {
    if (revealDue) { revealDue = false; requestAnimationFrame(() => revealEvidence(dragging)); }
    const p = presetOf(shown);
    const want = p?.compare && !st.mech ? p.compare : null;
    if (!want) { if (versus) { versus = null; draw(); } return; }
    const of = JSON.stringify([st, want]);
    if (versus?.of === of) return;
    const asked = versus = { ...want, of };
    draw();
    // from the background worker; a newer state or lesson drops an older answer
    compare(st, want.key, want.value).then((res) => { if (versus === asked && res) { Object.assign(asked, res); draw(); } });
  }

  return {
    ...NOTHING, name: 'lessons', show, draw, update, // a Panel (ui/panel.mjs): main.mjs shows the open lesson
    sync(st) {
      const m = `${st.projector ? '&projector=1' : ''}${st.lang !== 'en' ? `&lang=${st.lang}` : ''}`;
      if (m !== modes) { modes = m; relink(); }
      if (st.lang !== spoken) { // the panel's words and the lessons' own in the new language
        spoken = st.lang;
        for (const [ci, h] of [...list.querySelectorAll('.lesson-chapter')].entries()) h.textContent = `${ci + 1}. ${t(`chapter.${ci + 1}`)}`;
        for (const a of list.querySelectorAll('a')) a.textContent = words(presetOf(a.dataset.preset), 'title');
        if (shown !== undefined) show(shown, true); // an answered question is asked again, in the new words
      }
      // a verdict speaks of the revealed state: once the reader leaves it (Back, a knob), ask again
      if (revealed && (revealed.name !== shown || Object.entries(revealed.keys).some(([k, v]) => String(st[k]) !== v))) {
        revealed = null;
        if (shown) pose(presetOf(shown));
      }
      if (mode.projector !== !!st.projector || mode.embed !== !!st.embed) {
        mode = { projector: !!st.projector, embed: !!st.embed };
        stage.arrange(presetOf(shown)?.highlight ?? null, mode);
        requestAnimationFrame(() => revealEvidence(dragging));
      }
    },
  };
}

/** One source as the panel shows it, in the page's language (citations.mjs citeParts). */
function cite(c) {
  const out = document.createElement('span');
  out.className = 'cite';
  for (const part of citeParts(c, getLang())) {
    if (!part.cls) { out.append(part.text); continue; }
    const x = document.createElement(part.href ? 'a' : 'span');
    x.className = part.cls;
    x.textContent = part.text;
    if (part.lang) x.lang = part.lang;
    if (part.title) x.title = part.title;
    if (part.href) Object.assign(x, { href: part.href, rel: 'noopener', target: '_blank' });
    out.append(x);
  }
  return out;
}

/**
 * A prediction's explanation with its placeholders filled from what the page shows (`now`, and `before`
 * the reveal: {readouts, state, cost}): {KEY} a readout, {state.KEY} a state key, {before.…} the same
 * before, {cost} the cost line's verdict ("linear is 4× cheaper"). Numbers as the readout table writes
 * them (whole numbers as they are, others to 3 significant digits); an unknown key stays visible as '—'.
 */
export function fillPrediction(template, now, before = null) {
  const value = (src, path) => {
    if (!src) return '—';
    if (path === 'cost') return src.cost?.match(/[(（]([^()（）]*)[)）]$/)?.[1] ?? src.cost ?? '—'; // （…） in Chinese
    const [from, key] = path.startsWith('state.') ? [src.state, path.slice(6)] : [src.readouts, path];
    const v = from?.[key];
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : fmt(v);
    return v === undefined || v === null ? '—' : String(v);
  };
  return template.replace(/\{([\w.-]+)\}/g, (_, path) => (path.startsWith('before.') ? value(before, path.slice(7)) : value(now, path)));
}
