// reference.mjs: the encoders the C tokenizer is compared with (tests/js/hf-tokenizers.test.mjs).
//
// hf(json, {parseSpecial}) is @huggingface/tokenizers (tokenizers.js, the JS port of Hugging Face's Rust
// library), with adjustments that make it answer what the Rust library answers, each stated where made:
//   - parseSpecial false: tokenizers.js always matches added tokens in the text (the Rust default). The Rust
//     library's other mode (encode_special_tokens, attnviz's parse_special = 0) treats special added tokens'
//     text as plain text; here that is a tokenizer built without the special added tokens, and the
//     post-processor's special tokens put back around the ids from the file's template.
//   - \s in GPT-2's ByteLevel regex: tokenizers.js runs it as a JS regex, whose \s adds U+FEFF and lacks U+0085;
//     the Rust library's regexes (Oniguruma) take \s as Unicode White_Space. tokenizers.js itself rewrites \s
//     that way in Split patterns ("JS \s wrongly adds U+FEFF and misses \x85"); here ByteLevel's gets the same.
//   - (?i:'s|...) in Split patterns (Llama 3, Qwen2): tokenizers.js folds case in ASCII only ('[sS]); Oniguruma
//     folds by Unicode's CaseFolding, where U+017F LATIN SMALL LETTER LONG S folds to s (no other character
//     folds to t, r, e, v, m, l or d), so "'ſ" is a contraction there: '[sSſ] here.
// hf(json, {parseSpecial, jsRegex: true}) leaves out the two regex adjustments and makes Split's \s a JS \s too:
// the regexes as the packages run them, to show that they explain every difference (a) counts.
// The packages are as published: their own encoders.
import { Tokenizer } from '@huggingface/tokenizers';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const GPT2_PATTERN_JS = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
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

function build(json, jsRegex) {
  const tok = new Tokenizer(json, {});
  // Adjust the regexes (see the top of this file) wherever a pre-tokenizer runs one; count the changes.
  const fix = (pt) => {
    if (!pt) return 0;
    let n = 0;
    if (pt.pattern instanceof RegExp) {
      let src = pt.pattern.source;
      if (src === GPT2_PATTERN_JS.source && !jsRegex) src = GPT2_PATTERN_WS.source;
      if (pt.constructor.name === 'Split') {
        if (jsRegex) src = src.replaceAll('\\p{White_Space}', '\\s').replaceAll('\\P{White_Space}', '\\S');
        else src = src.replaceAll("'[sS]", "'[sSſ]");
      }
      if (src !== pt.pattern.source) {
        pt.pattern = new RegExp(src, pt.pattern.flags);
        n++;
      }
    }
    for (const sub of pt.tokenizers ?? []) n += fix(sub);
    return n;
  };
  tok.regexChanges = fix(tok.pre_tokenizer);
  return tok;
}

/**
 * An encoder (text, addSpecial) → ids following the Hugging Face library for json (a parsed tokenizer.json):
 * parseSpecial says whether special added tokens written in the text are matched.
 */
export function hf(json, { parseSpecial, jsRegex = false }) {
  if (parseSpecial) {
    const tok = build(json, jsRegex);
    const f = (text, addSpecial = true) => tok.encode(text, { add_special_tokens: addSpecial }).ids;
    f.tokenizer = tok;
    return f;
  }
  const plain = build({ ...json, added_tokens: json.added_tokens.filter((t) => !t.special) }, jsRegex);
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
