"""Seeds for fuzz_model (tests/fuzz/fuzz_model.c): small valid llama2.c checkpoints (shared and unshared
classifier; byte 0 even) and tokenizers (byte 0 odd, 2 bytes of vocabulary size). Deterministic; run
from the repository root: /usr/bin/python3 tests/fuzz/make_model_corpus.py tests/fuzz/corpus_model"""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def model(dim, hid, layers, heads, kv, vocab, seq, shared):
    hs = dim // heads
    kvd = hs * kv
    floats = vocab * dim + layers * dim + layers * dim * dim + 2 * layers * kvd * dim + layers * dim * dim + layers * dim + \
        3 * layers * hid * dim + dim + seq * hs + (0 if shared else vocab * dim)
    body = struct.pack('<7i', dim, hid, layers, heads, kv, vocab if shared else -vocab, seq)
    body += b''.join(struct.pack('<f', ((i * 37) % 17 - 8) / 16.0) for i in range(floats))
    return b'\x00' + body


def tokenizer(pieces):
    body = struct.pack('<i', max(len(p) for p in pieces))
    for i, p in enumerate(pieces):
        body += struct.pack('<fi', float(i % 7), len(p)) + p
    return b'\x01' + struct.pack('<H', len(pieces) - 1) + body


open(os.path.join(out, 'model_shared'), 'wb').write(model(4, 6, 1, 2, 1, 8, 4, True))
open(os.path.join(out, 'model_unshared'), 'wb').write(model(8, 12, 2, 4, 2, 12, 6, False))
base = [b'<unk>', b'\n<s>\n', b'\n</s>\n'] + [b'<0x%02X>' % b for b in range(256)]
open(os.path.join(out, 'tok_bytes'), 'wb').write(tokenizer(base + [b' ', b'a', b'b', b'ab', b' a', b' ab']))
open(os.path.join(out, 'tok_small'), 'wb').write(tokenizer([b'<unk>', b' ', b'x', b'y', b'xy', b' x']))
