// doc-snippets.test.mjs: the HTML a blogger copies from README.md and docs/embedding.md works on a strict
// blog (issue 32): no inline style= (a host's `style-src 'self'` blocks it) and no inline script, and an
// iframe no wider than a 700 px column (the README's 720 px one overflowed it).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);
const DOCS = ['README.md', 'docs/embedding.md', 'docs/package.md'];

/** The ```html blocks of a Markdown text. */
function htmlBlocks(md) {
  return [...md.matchAll(/```html\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** What a snippet does that a strict host refuses or a 700 px column cannot hold: a list of sentences. */
function snippetProblems(html) {
  const out = [];
  for (const m of html.matchAll(/<(\w[\w-]*)\b[^>]*?\sstyle\s*=/gi)) out.push(`<${m[1]}> has a style= attribute`);
  if (/\son[a-z]+\s*=/i.test(html)) out.push('an inline event handler');
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) if (!/\ssrc=/.test(m[1]) && m[2].trim()) out.push('an inline <script>');
  for (const m of html.matchAll(/<iframe\b[^>]*?\swidth="(\d+)"/gi)) if (Number(m[1]) > 700) out.push(`an iframe ${m[1]} px wide`);
  return out;
}

describe('the embedding snippets', () => {
  it('finds what a strict blog refuses', () => {
    expect(snippetProblems('<iframe src="x" width="720" height="420" style="border:0"></iframe>'))
      .toEqual(['<iframe> has a style= attribute', 'an iframe 720 px wide']);
    expect(snippetProblems('<attn-viz view="spectrum" style="width: 640px"></attn-viz><script>go()</script>'))
      .toEqual(['<attn-viz> has a style= attribute', 'an inline <script>']);
    expect(snippetProblems('<script type="module" src="embed.js"></script><iframe width="680" title="a"></iframe>')).toEqual([]);
  });

  for (const doc of DOCS) {
    it(`${doc}: none`, () => {
      const blocks = htmlBlocks(readFileSync(new URL(doc, ROOT), 'utf8'));
      expect(blocks.length).toBeGreaterThan(0);
      expect(blocks.flatMap(snippetProblems)).toEqual([]);
    });
  }
});
