// lessons.mjs: the English strings of the page's lessons (docs/i18n.md, "The catalogues"): the words the
// lesson panel, its play button, the sweep's guides and the citations write around the lessons' own text.
// A lesson's title, caption, question, choices, explanation and compare label are English in
// web/state/presets.mjs; their Chinese is zh/lessons.mjs's `preset.NAME.*` (zh only).
export default {
  // the play button's range ("▶ play p from 1 to 8"; web/ui/lessons.mjs)
  'lessons.range': '{key} from {from} to {to}',
  // the evidence strip's comparison, after a readout ("row entropy 4.24 / 5.55 — p = 1: 5.41 / 5.55")
  'lessons.compare': ' — {label}: {value}',
  // the reference lines a sweep draws beside its points (web/render/sweep-guides.mjs)
  'lessons.guide.rank': 'rank = s',
  'lessons.guide.error': 'error 1 (M = 0)',
  // a citation (web/state/citations.mjs citeParts): a seed by its own title, author and section, the quoted
  // sentence (Chinese in both languages; the English gloss is shown in English only); a paper by its title
  'cite.seed.author': '{title} by {author}',
  'cite.seed.section': ', section “{section}”',
  'cite.seed.quote': ': {quote}',
  'cite.paper': '{authors} {year}, “{paper}”',
  'cite.paper.arxiv': '{authors} {year}, “{paper}”, {arxiv}',
  'cite.etal': '{first} et al.',
  'cite.join': '; ',
};
