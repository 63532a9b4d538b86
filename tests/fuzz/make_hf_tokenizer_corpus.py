#!/usr/bin/env python3
"""make_hf_tokenizer_corpus.py: writes the seeds of fuzz_hf_tokenizer into tests/fuzz/corpus_hf_tokenizer/: small
tokenizer.json files of each kind the reader takes (GPT-2's ByteLevel, Llama 3's and Qwen2's Split + ByteLevel with
NFC, SmolLM's Digits, Llama 2's metaspace by normalizer and by pre-tokenizer with byte fallback), each with a text.
A seed is two bytes (the JSON's length, little-endian; the high bits of the first byte are add_special and
parse_special), the JSON, then the text."""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_hf_tokenizer")


def byte_char(b):
    if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE: return chr(b)
    return chr(0x100 + (b if b <= 0x20 else b - 0x7F + 33 if b <= 0xA0 else 67))


def bl(s): return ''.join(byte_char(b) for b in s.encode())


GPT2_RX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_RX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
             r"|\s+(?!\S)|\s+")
QWEN2_RX = LLAMA3_RX.replace(r"\p{N}{1,3}", r"\p{N}")


def added(i, content, special=True, normalized=False):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": normalized, "special": special}


def bytelevel(pre, normalizer=None, post=None, ignore=False):
    vocab = {byte_char(b): b for b in range(256)}
    merges = []
    for w in [" t", "th", "the", " the", "he", "in", "ing", "  ", "    "]:
        p = bl(w)
        if p in vocab: continue
        a, b = (p[:-1], p[-1]) if len(p) > 1 else (p, "")
        if a not in vocab: continue
        vocab[p] = len(vocab)
        merges.append([a, b])
    vocab["<|endoftext|>"] = len(vocab)
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added(vocab["<|endoftext|>"], "<|endoftext|>", normalized=True)],
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post, "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": ignore,
                      "vocab": vocab, "merges": [" ".join(m) for m in merges] if not ignore else merges}}


def split(rx): return {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": rx}, "behavior": "Isolated", "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}


def llama2(new):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256): vocab["<0x%02X>" % b] = len(vocab)
    for w in ["▁", "h", "i", "e", "l", "o", "▁h", "▁hi", "he", "ll", "llo", "▁he", "▁hello"]: vocab[w] = len(vocab)
    merges = ["▁ h", "▁h i", "h e", "l l", "ll o", "▁ he", "▁he llo"]
    norm = None if new else {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    pre = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False} if new else None
    return {"version": "1.0", "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
            "normalizer": norm, "pre_tokenizer": pre,
            "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                               {"Sequence": {"id": "A", "type_id": 0}}], "pair": [],
                               "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
                {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab,
                      "merges": merges}}


SEEDS = {
    "gpt2": (bytelevel({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
             "  hello the thing<|endoftext|>don't 123\n\n\n".encode()),
    "llama3": (bytelevel(split(LLAMA3_RX), ignore=True), "DON'T  stop 123456 a\u00a0b\n\n x".encode()),
    "qwen2": (bytelevel(split(QWEN2_RX), normalizer={"type": "NFC"}), "e\u0301 \uac01 12 \xff".encode("utf-8", "surrogatepass") + b"\xff\xed\xa0\x80"),
    "smollm": (bytelevel({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True},
               {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}]}), b"abc 1234 the"),
    "llama2_old": (llama2(False), "hello hi <s>hi \u00e9\u4f60".encode()),
    "llama2_new": (llama2(True), "hello  hi</s>\u00e9".encode()),
}

os.makedirs(OUT, exist_ok=True)
for name, (tok, text) in SEEDS.items():
    j = json.dumps(tok, ensure_ascii=False).encode()
    assert len(j) < 0x4000, (name, len(j))
    flags = 0xC0 if name in ("gpt2", "llama2_old") else 0x80
    n = len(j)
    # the length's low byte carries the flags in its top bits: pad the JSON with spaces until they match
    while (n & 0xC0) != flags: j += b" "; n = len(j)
    with open(os.path.join(OUT, name + ".bin"), "wb") as fh:
        fh.write(bytes([n & 0xFF, n >> 8]) + j + text)
