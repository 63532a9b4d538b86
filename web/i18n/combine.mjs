// combine.mjs: one language's catalogue from its parts (web/i18n/en/*.mjs, zh/*.mjs; docs/i18n.md). Each part
// holds the strings of one area of the page, so areas are written and reviewed apart; a key given by two
// parts is an error at import, never a silent override.
export function combine(parts) {
  const out = {};
  for (const [part, strings] of Object.entries(parts)) {
    for (const [key, s] of Object.entries(strings)) {
      if (Object.hasOwn(out, key)) throw new Error(`i18n: key ${key} is given twice (again in part ${part})`);
      out[key] = s;
    }
  }
  return Object.freeze(out);
}
