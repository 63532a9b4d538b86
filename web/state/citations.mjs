// citations.mjs: where the lessons' claims come from, as data (docs/lessons.md, "Citations"). A claim
// a seed article makes cites the seed by its own title, author and section as the article gives them, with
// the sentence it rests on quoted verbatim (tests/js/citations.test.mjs finds each quote in the seed file);
// a claim no seed makes cites the paper. Pure data and citeParts, which words a citation in the reader's
// language; no DOM (web/ui/lessons.mjs renders the parts).
import { t, LANGS } from '../i18n/i18n.mjs';

/**
 * The four seed articles ($ATTNVIZ_SHARED/seeds/ID_*.txt), each as it names itself: title, author where
 * the article names one, and a link only where the article states its own address.
 */
export const SEEDS = {
  '000': { title: 'Linear Attention', en: 'a survey of linear attention' },
  '001': { title: '线性注意力机制', en: 'The linear attention mechanism' },
  '003': {
    title: 'Transformer升级之路:5、作为无限维的线性Attention', author: '苏剑林', year: 2021,
    en: 'The road to better Transformers, 5: attention as an infinite-dimensional linear attention',
    link: 'https://spaces.ac.cn/archives/8601',
  },
  '004': {
    title: 'Transformers are RNNs: Fast Autoregressive Transformers with Linear Attention', author: '郑之杰', year: 2021,
    en: 'a reading note on Katharopoulos et al. 2020', sections: false, // a post without headings: cited whole
  },
};

/** A seed citation: the seed `id`, its section as the article numbers or titles it, the quoted sentence, an English gloss. */
export function seed(id, section, quote, gloss, { mid = false } = {}) {
  const s = SEEDS[id];
  return { seed: id, title: s?.title, author: s?.author, link: s?.link, section, quote, gloss, ...(mid ? { mid } : {}) };
}

/** The papers the lessons cite where no seed makes the claim (an arXiv id only where it was checked against the title). */
export const PAPER = {
  katharopoulos: { paper: 'Transformers are RNNs: Fast Autoregressive Transformers with Linear Attention', authors: 'Katharopoulos, Vyas, Pappas, Fleuret', year: 2020, arxiv: '2006.16236' },
  performer: { paper: 'Rethinking Attention with Performers', authors: 'Choromanski et al.', year: 2021, arxiv: '2009.14794' },
  retnet: { paper: 'Retentive Network: A Successor to Transformer for Large Language Models', authors: 'Sun et al.', year: 2023, arxiv: '2307.08621' },
  fastweights: { paper: 'Linear Transformers Are Secretly Fast Weight Programmers', authors: 'Schlag, Irie, Schmidhuber', year: 2021, arxiv: '2102.11174' },
  deltanet: { paper: 'Parallelizing Linear Transformers with the Delta Rule over Sequence Length', authors: 'Yang et al.', year: 2024, arxiv: '2406.06484' },
  lolcats: { paper: 'LoLCATs: On Low-Rank Linearizing of Large Language Models', authors: 'Zhang et al.', year: 2024, arxiv: '2410.10254' },
  hedgehog: { paper: 'The Hedgehog & the Porcupine: Expressive Linear Attentions with Softmax Mimicry', authors: 'Zhang, Bhatia, Kumbong, Ré', year: 2024, arxiv: '2402.04347' },
  nystrom: { paper: 'Nyströmformer: A Nyström-Based Algorithm for Approximating Self-Attention', authors: 'Xiong et al.', year: 2021, arxiv: '2102.03902' },
  linformer: { paper: 'Linformer: Self-Attention with Linear Complexity', authors: 'Wang et al.', year: 2020, arxiv: '2006.04768' },
  flatten: { paper: 'FLatten Transformer: Vision Transformer using Focused Linear Attention', authors: 'Han et al.', year: 2023, arxiv: '2308.00442' },
  sinks: { paper: 'Efficient Streaming Language Models with Attention Sinks', authors: 'Xiao et al.', year: 2023, arxiv: '2309.17453' },
  efficient: { paper: 'Efficient Attention: Attention with Linear Complexities', authors: 'Shen et al.', year: 2021, arxiv: '1812.01243' },
  gatedDelta: { paper: 'Gated Delta Networks: Improving Mamba2 with Delta Rule', authors: 'Yang, Kautz, Hatamizadeh', year: 2024, arxiv: '2412.06464' },
  lightning: { paper: 'Lightning Attention-2: A Free Lunch for Handling Unlimited Sequence Lengths in Large Language Models', authors: 'Qin et al.', year: 2024, arxiv: '2401.04658' },
  longformer: { paper: 'Longformer: The Long-Document Transformer', authors: 'Beltagy, Peters, Cohan', year: 2020, arxiv: '2004.05150' },
  kimi: { paper: 'Kimi Linear: An Expressive, Efficient Attention Architecture', authors: 'Kimi Team', year: 2025, arxiv: '2510.26692' },
  fox: { paper: 'Forgetting Transformer: Softmax Attention with a Forget Gate', authors: 'Lin, Nikishin, He, Courville', year: 2025, arxiv: '2503.02130' },
  ssd: { paper: 'Transformers are SSMs: Generalized Models and Efficient Algorithms Through Structured State Space Duality', authors: 'Dao & Gu', year: 2024, arxiv: '2405.21060' },
  rwkv7: { paper: 'RWKV-7 "Goose" with Expressive Dynamic State Evolution', authors: 'Peng et al.', year: 2025, arxiv: '2503.14456' },
};

/** A quote as a reader sees it: the seed's Markdown emphasis and TeX dollar signs dropped (the data keeps them verbatim). */
export function plainQuote(quote) {
  return String(quote).replace(/\*\*/g, '').replace(/\$([^$]*)\$/g, (_, tex) => texText(tex)).replace(/\$/g, '');
}

/** The little TeX the quoted sentences hold, as plain text (\bold{Q} \cdot \bold{K}^{\mathsf{T}} → Q·Kᵀ). */
function texText(tex) {
  return tex.replace(/\^\{\\prime\s*\\mathsf\{T\}\}/g, '′ᵀ').replace(/\^\{\\prime\}/g, '′').replace(/\^\{\\mathsf\{T\}\}/g, 'ᵀ').replace(/\\(?:bold|mathbf|mathsf|mathrm)\{([^}]*)\}/g, '$1')
    .replace(/\\mathbb\{R\}/g, 'ℝ').replace(/\s*\\cdot\s*/g, '·').replace(/\s*\\times\s*/g, '×').replace(/\\in\b/g, '∈')
    .replace(/\\to\b/g, '→').replace(/\\(exp|log|sin|cos)\b/g, '$1').replace(/\\infty\b/g, '∞')
    .replace(/\^([0-9nmT])/g, (_, c) => ({ 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹', n: 'ⁿ', m: 'ᵐ', T: 'ᵀ' })[c]);
}

/** A quote as the page shows it: "…" where it starts inside a sentence (`mid`, which the citations test holds
 * to the seed) or stops before the sentence's end. */
export function shownQuote(c) {
  const q = plainQuote(c.quote);
  return `${c.mid ? '…' : ''}${q}${/[。！？!?.]$/.test(q) ? '' : '…'}`;
}

const HAN = /[\u3400-\u9fff]/;
/** The language tag of a seed's own words: a heading like "Linformer" is Latin, the rest Chinese. */
const langOf = (text) => (HAN.test(text) ? 'zh' : 'en');

/**
 * A catalogue template cut at its placeholders, each filled with a part: ('{a} by {b}', {a: P, b: Q}) →
 * [P, {text: ' by '}, Q]. The parts keep their class and language, which a filled string would lose.
 */
function fill(template, values) {
  const out = [];
  let at = 0;
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    if (m.index > at) out.push({ text: template.slice(at, m.index) });
    out.push(values[m[1]] ?? { text: m[0] });
    at = m.index + m[0].length;
  }
  if (at < template.length) out.push({ text: template.slice(at) });
  return out;
}

/**
 * Citation `c` (a seed's or a paper's) as the lesson panel shows it in `lang`: a list of parts {text, cls,
 * lang, href, title}. A seed by its own title, author and section, and the sentence quoted as the article
 * writes it, in both languages; the English gloss only in English (in Chinese the quote is the source). A
 * paper by its English title (a proper name) with the words around it in the reader's language.
 */
export function citeParts(c, lang) {
  if (c.seed) {
    const en = lang === LANGS[0];
    const title = { cls: 'cite-title', text: `《${c.title}》`, lang: langOf(c.title) };
    if (c.link) title.href = c.link;
    if (en && SEEDS[c.seed]?.en) title.title = SEEDS[c.seed].en; // the English title, on hover
    const head = c.author ? fill(t('cite.seed.author', null, lang), { title, author: { cls: 'cite-author', text: c.author, lang: langOf(c.author) } }) : [title];
    const section = c.section ? fill(t('cite.seed.section', null, lang), { section: { cls: 'cite-section', text: c.section, lang: langOf(c.section) } }) : [];
    const quote = fill(t('cite.seed.quote', null, lang), { quote: { cls: 'cite-quote', text: `“${shownQuote(c)}”`, lang: 'zh' } });
    const gloss = en ? [{ text: ' — ' }, { cls: 'cite-gloss', text: c.gloss.replace(/\.$/, ''), lang: 'en' }] : [];
    return [...head, ...section, ...quote, ...gloss];
  }
  // the title and the authors are English names in either language: marked so (a screen reader's voice, the zh check)
  const [first, etal] = c.authors.match(/^(.*) et al\.$/)?.slice(1).concat(true) ?? [c.authors, false];
  const names = { cls: 'cite-authors', text: first, lang: 'en' };
  const authors = etal ? fill(t('cite.etal', null, lang), { first: names }) : [names];
  const link = c.arxiv ? { href: `https://arxiv.org/abs/${c.arxiv}` } : {};
  return fill(t(c.arxiv ? 'cite.paper.arxiv' : 'cite.paper', null, lang), {
    paper: { cls: 'cite-paper', text: c.paper, lang: 'en', ...link },
    authors: authors.length === 1 ? authors[0] : { parts: authors },
    year: { text: String(c.year) },
    arxiv: { cls: 'cite-arxiv', text: `arXiv:${c.arxiv}`, lang: 'en', ...link },
  }).flatMap((x) => x.parts ?? [x]);
}
