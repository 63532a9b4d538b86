// whole.mjs: whole numbers with thousands separators, for the state's notices (web/state/state.mjs) and
// every readout (web/render/format.mjs re-exports it): here, below render/, so the state need not import
// the drawing layer. Pure; no DOM.

// Thousands separators without Intl for whole numbers: the first Intl object a page makes starts ICU
// (40–100 ms in a fresh headless Chromium on the 2-core build machine), which the first view need not wait
// for (docs/performance.md, "A cold load"). Anything else goes to one Intl formatter, made on first need.
let intlWhole = null;
/** A whole number with thousands separators, as Intl.NumberFormat('en') writes it: 12,480. */
export function fmtWhole(x) {
  if (Number.isInteger(x) && Math.abs(x) < 1e21) {
    const digits = String(Math.abs(x)).replace(/\B(?=(\d{3})+$)/g, ',');
    return x < 0 || Object.is(x, -0) ? `-${digits}` : digits;
  }
  return (intlWhole ??= new Intl.NumberFormat('en')).format(x);
}
