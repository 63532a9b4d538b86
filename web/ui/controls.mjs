// controls.mjs: labelled controls built from the state schema (web/state/state.mjs). Native range inputs
// (arrow keys, Page Up/Down, Home/End), selects and checkboxes, each with a <label for>, and an
// <output> showing the value; number boxes where an entry asks for one (control: 'number'). The
// controls call back onChange(name, value, phase), phase 'input' while dragging and 'change' on
// release (or after a key press); they never touch the state.
import { maxOf, applies } from '../state/state.mjs';
import { fmt } from '../render/format.mjs';
import { t, tOwn, has, getLang } from '../i18n/i18n.mjs';

/** A control's label in the current language (the catalogue's `control.NAME`; docs/i18n.md). */
export const labelOf = (entry) => t(`control.${entry.name}`);
/** An option's label: the catalogue's `option.NAME.VALUE` where it has one, a variant's own name (glossed in
 *  Chinese), or the schema's English label, else the value itself (a colour map's name). */
function optionText(entry, o, st = null) {
  if (entry.name === 'variant') { // a softmax with a decay or a window names itself, in the page's language (reference-text.mjs)
    const shown = entry.optionLabelOf && st ? entry.optionLabelOf(o, st) : null;
    return shown && shown !== entry.optionLabels?.[o] ? shown : tOwn(`variant.${o}`, entry.optionLabels?.[o] ?? o);
  }
  if (has(`option.${entry.name}.${o}`)) return t(`option.${entry.name}.${o}`);
  return entry.optionLabels?.[o] ?? o;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

/** The display of a value: lists step through indices, floats keep their step's decimals. */
export function shownValue(entry, v) {
  if (entry.name === 'rtol') return `1e${v}`;
  if (entry.knob === 'window' && v === 0) return t('control.window.off');
  if (entry.type === 'float') return fmt(v, 3);
  return String(v);
}

/** The slider position of a value: index into entry.values (nearest), or the value. */
export function sliderPos(entry, v) {
  if (!entry.values) return v;
  let best = 0;
  for (let i = 1; i < entry.values.length; i++) if (Math.abs(entry.values[i] - v) < Math.abs(entry.values[best] - v)) best = i;
  return best;
}

function rangeControl(entry, st, onChange) {
  const id = `k-${entry.name}`;
  const input = el('input', { type: 'range', id, name: entry.name });
  const out = el('output', { for: id, id: `${id}-value` });
  const label = el('label', { for: id, text: labelOf(entry) });
  const row = el('div', { class: 'ctl range' }, label, out, input);
  let lang = getLang();
  const valueOf = () => (entry.values ? entry.values[Number(input.value)] : Number(input.value));
  input.addEventListener('input', () => onChange(entry.name, valueOf(), 'input'));
  input.addEventListener('change', () => onChange(entry.name, valueOf(), 'change'));
  input.addEventListener('pointerdown', () => onChange(null, null, 'dragstart'));
  return {
    row,
    sync(s) {
      // every write is guarded: an unchanged attribute or text written on each input still costs
      // style and layout work in the frame that must show the new heatmaps
      const v = s[entry.name];
      let min, max, step;
      if (entry.values) {
        const top = maxOf(entry, s);
        min = '0'; max = String(entry.values.filter((x) => x <= top).length - 1); step = '1';
      } else {
        min = String(entry.min); max = String(maxOf(entry, s)); step = String(entry.step ?? 1);
      }
      if (input.min !== min) input.min = min;
      if (input.max !== max) input.max = max;
      if (input.step !== step) input.step = step;
      const pos = String(sliderPos(entry, v));
      if (input.value !== pos) input.value = pos;
      const text = shownValue(entry, v);
      if (out.textContent !== text || lang !== getLang()) {
        if (lang !== getLang()) { lang = getLang(); label.textContent = labelOf(entry); }
        out.textContent = text;
        input.setAttribute('aria-valuetext', `${labelOf(entry)} ${text}`);
      }
    },
  };
}

function selectControl(entry, st, onChange) {
  const id = `k-${entry.name}`;
  const sel = el('select', { id, name: entry.name });
  for (const o of entry.options) sel.append(el('option', { value: o, text: optionText(entry, o) }));
  sel.addEventListener('change', () => onChange(entry.name, sel.value, 'change'));
  const label = el('label', { for: id, text: labelOf(entry) });
  const row = el('div', { class: 'ctl select' }, label, sel);
  let lang = getLang();
  return {
    row,
    sync(s) {
      if (sel.value !== s[entry.name]) sel.value = s[entry.name];
      const relabel = lang !== getLang();
      if (relabel) { lang = getLang(); label.textContent = labelOf(entry); }
      // an option whose words depend on the state (the variant picker's softmax with a decay or a window), or the language
      if (entry.optionLabelOf || relabel) for (const opt of sel.options) { const text = optionText(entry, opt.value, s); if (opt.textContent !== text) opt.textContent = text; }
    },
  };
}

function checkControl(entry, st, onChange) {
  const id = `k-${entry.name}`;
  const box = el('input', { type: 'checkbox', id, name: entry.name });
  box.addEventListener('change', () => onChange(entry.name, box.checked, 'change'));
  const label = el('label', { for: id, text: labelOf(entry) });
  const row = el('div', { class: 'ctl check' }, box, label);
  let lang = getLang();
  return {
    row,
    sync(s) {
      if (box.checked !== !!s[entry.name]) box.checked = !!s[entry.name];
      if (lang !== getLang()) { lang = getLang(); label.textContent = labelOf(entry); }
    },
  };
}

function numberControl(entry, st, onChange) {
  const id = `k-${entry.name}`;
  const input = el('input', { type: 'number', id, name: entry.name, min: entry.min, max: entry.max, step: 1, inputmode: 'numeric' });
  input.addEventListener('change', () => onChange(entry.name, input.value, 'change'));
  const label = el('label', { for: id, text: labelOf(entry) });
  const row = el('div', { class: 'ctl number' }, label, input);
  let lang = getLang(), redraw = null;
  if (entry.redraw) {
    redraw = el('button', { type: 'button', id: `${id}-redraw`, title: t(`control.${entry.name}.redraw`), text: t('control.redraw') });
    redraw.addEventListener('click', () => onChange(entry.name, (Number(input.value) + 1) >>> 0, 'change'));
    row.append(redraw);
  }
  // compared as text: an empty box reads as 0, which is a value (the registry's default seed)
  return {
    row,
    sync(s) {
      if (input.value !== String(s[entry.name])) input.value = String(s[entry.name]);
      if (lang === getLang()) return;
      lang = getLang();
      label.textContent = labelOf(entry);
      if (redraw) { redraw.title = t(`control.${entry.name}.redraw`); redraw.textContent = t('control.redraw'); }
    },
  };
}

/** A text box for a list value (control: 'text': the reset positions "5,20,41"), sent on change (Enter, blur). */
function textControl(entry, st, onChange) {
  const id = `k-${entry.name}`;
  const input = el('input', { type: 'text', id, name: entry.name, spellcheck: 'false', autocomplete: 'off', placeholder: '5, 20, 41' });
  input.addEventListener('change', () => onChange(entry.name, input.value, 'change'));
  const label = el('label', { for: id, text: labelOf(entry) });
  const row = el('div', { class: 'ctl number text' }, label, input);
  let lang = getLang();
  return {
    row,
    sync(s) {
      // the box keeps what the reader is typing; it takes the state's value when it is not being edited
      if (document.activeElement !== input && input.value !== String(s[entry.name])) input.value = String(s[entry.name]);
      if (lang !== getLang()) { lang = getLang(); label.textContent = labelOf(entry); }
    },
  };
}

/**
 * Build the controls of `entries` into `container`. Returns {sync(state)}: sets every value, shows only
 * the controls `shown(entry, state)` allows (by default those that apply to the state's variant; the page
 * passes state.mjs's shown, which also honours hide= and an embed's controls=), and disables them all
 * while the state is locked (lock=1).
 */
export function buildControls(container, entries, st, onChange, shown = applies) {
  const made = entries.map((e) => {
    const c = e.type === 'enum' ? selectControl(e, st, onChange)
      : e.type === 'bool' ? checkControl(e, st, onChange)
        : e.control === 'number' ? numberControl(e, st, onChange)
          : e.control === 'text' ? textControl(e, st, onChange)
            : rangeControl(e, st, onChange);
    c.entry = e;
    c.row.dataset.knob = e.name;
    container.append(c.row);
    return c;
  });
  return {
    sync(s) {
      for (const c of made) {
        const on = shown(c.entry, s);
        if (c.row.hidden === on) c.row.hidden = !on;
        if (on) c.sync(s);
        const lock = !!s.lock;
        if (c.locked !== lock) {
          c.locked = lock;
          for (const x of c.row.querySelectorAll('input, select, button')) x.disabled = lock;
        }
      }
    },
  };
}
