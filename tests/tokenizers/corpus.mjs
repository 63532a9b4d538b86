// corpus.mjs: the strings the tokenizer comparison encodes (tests/js/hf-tokenizers.test.mjs), as raw bytes:
// hand-picked edge cases, then seeded random mixtures of the same kinds of text. Deterministic for a seed.
//
// Each entry is a Uint8Array; the C side reads those bytes, the JS side the string textOf(bytes) gives, which
// is the rule the C side documents for invalid UTF-8 (each maximal invalid subsequence becomes U+FFFD, the
// WHATWG decoder's rule). No entry holds a NUL byte: `attnviz tokenize --texts` separates texts by NUL.
//
//   node tests/tokenizers/corpus.mjs [SEED] > /dev/null   prints the counts by kind on stderr

const enc = new TextEncoder();
// ignoreBOM: a leading U+FEFF is text like any other (Rust's str keeps it, and so do the C bytes); the
// default TextDecoder would drop it.
const dec = new TextDecoder('utf-8', { ignoreBOM: true });

/** The JS string for a corpus entry. */
export const textOf = (bytes) => dec.decode(bytes);

/** mulberry32: a small seeded generator (uniform in [0, 1)). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROSE = [
  'The quick brown fox jumps over the lazy dog.',
  "It's a truth universally acknowledged, that a single man in possession of a good fortune must be in want of a wife.",
  'Linear attention replaces exp(q·k) by φ(q)·φ(k), so the n×n matrix never has to be formed.',
  'She said, "Don\'t go there!" — and he went anyway; nobody was surprised.',
  "We'll see what they've done: I'd rather you'd asked first, but it's fine. They're here.",
  'Mr. Smith paid $1,234.56 on 2024-03-15 at 10:30am (a 12% discount!).',
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine.',
  'e.g. i.e. etc. vs. U.S.A. Ph.D. a.m. p.m.',
  'Hello world! Hello, World!! HELLO WORLD!!!',
  'naïve café résumé coöperate façade jalapeño Zürich Ångström',
  'Привет, мир! Как дела? Это тест токенизатора.',
  'Γειά σου Κόσμε· η γρήγορη καφέ αλεπού.',
  'مرحبا بالعالم، هذا اختبار.',
  'שלום עולם, זה מבחן.',
  'नमस्ते दुनिया, यह एक परीक्षण है।',
  'สวัสดีชาวโลก นี่คือการทดสอบ',
  '안녕하세요 세계, 이것은 테스트입니다.',
  'Xin chào thế giới, đây là một bài kiểm tra.',
];
const CHINESE = [
  '你好，世界！这是一个测试。',
  '线性注意力用特征映射代替指数核，从而避免构造 n×n 矩阵。',
  '我们今天去公园散步，天气很好。',
  '中华人民共和国成立于1949年10月1日。',
  '「引号」『书名号』（括号）【方括号】——破折号……省略号',
];
const JAPANESE = [
  'こんにちは世界！これはテストです。',
  '東京都渋谷区で、カタカナとひらがなと漢字を混ぜて書きます。',
  'ｶﾀｶﾅ（半角）とカタカナ（全角）、ＡＢＣ１２３。',
  '吾輩は猫である。名前はまだ無い。',
];
const EMOJI = [
  '😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷🇯🇵🇺🇸', '❤️', '🧑🏿‍💻', '👩🏻‍🦰', '🦙', '🤖🎉✨', '#️⃣', '1️⃣',
  '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '👋🏻👋🏼👋🏽👋🏾👋🏿', '☺️☺', '🫠🫶', '😀😃😄😁😆😅😂🤣',
];
const CODE = [
  'def f(x):\n    return x ** 2  # square\n',
  'for (let i = 0; i < n; i++) {\n  sum += a[i] * b[i];\n}\n',
  '#include <stdio.h>\nint main(void) {\n\tprintf("%d\\n", 42);\n\treturn 0;\n}\n',
  'if x != None and y >= 3:\n\t\tpass\nelif z:\n        raise ValueError("bad")\n',
  'const re = /^[a-z]+$/u; // regex\nconsole.log(re.test("abc"));',
  'SELECT id, name FROM users WHERE age > 30 ORDER BY name;',
  '<div class="x"><a href="https://example.com/?q=1&r=2">link</a></div>',
  '{"key": [1, 2.5, -3e10, true, null], "nested": {"a": "b"}}',
  'x=1;y=2;z=x+y;print(z)',
  '    \tmixed\t    indent\n\t    again\n',
  'fn main() -> Result<(), Box<dyn Error>> { Ok(()) }',
  'a->b; c::d; e=>f; g!==h; i<<=2; j>>>=3; k**=4;',
];
const WHITESPACE = [
  ' ', '  ', '   ', '\t', '\t\t', '\n', '\n\n', '\n\n\n', '\r\n', '\r\n\r\n', '\r', ' \n', '\n ', ' \n ',
  '\u00a0', '\u3000', '\u2003', '\u2009', '\u200b', '\u0085', '\ufeff', '\u000b', '\u000c', '\u1680', '\u2028',
  '\u2029', '\u202f', '\u205f', ' \t \n \r\n ',
];
const NUMBERS = [
  '1', '12', '123', '1234', '12345678', '3.14', '3.14159265358979', '1,000', '1,000,000', '-42', '+7', '0.5e-3',
  '2024', '007', '٣٤٥', '１２３', 'Ⅻ', '½', '²³', '1st', '2nd', '3rd', '100%', '$5', '€10', '10:30', '192.168.0.1',
];
const CONTRACTIONS = [
  "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'Ll", "'d", "'D",
  "don't", "DON'T", "Don'T", "it's", "IT'S", "we'll", "WE'LL", "they'd", "I'm", "you're", "YOU'RE", "'tis",
  "''s", "' s", "'x", "rock'n'roll", "’s", "don’t",
  // U+017F LATIN SMALL LETTER LONG S case-folds to s: a contraction for (?i:'s) under Unicode case folding
  "'ſ", "it'ſ", "'ſtraße", "'ſ'S'ſt",
];
const PUNCT = [
  '!!!', '???', '...', '…', '---', '—', '–', '!?!?', '((()))', '[[]]', '{{}}', '<<>>', '""', "''", '``', '~~~',
  '@#$%^&*', '.,;:', '\\\\', '//', '||', '&&', '==', '!=', '<=', '>=', '->', '=>', '::', '¡¿', '«»', '‹›', '„“',
];
const SPECIAL_TEXT = [
  '<|endoftext|>', '<s>', '</s>', '<unk>', '<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>',
  '<|start_header_id|>', '<|end_header_id|>', '<|reserved_special_token_0|>', '<|im_start|>', '<|im_end|>',
  '<|endoftext|><|endoftext|>', '<s><s>', '< s>', '<|endoftext', 'endoftext|>', '<|eot_id|>x', 'x<|eot_id|>',
];
const COMBINING = [
  'e\u0301', 'a\u0308', 'o\u0302\u0323', 'n\u0303', 'A\u030a', 'e\u0301\u0301\u0301', '\u0301', 'é', 'ệ',
  'Å', 'Å', 'ﬁ', 'ᄀ\u1161\u11a8', '각', 'x\u20dd', '\u0915\u094d\u0937', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇',
];
const WORDS = [
  'the', 'of', 'and', 'attention', 'softmax', 'kernel', 'linear', 'matrix', 'token', 'model', 'Hugging', 'Face',
  'tokenization', 'antidisestablishmentarianism', 'supercalifragilisticexpialidocious', 'x', 'I', 'a', 'OK',
  'naïve', 'straße', 'İstanbul', 'ǅ', 'Ωmega', 'données', 'über', '東京', '猫', 'камень', 'λ', 'CamelCaseWord',
  'snake_case_word', 'kebab-case-word', 'ALLCAPS', 'MiXeD', 'http', 'www', 'com',
];

// Cases aimed at the regexes' alternations, the added-token split, the metaspace and NFC, one by one.
const EDGES = [
  // \s+(?!\S) gives back one space before a non-space; runs of mixed whitespace kinds
  'a   b', 'a \t b', ' \t\n x', '\u3000\u3000a', '\u00a0 a', ' \u00a0a', '\t\tx', 'x \t', '\n \n x', '  \n  \n x',
  '\r\n\r\nx', '\t\r\n\t', 'x\r', 'x\n\n\n\ny', ' \r \n ',
  // [^\r\n\p{L}\p{N}]?\p{L}+ takes one leading non-letter; ` ?[^\s\p{L}\p{N}]+[\r\n]*` keeps line ends
  '\u3000hello', '\thello', '$hello', '$$hello', '\u0085hello', '\ufeffhello', '1hello', '!!!\r\n\r\n', ' ...\n\n',
  '.\n', '!\r', '?\r\n', '"quoted"', '(parens)', '-dash-', '__init__', '@user #tag', 'a.b.c', 'x=-1',
  // digits: one to three at a time (Llama 3), one (Qwen2), all (GPT-2); other scripts' digits, numbers not digits
  '1234567', '12 345', '١٢٣٤', '1٢3', '𝟘𝟙𝟚𝟛', '𑁦𑁧', '٣.١٤', 'x²', '⅓', 'Ⅻ12', '0x1F', '1e10', '99%', '3rd',
  // contractions: case, position, and what follows
  "DON'T", "'LL've", "x'sy", "'s's's", "' s", "''", "'", "'1", "'ſ", "I'M", "you'RE", "he'D", "'Ve", "'mm", "'lls",
  // letters outside the BMP, marks, format characters
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𐐀𐐨', '𓀀', 'a\u200db', 'a\u200cb', 'a\u00adb', '\u0640\u0640', 'x\u0301', '\u0301x', '\u20ac5',
  // added tokens next to, around and inside text
  'a<|endoftext|>b', ' <|endoftext|> ', '<<|endoftext|>', '<|endoftext|>|>', '<|endoftext|><|endoftext|>x',
  '<|im_start|>user\nhi<|im_end|>', '</s><s>', '<s> <s>', 'x<unk>y', '<|begin_of_text|><|begin_of_text|>',
  '<|eot_id|><|start_header_id|>', '<|reserved_special_token_250|>', '<|reserved_special_token_247|>', '<|im_start',
  // Llama 2: the metaspace character itself, byte-fallback names as text, leading and repeated spaces
  '▁hello', '▁', '▁▁ ▁', '<0x41>', '<0x0A>\n', '   x', '      ', 'x      y',
  // byte-level alphabet characters as text
  'Ġhello', 'Ċ', 'ĠĠ', 'Ã©', 'ÂŃ',
  // NFC: singletons, exclusions, reordering, Hangul
  '\u212b', '\u2126', '\u0958', 'a\u0323\u0302', 'a\u0302\u0323', 'e\u0301\u0327', '\u1100\u1161\u11a8', '\uac00\u11a8',
  '\u1100\u1161', '\u0b47\u0b3e', '\u00c5\u0301', 'A\u030a\u0301', '\u0344', '\u1e9b\u0323', '\uf900', '\u2000',
];

// Byte strings that are not valid UTF-8 (and some that are, as controls), each a list of byte values.
const BYTES = [
  [0x80], [0xbf], [0x80, 0x80], [0xc0], [0xc1, 0xbf], [0xc0, 0x80], [0xc2], [0xe0], [0xe2, 0x82], [0xe2, 0x82, 0x61],
  [0xf0, 0x9f, 0x98], [0xf0, 0x9f, 0x98, 0x61], [0xf0, 0x9f], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], [0xff], [0xfe], [0xfe, 0xff], [0xf5, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80], [0xe0, 0x80, 0x80], [0xe0, 0x9f, 0xbf], [0xf0, 0x80, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80], [0x61, 0x80, 0x62], [0x61, 0xff, 0x62, 0xfe, 0x63], [0xef, 0xbb, 0xbf, 0x61],
  [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xef, 0xbf, 0xbd], [0x7f], [0x01, 0x02, 0x1f],
  [0x1b, 0x5b, 0x33, 0x31, 0x6d],
];

const utf8 = (s) => enc.encode(s);
const cat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

/** The fixed cases: every list above entry by entry, some in context, and a few extremes. */
function fixed() {
  const out = [];
  const add = (kind, v) => out.push({ kind, bytes: typeof v === 'string' ? utf8(v) : Uint8Array.from(v) });
  add('empty', '');
  for (const [kind, list] of Object.entries({ PROSE, CHINESE, JAPANESE, EMOJI, CODE, WHITESPACE, NUMBERS,
    CONTRACTIONS, PUNCT, SPECIAL_TEXT, COMBINING, WORDS, EDGES })) {
    for (const s of list) {
      add(kind.toLowerCase(), s);
      add(kind.toLowerCase(), ` ${s}`);
      add(kind.toLowerCase(), `${s} `);
      add(kind.toLowerCase(), `a${s}b`);
      add(kind.toLowerCase(), `${s}\n${s}`);
    }
  }
  for (const b of BYTES) {
    add('bytes', b);
    out.push({ kind: 'bytes', bytes: cat(utf8('x '), Uint8Array.from(b), utf8(' y')) });
    out.push({ kind: 'bytes', bytes: cat(Uint8Array.from(b), Uint8Array.from(b)) });
  }
  // Whitespace runs in the places the regexes treat differently: before a word, at the end, between lines.
  for (const ws of ['  ', '   ', '\t\t', '\n\n', ' \n', '\r\n', '\u00a0\u00a0', '\u3000', '  \u0085', '\ufeff ']) {
    add('whitespace', `hello${ws}world`);
    add('whitespace', `${ws}hello`);
    add('whitespace', `hello${ws}`);
    add('whitespace', `${ws}${ws}${ws}`);
    add('whitespace', `a${ws}1${ws}!${ws}`);
  }
  // Extremes: long words, long runs, long numbers (pre-tokens of thousands of characters).
  add('long', 'a'.repeat(3000));
  add('long', 'ab'.repeat(1500));
  add('long', 'antidisestablishmentarianism'.repeat(80));
  add('long', ' '.repeat(3000));
  add('long', `${' '.repeat(2000)}x`);
  add('long', '\n'.repeat(1000));
  add('long', '\t'.repeat(1000));
  add('long', '1234567890'.repeat(200));
  add('long', '!'.repeat(2000));
  add('long', '猫'.repeat(1500));
  add('long', '😀'.repeat(500));
  add('long', 'e\u0301'.repeat(500));
  add('long', PROSE.join(' ').repeat(4));
  return out;
}

/** Random mixtures: fragments of every kind joined by random separators, random bytes, random code points. */
function random(seed, count) {
  const r = rng(seed);
  const pick = (list) => list[Math.floor(r() * list.length)];
  const int = (n) => Math.floor(r() * n);
  const kinds = [PROSE, CHINESE, JAPANESE, EMOJI, CODE, WHITESPACE, NUMBERS, CONTRACTIONS, PUNCT, SPECIAL_TEXT,
    COMBINING, WORDS, WORDS, WORDS, EDGES];
  const seps = ['', ' ', ' ', ' ', '  ', '\n', '\t', '\r\n', '\u00a0', ', ', '. ', "'", '-', '_'];
  // Code points from ranges the regexes and the byte-level tables care about (no unassigned ones: the Unicode
  // versions of Node and of the C tables need not agree on those).
  const ranges = [[0x20, 0x7e], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x5ff],
    [0x600, 0x6ff], [0x900, 0x97f], [0xe00, 0xe5b], [0x1100, 0x11ff], [0x2000, 0x206f], [0x2070, 0x209c],
    [0x20a0, 0x20c0], [0x2100, 0x214f], [0x2150, 0x218b], [0x2460, 0x24ff], [0x3000, 0x303f], [0x3041, 0x3096],
    [0x30a0, 0x30ff], [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0xff01, 0xff9f], [0x1f300, 0x1f64f], [0x1f900, 0x1f9ff],
    [0x1d400, 0x1d7ff]];
  const out = [];
  for (let i = 0; i < count; i++) {
    const mode = int(10);
    if (mode < 6) { // fragments
      const n = 1 + int(8);
      let s = '';
      for (let k = 0; k < n; k++) s += (k ? pick(seps) : '') + pick(pick(kinds));
      out.push({ kind: 'mix', bytes: utf8(s) });
    } else if (mode < 8) { // random code points
      const n = 1 + int(40);
      let s = '';
      for (let k = 0; k < n; k++) {
        const [lo, hi] = pick(ranges);
        s += r() < 0.2 ? pick(seps) : String.fromCodePoint(lo + int(hi - lo + 1));
      }
      out.push({ kind: 'codepoints', bytes: utf8(s) });
    } else if (mode < 9) { // random bytes (mostly invalid UTF-8), never NUL
      const n = 1 + int(24);
      const b = new Uint8Array(n);
      for (let k = 0; k < n; k++) b[k] = r() < 0.5 ? 0x80 + int(0x80) : 1 + int(0x7f);
      out.push({ kind: 'randbytes', bytes: b });
    } else { // valid text with invalid bytes spliced in
      const s = utf8(`${pick(WORDS)}${pick(seps)}${pick(pick(kinds))}`);
      const cut = int(s.length + 1);
      out.push({ kind: 'spliced', bytes: cat(s.subarray(0, cut), Uint8Array.from(pick(BYTES)), s.subarray(cut)) });
    }
  }
  return out;
}

/** The corpus: the fixed cases then `count` random ones, as [{kind, bytes}]. */
export function makeCorpus(seed = 35, count = 3000) {
  const all = [...fixed(), ...random(seed, count)];
  for (const { bytes } of all) if (bytes.includes(0)) throw new Error('corpus: a text holds a NUL byte');
  return all;
}

/** The texts separated by NUL bytes, the input of `attnviz tokenize --texts`. */
export function nulSeparated(corpus) {
  const parts = [];
  corpus.forEach(({ bytes }, i) => {
    if (i) parts.push(Uint8Array.of(0));
    parts.push(bytes);
  });
  return cat(...parts);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const c = makeCorpus(Number(process.argv[2] ?? 35));
  const byKind = {};
  for (const { kind } of c) byKind[kind] = (byKind[kind] ?? 0) + 1;
  console.error(c.length, byKind);
}
