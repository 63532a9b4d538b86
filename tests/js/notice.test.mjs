// web/state/notice.mjs: every notice the page shows is at most NOTICE_MAX characters, cut at a word boundary.
import { describe, it, expect } from 'vitest';
import { noticeText, NOTICE_MAX } from '../../web/state/notice.mjs';

describe('noticeText', () => {
  it('keeps a sentence within the bound as it is', () => {
    expect(noticeText('your Q, K, V: x.json: "q" row 1 has 1 entries, not 2 (ragged rows)')).toEqual({
      text: 'your Q, K, V: x.json: "q" row 1 has 1 entries, not 2 (ragged rows)', cut: false });
    const exact = 'a'.repeat(NOTICE_MAX);
    expect(noticeText(exact)).toEqual({ text: exact, cut: false });
  });

  it('cuts a longer one at a word boundary with an ellipsis, within the bound', () => {
    const dump = `your Q, K, V: x.json: "q"[0][0] is ${JSON.stringify(Array.from({ length: 2000 }, (_, i) => Math.sin(i)))}, not a finite number`;
    const { text, cut } = noticeText(dump);
    expect(cut).toBe(true);
    expect(text.length).toBeLessThanOrEqual(NOTICE_MAX);
    expect(text.endsWith('…')).toBe(true);
    expect(dump.startsWith(text.slice(0, -1))).toBe(true);
    // words: the cut falls where a space was, no word is broken
    const words = 'the background worker failed: ' + Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const w = noticeText(words);
    expect(w.text.length).toBeLessThanOrEqual(NOTICE_MAX);
    expect(w.text).toMatch(/ word\d+…$/);
    expect(words).toContain(`${w.text.slice(0, -1)} `);
    // no space in the second half: cut inside the run rather than keep almost nothing
    const run = `x.json: ${'y'.repeat(500)}`;
    expect(noticeText(run).text).toBe(`${run.slice(0, NOTICE_MAX - 1)}…`);
  });

  it('shows one line: newlines and runs of spaces are one space', () => {
    expect(noticeText('a\n\n  b\tc ')).toEqual({ text: 'a b c', cut: false });
  });
});
