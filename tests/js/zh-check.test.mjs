// The English detector of the Chinese page check (tests/e2e/zh-check.mjs): it must flag what a Chinese
// reader would see as English left behind, and pass the terms the literature writes beside Chinese.
import { describe, it, expect } from 'vitest';
import { englishIn } from '../e2e/zh-check.mjs';

describe('englishIn', () => {
  it('flags English words and sentences', () => {
    expect(englishIn('the row entropy falls')).toEqual(['the', 'row', 'entropy', 'falls']);
    expect(englishIn('行熵下降（drag the slider to see）')).toEqual(['drag', 'the', 'slider', 'see']);
    expect(englishIn('Linear Attention 是一个变体')).toEqual(['Linear']);
  });

  it('passes a term of up to three words beside Chinese, and a name before its gloss', () => {
    expect(englishIn('因果掩码（causal mask）')).toEqual([]);
    expect(englishIn('半可分秩（semiseparable rank）')).toEqual([]);
    expect(englishIn('Efficient Attention（高效注意力）')).toEqual([]);
    // four words are a phrase, not a term
    expect(englishIn('状态（the state it carries）')).toEqual(['the', 'state', 'carries']);
    expect(englishIn('a much longer English phrase（一个注释）')).toEqual(['much', 'longer', 'English', 'phrase']);
  });

  it('passes symbols, acronyms, units, code, titles in 《…》 and the reader\'s own text', () => {
    expect(englishIn('n = 64 时 SVD 的 KL 为 0.3，3 MiB，lang=zh，--causal，M.npy')).toEqual([]);
    expect(englishIn('《Linear Transformers Are Secretly Fast Weight Programmers》')).toEqual([]);
    expect(englishIn('“Once upon a time…”', 'Once upon a time, there was')).toEqual([]);
    expect(englishIn('“Once upon a time…”')).toEqual(['Once', 'upon', 'time']);
    expect(englishIn('softmax 与 Performer 的 token')).toEqual([]);
    expect(englishIn('出处：Han 等 2023，《FLatten Transformer》；Dao & Gu 2024，《Transformers are SSMs》')).toEqual([]);
    expect(englishIn('核函数、特征映射（kernel, feature map），深度卷积（depthwise convolution，DWC）')).toEqual([]);
  });
});
