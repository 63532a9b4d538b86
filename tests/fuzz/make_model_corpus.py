"""Seeds for fuzz_model (tests/fuzz/fuzz_model.c): small valid llama2.c checkpoints (shared and unshared
classifier, one with 260 pieces so that the tokenizer made for it has byte pieces; byte 0 = 0), tokenizers
(byte 0 = 1, 2 bytes of vocabulary size) and checkpoint + tokenizer + text pairs (byte 0 = 2).
Deterministic; run from the repository root:
/usr/bin/python3 tests/fuzz/make_model_corpus.py tests/fuzz/corpus_model"""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def model_body(dim, hid, layers, heads, kv, vocab, seq, shared):
    hs = dim // heads
    kvd = hs * kv
    floats = vocab * dim + layers * dim + layers * dim * dim + 2 * layers * kvd * dim + layers * dim * dim + layers * dim + \
        3 * layers * hid * dim + dim + seq * hs + (0 if shared else vocab * dim)
    body = struct.pack('<7i', dim, hid, layers, heads, kv, vocab if shared else -vocab, seq)
    return body + b''.join(struct.pack('<f', ((i * 37) % 17 - 8) / 16.0) for i in range(floats))


def model(*args):
    return b'\x00' + model_body(*args)


def tokenizer_body(pieces):
    body = struct.pack('<i', max(len(p) for p in pieces))
    for i, p in enumerate(pieces):
        body += struct.pack('<fi', float(i % 7), len(p)) + p
    return body


def tokenizer(pieces):
    return b'\x01' + struct.pack('<H', len(pieces) - 1) + tokenizer_body(pieces)


def pair(model_args, pieces, text):
    """byte 2, u32 checkpoint length, u16 text length, the text, the checkpoint, the tokenizer (vocab = pieces)."""
    ck = model_body(*model_args)
    return b'\x02' + struct.pack('<IH', len(ck), len(text)) + text + ck + tokenizer_body(pieces)


def write(name, data):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)


base = [b'<unk>', b'\n<s>\n', b'\n</s>\n'] + [b'<0x%02X>' % b for b in range(256)]
small = [b'<unk>', b'\n<s>\n', b'\n</s>\n', b' ', b'x', b'y', b'xy', b' x']
write('model_shared', model(4, 6, 1, 2, 1, 8, 4, True))
write('model_unshared', model(8, 12, 2, 4, 2, 12, 6, False))
write('model_vocab260', model(4, 4, 1, 2, 2, 260, 8, True))
write('model_vocab40', model(4, 4, 1, 1, 1, 40, 8, True))
write('tok_bytes', tokenizer(base + [b' ', b'a', b'b', b'ab', b' a', b' ab']))
write('tok_small', tokenizer([b'<unk>', b' ', b'x', b'y', b'xy', b' x']))
write('tok_small_bos', tokenizer(small))
write('pair_small', pair((4, 6, 1, 2, 1, len(small), 8, True), small, b'xy x yx'))
pieces = base + [b' ', b'a', b'b', b'ab', b' a', b' ab', b'\xc3\xa9']
write('pair_bytes', pair((8, 12, 2, 4, 2, len(pieces), 16, False), pieces, b'ab ab\xc3\xa9\xff\x00 ba'))
