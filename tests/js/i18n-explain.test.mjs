// i18n-explain.test.mjs: the explain area in Chinese (docs/i18n.md). Every variant of the real registry has
// its hint, explanation and source; every readout of the real registry its explanation; every glossary
// symbol and concept its words; every reason the library (av_reason_string) or the page gives for an
// undefined readout, every status sentence and every link problem or own-input error is shown in Chinese
// from the very template that wrote its English, while the data (a problem, a reason) stays English.
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { CATALOGUES, t, tOwn, placeholders, setLang } from '../../web/i18n/i18n.mjs';
import { VARIANT_VIEW, variantView } from '../../web/state/variants.mjs';
import { GLOSSARY, CONCEPTS } from '../../web/state/explain.mjs';
import { READOUT_ROWS, rowMark, rowReason, rowExplain } from '../../web/render/readouts.mjs';
import { said, noticeText, SAID_KEYS } from '../../web/state/notice.mjs';
import { ownTensors } from '../../web/io/own-inputs.mjs';
import { spectralReadouts } from '../../web/compute/spectral.mjs';
import { shownView } from '../../web/state/reference-text.mjs';
import { expandPreset } from '../../web/state/presets.mjs';

const ROOT = new URL('../../', import.meta.url);
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const schema = buildSchema(av.registry);
const { en: EN, zh: ZH } = CATALOGUES;
const CJK = /[\u3400-\u9fff]/;
const zh = (s) => said(s, 'zh');

describe('the explain area in Chinese', () => {
  it('every variant of the registry has its hint, explanation and source in Chinese', () => {
    const missing = [];
    for (const v of av.registry.variants) {
      for (const part of ['hint', 'explain', 'source']) if (!CJK.test(ZH[`variant.${v.name}.${part}`] ?? '')) missing.push(`variant.${v.name}.${part}`);
    }
    expect(missing).toEqual([]);
    // a source names the seed articles by their own titles, filled from web/state/citations.mjs
    for (const name of Object.keys(VARIANT_VIEW)) expect(placeholders(ZH[`variant.${name}.source`]).every((p) => ['survey', 'mech', 'inf'].includes(p)), name).toBe(true);
  });

  it('the hint under the variant follows the language; a softmax with a decay or a window too', () => {
    const row = schema.variantRow('elu');
    try {
      setLang('zh');
      expect(variantView(row).hint).toBe(ZH['variant.elu.hint']);
      const sw = shownView(variantView(schema.variantRow('softmax')), true, { decay: 0.9, window: 0 });
      expect(sw.hint).toMatch(CJK);
      expect(sw.hint).toContain('γ = 0.9');
    } finally { setLang('en'); }
    expect(variantView(row).hint).toBe(VARIANT_VIEW.elu.hint);
    expect(shownView(variantView(schema.variantRow('softmax')), true, { decay: 0.9, window: 0 }).hint)
      .toBe('A variant of softmax (decay γ = 0.9), compared with the reference A: plain softmax with the same scale and mask, no decay, no window.');
  });

  it('every readout of the real registry, and every row of the table, has its explanation in Chinese', () => {
    const missing = av.registry.readouts.filter((r) => !CJK.test(ZH[`readout.${r.key}.explain`] ?? '')).map((r) => r.key);
    expect(missing).toEqual([]);
    expect(READOUT_ROWS.length).toBeGreaterThan(10);
    try {
      setLang('zh');
      for (const row of READOUT_ROWS) expect(rowExplain(row), row.id).toMatch(CJK);
    } finally { setLang('en'); }
    for (const row of READOUT_ROWS) expect(rowExplain(row), row.id).toBe(row.explain);
  });

  it('every glossary symbol and concept has a stable id and its Chinese', () => {
    const ids = GLOSSARY.map((g) => g.id), cids = CONCEPTS.map((c) => c.id);
    expect(new Set(ids).size).toBe(GLOSSARY.length);
    expect(new Set(cids).size).toBe(CONCEPTS.length);
    const missing = [
      ...GLOSSARY.filter((g) => !/^\w+$/.test(g.id ?? '') || !CJK.test(ZH[`glossary.${g.id}`] ?? '')).map((g) => g.sym),
      ...CONCEPTS.filter((c) => !CJK.test(ZH[`concept.${c.id}`] ?? '') || !CJK.test(ZH[`concept.${c.id}.text`] ?? '')).map((c) => c.term),
    ];
    expect(missing).toEqual([]);
    expect(tOwn('concept.causal_mask', 'causal mask', null, 'zh')).toBe('因果掩码（causal mask）');
  });

  it('every English template of a notice, a reason or a status sentence reads back into its Chinese', () => {
    const keys = Object.keys(EN).filter((k) => SAID_KEYS.test(k));
    expect(keys.length).toBeGreaterThan(60);
    const wrong = [];
    for (const key of keys) {
      // values no template writes alone, so each must come back as it went in
      const params = Object.fromEntries(placeholders(EN[key]).map((p, i) => [p, `«P${i}»`]));
      const back = zh(t(key, params, 'en'));
      if (back !== t(key, params, 'zh')) wrong.push(`${key}: "${back}"`);
    }
    expect(wrong).toEqual([]);
    expect(zh('a sentence no template wrote')).toBe('a sentence no template wrote'); // a gap shows, nothing invented
    expect(said('out of memory', 'en')).toBe('out of memory');
  });

  it('every reason of the library and every status sentence is shown in Chinese, the readouts keep them in English', () => {
    const reasons = [];
    for (let code = 1; code < 64; code++) {
      const s = av.cstring(av.exports.av_reason_string(code));
      if (s === 'unknown reason') break;
      reasons.push(s);
    }
    expect(reasons.length).toBeGreaterThanOrEqual(12);
    const statuses = Object.values(av.registry.status).filter((c) => c !== 0).map((c) => av.statusString(c));
    const untranslated = [...reasons, ...statuses].filter((s) => !CJK.test(zh(s)));
    expect(untranslated).toEqual([]);
    // a row's reason: English in the readouts (the snapshot's), Chinese on screen; a nested status sentence too
    const r = { error_fro_rel: null, error_fro_rel_reason: reasons[3] };
    const row = READOUT_ROWS.find((x) => x.id === 'error_fro_rel');
    expect(rowReason(row, r)).toBe(reasons[3]);
    try {
      setLang('zh');
      expect(rowReason(row, r)).toBe(ZH['explain.reason.noReference']);
      expect(zh(`no spectrum: ${av.statusString(av.STATUS.ERR_NOMEM)}`)).toBe('没有谱：内存不足');
    } finally { setLang('en'); }
  });

  it('every reason the page writes itself (web/compute/) is one of the templates', () => {
    const dir = new URL('web/compute/', ROOT);
    const found = [];
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.mjs'))) {
      const src = readFileSync(new URL(f, dir), 'utf8');
      // `…_reason = '…'`, `_reason`] = '…'`, `reason: '…'`, `?? 'not computed'` beside a reason
      for (const m of src.matchAll(/(?:_reason`?\]?\s*=\s*|reason = |reason: (?:[^'`]*\? undefined : )?|reasons?\[?\w*\]? = r\[[^\]]*\] \?\? )(['`])((?:(?!\1).)+)\1/g)) {
        found.push([f, m[2].replace(/\$\{[^}]*\}/g, '7')]);
      }
    }
    expect(found.length).toBeGreaterThanOrEqual(8);
    const untranslated = found.filter(([, s]) => !CJK.test(zh(s))).map(([f, s]) => `${f}: ${s}`);
    expect(untranslated).toEqual([]);
    // the spectral reasons as computed
    const out = spectralReadouts(new Float64Array([0, 0, 0]), 0, 3);
    expect(zh(out.effective_rank_reason)).toBe(ZH['explain.reason.zeroMatrix']);
  });

  it('a bound or an estimate is marked in the reader\'s words, the mark itself unchanged', () => {
    const row = READOUT_ROWS.find((x) => x.id === 'rank');
    const r = { rank: 12, rank_bound: 'lower' };
    expect(rowMark(row, r)).toBe(EN['explain.mark.lower']);
    try {
      setLang('zh');
      expect(rowMark(row, r)).toBe(ZH['explain.mark.lower']);
      expect(rowMark(row, { rank: 12, rank_method: 'randomized SVD' })).toBe('估计值，由 randomized SVD 得到（docs/readouts.md）');
    } finally { setLang('en'); }
    expect(r.rank_bound).toBe('lower');
  });

  it('a link\'s problems stay English (an embed\'s host reads them) and the notice shows them in Chinese', () => {
    const { problems } = schema.fromHash('v=1&bogus=1&n=99999&variant=nope&causal=maybe&hide=nope,theme&host=ftp://x');
    expect(problems.join('; ')).toMatch(/unknown parameter "bogus" ignored/);
    for (const p of problems) expect(p, p).not.toMatch(CJK);
    const shown = zh(problems.join('; '));
    expect(shown.split('；').length).toBe(problems.length);
    for (const part of shown.split('；')) expect(part, part).toMatch(CJK);
    expect(shown).toContain('未知参数“bogus”，已忽略');
    // many unknown keys: counted, and the cap's last sentence
    const many = schema.fromHash(Array.from({ length: 30 }, (_, i) => `k${i}=1&n=${i}x`).join('&')).problems;
    for (const part of zh(many.join('; ')).split('；')) expect(part, part).toMatch(CJK);
    // the problems other modules write: a bad zoom (tokens.mjs), an unknown lesson (presets.mjs)
    expect(zh(schema.fromHash('zoom=oops').problems.join('; '))).toBe('zoom=oops：不是 a-b,c-d 形式的行,列（例如 40-80,0-63）；显示整个矩阵');
    expect(zh(expandPreset('preset=nope&n=64').problem)).toBe('未知课程“nope”：使用链接中的其他键');
    // the notice: the shown text is Chinese, cut like any other
    try {
      setLang('zh');
      expect(noticeText('unknown parameter "x" ignored').text).toBe('未知参数“x”，已忽略');
    } finally { setLang('en'); }
    expect(noticeText('unknown parameter "x" ignored').text).toBe('unknown parameter "x" ignored');
  });

  it('your own Q, K, V: each error stays English and is shown in Chinese, nested parts too', () => {
    const bytes = (s) => new TextEncoder().encode(s);
    const cases = [
      [],
      [{ name: 'a.json', bytes: bytes('{') }, { name: 'b_q.npy', bytes: new Uint8Array(1) }],
      [{ name: 'x.npy', bytes: new Uint8Array(1) }],
      [{ name: 'a.json', bytes: bytes('[1]') }],
      [{ name: 'a.json', bytes: bytes('{"q": [[1, "ab"]], "k": [[1, 2]], "v": [[1, 2]]}') }],
      [{ name: 'a.json', bytes: bytes('{"q": [[1, [1, 2]]], "k": [[1, 2]], "v": [[1, 2]]}') }],
      [{ name: 'a.json', bytes: bytes('{"q": [[1, 2], [3]], "k": [[1, 2]], "v": [[1, 2]]}') }],
      [{ name: 'a.json', bytes: bytes('{"q": [[1, 2]], "k": [[1, 2], [3, 4]], "v": [[1, 2]]}') }],
      [{ name: 'a.json', bytes: bytes('{"q": [[1e999, 2]], "k": [[1, 2]], "v": [[1, 2]]}') }],
    ];
    for (const files of cases) {
      const { error } = ownTensors(files, av);
      expect(error, JSON.stringify(files.map((f) => f.name))).toBeTruthy();
      expect(error).not.toMatch(CJK);
      const shown = zh(`your Q, K, V: ${error}`);
      expect(shown, error).toMatch(/^你的 Q、K、V：/);
      // no English sentence left: what remains Latin is a file name, a key, a shape or a symbol
      expect(shown.replace(/[\w.]+\.(json|npy)|"\w+"|[A-Za-z]\b|NaN|Infinity|Inf|JSON|float32/g, '').match(/[A-Za-z]{3,}/g), shown).toBe(null);
    }
  });
});
