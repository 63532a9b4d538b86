// loses.mjs: the link keys of the panel "what the model loses" (web/ui/loss-panel.mjs, docs/page.md "The keys"):
// whether it is open, which heads it swaps (all, or those listed), and the path. View keys: they change no
// matrix of the lab. The variant and its knobs are the lab's own (the variant picker's).

/** At most this many heads listed in a link (a model of 32 layers × 32 heads lists some, not all). */
export const MAX_LISTED_HEADS = 256;

/**
 * A value of `ls_heads`: "layer.head" items, comma-separated, deduplicated and sorted (layer, then head);
 * {value, bad} with the items that are not two integers joined by a dot.
 */
export function headsValue(raw) {
  const items = String(raw ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const ok = new Map(), bad = [];
  for (const x of items) {
    const m = /^(\d{1,4})\.(\d{1,4})$/.exec(x);
    if (m) ok.set(`${Number(m[1])}.${Number(m[2])}`, [Number(m[1]), Number(m[2])]); else bad.push(x.slice(0, 20));
  }
  const value = [...ok.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]).slice(0, MAX_LISTED_HEADS);
  return { value: value.map(([l, h]) => `${l}.${h}`).join(','), bad };
}

/** The [layer, head] pairs of an `ls_heads` value within a model's layers × heads. */
export function headsOf(value, layers = Infinity, heads = Infinity) {
  return headsValue(value).value.split(',').filter(Boolean).map((x) => x.split('.').map(Number)).filter(([l, h]) => l < layers && h < heads);
}

/** `ls_heads` with [layer, head] added, or taken away when it is there. */
export function toggleHead(value, layer, head) {
  const key = `${layer}.${head}`;
  const items = headsValue(value).value.split(',').filter(Boolean);
  return headsValue(items.includes(key) ? items.filter((x) => x !== key).join(',') : [...items, key].join(',')).value;
}

/** The schema entries (web/state/state.mjs), `L` its label function. */
export function losesEntries(L) {
  return [
    { name: 'loses', type: 'bool', default: false, label: L('loses'), group: 'view', stage: 'display' },
    { name: 'ls_scope', type: 'enum', options: ['all', 'heads'], default: 'all', label: L('ls_scope'), group: 'view', stage: 'display' },
    { name: 'ls_heads', type: 'heads', default: '', label: L('ls_heads'), group: 'view', stage: 'display' },
    { name: 'ls_path', type: 'enum', options: ['matrix', 'recurrent'], default: 'matrix', label: L('ls_path'), group: 'view', stage: 'display' },
  ];
}
