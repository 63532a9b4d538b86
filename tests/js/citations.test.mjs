// The lessons' citations (web/state/presets.mjs's `sources`, web/state/citations.mjs; the rule: docs/lessons.md,
// "Citations"). Always: every lesson cites something, every seed citation names a seed that exists with a
// section, a quote and a gloss, every paper has authors, a year and a well-formed arXiv id. With the seed
// articles under $ATTNVIZ_SHARED/seeds (default ../shared): each quote occurs verbatim (whitespace
// normalised) in that seed, inside the section it names, and the seed's title, author and link are the
// article's own.
import { describe, it, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRESETS } from '../../web/state/presets.mjs';
import { SEEDS, plainQuote, shownQuote } from '../../web/state/citations.mjs';
import { SEEDS_DIR as SEED_DIR } from './shared-data.mjs';

const HAVE_SEEDS = existsSync(SEED_DIR);
const SEED_IDS = ['000', '001', '003', '004']; // the seeds README lists; no other id is a seed

const norm = (s) => String(s).replace(/\s+/g, ' ').trim();
const citations = () => PRESETS.flatMap((p) => (p.sources ?? []).map((c) => ({ lesson: p.name, ...c })));

/** The seed's text, and its headings (Markdown `#` lines, "3.2. …" numbered lines, "… #" lines) with their offsets. */
function readSeed(id) {
  const file = readdirSync(SEED_DIR).find((f) => f.startsWith(`${id}_`) && f.endsWith('.txt'));
  const text = readFileSync(join(SEED_DIR, file), 'utf8');
  const headings = [];
  let at = 0;
  for (const line of text.split('\n')) {
    const t = line.trim();
    const h = /^#+\s/.test(t) ? t.replace(/^#+\s*/, '') : / #$/.test(t) ? t.slice(0, -2).trim() : /^\d+(\.\d+)*\.\s/.test(line) ? t : null; // an indented "1." is a list item
    if (h) headings.push({ h, at });
    at += line.length + 1;
  }
  return { text, headings };
}

describe('the lessons cite their sources', () => {
  it('every lesson has sources; seed citations name a real seed, a section, a quote and a gloss', () => {
    const bad = [];
    for (const p of PRESETS) if (!Array.isArray(p.sources) || p.sources.length === 0) bad.push(`${p.name}: no sources`);
    for (const c of citations()) {
      if ('seed' in c) {
        if (!SEED_IDS.includes(c.seed) || !SEEDS[c.seed]) bad.push(`${c.lesson}: seed "${c.seed}" is not a seed`);
        const need = SEEDS[c.seed]?.sections === false ? ['title', 'quote', 'gloss'] : ['title', 'section', 'quote', 'gloss'];
        for (const k of need) if (typeof c[k] !== 'string' || c[k].length < 2) bad.push(`${c.lesson}: seed ${c.seed} without ${k}`);
        if (c.link !== undefined && c.seed !== '003') bad.push(`${c.lesson}: seed ${c.seed} states no address of its own`);
      } else if ('paper' in c) {
        if (!(c.authors?.length > 2) || !(c.year >= 1990 && c.year <= 2030)) bad.push(`${c.lesson}: paper "${c.paper}" without authors or year`);
        if (c.arxiv !== undefined && !/^\d{4}\.\d{4,5}$/.test(c.arxiv)) bad.push(`${c.lesson}: arXiv id "${c.arxiv}"`);
      } else bad.push(`${c.lesson}: a source that is neither a seed nor a paper`);
    }
    expect(bad).toEqual([]);
  });

  it.runIf(HAVE_SEEDS)('every seed quote occurs verbatim in its seed, inside the section it names', () => {
    const seeds = Object.fromEntries(SEED_IDS.map((id) => [id, readSeed(id)]));
    const bad = [];
    // the title is the article's own heading, a whole line near its top (a Markdown `#` line, a front
    // matter's `title:`, or a page's first line), not a phrase found somewhere in its text
    const heading = (line) => line.trim().replace(/^#\s+/, '').replace(/^title:\s*'(.*)'$/, '$1');
    for (const id of SEED_IDS) {
      const top = seeds[id].text.split('\n').filter((l) => l.trim()).slice(0, 5).map(heading);
      if (!top.includes(SEEDS[id].title)) bad.push(`seed ${id}: title "${SEEDS[id].title}" is not the article's heading (${top.slice(0, 3).join(' | ')})`);
    }
    for (const id of SEED_IDS) if (SEEDS[id].link && !seeds[id].text.includes(SEEDS[id].link)) bad.push(`seed ${id}: the article does not state ${SEEDS[id].link}`);
    for (const id of SEED_IDS) if (SEEDS[id].author && !seeds[id].text.includes(SEEDS[id].author)) bad.push(`seed ${id}: the article does not name ${SEEDS[id].author}`);
    for (const c of citations().filter((x) => 'seed' in x && seeds[x.seed])) {
      const { text, headings } = seeds[c.seed];
      // a seed without sections (004) is quoted from its whole text
      const i = c.section == null ? -1 : headings.findIndex((x) => norm(x.h) === norm(c.section));
      if (c.section != null && i < 0) { bad.push(`${c.lesson}: seed ${c.seed} has no section "${c.section}"`); continue; }
      const body = i < 0 ? text : text.slice(headings[i].at, headings[i + 1]?.at ?? text.length);
      if (!norm(body).includes(norm(c.quote))) { bad.push(`${c.lesson}: seed ${c.seed} §"${c.section}" does not say "${c.quote.slice(0, 40)}…"`); continue; }
      // a quote that starts inside a sentence says so (`mid`: the page shows "…" before it)
      const at = body.search(new RegExp(c.quote.trim().split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+')));
      const before = body.slice(0, at).replace(/[ \t]+$/, ''); // a paragraph's start (a newline) or a sentence's end
      const starts = before === '' || /[\n。！？!?.:：]$/.test(before);
      if (starts === !!c.mid) bad.push(`${c.lesson}: seed ${c.seed} quote "${c.quote.slice(0, 20)}…" ${c.mid ? 'starts a sentence but is marked mid' : 'starts inside a sentence: mark it mid'}`);
    }
    expect(bad).toEqual([]);
  });

  it('a quote reads as plain text, with "…" where it is cut', () => {
    expect(plainQuote('我们对 $\\bold{Q} \\cdot \\bold{K}^{\\mathsf{T}}$ 的结果进行了 $\\exp$ 转换')).toBe('我们对 Q·Kᵀ 的结果进行了 exp 转换');
    expect(plainQuote('$O(n^2d)$ 和 **稀疏** $m\\to\\infty$')).toBe('O(n²d) 和 稀疏 m→∞');
    expect(plainQuote('$\\bold{Q}^{\\prime} \\cdot \\bold{K}^{\\prime \\mathsf{T}}$')).toBe('Q′·K′ᵀ');
    // no lesson's quote shows TeX source (a backslash or a brace) to the reader
    const quotes = PRESETS.flatMap((p) => p.sources).filter((c) => c.quote).map((c) => plainQuote(c.quote));
    expect(quotes.filter((q) => /[\\{}]/.test(q))).toEqual([]);
    expect(shownQuote({ quote: '再也不需要了。', mid: true })).toBe('…再也不需要了。');
    expect(shownQuote({ quote: '模型会自动学习出最优的' })).toBe('模型会自动学习出最优的…');
    expect(shownQuote({ quote: '这就是问题。' })).toBe('这就是问题。');
  });

  if (!HAVE_SEEDS) {
    it('(the verbatim check needs the seed articles)', () => {
      console.warn(`SKIPPED: seed-article checks (Vitest citations.test.mjs: quotes verbatim in their sections): ${SEED_DIR} not found; set ATTNVIZ_SHARED=/path/to/shared`);
    });
  }
});
