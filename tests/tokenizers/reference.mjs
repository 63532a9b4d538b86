// reference.mjs: the encoders the C tokenizer is compared with (tests/js/hf-tokenizers.test.mjs).
//
// hf(json, {parseSpecial}) is @huggingface/tokenizers (tokenizers.js, the JS port of Hugging Face's Rust
// library), with two adjustments that make it answer what the Rust library answers, each stated where made:
//   - parseSpecial false: tokenizers.js always matches added tokens in the text (the Rust default). The Rust
//     library's other mode (encode_special_tokens, attnviz's parse_special = 0) treats special added tokens'
//     text as plain text; here that is a tokenizer built without the special added tokens, and the
//     post-processor's special tokens put back around the ids from the file's template.
//   - GPT-2's ByteLevel regex: tokenizers.js runs it as a JS regex, whose \s adds U+FEFF and lacks U+0085; the
//     Rust library's (Oniguruma) \s is Unicode White_Space. tokenizers.js itself rewrites \s that way in Split
//     patterns ("JS \s wrongly adds U+FEFF and misses \x85"); here the ByteLevel pattern gets the same rewrite.
// The packages are as published: their own encoders, the differences from the reference counted by the test.
import { Tokenizer } from '@huggingface/tokenizers';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// GPT-2's regex with \s, \S as Unicode White_Space (what Oniguruma's \s is for Unicode strings).
const GPT2_PATTERN_WS =
  /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+/gu;

/** The ids the post-processor's template puts before and after the sequence (TemplateProcessing's single). */
export function templateIds(json) {
  const pp = json.post_processor;
  const t = pp?.type === 'TemplateProcessing' ? pp : pp?.type === 'Sequence'
    ? pp.processors.find((p) => p.type === 'TemplateProcessing') : null;
  const before = [], after = [];
  if (!t) return { before, after };
  let seen = false;
  for (const piece of t.single) {
    if (piece.Sequence) seen = true;
    else (seen ? after : before).push(...t.special_tokens[piece.SpecialToken.id].ids);
  }
  return { before, after };
}

function build(json) {
  const tok = new Tokenizer(json, {});
  // Fix the ByteLevel pre-tokenizer's \s (see the top of this file) wherever one runs its regex.
  const fix = (pt) => {
    if (!pt) return 0;
    let n = 0;
    if (pt.pattern && String(pt.pattern) === String(/'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu)) {
      pt.pattern = GPT2_PATTERN_WS;
      n++;
    }
    for (const sub of pt.tokenizers ?? []) n += fix(sub);
    return n;
  };
  tok.whitespaceFixes = fix(tok.pre_tokenizer);
  return tok;
}

/**
 * An encoder (text, addSpecial) → ids following the Hugging Face library for json (a parsed tokenizer.json):
 * parseSpecial says whether special added tokens written in the text are matched.
 */
export function hf(json, { parseSpecial }) {
  if (parseSpecial) {
    const tok = build(json);
    const f = (text, addSpecial = true) => tok.encode(text, { add_special_tokens: addSpecial }).ids;
    f.tokenizer = tok;
    return f;
  }
  const plain = build({ ...json, added_tokens: json.added_tokens.filter((t) => !t.special) });
  const { before, after } = templateIds(json);
  const f = (text, addSpecial = true) => {
    const ids = plain.encode(text, { add_special_tokens: false }).ids;
    return addSpecial ? [...before, ...ids, ...after] : ids;
  };
  f.tokenizer = plain;
  return f;
}

/** The packages' own encoders, called as the fixture's post-processor adds (BOS for the Llamas), by name. */
export async function packages() {
  const gpt3 = require('gpt-3-encoder');
  const { default: llama2 } = await import('llama-tokenizer-js');
  const { default: llama3 } = await import('llama3-tokenizer-js');
  const never = /(?!)/g; // llama3-tokenizer-js's specialTokenRegex option: match no special token
  return {
    // GPT-2 adds nothing and gpt-3-encoder knows no special tokens: parse_special 0.
    gpt2: { parseSpecial: false, encode: (s) => gpt3.encode(s) },
    // llama-tokenizer-js: BOS and the preceding space (the Prepend normalizer); no special tokens.
    llama2: { parseSpecial: false, encode: (s) => llama2.encode(s, true, true) },
    // llama3-tokenizer-js matches its special tokens by default; both modes are compared.
    llama3: { parseSpecial: false, encode: (s) => llama3.encode(s, { bos: true, eos: false, specialTokenRegex: never }) },
    llama3Special: { parseSpecial: true, encode: (s) => llama3.encode(s, { bos: true, eos: false }) },
  };
}
